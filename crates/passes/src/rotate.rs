//! Loop rotation: a loop tested at the top becomes a loop tested at the bottom, so that one
//! iteration runs one conditional branch, taken back to the top of the body.
//!
//! Bounds-check elimination and strength reduction leave every loop in the shape the front end
//! builds, with the test in the header and an unconditional back edge:
//!
//! ```text
//! header(p…):  t = test(p…)            ; brif t, body(a…), exit(e…)
//! body(a…):    …                       ; … jump header(n…)   (from the latch)
//! ```
//!
//! Cranelift lays blocks out in a reverse postorder of the control-flow graph, not in the
//! function's layout, and that order puts the header's *first* successor last: the exit path
//! lands between the header and the body. Each iteration then takes two branches — the
//! header's conditional branch over the exit code to the body, and the latch's `jmp` back (on
//! x86_64 `mulAdd`'s check-free loop: `jge` + `jmp` in 20 instructions). Rotation clones the
//! header's instructions into the latch, with the header's parameters replaced by the latch's
//! jump arguments, and ends the latch with the header's conditional branch:
//!
//! ```text
//! header(p…):  t = test(p…)            ; brif t, body(a…, h…), exit(e…)     (runs once)
//! body(a…, h…): …
//! latch:       …; t' = test(n…)        ; brif t', body(a'…, h'…), exit(e'…)
//! ```
//!
//! where `h…` are the header's parameters and results that the loop uses: the body receives
//! them as block parameters, since the header no longer runs before each iteration. The code
//! runs exactly the same instructions in the same order (the header once, then body and test
//! alternately), so the rewrite is exact whatever the header computes; only code size grows,
//! by the header's instructions (at most [`MAX_HEADER_INSTS`]).
//!
//! A loop is rotated when: its header ends in `brif` with one successor `body` inside the loop
//! and one outside; `body` is not the header and has the header as its only predecessor; there
//! is one back edge, an unconditional `jump` from a latch; the header holds no call; and no
//! block outside the loop uses a value of the header directly (only through the exit edge's
//! arguments, or in the exit block when the header is its only predecessor and in blocks that
//! block dominates: they become its parameters too). Other loops are left alone.

use crate::bce::recognize::for_each_operand;
use crate::edges::{append_edge_arg, brif};
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{Block, BlockArg, Function, Inst, InstBuilder, Opcode, Value};
use cranelift_codegen::loop_analysis::LoopAnalysis;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// The most instructions (terminator excluded) a header may hold to be cloned into the latch.
pub const MAX_HEADER_INSTS: usize = 24;

/// What [`rotate_loops`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RotateStats {
    /// Loops now tested at the bottom.
    pub loops_rotated: usize,
    /// Header instructions cloned into latches, over all rotated loops.
    pub insts_cloned: usize,
}

/// A loop that matches the shape rotation needs (see the module documentation).
struct Plan {
    header: Block,
    body: Block,
    latch: Block,
    latch_jump: Inst,
    /// The header's successor outside the loop.
    exit: Block,
    /// Blocks outside the loop that read header values (all dominated by `exit`).
    exit_region: Vec<Block>,
    /// Loop blocks other than the header, in layout order.
    rest: Vec<Block>,
}

/// Rotates every loop of `func` that has the shape described in the module documentation.
pub fn rotate_loops(func: &mut Function) -> RotateStats {
    // Operands name values directly from here on: a rotation creates no alias.
    func.dfg.resolve_all_aliases();
    rotate_loops_resolved(func)
}

/// [`rotate_loops`] on a function none of whose instructions reads an alias (what the
/// scheduler leaves): the alias resolution is skipped (the result is the same). Rotation
/// creates no alias, so its analyses read operands as they stand.
pub fn rotate_loops_resolved(func: &mut Function) -> RotateStats {
    debug_assert!(crate::rewrite::reads_no_alias(func));
    let mut stats = RotateStats::default();
    let mut done: HashSet<Block> = HashSet::default();
    // Each rotation changes the control-flow graph: recompute and take the next candidate.
    // A rotated loop's new header is its old body, which no longer matches (its back edge is
    // conditional), so this ends; the bound is a guard.
    // A rotation changes the edges of one block, the latch (the header's branch gains
    // arguments only): the graph is updated there instead of rebuilt (its edge sets are
    // ordered by key, so the result is the graph a rebuild gives).
    let mut cfg = ControlFlowGraph::with_function(func);
    for _ in 0..func.layout.blocks().count() {
        let domtree = DominatorTree::with_function(func, &cfg);
        let mut loops = LoopAnalysis::new();
        loops.compute(func, &cfg, &domtree);
        let plan = loops.loops().find_map(|lp| {
            let header = loops.loop_header(lp);
            if done.contains(&header) {
                return None;
            }
            analyze(func, &cfg, &domtree, header, |b| loops.is_in_loop(b, lp))
        });
        let Some(plan) = plan else {
            break;
        };
        done.insert(plan.header);
        done.insert(plan.body);
        stats.insts_cloned += rotate(func, &plan);
        stats.loops_rotated += 1;
        cfg.recompute_block(func, plan.latch);
        debug_assert!(same_edges(
            &cfg,
            &ControlFlowGraph::with_function(func),
            func
        ));
    }
    stats
}

