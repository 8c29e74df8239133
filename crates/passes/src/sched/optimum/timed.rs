//! Exact minimum length within a pressure cap, by search over ideals with issue times.
//!
//! "Is there an order with every point at most `cap` live values and length at most `target`?"
//! A depth-first search places one ready node at a time, as the in-order issue model issues it
//! (operands ready, a slot left in the cycle), and backtracks when a point would exceed the
//! cap or when a lower bound on the length from here exceeds `target`:
//!
//! * every node not yet placed issues no earlier than its operands allow — the current cycle,
//!   the issue cycles of its placed predecessors plus the latencies, and the same bound of its
//!   unplaced predecessors — and then its tail (own latency and the longest path below) still
//!   has to elapse;
//! * of the `k` unplaced nodes with the longest tails, the last issued takes at least
//!   `⌊(issued + k − 1) / W⌋` more cycles, then its tail.
//!
//! The state after a prefix is the placed set, the issue position (cycle and slots used in it)
//! and the ready cycle of every unplaced node. Every state left without success is remembered,
//! and a state is not searched when a remembered one with the same placed set is at least as
//! early in every respect: the issue model is monotone (a node issues at
//! `max(ready, cycle)`, its successors become ready that much later, and the live values
//! depend on the placed set only), so any completion of the later state replays from the
//! earlier one with no issue later and the same pressures — it would have succeeded there. Asked from the lower bound upward, the first `target` answered with an order
//! is the minimum, every one answered "none" a proven bound. For small blocks (the `.clif`
//! corpus's length problems) the CP model's search can stall where this one settles.

use super::effort::Stop;
use super::search_state::{LiveValues, SearchLimits};
use super::symmetry::Symmetry;
use super::{Answer, BlockProblem, issue_at};
use std::collections::HashMap;

/// The answer to one question: an order within the cap and at most the target length, none
/// (every state was visited), or too many states or the stop was reached.
pub type Timed = Answer;

/// Is there an order of `problem` with peak pressure at most `cap` and length at most
/// `target`? At most `max_states` failed states are remembered; the search stops at `stop`.
pub fn order_within(
    problem: &BlockProblem,
    cap: u32,
    target: u32,
    max_states: usize,
    stop: Stop,
) -> Timed {
    if problem.entry_pressure() > cap {
        return Timed::Proven;
    }
    let n = problem.len();
    let (_, tail) = super::head_and_tail(problem);
    let mut search = Search {
        problem,
        cap,
        target,
        tail,
        preds: problem.preds(),
        succs: problem.succs(),
        values: LiveValues::new(problem),
        waiting: problem.preds().iter().map(|p| p.len() as u32).collect(),
        ready: vec![0; n],
        placed: vec![false; n],
        order: Vec::with_capacity(n),
        cycle: 0,
        issued: 0,
        dead: DeadStates::default(),
        symmetry: Symmetry::of(problem),
        limits: SearchLimits::new(max_states, stop, n),
    };
    let found = search.extend();
    search.limits.answer(found, search.order)
}

/// The search state.
struct Search<'a> {
    problem: &'a BlockProblem,
    cap: u32,
    target: u32,
    tail: Vec<u32>,
    preds: Vec<Vec<(u32, u32)>>,
    succs: Vec<Vec<(u32, u32)>>,
    values: LiveValues<'a>,
    /// Per node: predecessors not yet placed; the earliest cycle its placed ones allow.
    waiting: Vec<u32>,
    ready: Vec<u32>,
    placed: Vec<bool>,
    order: Vec<u32>,
    cycle: u32,
    issued: u32,
    /// States left without success.
    dead: DeadStates,
    /// Interchangeable subtrees: states are remembered in canonical form.
    symmetry: Symmetry,
    limits: SearchLimits,
}

