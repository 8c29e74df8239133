//! Issue #15's squareToLen spill goals, on the function the JIT compiles (slow path outlined,
//! the report's named ISA level): on x86_64 the default strategy spills at most half of the
//! 11 spill stores the issue started from (≤ 5) and no more than any other strategy; on s390x
//! (13 allocatable registers) it spills no more than the fewest any strategy reaches. Both
//! counts are computed from the strategies' code, not written down; only the "≤ 5" is a
//! figure. Static (Cranelift's register allocator on schedlab's IR), so deterministic.
//!
//! What holds them: `iv::fold` folds the comparisons of constants in the inner `mulAdd` loop's
//! entry test, and `iv::guards` removes the inlined `i - 1 > x.length` check that the outer
//! loop's bounds decide (so `x.length` is no longer live through the loop nest).
#![allow(missing_docs)]

use schedlab_backend::Target;
use schedlab_backend::pipeline::{self, DEFAULT_STRATEGY, PipelineConfig, StageOptions};
use schedlab_kernels::bigint;
use schedlab_passes::sched::strategy_names;

/// Issue #15: squareToLen on x86_64 spills at most half of the 11 spill stores it had when the
/// goal was set.
const X86_64_SPILL_GOAL: usize = 11 / 2;

fn spills(target: Target, strategy: &'static str) -> usize {
    pipeline::run_with(
        bigint::square_to_len(),
        target,
        &PipelineConfig::with_strategy(strategy),
        &StageOptions::report_lazy(target),
    )
    .unwrap_or_else(|e| panic!("square-to-len {target} {strategy}: {e}"))
    .code
    .spills
}

/// The fewest spills of the strategies other than the default (`shuffle`, a random order for
/// testing, and `optimal`, the exact reference on the IR model, are no candidates), with the
/// strategy that reaches it.
fn fewest_other(target: Target) -> (usize, &'static str) {
    strategy_names()
        .into_iter()
        .filter(|&s| s != DEFAULT_STRATEGY && s != "shuffle" && s != "optimal")
        .map(|s| (spills(target, s), s))
        .min()
        .expect("there are other strategies")
}

#[test]
fn default_spills_at_most_five_and_least_on_x86_64() {
    let default = spills(Target::X86_64, DEFAULT_STRATEGY);
    assert!(
        default <= X86_64_SPILL_GOAL,
        "square-to-len x86_64: the default spills {default} times, the goal is <= {X86_64_SPILL_GOAL}"
    );
    let (fewest, by) = fewest_other(Target::X86_64);
    assert!(
        default <= fewest,
        "square-to-len x86_64: the default spills {default} times, {by} {fewest}"
    );
}

#[test]
fn default_spills_least_on_s390x() {
    let default = spills(Target::S390x, DEFAULT_STRATEGY);
    let (fewest, by) = fewest_other(Target::S390x);
    assert!(
        default <= fewest,
        "square-to-len s390x: the default spills {default} times, {by} {fewest}"
    );
}
