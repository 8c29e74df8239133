//! Store-to-load forwarding (`--forward-stores on`) through the one executor: every registered
//! kernel with the pass on under the default strategy, and both SHA-256 kernels under every
//! strategy, on every target (natively on the host, under qemu for the others), against each
//! kernel's Rust model — `sha256`'s visible `W` included. The generic `kernels.rs` test runs
//! the pipeline's default (the pass off).
//!
//! Without a cross compiler or qemu the foreign targets are skipped with a message; with
//! `SCHEDLAB_REQUIRE_TOOLS=1` (CI) they fail instead.

mod common;

use schedlab_backend::Target;
use schedlab_backend::check::run_kernel_cases;
use schedlab_backend::pipeline::{PipelineConfig, run_ir_stages};
use schedlab_kernels::registry::{self, CaseOptions};
use schedlab_passes::sched::strategy_names;

const OPTIONS: CaseOptions = CaseOptions {
    seed: 1616,
    random: 4,
};

fn forwarding_agrees_with_the_models(target: Target) {
    if !common::runnable(target) {
        return;
    }
    let mut failures = Vec::new();
    let mut calls = 0;
    let mut forwarded = 0;
    for kernel in registry::all() {
        if kernel.needs_simd() && target == Target::Riscv64 {
            continue;
        }
        let strategies: Vec<&str> = if kernel.name().starts_with("sha256") {
            strategy_names()
        } else {
            vec![schedlab_backend::pipeline::DEFAULT_STRATEGY]
        };
        let cases = kernel.cases(&OPTIONS);
        for strategy in strategies {
            let config = PipelineConfig {
                forward_stores: true,
                ..PipelineConfig::with_strategy(strategy)
            };
            let mut func = kernel.build();
            let (_, stats) = run_ir_stages(&mut func, target, &config)
                .unwrap_or_else(|e| panic!("{} {strategy} {target}: {e}", kernel.name()));
            let stats = stats.forward.expect("the stage ran");
            if kernel.name().starts_with("sha256") {
                forwarded += stats.loads_forwarded;
            }
            let verdicts = run_kernel_cases(kernel, func, target, &cases)
                .unwrap_or_else(|e| panic!("{} {strategy} {target}: {e}", kernel.name()));
            calls += verdicts.len();
            failures.extend(verdicts.into_iter().filter_map(|v| {
                v.mismatch
                    .map(|m| format!("{} {strategy} {target} {}: {m}", kernel.name(), v.label))
            }));
        }
    }
    assert!(calls > 0, "no call ran on {target}");
    assert!(
        forwarded > 0,
        "nothing was forwarded in the SHA-256 kernels"
    );
    assert!(
        failures.is_empty(),
        "{} of {calls} calls differ from the Java model on {target}:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn x86_64_forwarding_agrees_with_the_models() {
    forwarding_agrees_with_the_models(Target::X86_64);
}

#[test]
fn aarch64_forwarding_agrees_with_the_models_under_qemu() {
    forwarding_agrees_with_the_models(Target::Aarch64);
}

#[test]
fn s390x_forwarding_agrees_with_the_models_under_qemu() {
    forwarding_agrees_with_the_models(Target::S390x);
}

#[test]
fn riscv64_forwarding_agrees_with_the_models_under_qemu() {
    forwarding_agrees_with_the_models(Target::Riscv64);
}
