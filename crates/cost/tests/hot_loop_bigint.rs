//! The hot-loop finder on the BigInteger kernels' real machine code, every target: the loop
//! costed is the small check-free `mulAdd` loop (for `squareToLen` the one nested in its loop
//! over `i`), not the checked fallback copy or the enclosing loop. Needs llvm-objdump (Debian
//! `llvm-14`): skips with a message without it, fails under `SCHEDLAB_REQUIRE_TOOLS=1`.

use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_backend::tools::test_can_use;
use schedlab_backend::{Compiled, Target};
use schedlab_cost::mca::{hot_loop, llvm_tool};
use schedlab_passes::bce::BceLevel;

fn compiled(kernel: &str, target: Target, bce: BceLevel) -> Compiled {
    let func = match kernel {
        "muladd" => schedlab_kernels::bigint::mul_add(),
        _ => schedlab_kernels::bigint::square_to_len(),
    };
    let config = PipelineConfig {
        bce,
        ..PipelineConfig::with_strategy("source")
    };
    pipeline::run_with(func, target, &config, &StageOptions::REPORT)
        .unwrap_or_else(|e| panic!("{kernel} {target}: {e}"))
        .compiled
}

/// Whether an instruction multiplies (the `mulAdd` body's `x[j] * k`).
fn is_multiply(text: &str) -> bool {
    let m = text.split_whitespace().next().unwrap_or("");
    m.starts_with("imul") || m.starts_with("mul") || m.starts_with("madd") || m.starts_with("ms")
}

#[test]
fn the_predicated_inner_mul_add_loop_is_chosen_on_every_target() {
    if !test_can_use(llvm_tool("llvm-objdump")) {
        return;
    }
    for target in Target::ALL {
        for kernel in ["muladd", "square-to-len"] {
            let fast = hot_loop(&compiled(kernel, target, BceLevel::Predicate))
                .unwrap_or_else(|e| panic!("{kernel} {target}: {e}"));
            let checked = hot_loop(&compiled(kernel, target, BceLevel::Off))
                .unwrap_or_else(|e| panic!("{kernel} {target} checked: {e}"));
            for (what, l) in [("predicated", &fast), ("checked", &checked)] {
                assert!(l.is_loop, "{kernel} {target} {what}: no loop");
                assert!(
                    l.insts.iter().any(|i| is_multiply(&i.text)),
                    "{kernel} {target} {what}: no multiply in {:#?}",
                    l.insts
                );
                // The enclosing loop of squareToLen holds well over 100 instructions.
                assert!(
                    l.insts.len() < 40,
                    "{kernel} {target} {what}: {}",
                    l.insts.len()
                );
            }
            // The check-free copy is chosen: smaller than the loop with every check in it.
            assert!(
                fast.insts.len() < checked.insts.len(),
                "{kernel} {target}: {} vs checked {}",
                fast.insts.len(),
                checked.insts.len()
            );
        }
    }
}
