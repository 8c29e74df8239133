//! Loop predication with versioning: test once before a counted loop that none of its checks
//! can fail, and run a copy of the loop without them when that holds.
//!
//! The loop must have one entry edge and one back edge, a header that leaves when its test
//! fails, a limit that is loop-invariant or a constant, and a 32-bit induction variable that the
//! back edge advances by a constant `s`: counting up (`s > 0`) while `iv <= limit` or
//! `iv < limit`, or counting down (`s < 0`) while `iv >= limit` or `iv > limit`. With
//! `last = limit ∓ 1` for the strict tests (`limit` otherwise), every iteration has
//! `iv ∈ [o0, last]` (up) or `iv ∈ [last, o0]` (down), provided `iv` never wraps:
//! `last + s <= i32::MAX` (up) or `last + s >= i32::MIN` (down).
//!
//! Other 32-bit header parameters that the back edge advances by a constant `t` with
//! `t = r·s` for an integer `r` move in lockstep: in iteration `n`, `p = p0 + n·t =
//! p0 + r·(iv - o0)`, so `p` lies in the hull of `p0` and `p0 + r·(last - o0)` (mulAdd's `o`
//! with `r = 1` counting down, squareToLen's `i` with `r = 2` counting up). Nothing needs a
//! division: the trip count enters as `last - o0`.
//!
//! For the checks inside the loop on `p + k` (`p` one of these variables, the base resolved
//! through block parameters that only ever receive `p`) against a loop-invariant `bound` with
//! `bound <= 2^31`, every iteration's check holds when, per bound and variable,
//!
//! ```text
//!     lowest(p) + kmin >= 0        the lowest index is not negative
//!     highest(p) + kmax < bound    the highest index fits
//!     (highest(p) <= i32::MAX      for a lockstep p with kmax < 0: p itself never wraps)
//! ```
//!
//! and the controlling variable does not wrap, all evaluated in 64-bit arithmetic (`|r| <=
//! 2^20`, `|k| <= 2^30`), so nothing in the test itself can overflow. A 32-bit wrap of a
//! lockstep variable is harmless: its index `p + k` is computed modulo 2^32 and equals the
//! exact value once that lies in `[0, bound)`. A new preheader evaluates the conjunction and
//! branches to a copy of the loop whose covered checks are jumps, or to the original loop. Any
//! input that fails the test runs the original, so the result — including the failure status
//! and the state (stores included) committed by the iterations before the failing one — is the
//! original's by construction; when the loop runs zero times both copies leave at once with
//! the same arguments. Nothing is hoisted: the copy runs the same instructions in the same
//! order, minus the proven checks.
//!
//! Values of the header used after the loop (mulAdd's `carry`) are passed by both copies to
//! the header's exit block as new parameters; this requires that block to be entered from the
//! header alone and to dominate every such use. Anything else used outside the loop leaves the
//! loop alone, as does any shape that does not match exactly.

use super::merge::replace_with_jump;
use super::recognize::{
    BoundsCheck, iconst_value, predecessor_counts, recognize, split_constant, value_range,
};
use crate::deopt::{self, SlowPathCall};
use crate::edges::{brif, retarget};
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Block, BlockArg, Function, Inst, InstBuilder, InstructionData, Opcode, Value, ValueDef,
    condcodes::{CondCode, IntCC},
    types,
};
use cranelift_codegen::loop_analysis::{Loop, LoopAnalysis};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// What predication did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PredicateOutcome {
    /// Loops that got a check-free copy behind a preheader test.
    pub loops_versioned: usize,
    /// Checks left out of the check-free copies.
    pub checks_removed: usize,
    /// Original loop header → header of its check-free copy.
    pub fast_headers: HashMap<Block, Block>,
    /// Headers of loops made check-free in place, their failing test calling the slow path
    /// ([`crate::deopt`]).
    pub outlined: Vec<Block>,
    /// The jumps that replaced removed checks (candidates for block fusion).
    pub new_jumps: Vec<Inst>,
    /// Comparisons of removed checks, to delete with what only they used.
    pub dead: Vec<Inst>,
}

