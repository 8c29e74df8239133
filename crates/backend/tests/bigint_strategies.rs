//! Every scheduling strategy × target on the BigInteger kernels: the pipeline's IR stages
//! (with and without the optimise stage), then each registered strategy, then execution
//! (the host JIT, qemu for the others) against the Rust transcription of the Java code on
//! random operands and hostile arguments.
//!
//! Without a cross compiler or qemu the foreign targets are skipped with a message; with
//! `SCHEDLAB_REQUIRE_EMULATORS=1` they fail instead.

mod common;

use schedlab_backend::Target;
use schedlab_backend::emulate_bigint::{
    Layout, hostile_mul_add_cases, hostile_square_cases, random_mul_add_cases, random_square_cases,
    run_cases,
};
use schedlab_backend::pipeline::{PipelineConfig, run_ir_stages, verify};
use schedlab_kernels::bigint::{Entry, mul_add_with, square_to_len_with};
use schedlab_passes::sched::{MachineModel, schedule, strategy_names};

fn run_target(target: Target) {
    if !common::runnable(target) {
        return;
    }
    let model = MachineModel::for_target(target.name()).expect("a model per target");
    let seed = 0x5c4e_d000 + target as u64;
    let squares = {
        let mut c = random_square_cases(seed, (1..=200).step_by(9));
        c.extend(hostile_square_cases(seed));
        c
    };
    let mul_adds = {
        let mut c = random_mul_add_cases(seed, (1..=200).step_by(9));
        c.extend(hostile_mul_add_cases(seed));
        c
    };
    let strategies = strategy_names();
    assert!(strategies.len() > 1, "strategies are registered");
    for optimize in [false, true] {
        let config = PipelineConfig {
            optimize,
            ..PipelineConfig::default()
        };
        for entry in [Entry::Wrapper, Entry::Impl] {
            for strategy in &strategies {
                let what = format!("{target} {strategy} optimise={optimize} {entry:?}");
                let prepare = |mut func| {
                    run_ir_stages(&mut func, target, &config)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    schedule(&mut func, strategy, &model).unwrap_or_else(|e| panic!("{what}: {e}"));
                    verify(&func, "schedule").unwrap_or_else(|e| panic!("{what}: {e}"));
                    func
                };
                let square = prepare(square_to_len_with(entry));
                let got = run_cases(&square, target, Layout::End, &squares)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                for (i, (g, c)) in got.iter().zip(&squares).enumerate() {
                    assert_eq!(*g, c.expected(entry), "{what} square case {i}: {c:?}");
                }
                let mul_add = prepare(mul_add_with(entry));
                let got = run_cases(&mul_add, target, Layout::Start, &mul_adds)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                for (i, (g, c)) in got.iter().zip(&mul_adds).enumerate() {
                    assert_eq!(*g, c.expected(entry), "{what} mul_add case {i}: {c:?}");
                }
            }
        }
    }
    eprintln!(
        "{target}: {} strategies × optimise on/off × 2 entries agree on {} + {} cases",
        strategies.len(),
        squares.len(),
        mul_adds.len()
    );
}

#[test]
fn x86_64_every_strategy() {
    run_target(Target::X86_64);
}

#[test]
fn aarch64_every_strategy_under_qemu() {
    run_target(Target::Aarch64);
}

#[test]
fn s390x_every_strategy_under_qemu() {
    run_target(Target::S390x);
}

#[test]
fn riscv64_every_strategy_under_qemu() {
    run_target(Target::Riscv64);
}
