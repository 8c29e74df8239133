//! Block fusion: a block that ends in `jump` to a block with no other predecessor absorbs it.
//!
//! Removing a check leaves `jump next` where the check's branch was. Fusing along those jumps
//! turns the 16 one-read blocks of an MD5 block into one basic block with 16 loads and 64
//! steps, which is the unit an in-block scheduler can reorder. Only the jumps the pass created
//! are followed, so a function the pass did not otherwise change keeps its block structure.

use super::recognize::predecessor_counts;
use cranelift_codegen::ir::{BlockArg, Function, Inst, InstructionData};
use rustc_hash::FxHashSet as HashSet;

/// Fuses the target of each jump in `jumps` into the jump's block where that target has no
/// other predecessor. Returns the number of blocks removed.
pub fn fuse_jumps(func: &mut Function, jumps: &[Inst]) -> usize {
    if jumps.is_empty() {
        return 0;
    }
    let preds = predecessor_counts(func);
    let entry = func.layout.entry_block();
    let mut fused = 0;
    // Later jumps may move into earlier blocks as those absorb their targets; look the block up
    // each time instead of remembering it.
    let wanted: HashSet<Inst> = jumps.iter().copied().collect();
    // Only a block's last instruction can be fused along (checked again below), so the
    // terminators are all that needs looking up.
    let order: Vec<Inst> = func
        .layout
        .blocks()
        .filter_map(|b| func.layout.last_inst(b))
        .filter(|i| wanted.contains(i))
        .collect();
    for jump in order {
        let Some(block) = func.layout.inst_block(jump) else {
            continue;
        };
        if func.layout.last_inst(block) != Some(jump) {
            continue;
        }
        let InstructionData::Jump { destination, .. } = func.dfg.insts[jump] else {
            continue;
        };
        let target = destination.block(&func.dfg.value_lists);
        if target == block || Some(target) == entry || preds.get(&target) != Some(&1) {
            continue;
        }
        let args: Option<Vec<_>> = destination
            .args(&func.dfg.value_lists)
            .map(|a| match a {
                BlockArg::Value(v) => Some(v),
                _ => None,
            })
            .collect();
        let Some(args) = args else {
            continue;
        };
        let params = func.dfg.block_params(target).to_vec();
        func.dfg.detach_block_params(target);
        for (param, arg) in params.into_iter().zip(args) {
            func.dfg.change_to_alias(param, arg);
        }
        func.layout.remove_inst(jump);
        let moved: Vec<Inst> = func.layout.block_insts(target).collect();
        for inst in moved {
            func.layout.remove_inst(inst);
            func.layout.append_inst(inst, block);
        }
        func.layout.remove_block(target);
        fused += 1;
    }
    fused
}
