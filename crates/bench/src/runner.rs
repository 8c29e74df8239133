//! The interleaved measurement loop.

use crate::measure::{calibrate, effective_clock_ghz, median};
use indicatif::ProgressBar;
use std::time::Duration;

/// What is timed: rows (implementations, configurations) × sizes.
pub trait Workload {
    /// How many in-process rows.
    fn rows(&self) -> usize;
    /// How many sizes.
    fn sizes(&self) -> usize;
    /// The wall time of `iterations` iterations of `row` at `size`.
    fn time(&mut self, row: usize, size: usize, iterations: u64) -> Duration;
}

/// A [`Workload`] from a closure: `rows` × `sizes`, `time(row, size, iterations)` timing one
/// sample.
pub struct Grid<F> {
    /// How many in-process rows.
    pub rows: usize,
    /// How many sizes.
    pub sizes: usize,
    /// The wall time of `iterations` iterations of a row at a size.
    pub time: F,
}

impl<F: FnMut(usize, usize, u64) -> Duration> Workload for Grid<F> {
    fn rows(&self) -> usize {
        self.rows
    }

    fn sizes(&self) -> usize {
        self.sizes
    }

    fn time(&mut self, row: usize, size: usize, iterations: u64) -> Duration {
        (self.time)(row, size, iterations)
    }
}

/// How long a sample lasts and how many repetitions there are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budgets {
    /// Repetitions; every figure is a median over them.
    pub reps: usize,
    /// Wall time of one in-process sample.
    pub sample: Duration,
}

/// Every sample of a run: seconds per iteration of `[row][size][repetition]` (NaN where a
/// sample is missing, e.g. a JVM run that failed), and the clock probes.
#[derive(Clone, Debug, PartialEq)]
pub struct Samples {
    /// Seconds per iteration, `[row][size][rep]`; in-process rows first, then external ones.
    pub seconds: Vec<Vec<Vec<f64>>>,
    /// The effective clock measured at the start of each repetition, in GHz.
    pub clocks_ghz: Vec<f64>,
}

impl Samples {
    /// Median seconds per iteration of `row` at `size`.
    pub fn median(&self, row: usize, size: usize) -> Option<f64> {
        median(&self.seconds[row][size])
    }

    /// Median over repetitions of `f(seconds per iteration)` (e.g. MB/s from a byte count).
    pub fn median_of(&self, row: usize, size: usize, f: impl Fn(f64) -> f64) -> Option<f64> {
        let values: Vec<f64> = self.seconds[row][size].iter().map(|&s| f(s)).collect();
        median(&values)
    }

    /// Median over repetitions of `reference`'s time ÷ `row`'s time in the same repetition:
    /// how many times faster `row` is (1.0 for the reference itself).
    pub fn speedup(&self, row: usize, reference: usize, size: usize) -> Option<f64> {
        if row == reference {
            return Some(1.0);
        }
        let ratios: Vec<f64> = self.seconds[row][size]
            .iter()
            .zip(&self.seconds[reference][size])
            .map(|(r, reference)| reference / r)
            .collect();
        median(&ratios)
    }

    /// The median effective clock, if it could be probed.
    pub fn clock_ghz(&self) -> Option<f64> {
        median(&self.clocks_ghz)
    }

    /// The finite samples of `row` at `size`, in seconds per iteration.
    pub fn finite(&self, row: usize, size: usize) -> Vec<f64> {
        self.seconds[row][size]
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .collect()
    }
}

/// Where the caller records the out-of-process rows of one repetition.
pub struct External<'a> {
    first_row: usize,
    seconds: &'a mut [Vec<Vec<f64>>],
}

impl External<'_> {
    /// Records external row `row` (0-based among the external rows) at `size` for this
    /// repetition, in seconds per iteration.
    pub fn record(&mut self, row: usize, size: usize, seconds: f64) {
        if let Some(slot) = self
            .seconds
            .get_mut(self.first_row + row)
            .and_then(|r| r.get_mut(size))
            .and_then(|per_rep| per_rep.last_mut())
        {
            *slot = seconds;
        }
    }
}

/// The `k`-th row to run in repetition `rep` of `n` rows: the order rotates every repetition.
pub fn rotated(k: usize, rep: usize, n: usize) -> usize {
    (k + rep) % n.max(1)
}

