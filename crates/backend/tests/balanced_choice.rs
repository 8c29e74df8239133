//! `balanced`'s per-block choice on the functions the pipeline schedules (after bounds-check
//! elimination, the rewrites and strength reduction, slow path outlined as a report compiles
//! it), on the targets' real machine models: MD5, mulAdd and squareToLen fit the registers on
//! x86_64 and AArch64 in every block (so the default there is `remat-loads`' code, which meets
//! issue #15's goal), while SHA-256's round loop needs clearly more registers than x86_64 and
//! s390x have (so it takes `latency-pressure`'s order) but fits AArch64's with `W` in memory;
//! with `W` forwarded into values (the default) its window exceeds AArch64's registers too.
#![allow(missing_docs)]

use cranelift_codegen::ir::Function;
use schedlab_backend::Target;
use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_kernels::{bigint, md5, sha256};
use schedlab_passes::sched::strategies::balanced::{BalancedChoice, block_choices};

/// A kernel's name and builder.
type KernelBuilder = (&'static str, fn() -> Function);

/// The function as the pipeline hands it to the scheduler (`source` keeps the order).
fn before_scheduling(
    name: &str,
    build: fn() -> Function,
    target: Target,
    forward_stores: bool,
) -> Function {
    let mut func = build();
    let config = PipelineConfig {
        forward_stores,
        ..PipelineConfig::with_strategy("source")
    };
    pipeline::run_ir_stages_with(
        &mut func,
        target,
        &config,
        &StageOptions::report_lazy(target),
    )
    .unwrap_or_else(|e| panic!("{name} {target}: {e}"));
    func
}

fn choices(name: &str, build: fn() -> Function, target: Target) -> Vec<BalancedChoice> {
    choices_with(
        name,
        build,
        target,
        PipelineConfig::default().forward_stores,
    )
}

fn choices_with(
    name: &str,
    build: fn() -> Function,
    target: Target,
    forward_stores: bool,
) -> Vec<BalancedChoice> {
    let func = before_scheduling(name, build, target, forward_stores);
    block_choices(&func, &pipeline::machine_model(target))
        .unwrap_or_else(|e| panic!("{name} {target}: {e}"))
        .into_iter()
        .map(|(_, choice)| choice)
        .collect()
}

fn largest_working_set(choices: &[BalancedChoice]) -> BalancedChoice {
    choices
        .iter()
        .copied()
        .max_by_key(|c| match c {
            BalancedChoice::Fits { working_set }
            | BalancedChoice::SpillsUnavoidable { working_set } => *working_set,
            BalancedChoice::InOrder => 0,
        })
        .expect("a kernel has blocks")
}

#[test]
fn md5_muladd_square_to_len_fit_the_registers_on_x86_64_and_aarch64() {
    let kernels: [KernelBuilder; 3] = [
        ("md5", md5::compress_multi_block),
        ("muladd", bigint::mul_add),
        ("square-to-len", bigint::square_to_len),
    ];
    for (name, build) in kernels {
        for target in [Target::X86_64, Target::Aarch64] {
            let choices = choices(name, build, target);
            assert!(
                choices
                    .iter()
                    .all(|c| matches!(c, BalancedChoice::Fits { .. })),
                "{name} {target}: a block takes latency-pressure: {choices:?}"
            );
        }
    }
    // s390x has 13 registers: MD5's loop block sits at the budget, and every block's choice
    // follows it (a block over 13 takes latency-pressure's order, one within keeps remat-loads').
    let md5_s390x = choices("md5", md5::compress_multi_block, Target::S390x);
    let BalancedChoice::Fits {
        working_set: largest_fitting,
    } = md5_s390x
        .iter()
        .copied()
        .filter(|c| matches!(c, BalancedChoice::Fits { .. }))
        .max_by_key(|c| match c {
            BalancedChoice::Fits { working_set } => *working_set,
            _ => 0,
        })
        .expect("md5 s390x has blocks that fit")
    else {
        unreachable!("filtered to Fits")
    };
    assert!(largest_fitting <= 13, "md5 s390x: {md5_s390x:?}");
    for choice in &md5_s390x {
        if let BalancedChoice::SpillsUnavoidable { working_set } = choice {
            assert!(*working_set > 13, "md5 s390x: {md5_s390x:?}");
        }
    }
    assert!(
        matches!(
            largest_working_set(&md5_s390x),
            BalancedChoice::Fits { working_set: 13 } | BalancedChoice::SpillsUnavoidable { .. }
        ),
        "md5 s390x: {md5_s390x:?}"
    );
}

#[test]
fn sha256_rounds_take_latency_pressure_where_spills_are_unavoidable() {
    // (target, forwarding, spills unavoidable): `W` in memory fits AArch64's 26 registers;
    // `W` in values (16 live schedule words on top of the rounds' state) fits no target.
    for (target, forward_stores, unavoidable) in [
        (Target::X86_64, false, true),
        (Target::S390x, false, true),
        (Target::Aarch64, false, false),
        (Target::X86_64, true, true),
        (Target::S390x, true, true),
        (Target::Aarch64, true, true),
    ] {
        let choice = largest_working_set(&choices_with(
            "sha256",
            sha256::compress_multi_block,
            target,
            forward_stores,
        ));
        assert_eq!(
            choice.uses_latency_pressure(),
            unavoidable,
            "sha256 {target} forwarding {forward_stores}: {choice:?}"
        );
    }
    let riscv = choices("sha256", sha256::compress_multi_block, Target::Riscv64);
    assert!(riscv.iter().all(|&c| c == BalancedChoice::InOrder));
}
