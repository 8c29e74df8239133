//! Measured cycles per hot-loop iteration of the BigInteger kernels (`mulAdd`, `squareToLen`).
//!
//! **The hot loop** is the check-free (predicated) `mulAdd` loop in both kernels: for `mulAdd`
//! the only loop, for `squareToLen` the inner loop of its loop over `i`, the one
//! [`schedlab_cost::mca::hot_loop`] chooses.
//!
//! **Measured per iteration.** A call on an `n`-int operand runs the hot loop `iters(n)`
//! times: `mulAdd` n, `squareToLen` n(n−1)/2 (its `mulAdd` over i−1 words for i = n..1). The
//! rest of a call — entry, argument and preheader checks, the squares and shift loops, the
//! outer loop's body with `addOne`, each inner loop's start and drain — grows at most linearly
//! in `n`. So cycles per call are measured at several sizes and fitted, in relative least
//! squares, with `T(n) = α·iters(n) + β·n + γ` (`mulAdd`: `α·n + γ`, its `β·n` is `α·n`); `α`
//! is the measured cycles per hot-loop iteration: the fixed and linear costs are *subtracted*,
//! not assumed negligible. The share of a call's cycles spent in the hot loop,
//! `α·iters(n) / T(n)`, is reported per size.
//!
//! **Timing.** A sample is a batch of calls on the same buffers (all in L1: at most 2 × 8 KiB for mulAdd, 4 + 8 KiB for squareToLen)
//! lasting about [`SAMPLE`]; the fastest of [`SAMPLES`] samples per size counts (other
//! processes' time slices only ever make a sample slower), converted to cycles with the
//! effective clock probed right before the row, as for MD5.

use super::super::measure;
use schedlab_backend::pipeline::{PipelineConfig, run_ir_stages};
use schedlab_backend::{Compiled, JitFunction, Target};
use schedlab_kernels::bigint::reference;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Target duration of one sample (a batch of calls).
const SAMPLE: Duration = Duration::from_micros(50);
/// Samples per size and repetition; the fastest counts.
pub(super) const SAMPLES: usize = 25;
/// Samples with `--quick`.
const QUICK_SAMPLES: usize = 5;
/// The multiplier passed to `mulAdd` (negative as an `int`, as in the bench).
const MUL_ADD_K: i32 = 0x9e37_79b9_u32 as i32;

/// The BigInteger kernels validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BigKernel {
    /// `BigInteger.mulAdd(out, in, 0, n, k)`.
    MulAdd,
    /// `BigInteger.squareToLen(x, n, z)`.
    SquareToLen,
}

impl BigKernel {
    /// Both, in table order.
    pub const ALL: [BigKernel; 2] = [BigKernel::MulAdd, BigKernel::SquareToLen];

    /// The `--kernel` name.
    pub fn name(self) -> &'static str {
        match self {
            BigKernel::MulAdd => "muladd",
            BigKernel::SquareToLen => "square-to-len",
        }
    }

    /// Operand sizes (ints) timed: the largest keeps the fixed cost well under 1 % of a call
    /// (`mulAdd`) or the hot loop the bulk of it (`squareToLen`). squareToLen starts at 128:
    /// its rows (inner-loop runs) are n−1, n−2, …, 1 words long, and rows of a few dozen words
    /// cost more per word than the linear `β·n` term can hold, so fits that include n = 16…64
    /// read α up to 10 % high and shift with the sizes chosen (2.06…2.55 cycles per word for
    /// one strategy in one run; from n = 128 on the fit is stable within 0.5 %: notes/design.md,
    /// "Validation: `bench --validate-model`"). The largest, 1024, keeps both buffers in L1.
    pub fn sizes(self) -> &'static [usize] {
        match self {
            BigKernel::MulAdd => &[64, 256, 1024, 2048],
            BigKernel::SquareToLen => &[128, 192, 256, 384, 512, 768, 1024],
        }
    }

    /// Hot-loop iterations of one call on `n` ints.
    pub fn iterations(self, n: usize) -> f64 {
        match self {
            BigKernel::MulAdd => n as f64,
            BigKernel::SquareToLen => (n * n.saturating_sub(1) / 2) as f64,
        }
    }

    /// The basis functions of the fit at `n` (see the module docs).
    fn basis(self, n: usize) -> Vec<f64> {
        match self {
            BigKernel::MulAdd => vec![self.iterations(n), 1.0],
            BigKernel::SquareToLen => vec![self.iterations(n), n as f64, 1.0],
        }
    }

    /// What one iteration is, for the table and JSON.
    pub fn iteration(self) -> &'static str {
        match self {
            BigKernel::MulAdd => "one word of mulAdd's check-free loop",
            BigKernel::SquareToLen => {
                "one word of the check-free mulAdd loop inside squareToLen's loop over i"
            }
        }
    }

    fn build(self) -> cranelift_codegen::ir::Function {
        match self {
            BigKernel::MulAdd => schedlab_kernels::bigint::mul_add(),
            BigKernel::SquareToLen => schedlab_kernels::bigint::square_to_len(),
        }
    }
}

