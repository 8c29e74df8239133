//! Ready times and use counts shared by the rewrites.

use crate::sched::MachineModel;
use cranelift_codegen::ir::{Block, Function, Inst, Opcode, Value};
use std::collections::HashMap;

/// Latency in cycles of an instruction (the scheduler's machine model).
pub type LatencyFn<'a> = &'a dyn Fn(&Function, Inst) -> u32;

/// A latency model where every operation takes one cycle, a load four and a constant none
/// (constants become immediates); for tests and as a neutral default.
pub fn unit_latency(func: &Function, inst: Inst) -> u32 {
    match func.dfg.insts[inst].opcode() {
        Opcode::Iconst => 0,
        op if op.can_load() => 4,
        _ => 1,
    }
}

/// The scheduler's latency table for `model`, with constants free (they become immediates).
pub fn model_latency(model: &MachineModel) -> impl Fn(&Function, Inst) -> u32 + '_ {
    move |func, inst| match func.dfg.insts[inst].opcode() {
        Opcode::Iconst => 0,
        _ => model.latency(func, inst),
    }
}

/// The cycle at which each value defined in `block` is ready if every instruction issues as
/// soon as its operands are (values from outside the block are ready at cycle 0).
pub fn ready_times(func: &Function, block: Block, latency: LatencyFn<'_>) -> HashMap<Value, u32> {
    let mut ready = HashMap::new();
    for inst in func.layout.block_insts(block) {
        let start = func
            .dfg
            .inst_args(inst)
            .iter()
            .map(|v| {
                ready
                    .get(&func.dfg.resolve_aliases(*v))
                    .copied()
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        let done = start + latency(func, inst);
        for &r in func.dfg.inst_results(inst) {
            ready.insert(r, done);
        }
    }
    ready
}

/// How many times each value is used, by instruction arguments and branch arguments.
pub(crate) fn use_counts(func: &Function) -> HashMap<Value, usize> {
    let mut uses = HashMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for v in func.dfg.inst_values(inst) {
                *uses.entry(func.dfg.resolve_aliases(v)).or_insert(0) += 1;
            }
        }
    }
    uses
}
