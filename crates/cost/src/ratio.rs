//! Maximum cycle ratio of a small weighted graph: over every cycle, the largest
//! `sum(latency) / sum(distance)`.
//!
//! In a loop's dependence graph an edge's *latency* is the cycles from the producer's start to
//! the consumer's earliest start and its *distance* is how many iterations the dependence
//! crosses (0 inside an iteration, 1 across the back edge). The maximum cycle ratio is then
//! the cycles per iteration no core can beat, however wide (the recurrence bound).
//!
//! Method (Lawler's parametric search, cycle-jumping variant): for a candidate ratio `λ`,
//! weights `latency − λ·distance` have a positive cycle exactly when some cycle's ratio exceeds
//! `λ`. A longest-path Bellman–Ford finds such a cycle (checked after every pass as a cycle of
//! the predecessor graph, so it is found early), `λ` jumps to that cycle's exact ratio, and
//! the search repeats until no cycle beats `λ`. Each step strictly raises `λ` to the ratio of a
//! real cycle, so the answer is exact up to floating-point rounding and comes with its
//! critical cycle. A graph of a few thousand edges takes well under a millisecond per step.

/// One dependence: `from` must start `latency` cycles before `to`, `distance` iterations back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioEdge {
    /// Producer node.
    pub from: usize,
    /// Consumer node.
    pub to: usize,
    /// Cycles (non-negative).
    pub latency: f64,
    /// Iterations crossed (0 = same iteration).
    pub distance: u32,
}

/// The answer: the maximum ratio and one cycle attaining it.
#[derive(Clone, Debug, PartialEq)]
pub struct CriticalCycle {
    /// `sum(latency) / sum(distance)` of the cycle.
    pub ratio: f64,
    /// Indices into the edge slice, in cycle order.
    pub edges: Vec<usize>,
}

/// Why no ratio exists.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RatioError {
    /// A cycle of positive latency within one iteration: the graph is not a loop's.
    #[error("a dependence cycle of {latency} cycles crosses no iteration boundary")]
    ZeroDistanceCycle {
        /// The cycle's total latency.
        latency: f64,
    },
    /// An edge names a node that does not exist or has a negative or non-finite latency.
    #[error(
        "edge {index} is invalid (node out of range or latency not a finite non-negative number)"
    )]
    BadEdge {
        /// Index of the edge.
        index: usize,
    },
}

const EPS: f64 = 1e-9;

/// The maximum cycle ratio of the graph with `nodes` nodes, or `None` if it has no cycle.
pub fn max_cycle_ratio(
    nodes: usize,
    edges: &[RatioEdge],
) -> Result<Option<CriticalCycle>, RatioError> {
    for (index, e) in edges.iter().enumerate() {
        if e.from >= nodes || e.to >= nodes || !e.latency.is_finite() || e.latency < 0.0 {
            return Err(RatioError::BadEdge { index });
        }
    }
    let mut best: Option<CriticalCycle> = None;
    let mut lambda = 0.0;
    // Each round raises λ to a strictly larger cycle ratio; the bound on rounds only guards
    // against floating-point stalemates.
    for _ in 0..=edges.len() + 1 {
        let Some(cycle) = positive_cycle(nodes, edges, lambda) else {
            break;
        };
        let latency: f64 = cycle.iter().map(|&i| edges[i].latency).sum();
        let distance: u32 = cycle.iter().map(|&i| edges[i].distance).sum();
        if distance == 0 {
            return Err(RatioError::ZeroDistanceCycle { latency });
        }
        let ratio = latency / f64::from(distance);
        if best.as_ref().is_some_and(|b| ratio <= b.ratio + EPS) {
            break;
        }
        lambda = ratio;
        best = Some(CriticalCycle {
            ratio,
            edges: cycle,
        });
    }
    if best.is_none() {
        // No cycle beats ratio 0: either there is no cycle or every cycle has latency 0.
        if let Some(edges_of_cycle) = any_cycle(nodes, edges) {
            let distance: u32 = edges_of_cycle.iter().map(|&i| edges[i].distance).sum();
            if distance > 0 {
                best = Some(CriticalCycle {
                    ratio: 0.0,
                    edges: edges_of_cycle,
                });
            }
        }
    }
    Ok(best)
}

