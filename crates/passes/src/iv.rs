//! Induction-variable strength reduction in predicated loops.
//!
//! After predication ([`crate::bce::predicate`]) a check-free loop still counts with the
//! front end's 32-bit `int`: each iteration tests `iv <= limit`, extends `iv` to 64 bits and
//! adds it to the array base before its loads (`buf + sext(ofs)`), so the loop keeps `iv`,
//! `sext(iv)`, the base and the limit in registers. A hand-written loop keeps two: a pointer
//! that advances by the step, and an end pointer. This pass rewrites the loop to do that:
//!
//! ```text
//! preheader:  q0 = base + (sext(iv0) << sh)         end = base + (sext(limit) << sh)
//! header(q):  icmp cc (q - end), 0                  (was: icmp cc iv, limit)
//! body:       base + (sext(iv) << sh)  →  q         (every such address term)
//! latch:      q + (step << sh)                      (was: iv + step)
//! ```
//!
//! `iv` disappears from the loop; a use that is none of the above (an exit argument such as the
//! offset MD5 returns, or arithmetic on `iv`) gets `iv = ireduce((q - base) >> sh)` at the use,
//! on a split exit edge for exit arguments. When no address term of the form
//! `base + (sext(iv) << sh)` exists, `q` is simply `sext(iv)` (a 64-bit induction variable)
//! and the test compares `q` with `sext(limit)`.
//!
//! **Why it is exact.** The pass relies on one fact, which it does not prove itself: *`iv`
//! never wraps as a signed 32-bit integer while the loop runs*, its last value (the one that
//! fails the test) included. Predication's check-free copies satisfy it by construction — their
//! preheader test demands `last + step` within `i32` ([`crate::bce::predicate`]) — and the
//! pipeline runs this pass only on their headers ([`crate::bce::BceStats::versioned`]). Then in
//! every iteration `sext(iv) = sext(iv0) + n·step` exactly, so `q = base + (sext(iv) << sh)`
//! modulo 2^64, every address term equals `q`, and `q - end = (sext(iv) - sext(limit)) << sh`
//! exactly — `base` cancels modulo 2^64 and the difference is below 2^40 in magnitude — so
//! the signed comparison with 0 equals the original signed comparison, whatever the address.
//! Equality and signed comparisons are supported; an unsigned loop test is left alone.

pub mod fold;
pub mod guards;

use crate::bce::predicate::{edge_args, param_first, resolve_copy};
use crate::bce::recognize::{for_each_operand, iconst_value, split_constant};
use crate::edges::{append_edge_arg, brif, remove_edge_arg};
use crate::rewrite::Aliases;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Block, BlockArg, Function, Inst, InstBuilder, InstructionData, Opcode, Value, ValueDef,
    condcodes::IntCC, types,
};
use cranelift_codegen::loop_analysis::LoopAnalysis;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// What [`reduce_predicated`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IvStats {
    /// Loops whose 32-bit induction variable was replaced.
    pub loops_reduced: usize,
    /// Of those, loops that now count with a pointer (`base + offset`) and an end pointer.
    pub pointer_ivs: usize,
    /// Of those, loops that now count with a 64-bit `sext(iv)` (no address term to absorb).
    pub wide_ivs: usize,
    /// Address computations `base + (sext(iv) << sh)` replaced by the pointer.
    pub address_terms: usize,
    /// Uses of the old variable recomputed from the new one (exit values, other arithmetic).
    pub recomputed_uses: usize,
    /// Branches on a comparison that a down-counting variable's bounds decide
    /// ([`guards::remove_implied_guards`]), replaced by a jump.
    pub guards_removed: usize,
    /// Comparisons of constants and the `band`/`bor` they made trivial, folded
    /// ([`fold::fold_constant_conditions`]).
    pub conditions_folded: usize,
}

impl std::fmt::Display for IvStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "iv: loops={} pointer={} wide={} address_terms={} recomputed={} guards={} folded={}",
            self.loops_reduced,
            self.pointer_ivs,
            self.wide_ivs,
            self.address_terms,
            self.recomputed_uses,
            self.guards_removed,
            self.conditions_folded
        )
    }
}