/// A loop that can be versioned, with everything the rewrite needs.
struct Plan {
    header: Block,
    blocks: Vec<Block>,
    /// The one branch that enters the loop from outside.
    entry_branch: Inst,
    iv_index: usize,
    limit: Limit,
    /// 1 for a strict test (`<`, `>`), 0 for `<=`, `>=`.
    strict: i64,
    /// Signed; positive with a `<`/`<=` test, negative with `>`/`>=`.
    step: i64,
    /// Per (bound, header parameter): (kmin, kmax). The parameter is the controlling
    /// induction variable or one that moves in lockstep with it (see [`Plan::ratios`]).
    bounds: Vec<(Value, usize, i64, i64)>,
    /// Header parameter → `r` such that the parameter advances by `r * step` per iteration.
    ratios: HashMap<usize, i64>,
    /// The checks the fast copy drops, by block.
    covered: Vec<Block>,
    /// Values defined in the header and used after the loop, and the header's exit block that
    /// dominates every such use: both copies pass them to it as new parameters.
    live_out: Vec<Value>,
    exit: Option<Block>,
}

/// The loop test's limit: a loop-invariant value, or a constant defined anywhere.
#[derive(Clone, Copy)]
enum Limit {
    Value(Value),
    Const(i64),
}

/// Versions every innermost loop of `func` whose checks can be predicated. With `slow_path`,
/// a loop that the entry reaches without side effects ([`deopt::check_restartable`]) loses
/// its checks in place and its failing test calls the slow path; other loops get a copy.
pub fn predicate_loops(func: &mut Function, slow_path: Option<&SlowPathCall>) -> PredicateOutcome {
    let mut out = PredicateOutcome::default();
    // A loop is versioned only if its header tests a signed 32-bit comparison: without such
    // a test anywhere, the analyses are not needed.
    if !crate::edges::any_brif_on_signed_i32_compare(func) {
        return out;
    }
    let mut done: HashSet<Block> = HashSet::default();
    // The analyses of the function as it stands: a loop left alone changes nothing, so they
    // are recomputed only after a loop was versioned.
    let mut current: Option<LoopAnalyses> = None;
    loop {
        let LoopAnalyses {
            cfg,
            domtree,
            loops,
            innermost,
        } = current.get_or_insert_with(|| LoopAnalyses::of(func));
        let next = innermost
            .iter()
            .map(|&l| (l, loops.loop_header(l)))
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
        if let Some(plan) = analyze(func, cfg, domtree, header, blocks) {
            current = None;
            let restartable =
                slow_path.filter(|_| deopt::check_restartable(func, plan.entry_branch).is_ok());
            if let Some(call) = restartable {
                version_in_place(func, &plan, call, &mut out);
                out.outlined.push(header);
            } else {
                let fast = version(func, &plan, &mut out);
                done.insert(fast);
                out.fast_headers.insert(header, fast);
            }
        }
    }
    out
}

/// The control-flow graph, dominator tree and loops of a function, and its innermost loops
/// in the loop analysis' order.
struct LoopAnalyses {
    cfg: ControlFlowGraph,
    domtree: DominatorTree,
    loops: LoopAnalysis,
    innermost: Vec<Loop>,
}

impl LoopAnalyses {
    fn of(func: &Function) -> Self {
        let cfg = ControlFlowGraph::with_function(func);
        let domtree = DominatorTree::with_function(func, &cfg);
        let mut loops = LoopAnalysis::new();
        loops.compute(func, &cfg, &domtree);
        let parents: HashSet<Loop> = loops.loops().filter_map(|l| loops.loop_parent(l)).collect();
        let innermost = loops.loops().filter(|l| !parents.contains(l)).collect();
        Self {
            cfg,
            domtree,
            loops,
            innermost,
        }
    }
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
    let (arg, [then_call, else_call]) = brif(func, term)?;
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
    let (cond, iv, limit) = param_first(params, cond, args.map(|v| dfg.resolve_aliases(v)))?;
    let (strict, increasing) = match cond {
        IntCC::SignedLessThanOrEqual => (0, true),
        IntCC::SignedLessThan => (1, true),
        IntCC::SignedGreaterThanOrEqual => (0, false),
        IntCC::SignedGreaterThan => (1, false),
        _ => return None,
    };
    if dfg.value_type(iv) != types::I32 || dfg.value_type(limit) != types::I32 {
        return None;
    }
    let iv_index = params.iter().position(|&p| p == iv)?;
    let limit = match iconst_value(func, limit) {
        Some(k) => Limit::Const(k),
        None if defined_in_loop(limit) => return None,
        None => Limit::Value(limit),
    };