type MulAddFn = unsafe extern "C" fn(*mut i32, i32, *const i32, i32, i32, i32, i32) -> i64;
type SquareFn = unsafe extern "C" fn(*const i32, i32, i32, *mut i32, i32, i32) -> i32;

#[derive(Clone, Copy)]
enum Call {
    MulAdd(MulAddFn),
    Square(SquareFn),
}

/// One strategy's kernel as the JIT compiled it (the host's features, eager slow path: what
/// `bench --kernel` times).
pub(super) struct BigFunction {
    call: Call,
    jit: JitFunction,
}

impl BigFunction {
    /// Runs the pipeline with `config` and JIT-compiles the result for the host.
    pub fn compile(kernel: BigKernel, config: &PipelineConfig) -> Result<Self, String> {
        let target = Target::host().ok_or("the host architecture has no schedlab backend")?;
        let mut func = kernel.build();
        run_ir_stages(&mut func, target, config).map_err(|e| e.to_string())?;
        let jit = JitFunction::compile(&func).map_err(|e| e.to_string())?;
        // SAFETY: the kernels' signatures are `mul_add_signature()` and
        // `square_to_len_signature()` (module docs of `schedlab_kernels::bigint`), which these
        // function types spell out; the JIT uses the host's C calling convention.
        let call = unsafe {
            match kernel {
                BigKernel::MulAdd => {
                    Call::MulAdd(std::mem::transmute::<*const u8, MulAddFn>(jit.code_ptr()))
                }
                BigKernel::SquareToLen => {
                    Call::Square(std::mem::transmute::<*const u8, SquareFn>(jit.code_ptr()))
                }
            }
        };
        Ok(Self { call, jit })
    }

    /// The machine code that runs (for the static models).
    pub fn compiled(&self) -> &Compiled {
        self.jit.compiled()
    }
}

/// Bytes by which the output array is offset from the input array modulo 4 KiB (see
/// [`Buffers`]).
const ARRAY_SEPARATION: usize = 2048;

/// The arrays of one size, `x`/`in` then `z`/`out`, in one allocation: `out` starts
/// [`ARRAY_SEPARATION`] bytes after a 4 KiB multiple past `x`, whatever the allocator does.
/// A load whose address matches a recent store's in its low 12 bits waits for it (4K
/// aliasing); `mulAdd` loads `in[j]` and stores `out[j + 1]` at a constant distance, so with
/// separate allocations every row's speed could depend on where the allocator put its arrays.
/// Fixing the distance keeps that out of the comparison (a precaution: on the machine this was
/// developed on it changed no figure by more than noise).
struct Buffers {
    mem: Vec<i32>,
    x_len: usize,
    out_at: usize,
    out_len: usize,
}

impl Buffers {
    fn new(kernel: BigKernel, n: usize) -> Self {
        // Full-width words (no leading zero int), deterministic.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let x: Vec<i32> = (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 32) as i32 | i32::MIN
            })
            .collect();
        let out_len = match kernel {
            BigKernel::MulAdd => n + 1,
            BigKernel::SquareToLen => 2 * n,
        };
        let page_words = 4096 / 4;
        let out_at = n.div_ceil(page_words) * page_words + ARRAY_SEPARATION / 4;
        let mut mem = vec![0; out_at + out_len];
        mem[..n].copy_from_slice(&x);
        Self {
            mem,
            x_len: n,
            out_at,
            out_len,
        }
    }

    fn x(&self) -> &[i32] {
        &self.mem[..self.x_len]
    }

    fn out(&self) -> &[i32] {
        &self.mem[self.out_at..]
    }

    /// One call; returns the kernel's return value.
    #[inline(always)]
    fn call(&mut self, call: Call) -> i64 {
        let n = self.x_len as i32;
        let m = self.out_len as i32;
        let (head, out) = self.mem.split_at_mut(self.out_at);
        let x = &head[..self.x_len];
        match call {
            // SAFETY: `out` holds `m` ints and `x` holds `n` ints (both far below i32::MAX:
            // at most 2 × 2048); the kernel checks every access against those lengths.
            Call::MulAdd(f) => unsafe { f(out.as_mut_ptr(), m, x.as_ptr(), n, 0, n, MUL_ADD_K) },
            // SAFETY: as above, `z` = `out` (2n ints).
            Call::Square(f) => i64::from(unsafe { f(x.as_ptr(), n, n, out.as_mut_ptr(), m, m) }),
        }
    }
}