/// The largest address scale handled (`sh` in `sext(iv) << sh`): keeps every product far from
/// 64-bit overflow.
const MAX_SHIFT: i64 = 8;

/// The loop test's limit.
#[derive(Clone, Copy, Debug)]
enum Limit {
    Value(Value),
    Const(i64),
}

/// An address term `base + (sext(iv) << shift)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Scale {
    base: Value,
    shift: u8,
}

/// A loop that can be reduced, with everything the rewrite needs.
struct Plan {
    header: Block,
    blocks: Vec<Block>,
    entry_branch: Inst,
    latch_branch: Inst,
    /// The controlling variable and its copies in other loop blocks' parameters.
    copies: Vec<Value>,
    /// The header's test, oriented as `iv cond limit`.
    cmp: Inst,
    cond: IntCC,
    limit: Limit,
    step: i64,
    /// The chosen address term (`None`: a 64-bit induction variable).
    scale: Option<Scale>,
    /// The address terms to replace by the pointer.
    terms: Vec<Inst>,
}

/// Reduces the 32-bit induction variable of each loop headed by one of `headers`.
///
/// Precondition (see the module documentation): in each such loop the induction variable that
/// controls the header's test never wraps as a signed 32-bit integer. The check-free loops of
/// [`crate::bce`]'s predication satisfy it; do not pass other loops. Loops whose shape does not
/// match exactly are left alone. [`reduce_predicated`] passes exactly those loops.
///
/// `resolved`: no instruction of the layout reads an alias yet, so the first loop needs no
/// alias resolution, and the caller resolves the aliases the reduction makes (the last
/// dead-code sweep resolves each operand itself). `no_dead_code`: no pure instruction is dead
/// on entry, so the closing sweep runs only after a loop was reduced.
fn strength_reduce(
    func: &mut Function,
    headers: &[Block],
    resolved: bool,
    no_dead_code: bool,
) -> IvStats {
    debug_assert!(!resolved || crate::rewrite::reads_no_alias(func));
    let mut stats = IvStats::default();
    let mut reduced_any = false;
    for (i, &header) in headers.iter().enumerate() {
        if i > 0 || !resolved {
            func.dfg.resolve_all_aliases();
        }
        let cfg = ControlFlowGraph::with_function(func);
        let domtree = DominatorTree::with_function(func, &cfg);
        let mut loops = LoopAnalysis::new();
        loops.compute(func, &cfg, &domtree);
        let Some(lp) = loops.loops().find(|&l| loops.loop_header(l) == header) else {
            continue;
        };
        let blocks: Vec<Block> = func
            .layout
            .blocks()
            .filter(|&b| loops.is_in_loop(b, lp))
            .collect();
        if let Some(plan) = analyze(func, &cfg, header, blocks) {
            reduce(func, &cfg, &plan, &mut stats);
            reduced_any = true;
        }
    }
    // Resolved here, or else the reduction's aliases are still read.
    let aliases = if resolved {
        Aliases::Resolve
    } else {
        func.dfg.resolve_all_aliases();
        Aliases::NoneRead
    };
    if reduced_any || !no_dead_code {
        crate::rewrite::remove_dead_pure_insts_with(func, aliases);
    }
    stats
}