/// Whether `a` and `b` hold the same edges, in the same order, for every block of `func`.
fn same_edges(a: &ControlFlowGraph, b: &ControlFlowGraph, func: &Function) -> bool {
    func.layout.blocks().all(|block| {
        a.succ_iter(block).eq(b.succ_iter(block))
            && a.pred_iter(block)
                .map(|p| (p.block, p.inst))
                .eq(b.pred_iter(block).map(|p| (p.block, p.inst)))
    })
}

fn analyze(
    func: &Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
    header: Block,
    in_loop: impl Fn(Block) -> bool,
) -> Option<Plan> {
    let dfg = &func.dfg;
    let term = func.layout.last_inst(header)?;
    let (_, blocks) = brif(func, term)?;
    let [then_block, else_block] = blocks.map(|c| c.block(&dfg.value_lists));
    let body = match (in_loop(then_block), in_loop(else_block)) {
        (true, false) => then_block,
        (false, true) => else_block,
        _ => return None,
    };
    if body == header || cfg.pred_iter(body).count() != 1 {
        return None;
    }
    // Exactly one back edge, an unconditional jump.
    let back: Vec<_> = cfg.pred_iter(header).filter(|p| in_loop(p.block)).collect();
    let [back] = back.as_slice() else {
        return None;
    };
    if dfg.insts[back.inst].opcode() != Opcode::Jump || back.block == header {
        return None;
    }
    let edges = dfg.insts[back.inst].branch_destination(&dfg.jump_tables, &dfg.exception_tables);
    if edges
        .iter()
        .any(|c| c.args(&dfg.value_lists).any(|a| a.as_value().is_none()))
    {
        return None;
    }
    // A header the latch can afford to repeat.
    let header_insts: Vec<Inst> = func.layout.block_insts(header).collect();
    if header_insts.len() > MAX_HEADER_INSTS + 1
        || header_insts.iter().any(|&i| {
            let op = dfg.insts[i].opcode();
            op.is_call() || op.other_side_effects()
        })
    {
        return None;
    }
    // Outside the loop, header values may be read only where the exit edge leads: in the exit
    // block, if the header is its only predecessor, or in blocks it dominates. They receive
    // them as parameters of the exit block.
    let exit = if body == then_block {
        else_block
    } else {
        then_block
    };
    let exit_private = cfg.pred_iter(exit).count() == 1;
    let header_values = header_values(func, header);
    let mut exit_region = Vec::new();
    for block in func.layout.blocks().filter(|&b| !in_loop(b)) {
        // No operand is an alias (see `rotate_loops_resolved`).
        let reads = func.layout.block_insts(block).any(|inst| {
            let mut reads = false;
            for_each_operand(func, inst, |v| reads |= header_values.contains(&v));
            reads
        });
        if reads {
            if !exit_private || !domtree.block_dominates(exit, block) {
                return None;
            }
            exit_region.push(block);
        }
    }
    let rest = func
        .layout
        .blocks()
        .filter(|&b| b != header && in_loop(b))
        .collect();
    Some(Plan {
        header,
        body,
        exit,
        exit_region,
        latch: back.block,
        latch_jump: back.inst,
        rest,
    })
}

/// The header's parameters and the results of its instructions.
fn header_values(func: &Function, header: Block) -> HashSet<Value> {
    let dfg = &func.dfg;
    dfg.block_params(header)
        .iter()
        .copied()
        .chain(
            func.layout
                .block_insts(header)
                .flat_map(|i| dfg.inst_results(i).iter().copied()),
        )
        .collect()
}

