//! Issue #15's goal, pinned on the static figures of the out-of-order targets: for MD5, mulAdd
//! and squareToLen on x86_64 and AArch64, the default strategy's code (the function the JIT
//! compiles, slow path outlined) has no more spills than any other strategy's, and on each
//! modelled core its hot loop's cycles by schedlab's own memory-aware model are at most the
//! best other strategy's + 1 %; MD5's hot loop has no spill and no reload at all.
//!
//! The figures are static (Cranelift's code and the model's tables), so the test is
//! deterministic. `scripts/goal-table` prints the whole table, llvm-mca's targets included.
//! The hot loop is disassembled with llvm-objdump (Debian `llvm-14`): without it the test
//! skips with a message, or fails under `SCHEDLAB_REQUIRE_TOOLS=1` (CI).
#![allow(missing_docs)]

use cranelift_codegen::ir::Function;
use schedlab_backend::pipeline::{self, DEFAULT_STRATEGY, PipelineConfig, StageOptions};
use schedlab_backend::tools::test_can_use;
use schedlab_backend::{Artifact, Target};
use schedlab_cost::mca::llvm_tool;
use schedlab_cost::{LoopCost, loop_cost};
use schedlab_kernels::{bigint, md5};
use schedlab_passes::sched::strategy_names;

/// A kernel's name and builder.
type KernelBuilder = (&'static str, fn() -> Function);

/// Allowed excess of the default's modelled cycles over the best other strategy's.
const TOLERANCE: f64 = 0.01;

struct Figures {
    strategy: &'static str,
    spills: usize,
    cost: LoopCost,
}

fn figures(
    kernel: &str,
    build: fn() -> Function,
    target: Target,
    strategy: &'static str,
) -> Figures {
    let artifact: Artifact = pipeline::run_with(
        build(),
        target,
        &PipelineConfig::with_strategy(strategy),
        &StageOptions::report_lazy(target),
    )
    .unwrap_or_else(|e| panic!("{kernel} {target} {strategy}: {e}"));
    let cost = loop_cost(&artifact.compiled)
        .unwrap_or_else(|e| panic!("{kernel} {target} {strategy}: {e}"));
    Figures {
        strategy,
        spills: artifact.code.spills,
        cost,
    }
}

/// The kernels issue 15's goal table covers.
fn goal_kernels() -> [KernelBuilder; 3] {
    [
        ("md5", md5::compress_multi_block),
        ("muladd", bigint::mul_add),
        ("square-to-len", bigint::square_to_len),
    ]
}

#[test]
fn default_is_best_within_one_percent_and_spills_least_on_out_of_order_targets() {
    if !test_can_use(llvm_tool("llvm-objdump")) {
        return;
    }
    let kernels = goal_kernels();
    // `shuffle` is a random order for testing the DAG, not a candidate default; `optimal` is the
    // exact reference on the IR model (`report --optimum` states every strategy's distance).
    let others: Vec<&'static str> = strategy_names()
        .into_iter()
        .filter(|&s| s != DEFAULT_STRATEGY && s != "shuffle" && s != "optimal")
        .collect();
    assert!(others.len() >= 5, "the built-in strategies are registered");
    let mut failures = Vec::new();
    for (kernel, build) in kernels {
        for target in [Target::X86_64, Target::Aarch64] {
            let default = figures(kernel, build, target, DEFAULT_STRATEGY);
            let rest: Vec<Figures> = others
                .iter()
                .map(|&s| figures(kernel, build, target, s))
                .collect();
            if kernel == "md5"
                && (default.cost.spills.spills, default.cost.spills.reloads) != (0, 0)
            {
                failures.push(format!(
                    "md5 {target}: the default's hot loop has {} spills / {} reloads",
                    default.cost.spills.spills, default.cost.spills.reloads
                ));
            }
            if let Some(fewer) = rest.iter().find(|o| o.spills < default.spills) {
                failures.push(format!(
                    "{kernel} {target}: {} spills {} < the default's {}",
                    fewer.strategy, fewer.spills, default.spills
                ));
            }
            assert!(
                !default.cost.bounds.is_empty(),
                "{kernel} {target}: no core modelled"
            );
            for bound in &default.cost.bounds {
                let mine = bound.bound();
                let best = rest
                    .iter()
                    .filter_map(|o| {
                        let b = o.cost.bounds.iter().find(|b| b.cpu == bound.cpu)?;
                        Some((b.bound(), o.strategy))
                    })
                    .min_by(|a, b| a.0.total_cmp(&b.0));
                let Some((best, by)) = best else {
                    continue;
                };
                eprintln!(
                    "{kernel} {target} {}: default {mine:.1}, best other {best:.1} ({by})",
                    bound.cpu
                );
                if mine > best * (1.0 + TOLERANCE) {
                    failures.push(format!(
                        "{kernel} {target} {}: default {mine:.1} cycles > {by}'s {best:.1} + 1 %",
                        bound.cpu
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "goal missed:\n{}", failures.join("\n"));
}

/// s390x (z15) by schedlab's own model: the cycle half of the goal for MD5, mulAdd and
/// squareToLen (by llvm-mca, which drops spill → reload chains, MD5's default looked 2 % slower
/// than `pressure`). The spill half for squareToLen is pinned in
/// `crates/backend/tests/square_to_len_spills.rs`.
#[test]
fn default_cycles_are_best_within_one_percent_on_s390x_z15() {
    if !test_can_use(llvm_tool("llvm-objdump")) {
        return;
    }
    let kernels = goal_kernels();
    let target = Target::S390x;
    let mut failures = Vec::new();
    for (kernel, build) in kernels {
        let default = figures(kernel, build, target, DEFAULT_STRATEGY);
        let bound = default
            .cost
            .bounds
            .iter()
            .find(|b| b.cpu == "z15")
            .unwrap_or_else(|| panic!("{kernel}: z15 not modelled"))
            .bound();
        for other in strategy_names()
            .into_iter()
            .filter(|&s| s != DEFAULT_STRATEGY && s != "shuffle" && s != "optimal")
        {
            let theirs = figures(kernel, build, target, other);
            let Some(best) = theirs.cost.bounds.iter().find(|b| b.cpu == "z15") else {
                failures.push(format!("{kernel} {other}: z15 not modelled"));
                continue;
            };
            if bound > best.bound() * (1.0 + TOLERANCE) {
                failures.push(format!(
                    "{kernel} s390x z15: default {bound:.1} cycles > {other}'s {:.1} + 1 %",
                    best.bound()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "goal missed:\n{}", failures.join("\n"));
}