/// The plan for the loop at `header`. No instruction of the layout reads an alias here
/// ([`strength_reduce`] resolves them first, or its caller has), so operands are read as
/// they stand.
fn analyze(
    func: &Function,
    cfg: &ControlFlowGraph,
    header: Block,
    blocks: Vec<Block>,
) -> Option<Plan> {
    debug_assert!(crate::rewrite::reads_no_alias(func));
    let dfg = &func.dfg;
    let in_loop: HashSet<Block> = blocks.iter().copied().collect();
    let outside = |v: Value| match dfg.value_def(v) {
        ValueDef::Result(i, _) => func
            .layout
            .inst_block(i)
            .is_some_and(|b| !in_loop.contains(&b)),
        ValueDef::Param(b, _) => !in_loop.contains(&b),
        _ => false,
    };

    // One edge in, one back edge.
    let preds: Vec<_> = cfg.pred_iter(header).collect();
    if preds.len() != 2 {
        return None;
    }
    let (mut entry, mut latch) = (None, None);
    for pred in preds {
        if in_loop.contains(&pred.block) {
            latch = Some(pred.inst);
        } else {
            entry = Some(pred.inst);
        }
    }
    let (entry_branch, latch_branch) = (entry?, latch?);
    for branch in [entry_branch, latch_branch] {
        let targets = dfg.insts[branch]
            .branch_destination(&dfg.jump_tables, &dfg.exception_tables)
            .iter()
            .filter(|c| c.block(&dfg.value_lists) == header)
            .count();
        if targets != 1 || dfg.insts[branch].opcode() == Opcode::BrTable {
            return None;
        }
    }

    // Header: `brif (icmp cc a, b), ...` with a header parameter on one side.
    let term = func.layout.last_inst(header)?;
    let (arg, _) = brif(func, term)?;
    let cmp = dfg.value_def(arg).inst()?;
    let InstructionData::IntCompare { cond, args, .. } = dfg.insts[cmp] else {
        return None;
    };
    let params = dfg.block_params(header);
    let (cond, iv, limit) = param_first(params, cond, args)?;
    if !matches!(
        cond,
        IntCC::Equal
            | IntCC::NotEqual
            | IntCC::SignedLessThan
            | IntCC::SignedLessThanOrEqual
            | IntCC::SignedGreaterThan
            | IntCC::SignedGreaterThanOrEqual
    ) || dfg.value_type(iv) != types::I32
        || dfg.value_type(limit) != types::I32
    {
        return None;
    }
    let iv_index = params.iter().position(|&p| p == iv)?;
    let limit = match iconst_value(func, limit) {
        Some(k) => Limit::Const(k),
        None if outside(limit) => Limit::Value(limit),
        None => return None,
    };

    // The back edge advances iv by a constant.
    let latch_args = edge_args(func, latch_branch, header)?;
    let (from, step) = split_constant(func, *latch_args.get(iv_index)?);
    if resolve_copy(func, cfg, from, 32) != iv || step == 0 || step.abs() > 1 << 30 {
        return None;
    }
    edge_args(func, entry_branch, header)?;

    // Copies of iv in the parameters of other loop blocks.
    let mut copies = vec![iv];
    for &blk in &blocks {
        if blk == header {
            continue;
        }
        for &p in dfg.block_params(blk) {
            if dfg.value_type(p) == types::I32 && resolve_copy(func, cfg, p, 32) == iv {
                copies.push(p);
            }
        }
    }
    // Every branch into a copy's block must pass plain values (no exception payloads).
    for &c in &copies[1..] {
        let ValueDef::Param(blk, _) = dfg.value_def(c) else {
            return None;
        };
        for pred in cfg.pred_iter(blk) {
            edge_args(func, pred.inst, blk)?;
        }
    }

    // `sext(iv)` and the address terms built on it.
    let mut sext: HashSet<Value> = HashSet::default();
    for &blk in &blocks {
        for inst in func.layout.block_insts(blk) {
            if let InstructionData::Unary {
                opcode: Opcode::Sextend,
                arg,
            } = dfg.insts[inst]
                && copies.contains(&arg)
                && dfg.value_type(dfg.first_result(inst)) == types::I64
            {
                sext.insert(dfg.first_result(inst));
            }
        }
    }
    if sext.is_empty() {
        return None;
    }
    let scaled = |v: Value| -> Option<u8> {
        if sext.contains(&v) {
            return Some(0);
        }
        let inst = dfg.value_def(v).inst()?;
        let (x, amount) = match dfg.insts[inst] {
            InstructionData::Binary {
                opcode: Opcode::Ishl,
                args,
            } => (args[0], iconst_value(func, args[1])?),
            _ => return None,
        };
        (sext.contains(&x) && (1..=MAX_SHIFT).contains(&amount)).then_some(amount as u8)
    };
    let mut terms: HashMap<Scale, Vec<Inst>> = HashMap::default();
    let mut order: Vec<Scale> = Vec::new();
    for &blk in &blocks {
        for inst in func.layout.block_insts(blk) {
            let InstructionData::Binary {
                opcode: Opcode::Iadd,
                args,
            } = dfg.insts[inst]
            else {
                continue;
            };
            let [x, y] = args;
            let found = match (scaled(x), scaled(y)) {
                (_, Some(sh)) if outside(x) => Some((x, sh)),
                (Some(sh), _) if outside(y) => Some((y, sh)),
                _ => None,
            };
            if let Some((base, shift)) = found
                && dfg.value_type(base) == types::I64
            {
                let key = Scale { base, shift };
                if !terms.contains_key(&key) {
                    order.push(key);
                }
                terms.entry(key).or_default().push(inst);
            }
        }
    }
    // The most frequent term (the first in layout order among equals).
    let scale = order.iter().copied().max_by_key(|k| {
        (
            terms[k].len(),
            std::cmp::Reverse(order.iter().position(|o| o == k)),
        )
    });
    let terms = scale.map(|k| terms[&k].clone()).unwrap_or_default();
    Some(Plan {
        header,
        blocks,
        entry_branch,
        latch_branch,
        copies,
        cmp,
        cond,
        limit,
        step,
        scale,
        terms,
    })
}

