//! `list-latency`: classic top-down list scheduling. Prefer a candidate whose operands are
//! available in the current cycle of the in-order issue model, then the longest
//! latency-weighted path to the end of the block (critical-path height), then source order.

use crate::sched::ready::latency_criteria;
use crate::sched::registry::StrategyEntry;
use crate::sched::{Pick, ReadySet, SchedView, Strategy};

/// Critical path first.
#[derive(Debug, Default)]
pub struct ListLatency;

impl Strategy for ListLatency {
    fn pick(&mut self, ready: &ReadySet, view: &SchedView<'_>) -> Pick {
        ready.pick_by(|a, b| latency_criteria(view, a, b))
    }
}

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "list-latency",
    summary: "top-down list scheduling by critical-path height, avoiding stalls",
    make: |_| Box::new(ListLatency),
};
