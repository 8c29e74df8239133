//! `latency-pressure`: latency and register pressure together, in the manner of LLVM's
//! `GenericScheduler` (`tryCandidate`: register excess, then critical path, then latency),
//! with work placed just in time rather than as early as possible.
//!
//! Candidates are compared through an ordered cascade:
//!
//! 1. **excess** — the fewest live values above the register budget after the pick (the
//!    target's allocatable integer registers, [`SchedView::register_limit`]); at or above the
//!    budget, then the largest drop in live values (`reduce-pressure`);
//! 2. **just in time** — a node with slack is not issued before `alap - lookahead`, where
//!    `alap = critical path - height` is the latest start that does not lengthen the block's
//!    critical path and `lookahead` is the load latency: a load issues about one dependence
//!    step ahead of its use (as OpenSSL's MD5 does), early enough to cover its latency and
//!    late enough not to occupy a register for longer (`load-ahead`);
//! 3. **latency** — no stall, then the longest critical path (`list-latency`'s criteria);
//! 4. **source order**.
//!
//! Loads of never-written memory are rematerialised first, one copy per use (as for
//! `remat-loads`), and on targets whose ALU instructions take a memory operand (x86_64,
//! s390x) a copy with one user is bound to it: the driver places it right before the user,
//! where code generation folds it (`add reg, [mem]`) and it needs no register at all.
//! Constants are bound to their users by the driver for every strategy.

use crate::sched::ready::{latency_criteria, prefer_smaller};
use crate::sched::registry::StrategyEntry;
use crate::sched::{NodeId, Pick, ReadySet, Reason, SchedView, Strategy};
use std::cmp::Ordering;

/// Latency within the register budget, just-in-time placement, pressure above the budget.
#[derive(Debug, Default)]
pub struct LatencyPressure {
    /// Per node: the cycle before which issuing it is premature.
    release: Vec<u32>,
    /// Loads fold into their users on this target.
    fold_loads: bool,
}

impl LatencyPressure {
    fn premature(&self, view: &SchedView<'_>, n: NodeId) -> bool {
        self.release[n.index()] > view.cycle()
    }

    fn criteria(&self, view: &SchedView<'_>, a: NodeId, b: NodeId) -> Option<(Ordering, Reason)> {
        let limit = view.register_limit() as isize;
        let live = view.live() as isize;
        let excess = |n: NodeId| (live + view.pressure_delta(n) - limit).max(0);
        let over = live >= limit;
        let reason = if over {
            Reason::ReducePressure
        } else {
            Reason::KeepPressure
        };
        prefer_smaller(excess(a), excess(b), reason)
            .or_else(|| {
                over.then(|| prefer_smaller(view.pressure_delta(a), view.pressure_delta(b), reason))
                    .flatten()
            })
            .or_else(|| {
                prefer_smaller(
                    self.premature(view, a),
                    self.premature(view, b),
                    Reason::LoadAhead,
                )
            })
            .or_else(|| latency_criteria(view, a, b))
    }
}

impl Strategy for LatencyPressure {
    fn remat_loads(&self) -> bool {
        true
    }

    fn init_block(&mut self, view: &SchedView<'_>) {
        let dag = view.dag;
        self.fold_loads = view.model.memory_operands();
        let critical = dag.nodes().map(|n| dag.height(n)).max().unwrap_or(0);
        let lookahead = view.model.latencies.load;
        self.release = dag
            .nodes()
            .map(|n| (critical - dag.height(n)).saturating_sub(lookahead))
            .collect();
    }

    fn binds_to_user(&self, view: &SchedView<'_>, node: NodeId) -> bool {
        self.fold_loads && view.dag.is_load(node) && view.dag.data_users(node).len() == 1
    }

    fn pick(&mut self, ready: &ReadySet, view: &SchedView<'_>) -> Pick {
        ready.pick_by(|a, b| self.criteria(view, a, b))
    }
}

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "latency-pressure",
    summary: "critical path within the register budget, slack work just in time (loads one \
              step ahead), pressure relief above it",
    make: |_| Box::new(LatencyPressure::default()),
};