/// `(sext(x) << shift) + base` for a 32-bit `x`, at the cursor.
fn widen(cur: &mut FuncCursor, x: Value, scale: Option<Scale>) -> Value {
    let wide = cur.ins().sextend(types::I64, x);
    match scale {
        Some(Scale { base, shift }) => {
            let shifted = if shift == 0 {
                wide
            } else {
                cur.ins().ishl_imm_u(wide, i64::from(shift))
            };
            cur.ins().iadd(base, shifted)
        }
        None => wide,
    }
}

/// `sext(iv)` recomputed from `q` at the cursor: `(q - base) >> shift`, or `q` itself.
fn recompute_wide(cur: &mut FuncCursor, q: Value, scale: Option<Scale>) -> Value {
    match scale {
        Some(Scale { base, shift }) => {
            let diff = cur.ins().isub(q, base);
            if shift == 0 {
                diff
            } else {
                cur.ins().sshr_imm_u(diff, i64::from(shift))
            }
        }
        None => q,
    }
}

fn reduce(func: &mut Function, cfg: &ControlFlowGraph, plan: &Plan, stats: &mut IvStats) {
    let scale = plan.scale;
    let shift = scale.map_or(0, |s| s.shift);
    let iv = plan.copies[0];
    let iv_index = func
        .dfg
        .block_params(plan.header)
        .iter()
        .position(|&p| p == iv)
        .expect("analysed: iv is a header parameter");
    let iv0 = edge_args(func, plan.entry_branch, plan.header).expect("analysed")[iv_index];

    // Preheader: the start and the end of the new variable.
    let mut cur = FuncCursor::new(func).at_inst(plan.entry_branch);
    let q0 = widen(&mut cur, iv0, scale);
    let end = match plan.limit {
        Limit::Value(limit) => widen(&mut cur, limit, scale),
        Limit::Const(k) => {
            let wide = cur.ins().iconst(types::I64, k << shift);
            match scale {
                Some(s) => cur.ins().iadd(s.base, wide),
                None => wide,
            }
        }
    };

    // Header parameter, entry and back-edge arguments.
    let q = func.dfg.append_block_param(plan.header, types::I64);
    append_edge_arg(func, plan.entry_branch, plan.header, q0);
    let mut cur = FuncCursor::new(func).at_inst(plan.latch_branch);
    let next = cur.ins().iadd_imm_s(q, plan.step << shift);
    append_edge_arg(func, plan.latch_branch, plan.header, next);

    // The test: `q - end cond 0` (exact; see the module documentation), or `q cond end`.
    let mut cur = FuncCursor::new(func).at_inst(plan.cmp);
    if scale.is_some() {
        let diff = cur.ins().isub(q, end);
        func.replace(plan.cmp).icmp_imm_s(plan.cond, diff, 0);
    } else {
        func.replace(plan.cmp).icmp(plan.cond, q, end);
    }

    // Address terms become the pointer.
    for &term in &plan.terms {
        let result = func.dfg.first_result(term);
        func.layout.remove_inst(term);
        func.dfg.clear_results(term);
        func.dfg.change_to_alias(result, q);
        stats.address_terms += 1;
    }

    // The copies leave the block parameters: drop their arguments first.
    // Highest index first, so that the indices of a block's remaining copies stay valid.
    let mut copy_blocks: Vec<(Value, Block, usize)> = plan
        .copies
        .iter()
        .filter_map(|&c| match func.dfg.value_def(c) {
            ValueDef::Param(b, i) => Some((c, b, i)),
            _ => None,
        })
        .collect();
    copy_blocks.sort_by_key(|&(_, _, i)| std::cmp::Reverse(i));
    for &(_, blk, index) in &copy_blocks {
        let preds: Vec<Inst> = cfg.pred_iter(blk).map(|p| p.inst).collect();
        for branch in preds {
            remove_edge_arg(func, branch, blk, index);
        }
    }
    func.dfg.resolve_all_aliases();
    // Just resolved: no operand is an alias.
    crate::rewrite::remove_dead_pure_insts_with(func, Aliases::NoneRead);

    // Every remaining use of iv or sext(iv) in the loop is recomputed from q. Operands are
    // compared as they stand: the aliases made above are resolved, and the only ones made
    // below stand for new wide values, never for a copy of iv.
    let copies: HashSet<Value> = plan.copies.iter().copied().collect();
    let in_loop: HashSet<Block> = plan.blocks.iter().copied().collect();
    let insts: Vec<Inst> = plan
        .blocks
        .iter()
        .flat_map(|&b| func.layout.block_insts(b).collect::<Vec<_>>())
        .collect();
    for inst in insts {
        if let InstructionData::Unary {
            opcode: Opcode::Sextend,
            arg,
        } = func.dfg.insts[inst]
            && copies.contains(&arg)
            && func.dfg.value_type(func.dfg.first_result(inst)) == types::I64
        {
            // Replaced as a whole: `sext(iv)` is the recomputed wide value.
            let result = func.dfg.first_result(inst);
            let mut cur = FuncCursor::new(func).at_inst(inst);
            let wide = recompute_wide(&mut cur, q, scale);
            func.layout.remove_inst(inst);
            func.dfg.clear_results(inst);
            func.dfg.change_to_alias(result, wide);
            stats.recomputed_uses += 1;
            continue;
        }
        let uses_iv = |func: &Function| {
            let mut uses = false;
            for_each_operand(func, inst, |v| uses |= copies.contains(&v));
            uses
        };
        if !uses_iv(func) {
            continue;
        }
        // Exit edges carrying iv get a block of their own that recomputes it.
        split_exit_edges(func, inst, &in_loop, &copies, q, scale, stats);
        if !uses_iv(func) {
            continue;
        }
        let mut cur = FuncCursor::new(func).at_inst(inst);
        let wide = recompute_wide(&mut cur, q, scale);
        let narrow = cur.ins().ireduce(types::I32, wide);
        let copies = &copies;
        func.dfg
            .map_inst_values(inst, |v| if copies.contains(&v) { narrow } else { v });
        stats.recomputed_uses += 1;
    }

    // Now unused, the copies go.
    for &(c, _, _) in &copy_blocks {
        func.dfg.remove_block_param(c);
    }
    stats.loops_reduced += 1;
    if scale.is_some() {
        stats.pointer_ivs += 1;
    } else {
        stats.wide_ivs += 1;
    }
}

