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

use super::dag::{Effect, Writes};
use crate::bce::recognize::for_each_operand;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{AliasRegion, Function, Inst, InstructionData, Opcode, Value};

/// What rematerialisation did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RematStats {
    /// Loads that qualified and were replaced by per-use copies.
    pub loads_rematerialized: usize,
    /// Copies inserted (one per using instruction).
    pub copies: usize,
}

/// A load that may be rematerialised if nothing writes its memory: a plain `load` that cannot
/// trap and has one result. Returns its region and `readonly` flag.
fn load_shape(func: &Function, inst: Inst, effect: Effect) -> Option<(Option<AliasRegion>, bool)> {
    if !matches!(func.dfg.insts[inst], InstructionData::Load { .. })
        || func.dfg.inst_results(inst).len() != 1
    {
        return None;
    }
    match effect {
        Effect::Load {
            region,
            readonly,
            traps: false,
        } => Some((region, readonly)),
        _ => None,
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
                for_each_operand(func, inst, |v| {
                    if let Some(list) = self.of_mut(v)
                        && list.last() != Some(&inst)
                    {
                        list.push(inst);
                    }
                });
            }
        }
    }

    /// The index of `v`'s list, if tracked.
    fn slot_of(&self, v: Value) -> Option<usize> {
        self.slot[v].checked_sub(1).map(|s| s as usize)
    }

    fn of(&self, v: Value) -> Option<&[Inst]> {
        Some(&self.lists[self.slot_of(v)?])
    }

    fn of_mut(&mut self, v: Value) -> Option<&mut Vec<Inst>> {
        let slot = self.slot_of(v)?;
        Some(&mut self.lists[slot])
    }
}

/// Rematerialises every qualifying load of `func` (see the module documentation).
pub fn remat_loads(func: &mut Function) -> RematStats {
    // Operands then name values directly, so a use is found by comparing values.
    func.dfg.resolve_all_aliases();
    remat_resolved(func, true, false).0
}

/// Gives every integer constant one copy per using instruction, placed right before it (the
/// original goes away). A constant costs nothing to recompute — an immediate operand on most
/// instructions, one or two moves otherwise — so no schedule should keep one in a register
/// from an early definition to a late use; the driver then places each copy right before its
/// user for every strategy. Returns the copies inserted for constants that had more than one
/// user or a user in another block.
pub fn remat_constants(func: &mut Function) -> usize {
    func.dfg.resolve_all_aliases();
    remat_resolved(func, false, true).1
}

/// [`remat_loads`] (when `loads`) then [`remat_constants`] (when `constants`) on a function
/// whose operands already name values directly (aliases resolved; neither creates an alias).
/// One sweep classifies the instructions and one collects the users of both kinds, so the
/// pair costs about what one of them did alone; the result is exactly the two passes run in
/// turn (the same copies, created in the same order).
pub(crate) fn remat_resolved(
    func: &mut Function,
    loads: bool,
    constants: bool,
) -> (RematStats, usize) {
    let mut writes = Writes::default();
    let mut maybe_loads: Vec<(Inst, Option<AliasRegion>, bool)> = Vec::new();
    let mut constant_insts: Vec<Inst> = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            if constants && func.dfg.insts[inst].opcode() == Opcode::Iconst {
                constant_insts.push(inst);
                continue;
            }
            if !loads {
                continue;
            }
            let effect = Effect::of(func, inst);
            writes.note(effect);
            if let Some((region, readonly)) = load_shape(func, inst, effect) {
                maybe_loads.push((inst, region, readonly));
            }
        }
    }
    let candidates: Vec<Inst> = maybe_loads
        .into_iter()
        .filter(|&(_, region, readonly)| writes.never_written(region, readonly))
        .map(|(inst, _, _)| inst)
        .collect();
    // One user list per candidate load (lists `0..candidates.len()`), then one per constant.
    let mut users = Users::new(func);
    for &inst in candidates.iter().chain(&constant_insts) {
        users.track(func.dfg.first_result(inst));
    }
    if candidates.is_empty() && constant_insts.is_empty() {
        return (RematStats::default(), 0);
    }
    users.collect(func);
    let (stats, constants_stale) = remat_loads_with(func, &candidates, &mut users);
    if constant_insts.is_empty() {
        return (stats, 0);
    }
    if constants_stale {
        // A rematerialised load read a constant: its copies are new users and the original is
        // gone, so the constants' users are collected again from the current layout.
        users = Users::new(func);
        for &inst in &constant_insts {
            users.track(func.dfg.first_result(inst));
        }
        users.collect(func);
    }
    (stats, remat_constants_with(func, &constant_insts, &users))
}

/// Copies each of `candidates` (whose user lists are `users`' first lists) to each of its
/// users. Returns the counts and whether a copied load read a value of a later list (a
/// constant): then those lists no longer match the layout.
fn remat_loads_with(
    func: &mut Function,
    candidates: &[Inst],
    users: &mut Users,
) -> (RematStats, bool) {
    let mut stats = RematStats::default();
    let mut constants_stale = false;
    let mut copy_operands: Vec<Value> = Vec::new();
    for &load in candidates {
        let result = func.dfg.first_result(load);
        let Some(uses) = users.of(result).map(<[Inst]>::to_vec) else {
            continue;
        };
        // Only the candidates' users matter; a copy's own operands are the original's, which
        // are never candidates' results unless the original used one (then the copy joins
        // it). An instruction that reads a value twice is one user.
        copy_operands.clear();
        super::pressure::push_operands(func, load, &mut copy_operands);
        // The original goes away and its copies read what it read.
        constants_stale |= copy_operands.iter().any(|&v| {
            users
                .slot_of(v)
                .is_some_and(|slot| slot >= candidates.len())
        });
        for user in uses {
            let copy = func.dfg.clone_inst(load);
            let copy_result = func.dfg.first_result(copy);
            func.layout.insert_inst(copy, user);
            func.dfg
                .map_inst_values(user, |v| if v == result { copy_result } else { v });
            for &v in &copy_operands {
                if let Some(slot) = users.slot_of(v)
                    && slot < candidates.len()
                {
                    users.lists[slot].push(copy);
                }
            }
            stats.copies += 1;
        }
        func.layout.remove_inst(load);
        stats.loads_rematerialized += 1;
    }
    (stats, constants_stale)
}

/// Copies each of `constants` to each of its users (`users` holds their lists).
fn remat_constants_with(func: &mut Function, constants: &[Inst], users: &Users) -> usize {
    let mut copies = 0;
    for &constant in constants {
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
