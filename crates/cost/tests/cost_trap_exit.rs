//! A call on a path that never comes back to the loop is not a call in the loop: Wasmtime's
//! explicit heap checks branch to cold blocks that call its `trap` builtin and then trap, and
//! the loop they guard is costed without them; a loop that really calls stays "not modelled".
//!
//! Disassembly needs llvm-objdump (Debian `llvm-14`, installed by `scripts/probe-tools`):
//! without it these tests skip with a message, or fail under `SCHEDLAB_REQUIRE_TOOLS=1` (CI).

use cranelift_codegen::ir::Function;
use schedlab_backend::tools::test_can_use;
use schedlab_backend::{Target, compile};
use schedlab_cost::mca::{
    McaError, disassemble, disassemble_all, disassemble_batch, hot_loop, llvm_tool,
};
use schedlab_cost::{CostError, loop_cost, loop_cost_simulated, loop_costs_simulated};

fn tools_available() -> bool {
    test_can_use(llvm_tool("llvm-objdump"))
}

/// `sum += mem[i]` for `i` in `0..n`, every load checked as Wasmtime checks it without
/// signals-based traps; `calls_in_loop` adds a call on the loop's own path.
fn checked_sum(calls_in_loop: bool) -> Function {
    let call = if calls_in_loop {
        "    call fn0(v0, v31)\n"
    } else {
        ""
    };
    let text = format!(
        "function %f(i64, i32) -> i32 {{
    sig0 = (i64, i8)
    fn0 = %wasm_trap sig0

block0(v0: i64, v1: i32):
    v2 = iconst.i32 0
    jump block1(v2, v2)

block1(v10: i32, v11: i32):
    v12 = icmp ult v10, v1
    brif v12, block2, block9(v11)

block2:
    v20 = uextend.i64 v10
    v21 = load.i64 notrap aligned v0+64
    v22 = iconst.i64 4
    v23 = isub v21, v22
    v24 = icmp ugt v20, v23
    v25 = iconst.i8 0
    v26 = icmp ne v24, v25
    brif v26, block3, block4

block3 cold:
    v27 = iconst.i8 1
    call fn0(v0, v27)
    trap user1

block4:
    v30 = load.i64 notrap aligned v0+56
    v31 = iconst.i8 2
{call}    v32 = iadd v30, v20
    v33 = load.i32 little v32
    v34 = iadd v11, v33
    v35 = iconst.i32 1
    v36 = iadd v10, v35
    jump block1(v36, v34)

block9(v90: i32):
    return v90
}}"
    );
    cranelift_reader::parse_functions(&text)
        .expect("the function parses")
        .remove(0)
}

#[test]
fn a_loop_whose_only_calls_are_on_trap_exits_is_costed() {
    if !tools_available() {
        return;
    }
    for target in [Target::X86_64, Target::Aarch64] {
        let c = compile(&checked_sum(false), target).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(
            !c.relocs.is_empty(),
            "{target}: the trap path's call needs a relocation"
        );
        let body = hot_loop(&c).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(body.is_loop, "{target}");
        assert_eq!(body.calls, 0, "{target}: {:?}", body.insts);
        let cost = loop_cost(&c).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(cost.is_loop, "{target}");
        assert!(cost.bounds.iter().all(|b| b.bound() >= 1.0), "{target}");

        let c = compile(&checked_sum(true), target).unwrap_or_else(|e| panic!("{target}: {e}"));
        match loop_cost(&c) {
            Err(CostError::Loop(McaError::Calls { calls, is_loop })) => {
                assert!(calls >= 1 && is_loop, "{target}")
            }
            other => panic!("{target}: a loop that calls was costed: {other:?}"),
        }
    }
}

#[test]
fn functions_disassembled_together_read_as_each_alone() {
    if !tools_available() {
        return;
    }
    // Mixed targets and a function with a call: one batch per target, results in input order.
    let compiled: Vec<_> = [
        (false, Target::X86_64),
        (true, Target::Aarch64),
        (true, Target::X86_64),
        (false, Target::Aarch64),
    ]
    .into_iter()
    .map(|(calls, target)| {
        compile(&checked_sum(calls), target).unwrap_or_else(|e| panic!("{target}: {e}"))
    })
    .collect();
    let refs: Vec<_> = compiled.iter().collect();
    // The batch itself must work (a failed batch would fall back to one process each).
    for target in [Target::X86_64, Target::Aarch64] {
        let batch: Vec<_> = refs
            .iter()
            .copied()
            .filter(|c| c.target == target)
            .collect();
        let listings = disassemble_batch(target, &batch).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(listings.len(), 2, "{target}");
    }
    let together = disassemble_all(&refs);
    let costs = loop_costs_simulated(&refs);
    assert_eq!(together.len(), compiled.len());
    for ((c, batch), cost) in compiled.iter().zip(together).zip(costs) {
        let alone = disassemble(c).unwrap_or_else(|e| panic!("{}: {e}", c.target));
        let batch = batch.unwrap_or_else(|e| panic!("{}: {e}", c.target));
        assert!(alone.len() > 5, "{}: {alone:?}", c.target);
        assert_eq!(batch, alone, "{}", c.target);
        match (cost, loop_cost_simulated(c)) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{}", c.target),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}", c.target),
            (a, b) => panic!("{}: together {a:?}, alone {b:?}", c.target),
        }
    }
}
