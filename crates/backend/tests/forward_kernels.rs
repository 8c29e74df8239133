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
use schedlab_backend::pipeline::PipelineConfig;
use schedlab_kernels::registry::{CaseOptions, Kernel};
use schedlab_passes::sched::strategy_names;

const OPTIONS: CaseOptions = CaseOptions {
    seed: 1616,
    random: 4,
};

fn forwarding_agrees_with_the_models(target: Target) {
    let strategies = |kernel: &dyn Kernel| {
        if kernel.name().starts_with("sha256") {
            strategy_names()
        } else {
            vec![schedlab_backend::pipeline::DEFAULT_STRATEGY]
        }
    };
    let config = |strategy: &str| PipelineConfig {
        forward_stores: true,
        ..PipelineConfig::with_strategy(strategy)
    };
    let mut forwarded = 0;
    let tally =
        common::tally_every_kernel(target, &OPTIONS, strategies, config, |kernel, stats| {
            let stats = stats.forward.expect("the stage ran");
            if kernel.name().starts_with("sha256") {
                forwarded += stats.loads_forwarded;
            }
        });
    let Some(tally) = tally else {
        return;
    };
    assert!(tally.calls > 0, "no call ran on {target}");
    assert!(
        forwarded > 0,
        "nothing was forwarded in the SHA-256 kernels"
    );
    tally.assert_all_agree(target);
}

common::test_on_every_target!(forwarding_agrees_with_the_models:
    x86_64_forwarding_agrees_with_the_models => X86_64,
    aarch64_forwarding_agrees_with_the_models_under_qemu => Aarch64,
    s390x_forwarding_agrees_with_the_models_under_qemu => S390x,
    riscv64_forwarding_agrees_with_the_models_under_qemu => Riscv64,
);
