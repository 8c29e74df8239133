//! Slow-path outlining (predication in place, the failing test calling the slow path) on the
//! kernels: what it removes, what it refuses. Executing the
//! outlined code is tested where there is a JIT (`schedlab-digests`'s guard-page tests run the
//! lazily compiled slow path against the Java model).

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{Function, InstBuilder, MemFlagsData, Opcode, types};
use cranelift_codegen::isa::CallConv;
use schedlab_passes::bce::{self, BceLevel};
use schedlab_passes::deopt::{DeoptError, SlowPathCall, check_restartable};

mod common;
use common::{count, verify};

const CALL: SlowPathCall = SlowPathCall {
    callee: 0x1000_2000,
    context: 0x3000_4000,
    call_conv: CallConv::SystemV,
};

fn insts(func: &Function) -> usize {
    func.layout
        .blocks()
        .map(|b| func.layout.block_insts(b).count())
        .sum()
}

/// BCE with predication, with or without the slow-path call.
fn predicated(mut f: Function, slow: Option<&SlowPathCall>) -> (Function, bce::BceStats) {
    let stats = bce::run(
        &mut f,
        bce::BceOptions {
            slow_path: slow,
            ..BceLevel::Predicate.into()
        },
    )
    .expect("bce");
    verify(&f);
    (f, stats)
}

#[test]
fn md5_keeps_only_the_fast_loop_and_one_call() {
    let kernel = schedlab_kernels::md5::compress_multi_block;
    let (copied, copied_stats) = predicated(kernel(), None);
    let (f, stats) = predicated(kernel(), Some(&CALL));
    assert_eq!(copied_stats.versioned.len(), 1);
    assert!(copied_stats.versioned[0].checked_header.is_some());
    assert!(
        bce::count_checks(&copied) > 0,
        "the copy keeps the checked loop"
    );

    assert_eq!(stats.versioned.len(), 1);
    assert_eq!(stats.versioned[0].checked_header, None);
    assert_eq!(stats.checks_per_block, 0);
    assert_eq!(bce::count_checks(&f), 0, "no bounds check is left");
    assert_eq!(count(&f, Opcode::CallIndirect), 1);
    assert!(stats.blocks_removed >= 1, "the out-of-bounds exit is gone");
    // The call passes the context and the function's own arguments, in order.
    let text = f.display().to_string();
    let call = text
        .lines()
        .find(|l| l.contains("call_indirect"))
        .expect("one call");
    // `vC = iconst 0x3000_4000` (context) comes first, then `vF = iconst 0x1000_2000`.
    let constant = |hex: &str| {
        text.lines()
            .find(|l| l.trim_end().ends_with(&format!("iconst.i64 {hex}")))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("no iconst {hex}:\n{text}"))
            .to_string()
    };
    let (context, callee) = (constant("0x3000_4000"), constant("0x1000_2000"));
    assert!(
        call.contains(&format!(
            "call_indirect sig0, {callee}({context}, v0, v1, v2, v3, v4)"
        )),
        "{call}"
    );
    // Without the checked copy the function is about half as long.
    assert!(
        insts(&f) * 10 < insts(&copied) * 7,
        "{} vs {}",
        insts(&f),
        insts(&copied)
    );
}

#[test]
fn int_sum_outlines_too() {
    let (f, stats) = predicated(schedlab_kernels::int_sum::multi_block(), Some(&CALL));
    assert_eq!(stats.versioned.len(), 1);
    assert_eq!(stats.versioned[0].checked_header, None);
    assert_eq!(bce::count_checks(&f), 0);
    assert_eq!(count(&f, Opcode::CallIndirect), 1);
}

#[test]
fn without_predication_nothing_is_outlined() {
    let kernel = schedlab_kernels::md5::compress_multi_block;
    let mut plain = kernel();
    bce::run(&mut plain, BceLevel::Merge).expect("bce");
    let mut f = kernel();
    let stats = bce::run(
        &mut f,
        bce::BceOptions {
            slow_path: Some(&CALL),
            ..BceLevel::Merge.into()
        },
    )
    .expect("bce");
    assert!(stats.versioned.is_empty());
    assert_eq!(f.display().to_string(), plain.display().to_string());
}

#[test]
fn a_store_before_the_loop_keeps_the_checked_copy() {
    // A store in the entry block: a restart from the entry would repeat it.
    let mut f = schedlab_kernels::md5::compress_multi_block();
    let entry = f.layout.entry_block().expect("entry");
    let state = f.dfg.block_params(entry)[0];
    let terminator = f.layout.last_inst(entry).expect("terminated");
    assert_eq!(check_restartable(&f, terminator), Ok(()));
    let mut cur = FuncCursor::new(&mut f).at_inst(terminator);
    let zero = cur.ins().iconst(types::I32, 0);
    cur.ins().store(MemFlagsData::trusted(), zero, state, 0);
    verify(&f);
    match check_restartable(&f, terminator) {
        Err(DeoptError::SideEffect(inst)) => assert!(inst.contains("store"), "{inst}"),
        other => panic!("expected a side-effect refusal, got {other:?}"),
    }
    let (copied, _) = predicated(f.clone(), None);
    let (g, stats) = predicated(f, Some(&CALL));
    assert!(stats.versioned[0].checked_header.is_some());
    assert_eq!(g.display().to_string(), copied.display().to_string());
}
