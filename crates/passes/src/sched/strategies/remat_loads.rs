//! `remat-loads`: the driver first copies every load of never-written memory to each of its
//! users (see [`crate::sched::remat`]); the copies are then placed like `sink-loads`, right
//! before the instruction that consumes them — on x86_64 each folds into it as a memory
//! operand, like the hand-written intrinsic's 64 `add reg, [buf + 4k]`.
//!
//! [`RematLoads::with_early_updates`] (what `balanced` uses) also places each induction step
//! — a node that the block's terminator passes on and that computes from values live into
//! the block and constants only, like a loop's pointer or counter step — as soon as it is
//! ready and costs no register (its parameter dies with it), instead of in source order at
//! the block's end: the next iteration's loads hang on those steps, and an out-of-order core
//! can only run ahead once they are done (notes/design.md, "One default for every target: `balanced`").

use super::sink_loads::SinkLoads;
use crate::sched::dag::{EdgeKind, Effect};
use crate::sched::registry::StrategyEntry;
use crate::sched::{Pick, ReadySet, Reason, SchedView, Strategy};
use cranelift_codegen::ir::{Block, Function, Inst, Opcode, Value, ValueDef};

/// One load per use, right before it.
#[derive(Debug, Default)]
pub struct RematLoads {
    order: SinkLoads,
    /// Place loop-carried updates early.
    early_updates: bool,
    /// Per node of the current block: whether it is a loop-carried update.
    updates: Vec<bool>,
}

/// Why a loop-carried update was placed before its source position.
pub const EARLY_UPDATE: Reason = Reason::Custom("early-update");

impl RematLoads {
    /// `remat-loads`' order with loop-carried updates placed as early as they cost no
    /// register.
    pub fn with_early_updates() -> Self {
        Self {
            early_updates: true,
            ..Self::default()
        }
    }
}

impl Strategy for RematLoads {
    fn remat_loads(&self) -> bool {
        true
    }

    fn init_block(&mut self, view: &SchedView<'_>) {
        self.order.init_block(view);
        self.updates.clear();
        if self.early_updates {
            let dag = view.dag;
            let terminator = dag.terminator();
            self.updates = dag
                .nodes()
                .map(|n| {
                    dag.node(n).effect == Effect::Pure
                        && !dag.is_load(n)
                        && Some(n) != terminator
                        && dag
                            .succs(n)
                            .any(|(s, e)| e.kind == EdgeKind::Data && Some(s) == terminator)
                        && is_induction_step(view.func, dag.block(), dag.inst(n))
                })
                .collect();
        }
    }

    fn pick(&mut self, ready: &ReadySet, view: &SchedView<'_>) -> Pick {
        if self.early_updates
            && let Some(&n) = ready.nodes().iter().find(|&&n| {
                self.updates.get(n.index()).copied().unwrap_or(false) && view.pressure_delta(n) <= 0
            })
        {
            return Pick::new(n, EARLY_UPDATE);
        }
        self.order.pick(ready, view)
    }

    fn static_priority(&self) -> Option<Vec<(u32, Reason)>> {
        if self.early_updates {
            // The early picks depend on what is live: no fixed priority.
            None
        } else {
            self.order.static_priority()
        }
    }
}

/// Whether `inst` computes from values live into `block` and constants only, at least one
/// live-in among them (what steps a loop variable: `ptr - 4`, `count - 1`).
fn is_induction_step(func: &Function, block: Block, inst: Inst) -> bool {
    let args = func.dfg.inst_args(inst);
    let defined_here = |v: Value| match func.dfg.value_def(v) {
        ValueDef::Result(def, _) => func.layout.inst_block(def) == Some(block),
        ValueDef::Param(b, _) => b == block,
        _ => false,
    };
    let is_constant = |v: Value| match func.dfg.value_def(v) {
        ValueDef::Result(def, _) => func.dfg.insts[def].opcode() == Opcode::Iconst,
        _ => false,
    };
    let live_in =
        |v: Value| !defined_here(v) || matches!(func.dfg.value_def(v), ValueDef::Param(..));
    args.iter().any(|&v| live_in(v) && !is_constant(v))
        && args.iter().all(|&v| live_in(v) || is_constant(v))
}

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "remat-loads",
    summary: "copy each load of never-written memory to each use, right before it",
    make: |_| Box::new(RematLoads::default()),
};
