//! Waiting for a quiet core before each row's samples.
//!
//! On a machine whose cores are hyperthreads shared with other tenants, work on the sibling
//! thread slows ALU-bound loops more than the latency-bound add chain the effective clock is
//! read from, so ratios against that clock do not cancel it: a disturbed run read BigInteger
//! rows 10–40 % slow. Before each row's samples the ALU probe
//! ([`super::measure::alu_probe_cycles`]) is read until it is within [`QUIET_MARGIN`] of the
//! run's quiet figure (waiting at most [`QUIET_WAIT`] per row and [`QUIET_BUDGET`] per run);
//! the readings and the rows that waited in vain are reported with the table. The quiet
//! figure is the lower quintile of the readings so far, not their minimum: a neighbour that
//! starts while the probe times its reference chain makes one reading read *low*.

use super::measure;
use std::time::{Duration, Instant};

/// A reading counts as quiet within this factor of the run's quietest.
pub(super) const QUIET_MARGIN: f64 = 1.02;
/// The longest one row waits for a quiet reading before it is measured anyway.
pub(super) const QUIET_WAIT: Duration = Duration::from_secs(10);
/// The longest a whole run waits; after that rows are measured without waiting.
pub(super) const QUIET_BUDGET: Duration = Duration::from_secs(300);
/// Pause between readings while waiting.
const PAUSE: Duration = Duration::from_millis(250);
/// Readings taken at the start of the run to find the quiet figure.
const OPENING_READINGS: usize = 8;

/// The ALU probe's readings over one run and what they meant for the rows.
#[derive(Clone, Debug, Default)]
pub(super) struct Contention {
    /// Every reading (cycles per iteration of the probe loop), in order.
    pub readings: Vec<f64>,
    /// Rows whose samples started after a quiet reading.
    pub quiet_rows: usize,
    /// Rows measured after [`QUIET_WAIT`] without one, or without waiting once the run's
    /// [`QUIET_BUDGET`] was spent.
    pub disturbed_rows: usize,
    /// Time spent waiting in total.
    pub waited: Duration,
}

impl Contention {
    /// Starts a run: a few readings spread over two seconds set the first quiet figure.
    pub fn start() -> Self {
        let mut c = Self::default();
        for _ in 0..OPENING_READINGS {
            if let Some(r) = measure::alu_probe_cycles() {
                c.readings.push(r);
            }
            std::thread::sleep(PAUSE);
        }
        c
    }

    /// The quiet figure: the lower quintile of the readings so far (cycles per probe
    /// iteration).
    pub fn quiet_figure(&self) -> Option<f64> {
        let mut sorted = self.readings.clone();
        sorted.sort_by(f64::total_cmp);
        sorted.get(sorted.len() / 5).copied()
    }

    /// The quietest reading so far.
    pub fn quietest(&self) -> Option<f64> {
        self.readings.iter().copied().reduce(f64::min)
    }

    /// The noisiest reading so far.
    pub fn noisiest(&self) -> Option<f64> {
        self.readings.iter().copied().reduce(f64::max)
    }

    /// Waits until the probe reads quiet (or [`QUIET_WAIT`] has passed), before a row.
    pub fn wait_for_quiet(&mut self) {
        let start = Instant::now();
        loop {
            let Some(r) = measure::alu_probe_cycles() else {
                return;
            };
            self.readings.push(r);
            if self.quiet_figure().is_some_and(|q| r <= q * QUIET_MARGIN) {
                self.quiet_rows += 1;
                break;
            }
            if start.elapsed() >= QUIET_WAIT || self.waited + start.elapsed() >= QUIET_BUDGET {
                self.disturbed_rows += 1;
                break;
            }
            std::thread::sleep(PAUSE);
        }
        self.waited += start.elapsed();
    }

    /// One line for the table's header.
    pub fn summary(&self) -> String {
        match (self.quietest(), self.quiet_figure(), self.noisiest()) {
            (Some(q), Some(f), Some(n)) => format!(
                "Contention check: the ALU probe (8 independent register adds and `dec`/`jnz`, \
                 2.25 cycles on an undisturbed Zen 4, 1.90 on Golden Cove) read {q:.3} … {n:.3} cycles over {} \
                 readings (quiet figure, the lower quintile: {f:.3}); a row's samples started \
                 after a reading within {:.0} % of it ({} row samples), or after waiting {} s \
                 in vain or with the run's {} s of waiting spent ({} row samples); {:.0} s \
                 waited in all.",
                self.readings.len(),
                (QUIET_MARGIN - 1.0) * 100.0,
                self.quiet_rows,
                QUIET_WAIT.as_secs(),
                QUIET_BUDGET.as_secs(),
                self.disturbed_rows,
                self.waited.as_secs_f64(),
            ),
            _ => "Contention check: no ALU probe on this host.".to_string(),
        }
    }
}
