//! Lazy slow paths: the checked loop a predicated function keeps for inputs that fail the
//! preheader test becomes a call to code compiled on first need.
//!
//! Loop predication ([`crate::bce::predicate`]) normally leaves two copies of a loop: the
//! check-free copy and the original checked loop for inputs the preheader test cannot prove
//! safe. A JIT compiling both pays twice for a loop that valid inputs never run. HotSpot's C2
//! compiles only the fast copy and leaves through an uncommon trap when a predicate fails;
//! `bce::run` with a [`SlowPathCall`] in its options does the same over Cranelift IR. When nothing
//! before the loop writes memory or calls out ([`check_restartable`]), the function is a pure
//! function of its arguments up to the preheader test, so the failing edge may restart the
//! whole computation elsewhere: it goes to a block ([`call_block`]) that calls
//! `callee(context, args...)` with the function's own arguments and returns what that returns.
//! The loop itself then loses its checks in place — no copy is made — and the blocks only the
//! failing checks reached are deleted ([`remove_unreachable`]). The callee (the JIT's
//! trampoline) compiles the checked function on first use and runs it.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::entity::EntitySet;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    AbiParam, Block, Function, Inst, InstBuilder, InstructionData, Signature, types,
};
use cranelift_codegen::isa::CallConv;

/// The call that replaces a checked loop: `callee(context, args...) -> returns`, where `args`
/// are the function's own parameters and `returns` its own results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SlowPathCall {
    /// Address of the function to call.
    pub callee: u64,
    /// A pointer-sized value passed as the first argument (the callee's state).
    pub context: u64,
    /// The callee's calling convention.
    pub call_conv: CallConv,
}

impl SlowPathCall {
    /// A call to address 0 with context 0: for code that is compiled to be measured (spills,
    /// size, llvm-mca), never run.
    pub fn placeholder(call_conv: CallConv) -> Self {
        Self {
            callee: 0,
            context: 0,
            call_conv,
        }
    }
}

/// Why a loop's slow path cannot be a restart from the entry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeoptError {
    /// The path from the entry to the loop is not one straight chain of jumps.
    #[error("{0} is not reached from the entry by one straight chain of jumps")]
    BranchyPrefix(Block),
    /// Something before the loop has an effect a restart would repeat.
    #[error("`{0}` runs before the loop and has a side effect")]
    SideEffect(String),
}

/// Checks that the entry reaches the jump `branch` through one chain of jumps whose
/// instructions neither write memory nor call out, so that running them again from the entry
/// with the same arguments changes nothing and computes the same values.
pub fn check_restartable(func: &Function, branch: Inst) -> Result<(), DeoptError> {
    let cfg = ControlFlowGraph::with_function(func);
    let entry = func.layout.entry_block();
    let mut block = func
        .layout
        .inst_block(branch)
        .expect("branch is in the layout");
    if !matches!(func.dfg.insts[branch], InstructionData::Jump { .. }) {
        return Err(DeoptError::BranchyPrefix(block));
    }
    let mut end = branch;
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

/// Appends a block without parameters that calls `call` with the entry block's parameters and
/// returns the results.
pub fn call_block(func: &mut Function, call: &SlowPathCall) -> Block {
    let sig = slow_path_signature(func, call.call_conv);
    let sig_ref = func.import_signature(sig);
    let entry = func
        .layout
        .entry_block()
        .expect("a function with a loop has an entry");
    let args: Vec<_> = func.dfg.block_params(entry).to_vec();
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
    cold
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

/// Deletes the blocks the entry no longer reaches; returns how many blocks and instructions.
pub fn remove_unreachable(func: &mut Function) -> (usize, usize) {
    let (mut blocks, mut insts) = (0, 0);
    let Some(entry) = func.layout.entry_block() else {
        return (0, 0);
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
            insts += 1;
        }
        func.layout.remove_block(block);
        blocks += 1;
    }
    (blocks, insts)
}
