//! `shuffle`: a seeded random legal order. It exists to test the DAG: any order it produces
//! must compute the same results as the source (LLVM's `-misched=shuffle` serves the same
//! purpose).

use crate::sched::registry::StrategyEntry;
use crate::sched::{Pick, ReadySet, Reason, SchedView, Strategy};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Uniformly random among the ready nodes.
#[derive(Debug)]
pub struct Shuffle {
    rng: StdRng,
}

impl Shuffle {
    /// A shuffle seeded with `seed` (the same seed gives the same schedule).
    pub fn new(seed: u64) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
        }
    }
}

impl Strategy for Shuffle {
    fn pick(&mut self, ready: &ReadySet, _view: &SchedView<'_>) -> Pick {
        let nodes = ready.nodes();
        let i = self.rng.random_range(0..nodes.len());
        Pick::new(nodes[i], Reason::Random)
    }
}

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "shuffle",
    summary: "seeded random legal order (correctness testing)",
    make: |opts| Box::new(Shuffle::new(opts.seed)),
};
