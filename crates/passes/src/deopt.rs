//! Lazy slow paths: the checked loop a predicated function keeps for inputs that fail the
//! preheader test becomes a call to code compiled on first need.
//!
//! Loop predication ([`crate::bce::predicate`]) leaves two copies of a loop: the check-free
//! copy and the original checked loop for inputs the preheader test cannot prove safe. A JIT
//! compiling both pays twice for a loop that valid inputs never run. HotSpot's C2 compiles only
//! the fast copy and leaves through an uncommon trap when the predicate fails; this pass does
//! the same over Cranelift IR. When nothing before the versioning branch writes memory or
//! calls out, the whole function is a pure function of its arguments up to that branch, so the
//! slow edge may restart the computation elsewhere: it becomes a block that calls
//! `callee(context, args...)` with the function's own arguments and returns what it returns.
//! The callee (the JIT's trampoline) compiles the checked function on first use and runs it;
//! the checked loop and everything only it reached are deleted.

use crate::bce::VersionedLoop;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::entity::EntitySet;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    AbiParam, Block, Function, Inst, InstBuilder, InstructionData, Signature, types,
};
use cranelift_codegen::isa::CallConv;

/// The call that replaces a checked loop: `callee(context, args...) -> returns`, where `args`
/// are the function's own parameters and `returns` its own results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowPathCall {
    /// Address of the function to call.
    pub callee: u64,
    /// A pointer-sized value passed as the first argument (the callee's state).
    pub context: u64,
    /// The callee's calling convention.
    pub call_conv: CallConv,
}

/// What outlining did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeoptStats {
    /// Versioned loops whose checked copy became a call.
    pub loops_outlined: usize,
    /// Blocks deleted because only the checked copies reached them.
    pub blocks_removed: usize,
    /// Instructions in those blocks.
    pub insts_removed: usize,
}

/// Why a slow path could not be outlined; the function is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeoptError {
    /// Bounds-check elimination versioned no loop (the function has no slow path).
    #[error("no versioned loop: run bounds-check elimination with predication first")]
    NothingVersioned,
    /// No block branches to the fast copy or else to the checked loop.
    #[error("no versioning branch selects {fast} or else {checked}")]
    GuardNotFound {
        /// The check-free copy's header.
        fast: Block,
        /// The checked loop's header.
        checked: Block,
    },
    /// The path from the entry to the versioning branch is not one straight chain of blocks.
    #[error("{0} is not reached from the entry by one straight chain of jumps")]
    BranchyPrefix(Block),
    /// Something before the versioning branch has an effect a restart would repeat.
    #[error("`{0}` runs before the versioning branch and has a side effect")]
    SideEffect(String),
}

/// Replaces the checked copy of every loop in `versioned` by a call through `call`.
///
/// All loops are checked first; on error nothing is changed.
pub fn outline_checked_loops(
    func: &mut Function,
    versioned: &[VersionedLoop],
    call: &SlowPathCall,
) -> Result<DeoptStats, DeoptError> {
    if versioned.is_empty() {
        return Err(DeoptError::NothingVersioned);
    }
    let cfg = ControlFlowGraph::with_function(func);
    let guards = versioned
        .iter()
        .map(|v| {
            let guard = find_guard(func, &cfg, v)?;
            check_prefix(func, &cfg, guard)?;
            Ok(guard)
        })
        .collect::<Result<Vec<Inst>, DeoptError>>()?;

    let sig = slow_path_signature(func, call.call_conv);
    let sig_ref = func.import_signature(sig);
    let entry = func
        .layout
        .entry_block()
        .expect("a guard implies an entry block");
    let args: Vec<_> = func.dfg.block_params(entry).to_vec();
    let mut stats = DeoptStats::default();
    for guard in guards {
        let cold = func.dfg.make_block();
        func.layout.append_block(cold);
        let mut cur = FuncCursor::new(func).at_bottom(cold);
        let context = cur.ins().iconst(types::I64, call.context as i64);
        let callee = cur.ins().iconst(types::I64, call.callee as i64);
        let mut call_args = vec![context];
        call_args.extend(&args);
        let inst = cur.ins().call_indirect(sig_ref, callee, &call_args);
        let results = cur.func.dfg.inst_results(inst).to_vec();
        cur.ins().return_(&results);
        let to_cold = func.dfg.block_call(cold, &[]);
        if let InstructionData::Brif { blocks, .. } = &mut func.dfg.insts[guard] {
            blocks[1] = to_cold;
        }
        stats.loops_outlined += 1;
    }
    remove_unreachable(func, &mut stats);
    Ok(stats)
}