/// The longest path through the graph when every edge of distance > 0 is dropped (the critical
/// path of one iteration, or of straight-line code). Errors on a zero-distance cycle.
pub fn longest_acyclic_path(nodes: usize, edges: &[RatioEdge]) -> Result<f64, RatioError> {
    let inner: Vec<RatioEdge> = edges.iter().copied().filter(|e| e.distance == 0).collect();
    for (index, e) in inner.iter().enumerate() {
        if e.from >= nodes || e.to >= nodes || !e.latency.is_finite() || e.latency < 0.0 {
            return Err(RatioError::BadEdge { index });
        }
    }
    if let Some(cycle) = positive_cycle(nodes, &inner, 0.0) {
        let latency = cycle.iter().map(|&i| inner[i].latency).sum();
        return Err(RatioError::ZeroDistanceCycle { latency });
    }
    let (dist, _) = relax_to_fixpoint(nodes, &inner, 0.0);
    Ok(dist.into_iter().fold(0.0, f64::max))
}

/// Longest-path distances from a virtual source (0 to every node) under weights
/// `latency − λ·distance`; stops at a fixpoint or after `nodes` passes.
fn relax_to_fixpoint(nodes: usize, edges: &[RatioEdge], lambda: f64) -> (Vec<f64>, bool) {
    let mut dist = vec![0.0f64; nodes];
    for _ in 0..=nodes {
        let mut changed = false;
        for e in edges {
            let w = e.latency - lambda * f64::from(e.distance);
            if dist[e.from] + w > dist[e.to] + EPS {
                dist[e.to] = dist[e.from] + w;
                changed = true;
            }
        }
        if !changed {
            return (dist, true);
        }
    }
    (dist, false)
}

/// A cycle of positive weight under `latency − λ·distance`, as edge indices, if any.
fn positive_cycle(nodes: usize, edges: &[RatioEdge], lambda: f64) -> Option<Vec<usize>> {
    let mut dist = vec![0.0f64; nodes];
    let mut pred: Vec<Option<usize>> = vec![None; nodes];
    for _ in 0..=nodes {
        let mut changed = false;
        for (i, e) in edges.iter().enumerate() {
            let w = e.latency - lambda * f64::from(e.distance);
            if dist[e.from] + w > dist[e.to] + EPS {
                dist[e.to] = dist[e.from] + w;
                pred[e.to] = Some(i);
                changed = true;
            }
        }
        if !changed {
            return None;
        }
        if let Some(cycle) = predecessor_cycle(nodes, edges, &pred) {
            let weight: f64 = cycle
                .iter()
                .map(|&i| edges[i].latency - lambda * f64::from(edges[i].distance))
                .sum();
            if weight > EPS {
                return Some(cycle);
            }
        }
    }
    // Still changing after `nodes` passes: a positive cycle exists; the predecessor graph
    // holds one unless rounding hid it.
    predecessor_cycle(nodes, edges, &pred)
}

/// A cycle in the graph of predecessor edges (each node has at most one), as edge indices
/// in forward order.
fn predecessor_cycle(
    nodes: usize,
    edges: &[RatioEdge],
    pred: &[Option<usize>],
) -> Option<Vec<usize>> {
    // 0 = unvisited, otherwise the walk (1-based) that first reached the node.
    let mut seen = vec![0usize; nodes];
    for start in 0..nodes {
        if seen[start] != 0 {
            continue;
        }
        let walk = start + 1;
        let mut v = start;
        loop {
            if seen[v] == walk {
                // v is on a cycle of this walk: collect it.
                let mut cycle = Vec::new();
                let mut u = v;
                loop {
                    let e = pred[u]?;
                    cycle.push(e);
                    u = edges[e].from;
                    if u == v {
                        break;
                    }
                }
                cycle.reverse();
                return Some(cycle);
            }
            if seen[v] != 0 {
                break;
            }
            seen[v] = walk;
            match pred[v] {
                Some(e) => v = edges[e].from,
                None => break,
            }
        }
    }
    None
}

