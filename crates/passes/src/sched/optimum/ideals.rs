//! Exact minimum pressure by search over the block's *ideals* (sets of placed nodes closed
//! under predecessors), for blocks whose ideals are few enough to enumerate.
//!
//! The pressure right after a point depends only on the set placed so far, and right before a
//! node only on that set and the node (its constants are placed then): so "is there an order
//! with peak ≤ k?" is reachability from the empty set to the whole block through ideals whose
//! points all stay ≤ k. A depth-first search that remembers every ideal it has left without
//! success visits each ideal at most once; it answers exactly, or gives up past a number of
//! ideals (then the constraint solver takes the question). Small blocks with a narrow DAG —
//! squareToLen's, most of the `.clif` corpus — have a few thousand ideals, where the solver's
//! proof that no order is below the optimum can take seconds.

use super::{BlockProblem, Def};
use std::collections::HashSet;
use std::time::Instant;

/// The answer to one question.
pub enum Reach {
    /// An order with peak at most `k`.
    Found(Vec<u32>),
    /// No order has peak at most `k` (every ideal was visited).
    Proven,
    /// Too many ideals, or the deadline passed.
    GaveUp,
}

/// The search state: the placed set and the live count it implies.
struct Search<'a> {
    problem: &'a BlockProblem,
    k: u32,
    placed: Vec<u64>,
    order: Vec<u32>,
    /// Per value: readers not yet placed.
    remaining: Vec<u32>,
    /// Per node: values it reads, values it defines.
    reads: Vec<Vec<usize>>,
    defines: Vec<u32>,
    /// Per node: predecessors not yet placed.
    waiting: Vec<u32>,
    succs: Vec<Vec<u32>>,
    live: u32,
    /// Ideals left without reaching the end.
    dead: HashSet<Vec<u64>>,
    max_ideals: usize,
    deadline: Option<Instant>,
    gave_up: bool,
    visits: u64,
}

/// Is there an order of `problem` whose peak pressure is at most `k`? At most `max_ideals`
/// ideals are remembered, and the search stops at `deadline`.
pub fn order_within(
    problem: &BlockProblem,
    k: u32,
    max_ideals: usize,
    deadline: Option<Instant>,
) -> Reach {
    if problem.entry_pressure() > k {
        return Reach::Proven;
    }
    let n = problem.len();
    let mut reads = vec![Vec::new(); n];
    let mut defines = vec![0u32; n];
    for (v, life) in problem.values.iter().enumerate() {
        if let Def::Node(d) = life.def {
            defines[d as usize] += 1;
        }
        for &u in &life.users {
            reads[u as usize].push(v);
        }
    }
    let mut waiting = vec![0u32; n];
    let mut succs = vec![Vec::new(); n];
    for &(a, b, _) in &problem.edges {
        waiting[b as usize] += 1;
        succs[a as usize].push(b);
    }
    let mut search = Search {
        problem,
        k,
        placed: vec![0; n.div_ceil(64)],
        order: Vec::with_capacity(n),
        remaining: problem
            .values
            .iter()
            .map(|v| v.users.len() as u32)
            .collect(),
        reads,
        defines,
        waiting,
        succs,
        live: problem.entry_pressure(),
        dead: HashSet::new(),
        max_ideals,
        deadline,
        gave_up: false,
        visits: 0,
    };
    if search.extend() {
        Reach::Found(search.order)
    } else if search.gave_up {
        Reach::GaveUp
    } else {
        Reach::Proven
    }
}

impl Search<'_> {
    /// Values started by `u` right before it (its constants not yet placed).
    fn constants_started(&self, u: usize) -> u32 {
        self.reads[u]
            .iter()
            .filter(|&&v| {
                let life = &self.problem.values[v];
                life.def == Def::FirstUse && self.remaining[v] == life.users.len() as u32
            })
            .count() as u32
    }

    /// The live count right after `u`, placed next.
    fn after(&self, u: usize) -> u32 {
        let mut live = self.live + self.constants_started(u) + self.defines[u];
        for &v in &self.reads[u] {
            if self.remaining[v] == 1 && !self.problem.values[v].live_out {
                live -= 1;
            }
        }
        live
    }

    /// Whether every node can be placed from here with every point at most `k`.
    fn extend(&mut self) -> bool {
        let n = self.problem.len();
        if self.order.len() == n {
            return true;
        }
        if self.dead.contains(&self.placed) {
            return false;
        }
        self.visits += 1;
        if self.dead.len() >= self.max_ideals
            || (self.visits % 1024 == 0 && self.deadline.is_some_and(|d| Instant::now() >= d))
        {
            self.gave_up = true;
            return false;
        }
        // Ready nodes whose two points fit, fewest live after first.
        let mut next: Vec<(u32, usize)> = (0..n)
            .filter(|&u| self.waiting[u] == 0 && self.placed[u / 64] & (1 << (u % 64)) == 0)
            .filter(|&u| self.live + self.constants_started(u) <= self.k)
            .map(|u| (self.after(u), u))
            .filter(|&(after, _)| after <= self.k)
            .collect();
        next.sort_unstable();
        for (after, u) in next {
            let before = self.live;
            self.place(u, after);
            if self.extend() {
                return true;
            }
            self.unplace(u, before);
            if self.gave_up {
                return false;
            }
        }
        self.dead.insert(self.placed.clone());
        false
    }

    fn place(&mut self, u: usize, after: u32) {
        for &v in &self.reads[u] {
            self.remaining[v] -= 1;
        }
        for &s in &self.succs[u] {
            self.waiting[s as usize] -= 1;
        }
        self.placed[u / 64] |= 1 << (u % 64);
        self.order.push(u as u32);
        self.live = after;
    }

    fn unplace(&mut self, u: usize, live: u32) {
        for &v in &self.reads[u] {
            self.remaining[v] += 1;
        }
        for &s in &self.succs[u] {
            self.waiting[s as usize] += 1;
        }
        self.placed[u / 64] &= !(1 << (u % 64));
        self.order.pop();
        self.live = live;
    }
}