/// Checks `f` against the Rust transcription of the Java code at every timed size.
pub(super) fn check(kernel: BigKernel, f: &BigFunction) -> Result<(), String> {
    for &n in kernel.sizes() {
        let mut b = Buffers::new(kernel, n);
        let got = b.call(f.call);
        let len = i32::try_from(n).map_err(|e| e.to_string())?;
        let mut want = vec![0; b.out_len];
        let want_ret = match kernel {
            BigKernel::MulAdd => reference::mul_add(&mut want, b.x(), 0, len, MUL_ADD_K)
                .map(i64::from)
                .map_err(|e| format!("the reference mulAdd failed: {e:?}"))?,
            BigKernel::SquareToLen => {
                reference::square_to_len(b.x(), len, &mut want, 2 * len)
                    .map_err(|e| format!("the reference squareToLen failed: {e:?}"))?;
                0
            }
        };
        if got != want_ret || b.out() != want {
            return Err(format!(
                "wrong result on {n} ints (returned {got}, want {want_ret})"
            ));
        }
    }
    Ok(())
}

#[inline(never)]
fn time_calls(call: Call, b: &mut Buffers, calls: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..calls {
        black_box(b.call(call));
        black_box(&mut *b);
    }
    start.elapsed()
}

/// Calls per sample of about [`SAMPLE`] (found by doubling; doubles as warm-up).
fn calibrate(call: Call, b: &mut Buffers) -> u64 {
    let mut calls = 1u64;
    loop {
        let t = time_calls(call, b, calls);
        if t >= SAMPLE || calls >= 1 << 30 {
            return calls;
        }
        calls *= 2;
    }
}

/// One row's sizes with their buffers and batch lengths.
pub(super) struct Bench {
    kernel: BigKernel,
    buffers: Vec<Buffers>,
    calls: Vec<u64>,
    samples: usize,
}

impl Bench {
    /// Buffers and calibrated batch lengths for `f` (a warm-up of every size).
    pub fn new(kernel: BigKernel, f: &BigFunction, quick: bool) -> Self {
        let mut buffers: Vec<Buffers> = kernel
            .sizes()
            .iter()
            .map(|&n| Buffers::new(kernel, n))
            .collect();
        let calls = buffers.iter_mut().map(|b| calibrate(f.call, b)).collect();
        Self {
            kernel,
            buffers,
            calls,
            samples: if quick { QUICK_SAMPLES } else { SAMPLES },
        }
    }

    /// Cycles per call at each size: the fastest sample, at `ghz`.
    pub fn cycles_per_call(&mut self, f: &BigFunction, ghz: f64) -> Vec<f64> {
        let samples = self.samples;
        self.buffers
            .iter_mut()
            .zip(&self.calls)
            .map(|(b, &calls)| {
                let fastest = (0..samples)
                    .map(|_| time_calls(f.call, b, calls).as_secs_f64())
                    .fold(f64::INFINITY, f64::min);
                fastest * ghz * 1e9 / calls as f64
            })
            .collect()
    }

    /// The kernel timed.
    pub fn kernel(&self) -> BigKernel {
        self.kernel
    }
}

/// The fit of one row's cycles per call (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Fit {
    /// Operand sizes (ints).
    pub sizes: Vec<usize>,
    /// Measured cycles per call at each size.
    pub cycles_per_call: Vec<f64>,
    /// `α`: cycles per hot-loop iteration.
    pub per_iteration: f64,
    /// `β` (`squareToLen`: cycles per word outside the hot loop; `mulAdd`: 0).
    pub per_word: f64,
    /// `γ`: fixed cycles per call.
    pub fixed: f64,
    /// `α·iters(n) / T(n)` at each size.
    pub hot_loop_share: Vec<f64>,
}

/// Fits `cycles` (per call, at `kernel.sizes()`) with the kernel's model.
pub(super) fn fit(kernel: BigKernel, cycles: &[f64]) -> Option<Fit> {
    let sizes = kernel.sizes();
    if cycles.len() != sizes.len() || cycles.iter().any(|c| !c.is_finite() || *c <= 0.0) {
        return None;
    }
    let rows: Vec<Vec<f64>> = sizes.iter().map(|&n| kernel.basis(n)).collect();
    let theta = relative_least_squares(&rows, cycles)?;
    let per_iteration = theta[0];
    let (per_word, fixed) = match kernel {
        BigKernel::MulAdd => (0.0, theta[1]),
        BigKernel::SquareToLen => (theta[1], theta[2]),
    };
    Some(Fit {
        sizes: sizes.to_vec(),
        cycles_per_call: cycles.to_vec(),
        per_iteration,
        per_word,
        fixed,
        hot_loop_share: sizes
            .iter()
            .zip(cycles)
            .map(|(&n, c)| per_iteration * kernel.iterations(n) / c)
            .collect(),
    })
}