    // The back edge advances iv by a constant, up for `<`/`<=`, down for `>`/`>=`.
    let latch_args = edge_args(func, latch_branch, header)?;
    let (from, step) = split_constant(func, *latch_args.get(iv_index)?);
    if resolve_copy(func, cfg, from, 32) != iv || step == 0 || (step > 0) != increasing {
        return None;
    }

    // Induction variables in lockstep: a 32-bit header parameter that the back edge advances
    // by a constant multiple `r * step` of the controlling step.
    let mut ratios: HashMap<usize, i64> = HashMap::from_iter([(iv_index, 1)]);
    for (p, &param) in params.iter().enumerate() {
        if p == iv_index || dfg.value_type(param) != types::I32 {
            continue;
        }
        let Some(&arg) = latch_args.get(p) else {
            continue;
        };
        let (from, t) = split_constant(func, arg);
        if resolve_copy(func, cfg, from, 32) != param || t % step != 0 {
            continue;
        }
        let r = t / step;
        if r.abs() <= MAX_RATIO {
            ratios.insert(p, r);
        }
    }

    // Checks on p + k, p an induction variable, against loop-invariant bounds.
    let mut bounds: Vec<(Value, usize, i64, i64)> = Vec::new();
    let mut covered = Vec::new();
    for &blk in &blocks {
        let Some(check) = recognize(func, blk) else {
            continue;
        };
        let base = resolve_copy(func, cfg, check.base, 32);
        let Some(p) = params.iter().position(|&v| v == base) else {
            continue;
        };
        if !ratios.contains_key(&p)
            || check.offset.abs() > MAX_OFFSET
            || defined_in_loop(check.bound)
            || value_range(func, check.bound).1 > 1i128 << 31
        {
            continue;
        }
        match bounds
            .iter_mut()
            .find(|(bd, q, _, _)| *bd == check.bound && *q == p)
        {
            Some((_, _, lo, hi)) => {
                *lo = (*lo).min(check.offset);
                *hi = (*hi).max(check.offset);
            }
            None => bounds.push((check.bound, p, check.offset, check.offset)),
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
    if let Limit::Value(l) = limit
        && !available(l)
    {
        return None;
    }
    if !bounds.iter().all(|&(bd, ..)| available(bd)) {
        return None;
    }

    // Values of the loop used outside it: only header values used where the header's own exit
    // block (entered from the header alone) dominates, so both copies can pass them to it.
    let exit_block = if then_in {
        else_call.block(&dfg.value_lists)
    } else {
        then_call.block(&dfg.value_lists)
    };
    let mut live_out: Vec<Value> = Vec::new();
    for blk in func.layout.blocks().filter(|b| !in_loop.contains(b)) {
        for i in func.layout.block_insts(blk) {
            for v in dfg.inst_values(i) {
                let v = dfg.resolve_aliases(v);
                if !defined_in_loop(v) {
                    continue;
                }
                let in_header = match dfg.value_def(v) {
                    ValueDef::Result(d, _) => func.layout.inst_block(d) == Some(header),
                    ValueDef::Param(b, _) => b == header,
                    _ => false,
                };
                if !in_header || !domtree.dominates(exit_block, blk, &func.layout) {
                    return None;
                }
                if !live_out.contains(&v) {
                    live_out.push(v);
                }
            }
        }
    }
    let exit = if live_out.is_empty() {
        None
    } else {
        if predecessor_counts(func).get(&exit_block) != Some(&1)
            || Some(exit_block) == func.layout.entry_block()
        {
            return None;
        }
        Some(exit_block)
    };

    Some(Plan {
        header,
        blocks,
        entry_branch,
        iv_index,
        limit,
        strict,
        step,
        bounds,
        ratios,
        covered,
        live_out,
        exit,
    })
}

/// The largest `|r|` of a lockstep induction variable (keeps the test's products far from
/// 64-bit overflow: `|r| * 2^33 < 2^63`).
const MAX_RATIO: i64 = 1 << 20;
/// The largest `|k|` of a predicated check (keeps `index + k` far from 64-bit overflow).
const MAX_OFFSET: i64 = 1 << 30;

/// The value arguments `branch` passes to `to`.
pub(crate) fn edge_args(func: &Function, branch: Inst, to: Block) -> Option<Vec<Value>> {
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
pub(crate) fn resolve_copy(func: &Function, cfg: &ControlFlowGraph, v: Value, fuel: u32) -> Value {
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

/// A new block that takes over the loop's entry edge, with the header's parameters.
fn insert_guard(func: &mut Function, plan: &Plan) -> Block {
    let guard = func.dfg.make_block();
    let types: Vec<_> = func.dfg.block_param_types(plan.header).collect();
    for ty in &types {
        func.dfg.append_block_param(guard, *ty);
    }
    func.layout.insert_block(guard, plan.header);
    retarget(func, plan.entry_branch, plan.header, guard);
    guard
}

/// Builds the preheader test, which enters the loop itself or else calls the slow path, and
/// drops the covered checks from the loop.
fn version_in_place(
    func: &mut Function,
    plan: &Plan,
    call: &SlowPathCall,
    out: &mut PredicateOutcome,
) {
    let guard = insert_guard(func, plan);
    let slow = deopt::call_block(func, call);
    finish_guard(func, plan, guard, plan.header, (slow, false));
    for &b in &plan.covered {
        if let Some(check) = recognize(func, b) {
            drop_check(func, &check, out);
        }
    }
    out.loops_versioned += 1;
}

/// Builds the preheader test and the check-free copy; returns the copy's header.
fn version(func: &mut Function, plan: &Plan, out: &mut PredicateOutcome) -> Block {
    // The new preheader takes over the entry edge.
    let guard = insert_guard(func, plan);

    // Clone the loop between the preheader and the original loop.
    let mut block_map: HashMap<Block, Block> = HashMap::default();
    let mut value_map: HashMap<Value, Value> = HashMap::default();
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

    // Values used after the loop reach its exit block as parameters from either copy.
    if let Some(exit) = plan.exit {
        let clone: HashSet<Block> = block_map.values().copied().collect();
        let outside: Vec<Block> = func
            .layout
            .blocks()
            .filter(|b| *b != guard && !clone.contains(b) && !plan.blocks.contains(b))
            .collect();
        let mut renamed: HashMap<Value, Value> = HashMap::default();
        for &v in &plan.live_out {
            let ty = func.dfg.value_type(v);
            renamed.insert(v, func.dfg.append_block_param(exit, ty));
        }
        for b in outside {
            let insts: Vec<Inst> = func.layout.block_insts(b).collect();
            for i in insts {
                func.dfg
                    .map_inst_values(i, |v| renamed.get(&v).copied().unwrap_or(v));
            }
        }
        for (header, map) in [(plan.header, None), (fast_header, Some(&value_map))] {
            let term = func
                .layout
                .last_inst(header)
                .expect("the header ends in its test");
            let args: Vec<Value> = plan
                .live_out
                .iter()
                .map(|v| map.and_then(|m| m.get(v)).copied().unwrap_or(*v))
                .collect();
            let dfg = &mut func.dfg;
            for call in dfg.insts[term]
                .branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
            {
                if call.block(&dfg.value_lists) == exit {
                    for &a in &args {
                        call.append_argument(a, &mut dfg.value_lists);
                    }
                }
            }
        }
    }

    finish_guard(func, plan, guard, fast_header, (plan.header, true));

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

/// Ends `guard` with the preheader test: on to `fast` with the guard's parameters when it
/// holds, else to `slow.0` (with the parameters too when `slow.1`).
fn finish_guard(func: &mut Function, plan: &Plan, guard: Block, fast: Block, slow: (Block, bool)) {
    let all = preheader_test(func, plan, guard);
    let gparams = func.dfg.block_params(guard).to_vec();
    let args: Vec<BlockArg> = gparams.iter().map(|&v| BlockArg::Value(v)).collect();
    let slow_args: &[BlockArg] = if slow.1 { &args } else { &[] };
    FuncCursor::new(func)
        .at_bottom(guard)
        .ins()
        .brif(all, fast, &args, slow.0, slow_args);
}

/// Appends the preheader test to `guard` and returns its result (true: no covered check can
/// fail in any iteration).
fn preheader_test(func: &mut Function, plan: &Plan, guard: Block) -> Value {
    // The test, in 64-bit arithmetic. The controlling induction variable runs over
    // [o0, last] (counting up) or [last, o0] (counting down) and must not wrap; a lockstep
    // variable p with entry value p0 runs over the hull of p0 and p0 + r * (last - o0). For
    // every bound and variable: lowest + kmin >= 0 and highest + kmax < bound.
    let gparams = func.dfg.block_params(guard).to_vec();
    let o0 = gparams[plan.iv_index];
    let mut cur = FuncCursor::new(func).at_bottom(guard);
    let o0w = cur.ins().sextend(types::I64, o0);
    let limw = match plan.limit {
        Limit::Value(l) => cur.ins().sextend(types::I64, l),
        Limit::Const(k) => cur.ins().iconst(types::I64, k),
    };
    // last = limit - strict (up) or limit + strict (down).
    let to_last = if plan.step > 0 {
        -plan.strict
    } else {
        plan.strict
    };
    let no_wrap = if plan.step > 0 {
        let max_last = i64::from(i32::MAX) - plan.step + plan.strict;
        cur.ins()
            .icmp_imm_s(IntCC::SignedLessThanOrEqual, limw, max_last)
    } else {
        let min_last = i64::from(i32::MIN) - plan.step - plan.strict;
        cur.ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, limw, min_last)
    };
    let mut all = no_wrap;
    let mut distance = None;
    for &(bound, p, kmin, kmax) in &plan.bounds {
        let r = plan.ratios[&p];
        // (lowest, highest) of the variable, each as (value, constant still to add).
        let (low, high) = if p == plan.iv_index {
            if plan.step > 0 {
                ((o0w, 0), (limw, to_last))
            } else {
                ((limw, to_last), (o0w, 0))
            }
        } else {
            let d = *distance.get_or_insert_with(|| {
                let lastw = add_const(&mut cur, limw, to_last);
                cur.ins().isub(lastw, o0w)
            });
            let p0w = cur.ins().sextend(types::I64, gparams[p]);
            let moved = match r {
                1 => d,
                _ => cur.ins().imul_imm_s(d, r),
            };
            let end = cur.ins().iadd(p0w, moved);
            // p moves the way r * step points whenever the loop runs at all.
            if r * plan.step >= 0 {
                ((p0w, 0), (end, 0))
            } else {
                ((end, 0), (p0w, 0))
            }
        };
        let lowest = add_const(&mut cur, low.0, low.1 + kmin);
        let lo_ok = cur
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, lowest, 0);
        let highest = add_const(&mut cur, high.0, high.1 + kmax);
        let hi_ok = cur.ins().icmp(IntCC::SignedLessThan, highest, bound);
        let both = cur.ins().band(lo_ok, hi_ok);
        all = cur.ins().band(all, both);
        if p != plan.iv_index && kmax < 0 {
            // A wrapped p with p + k in range: p itself must fit in 32 bits for the
            // sign-extended `sext(p) + k` addresses of merged accesses to be exact.
            let top = add_const(&mut cur, high.0, high.1);
            let fits = cur
                .ins()
                .icmp_imm_s(IntCC::SignedLessThanOrEqual, top, i64::from(i32::MAX));
            all = cur.ins().band(all, fits);
        }
    }
    all
}

/// `v + k`, or `v` itself when `k` is 0.
fn add_const(cur: &mut FuncCursor, v: Value, k: i64) -> Value {
    if k == 0 {
        v
    } else {
        cur.ins().iadd_imm_s(v, k)
    }
}

/// The comparison `a cond b` with the operand among `params` (a loop header's parameters)
/// first: `(cond, param, other)`, the condition swapped when it is `b`; `None` when neither
/// is a parameter.
pub(crate) fn param_first(
    params: &[Value],
    cond: IntCC,
    [a, b]: [Value; 2],
) -> Option<(IntCC, Value, Value)> {
    if params.contains(&a) {
        Some((cond, a, b))
    } else if params.contains(&b) {
        Some((cond.swap_args(), b, a))
    } else {
        None
    }
}

fn drop_check(func: &mut Function, check: &BoundsCheck, out: &mut PredicateOutcome) {
    out.new_jumps.push(replace_with_jump(func, check));
    out.dead.push(check.cmp);
    out.checks_removed += 1;
}