/// Runs one repetition's out-of-process rows (`between` of [`run`]): each row of `rows`, in an
/// order rotated per repetition, by `run_row(row, note)` while the progress bar shows
/// `name(row)`; the first error of a row is kept in `errors[row]`, which `run_row` is handed as
/// `note` for a problem that does not end its run. The bar advances once per row.
pub fn run_external_rows<'a>(
    rep: usize,
    rows: &[usize],
    progress: &ProgressBar,
    name: impl Fn(usize) -> &'a str,
    errors: &mut [Option<String>],
    mut run_row: impl FnMut(usize, &mut Option<String>) -> Result<(), String>,
) {
    for k in 0..rows.len() {
        let row = rows[rotated(k, rep, rows.len())];
        progress.set_message(name(row).to_string());
        if let Err(e) = run_row(row, &mut errors[row]) {
            errors[row].get_or_insert(e);
        }
        progress.set_message("");
        progress.inc(1);
    }
}

/// Runs `workload`: calibration, then `budgets.reps` repetitions timing every row once per
/// size in rotated order, each followed by `between(rep, external)` for the `external_rows`
/// out-of-process rows. The progress bar advances once per calibrated or timed sample; the
/// caller advances it for its external runs.
pub fn run<W: Workload>(
    workload: &mut W,
    budgets: &Budgets,
    external_rows: usize,
    progress: &ProgressBar,
    mut between: impl FnMut(usize, &mut External<'_>),
) -> Samples {
    let (rows, sizes) = (workload.rows(), workload.sizes());
    let mut iterations = vec![vec![1u64; sizes]; rows];
    for (row, per_size) in iterations.iter_mut().enumerate() {
        for (size, n) in per_size.iter_mut().enumerate() {
            *n = calibrate(|n| workload.time(row, size, n), budgets.sample);
            progress.inc(1);
        }
    }
    let mut seconds = vec![vec![Vec::with_capacity(budgets.reps); sizes]; rows + external_rows];
    let mut clocks_ghz = Vec::new();
    for rep in 0..budgets.reps {
        for per_rep in seconds.iter_mut().flatten() {
            per_rep.push(f64::NAN);
        }
        clocks_ghz.extend(effective_clock_ghz());
        for size in 0..sizes {
            for k in 0..rows {
                let row = rotated(k, rep, rows);
                let n = iterations[row][size];
                let t = workload.time(row, size, n);
                if let Some(slot) = seconds[row][size].last_mut() {
                    *slot = t.as_secs_f64() / n as f64;
                }
                progress.inc(1);
            }
        }
        let mut external = External {
            first_row: rows,
            seconds: &mut seconds,
        };
        between(rep, &mut external);
    }
    Samples {
        seconds,
        clocks_ghz,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row `r` "takes" `(r + 1)` µs per iteration at every size; records the order it ran.
    struct Fake {
        order: Vec<usize>,
    }

    impl Workload for Fake {
        fn rows(&self) -> usize {
            3
        }
        fn sizes(&self) -> usize {
            2
        }
        fn time(&mut self, row: usize, _: usize, iterations: u64) -> Duration {
            self.order.push(row);
            Duration::from_micros((row as u64 + 1) * iterations)
        }
    }

    #[test]
    fn every_row_every_size_every_repetition_in_rotated_order() {
        let mut fake = Fake { order: Vec::new() };
        let budgets = Budgets {
            reps: 3,
            sample: Duration::from_millis(1),
        };
        let mut externals = Vec::new();
        let samples = run(
            &mut fake,
            &budgets,
            1,
            &ProgressBar::hidden(),
            |rep, ext| {
                externals.push(rep);
                ext.record(0, 1, 0.5);
            },
        );
        assert_eq!(externals, [0, 1, 2]);
        let timed = &fake.order[fake.order.len() - 3 * 2 * 3..];
        assert_eq!(&timed[..3], &[0, 1, 2], "repetition 0 in row order");
        assert_eq!(&timed[6..9], &[1, 2, 0], "repetition 1 rotated");
        let close =
            |got: Option<f64>, want: f64| got.is_some_and(|g| (g - want).abs() < 1e-9 * want);
        assert!(
            close(samples.median(2, 0), 3e-6),
            "{:?}",
            samples.median(2, 0)
        );
        assert!(close(samples.speedup(2, 0, 0), 1.0 / 3.0));
        assert_eq!(samples.speedup(1, 1, 0), Some(1.0));
        assert_eq!(samples.median(3, 1), Some(0.5), "external row recorded");
        assert_eq!(
            samples.median(3, 0),
            None,
            "unrecorded external samples stay NaN"
        );
    }

    #[test]
    fn rotation_visits_every_row_once() {
        for rep in 0..5 {
            let mut seen: Vec<usize> = (0..4).map(|k| rotated(k, rep, 4)).collect();
            seen.sort_unstable();
            assert_eq!(seen, vec![0, 1, 2, 3]);
        }
    }
}
