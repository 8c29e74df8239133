//! Test support shared by the backend's test binaries: `int[]`s between guard pages, the
//! BigInteger kernels' machine-level types, whether a target's code can run here, and the
//! tally of kernel calls against their Java models.
#![allow(dead_code, unused_macros, unused_imports)] // each test binary uses its own part

use cranelift_codegen::ir::Function;
use schedlab_backend::Target;
use schedlab_backend::check::run_kernel_cases;
use schedlab_backend::emulate::toolchain_status;
use schedlab_backend::exec::GuardedRegion;
use schedlab_backend::pipeline::{IrStats, PipelineConfig, run_ir_stages};
use schedlab_backend::tools::test_can_use;
use schedlab_kernels::case::{Case, Placement as Layout};
use schedlab_kernels::registry::{self, CaseOptions, Kernel};

/// Whether `target`'s code can run here (natively or under qemu); panics, naming the Debian
/// packages, when `SCHEDLAB_REQUIRE_TOOLS=1` (as in CI) and it cannot.
pub fn runnable(target: Target) -> bool {
    test_can_use(toolchain_status(target))
}

/// One `#[test]` per `test => Target` pair, each calling `$check(target)`.
macro_rules! test_on_every_target {
    ($check:ident: $($test:ident => $target:ident),+ $(,)?) => {
        $(
            #[test]
            fn $test() {
                $check(schedlab_backend::Target::$target);
            }
        )+
    };
}
pub(crate) use test_on_every_target;

/// The registered kernels whose code `target` can lower (RV64GC has no vector lowering in
/// Cranelift: see `schedlab check`).
pub fn kernels_for(target: Target) -> impl Iterator<Item = &'static dyn Kernel> {
    registry::all()
        .into_iter()
        .filter(move |kernel| !(kernel.needs_simd() && target == Target::Riscv64))
}

/// Kernel calls on one target checked against the kernels' Java models: how many ran, and
/// one line per call whose result differs.
#[derive(Default)]
pub struct CallTally {
    /// Calls run.
    pub calls: usize,
    /// `kernel strategy target case: mismatch` for each call that differs.
    pub failures: Vec<String>,
}

impl CallTally {
    /// Runs `kernel`'s `cases` on `func` (scheduled by `strategy`) on `target` and records the
    /// verdicts; panics when they cannot run.
    pub fn run(
        &mut self,
        kernel: &dyn Kernel,
        func: Function,
        strategy: &str,
        target: Target,
        cases: &[Case],
    ) {
        let verdicts = run_kernel_cases(kernel, func, target, cases)
            .unwrap_or_else(|e| panic!("{} {strategy} {target}: {e}", kernel.name()));
        self.calls += verdicts.len();
        self.failures.extend(verdicts.into_iter().filter_map(|v| {
            v.mismatch
                .map(|m| format!("{} {strategy} {target} {}: {m}", kernel.name(), v.label))
        }));
    }

    /// Asserts that calls ran on `target` and that none differed (naming the first 20 that did).
    pub fn assert_all_agree(&self, target: Target) {
        let Self { calls, failures } = self;
        assert!(*calls > 0, "no call ran on {target}");
        assert!(
            failures.is_empty(),
            "{} of {calls} calls differ from the Java model on {target}:\n{}",
            failures.len(),
            failures[..failures.len().min(20)].join("\n")
        );
    }
}

/// Every kernel `target` can lower, through the IR stages under each of `strategies(kernel)`
/// with `config(strategy)` (`stats` sees each run's statistics), then its cases of `options`
/// on `target`: the tally of the calls, or `None` when `target`'s code cannot run here.
pub fn tally_every_kernel(
    target: Target,
    options: &CaseOptions,
    strategies: impl Fn(&dyn Kernel) -> Vec<&'static str>,
    config: impl Fn(&str) -> PipelineConfig,
    mut stats: impl FnMut(&dyn Kernel, IrStats),
) -> Option<CallTally> {
    if !runnable(target) {
        return None;
    }
    let mut tally = CallTally::default();
    for kernel in kernels_for(target) {
        let cases = kernel.cases(options);
        for strategy in strategies(kernel) {
            let mut func = kernel.build();
            let (_, ir_stats) = run_ir_stages(&mut func, target, &config(strategy))
                .unwrap_or_else(|e| panic!("{} {strategy} {target}: {e}", kernel.name()));
            stats(kernel, ir_stats);
            tally.run(kernel, func, strategy, target, &cases);
        }
    }
    Some(tally)
}

/// `n` ints between two inaccessible pages.
pub struct Guarded {
    /// The mapping `data` points into, unmapped with this value.
    region: GuardedRegion,
    /// The first element.
    pub data: *mut i32,
    n: usize,
}

impl Guarded {
    pub fn new(values: &[i32], layout: Layout) -> Self {
        let region = GuardedRegion::new(
            values.len() * 4,
            layout,
            libc::PROT_READ | libc::PROT_WRITE,
            0,
        )
        .expect("mmap failed");
        let data = region.as_mut_ptr().cast::<i32>();
        // SAFETY: the region holds `values.len()` writable ints, 4-byte aligned because the
        // page size and the region's length are multiples of 4.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), data, values.len()) };
        Self {
            region,
            data,
            n: values.len(),
        }
    }

    pub fn len(&self) -> i32 {
        i32::try_from(self.n).expect("small arrays")
    }

    pub fn to_vec(&self) -> Vec<i32> {
        // SAFETY: `n` initialised ints.
        unsafe { std::slice::from_raw_parts(self.data, self.n) }.to_vec()
    }
}

/// `%bigint_mul_add` as the JIT compiles it.
pub type MulAddFn = unsafe extern "C" fn(*mut i32, i32, *const i32, i32, i32, i32, i32) -> i64;
/// `%bigint_square_to_len` as the JIT compiles it.
pub type SquareFn = unsafe extern "C" fn(*const i32, i32, i32, *mut i32, i32, i32) -> i32;
