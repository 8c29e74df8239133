//! The JIT's shortcuts must not change what it compiles (issue #15, compile time):
//!
//! * with [`StageOptions::jit`]'s settings (no statistics, no text, no verifier) the IR stages
//!   — one dead-code sweep for the masked-merge rewrite and address folding, strength
//!   reduction and rotation without their first alias resolution — hand code generation the
//!   same function as a report's settings, for every registered kernel on every target;
//! * `balanced` hands the driver its trial run of `remat-loads` for the blocks that take it
//!   instead of running the block again: those blocks come out exactly as `remat-loads`
//!   orders them.
#![allow(missing_docs)]

use cranelift_codegen::ir::{Block, Function, Inst};
use schedlab_backend::Target;
use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_kernels::registry;
use schedlab_passes::sched::strategies::balanced::{BalancedChoice, block_choices};
use schedlab_passes::sched::strategies::remat_loads::RematLoads;
use schedlab_passes::sched::{self, ScheduleOptions};

/// The function a pipeline run with `options` hands to code generation.
fn ir_after_stages(
    kernel: &str,
    build: &dyn Fn() -> Function,
    target: Target,
    config: &PipelineConfig,
    options: &StageOptions,
) -> String {
    let mut func = build();
    pipeline::run_ir_stages_with(&mut func, target, config, options)
        .unwrap_or_else(|e| panic!("{kernel} {target} {}: {e}", config.strategy));
    func.display().to_string()
}

/// A report's settings and the JIT's, with the same slow path (outlined to a placeholder).
fn report_and_jit(target: Target) -> (StageOptions, StageOptions) {
    let report = StageOptions::report_lazy(target);
    let jit = StageOptions {
        isa: report.isa,
        ..StageOptions::jit(report.slow_path)
    };
    (report, jit)
}

#[test]
fn jit_settings_give_the_same_function_as_report_settings_for_every_kernel() {
    for kernel in registry::all() {
        for target in Target::ALL {
            let config = PipelineConfig::default();
            let (report, jit) = report_and_jit(target);
            let build = || kernel.build();
            let reported = ir_after_stages(kernel.name(), &build, target, &config, &report);
            let jitted = ir_after_stages(kernel.name(), &build, target, &config, &jit);
            assert!(
                reported == jitted,
                "{} {target}: the JIT's settings change the function:\n--- report\n{reported}\n--- jit\n{jitted}",
                kernel.name()
            );
        }
    }
}

#[test]
fn jit_settings_give_the_same_md5_function_for_every_strategy() {
    let md5 = registry::all()
        .into_iter()
        .find(|k| k.name() == "md5")
        .expect("md5 is registered");
    for entry in sched::entries() {
        let config = PipelineConfig::with_strategy(entry.name);
        for target in [Target::X86_64, Target::Aarch64] {
            let (report, jit) = report_and_jit(target);
            let build = || md5.build();
            let reported = ir_after_stages("md5", &build, target, &config, &report);
            let jitted = ir_after_stages("md5", &build, target, &config, &jit);
            assert!(
                reported == jitted,
                "md5 {target} {}: the JIT's settings change the function",
                entry.name
            );
        }
    }
}

/// The function as the pipeline hands it to the scheduler (`source` keeps the order).
fn before_scheduling(kernel: &str, build: &dyn Fn() -> Function, target: Target) -> Function {
    let mut func = build();
    pipeline::run_ir_stages_with(
        &mut func,
        target,
        &PipelineConfig {
            rotate_loops: false,
            ..PipelineConfig::with_strategy("source")
        },
        &StageOptions::report_lazy(target),
    )
    .unwrap_or_else(|e| panic!("{kernel} {target}: {e}"));
    func
}

fn block_order(func: &Function, block: Block) -> Vec<Inst> {
    func.layout.block_insts(block).collect()
}

#[test]
fn balanced_blocks_that_keep_remat_loads_order_equal_a_fresh_remat_loads_schedule() {
    let mut kept = 0;
    for name in ["md5", "muladd", "square-to-len", "sha256"] {
        let kernel = registry::all()
            .into_iter()
            .find(|k| k.name() == name)
            .unwrap_or_else(|| panic!("{name} is registered"));
        for target in Target::ALL {
            let model = pipeline::machine_model(target);
            let func = before_scheduling(name, &|| kernel.build(), target);
            let choices =
                block_choices(&func, &model).unwrap_or_else(|e| panic!("{name} {target}: {e}"));
            let opts = ScheduleOptions::default();
            let mut balanced = func.clone();
            sched::schedule_with_options(&mut balanced, "balanced", &model, &opts)
                .unwrap_or_else(|e| panic!("{name} {target} balanced: {e}"));
            // `balanced` keeps `remat-loads`' order with early induction steps.
            let mut remat = func.clone();
            sched::schedule_with_strategy(
                &mut remat,
                "remat-loads",
                &mut RematLoads::with_early_updates(),
                &model,
                &opts,
            )
            .unwrap_or_else(|e| panic!("{name} {target} remat-loads: {e}"));
            for (block, choice) in choices {
                if matches!(choice, BalancedChoice::Fits { .. }) {
                    kept += 1;
                    assert_eq!(
                        block_order(&balanced, block),
                        block_order(&remat, block),
                        "{name} {target} {block}: balanced's reused order differs from remat-loads'"
                    );
                }
            }
        }
    }
    assert!(
        kept > 0,
        "no block kept remat-loads' order: the test compared nothing"
    );
}
