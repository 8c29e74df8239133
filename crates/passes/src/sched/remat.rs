//! Load rematerialisation: a load of memory the function never writes is copied right before
//! each instruction that uses it, and the original goes away.
//!
//! On x86_64 a load with a single user in the same block folds into that user as a memory
//! operand (`add reg, [mem]`), which is what the hand-written MD5 intrinsic does for its 64
//! message-word additions; on every target it ends the value's live range at its use.
//!
//! A load qualifies when it cannot trap (`notrap`: its location is already known to be
//! accessible) and its memory is never written while the function runs: the load is
//! `readonly`, or it has an alias region that no store, call, fence or atomic in the function
//! may write. A copy is placed right before a user, which its original dominates (SSA), so the
//! copy is as safe as the original and reads the same bytes.

use super::dag::Effect;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{AliasRegion, Function, Inst, InstructionData, Opcode, Value};
use rustc_hash::FxHashSet as HashSet;

/// What rematerialisation did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RematStats {
    /// Loads that qualified and were replaced by per-use copies.
    pub loads_rematerialized: usize,
    /// Copies inserted (one per using instruction).
    pub copies: usize,
}

/// Which memory the function may write.
struct Writes {
    everything: bool,
    regions: HashSet<AliasRegion>,
}

fn writes(func: &Function) -> Writes {
    let mut w = Writes {
        everything: false,
        regions: HashSet::default(),
    };
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            match Effect::of(func, inst) {
                Effect::Barrier => w.everything = true,
                Effect::Store { region: None, .. } => w.everything = true,
                Effect::Store {
                    region: Some(r), ..
                } => {
                    w.regions.insert(r);
                }
                _ => {}
            }
        }
    }
    w
}

/// Whether `inst` is a load that may be rematerialised in `func`.
fn qualifies(func: &Function, w: &Writes, inst: Inst) -> bool {
    if !matches!(func.dfg.insts[inst], InstructionData::Load { .. }) {
        return false;
    }
    match Effect::of(func, inst) {
        Effect::Load {
            region,
            readonly,
            traps: false,
        } => readonly || region.is_some_and(|r| !w.everything && !w.regions.contains(&r)),
        _ => false,
    }
}

/// The using instructions of a chosen set of values, dense by value number.
struct Users {
    /// Per value: 1 + its index in `lists`, or 0 when the value is not tracked.
    slot: SecondaryMap<Value, u32>,
    lists: Vec<Vec<Inst>>,
}

impl Users {
    fn new(func: &Function) -> Self {
        let mut slot = SecondaryMap::with_capacity(func.dfg.num_values());
        slot.resize(func.dfg.num_values());
        Users {
            slot,
            lists: Vec::new(),
        }
    }

    /// Starts tracking the users of `v`.
    fn track(&mut self, v: Value) {
        self.lists.push(Vec::new());
        self.slot[v] = self.lists.len() as u32;
    }

    /// Records every instruction of the layout that reads a tracked value, once per value,
    /// in layout order (operands name values directly: aliases are resolved).
    fn collect(&mut self, func: &Function) {
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                for v in func.dfg.inst_values(inst) {
                    if let Some(list) = self.of_mut(v)
                        && list.last() != Some(&inst)
                    {
                        list.push(inst);
                    }
                }
            }
        }
    }

    fn of(&self, v: Value) -> Option<&[Inst]> {
        let slot = self.slot[v].checked_sub(1)?;
        Some(&self.lists[slot as usize])
    }

    fn of_mut(&mut self, v: Value) -> Option<&mut Vec<Inst>> {
        let slot = self.slot[v].checked_sub(1)?;
        Some(&mut self.lists[slot as usize])
    }
}

/// Rematerialises every qualifying load of `func` (see the module documentation).
pub fn remat_loads(func: &mut Function) -> RematStats {
    // Operands then name values directly, so a use is found by comparing values.
    func.dfg.resolve_all_aliases();
    remat_loads_resolved(func)
}

/// [`remat_loads`] on a function whose operands already name values directly (aliases
/// resolved; rematerialisation creates no alias, so [`remat_constants_resolved`] may follow).
pub(crate) fn remat_loads_resolved(func: &mut Function) -> RematStats {
    let w = writes(func);
    let mut candidates = Vec::new();
    let mut users = Users::new(func);
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            if qualifies(func, &w, inst) && func.dfg.inst_results(inst).len() == 1 {
                candidates.push(inst);
                users.track(func.dfg.first_result(inst));
            }
        }
    }
    // Only the candidates' users matter; a copy's own operands are the original's, which
    // are never candidates' results unless the original used one (then the copy joins it).
    // Aliases are resolved: operands name values directly. An instruction that reads a
    // value twice is one user.
    users.collect(func);
    let mut stats = RematStats::default();
    for load in candidates {
        let result = func.dfg.first_result(load);
        let Some(uses) = users.of(result).map(<[Inst]>::to_vec) else {
            continue;
        };
        for user in uses {
            let copy = func.dfg.clone_inst(load);
            let copy_result = func.dfg.first_result(copy);
            func.layout.insert_inst(copy, user);
            func.dfg
                .map_inst_values(user, |v| if v == result { copy_result } else { v });
            for v in super::pressure::operands(func, copy) {
                if let Some(list) = users.of_mut(v) {
                    list.push(copy);
                }
            }
            stats.copies += 1;
        }
        func.layout.remove_inst(load);
        stats.loads_rematerialized += 1;
    }
    stats
}

/// Gives every integer constant one copy per using instruction, placed right before it (the
/// original goes away). A constant costs nothing to recompute — an immediate operand on most
/// instructions, one or two moves otherwise — so no schedule should keep one in a register
/// from an early definition to a late use; the driver then places each copy right before its
/// user for every strategy. Returns the copies inserted for constants that had more than one
/// user or a user in another block.
pub fn remat_constants(func: &mut Function) -> usize {
    func.dfg.resolve_all_aliases();
    remat_constants_resolved(func)
}

/// [`remat_constants`] on a function whose operands already name values directly.
pub(crate) fn remat_constants_resolved(func: &mut Function) -> usize {
    let mut users = Users::new(func);
    let mut constants = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            if func.dfg.insts[inst].opcode() == Opcode::Iconst {
                constants.push(inst);
                users.track(func.dfg.first_result(inst));
            }
        }
    }
    if constants.is_empty() {
        return 0;
    }
    users.collect(func);
    let mut copies = 0;
    for constant in constants {
        let result = func.dfg.first_result(constant);
        let uses = users.of(result).unwrap_or_default();
        let home = func.layout.inst_block(constant);
        let local = uses.len() == 1 && func.layout.inst_block(uses[0]) == home;
        if uses.is_empty() || local {
            continue;
        }
        for &user in uses {
            let copy = func.dfg.clone_inst(constant);
            let copy_result = func.dfg.first_result(copy);
            func.layout.insert_inst(copy, user);
            func.dfg
                .map_inst_values(user, |v| if v == result { copy_result } else { v });
            copies += 1;
        }
        func.layout.remove_inst(constant);
    }
    copies
}
