//! Ready times and use counts shared by the rewrites.

use crate::sched::MachineModel;
use cranelift_codegen::entity::{SecondaryMap, packed_option::PackedOption};
use cranelift_codegen::ir::{Block, Function, Inst, Opcode, Value};

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

/// Ready time (cycle) of each value, dense by value number; values never written are 0.
pub type ReadyTimes = SecondaryMap<Value, u32>;

/// Whether no instruction in `func`'s layout reads an alias (what `resolve_all_aliases`
/// leaves): the precondition of the `*_resolved` entry points, checked in debug builds.
pub(crate) fn reads_no_alias(func: &Function) -> bool {
    let dfg = &func.dfg;
    func.layout.blocks().all(|block| {
        func.layout
            .block_insts(block)
            .all(|inst| dfg.inst_values(inst).all(|v| !dfg.value_is_alias(v)))
    })
}

/// How a pass reads an operand: through `resolve_aliases`, or as it stands when no
/// instruction of the layout reads an alias (the precondition of the `*_resolved` entry
/// points, checked in debug builds) — a call into Cranelift per operand saved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Aliases {
    /// Operands may be aliases: each is resolved.
    Resolve,
    /// No operand in the layout is an alias: read them as they are.
    NoneRead,
}

impl Aliases {
    /// The value `v` stands for.
    #[inline]
    pub(crate) fn resolve(self, func: &Function, v: Value) -> Value {
        match self {
            Aliases::Resolve => func.dfg.resolve_aliases(v),
            Aliases::NoneRead => v,
        }
    }
}

/// An empty [`ReadyTimes`] sized for every value `func` has now (it still grows for values
/// created later), so that filling it does not reallocate.
pub(crate) fn ready_map(func: &Function) -> ReadyTimes {
    let mut ready = ReadyTimes::with_capacity(func.dfg.num_values());
    ready.resize(func.dfg.num_values());
    ready
}

/// Records the ready time of `inst`'s results: the latest operand plus its latency.
pub fn note_ready(func: &Function, inst: Inst, latency: LatencyFn<'_>, ready: &mut ReadyTimes) {
    let done = ready_time(func, inst, latency, |v| ready[func.dfg.resolve_aliases(v)]);
    for &r in func.dfg.inst_results(inst) {
        ready[r] = done;
    }
}

/// [`note_ready`] into a [`BlockReadyTimes`], reading the operands as `aliases` says.
pub(crate) fn note_ready_with(
    func: &Function,
    inst: Inst,
    latency: LatencyFn<'_>,
    ready: &mut BlockReadyTimes,
    aliases: Aliases,
) {
    let done = ready_time(func, inst, latency, |v| ready[aliases.resolve(func, v)]);
    for &r in func.dfg.inst_results(inst) {
        ready.set(r, done);
    }
}

/// When `inst`'s results are ready: its latest operand (as `ready_of` reads it) plus its
/// latency.
fn ready_time(
    func: &Function,
    inst: Inst,
    latency: LatencyFn<'_>,
    ready_of: impl Fn(Value) -> u32,
) -> u32 {
    let start = func
        .dfg
        .inst_args(inst)
        .iter()
        .map(|&v| ready_of(v))
        .max()
        .unwrap_or(0);
    start + latency(func, inst)
}

/// The cycle at which each value defined in `block` is ready if every instruction issues as
/// soon as its operands are (values from outside the block are ready at cycle 0).
pub fn ready_times(func: &Function, block: Block, latency: LatencyFn<'_>) -> ReadyTimes {
    let mut ready = ready_map(func);
    for inst in func.layout.block_insts(block) {
        note_ready(func, inst, latency, &mut ready);
    }
    ready
}

/// Ready times of one block at a time, as [`ready_times`] gives them (values from outside the
/// block read 0), in one map reused from block to block: moving on to the next block resets
/// only the values written for the last one, where a fresh map per block would clear every
/// value of the function once per block.
pub(crate) struct BlockReadyTimes {
    times: ReadyTimes,
    /// The values written since the last reset.
    written: Vec<Value>,
}

impl BlockReadyTimes {
    /// An empty map sized for every value `func` has now.
    pub(crate) fn new(func: &Function) -> Self {
        Self {
            times: ready_map(func),
            written: Vec::new(),
        }
    }

    /// Forgets every time written so far: each value reads 0 again.
    pub(crate) fn next_block(&mut self) {
        for v in self.written.drain(..) {
            self.times[v] = 0;
        }
    }

    /// Starts `block` afresh ([`BlockReadyTimes::next_block`]) and fills in the ready times
    /// of its values as [`ready_times`] computes them.
    pub(crate) fn compute_block(&mut self, func: &Function, block: Block, latency: LatencyFn<'_>) {
        self.next_block();
        for inst in func.layout.block_insts(block) {
            note_ready_with(func, inst, latency, self, Aliases::Resolve);
        }
    }

    fn set(&mut self, v: Value, time: u32) {
        self.times[v] = time;
        self.written.push(v);
    }
}

impl std::ops::Index<Value> for BlockReadyTimes {
    type Output = u32;

    fn index(&self, v: Value) -> &u32 {
        &self.times[v]
    }
}

/// Uses of each value (instruction and branch arguments) and, for values used exactly once,
/// the using instruction.
pub(crate) struct Uses {
    /// How many times each value is used.
    pub count: SecondaryMap<Value, u32>,
    /// The user of a value used once (or of its last use).
    pub user: SecondaryMap<Value, PackedOption<Inst>>,
}

/// Counts the uses of every value in `func`, reading the operands as `aliases` says.
pub(crate) fn use_counts_with(func: &Function, aliases: Aliases) -> Uses {
    let values = func.dfg.num_values();
    let mut uses = Uses {
        count: SecondaryMap::with_capacity(values),
        user: SecondaryMap::with_capacity(values),
    };
    uses.count.resize(values);
    uses.user.resize(values);
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            crate::bce::recognize::for_each_operand(func, inst, |v| {
                let v = aliases.resolve(func, v);
                uses.count[v] += 1;
                uses.user[v] = inst.into();
            });
        }
    }
    uses
}
