//! Precedences forced by tight cuts: a lower bound on peak pressure stronger than the single
//! cuts of [`cut`](super::cut), by propagation between points.
//!
//! Suppose some legal order has peak at most `k`. At every point — right after a node `c`, or
//! right before it — the nodes placed so far form a prefix `S` of the kind the cut bound
//! ranges over (closed under the block's edges and under every precedence found so far,
//! which by induction this order keeps), and the network's cut of `S` (auxiliary nodes placed
//! as `S` implies) costs at most the values `S` leaves live, so at most `k` (the cut bound's
//! own argument). Where the
//! minimum cut at that point is exactly `k`, `S` is therefore a *minimum* cut, and minimum cuts
//! form a lattice: every one holds the smallest (what the residual network reaches from the
//! source) and lies within the largest (what cannot reach the sink). So in that order every
//! free node of the smallest minimum cut other than `c` is placed before `c`, and every free
//! node outside the largest is placed after `c`. These precedences hold in *every* order with
//! peak at most `k`; added to the network as infinite arcs, they can raise the minimum cut at
//! other points to `k` (more precedences) or above `k`, or close a cycle: then no order has
//! peak at most `k`, and `k + 1` is a lower bound.
//!
//! Two nested cuts meet here: the prefixes at two points of one order are nested, and a cut
//! that is tight at one point fixes on which side of the other point a node lies. On SHA-256's
//! loop bodies every single cut stays one below the best order, and the forced precedences
//! refute that value (notes/optimal.md). Checked against exhaustive search on random DAGs
//! (`tests/sched_optimum.rs`): the bound never exceeds the optimum, and every order within the
//! optimum (or one above) keeps every forced precedence.

use super::BlockProblem;
use super::cut::{INFINITE, Network};
use super::effort::{self, Stop};

/// The answer to "can some order have peak at most `k`?" by propagation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forcing {
    /// No order has peak at most `k`.
    Refuted,
    /// Propagation reached a fixed point: the precedences `(before, after)` every order with
    /// peak at most `k` keeps (beside the block's own edges).
    Open(Vec<(u32, u32)>),
    /// The stop was reached first.
    Stopped,
}

/// Ancestor and descendant sets of the free nodes under the block's edges and the forced
/// precedences, kept transitively closed.
struct Closure {
    words: usize,
    ancestors: Vec<u64>,
    descendants: Vec<u64>,
}

impl Closure {
    fn new(n: usize) -> Closure {
        let words = n.div_ceil(64);
        Closure {
            words,
            ancestors: vec![0; n * words],
            descendants: vec![0; n * words],
        }
    }

    fn has(set: &[u64], i: usize) -> bool {
        set[i / 64] & (1 << (i % 64)) != 0
    }

    fn is_ancestor(&self, a: usize, b: usize) -> bool {
        Self::has(&self.ancestors[b * self.words..(b + 1) * self.words], a)
    }

    /// Records `a` before `b`; `false` when `b` is already before `a` (a cycle).
    fn add(&mut self, a: usize, b: usize) -> bool {
        if a == b || self.is_ancestor(b, a) {
            return false;
        }
        let w = self.words;
        let mut above = self.ancestors[a * w..(a + 1) * w].to_vec();
        above[a / 64] |= 1 << (a % 64);
        let mut below = self.descendants[b * w..(b + 1) * w].to_vec();
        below[b / 64] |= 1 << (b % 64);
        for y in members(&below) {
            for (x, add) in self.ancestors[y * w..(y + 1) * w].iter_mut().zip(&above) {
                *x |= add;
            }
        }
        for x in members(&above) {
            for (y, add) in self.descendants[x * w..(x + 1) * w].iter_mut().zip(&below) {
                *y |= add;
            }
        }
        true
    }
}

/// The members of a bit set.
fn members(set: &[u64]) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, &word) in set.iter().enumerate() {
        let mut w = word;
        while w != 0 {
            out.push(i * 64 + w.trailing_zeros() as usize);
            w &= w - 1;
        }
    }
    out
}

/// Is there an order of `problem` with peak pressure at most `k`? Answers [`Forcing::Refuted`]
/// when the precedences forced by the tight cuts (module documentation) raise a cut above `k`
/// or close a cycle; otherwise the forced precedences at the fixed point. Each maximum flow
/// costs the network's nodes and arcs, plus the precedences forced so far, in effort units.
pub fn refute_peak(problem: &BlockProblem, k: u32, stop: Stop) -> Forcing {
    let n = problem.len();
    let network = Network::new(problem);
    let fixed = problem.idle + network.always;
    if problem.entry_pressure() > k || fixed > k {
        return Forcing::Refuted;
    }
    let limit = k - fixed;
    let (source, sink) = network.ends();
    let mut residual = network.residual();
    let mut closure = Closure::new(n);
    let mut preds = network.preds.clone();
    let mut succs = network.succs.clone();
    for &(a, b, _) in &problem.edges {
        closure.add(a as usize, b as usize);
    }
    let mut forced = Vec::new();
    loop {
        let mut changed = false;
        for c in 0..n {
            for after in [true, false] {
                if stop.reached() {
                    return Forcing::Stopped;
                }
                effort::spend(network.cost() + forced.len() as u64);
                let temporary = network.add_point(&mut residual, &preds, &succs, c, after);
                let flow = residual.max_flow(source, sink, limit);
                if flow > limit {
                    return Forcing::Refuted;
                }
                let mut found = Vec::new();
                if flow == limit {
                    // Tight: every order within `k` passes through a minimum cut here.
                    let smallest = residual.reaches(source, true);
                    let outside = residual.reaches(sink, false);
                    // Free nodes of the smallest minimum cut with no successor in it come
                    // before `c`; those outside the largest with no predecessor outside it,
                    // after `c`.
                    for y in 0..n {
                        if y == c {
                            continue;
                        }
                        if smallest[y]
                            && !closure.is_ancestor(y, c)
                            && succs[y].iter().all(|&s| !smallest[s as usize])
                        {
                            found.push((y, c));
                        }
                        if outside[y]
                            && !closure.is_ancestor(c, y)
                            && preds[y].iter().all(|&p| !outside[p as usize])
                        {
                            found.push((c, y));
                        }
                    }
                }
                residual.remove_last(temporary);
                for (a, b) in found {
                    if closure.is_ancestor(a, b) {
                        continue;
                    }
                    if !closure.add(a, b) {
                        return Forcing::Refuted;
                    }
                    residual.add(b, a, INFINITE);
                    preds[b].push(a as u32);
                    succs[a].push(b as u32);
                    forced.push((a as u32, b as u32));
                    changed = true;
                }
            }
        }
        if !changed {
            return Forcing::Open(forced);
        }
    }
}

/// A lower bound on the peak pressure of every order: from `bound` (already proven) upward,
/// each value whose [`refute_peak`] answers [`Forcing::Refuted`] is passed, up to `enough` (an
/// order's pressure) or `stop`.
pub fn forced_pressure_bound(problem: &BlockProblem, bound: u32, enough: u32, stop: Stop) -> u32 {
    let mut bound = bound;
    while bound < enough && refute_peak(problem, bound, stop) == Forcing::Refuted {
        bound += 1;
    }
    bound
}
