//! `pressure`: register-pressure-aware list scheduling in the manner of LLVM's
//! `GenericScheduler` and Goodman–Hsu's integrated prepass scheduling. Candidates are compared
//! through an ordered cascade:
//!
//! 1. **excess** — the fewest live values above the register budget (the model's allocatable
//!    integer registers) after the pick: below the budget this keeps picks within it
//!    (`keep-pressure`);
//! 2. at or above the budget, the largest drop in live values (`reduce-pressure`), then
//!    source order; below it, **latency** — no stall, then the longest critical path, exactly
//!    like `list-latency`;
//! 3. **source order**.
//!
//! So latency rules while registers are plentiful and pressure rules when they run out. An
//! earlier version kept the latency criteria above the budget too; on MD5 it filled every
//! stall with a constant or a load and doubled the live values (31 → 75 on x86_64).

use crate::sched::ready::{latency_criteria, prefer_smaller};
use crate::sched::registry::StrategyEntry;
use crate::sched::{NodeId, Pick, ReadySet, Reason, SchedView, Strategy};
use std::cmp::Ordering;

/// Latency within the register budget, pressure beyond it.
#[derive(Debug, Default)]
pub struct Pressure {
    /// Also rematerialise loads of never-written memory first (`pressure-remat`).
    pub remat: bool,
}

/// Compares `a` against `b` on the pressure cascade.
pub fn pressure_criteria(view: &SchedView<'_>, a: NodeId, b: NodeId) -> Option<(Ordering, Reason)> {
    let limit = view.register_limit() as isize;
    let live = view.live() as isize;
    let excess = |n: NodeId| (live + view.pressure_delta(n) - limit).max(0);
    let reason = if live >= limit {
        Reason::ReducePressure
    } else {
        Reason::KeepPressure
    };
    let by_excess = prefer_smaller(excess(a), excess(b), reason);
    if live >= limit {
        // Over budget: the pick that frees the most, and otherwise source order — chasing
        // latency here would fill stalls with new live values (constants, loads).
        by_excess.or_else(|| prefer_smaller(view.pressure_delta(a), view.pressure_delta(b), reason))
    } else {
        by_excess.or_else(|| latency_criteria(view, a, b))
    }
}

impl Strategy for Pressure {
    fn remat_loads(&self) -> bool {
        self.remat
    }

    fn pick(&mut self, ready: &ReadySet, view: &SchedView<'_>) -> Pick {
        ready.pick_by(|a, b| pressure_criteria(view, a, b))
    }
}

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "pressure",
    summary: "latency-first while live values fit the registers, pressure-reducing beyond",
    make: |_| Box::new(Pressure { remat: false }),
};
