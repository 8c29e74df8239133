//! `source`: the identity schedule. Every pick is the earliest ready node in source order,
//! which reproduces the original order exactly.

use crate::sched::registry::StrategyEntry;
use crate::sched::{Pick, ReadySet, Reason, SchedView, Strategy};

/// The identity strategy.
#[derive(Debug, Default)]
pub struct Source;

impl Strategy for Source {
    fn pick(&mut self, ready: &ReadySet, _view: &SchedView<'_>) -> Pick {
        ready.pick_first(Reason::SourceOrder)
    }
}

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "source",
    summary: "identity: keep the front end's order",
    make: |_| Box::new(Source),
};
