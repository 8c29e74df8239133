//! Loop rotation ([`schedlab_passes::rotate`]) in the machine code: the hot loop of every kernel
//! is one contiguous run of code that takes one branch per iteration, its last instruction,
//! back to its first (a conditional branch with the exit falling through, unless the register
//! allocator needs moves on the back edge). Without rotation the same loops take two (the
//! header's branch over the exit code to the body, and the latch's jump back), which the second
//! test pins so that this one can fail. Needs
//! llvm-objdump (Debian `llvm-14`): skips with a message without it, fails under
//! `SCHEDLAB_REQUIRE_TOOLS=1`.

use cranelift_codegen::ir::Function;
use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_backend::tools::test_can_use;
use schedlab_backend::{Compiled, Target};
use schedlab_cost::mca::{HotLoop, hot_loop, llvm_tool};

/// A kernel's name and builder.
type Kernel = (&'static str, fn() -> Function);

const KERNELS: [Kernel; 4] = [
    ("muladd", schedlab_kernels::bigint::mul_add),
    ("square-to-len", schedlab_kernels::bigint::square_to_len),
    ("md5", schedlab_kernels::md5::compress_multi_block),
    ("int-sum", schedlab_kernels::int_sum::multi_block),
];

fn compiled(build: fn() -> Function, target: Target, strategy: &str, rotate: bool) -> Compiled {
    let config = PipelineConfig {
        rotate_loops: rotate,
        ..PipelineConfig::with_strategy(strategy)
    };
    pipeline::run_with(build(), target, &config, &StageOptions::report_lazy(target))
        .unwrap_or_else(|e| panic!("{target} {strategy}: {e}"))
        .compiled
}

/// Whether an instruction transfers control to a code address (its last operand).
fn branch_target(target: Target, text: &str) -> Option<u64> {
    let mnemonic = text.split_whitespace().next().unwrap_or("");
    let is_branch = match target {
        Target::X86_64 => mnemonic.starts_with('j'),
        Target::Aarch64 => {
            mnemonic == "b"
                || mnemonic.starts_with("b.")
                || matches!(mnemonic, "cbz" | "cbnz" | "tbz" | "tbnz")
        }
        Target::S390x => mnemonic.starts_with('j') || mnemonic.contains("rj"),
        Target::Riscv64 => mnemonic.starts_with('b') || mnemonic == "j" || mnemonic == "jal",
    };
    let last = text.rsplit([' ', ',']).next().unwrap_or("");
    let address = u64::from_str_radix(last.strip_prefix("0x")?, 16).ok()?;
    is_branch.then_some(address)
}

/// The branches of the loop as (index in the loop, target).
fn branches(target: Target, l: &HotLoop) -> Vec<(usize, u64)> {
    l.insts
        .iter()
        .enumerate()
        .filter_map(|(i, inst)| branch_target(target, &inst.text).map(|t| (i, t)))
        .collect()
}

/// Branches taken on every iteration: those to an instruction of the loop (a branch out of the
/// loop is taken once, at the exit).
fn taken_per_iteration(target: Target, l: &HotLoop) -> usize {
    branches(target, l)
        .iter()
        .filter(|(_, to)| l.insts.iter().any(|i| i.addr == *to))
        .count()
}

/// The loop starts at its header and ends with its one taken branch, back to the header: one
/// contiguous run of code. (Where the register allocator must move values on the back edge —
/// spilling strategies — the moves sit between a conditional exit branch, not taken, and the
/// jump back.)
fn is_rotated(target: Target, l: &HotLoop) -> bool {
    let last = l.insts.len() - 1;
    l.insts[0].addr == l.header
        && taken_per_iteration(target, l) == 1
        && branches(target, l).last() == Some(&(last, l.header))
}

#[test]
fn hot_loops_end_in_one_conditional_back_edge() {
    if !test_can_use(llvm_tool("llvm-objdump")) {
        return;
    }
    for target in Target::ALL {
        for (kernel, build) in KERNELS {
            // riscv64 MD5 loads its 64 round constants from inline data that the code jumps
            // over (Cranelift's riscv64 constant loads), taken branches rotation cannot remove.
            if kernel == "md5" && target == Target::Riscv64 {
                continue;
            }
            for strategy in ["source", "remat-loads", "list-latency", "pressure"] {
                let l = hot_loop(&compiled(build, target, strategy, true))
                    .unwrap_or_else(|e| panic!("{kernel} {target} {strategy}: {e}"));
                assert!(l.is_loop, "{kernel} {target} {strategy}: no loop");
                let direct = branches(target, &l).len() == 1;
                println!("{kernel} {target} {strategy}: one taken branch, conditional: {direct}");
                assert!(
                    is_rotated(target, &l),
                    "{kernel} {target} {strategy}: the hot loop's branches are {:x?} in {:#?}",
                    branches(target, &l),
                    l.insts
                );
            }
        }
    }
}

#[test]
fn without_rotation_the_loop_takes_two_branches() {
    if !test_can_use(llvm_tool("llvm-objdump")) {
        return;
    }
    for (kernel, build) in KERNELS {
        let l = hot_loop(&compiled(build, Target::X86_64, "source", false))
            .unwrap_or_else(|e| panic!("{kernel}: {e}"));
        assert!(!is_rotated(Target::X86_64, &l), "{kernel}: {:#?}", l.insts);
        assert_eq!(taken_per_iteration(Target::X86_64, &l), 2, "{kernel}");
    }
}
