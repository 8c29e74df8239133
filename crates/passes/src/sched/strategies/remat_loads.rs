//! `remat-loads`: the driver first copies every load of never-written memory to each of its
//! users (see [`crate::sched::remat`]); the copies are then placed like `sink-loads`, right
//! before the instruction that consumes them — on x86_64 each folds into it as a memory
//! operand, like the hand-written intrinsic's 64 `add reg, [buf + 4k]`.

use super::sink_loads::SinkLoads;
use crate::sched::registry::StrategyEntry;
use crate::sched::{Pick, ReadySet, Reason, SchedView, Strategy};

/// One load per use, right before it.
#[derive(Debug, Default)]
pub struct RematLoads(SinkLoads);

impl Strategy for RematLoads {
    fn remat_loads(&self) -> bool {
        true
    }

    fn init_block(&mut self, view: &SchedView<'_>) {
        self.0.init_block(view);
    }

    fn pick(&mut self, ready: &ReadySet, view: &SchedView<'_>) -> Pick {
        self.0.pick(ready, view)
    }

    fn static_priority(&self) -> Option<Vec<(u32, Reason)>> {
        self.0.static_priority()
    }
}

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "remat-loads",
    summary: "copy each load of never-written memory to each use, right before it",
    make: |_| Box::new(RematLoads::default()),
};
