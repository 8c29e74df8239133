//! `hoist-loads`: Graal's placement of floating reads. Every load goes as early as its
//! dependences allow — at the top of its block, after the address computations and stores it
//! needs — and everything else keeps its source order.

use crate::sched::registry::StrategyEntry;
use crate::sched::{DepDag, NodeId, Pick, ReadySet, Reason, SchedView, Strategy};

/// Loads first.
#[derive(Debug, Default)]
pub struct HoistLoads {
    /// Per node: whether some load depends on it. Every ancestor of a placed load is placed,
    /// so for an unplaced node this means "feeds a load still to be placed".
    feeds_load: Vec<bool>,
}

fn loads_fed(dag: &DepDag) -> Vec<bool> {
    let mut feeds = vec![false; dag.len()];
    let mut stack: Vec<NodeId> = dag.nodes().filter(|&n| dag.is_load(n)).collect();
    while let Some(n) = stack.pop() {
        for (p, _) in dag.preds(n) {
            if !std::mem::replace(&mut feeds[p.index()], true) {
                stack.push(p);
            }
        }
    }
    feeds
}

impl Strategy for HoistLoads {
    fn init_block(&mut self, view: &SchedView<'_>) {
        self.feeds_load = loads_fed(view.dag);
    }

    fn pick(&mut self, ready: &ReadySet, view: &SchedView<'_>) -> Pick {
        if let Some(load) = ready.nodes().iter().copied().find(|&n| view.dag.is_load(n)) {
            return Pick::new(load, Reason::LoadFirst);
        }
        if let Some(feeder) = ready
            .nodes()
            .iter()
            .copied()
            .find(|&n| self.feeds_load[n.index()])
        {
            return Pick::new(feeder, Reason::FeedsLoad);
        }
        ready.pick_first(Reason::SourceOrder)
    }
}

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "hoist-loads",
    summary: "Graal's placement: every load at the top of its block, the rest in source order",
    make: |_| Box::new(HoistLoads::default()),
};
