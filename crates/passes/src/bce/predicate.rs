//! Loop predication with versioning: test once before a counted loop that none of its checks
//! can fail, and run a copy of the loop without them when that holds.
//!
//! The loop must have one entry edge and one back edge, a header that leaves when
//! `iv <= limit` (or `iv < limit`) fails, a loop-invariant `limit`, and an induction variable
//! that the back edge advances by a positive constant `s`. For the checks inside the loop on
//! `iv + k` (the base resolved through block parameters that only ever receive `iv`) against a
//! loop-invariant `bound` with `bound <= 2^31`, every iteration's check holds when
//!
//! ```text
//!     o0 + kmin >= 0           the first iteration's lowest index is not negative
//!     last + kmax < bound      last = limit (or limit - 1 for `<`): the highest index fits
//!     last + s <= i32::MAX     the induction variable never wraps, so iv ∈ [o0, last]
//! ```
//!
//! all evaluated in 64-bit arithmetic, so nothing in the test itself can overflow. A new
//! preheader evaluates the conjunction and branches to a copy of the loop whose covered checks
//! are jumps, or to the original loop. Any input that fails the test runs the original, so the
//! result — including the failure status and the state committed by the iterations before the
//! failing one — is the original's by construction; when the loop runs zero times both copies
//! leave at once with the same arguments.

use super::merge::replace_with_jump;
use super::recognize::{
    BoundsCheck, predecessor_counts, recognize, remove_if_dead, split_constant, value_range,
};
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Block, BlockArg, Function, Inst, InstBuilder, InstructionData, Opcode, Value, ValueDef,
    condcodes::{CondCode, IntCC},
    types,
};
use cranelift_codegen::loop_analysis::LoopAnalysis;
use std::collections::{HashMap, HashSet};

/// What predication did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PredicateOutcome {
    /// Loops that got a check-free copy behind a preheader test.
    pub loops_versioned: usize,
    /// Checks left out of the check-free copies.
    pub checks_removed: usize,
    /// Original loop header → header of its check-free copy.
    pub fast_headers: HashMap<Block, Block>,
    /// The jumps that replaced removed checks (candidates for block fusion).
    pub new_jumps: Vec<Inst>,
}

/// A loop that can be versioned, with everything the rewrite needs.
struct Plan {
    header: Block,
    blocks: Vec<Block>,
    /// The one branch that enters the loop from outside.
    entry_branch: Inst,
    iv_index: usize,
    limit: Value,
    /// 1 for `iv < limit`, 0 for `iv <= limit`.
    strict: i64,
    step: i64,
    /// Per bound: (bound, kmin, kmax).
    bounds: Vec<(Value, i64, i64)>,
    /// The checks the fast copy drops, by block.
    covered: Vec<Block>,
}

/// Versions every innermost loop of `func` whose checks can be predicated.
pub fn predicate_loops(func: &mut Function) -> PredicateOutcome {
    let mut out = PredicateOutcome::default();
    let mut done: HashSet<Block> = HashSet::new();
    loop {
        let cfg = ControlFlowGraph::with_function(func);
        let domtree = DominatorTree::with_function(func, &cfg);
        let mut loops = LoopAnalysis::new();
        loops.compute(func, &cfg, &domtree);
        let parents: HashSet<_> = loops.loops().filter_map(|l| loops.loop_parent(l)).collect();
        let next = loops
            .loops()
            .filter(|l| !parents.contains(l))
            .map(|l| (l, loops.loop_header(l)))
            .find(|(_, h)| !done.contains(h));
        let Some((lp, header)) = next else {
            break;
        };
        done.insert(header);
        let blocks: Vec<Block> = func
            .layout
            .blocks()
            .filter(|&b| loops.is_in_loop(b, lp))
            .collect();
        if let Some(plan) = analyze(func, &cfg, &domtree, header, blocks) {
            let fast = version(func, &plan, &mut out);
            done.insert(fast);
            out.fast_headers.insert(header, fast);
        }
    }
    out
}