/// Any cycle of the graph (depth-first search), as edge indices in forward order.
fn any_cycle(nodes: usize, edges: &[RatioEdge]) -> Option<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); nodes];
    for (i, e) in edges.iter().enumerate() {
        out[e.from].push(i);
    }
    // 0 = new, 1 = on the stack, 2 = done.
    let mut state = vec![0u8; nodes];
    let mut via: Vec<Option<usize>> = vec![None; nodes];
    for root in 0..nodes {
        if state[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&e) = out[v].get(*next) {
                *next += 1;
                let w = edges[e].to;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        via[w] = Some(e);
                        stack.push((w, 0));
                    }
                    1 => {
                        let mut cycle = vec![e];
                        let mut u = v;
                        while u != w {
                            let Some(p) = via[u] else { break };
                            cycle.push(p);
                            u = edges[p].from;
                        }
                        cycle.reverse();
                        return Some(cycle);
                    }
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(from: usize, to: usize, latency: f64, distance: u32) -> RatioEdge {
        RatioEdge {
            from,
            to,
            latency,
            distance,
        }
    }

    fn ratio(nodes: usize, edges: &[RatioEdge]) -> f64 {
        max_cycle_ratio(nodes, edges)
            .expect("valid graph")
            .map_or(-1.0, |c| c.ratio)
    }

    #[test]
    fn a_self_loop_is_its_latency() {
        assert_eq!(ratio(1, &[e(0, 0, 3.0, 1)]), 3.0);
    }

    #[test]
    fn no_cycle_means_no_ratio() {
        assert_eq!(ratio(3, &[e(0, 1, 5.0, 0), e(1, 2, 5.0, 0)]), -1.0);
        assert_eq!(
            longest_acyclic_path(3, &[e(0, 1, 5.0, 0), e(1, 2, 2.0, 0), e(0, 2, 4.0, 0)]),
            Ok(7.0)
        );
    }

    #[test]
    fn the_larger_of_two_recurrences_wins() {
        // Chain a: 0 -> 1 -> 0 (1 + 1 over one iteration); chain b: 2 -> 3 -> 4 -> 2 (3 + 4 + 1).
        let edges = [
            e(0, 1, 1.0, 0),
            e(1, 0, 1.0, 1),
            e(2, 3, 3.0, 0),
            e(3, 4, 4.0, 0),
            e(4, 2, 1.0, 1),
        ];
        let c = max_cycle_ratio(5, &edges).expect("valid").expect("cycle");
        assert_eq!(c.ratio, 8.0);
        let mut on_cycle: Vec<usize> = c.edges.clone();
        on_cycle.sort_unstable();
        assert_eq!(on_cycle, vec![2, 3, 4]);
    }

    #[test]
    fn distance_divides_the_latency() {
        // A cycle of 10 cycles spanning two iterations (ratio 5) beats one of 4 over one.
        let edges = [
            e(0, 1, 6.0, 1),
            e(1, 0, 4.0, 1),
            e(2, 2, 4.0, 1),
            e(0, 2, 100.0, 0),
        ];
        assert_eq!(ratio(3, &edges), 5.0);
    }

    #[test]
    fn a_long_chain_with_a_tempting_short_cycle() {
        // 64 steps of latency 4.5 each around one back edge (288 over 1) next to a heavy
        // two-iteration cycle (500 over 2 = 250).
        let mut edges: Vec<RatioEdge> = (0..63).map(|i| e(i, i + 1, 4.5, 0)).collect();
        edges.push(e(63, 0, 0.0, 1));
        edges.push(e(64, 65, 500.0, 1));
        edges.push(e(65, 64, 0.0, 1));
        edges.push(e(10, 64, 1.0, 0));
        let got = ratio(66, &edges);
        assert!((got - 63.0 * 4.5).abs() < 1e-9, "{got}");
    }

    #[test]
    fn fractional_ratios_are_exact() {
        // Cycle 0->1->2->0: latencies 1, 1, 1 over distance 3 = 1; cycle 0->1->0: 1+1 over 2 = 1;
        // cycle 3->4->3: 7 over 3.
        let edges = [
            e(0, 1, 1.0, 1),
            e(1, 2, 1.0, 1),
            e(2, 0, 1.0, 1),
            e(1, 0, 1.0, 1),
            e(3, 4, 5.0, 1),
            e(4, 3, 2.0, 2),
        ];
        let got = ratio(5, &edges);
        assert!((got - 7.0 / 3.0).abs() < 1e-12, "{got}");
    }

    #[test]
    fn zero_latency_cycles_have_ratio_zero() {
        assert_eq!(ratio(2, &[e(0, 1, 0.0, 1), e(1, 0, 0.0, 0)]), 0.0);
    }

    #[test]
    fn cycles_within_one_iteration_are_errors() {
        let edges = [e(0, 1, 1.0, 0), e(1, 0, 1.0, 0)];
        assert!(matches!(
            max_cycle_ratio(2, &edges),
            Err(RatioError::ZeroDistanceCycle { .. })
        ));
        assert!(longest_acyclic_path(2, &edges).is_err());
    }

    #[test]
    fn bad_edges_are_errors_not_panics() {
        assert_eq!(
            max_cycle_ratio(1, &[e(0, 1, 1.0, 1)]),
            Err(RatioError::BadEdge { index: 0 })
        );
        assert_eq!(
            max_cycle_ratio(1, &[e(0, 0, f64::NAN, 1)]),
            Err(RatioError::BadEdge { index: 0 })
        );
    }

    #[test]
    fn the_answer_matches_brute_force_on_random_graphs() {
        // Every simple cycle of a 6-node graph, enumerated, against the solver.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200 {
            let n = 6;
            let mut edges = Vec::new();
            for from in 0..n {
                for to in 0..n {
                    if next() % 3 == 0 {
                        // Distance 0 only forwards (keeps the zero-distance part acyclic).
                        let distance = if to > from {
                            (next() % 2) as u32
                        } else {
                            1 + (next() % 2) as u32
                        };
                        edges.push(e(from, to, (next() % 10) as f64, distance));
                    }
                }
            }
            let want = brute_force(n, &edges);
            let got = max_cycle_ratio(n, &edges).expect("valid").map(|c| c.ratio);
            match (want, got) {
                (None, None) => {}
                (Some(w), Some(g)) => assert!((w - g).abs() < 1e-9, "want {w} got {g}: {edges:?}"),
                other => panic!("{other:?} for {edges:?}"),
            }
        }
    }

    fn brute_force(n: usize, edges: &[RatioEdge]) -> Option<f64> {
        fn walk(
            start: usize,
            v: usize,
            edges: &[RatioEdge],
            on: &mut Vec<bool>,
            lat: f64,
            dist: u32,
            best: &mut Option<f64>,
        ) {
            for e in edges.iter().filter(|e| e.from == v) {
                if e.to == start {
                    let r = (lat + e.latency) / f64::from(dist + e.distance);
                    *best = Some(best.map_or(r, |b: f64| b.max(r)));
                } else if e.to > start && !on[e.to] {
                    on[e.to] = true;
                    walk(
                        start,
                        e.to,
                        edges,
                        on,
                        lat + e.latency,
                        dist + e.distance,
                        best,
                    );
                    on[e.to] = false;
                }
            }
        }
        let mut best = None;
        for s in 0..n {
            let mut on = vec![false; n];
            on[s] = true;
            walk(s, s, edges, &mut on, 0.0, 0, &mut best);
        }
        best
    }
}
