//! Store-to-load forwarding and dead scratch-store elimination on small hand-written CLIF:
//! what is forwarded, what an aliasing store, another type or byte order, a call or a join
//! stops, and which stack-slot stores are removed (only those of a slot whose address never
//! escapes and that nothing reads any more). Functions over stack slots also run in
//! Cranelift's interpreter before and after the pass.
#![allow(missing_docs)]

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{Function, Opcode};
use cranelift_interpreter::step::ControlFlow;
use schedlab_passes::forward::{self, ForwardStats};

mod common;
use common::{count, interpreter, parse, verify};

/// The blocks and each block's terminator opcode: the pass must not touch the CFG.
fn cfg_shape(func: &Function) -> Vec<(String, Option<Opcode>)> {
    func.layout
        .blocks()
        .map(|b| {
            let term = func.layout.last_inst(b).map(|i| func.dfg.insts[i].opcode());
            (b.to_string(), term)
        })
        .collect()
}

/// Runs the pass on `text`, verifies the result and checks the CFG is unchanged.
fn forwarded(text: &str) -> (Function, Function, ForwardStats) {
    let original = parse(text);
    let mut func = original.clone();
    let stats = forward::run(&mut func);
    verify(&func);
    assert_eq!(cfg_shape(&func), cfg_shape(&original), "CFG changed");
    (original, func, stats)
}

/// Calls `before` and `after` in the interpreter with each of `calls` (`i32` arguments): they
/// must return the same.
fn same_results<const N: usize>(before: &Function, after: &Function, calls: &[[i32; N]]) {
    for call in calls {
        let args = call.map(DataValue::I32);
        assert_eq!(
            interpret(after, &args),
            interpret(before, &args),
            "{call:?}"
        );
    }
}

fn interpret(func: &Function, args: &[DataValue]) -> Vec<DataValue> {
    match interpreter(func, None).call_by_name(&func.name.to_string(), args) {
        Ok(ControlFlow::Return(values)) => values.to_vec(),
        other => panic!("interpreter: {other:?}"),
    }
}

#[test]
fn a_load_of_a_stored_location_gets_the_stored_value() {
    let (_, func, stats) = forwarded(
        "function %f(i64, i32, i32) -> i32 {
         block0(v0: i64, v1: i32, v2: i32):
             store v1, v0+8
             store v2, v0+12       ; same base, disjoint range: does not alias
             v3 = load.i32 v0+8
             return v3
         }",
    );
    assert_eq!(stats.loads_forwarded, 1);
    assert_eq!(count(&func, Opcode::Load), 0);
    // Through a pointer argument the stores stay: the caller can read them.
    assert_eq!(count(&func, Opcode::Store), 2);
    assert_eq!(stats.stores_removed, 0);
    assert!(func.display().to_string().contains("return v1"));
}

#[test]
fn a_store_through_another_pointer_may_alias() {
    let (_, func, stats) = forwarded(
        "function %f(i64, i64, i32, i32) -> i32 {
         block0(v0: i64, v1: i64, v2: i32, v3: i32):
             store v2, v0
             store v3, v1          ; v1 may equal v0
             v4 = load.i32 v0
             return v4
         }",
    );
    assert_eq!(stats.loads_forwarded, 0);
    assert_eq!(count(&func, Opcode::Load), 1);
}

#[test]
fn an_overlapping_narrow_store_on_the_same_base_kills() {
    let (_, _, stats) = forwarded(
        "function %f(i64, i32, i32) -> i32 {
         block0(v0: i64, v1: i32, v2: i32):
             store v1, v0+4
             istore8 v2, v0+7      ; the last byte of the stored word
             v3 = load.i32 v0+4
             return v3
         }",
    );
    assert_eq!(stats.loads_forwarded, 0);
}

#[test]
fn distinct_alias_regions_do_not_alias() {
    let (_, _, stats) = forwarded(
        "function %f(i64, i64, i32, i32) -> i32 {
             region0 = 1 \"state\"
             region1 = 2 \"schedule\"
         block0(v0: i64, v1: i64, v2: i32, v3: i32):
             store region0 v2, v0
             store region1 v3, v1  ; another region: disjoint by the IR's own statement
             v4 = load.i32 region0 v0
             return v4
         }",
    );
    assert_eq!(stats.loads_forwarded, 1);
}

#[test]
fn another_type_or_byte_order_is_not_forwarded() {
    let (_, func, stats) = forwarded(
        "function %f(i64, i32) -> i64 {
         block0(v0: i64, v1: i32):
             store v1, v0
             v2 = load.i64 v0      ; wider
             v3 = load.f32 v0      ; same width, another type
             v4 = load.i32 big v0  ; another byte order
             v5 = uload8.i32 v0    ; narrow read: never forwarded
             v6 = bitcast.i32 v3
             v7 = bxor v6, v4
             v8 = bxor v7, v5
             v9 = uextend.i64 v8
             v10 = iadd v2, v9
             return v10
         }",
    );
    assert_eq!(stats.loads_forwarded, 0);
    assert_eq!(count(&func, Opcode::Load), 3);
}

#[test]
fn a_call_kills_every_available_store() {
    let (_, _, stats) = forwarded(
        "function %f(i64, i32) -> i32 {
             sig0 = () system_v
             fn0 = %g sig0
         block0(v0: i64, v1: i32):
             store v1, v0
             call fn0()
             v2 = load.i32 v0
             return v2
         }",
    );
    assert_eq!(stats.loads_forwarded, 0);
}