/// Rotates the loop of `plan`; returns the number of header instructions cloned.
fn rotate(func: &mut Function, plan: &Plan) -> usize {
    let header_values = header_values(func, plan.header);
    let Some(header_term) = func.layout.last_inst(plan.header) else {
        return 0;
    };

    // 1. Header values the rest of the loop reads become parameters of the body, and those
    //    the exit region reads parameters of the exit block, passed by the header's branch.
    pass_as_params(func, header_term, plan.body, &plan.rest, &header_values);
    pass_as_params(
        func,
        header_term,
        plan.exit,
        &plan.exit_region,
        &header_values,
    );

    // 2. The latch computes the header's test on the values it used to jump with, and branches
    //    as the header does.
    let jump_args: Vec<Value> = block_call_values(func, plan.latch_jump);
    let mut clone_of: HashMap<Value, Value> = func
        .dfg
        .block_params(plan.header)
        .iter()
        .copied()
        .zip(jump_args)
        .collect();
    func.layout.remove_inst(plan.latch_jump);
    let header_body: Vec<Inst> = func
        .layout
        .block_insts(plan.header)
        .filter(|&i| i != header_term)
        .collect();
    for &inst in &header_body {
        let copy = func.dfg.clone_inst(inst);
        func.dfg
            .map_inst_values(copy, |v| clone_of.get(&v).copied().unwrap_or(v));
        func.layout.append_inst(copy, plan.latch);
        let pairs: Vec<(Value, Value)> = func
            .dfg
            .inst_results(inst)
            .iter()
            .copied()
            .zip(func.dfg.inst_results(copy).iter().copied())
            .collect();
        clone_of.extend(pairs);
    }
    let Some((arg, blocks)) = brif(func, header_term) else {
        return header_body.len();
    };
    let mapped = |v: Value| clone_of.get(&v).copied().unwrap_or(v);
    let cond = mapped(arg);
    let [then_call, else_call] = blocks;
    let then_block = then_call.block(&func.dfg.value_lists);
    let else_block = else_call.block(&func.dfg.value_lists);
    let then_args: Vec<BlockArg> = then_call
        .args(&func.dfg.value_lists)
        .map(|a| map_arg(a, mapped))
        .collect();
    let else_args: Vec<BlockArg> = else_call
        .args(&func.dfg.value_lists)
        .map(|a| map_arg(a, mapped))
        .collect();
    FuncCursor::new(func)
        .at_bottom(plan.latch)
        .ins()
        .brif(cond, then_block, &then_args, else_block, &else_args);
    header_body.len()
}

/// Makes the header values that `region` reads parameters of `to` (which dominates `region`),
/// passed by `header_term`'s edge to `to`, and rewrites `region` to read the parameters.
fn pass_as_params(
    func: &mut Function,
    header_term: Inst,
    to: Block,
    region: &[Block],
    header_values: &HashSet<Value>,
) {
    let mut needed: Vec<Value> = Vec::new();
    // The instructions that read a header value: the only ones rewritten below.
    let mut readers: Vec<Inst> = Vec::new();
    for &block in region {
        for inst in func.layout.block_insts(block) {
            // No operand is an alias (see `rotate_loops_resolved`).
            let mut reads = false;
            for_each_operand(func, inst, |v| {
                if header_values.contains(&v) {
                    reads = true;
                    if !needed.contains(&v) {
                        needed.push(v);
                    }
                }
            });
            if reads {
                readers.push(inst);
            }
        }
    }
    if needed.is_empty() {
        return;
    }
    let mut to_param: HashMap<Value, Value> = HashMap::default();
    for &v in &needed {
        let ty = func.dfg.value_type(v);
        let param = func.dfg.append_block_param(to, ty);
        to_param.insert(v, param);
        append_edge_arg(func, header_term, to, v);
    }
    for inst in readers {
        func.dfg
            .map_inst_values(inst, |v| to_param.get(&v).copied().unwrap_or(v));
    }
}

fn map_arg(arg: BlockArg, f: impl Fn(Value) -> Value) -> BlockArg {
    match arg {
        BlockArg::Value(v) => BlockArg::Value(f(v)),
        other => other,
    }
}

/// The value arguments of a `jump`'s single edge.
fn block_call_values(func: &Function, jump: Inst) -> Vec<Value> {
    let dfg = &func.dfg;
    dfg.insts[jump]
        .branch_destination(&dfg.jump_tables, &dfg.exception_tables)
        .iter()
        .flat_map(|c| c.args(&dfg.value_lists).collect::<Vec<_>>())
        .filter_map(|a| a.as_value())
        .collect()
}