/// Moves each edge of `branch` that leaves the loop with iv among its arguments onto a new
/// block that recomputes iv from `q` and jumps on.
fn split_exit_edges(
    func: &mut Function,
    branch: Inst,
    in_loop: &HashSet<Block>,
    copies: &HashSet<Value>,
    q: Value,
    scale: Option<Scale>,
    stats: &mut IvStats,
) {
    let Some(from) = func.layout.inst_block(branch) else {
        return;
    };
    let calls: Vec<(usize, Block, Vec<BlockArg>)> = {
        let dfg = &func.dfg;
        dfg.insts[branch]
            .branch_destination(&dfg.jump_tables, &dfg.exception_tables)
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    i,
                    c.block(&dfg.value_lists),
                    c.args(&dfg.value_lists).collect(),
                )
            })
            .collect()
    };
    for (index, target, args) in calls {
        let carries_iv = args
            .iter()
            .any(|a| a.as_value().is_some_and(|v| copies.contains(&v)));
        if in_loop.contains(&target) || !carries_iv {
            continue;
        }
        let split = func.dfg.make_block();
        func.layout.insert_block_after(split, from);
        let mut cur = FuncCursor::new(func).at_bottom(split);
        let wide = recompute_wide(&mut cur, q, scale);
        let narrow = cur.ins().ireduce(types::I32, wide);
        let new_args: Vec<BlockArg> = args
            .iter()
            .map(|a| match a.as_value() {
                Some(v) if copies.contains(&v) => BlockArg::Value(narrow),
                _ => *a,
            })
            .collect();
        cur.ins().jump(target, &new_args);
        let dfg = &mut func.dfg;
        let dests = dfg.insts[branch]
            .branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables);
        if let Some(call) = dests.get_mut(index) {
            call.clear(&mut dfg.value_lists);
            call.set_block(split, &mut dfg.value_lists);
        }
        stats.recomputed_uses += 1;
    }
}