fn analyze(
    func: &Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
    header: Block,
    blocks: Vec<Block>,
) -> Option<Plan> {
    let dfg = &func.dfg;
    let in_loop: HashSet<Block> = blocks.iter().copied().collect();
    let defined_in_loop = |v: Value| match dfg.value_def(dfg.resolve_aliases(v)) {
        ValueDef::Result(i, _) => func
            .layout
            .inst_block(i)
            .is_some_and(|b| in_loop.contains(&b)),
        ValueDef::Param(b, _) => in_loop.contains(&b),
        _ => true,
    };

    // Nothing we cannot clone faithfully.
    for &b in &blocks {
        for i in func.layout.block_insts(b) {
            let data = &dfg.insts[i];
            if data.opcode() == Opcode::BrTable || data.exception_table().is_some() {
                return None;
            }
        }
    }
    // Exactly one edge in from outside and one back edge.
    if predecessor_counts(func).get(&header) != Some(&2) {
        return None;
    }
    let (mut entry, mut latch) = (None, None);
    for pred in cfg.pred_iter(header) {
        if in_loop.contains(&pred.block) {
            latch = Some(pred.inst);
        } else {
            entry = Some(pred.inst);
        }
    }
    let (entry_branch, latch_branch) = (entry?, latch?);

    // Header: `brif (icmp cc iv, limit), stay, leave`.
    let term = func.layout.last_inst(header)?;
    let InstructionData::Brif {
        arg,
        blocks: [then_call, else_call],
        ..
    } = dfg.insts[term]
    else {
        return None;
    };
    let then_in = in_loop.contains(&then_call.block(&dfg.value_lists));
    let else_in = in_loop.contains(&else_call.block(&dfg.value_lists));
    if then_in == else_in {
        return None;
    }
    let cmp = dfg.value_def(dfg.resolve_aliases(arg)).inst()?;
    let InstructionData::IntCompare { cond, args, .. } = dfg.insts[cmp] else {
        return None;
    };
    let cond = if then_in { cond } else { cond.complement() };
    let params = dfg.block_params(header);
    let [a, b] = args.map(|v| dfg.resolve_aliases(v));
    let (cond, iv, limit) = if params.contains(&a) {
        (cond, a, b)
    } else if params.contains(&b) {
        (cond.swap_args(), b, a)
    } else {
        return None;
    };
    let strict = match cond {
        IntCC::SignedLessThanOrEqual => 0,
        IntCC::SignedLessThan => 1,
        _ => return None,
    };
    if dfg.value_type(iv) != types::I32 || dfg.value_type(limit) != types::I32 {
        return None;
    }
    let iv_index = params.iter().position(|&p| p == iv)?;
    if defined_in_loop(limit) {
        return None;
    }

    // The back edge advances iv by a positive constant.
    let latch_args = edge_args(func, latch_branch, header)?;
    let (from, step) = split_constant(func, *latch_args.get(iv_index)?);
    if resolve_copy(func, cfg, from, 32) != iv || step <= 0 {
        return None;
    }

    // Checks on iv + k against loop-invariant bounds.
    let mut bounds: Vec<(Value, i64, i64)> = Vec::new();
    let mut covered = Vec::new();
    for &blk in &blocks {
        let Some(check) = recognize(func, blk) else {
            continue;
        };
        if resolve_copy(func, cfg, check.base, 32) != iv
            || defined_in_loop(check.bound)
            || value_range(func, check.bound).1 > 1i128 << 31
        {
            continue;
        }
        match bounds.iter_mut().find(|(bd, _, _)| *bd == check.bound) {
            Some((_, lo, hi)) => {
                *lo = (*lo).min(check.offset);
                *hi = (*hi).max(check.offset);
            }
            None => bounds.push((check.bound, check.offset, check.offset)),
        }
        covered.push(blk);
    }
    if covered.is_empty() {
        return None;
    }

    // The preheader test reads limit and the bounds: they must be available on the entry edge.
    let available = |v: Value| match dfg.value_def(dfg.resolve_aliases(v)) {
        ValueDef::Result(i, _) => {
            func.layout.inst_block(i).is_some() && domtree.dominates(i, entry_branch, &func.layout)
        }
        ValueDef::Param(b, _) => domtree.dominates(b, entry_branch, &func.layout),
        _ => false,
    };
    if !available(limit) || !bounds.iter().all(|&(bd, _, _)| available(bd)) {
        return None;
    }

    // Values of the loop used outside it would need a merge of both copies: not handled.
    for blk in func.layout.blocks().filter(|b| !in_loop.contains(b)) {
        for i in func.layout.block_insts(blk) {
            if dfg.inst_values(i).any(defined_in_loop) {
                return None;
            }
        }
    }

    Some(Plan {
        header,
        blocks,
        entry_branch,
        iv_index,
        limit,
        strict,
        step,
        bounds,
        covered,
    })
}

/// The value arguments `branch` passes to `to`.
fn edge_args(func: &Function, branch: Inst, to: Block) -> Option<Vec<Value>> {
    let dfg = &func.dfg;
    let call = dfg.insts[branch]
        .branch_destination(&dfg.jump_tables, &dfg.exception_tables)
        .iter()
        .find(|c| c.block(&dfg.value_lists) == to)?;
    call.args(&dfg.value_lists)
        .map(|a| match a {
            BlockArg::Value(v) => Some(dfg.resolve_aliases(v)),
            _ => None,
        })
        .collect()
}

