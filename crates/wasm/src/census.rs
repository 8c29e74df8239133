//! Counting Wasmtime's linear-memory bounds checks where they cost most: in innermost loops.
//!
//! Wasmtime emits a check in one of two shapes. With signals-based traps (guard-page mode, for
//! the accesses guard pages do not cover) it is a conditional trap carrying Cranelift's reserved
//! `heap_oob` code (`trapnz`/`trapz`). Without them (explicit mode) a trap instruction cannot be
//! used, so the check is a `brif` to a cold block that calls Wasmtime's `trap` builtin with the
//! code of `MemoryOutOfBounds`, then its `raise` builtin: every check ends a basic block and
//! brings a call into the function. The census counts either shape in the blocks of innermost
//! loops (loops containing no other loop): per iteration when every block of the loop body
//! runs, an upper bound otherwise.

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{Block, Function, InstructionData, Opcode, TrapCode, Value, types};
use cranelift_codegen::loop_analysis::LoopAnalysis;

/// Heap bounds checks in the function and in its innermost loops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapChecks {
    /// Conditional `heap_oob` traps anywhere in the function.
    pub total: usize,
    /// Those in innermost-loop blocks; `None` when the function has no loop.
    pub innermost_loops: Option<usize>,
}

/// The census of `func`.
pub fn heap_checks(func: &Function) -> HeapChecks {
    let is_check = |inst| match func.dfg.insts[inst] {
        InstructionData::CondTrap {
            opcode: Opcode::Trapz | Opcode::Trapnz,
            code,
            ..
        } => code == TrapCode::HEAP_OUT_OF_BOUNDS,
        InstructionData::Brif { blocks, .. } => blocks
            .iter()
            .any(|b| raises_out_of_bounds(func, b.block(&func.dfg.value_lists))),
        _ => false,
    };
    let in_block = |block| {
        func.layout
            .block_insts(block)
            .filter(|&i| is_check(i))
            .count()
    };
    let total = func.layout.blocks().map(in_block).sum();
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let mut loops = LoopAnalysis::new();
    loops.compute(func, &cfg, &domtree);
    if loops.loops().next().is_none() {
        return HeapChecks {
            total,
            innermost_loops: None,
        };
    }
    let innermost = |lp| {
        !loops
            .loops()
            .any(|other| other != lp && loops.loop_parent(other) == Some(lp))
    };
    let in_innermost = func
        .layout
        .blocks()
        .filter(|&b| loops.innermost_loop(b).is_some_and(innermost))
        .map(in_block)
        .sum();
    HeapChecks {
        total,
        innermost_loops: Some(in_innermost),
    }
}

/// Wasmtime's code for an out-of-bounds linear-memory access (`wasmtime_environ::Trap`), as
/// its explicit-mode trap blocks pass it to the `trap` builtin.
const WASMTIME_MEMORY_OUT_OF_BOUNDS: i64 = 1;

/// Whether `block` is an explicit-mode trap block for an out-of-bounds access: cold, ending
/// in a trap, calling a builtin with the `i8` code of `MemoryOutOfBounds`.
fn raises_out_of_bounds(func: &Function, block: Block) -> bool {
    if !func.layout.is_cold(block) {
        return false;
    }
    let code_constant = |v: Value| {
        let Some(inst) = func.dfg.value_def(v).inst() else {
            return false;
        };
        func.dfg.value_type(v) == types::I8
            && matches!(
                func.dfg.insts[inst],
                InstructionData::UnaryImm { opcode: Opcode::Iconst, imm }
                    if imm.bits() == WASMTIME_MEMORY_OUT_OF_BOUNDS
            )
    };
    let insts: Vec<_> = func.layout.block_insts(block).collect();
    let calls_with_code = insts.iter().any(|&i| {
        func.dfg.insts[i].opcode() == Opcode::Call
            && func.dfg.inst_args(i).iter().any(|&a| code_constant(a))
    });
    calls_with_code
        && insts
            .iter()
            .any(|&i| func.dfg.insts[i].opcode() == Opcode::Trap)
}