/// How [`reduce_predicated`] runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IvOptions {
    /// No instruction of the function reads an alias — what predicating bounds-check
    /// elimination leaves, and the rewrites keep — and the caller resolves aliases next (the
    /// scheduler does, before rematerialising): both alias resolutions of the pass are
    /// skipped, the first because there is nothing to resolve, the last because the
    /// scheduler's resolves the same operands. The pipeline's result is the same.
    pub aliases_resolved: bool,
    /// No pure instruction of the function is dead on entry (the rewrites' closing sweep ran
    /// right before, as in the pipeline): when the pass changes nothing, its own closing
    /// dead-code sweep, which would find nothing, is skipped.
    pub no_dead_code: bool,
}

/// Folds the comparisons of constants in predicated loops' entry tests
/// ([`fold::fold_constant_conditions`]) and removes the guards that down-counting induction
/// variables decide ([`guards::remove_implied_guards`]) — both exact on any function — then
/// reduces the induction variables of the check-free loops that bounds-check elimination made
/// (`bce.versioned`): the loops the reduction's precondition holds for.
pub fn reduce_predicated(
    func: &mut Function,
    bce: &crate::bce::BceStats,
    options: IvOptions,
) -> IvStats {
    reduce_predicated_from(func, bce, options)
}

/// [`reduce_predicated`]'s steps; `resolved` as in [`strength_reduce`]. Folding and
/// guard removal leave no alias behind (folding resolves the ones it made, guards make none).
fn reduce_predicated_from(
    func: &mut Function,
    bce: &crate::bce::BceStats,
    options: IvOptions,
) -> IvStats {
    let conditions_folded = fold::fold_constant_conditions(func);
    let guards_removed = guards::remove_implied_guards(func);
    let headers: Vec<Block> = bce.versioned.iter().map(|v| v.fast_header).collect();
    let unchanged = conditions_folded == 0 && guards_removed == 0;
    IvStats {
        guards_removed,
        conditions_folded,
        ..strength_reduce(
            func,
            &headers,
            options.aliases_resolved,
            options.no_dead_code && unchanged,
        )
    }
}
