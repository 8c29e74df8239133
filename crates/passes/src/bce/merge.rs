//! Block-local merging: one check stands in for every check on the same base and bound in a
//! run of checks that share their failure exit.
//!
//! A Java basic block with 16 array reads is, in CLIF, a *chain* of 16 blocks: each ends in a
//! check whose success edge is the only way into the next. Inside a chain we cut *segments*:
//! maximal runs of checks that leave to the same exit with the same arguments and have no side
//! effect between them (no store, call, trap or faulting load). Within a segment it does not
//! matter *which* check fails — every failure takes the same edge and nothing observable
//! happened before it — so the checks of a segment may be replaced by any set of checks that
//! fails exactly when one of them fails.
//!
//! For the checks `sext(base + k) <u bound`, `k ∈ K`, of one segment on the same `base` and
//! `bound`, with `bound ∈ [0, 2^31 + min(kmin, 0)]` known from its definition, each check holds
//! iff `0 <= base + k < bound` in exact integers (a 32-bit wrap-around always fails; that is
//! what the range condition buys). So all of them hold iff
//!
//! ```text
//!     0 <= base + kmin   and   base + kmax < bound
//!     ⟺  sext(base + kmin) <u max(bound - (kmax - kmin), 0)
//! ```
//!
//! which is again one check of the same shape: the first check of the group keeps its branch
//! with index `base + kmin` and the narrowed bound (computed once, next to the bound's
//! definition), and every later check of the group becomes a `jump`. The failure status and
//! the state passed to the exit are those of the original, and a base near `i32::MAX` whose
//! `base + 63` wraps fails the merged check because `base + kmax >= bound` in exact integers.
//!
//! Once the merged check has passed, no `base + k` of the group wraps, so the accesses' indices
//! become `sext(base) + k` with one shared extension: the constant can then fold into each
//! access's address offset (`rewrite::address`), as in a hand-written `[p + 4k]`.

use super::recognize::{BoundsCheck, has_side_effect, predecessor_counts, recognize};
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{Block, BlockArg, Function, Inst, InstBuilder, Value, ValueDef, types};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// What merging did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeOutcome {
    /// Groups of two or more checks replaced by one.
    pub groups_merged: usize,
    /// Checks turned into jumps.
    pub checks_removed: usize,
    /// The jumps that replaced removed checks (candidates for block fusion).
    pub new_jumps: Vec<Inst>,
    /// Comparisons of removed checks, to delete with what only they used.
    pub dead: Vec<Inst>,
    /// The instructions of narrowed bounds and widened bases, placed next to the definition
    /// of the bound or base, in creation order (candidates for [`super::sink`]).
    pub placed: Vec<Inst>,
}

/// Merges the checks of every segment of every check chain in `func`.
pub fn merge_checks(func: &mut Function) -> MergeOutcome {
    let mut out = MergeOutcome::default();
    let mut narrowed: HashMap<(Value, i64), Value> = HashMap::default();
    let mut widened: HashMap<Value, Value> = HashMap::default();
    for chain in check_chains(func) {
        for segment in segments(func, &chain) {
            for group in groups(func, &segment) {
                merge_group(func, &group, &mut narrowed, &mut widened, &mut out);
            }
        }
    }
    out
}

