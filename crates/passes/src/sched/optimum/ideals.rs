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

use super::effort::Stop;
use super::search_state::{LiveValues, SearchLimits};
use super::{Answer, BlockProblem, Def, issue_at};
use std::collections::HashSet;

/// The answer to one question: an order with peak at most `k`, none (every ideal was
/// visited), or too many ideals or the stop was reached.
pub type Reach = Answer;

/// The search state: the placed set and the live count it implies.
struct Search<'a> {
    problem: &'a BlockProblem,
    k: u32,
    prefer: Prefer,
    /// Per node: the longest latency path from its issue to the block's end.
    tail: Vec<u32>,
    /// Per node: its predecessors `(from, latency)`; per placed node, its issue cycle.
    preds: Vec<Vec<(u32, u32)>>,
    issue: Vec<u32>,
    /// The in-order issue model's state: the current cycle and the slots used in it.
    cycle: u32,
    issued: u32,
    placed: Vec<u64>,
    order: Vec<u32>,
    values: LiveValues<'a>,
    /// Per node: predecessors not yet placed.
    waiting: Vec<u32>,
    succs: Vec<Vec<u32>>,
    /// Ideals left without reaching the end.
    dead: HashSet<Vec<u64>>,
    limits: SearchLimits,
}

/// Which ready node the search tries first. The answer does not depend on it (every ideal
/// that fits is reachable either way); the order found, and how soon, does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prefer {
    /// The node that leaves the fewest values live (the pressure question).
    FewestLive,
    /// The node with the longest tail (own latency plus the longest latency path below it),
    /// then the fewest live: a critical-path list schedule kept within `k`.
    LongestTail,
    /// The node that issues earliest on the in-order issue model (operands ready, a slot
    /// left), then the longest tail, then the fewest live: a list schedule that stalls as
    /// little as it can while every point stays within `k` (the length problem's orders within
    /// the register budget).
    EarliestIssue,
}

/// Is there an order of `problem` whose peak pressure is at most `k`? At most `max_ideals`
/// ideals are remembered, and the search stops at `stop`.
pub fn order_within(problem: &BlockProblem, k: u32, max_ideals: usize, stop: Stop) -> Reach {
    order_within_preferring(problem, k, max_ideals, stop, Prefer::FewestLive)
}

/// [`order_within`], trying ready nodes in the order `prefer` gives.
pub fn order_within_preferring(
    problem: &BlockProblem,
    k: u32,
    max_ideals: usize,
    stop: Stop,
    prefer: Prefer,
) -> Reach {
    if problem.entry_pressure() > k {
        return Reach::Proven;
    }
    let n = problem.len();
    let mut waiting = vec![0u32; n];
    let mut succs = vec![Vec::new(); n];
    for &(a, b, _) in &problem.edges {
        waiting[b as usize] += 1;
        succs[a as usize].push(b);
    }
    let (_, tail) = super::head_and_tail(problem);
    let mut search = Search {
        problem,
        k,
        prefer,
        tail,
        preds: problem.preds(),
        issue: vec![0; n],
        cycle: 0,
        issued: 0,
        placed: vec![0; n.div_ceil(64)],
        order: Vec::with_capacity(n),
        values: LiveValues::new(problem),
        waiting,
        succs,
        dead: HashSet::new(),
        limits: SearchLimits::new(max_ideals, stop, n),
    };
    let found = search.extend();
    search.limits.answer(found, search.order)
}

impl Search<'_> {
    /// Whether every node can be placed from here with every point at most `k`.
    fn extend(&mut self) -> bool {
        let n = self.problem.len();
        if self.order.len() == n {
            return true;
        }
        if self.dead.contains(&self.placed) {
            return false;
        }
        if self.limits.give_up(self.dead.len()) {
            return false;
        }
        // Ready nodes whose two points fit, in the preferred order.
        let mut next: Vec<([u32; 3], usize)> = (0..n)
            .filter(|&u| self.waiting[u] == 0 && self.placed[u / 64] & (1 << (u % 64)) == 0)
            .filter(|&u| self.values.live + self.values.constants_started(u) <= self.k)
            .map(|u| (self.values.after(u), u))
            .filter(|&(after, _)| after <= self.k)
            .map(|(after, u)| {
                let longest = u32::MAX - self.tail[u];
                let key = match self.prefer {
                    Prefer::FewestLive => [after, 0, 0],
                    Prefer::LongestTail => [longest, after, 0],
                    Prefer::EarliestIssue => [self.issue_cycle(u), longest, after],
                };
                (key, u)
            })
            .collect();
        next.sort_unstable();
        for (key, u) in next {
            let after = match self.prefer {
                Prefer::FewestLive => key[0],
                Prefer::LongestTail => key[1],
                Prefer::EarliestIssue => key[2],
            };
            let before = (self.values.live, self.cycle, self.issued);
            self.place(u, after);
            if self.extend() {
                return true;
            }
            self.unplace(u, before);
            if self.limits.gave_up {
                return false;
            }
        }
        self.dead.insert(self.placed.clone());
        false
    }

    /// The cycle `u` issues at when placed next.
    fn issue_cycle(&self, u: usize) -> u32 {
        self.preds[u]
            .iter()
            .map(|&(p, l)| self.issue[p as usize] + l)
            .fold(self.cycle, u32::max)
    }

    fn place(&mut self, u: usize, after: u32) {
        let at = self.issue_cycle(u);
        issue_at(
            &mut self.cycle,
            &mut self.issued,
            at,
            self.problem.issue_width,
        );
        self.issue[u] = at;
        self.values.place(u, after);
        for &s in &self.succs[u] {
            self.waiting[s as usize] -= 1;
        }
        self.placed[u / 64] |= 1 << (u % 64);
        self.order.push(u as u32);
    }

    fn unplace(&mut self, u: usize, (live, cycle, issued): (u32, u32, u32)) {
        self.cycle = cycle;
        self.issued = issued;
        self.values.unplace(u, live);
        for &s in &self.succs[u] {
            self.waiting[s as usize] += 1;
        }
        self.placed[u / 64] &= !(1 << (u % 64));
        self.order.pop();
    }
}

