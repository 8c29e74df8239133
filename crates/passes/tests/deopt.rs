//! Slow-path outlining on the kernels: what it removes, what it refuses. Executing the
//! outlined code is tested where there is a JIT (`schedlab-md5`'s guard-page tests run the
//! lazily compiled slow path against the Java model).

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{Function, InstBuilder, MemFlagsData, Opcode, types};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::settings;
use schedlab_passes::bce::{self, BceLevel};
use schedlab_passes::deopt::{DeoptError, SlowPathCall, outline_checked_loops};

const CALL: SlowPathCall = SlowPathCall {
    callee: 0x1000_2000,
    context: 0x3000_4000,
    call_conv: CallConv::SystemV,
};

fn verify(func: &Function) {
    let flags = settings::Flags::new(settings::builder());
    cranelift_codegen::verify_function(func, &flags)
        .unwrap_or_else(|e| panic!("verifier: {e}\n{}", func.display()));
}

fn count(func: &Function, opcode: Opcode) -> usize {
    func.layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .filter(|&i| func.dfg.insts[i].opcode() == opcode)
        .count()
}

fn insts(func: &Function) -> usize {
    func.layout
        .blocks()
        .map(|b| func.layout.block_insts(b).count())
        .sum()
}

#[test]
fn md5_keeps_only_the_fast_loop_and_one_call() {
    let mut f = schedlab_kernels::md5::compress_multi_block();
    let bce_stats = bce::run(&mut f, BceLevel::Predicate).expect("bce");
    assert_eq!(bce_stats.versioned.len(), 1);
    assert!(bce::count_checks(&f) > 0, "the checked loop is still there");
    let (before_insts, before_blocks) = (insts(&f), f.layout.blocks().count());

    let stats = outline_checked_loops(&mut f, &bce_stats.versioned, &CALL).expect("outlines");
    verify(&f);
    assert_eq!(stats.loops_outlined, 1);
    assert_eq!(bce::count_checks(&f), 0, "no bounds check is left");
    assert_eq!(count(&f, Opcode::CallIndirect), 1);
    assert!(
        !f.layout
            .is_block_inserted(bce_stats.versioned[0].checked_header)
    );
    assert!(
        f.layout
            .is_block_inserted(bce_stats.versioned[0].fast_header)
    );
    assert_eq!(
        f.layout.blocks().count(),
        before_blocks - stats.blocks_removed + 1
    );
    // The new block: two constants, the call and the return.
    assert_eq!(insts(&f), before_insts - stats.insts_removed + 4);
    // The call passes the context and the function's own arguments, in order.
    let text = f.display().to_string();
    assert!(
        text.contains("call_indirect sig0, v1598(v1597, v0, v1, v2, v3, v4)")
            && text.contains("v1597 = iconst.i64 0x3000_4000")
            && text.contains("v1598 = iconst.i64 0x1000_2000"),
        "{text}"
    );
    // Half the function went away with the checked loop (+ its 16 loads' checks).
    assert!(stats.insts_removed * 5 > before_insts * 2, "{stats:?}");
}

#[test]
fn int_sum_outlines_too() {
    let mut f = schedlab_kernels::int_sum::multi_block();
    let bce_stats = bce::run(&mut f, BceLevel::Predicate).expect("bce");
    let stats = outline_checked_loops(&mut f, &bce_stats.versioned, &CALL).expect("outlines");
    verify(&f);
    assert_eq!(stats.loops_outlined, bce_stats.versioned.len());
    assert_eq!(bce::count_checks(&f), 0);
}

#[test]
fn nothing_versioned_is_an_error() {
    let mut f = schedlab_kernels::md5::compress_multi_block();
    let bce_stats = bce::run(&mut f, BceLevel::Merge).expect("bce");
    let before = f.display().to_string();
    assert_eq!(
        outline_checked_loops(&mut f, &bce_stats.versioned, &CALL),
        Err(DeoptError::NothingVersioned)
    );
    assert_eq!(f.display().to_string(), before);
}

#[test]
fn a_store_before_the_guard_forbids_restarting_and_changes_nothing() {
    let mut f = schedlab_kernels::md5::compress_multi_block();
    let bce_stats = bce::run(&mut f, BceLevel::Predicate).expect("bce");
    // A store in the entry block: a restart from the entry would repeat it.
    let entry = f.layout.entry_block().expect("entry");
    let state = f.dfg.block_params(entry)[0];
    let terminator = f.layout.last_inst(entry).expect("terminated");
    let mut cur = FuncCursor::new(&mut f).at_inst(terminator);
    let zero = cur.ins().iconst(types::I32, 0);
    cur.ins().store(MemFlagsData::trusted(), zero, state, 0);
    verify(&f);
    let before = f.display().to_string();
    match outline_checked_loops(&mut f, &bce_stats.versioned, &CALL) {
        Err(DeoptError::SideEffect(inst)) => assert!(inst.contains("store"), "{inst}"),
        other => panic!("expected a side-effect refusal, got {other:?}"),
    }
    assert_eq!(f.display().to_string(), before);
}
