//! `optimal`: the exact schedule of [`crate::sched::optimum`] — per block the shortest order
//! whose working set fits the registers, or, when none does, the order of lowest peak
//! pressure — each proven optimal or within a stated gap of a proven bound.
//!
//! The warm start is every other built-in strategy's order for the block (a trial run of the
//! driver each, `shuffle` excepted); blocks already solved come from the cache
//! ([`optimum::cache`]); the limits per problem are a deterministic effort budget
//! (`SCHEDLAB_OPTIMUM_EFFORT`) and a wall-clock bound (`SCHEDLAB_OPTIMUM_SECONDS`), as
//! [`SolveLimits::from_env`] reads them.
//! The picks replay the solved order; the driver places the constants and checks every pick.

use crate::sched::driver::trial_block;
use crate::sched::optimum::{self, BlockOptimum, BlockProblem, SolveLimits};
use crate::sched::registry::{STRATEGIES, StrategyEntry};
use crate::sched::{NodeId, Pick, ReadySet, Reason, SchedView, ScheduleOptions, Strategy};
use cranelift_codegen::ir::Block;

/// Replays each block's exact schedule.
#[derive(Debug)]
pub struct Optimal {
    limits: SolveLimits,
    /// The current block's order (DAG nodes, constants left out) and the next to place.
    order: Vec<NodeId>,
    /// Nodes of the current block's DAG.
    nodes: usize,
    /// Every block's optimum so far, in scheduling order.
    solved: Vec<(Block, BlockOptimum)>,
}

impl Optimal {
    /// With the limits from the environment ([`SolveLimits::from_env`]).
    pub fn new() -> Self {
        Self::with_limits(SolveLimits::from_env())
    }

    /// With explicit limits.
    pub fn with_limits(limits: SolveLimits) -> Self {
        Optimal {
            limits,
            order: Vec::new(),
            nodes: 0,
            solved: Vec::new(),
        }
    }

    /// Every block's optimum, in scheduling order.
    pub fn solved(&self) -> &[(Block, BlockOptimum)] {
        &self.solved
    }
}

impl Default for Optimal {
    fn default() -> Self {
        Self::new()
    }
}

/// The heuristic strategies' orders for the block `view` shows, as free-node indices.
fn heuristic_orders(view: &SchedView<'_>, problem: &BlockProblem) -> Vec<Vec<u32>> {
    let mut index = vec![u32::MAX; view.dag.len()];
    for (i, n) in problem.nodes.iter().enumerate() {
        index[n.index()] = i as u32;
    }
    STRATEGIES
        .iter()
        .filter(|e| e.name != ENTRY.name && e.name != "shuffle")
        .filter_map(|entry| {
            let mut strategy = (entry.make)(&ScheduleOptions::default());
            strategy.init_block(view);
            let finished = trial_block(view, strategy.as_mut()).ok()?;
            Some(
                finished
                    .order()
                    .iter()
                    .map(|n| index[n.index()])
                    .filter(|&i| i != u32::MAX)
                    .collect(),
            )
        })
        .collect()
}

impl Strategy for Optimal {
    fn init_block(&mut self, view: &SchedView<'_>) {
        let problem = BlockProblem::from_view(view);
        let solved = optimum::cache::lookup(&problem).unwrap_or_else(|| {
            let candidates = heuristic_orders(view, &problem);
            let solved = optimum::solve(&problem, &candidates, self.limits);
            optimum::cache::store(&problem, &solved);
            solved
        });
        self.order = solved
            .schedule()
            .iter()
            .map(|&i| problem.nodes[i as usize])
            .collect();
        self.nodes = view.dag.len();
        self.solved.push((view.dag.block(), solved));
    }

    /// The solved order as ranks: the driver picks the ready node of lowest rank, so a legal
    /// order is replayed exactly, and an illegal one could only ever yield a legal order.
    fn static_priority(&self) -> Option<Vec<(u32, Reason)>> {
        let mut ranks = vec![(u32::MAX, REASON); self.nodes];
        for (at, n) in self.order.iter().enumerate() {
            ranks[n.index()].0 = at as u32;
        }
        // Constants are never offered; they rank after every free node.
        let unranked = ranks.iter_mut().filter(|r| r.0 == u32::MAX);
        for (rank, r) in (self.order.len() as u32..).zip(unranked) {
            r.0 = rank;
        }
        Some(ranks)
    }

    fn pick(&mut self, ready: &ReadySet, _view: &SchedView<'_>) -> Pick {
        // Not called: `static_priority` decides every pick.
        ready.pick_first(REASON)
    }
}

/// The reason every pick records.
const REASON: Reason = Reason::Custom("optimal");

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "optimal",
    summary: "exact: shortest order within the register budget (else lowest pressure), by CP",
    make: |_| Box::new(Optimal::new()),
};
