//! llvm-mca on the MD5 kernel's hot loop: the loop is found on every target, its figures are
//! positive and plausible, and missing tools or unknown CPUs are errors, not panics.
//! Skipped with a message when llvm-mca / llvm-objdump are not installed; failed instead under
//! `SCHEDLAB_REQUIRE_TOOLS=1`.

use schedlab_backend::stats::code_stats;
use schedlab_backend::tools::test_can_use;
use schedlab_backend::{Compiled, Target, compile};
use schedlab_cost::mca::{
    McaError, hot_loop, llvm_tool, mca_cpus, mca_cycles, mca_report, mca_tool_for,
};
use schedlab_kernels::md5::compress_multi_block;

/// Whether llvm-mca and llvm-objdump are installed; fails the test under
/// `SCHEDLAB_REQUIRE_TOOLS=1` (as in CI) when they are not.
fn llvm_available() -> bool {
    test_can_use(llvm_tool("llvm-mca").and_then(|_| llvm_tool("llvm-objdump")))
}

/// The MD5 kernel compiled for every target; `None` without the tools ([`llvm_available`]).
fn md5_on_every_target() -> Option<Vec<(Target, Compiled)>> {
    if !llvm_available() {
        return None;
    }
    let func = compress_multi_block();
    let compiled = Target::ALL
        .into_iter()
        .map(|target| (target, compile(&func, target).expect("compiles")))
        .collect();
    Some(compiled)
}

#[test]
fn md5_hot_loop_is_one_block_of_64_steps() {
    let Some(compiled_md5) = md5_on_every_target() else {
        return;
    };
    for (target, compiled) in compiled_md5 {
        let stats = code_stats(&compiled);
        let body = hot_loop(&compiled).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(body.is_loop, "{target}: no loop found");
        // The loop holds the 64 steps (at least one rotate each) but not the prologue,
        // epilogue or the out-of-bounds exits.
        let rotates = body
            .insts
            .iter()
            .filter(|i| {
                let m = i.text.split_whitespace().next().unwrap_or("");
                matches!(m, "rorxl" | "roll" | "rorl" | "ror" | "extr" | "rll")
                    || (target == Target::Riscv64 && matches!(m, "srliw" | "srlw" | "srl" | "srli"))
            })
            .count();
        assert!(rotates >= 64, "{target}: {rotates} rotates in the loop");
        assert!(
            body.insts.len() < stats.insts,
            "{target}: loop {} insts, function {}",
            body.insts.len(),
            stats.insts
        );
        assert!(
            !body
                .insts
                .iter()
                .any(|i| matches!(i.text.as_str(), "ret" | "retq" | "br %r14")),
            "{target}: the loop contains a return"
        );
        eprintln!(
            "{target}: loop at {:#x}, {} of {} instructions",
            body.header,
            body.insts.len(),
            stats.insts
        );
    }
}

#[test]
fn md5_cycles_per_block_are_plausible() {
    let Some(compiled_md5) = md5_on_every_target() else {
        return;
    };
    for (target, compiled) in compiled_md5 {
        assert!(!mca_cpus(target).is_empty());
        for cpu in mca_cpus(target) {
            if !test_can_use(mca_tool_for(cpu)) {
                continue;
            }
            let report =
                mca_report(&compiled, cpu).unwrap_or_else(|e| panic!("{target} {cpu}: {e}"));
            let cycles = report.cycles_per_iteration;
            // MD5's 64 steps form one dependency chain of at least 4 operations each, and no
            // core issues fewer than one instruction every 4 cycles.
            assert!(
                cycles >= 64.0 * 4.0 && cycles <= 4.0 * report.body_insts as f64,
                "{target} {cpu}: {cycles} cycles for {} instructions",
                report.body_insts
            );
            assert!(report.ipc > 0.0 && report.ipc < 8.0, "{report:?}");
            let again = mca_cycles(&compiled, cpu).expect("second run");
            assert_eq!(again, cycles, "{target} {cpu}: llvm-mca is deterministic");
            eprintln!(
                "{target} {cpu}: {cycles:.1} cycles/block, IPC {:.2}",
                report.ipc
            );
        }
    }
}

#[test]
fn unknown_cpus_and_missing_tools_are_errors() {
    let compiled = compile(&compress_multi_block(), Target::Aarch64).expect("compiles");
    match mca_cycles(&compiled, "cortex-a57") {
        Err(McaError::UnknownCpu { valid, .. }) => assert!(valid.contains(&"cortex-a72")),
        other => panic!("expected UnknownCpu, got {other:?}"),
    }
    let err = llvm_tool("llvm-schedlab-no-such-tool").expect_err("absent");
    let text = err.to_string();
    assert!(
        text.contains("not found") && text.contains("llvm-14"),
        "{text}"
    );
}
