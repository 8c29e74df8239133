//! Masked merges: `(m & x) | (~m & y)` picks bits of `x` where `m` is set and of `y` elsewhere.
//!
//! Written this way the mask feeds two `and`s and an `or`; which rewrite helps depends on which
//! operand arrives last, so the pass asks the latency model:
//!
//! * mask last → `y ^ (m & (x ^ y))` (LLVM's InstCombine knows this form): `x ^ y` is computed
//!   before the mask is ready, leaving two operations after it, and one instruction fewer.
//! * otherwise, if every user adds the result → `(m & x) + (~m & y)`: the two terms never have
//!   a bit in common, so `|` equals `+`, and the early term can join the reassociated sum
//!   (MD5's `G` step loses one operation on its chain this way).
//! * otherwise the merge is left alone.

use super::ready::{Aliases, BlockReadyTimes, LatencyFn, note_ready_with};
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{Function, Inst, InstBuilder, Opcode, Value, ValueDef};

/// What [`masked_merge`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaskedMergeStats {
    /// Merges found.
    pub merges: usize,
    /// Rewritten to `y ^ (m & (x ^ y))` because the mask is ready last.
    pub to_xor_form: usize,
    /// Rewritten to `(m & x) + (~m & y)` because the result feeds additions.
    pub to_disjoint_add: usize,
    /// Instructions that became dead and were removed.
    pub removed: usize,
}

/// A recognised merge: result `= (mask & x) | (~mask & y)`, where `x_term = mask & x`.
struct Merge {
    or: Inst,
    mask: Value,
    x: Value,
    y: Value,
    x_term: Value,
    y_term: Value,
}

/// Rewrites every masked merge in `func` as described in the module docs.
pub fn masked_merge(func: &mut Function, latency: LatencyFn<'_>) -> MaskedMergeStats {
    let mut stats = rewrite_merges(func, latency, Aliases::Resolve);
    stats.removed = super::remove_dead_pure_insts(func);
    stats
}

/// [`masked_merge`] without removing the instructions the rewrites leave dead; operands read
/// as `aliases` says (the rewrites make no alias).
pub(crate) fn rewrite_merges(
    func: &mut Function,
    latency: LatencyFn<'_>,
    aliases: Aliases,
) -> MaskedMergeStats {
    let mut stats = MaskedMergeStats::default();
    let only_added = values_only_added(func, aliases);
    let blocks: Vec<_> = func.layout.blocks().collect();
    let mut ready = BlockReadyTimes::new(func);
    for block in blocks {
        // One forward sweep: every operand's ready time is final when its user is reached.
        ready.next_block();
        let insts: Vec<Inst> = func.layout.block_insts(block).collect();
        for inst in insts {
            if func.dfg.insts[inst].opcode() == Opcode::Bor
                && let Some(merge) = recognise(func, inst, aliases)
            {
                stats.merges += 1;
                let result = func.dfg.first_result(inst);
                if ready[merge.mask] > ready[merge.x].max(ready[merge.y]) {
                    let mut cursor = FuncCursor::new(func).at_inst(inst);
                    let diff = cursor.ins().bxor(merge.x, merge.y);
                    let picked = cursor.ins().band(merge.mask, diff);
                    for new in [diff, picked] {
                        let def = func.dfg.value_def(new).unwrap_inst();
                        note_ready_with(func, def, latency, &mut ready, aliases);
                    }
                    func.replace(merge.or).bxor(merge.y, picked);
                    stats.to_xor_form += 1;
                } else if only_added[result] {
                    func.replace(merge.or).iadd(merge.x_term, merge.y_term);
                    stats.to_disjoint_add += 1;
                }
            }
            note_ready_with(func, inst, latency, &mut ready, aliases);
        }
    }
    stats
}

/// For every value: whether it is used, and only as an operand of integer additions.
fn values_only_added(func: &Function, aliases: Aliases) -> SecondaryMap<Value, bool> {
    // Sized once: every operand is an existing value.
    let values = func.dfg.num_values();
    let sized = || {
        let mut map = SecondaryMap::<Value, bool>::with_capacity(values);
        map.resize(values);
        map
    };
    let (mut used, mut other) = (sized(), sized());
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let is_add = func.dfg.insts[inst].opcode() == Opcode::Iadd;
            crate::bce::recognize::for_each_operand(func, inst, |v| {
                let v = aliases.resolve(func, v);
                used[v] = true;
                other[v] |= !is_add;
            });
        }
    }
    let mut out = sized();
    for (v, &u) in used.iter() {
        out[v] = u && !other[v];
    }
    out
}

fn def_inst(func: &Function, v: Value, op: Opcode, aliases: Aliases) -> Option<Inst> {
    match func.dfg.value_def(aliases.resolve(func, v)) {
        ValueDef::Result(inst, 0) if func.dfg.insts[inst].opcode() == op => Some(inst),
        _ => None,
    }
}

fn args2(func: &Function, inst: Inst, aliases: Aliases) -> (Value, Value) {
    let a = func.dfg.inst_args(inst);
    (aliases.resolve(func, a[0]), aliases.resolve(func, a[1]))
}

/// `v = ~m & y`, spelled `band(bnot m, y)` or `band(y, bnot m)`.
fn inverted_term(func: &Function, v: Value, aliases: Aliases) -> Option<(Value, Value)> {
    let inst = def_inst(func, v, Opcode::Band, aliases)?;
    let (a, b) = args2(func, inst, aliases);
    if let Some(n) = def_inst(func, a, Opcode::Bnot, aliases) {
        return Some((aliases.resolve(func, func.dfg.inst_args(n)[0]), b));
    }
    if let Some(n) = def_inst(func, b, Opcode::Bnot, aliases) {
        return Some((aliases.resolve(func, func.dfg.inst_args(n)[0]), a));
    }
    None
}

fn recognise(func: &Function, or: Inst, aliases: Aliases) -> Option<Merge> {
    let (p, q) = args2(func, or, aliases);
    for (x_term, y_term) in [(p, q), (q, p)] {
        let Some((mask, y)) = inverted_term(func, y_term, aliases) else {
            continue;
        };
        let Some(and) = def_inst(func, x_term, Opcode::Band, aliases) else {
            continue;
        };
        let (a, b) = args2(func, and, aliases);
        let x = if a == mask {
            b
        } else if b == mask {
            a
        } else {
            continue;
        };
        return Some(Merge {
            or,
            mask,
            x,
            y,
            x_term,
            y_term,
        });
    }
    None
}