/// Maximal sequences of checks in which each check's success target is the next check's block
/// and has no other predecessor.
pub fn check_chains(func: &Function) -> Vec<Vec<BoundsCheck>> {
    let preds = predecessor_counts(func);
    let checks: HashMap<Block, BoundsCheck> = func
        .layout
        .blocks()
        .filter_map(|b| recognize(func, b).map(|c| (b, c)))
        .collect();
    let continues = |c: &BoundsCheck| -> Option<&BoundsCheck> {
        let next = checks.get(&c.guarded)?;
        let single = preds.get(&c.guarded) == Some(&1);
        let no_params = func.dfg.num_block_params(c.guarded) == 0;
        (single && no_params && c.guarded != c.block).then_some(next)
    };
    let continuation: HashSet<Block> = checks
        .values()
        .filter_map(|c| continues(c).map(|n| n.block))
        .collect();
    let mut chains = Vec::new();
    for block in func.layout.blocks() {
        let Some(first) = checks.get(&block) else {
            continue;
        };
        if continuation.contains(&block) {
            continue;
        }
        let mut chain = vec![first.clone()];
        let mut seen = HashSet::from_iter([block]);
        while let Some(next) = chain.last().and_then(continues) {
            if !seen.insert(next.block) {
                break;
            }
            chain.push(next.clone());
        }
        chains.push(chain);
    }
    chains
}

/// Cuts a chain where the exit changes or a side effect sits between two checks.
fn segments(func: &Function, chain: &[BoundsCheck]) -> Vec<Vec<BoundsCheck>> {
    let mut out: Vec<Vec<BoundsCheck>> = Vec::new();
    for check in chain {
        let same_exit = out
            .last()
            .and_then(|s| s.last())
            .is_some_and(|prev| prev.exit == check.exit && prev.exit_args == check.exit_args);
        let clean = func
            .layout
            .block_insts(check.block)
            .filter(|&i| i != check.branch)
            .all(|i| !has_side_effect(func, i));
        match out.last_mut() {
            Some(seg) if same_exit && clean => seg.push(check.clone()),
            _ => out.push(vec![check.clone()]),
        }
    }
    out
}

/// Groups a segment's checks by (base, bound), keeping those that can be merged exactly.
fn groups(func: &Function, segment: &[BoundsCheck]) -> Vec<Vec<BoundsCheck>> {
    let mut by_key: Vec<((Value, Value), Vec<BoundsCheck>)> = Vec::new();
    for c in segment {
        let key = (c.base, c.bound);
        match by_key.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(c.clone()),
            None => by_key.push((key, vec![c.clone()])),
        }
    }
    by_key
        .into_iter()
        .map(|(_, g)| g)
        .filter(|g| g.len() >= 2 && mergeable(func, g))
        .collect()
}

/// The range condition under which one check is exactly equivalent to the group.
fn mergeable(func: &Function, group: &[BoundsCheck]) -> bool {
    let kmin = group.iter().map(|c| c.offset).min().unwrap_or(0);
    let bound = group[0].bound;
    let defined = matches!(
        func.dfg.value_def(bound),
        ValueDef::Result(..) | ValueDef::Param(..)
    );
    let (lo, hi) = super::recognize::value_range(func, bound);
    defined && lo >= 0 && hi <= (1i128 << 31) + i128::from(kmin.min(0))
}

fn merge_group(
    func: &mut Function,
    group: &[BoundsCheck],
    narrowed: &mut HashMap<(Value, i64), Value>,
    widened: &mut HashMap<Value, Value>,
    out: &mut MergeOutcome,
) {
    let first = &group[0];
    let kmin = group.iter().map(|c| c.offset).min().unwrap_or(0);
    let kmax = group.iter().map(|c| c.offset).max().unwrap_or(0);
    let span = kmax - kmin;
    let bound = if span == 0 {
        first.bound
    } else if let Some(&b) = narrowed.get(&(first.bound, span)) {
        b
    } else {
        let Some(b) = narrow_bound(func, first.bound, span, &mut out.placed) else {
            return;
        };
        narrowed.insert((first.bound, span), b);
        b
    };
    // The merged check gets an index of its own: `sext(base + kmin)` must keep Java's 32-bit
    // wrap-around so that an overflowing base still fails.
    let wide = {
        let mut cur = FuncCursor::new(func).at_inst(first.cmp);
        let idx = if kmin == 0 {
            first.base
        } else {
            let ty = cur.func.dfg.value_type(first.base);
            let k = cur.ins().iconst(ty, kmin);
            cur.ins().iadd(first.base, k)
        };
        cur.ins().sextend(types::I64, idx)
    };
    let old_bound = first.bound;
    for arg in func.dfg.inst_args_mut(first.cmp) {
        if *arg == first.wide {
            *arg = wide;
        } else if *arg == old_bound {
            *arg = bound;
        }
    }
    // Past the merged check no `base + k` of the group wraps, so each access's sign-extended
    // index is `sext(base) + k`: one extension per base, and constants that can fold into the
    // accesses' address offsets.
    if let Some(ext) = widened_base(func, first.base, widened, &mut out.placed) {
        for c in group {
            if let ValueDef::Result(inst, 0) = func.dfg.value_def(c.wide) {
                let k = FuncCursor::new(func)
                    .at_inst(inst)
                    .ins()
                    .iconst(types::I64, c.offset);
                func.replace(inst).iadd(ext, k);
            }
        }
    }
    for c in &group[1..] {
        out.new_jumps.push(replace_with_jump(func, c));
        out.dead.push(c.cmp);
        out.checks_removed += 1;
    }
    out.groups_merged += 1;
}