#[test]
fn a_private_slot_lives_in_values_and_its_stores_die() {
    let text = "function %f(i32, i32) -> i32 {
             ss0 = explicit_slot 16, align = 4
         block0(v0: i32, v1: i32):
             v2 = stack_addr.i64 ss0
             store v0, v2
             store v1, v2+4
             v3 = iadd v0, v1
             store v3, v2          ; overwrites the first word
             v4 = load.i32 v2
             v5 = load.i32 v2+4
             v6 = isub v4, v5
             return v6
         }";
    let (original, func, stats) = forwarded(text);
    assert_eq!(stats.loads_forwarded, 2);
    assert_eq!(stats.stores_removed, 3);
    assert_eq!(stats.slots_freed, 1);
    assert_eq!(count(&func, Opcode::Store), 0);
    assert_eq!(count(&func, Opcode::StackAddr), 0);
    same_results(
        &original,
        &func,
        &[[0, 0], [5, 7], [-1, i32::MAX], [i32::MIN, 3]],
    );
}

#[test]
fn a_slot_whose_address_is_passed_to_a_call_keeps_its_stores() {
    let (_, func, stats) = forwarded(
        "function %f(i32) -> i32 {
             ss0 = explicit_slot 8, align = 4
             sig0 = (i64) system_v
             fn0 = %g sig0
         block0(v0: i32):
             v1 = stack_addr.i64 ss0
             store v0, v1
             call fn0(v1)
             v2 = iconst.i32 0
             return v2
         }",
    );
    assert_eq!(stats.stores_removed, 0);
    assert_eq!(stats.slots_freed, 0);
    assert_eq!(count(&func, Opcode::Store), 1);
}

#[test]
fn an_escaping_slot_may_alias_a_pointer() {
    // The slot's address is stored to memory: `v1` may point into it afterwards.
    let (_, func, stats) = forwarded(
        "function %f(i64, i64, i32, i32) -> i32 {
             ss0 = explicit_slot 8, align = 8
         block0(v0: i64, v1: i64, v2: i32, v3: i32):
             v4 = stack_addr.i64 ss0
             store v4, v0
             store v2, v4
             store v3, v1
             v5 = load.i32 v4
             return v5
         }",
    );
    assert_eq!(stats.loads_forwarded, 0);
    assert_eq!(stats.stores_removed, 0);
    assert_eq!(count(&func, Opcode::Store), 3);
}

#[test]
fn a_private_slot_does_not_alias_a_pointer() {
    let (_, func, stats) = forwarded(
        "function %f(i64, i32, i32) -> i32 {
             ss0 = explicit_slot 8, align = 4
         block0(v0: i64, v1: i32, v2: i32):
             v3 = stack_addr.i64 ss0
             store v1, v3
             store v2, v0          ; cannot reach the private slot
             v4 = load.i32 v3
             return v4
         }",
    );
    assert_eq!(stats.loads_forwarded, 1);
    assert_eq!(stats.stores_removed, 1);
    assert_eq!(count(&func, Opcode::Store), 1, "the store through v0 stays");
}

#[test]
fn single_predecessor_chains_forward_and_joins_do_not() {
    let text = "function %f(i32, i32) -> i32 {
             ss0 = explicit_slot 8, align = 4
         block0(v0: i32, v1: i32):
             v2 = stack_addr.i64 ss0
             store v0, v2
             brif v1, block1, block2
         block1:
             v3 = load.i32 v2      ; only predecessor block0: forwarded
             store v3, v2+4
             jump block3
         block2:
             store v1, v2+4
             jump block3
         block3:
             v4 = load.i32 v2+4    ; two predecessors: stays
             return v4
         }";
    let (original, func, stats) = forwarded(text);
    assert_eq!(stats.loads_forwarded, 1);
    assert_eq!(count(&func, Opcode::Load), 1);
    // The slot is still read, so no store may go.
    assert_eq!(stats.stores_removed, 0);
    same_results(&original, &func, &[[0, 0], [5, 7], [-1, 1], [9, 0]]);
}

#[test]
fn a_loop_header_starts_empty() {
    // block1 has two predecessors (entry and the back edge): the store before the loop is
    // not available there, since the loop body overwrote it.
    let text = "function %f(i32) -> i32 {
             ss0 = explicit_slot 4, align = 4
         block0(v0: i32):
             v1 = stack_addr.i64 ss0
             store v0, v1
             jump block1(v0)
         block1(v2: i32):
             v3 = load.i32 v1
             v7 = iconst.i32 1
             v4 = iadd v3, v7
             store v4, v1
             v5 = isub v2, v7
             brif v5, block1(v5), block2
         block2:
             v6 = load.i32 v1
             return v6
         }";
    let (original, func, stats) = forwarded(text);
    assert_eq!(stats.loads_forwarded, 1, "only the exit's load");
    same_results(&original, &func, &[[1], [3], [10]]);
}

#[test]
fn a_slot_address_passed_to_a_block_escapes() {
    // Read through the block parameter, not through `stack_addr`: the slot must count as
    // read, so its store stays.
    let text = "function %f(i32) -> i32 {
             ss0 = explicit_slot 4, align = 4
         block0(v0: i32):
             v1 = stack_addr.i64 ss0
             store v0, v1
             jump block1(v1)
         block1(v2: i64):
             v3 = load.i32 v2
             return v3
         }";
    let (original, func, stats) = forwarded(text);
    assert_eq!(stats.stores_removed, 0);
    assert_eq!(count(&func, Opcode::Store), 1);
    same_results(&original, &func, &[[0], [7], [-3]]);
}
