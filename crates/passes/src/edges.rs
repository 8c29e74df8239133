//! Editing the edges of a branch: where they go and the arguments they pass.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    Block, BlockCall, Function, Inst, InstructionData, Value, ValueListPool, types,
};

/// A `brif`'s condition and its two edges (taken when the condition is non-zero, then when
/// it is zero); `None` when `inst` is not a `brif`.
pub(crate) fn brif(func: &Function, inst: Inst) -> Option<(Value, [BlockCall; 2])> {
    match func.dfg.insts[inst] {
        InstructionData::Brif { arg, blocks, .. } => Some((arg, blocks)),
        _ => None,
    }
}

/// Applies `edit` to each edge of `branch` to `to` (a branch may reach a block by several).
fn edit_edges_to(
    func: &mut Function,
    branch: Inst,
    to: Block,
    mut edit: impl FnMut(&mut BlockCall, &mut ValueListPool),
) {
    let dfg = &mut func.dfg;
    for call in
        dfg.insts[branch].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
    {
        if call.block(&dfg.value_lists) == to {
            edit(call, &mut dfg.value_lists);
        }
    }
}

/// Points `branch`'s edge to `from` at `to` instead.
pub(crate) fn retarget(func: &mut Function, branch: Inst, from: Block, to: Block) {
    edit_edges_to(func, branch, from, |call, pool| call.set_block(to, pool));
}

/// Appends `arg` to `branch`'s edge to `to`.
pub(crate) fn append_edge_arg(func: &mut Function, branch: Inst, to: Block, arg: Value) {
    edit_edges_to(func, branch, to, |call, pool| {
        call.append_argument(arg, pool)
    });
}

/// Removes argument `index` from `branch`'s edges to `to`.
pub(crate) fn remove_edge_arg(func: &mut Function, branch: Inst, to: Block, index: usize) {
    edit_edges_to(func, branch, to, |call, pool| call.remove(index, pool));
}

/// Whether `branch` is a `brif` on a signed ordered comparison of 32-bit values: the only
/// branches `iv`'s guard removal can decide and the only loop tests `bce`'s predication
/// accepts (either way round).
pub(crate) fn brif_on_signed_i32_compare(func: &Function, branch: Inst) -> bool {
    let dfg = &func.dfg;
    let Some((arg, _)) = brif(func, branch) else {
        return false;
    };
    let Some(cmp) = dfg.value_def(dfg.resolve_aliases(arg)).inst() else {
        return false;
    };
    let InstructionData::IntCompare { cond, args, .. } = dfg.insts[cmp] else {
        return false;
    };
    dfg.value_type(args[0]) == types::I32
        && matches!(
            cond,
            IntCC::SignedGreaterThan
                | IntCC::SignedLessThanOrEqual
                | IntCC::SignedLessThan
                | IntCC::SignedGreaterThanOrEqual
        )
}

/// Whether some block of `func` ends in a [`brif_on_signed_i32_compare`]: without one, the
/// passes that act only on such branches need no control-flow analyses.
pub(crate) fn any_brif_on_signed_i32_compare(func: &Function) -> bool {
    func.layout
        .blocks()
        .filter_map(|b| func.layout.last_inst(b))
        .any(|branch| brif_on_signed_i32_compare(func, branch))
}
