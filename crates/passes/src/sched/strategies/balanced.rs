//! `balanced`: one default for every target, whose behaviour follows the target's machine
//! model (never the kernel).
//!
//! * **Out-of-order cores** (the model has a reorder buffer: x86_64's Zen 3, AArch64's
//!   ThunderX2, s390x's z13): the hardware hides the latency of a load issued right before its
//!   use, so the schedule spends nothing on latency and everything on registers —
//!   `remat-loads`' order: each load of never-written memory copied to each use and placed
//!   right before it (on x86_64 and s390x it folds into its user as a memory operand). This
//!   keeps MD5's loop free of spills on x86_64 and AArch64.
//! * **In-order cores** ([`MachineModel::in_order`](crate::sched::MachineModel::in_order):
//!   riscv64's SiFive U74): nothing reorders what the schedule leaves exposed, so the order
//!   must cover the latencies itself — `latency-pressure`'s cascade: critical path within the
//!   register budget, slack work just in time (each load about one step ahead of its use),
//!   pressure relief above the budget.
//!
//! The choice is made per block from [`SchedView::model`], so the same strategy object serves
//! any target.

use super::latency_pressure::LatencyPressure;
use super::remat_loads::RematLoads;
use crate::sched::registry::StrategyEntry;
use crate::sched::{NodeId, Pick, ReadySet, Reason, SchedView, Strategy};

/// `remat-loads` on out-of-order cores, `latency-pressure` on in-order ones.
#[derive(Debug, Default)]
pub struct Balanced {
    /// The order used on out-of-order cores.
    out_of_order: RematLoads,
    /// The order used on in-order cores.
    in_order: LatencyPressure,
    /// The current block's model is in-order.
    use_in_order: bool,
}

impl Balanced {
    fn active(&mut self) -> &mut dyn Strategy {
        if self.use_in_order {
            &mut self.in_order
        } else {
            &mut self.out_of_order
        }
    }

    fn active_ref(&self) -> &dyn Strategy {
        if self.use_in_order {
            &self.in_order
        } else {
            &self.out_of_order
        }
    }
}

impl Strategy for Balanced {
    fn remat_loads(&self) -> bool {
        // Both orders work on rematerialised loads.
        true
    }

    fn binds_to_user(&self, view: &SchedView<'_>, node: NodeId) -> bool {
        self.active_ref().binds_to_user(view, node)
    }

    fn init_block(&mut self, view: &SchedView<'_>) {
        self.use_in_order = view.model.in_order;
        self.active().init_block(view);
    }

    fn pick(&mut self, ready: &ReadySet, view: &SchedView<'_>) -> Pick {
        self.active().pick(ready, view)
    }

    fn static_priority(&self) -> Option<Vec<(u32, Reason)>> {
        self.active_ref().static_priority()
    }

    fn scheduled(&mut self, node: NodeId, view: &SchedView<'_>) {
        self.active().scheduled(node, view);
    }
}

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "balanced",
    summary: "per machine model: remat-loads' order on out-of-order cores, latency-pressure on \
              in-order cores",
    make: |_| Box::new(Balanced::default()),
};
