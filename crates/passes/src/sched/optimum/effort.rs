//! Deterministic effort: the work a solve has done, counted in units that do not depend on the
//! machine's speed or load, and the points at which a phase stops ([`Stop`]).
//!
//! **Unit.** Roughly one node or arc touched: a state visited by a search over ideals or with
//! issue times costs the block's free nodes / 4 (at least 1); a minimum cut costs the nodes
//! and arcs of its flow network; building a constraint model costs one unit per node pair or
//! value it looks at; one decision or conflict of the constraint solver (one poll of its
//! termination condition) costs the model's size / 16 (size: the variables and literals its
//! constraints read). On the corpus (notes/optimal.md) a solve spends 1–40 million units per
//! wall second, most near 3 million, on a loaded 2-core machine.
//!
//! The meter is per thread: a solve runs on one thread from start to end, so the same inputs
//! and the same budget reach the same point of every search, whatever else the machine runs.
//! A wall-clock deadline stays beside the budget as an outer safety bound; a solve that reaches
//! it first is no longer reproducible.

use std::cell::Cell;
use std::time::{Duration, Instant};

thread_local! {
    static SPENT: Cell<u64> = const { Cell::new(0) };
}

/// Units spent on this thread so far (a reading of a counter that only grows).
pub fn spent() -> u64 {
    SPENT.with(Cell::get)
}

/// Counts `units` of work on this thread.
pub fn spend(units: u64) {
    SPENT.with(|s| s.set(s.get().saturating_add(units)));
}

/// The cost of one state of a search over a block of `nodes` free nodes (see the module
/// documentation).
pub fn per_state(nodes: usize) -> u64 {
    (nodes as u64 / 4).max(1)
}

/// Where a phase stops: when this thread's meter reaches a reading, or at a deadline, whichever
/// comes first (either may be absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// The meter reading at which to stop.
    effort_at: Option<u64>,
    /// The wall-clock safety bound.
    deadline: Option<Instant>,
}

impl Stop {
    /// Never stops.
    pub const NEVER: Stop = Stop {
        effort_at: None,
        deadline: None,
    };

    /// Stops at `deadline` only.
    pub fn at(deadline: Instant) -> Stop {
        Stop {
            effort_at: None,
            deadline: Some(deadline),
        }
    }

    /// Stops once `effort` more units (none: no effort limit) are spent or `time` has passed,
    /// counted from now.
    pub fn from_now(effort: Option<u64>, time: Duration) -> Stop {
        Stop {
            effort_at: effort.map(|e| spent().saturating_add(e)),
            deadline: Some(Instant::now() + time),
        }
    }

    /// Whether the phase must stop now (reads the clock when there is a deadline).
    pub fn reached(&self) -> bool {
        self.effort_reached() || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Whether the effort budget is spent (no clock read).
    pub fn effort_reached(&self) -> bool {
        self.effort_at.is_some_and(|e| spent() >= e)
    }

    /// The earlier of the two stops, limit by limit.
    pub fn min(self, other: Stop) -> Stop {
        fn earlier<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        }
        Stop {
            effort_at: earlier(self.effort_at, other.effort_at),
            deadline: earlier(self.deadline, other.deadline),
        }
    }

    /// `num / den` of what is left before this stop, from now (limit by limit).
    pub fn share_of_rest(self, num: u32, den: u32) -> Stop {
        let now = Instant::now();
        let at = spent();
        Stop {
            effort_at: self
                .effort_at
                .map(|e| at + e.saturating_sub(at) / u64::from(den) * u64::from(num)),
            deadline: self
                .deadline
                .map(|d| now + d.saturating_duration_since(now) * num / den),
        }
    }
}

/// One problem's budget, measured from its start: phases get fractions of it.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    start: Instant,
    start_effort: u64,
    effort: Option<u64>,
    time: Duration,
}

impl Budget {
    /// A budget of `effort` units (none: unlimited) and `time`, starting now.
    pub fn starting_now(effort: Option<u64>, time: Duration) -> Budget {
        Budget {
            start: Instant::now(),
            start_effort: spent(),
            effort,
            time,
        }
    }

    /// Stops at `num / den` of the budget, counted from its start.
    pub fn share(&self, num: u32, den: u32) -> Stop {
        Stop {
            effort_at: self
                .effort
                .map(|e| self.start_effort + e / u64::from(den) * u64::from(num)),
            deadline: Some(self.start + self.time * num / den),
        }
    }

    /// Stops at the end of the budget.
    pub fn whole(&self) -> Stop {
        self.share(1, 1)
    }

    /// Wall time since the start.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}

/// The constraint solver's termination condition: every poll (once per decision or conflict)
/// spends `per_poll` units, and the solver stops at `stop`.
pub struct Polls {
    stop: Stop,
    per_poll: u64,
}

impl Polls {
    /// Stops at `stop`, each poll costing `per_poll` units.
    pub fn new(stop: Stop, per_poll: u64) -> Polls {
        Polls { stop, per_poll }
    }
}

impl pumpkin_core::termination::TerminationCondition for Polls {
    fn should_stop(&mut self) -> bool {
        spend(self.per_poll);
        self.stop.reached()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_stops_count_from_the_meter() {
        let budget = Budget::starting_now(Some(1000), Duration::from_secs(3600));
        let quarter = budget.share(1, 4);
        assert!(!quarter.reached());
        spend(249);
        assert!(!quarter.reached());
        spend(1);
        assert!(quarter.reached());
        assert!(!budget.whole().reached());
        let half_rest = budget.whole().share_of_rest(1, 2);
        spend(374);
        assert!(!half_rest.reached());
        spend(1);
        assert!(half_rest.reached());
        assert!(!Stop::NEVER.reached());
        assert!(Stop::from_now(Some(0), Duration::from_secs(3600)).reached());
    }
}
