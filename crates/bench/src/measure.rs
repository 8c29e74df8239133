//! Timing primitives: calibration by doubling, medians, throughput and the core's effective
//! clock.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// How many iterations take about `budget`, found by doubling until `time(n)` reaches an eighth
/// of it (the doubling doubles as warm-up). Always at least 1.
pub fn calibrate(mut time: impl FnMut(u64) -> Duration, budget: Duration) -> u64 {
    let mut iterations = 1u64;
    loop {
        let t = time(iterations);
        if t >= budget / 8 || iterations >= 1 << 40 {
            let per_iteration = t.as_secs_f64() / iterations as f64;
            return ((budget.as_secs_f64() / per_iteration.max(1e-12)) as u64).max(1);
        }
        iterations *= 2;
    }
}

/// Times `iterations` calls of `f` (monomorphised per caller: no indirect call in the loop).
#[inline(never)]
pub fn time_loop<T>(mut f: impl FnMut() -> T, iterations: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(f());
    }
    start.elapsed()
}

/// Decimal megabytes per second.
pub fn mb_per_s(bytes: u64, elapsed: Duration) -> f64 {
    bytes as f64 / elapsed.as_secs_f64().max(1e-12) / 1e6
}

/// The median (mean of the middle two for an even count); `None` for no samples.
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The core's effective clock in GHz, from a loop of dependent single-cycle register adds
/// (one add completes per cycle on the chain), or `None` on hosts without the probe.
///
/// `/proc/cpuinfo` reports the nominal clock; boost makes the real one differ, so cycle figures
/// use this probe, taken in the same run as the timings. The fastest of several short probes
/// is kept: preemption can only make a probe slower, never faster than one add per cycle.
pub fn effective_clock_ghz() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        const ITERS: u64 = 50_000;
        add_chain(ITERS); // wake the core up
        (0..7)
            .map(|_| {
                let start = Instant::now();
                add_chain(ITERS);
                (ITERS * ADDS_PER_ITER) as f64 / start.elapsed().as_secs_f64() / 1e9
            })
            .reduce(f64::max)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Cycles per iteration of a loop of 8 independent register adds and its counter (`dec`/`jnz`),
/// or `None` on hosts without the probe.
///
/// The loop is bound by the core's ALU ports (9 ÷ 4 = 2.25 cycles on Zen 4's four ALUs), so
/// work on a sibling hyperthread slows it more than the latency-bound add chain of
/// [`effective_clock_ghz`], whose clock reading it would otherwise leave unchanged: a reading
/// above the core's quiet figure means ALU-bound timings are inflated. Measured against that
/// chain in the same call (the ratio of the two times × 100 adds per chain iteration), so no
/// clock is needed; the fastest of 5 timings of each.
pub fn alu_probe_cycles() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        const CHAIN_ITERS: u64 = 5_000;
        const ALU_ITERS: u64 = 200_000;
        let (mut chain, mut alu) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..5 {
            let start = Instant::now();
            add_chain(CHAIN_ITERS);
            chain = chain.min(start.elapsed().as_secs_f64());
            let start = Instant::now();
            independent_adds(ALU_ITERS);
            alu = alu.min(start.elapsed().as_secs_f64());
        }
        let seconds_per_cycle = chain / (CHAIN_ITERS * ADDS_PER_ITER) as f64;
        Some(alu / ALU_ITERS as f64 / seconds_per_cycle)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// `iters` × (8 independent `add reg, reg` + `dec`/`jnz`): register operands, so no core
/// executes the adds at rename.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn independent_adds(iters: u64) {
    let mut r = [0u64; 8];
    let one: u64 = black_box(1);
    // SAFETY: register-only arithmetic on the named operands; no memory or stack access.
    unsafe {
        std::arch::asm!(
            "2:",
            "add {a}, {one}",
            "add {b}, {one}",
            "add {c}, {one}",
            "add {d}, {one}",
            "add {e}, {one}",
            "add {f}, {one}",
            "add {g}, {one}",
            "add {h}, {one}",
            "dec {n}",
            "jnz 2b",
            a = inout(reg) r[0],
            b = inout(reg) r[1],
            c = inout(reg) r[2],
            d = inout(reg) r[3],
            e = inout(reg) r[4],
            f = inout(reg) r[5],
            g = inout(reg) r[6],
            h = inout(reg) r[7],
            one = in(reg) one,
            n = inout(reg) iters.max(1) => _,
            options(nomem, nostack),
        );
    }
    black_box(r);
}

#[cfg(target_arch = "x86_64")]
const ADDS_PER_ITER: u64 = 100;

/// `iters` × 100 dependent `add reg, reg` (register operands: no immediate folding at rename).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn add_chain(iters: u64) {
    let mut x: u64 = 0;
    let y: u64 = black_box(1);
    // SAFETY: register-only arithmetic on the named operands; no memory or stack access.
    unsafe {
        std::arch::asm!(
            "2:",
            ".rept 100",
            "add {x}, {y}",
            ".endr",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            y = in(reg) y,
            n = inout(reg) iters.max(1) => _,
            options(nomem, nostack),
        );
    }
    black_box(x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "prints the ALU probe's readings on this host (an experiment)"]
    fn alu_probe_readings() {
        let readings: Vec<String> = (0..40)
            .filter_map(|_| alu_probe_cycles())
            .map(|r| format!("{r:.3}"))
            .collect();
        println!("{}", readings.join(" "));
    }

    #[test]
    fn calibration_scales_to_the_budget() {
        // A fake clock: every iteration "takes" one microsecond.
        let n = calibrate(Duration::from_micros, Duration::from_millis(10));
        assert_eq!(n, 10_000);
        assert_eq!(
            calibrate(|_| Duration::from_secs(1), Duration::from_millis(1)),
            1
        );
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN]), None);
    }
}
