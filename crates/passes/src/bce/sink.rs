//! Sinking the values merging creates out of loops they are not used in.
//!
//! [`super::merge`] computes a narrowed bound `max(bound - span, 0)` and a widened base
//! `sext(base)` once, next to the definition of `bound` or `base`. When that definition is a
//! function parameter (or computed in the entry block), the new value lives from the entry to
//! its last use — across every loop in between, although no instruction there reads it.
//! squareToLen's `z[zlen-1]` checks after its last loop made `sext(zlen)` live through the
//! nested `mulAdd` loops, and the left shift's narrowed bound did the same: two more values in
//! a nest where x86_64 already had more live values than registers.
//!
//! This is the "schedule late" half of Click's global code motion ("Global Code Motion /
//! Global Value Numbering", PLDI 1995), restricted to the pure instructions merging created:
//! an instruction moves to the latest block that dominates all its uses and has the smallest
//! loop depth on the dominator-tree path between its block and that latest block. It moves
//! only when the path crosses a loop the value is not used in (a block on the path is deeper
//! in loops than the chosen block); otherwise it stays where merging put it, so a function
//! without such a loop (MD5) keeps its exact IR. Moving down the dominator tree keeps every
//! operand's definition dominating its use, and the instructions are pure (`iconst`, `iadd`,
//! `smax`, `sextend`), so nothing observable changes.

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::entity::{SecondaryMap, packed_option::PackedOption};
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{Block, Function, Inst, Value};
use cranelift_codegen::loop_analysis::LoopAnalysis;
use rustc_hash::FxHashMap as HashMap;

/// Moves each of `insts` (pure, single-result, listed in creation order: operands before
/// users) to the latest loop-shallowest block dominating its uses, where that takes it out of
/// a loop it is not used in. Returns how many instructions moved.
pub fn sink_out_of_loops(func: &mut Function, insts: &[Inst]) -> usize {
    if insts.is_empty() {
        return 0;
    }
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let mut loops = LoopAnalysis::new();
    loops.compute(func, &cfg, &domtree);
    let depth = |b: Block| loops.loop_level(b).level();

    // Defining instruction of each candidate result; a dense map, looked up for every operand
    // of the function (the JIT compiles through here: no hashing per operand).
    let mut defined_by: SecondaryMap<Value, PackedOption<Inst>> = SecondaryMap::new();
    for &inst in insts {
        if let Some(&v) = func.dfg.inst_results(inst).first() {
            defined_by[v] = inst.into();
        }
    }
    // Users of each candidate's result, found in one pass over the function.
    let mut users: HashMap<Inst, Vec<Inst>> = HashMap::default();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            super::recognize::for_each_operand(func, inst, |v| {
                if let Some(def) = defined_by.get(v).and_then(|d| d.expand()) {
                    users.entry(def).or_default().push(inst);
                }
            });
        }
    }

    let mut moved = 0;
    // Users first: an operand's latest block depends on where its users went.
    for &inst in insts.iter().rev() {
        let Some(home) = func.layout.inst_block(inst) else {
            continue;
        };
        let uses = users.get(&inst).map(Vec::as_slice).unwrap_or(&[]);
        let mut use_blocks = uses.iter().filter_map(|&u| func.layout.inst_block(u));
        let Some(first) = use_blocks.next() else {
            continue;
        };
        let Some(latest) = use_blocks.try_fold(first, |a, b| common_dominator(&domtree, a, b))
        else {
            continue;
        };
        // The dominator-tree path from `latest` up to `home`; the chosen block is the latest
        // one with the smallest loop depth, and the move pays only if the path above it (to
        // `home`) runs through a deeper loop.
        let Some(path) = dominator_path(&domtree, latest, home) else {
            continue;
        };
        let Some((at, best)) = path
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(i, b)| (depth(b), i))
        else {
            continue;
        };
        let crosses_loop = path[at..].iter().any(|&b| depth(b) > depth(best));
        if best == home || !crosses_loop {
            continue;
        }
        let Some(before) = func
            .layout
            .block_insts(best)
            .find(|i| uses.contains(i))
            .or_else(|| func.layout.last_inst(best))
        else {
            continue;
        };
        func.layout.remove_inst(inst);
        func.layout.insert_inst(inst, before);
        moved += 1;
    }
    moved
}

/// The nearest block dominating both `a` and `b`.
fn common_dominator(domtree: &DominatorTree, a: Block, b: Block) -> Option<Block> {
    let mut block = a;
    while !domtree.block_dominates(block, b) {
        block = domtree.idom(block)?;
    }
    Some(block)
}

/// The blocks from `bottom` up the dominator tree to `top`, both included (`None` if `top`
/// does not dominate `bottom`).
fn dominator_path(domtree: &DominatorTree, bottom: Block, top: Block) -> Option<Vec<Block>> {
    let mut path = vec![bottom];
    let mut block = bottom;
    while block != top {
        block = domtree.idom(block)?;
        path.push(block);
    }
    Some(path)
}