/// The sub-problem of the positions `at..at + len` of the legal `order`, every other node
/// kept in place: values started before the window are live on its entry (idle when the
/// window does not read them), values read after it or live out are live out of it. Its
/// pressure at every point is the whole order's at the same point. Returns the problem and
/// the window's nodes (local index → node).
pub fn window(
    problem: &BlockProblem,
    order: &[u32],
    at: usize,
    len: usize,
) -> (BlockProblem, Vec<u32>) {
    let n = problem.len();
    let end = (at + len).min(n);
    // Per node: -1 before the window, its local index in it, or `usize::MAX` after it.
    let mut place = vec![Place::After; n];
    for &u in &order[..at] {
        place[u as usize] = Place::Before;
    }
    let nodes: Vec<u32> = order[at..end].to_vec();
    for (local, &u) in nodes.iter().enumerate() {
        place[u as usize] = Place::In(local as u32);
    }
    let mut sub = BlockProblem {
        nodes: nodes.iter().map(|&u| problem.nodes[u as usize]).collect(),
        latency: nodes.iter().map(|&u| problem.latency[u as usize]).collect(),
        edges: Vec::new(),
        values: Vec::new(),
        idle: problem.idle,
        issue_width: problem.issue_width,
        register_budget: problem.register_budget,
    };
    for &(a, b, l) in &problem.edges {
        if let (Place::In(x), Place::In(y)) = (place[a as usize], place[b as usize]) {
            // Edges go forward in the legal order, so x < y.
            sub.edges.push((x, y, l));
        }
    }
    sub.edges.sort_unstable();
    for v in &problem.values {
        let users: Vec<u32> = v
            .users
            .iter()
            .filter_map(|&u| match place[u as usize] {
                Place::In(x) => Some(x),
                _ => None,
            })
            .collect();
        let read_after = v.live_out || v.users.iter().any(|&u| place[u as usize] == Place::After);
        let started_before = match v.def {
            super::Def::Entry => true,
            super::Def::Node(d) => place[d as usize] == Place::Before,
            super::Def::FirstUse => v.users.iter().any(|&u| place[u as usize] == Place::Before),
        };
        let def = match v.def {
            _ if started_before => Def::Entry,
            super::Def::Node(d) => match place[d as usize] {
                Place::In(x) => Def::Node(x),
                _ => continue, // defined after the window
            },
            _ if users.is_empty() => continue, // a constant first read after the window
            _ => Def::FirstUse,
        };
        if def == Def::Entry && users.is_empty() {
            sub.idle += u32::from(read_after);
            continue;
        }
        if users.is_empty() && !read_after {
            continue;
        }
        let mut users = users;
        users.sort_unstable();
        sub.values.push(super::ValueLife {
            def,
            users,
            live_out: read_after,
        });
    }
    (sub, nodes)
}

/// Where a node sits relative to a window.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Before,
    In(u32),
    After,
}

/// Large-neighbourhood search: windows of `len` positions slide over `order` (half a window
/// at a time), each re-ordered exactly by the search over its ideals to bring every point
/// below the order's peak. When a sweep does not lower the peak, the windows shift by a
/// quarter, then double in size; any improvement starts over. Stops at `stop`. Returns
/// the best order (legal, never worse than `order`).
pub fn improve_by_windows(
    problem: &BlockProblem,
    order: Vec<u32>,
    len: usize,
    stop: Stop,
) -> Vec<u32> {
    let n = problem.len();
    let mut best = order;
    let mut peak = problem.pressure_of(&best);
    let sweeps = [(len, 0), (len, len / 4), (2 * len, 0), (2 * len, len / 2)];
    let mut sweep = 0;
    while !stop.reached() && peak > 0 && sweep < sweeps.len() {
        let (len, offset) = sweeps[sweep];
        let mut current = best.clone();
        let mut at = 0;
        let mut first = true;
        while at < n && !stop.reached() {
            let width = if first && offset > 0 { offset } else { len };
            first = false;
            let (sub, nodes) = window(problem, &current, at, width);
            if sub.pressure_of(&sub.source_order()) >= peak
                && let Reach::Found(local) = order_within(&sub, peak - 1, IDEALS_PER_WINDOW, stop)
            {
                for (i, &x) in local.iter().enumerate() {
                    current[at + i] = nodes[x as usize];
                }
            }
            at += width.div_ceil(2).max(1);
        }
        if problem.is_legal(&current) && problem.pressure_of(&current) < peak {
            peak = problem.pressure_of(&current);
            best = current;
            sweep = 0;
        } else {
            sweep += 1;
        }
    }
    best
}

/// Ideals one window's search may remember.
const IDEALS_PER_WINDOW: usize = 100_000;
