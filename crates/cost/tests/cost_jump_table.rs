//! A loop that dispatches through a jump table (`br_table`) is a loop: llvm-objdump's listing
//! names no target for `jmp *%rcx` (x86_64) or `br x3` (AArch64), and on both the table that
//! follows the dispatch is data. The control-flow graph takes the dispatch's targets from the
//! code generator's block edges, so the loop is found and the table is never read as code. On
//! x86_64 the listing's linear sweep through the table's bytes would run past a target: the
//! object llvm-objdump reads has a local symbol at each target, where it starts again.
//!
//! Disassembly needs llvm-objdump (Debian `llvm-14`, installed by `scripts/probe-tools`):
//! without it these tests skip with a message, or fail under `SCHEDLAB_REQUIRE_TOOLS=1` (CI).

use cranelift_codegen::ir::Function;
use schedlab_backend::tools::test_can_use;
use schedlab_backend::{Target, compile};
use schedlab_cost::mca::{disassemble, hot_loop, llvm_tool};
use schedlab_cost::{loop_cost, loop_costs_simulated};

/// `x` stepped `n` times, each step chosen by `n` through a three-way `br_table` whose default
/// leaves the loop.
fn dispatch_loop() -> Function {
    parse(DISPATCH_LOOP)
}

/// The text of [`dispatch_loop`].
const DISPATCH_LOOP: &str = "function %f(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    jump block1(v1, v0)
block1(v2: i32, v3: i32):
    br_table v2, block5(v3), [block2(v3), block3(v3), block4(v3)]
block2(v4: i32):
    v20 = iconst.i32 1
    v5 = iadd v4, v20
    v6 = isub v2, v20
    jump block1(v6, v5)
block3(v7: i32):
    v21 = iconst.i32 3
    v8 = imul v7, v21
    v22 = iconst.i32 1
    v9 = isub v2, v22
    jump block1(v9, v8)
block4(v10: i32):
    v11 = iadd v10, v10
    v23 = iconst.i32 1
    v12 = isub v2, v23
    jump block1(v12, v11)
block5(v13: i32):
    return v13
}";

fn parse(text: &str) -> Function {
    cranelift_reader::parse_functions(text)
        .expect("the function parses")
        .remove(0)
}

#[test]
fn a_loop_through_a_jump_table_is_found_and_costed() {
    if !test_can_use(llvm_tool("llvm-objdump")) {
        return;
    }
    for target in [Target::X86_64, Target::Aarch64] {
        let c = compile(&dispatch_loop(), target).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(!c.block_edges.is_empty(), "{target}: block edges recorded");
        let body = hot_loop(&c).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(body.is_loop, "{target}: {:?}", body.insts);
        let dispatch = |text: &str| text.starts_with("jmpq *") || text.starts_with("br x");
        assert!(
            body.insts.iter().any(|i| dispatch(&i.text)),
            "{target}: the loop holds the dispatch: {:?}",
            body.insts
        );
        let table = |text: &str| text.starts_with("udf") || text.contains("<unknown>");
        assert!(
            body.insts.iter().all(|i| !table(&i.text)),
            "{target}: no table entry read as code: {:?}",
            body.insts
        );
        let cost = loop_cost(&c).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(cost.is_loop, "{target}");
        let together = loop_costs_simulated(&[&c]).remove(0);
        assert!(together.is_ok(), "{target}: {together:?}");
    }
}

/// [`dispatch_loop`] with a cold exit block that two blocks branch to, so that the critical
/// edges into it are cold too and Cranelift lowers a cold block before the dispatch, then
/// emits it last: its recorded edges name the start of another block for the dispatch's.
fn dispatch_loop_with_cold_exit() -> Function {
    let entry = "block0(v0: i32, v1: i32):\n    jump block1(v1, v0)\n";
    let cold_entry = "block0(v0: i32, v1: i32):
    brif v0, block6(v0), block1(v1, v0)
block6(v40: i32) cold:
    v30 = iconst.i32 7
    v31 = iadd v40, v30
    return v31
";
    let text = DISPATCH_LOOP.replace(entry, cold_entry).replace(
        "    jump block1(v6, v5)",
        "    brif v6, block6(v5), block1(v6, v5)",
    );
    assert!(text.contains("block6(v40: i32) cold") && text.contains("brif v6"));
    parse(&text)
}

#[test]
fn a_dispatch_lowered_after_a_cold_block_gets_its_own_targets() {
    if !test_can_use(llvm_tool("llvm-objdump")) {
        return;
    }
    for target in [Target::X86_64, Target::Aarch64] {
        let c = compile(&dispatch_loop_with_cold_exit(), target)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let insts = disassemble(&c).unwrap_or_else(|e| panic!("{target}: {e}"));
        let dispatch = insts
            .iter()
            .find(|i| i.text.starts_with("jmpq *") || i.text.starts_with("br x"))
            .unwrap_or_else(|| panic!("{target}: a dispatch in {insts:?}"))
            .addr;
        // The block holding the dispatch: the last edge source at or before it.
        let source = c
            .block_edges
            .iter()
            .map(|&(from, _)| u64::from(from))
            .filter(|&from| from <= dispatch)
            .max();
        let mut targets: Vec<u32> = c
            .block_edges
            .iter()
            .filter(|&&(from, _)| Some(u64::from(from)) == source)
            .map(|&(_, to)| to)
            .collect();
        targets.sort_unstable();
        targets.dedup();
        assert_eq!(
            targets.len(),
            4,
            "{target}: the table's three targets and its default: {targets:?}"
        );
        let body = hot_loop(&c).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(body.is_loop, "{target}: {:?}", body.insts);
        assert!(
            body.insts.iter().any(|i| i.addr == dispatch),
            "{target}: {:?}",
            body.insts
        );
    }
}
