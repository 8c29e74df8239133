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
//! The state after a prefix is the placed set, the cycle, the slots used in it and the ready
//! cycle of every unplaced node; every state left without success is remembered, so none is
//! searched twice. Asked from the lower bound upward, the first `target` answered with an order
//! is the minimum, every one answered "none" a proven bound. For small blocks (the `.clif`
//! corpus's length problems) the CP model's search can stall where this one settles.

use super::search_state::{LiveValues, SearchLimits};
use super::{Answer, BlockProblem, issue_at};
use std::collections::HashSet;
use std::time::Instant;

/// The answer to one question: an order within the cap and at most the target length, none
/// (every state was visited), or too many states or the deadline passed.
pub type Timed = Answer;

/// Is there an order of `problem` with peak pressure at most `cap` and length at most
/// `target`? At most `max_states` failed states are remembered; the search stops at `deadline`.
pub fn order_within(
    problem: &BlockProblem,
    cap: u32,
    target: u32,
    max_states: usize,
    deadline: Option<Instant>,
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
        dead: HashSet::new(),
        limits: SearchLimits::new(max_states, deadline),
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
    /// States left without success: placed set, cycle, slots used, ready cycles.
    dead: HashSet<Vec<u32>>,
    limits: SearchLimits,
}

impl Search<'_> {
    fn state(&self) -> Vec<u32> {
        let n = self.placed.len();
        let mut key = Vec::with_capacity(n.div_ceil(32) + 2 + n);
        for chunk in self.placed.chunks(32) {
            key.push(
                chunk
                    .iter()
                    .enumerate()
                    .fold(0u32, |w, (i, &p)| w | (u32::from(p) << i)),
            );
        }
        key.push(self.cycle);
        key.push(self.issued);
        // Ready cycles at or below the current cycle all mean "now".
        key.extend(
            (0..n)
                .filter(|&u| !self.placed[u])
                .map(|u| self.ready[u].max(self.cycle)),
        );
        key
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
        if self.dead.contains(&key) {
            return false;
        }
        if self.limits.give_up(self.dead.len()) {
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
