//! What the ideal search ([`super::ideals`]) and the timed one ([`super::timed`]) share: the
//! live-value count as they place a block's nodes one at a time, and how far they may go.

use super::effort::{self, Stop};
use super::{Answer, BlockProblem, Def};

/// How far a search may go: until it remembers `max_failed` failed states, or `stop`.
pub(super) struct SearchLimits {
    max_failed: usize,
    stop: Stop,
    /// Effort units each visit costs.
    per_visit: u64,
    visits: u64,
    /// Whether a limit was reached.
    pub gave_up: bool,
}

impl SearchLimits {
    /// Nothing searched yet, on a block of `nodes` free nodes.
    pub fn new(max_failed: usize, stop: Stop, nodes: usize) -> Self {
        Self {
            max_failed,
            stop,
            per_visit: effort::per_state(nodes),
            visits: 0,
            gave_up: false,
        }
    }

    /// Counts a visit; whether the search gives up now, with `failed` failed states
    /// remembered (the effort is checked every visit, the clock every 1024).
    pub fn give_up(&mut self, failed: usize) -> bool {
        self.visits += 1;
        effort::spend(self.per_visit);
        if failed >= self.max_failed
            || self.stop.effort_reached()
            || (self.visits.is_multiple_of(1024) && self.stop.reached())
        {
            self.gave_up = true;
        }
        self.gave_up
    }

    /// The search's answer: `order` if it `found` one, else whether it proved there is none.
    pub fn answer(&self, found: bool, order: Vec<u32>) -> Answer {
        if found {
            Answer::Found(order)
        } else if self.gave_up {
            Answer::GaveUp
        } else {
            Answer::Proven
        }
    }
}

/// Per node the values it reads and defines, per value its readers not yet placed, and the
/// number of values live at the current point.
pub(super) struct LiveValues<'a> {
    problem: &'a BlockProblem,
    reads: Vec<Vec<usize>>,
    defines: Vec<u32>,
    /// Per value: readers not yet placed.
    remaining: Vec<u32>,
    /// Values live at the current point.
    pub live: u32,
}

impl<'a> LiveValues<'a> {
    /// Nothing placed yet: the values live on entry.
    pub fn new(problem: &'a BlockProblem) -> Self {
        let (reads, defines) = problem.reads_and_defines();
        Self {
            problem,
            reads,
            defines,
            remaining: problem.readers(),
            live: problem.entry_pressure(),
        }
    }

    /// Values started by `u` right before it (its constants not yet placed).
    pub fn constants_started(&self, u: usize) -> u32 {
        self.reads[u]
            .iter()
            .filter(|&&v| {
                let life = &self.problem.values[v];
                life.def == Def::FirstUse && self.remaining[v] == life.users.len() as u32
            })
            .count() as u32
    }

    /// The live count right after `u`, placed next.
    pub fn after(&self, u: usize) -> u32 {
        let mut live = self.live + self.constants_started(u) + self.defines[u];
        for &v in &self.reads[u] {
            if self.remaining[v] == 1 && !self.problem.values[v].live_out {
                live -= 1;
            }
        }
        live
    }

    /// Places `u`, after which `after` values are live.
    pub fn place(&mut self, u: usize, after: u32) {
        for &v in &self.reads[u] {
            self.remaining[v] -= 1;
        }
        self.live = after;
    }

    /// Takes `u` back; `live` values were live before it.
    pub fn unplace(&mut self, u: usize, live: u32) {
        for &v in &self.reads[u] {
            self.remaining[v] += 1;
        }
        self.live = live;
    }
}