impl Search<'_> {
    /// The current state: placed set, issue position, ready cycles of the unplaced nodes, in
    /// the canonical form of its symmetry class.
    fn state(&self) -> DeadState {
        // Per node 0 when placed, else its ready cycle (at or below the current cycle all
        // mean "now") plus one.
        let mut codes: Vec<u32> = (0..self.placed.len())
            .map(|u| {
                if self.placed[u] {
                    0
                } else {
                    self.ready[u].max(self.cycle).saturating_add(1)
                }
            })
            .collect();
        self.symmetry.canonicalise(&mut codes);
        let placed = codes
            .chunks(32)
            .map(|chunk| {
                chunk
                    .iter()
                    .enumerate()
                    .fold(0u32, |w, (i, &c)| w | (u32::from(c == 0) << i))
            })
            .collect();
        codes.retain(|&c| c != 0);
        let width = self.problem.issue_width.max(1);
        DeadState {
            placed,
            position: u64::from(self.cycle) * u64::from(width) + u64::from(self.issued),
            ready: codes,
        }
    }

    /// A lower bound on the length of every completion of the current prefix.
    fn completion_bound(&self) -> u32 {
        let n = self.placed.len();
        let mut earliest = vec![0u32; n];
        let mut tails = Vec::new();
        let mut bound = 0;
        // Indices are a topological order.
        for u in (0..n).filter(|&u| !self.placed[u]) {
            let e = self.preds[u]
                .iter()
                .filter(|&&(p, _)| !self.placed[p as usize])
                .map(|&(p, l)| earliest[p as usize] + l)
                .fold(self.ready[u].max(self.cycle), u32::max);
            earliest[u] = e;
            bound = bound.max(e + self.tail[u]);
            tails.push(self.tail[u]);
        }
        tails.sort_unstable_by(|a, b| b.cmp(a));
        let w = self.problem.issue_width.max(1);
        for (k, &t) in tails.iter().enumerate() {
            bound = bound.max(self.cycle + (self.issued + k as u32) / w + t);
        }
        bound
    }

    fn extend(&mut self) -> bool {
        let n = self.placed.len();
        if self.order.len() == n {
            return true;
        }
        if self.completion_bound() > self.target {
            return false;
        }
        let key = self.state();
        if self.dead.dominates(&key) {
            return false;
        }
        if self.limits.give_up(self.dead.len) {
            return false;
        }
        // Ready nodes whose points fit and whose own latency ends in time: earliest issue,
        // then longest tail, then fewest live.
        let mut next: Vec<([u32; 3], usize)> = (0..n)
            .filter(|&u| !self.placed[u] && self.waiting[u] == 0)
            .filter(|&u| self.values.live + self.values.constants_started(u) <= self.cap)
            .map(|u| (self.values.after(u), u))
            .filter(|&(after, _)| after <= self.cap)
            .map(|(after, u)| {
                let at = self.ready[u].max(self.cycle);
                ([at, u32::MAX - self.tail[u], after], u)
            })
            .filter(|&([at, _, _], u)| at + self.tail[u] <= self.target)
            .collect();
        next.sort_unstable();
        for ([at, _, after], u) in next {
            let saved = (self.values.live, self.cycle, self.issued);
            let readied: Vec<u32> = self.succs[u]
                .iter()
                .map(|&(s, _)| self.ready[s as usize])
                .collect();
            self.place(u, at, after);
            if self.extend() {
                return true;
            }
            self.unplace(u, saved, &readied);
            if self.limits.gave_up {
                return false;
            }
        }
        self.dead.insert(key);
        false
    }

    fn place(&mut self, u: usize, at: u32, after: u32) {
        issue_at(
            &mut self.cycle,
            &mut self.issued,
            at,
            self.problem.issue_width,
        );
        for &(s, l) in &self.succs[u] {
            let s = s as usize;
            self.ready[s] = self.ready[s].max(at + l);
            self.waiting[s] -= 1;
        }
        self.values.place(u, after);
        self.placed[u] = true;
        self.order.push(u as u32);
    }

    fn unplace(&mut self, u: usize, (live, cycle, issued): (u32, u32, u32), readied: &[u32]) {
        for (&(s, _), &r) in self.succs[u].iter().zip(readied) {
            self.ready[s as usize] = r;
            self.waiting[s as usize] += 1;
        }
        self.values.unplace(u, live);
        self.placed[u] = false;
        self.order.pop();
        self.cycle = cycle;
        self.issued = issued;
    }
}

/// A search state: placed set (bit words), issue position `cycle · width + slots used`, and
/// the ready cycle (at least the current cycle, plus one) of every unplaced node in index
/// order.
struct DeadState {
    placed: Vec<u32>,
    position: u64,
    ready: Vec<u32>,
}

/// The states left without success, grouped by placed set.
#[derive(Default)]
struct DeadStates {
    by_placed: HashMap<Vec<u32>, Vec<(u64, Vec<u32>)>>,
    /// States remembered.
    len: usize,
}

impl DeadStates {
    /// Whether a remembered state with the same placed set is no later than `state` in issue
    /// position and in every ready cycle (then `state` fails too).
    fn dominates(&self, state: &DeadState) -> bool {
        self.by_placed.get(&state.placed).is_some_and(|seen| {
            seen.iter().any(|(position, ready)| {
                *position <= state.position && ready.iter().zip(&state.ready).all(|(a, b)| a <= b)
            })
        })
    }

    /// Remembers `state` as failed, forgetting the states it dominates.
    fn insert(&mut self, state: DeadState) {
        let seen = self.by_placed.entry(state.placed).or_default();
        let before = seen.len();
        seen.retain(|(position, ready)| {
            !(state.position <= *position && state.ready.iter().zip(ready).all(|(a, b)| a <= b))
        });
        seen.push((state.position, state.ready));
        self.len = self.len + seen.len() - before;
    }
}