/// Follows block parameters that receive the same value on every incoming edge.
fn resolve_copy(func: &Function, cfg: &ControlFlowGraph, v: Value, fuel: u32) -> Value {
    let dfg = &func.dfg;
    let v = dfg.resolve_aliases(v);
    let ValueDef::Param(block, index) = dfg.value_def(v) else {
        return v;
    };
    if fuel == 0 || Some(block) == func.layout.entry_block() {
        return v;
    }
    let mut incoming = None;
    for pred in cfg.pred_iter(block) {
        let Some(args) = edge_args(func, pred.inst, block) else {
            return v;
        };
        let Some(&arg) = args.get(index) else {
            return v;
        };
        match incoming {
            None => incoming = Some(arg),
            Some(prev) if prev == arg => {}
            Some(_) => return v,
        }
    }
    match incoming {
        Some(w) if w != v => resolve_copy(func, cfg, w, fuel - 1),
        _ => v,
    }
}

/// Builds the preheader test and the check-free copy; returns the copy's header.
fn version(func: &mut Function, plan: &Plan, out: &mut PredicateOutcome) -> Block {
    // The new preheader takes over the entry edge.
    let guard = func.dfg.make_block();
    let types: Vec<_> = func.dfg.block_param_types(plan.header).collect();
    for ty in &types {
        func.dfg.append_block_param(guard, *ty);
    }
    func.layout.insert_block(guard, plan.header);
    retarget(func, plan.entry_branch, plan.header, guard);

    // Clone the loop between the preheader and the original loop.
    let mut block_map: HashMap<Block, Block> = HashMap::new();
    let mut value_map: HashMap<Value, Value> = HashMap::new();
    let mut new_insts = Vec::new();
    for &b in &plan.blocks {
        let nb = func.dfg.make_block();
        func.layout.insert_block(nb, plan.header);
        block_map.insert(b, nb);
        for p in func.dfg.block_params(b).to_vec() {
            let ty = func.dfg.value_type(p);
            let np = func.dfg.append_block_param(nb, ty);
            value_map.insert(p, np);
        }
        let insts: Vec<Inst> = func.layout.block_insts(b).collect();
        for i in insts {
            let ni = func.dfg.clone_inst(i);
            func.layout.append_inst(ni, nb);
            let old = func.dfg.inst_results(i).to_vec();
            let new = func.dfg.inst_results(ni).to_vec();
            value_map.extend(old.into_iter().zip(new));
            new_insts.push(ni);
        }
    }
    for &ni in &new_insts {
        func.dfg
            .map_inst_values(ni, |v| value_map.get(&v).copied().unwrap_or(v));
        let dfg = &mut func.dfg;
        for call in
            dfg.insts[ni].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
        {
            if let Some(&nb) = block_map.get(&call.block(&dfg.value_lists)) {
                call.set_block(nb, &mut dfg.value_lists);
            }
        }
    }
    let fast_header = block_map[&plan.header];

    // The test: for every bound, o0 + kmin >= 0 and last + kmax < bound; and last + s <= MAX.
    let gparams = func.dfg.block_params(guard).to_vec();
    let o0 = gparams[plan.iv_index];
    let mut cur = FuncCursor::new(func).at_bottom(guard);
    let o0w = cur.ins().sextend(types::I64, o0);
    let limw = cur.ins().sextend(types::I64, plan.limit);
    let max_last = i64::from(i32::MAX) - plan.step + plan.strict;
    let no_wrap = cur
        .ins()
        .icmp_imm_s(IntCC::SignedLessThanOrEqual, limw, max_last);
    let mut all = no_wrap;
    for &(bound, kmin, kmax) in &plan.bounds {
        let lowest = add_const(&mut cur, o0w, kmin);
        let lo_ok = cur
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, lowest, 0);
        let highest = add_const(&mut cur, limw, kmax - plan.strict);
        let hi_ok = cur.ins().icmp(IntCC::SignedLessThan, highest, bound);
        let both = cur.ins().band(lo_ok, hi_ok);
        all = cur.ins().band(all, both);
    }
    let args: Vec<BlockArg> = gparams.iter().map(|&v| BlockArg::Value(v)).collect();
    cur.ins().brif(all, fast_header, &args, plan.header, &args);

    // Drop the covered checks from the copy.
    for b in &plan.covered {
        let nb = block_map[b];
        if let Some(check) = recognize(func, nb) {
            drop_check(func, &check, out);
        }
    }
    out.loops_versioned += 1;
    fast_header
}

/// `v + k`, or `v` itself when `k` is 0.
fn add_const(cur: &mut FuncCursor, v: Value, k: i64) -> Value {
    if k == 0 {
        v
    } else {
        cur.ins().iadd_imm_s(v, k)
    }
}

fn drop_check(func: &mut Function, check: &BoundsCheck, out: &mut PredicateOutcome) {
    out.new_jumps.push(replace_with_jump(func, check));
    remove_if_dead(func, check.cmp);
    out.checks_removed += 1;
}

/// Points `branch`'s edge to `from` at `to` instead.
fn retarget(func: &mut Function, branch: Inst, from: Block, to: Block) {
    let dfg = &mut func.dfg;
    for call in
        dfg.insts[branch].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
    {
        if call.block(&dfg.value_lists) == from {
            call.set_block(to, &mut dfg.value_lists);
        }
    }
}