/// `sextend.i64 base`, inserted once right after `base` is defined.
fn widened_base(
    func: &mut Function,
    base: Value,
    widened: &mut HashMap<Value, Value>,
    placed: &mut Vec<Inst>,
) -> Option<Value> {
    if let Some(&e) = widened.get(&base) {
        return Some(e);
    }
    let mut cur = FuncCursor::new(func);
    match cur.func.dfg.value_def(base) {
        ValueDef::Result(inst, _) => cur.goto_after_inst(inst),
        ValueDef::Param(block, _) => cur.goto_first_insertion_point(block),
        _ => return None,
    }
    let e = cur.ins().sextend(types::I64, base);
    placed.extend(defining_inst(cur.func, e));
    widened.insert(base, e);
    Some(e)
}

/// `max(bound - span, 0)`, inserted right after `bound` is defined.
fn narrow_bound(
    func: &mut Function,
    bound: Value,
    span: i64,
    placed: &mut Vec<Inst>,
) -> Option<Value> {
    let mut cur = FuncCursor::new(func);
    match cur.func.dfg.value_def(bound) {
        ValueDef::Result(inst, _) => cur.goto_after_inst(inst),
        ValueDef::Param(block, _) => cur.goto_first_insertion_point(block),
        _ => return None,
    }
    let ty = cur.func.dfg.value_type(bound);
    let minus = cur.ins().iconst(ty, -span);
    let shrunk = cur.ins().iadd(bound, minus);
    let zero = cur.ins().iconst(ty, 0);
    let narrowed = cur.ins().smax(shrunk, zero);
    let created = [minus, shrunk, zero, narrowed];
    placed.extend(created.iter().filter_map(|&v| defining_inst(cur.func, v)));
    Some(narrowed)
}

/// The instruction that defines `v`, if any.
fn defining_inst(func: &Function, v: Value) -> Option<Inst> {
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, _) => Some(inst),
        _ => None,
    }
}

/// Replaces a check's branch by a jump to its success target; returns the jump.
pub fn replace_with_jump(func: &mut Function, check: &BoundsCheck) -> Inst {
    replace_branch_with_jump(func, check.branch, check.block, check.guarded)
}

/// Replaces `branch`, the terminator of `block`, by a jump to its destination `to` with that
/// edge's arguments; returns the jump.
pub fn replace_branch_with_jump(
    func: &mut Function,
    branch: Inst,
    block: Block,
    to: Block,
) -> Inst {
    let args: Vec<BlockArg> = func.dfg.insts[branch]
        .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
        .iter()
        .find(|call| call.block(&func.dfg.value_lists) == to)
        .map(|call| call.args(&func.dfg.value_lists).collect())
        .unwrap_or_default();
    func.layout.remove_inst(branch);
    FuncCursor::new(func).at_bottom(block).ins().jump(to, &args)
}