/// `θ` minimising `Σ ((y_i − rows_i·θ) / y_i)²`: each size's *relative* error counts alike,
/// so the smallest sizes (where the fixed cost shows) are not drowned by the largest.
fn relative_least_squares(rows: &[Vec<f64>], y: &[f64]) -> Option<Vec<f64>> {
    let k = rows.first()?.len();
    if rows.len() < k {
        return None;
    }
    // Normal equations AᵀA θ = Aᵀb of the weighted system A = rows/y, b = 1.
    let mut m = vec![vec![0.0; k + 1]; k];
    for (row, &yi) in rows.iter().zip(y) {
        let a: Vec<f64> = row.iter().map(|v| v / yi).collect();
        for i in 0..k {
            for j in 0..k {
                m[i][j] += a[i] * a[j];
            }
            m[i][k] += a[i];
        }
    }
    solve(m)
}

/// Gaussian elimination with partial pivoting on an augmented `k × (k+1)` matrix.
fn solve(mut m: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let k = m.len();
    for col in 0..k {
        let pivot = (col..k).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[pivot][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, pivot);
        let pivot_row = m[col].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != col {
                let factor = row[col] / pivot_row[col];
                for (v, p) in row.iter_mut().zip(&pivot_row).skip(col) {
                    *v -= factor * p;
                }
            }
        }
    }
    let theta: Vec<f64> = (0..k).map(|i| m[i][k] / m[i][i]).collect();
    theta.iter().all(|t| t.is_finite()).then_some(theta)
}

/// The median of each size's cycles over repetitions.
pub(super) fn median_per_size(per_rep: &[Vec<f64>]) -> Vec<f64> {
    let sizes = per_rep.first().map_or(0, Vec::len);
    (0..sizes)
        .map(|s| {
            let column: Vec<f64> = per_rep.iter().filter_map(|r| r.get(s).copied()).collect();
            measure::median(&column).unwrap_or(f64::NAN)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterations_follow_the_java_loops() {
        assert_eq!(BigKernel::MulAdd.iterations(34), 34.0);
        // implSquareToLen calls mulAdd over i−1 words for i = n..1.
        let n = 34;
        let sum: usize = (1..=n).map(|i| i - 1).sum();
        assert_eq!(BigKernel::SquareToLen.iterations(n), sum as f64);
        assert_eq!(BigKernel::SquareToLen.iterations(0), 0.0);
    }

    #[test]
    fn the_fit_recovers_known_coefficients() {
        for kernel in BigKernel::ALL {
            let (alpha, beta, gamma) = (3.25, 41.0, 120.0);
            let cycles: Vec<f64> = kernel
                .sizes()
                .iter()
                .map(|&n| {
                    let linear = if kernel == BigKernel::MulAdd {
                        0.0
                    } else {
                        beta * n as f64
                    };
                    alpha * kernel.iterations(n) + linear + gamma
                })
                .collect();
            let f = fit(kernel, &cycles).expect("fits");
            assert!((f.per_iteration - alpha).abs() < 1e-6, "{kernel:?} {f:?}");
            assert!((f.fixed - gamma).abs() < 1e-3, "{kernel:?} {f:?}");
            assert!(f.hot_loop_share.iter().all(|s| *s > 0.0 && *s < 1.0));
            // Monotone in n: the hot loop's share grows with the operand.
            assert!(f.hot_loop_share.windows(2).all(|w| w[0] < w[1]), "{f:?}");
        }
        assert_eq!(fit(BigKernel::MulAdd, &[1.0, 2.0]), None, "wrong length");
        assert_eq!(fit(BigKernel::MulAdd, &[1.0, 2.0, f64::NAN, 4.0]), None);
    }

    #[test]
    fn output_arrays_sit_half_a_page_from_the_input() {
        for kernel in BigKernel::ALL {
            for &n in kernel.sizes() {
                let b = Buffers::new(kernel, n);
                let distance = b.out().as_ptr() as usize - b.x().as_ptr() as usize;
                assert_eq!(distance % 4096, ARRAY_SEPARATION, "{kernel:?} {n}");
                assert_eq!((b.x().len(), b.out().len()), (n, b.out_len));
                assert!(distance >= 4 * n, "the arrays overlap");
            }
        }
    }

    #[test]
    fn medians_are_taken_per_size() {
        let reps = vec![vec![1.0, 10.0], vec![3.0, 30.0], vec![2.0, 20.0]];
        assert_eq!(median_per_size(&reps), vec![2.0, 20.0]);
    }
}