/// `(i64 context, params...) -> returns` in `call_conv`.
fn slow_path_signature(func: &Function, call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.push(AbiParam::new(types::I64));
    sig.params.extend(
        func.signature
            .params
            .iter()
            .map(|p| AbiParam::new(p.value_type)),
    );
    sig.returns.extend(
        func.signature
            .returns
            .iter()
            .map(|r| AbiParam::new(r.value_type)),
    );
    sig
}

/// The `brif` that selects `v.fast_header` or else `v.checked_header`.
fn find_guard(
    func: &Function,
    cfg: &ControlFlowGraph,
    v: &VersionedLoop,
) -> Result<Inst, DeoptError> {
    cfg.pred_iter(v.fast_header)
        .map(|p| p.inst)
        .find(|&inst| match &func.dfg.insts[inst] {
            InstructionData::Brif { blocks, .. } => {
                blocks[0].block(&func.dfg.value_lists) == v.fast_header
                    && blocks[1].block(&func.dfg.value_lists) == v.checked_header
            }
            _ => false,
        })
        .ok_or(DeoptError::GuardNotFound {
            fast: v.fast_header,
            checked: v.checked_header,
        })
}

/// Checks that the entry reaches `guard` through one chain of jumps whose instructions
/// neither write memory nor call out, so running them again from the entry changes nothing.
fn check_prefix(func: &Function, cfg: &ControlFlowGraph, guard: Inst) -> Result<(), DeoptError> {
    let entry = func.layout.entry_block();
    let mut block = func
        .layout
        .inst_block(guard)
        .expect("guard is in the layout");
    let mut end = guard;
    for _ in 0..=func.layout.blocks().count() {
        for inst in func.layout.block_insts(block).take_while(|&i| i != end) {
            let op = func.dfg.insts[inst].opcode();
            if op.can_store() || op.is_call() || op.other_side_effects() || op.is_branch() {
                return Err(DeoptError::SideEffect(
                    func.dfg.display_inst(inst).to_string(),
                ));
            }
        }
        if Some(block) == entry {
            return Ok(());
        }
        let mut preds = cfg.pred_iter(block);
        let (Some(pred), None) = (preds.next(), preds.next()) else {
            return Err(DeoptError::BranchyPrefix(block));
        };
        if !matches!(func.dfg.insts[pred.inst], InstructionData::Jump { .. }) {
            return Err(DeoptError::BranchyPrefix(block));
        }
        block = pred.block;
        end = pred.inst;
    }
    Err(DeoptError::BranchyPrefix(block))
}

/// Deletes the blocks the entry no longer reaches.
fn remove_unreachable(func: &mut Function, stats: &mut DeoptStats) {
    let Some(entry) = func.layout.entry_block() else {
        return;
    };
    let mut reached: EntitySet<Block> = EntitySet::new();
    let mut work = vec![entry];
    reached.insert(entry);
    while let Some(block) = work.pop() {
        let Some(term) = func.layout.last_inst(block) else {
            continue;
        };
        for dest in func.dfg.insts[term]
            .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
        {
            let target = dest.block(&func.dfg.value_lists);
            if reached.insert(target) {
                work.push(target);
            }
        }
    }
    let dead: Vec<Block> = func
        .layout
        .blocks()
        .filter(|&b| !reached.contains(b))
        .collect();
    for block in dead {
        while let Some(inst) = func.layout.first_inst(block) {
            func.layout.remove_inst(inst);
            stats.insts_removed += 1;
        }
        func.layout.remove_block(block);
        stats.blocks_removed += 1;
    }
}
