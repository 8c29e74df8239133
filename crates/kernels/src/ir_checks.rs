//! Counts over a built function that tests of the kernels and of the passes share.

use cranelift_codegen::ir::{Function, InstructionData, Opcode};

/// Blocks whose conditional branch leaves for the out-of-bounds exit (the last block): one
/// per checked access.
pub fn bounds_checks(func: &Function) -> usize {
    let Some(oob) = func.layout.blocks().last() else {
        return 0;
    };
    func.layout
        .blocks()
        .filter_map(|blk| func.layout.last_inst(blk))
        .filter(|&inst| match &func.dfg.insts[inst] {
            InstructionData::Brif { blocks, .. } => blocks[1].block(&func.dfg.value_lists) == oob,
            _ => false,
        })
        .count()
}

/// How many instructions of `func` have opcode `op`.
pub fn count(func: &Function, op: Opcode) -> usize {
    func.layout
        .blocks()
        .flat_map(|blk| func.layout.block_insts(blk))
        .filter(|&i| func.dfg.insts[i].opcode() == op)
        .count()
}

/// Panics unless Cranelift's verifier accepts `func` (for tests).
#[cfg(test)]
pub(crate) fn assert_verifies(func: &Function) {
    let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
    cranelift_codegen::verify_function(func, &flags).expect("kernel verifies");
}
