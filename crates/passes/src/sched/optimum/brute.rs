//! Exhaustive search over every legal order of a small problem, and random small problems:
//! the reference the solver's optima are checked against (`tests/sched_optimum.rs`).

use super::{BlockProblem, Def, ValueLife, sort_and_merge_edges};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The exhaustive optima of a problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exhaustive {
    /// The lowest peak pressure of any legal order.
    pub pressure: u32,
    /// The shortest length of an order within the register budget, if one is.
    pub length: Option<u32>,
    /// Legal orders visited.
    pub orders: u64,
}

/// Visits every legal order of `problem` (intended for at most about ten nodes).
pub fn exhaustive(problem: &BlockProblem) -> Exhaustive {
    let n = problem.len();
    let preds = problem.preds();
    let mut waiting: Vec<usize> = preds.iter().map(Vec::len).collect();
    let succs = problem.succs();
    let mut order = Vec::with_capacity(n);
    let mut best = Exhaustive {
        pressure: u32::MAX,
        length: None,
        orders: 0,
    };
    let mut placed = vec![false; n];
    walk(
        problem,
        &succs,
        &mut waiting,
        &mut placed,
        &mut order,
        &mut best,
    );
    best
}

fn walk(
    problem: &BlockProblem,
    succs: &[Vec<(u32, u32)>],
    waiting: &mut [usize],
    placed: &mut [bool],
    order: &mut Vec<u32>,
    best: &mut Exhaustive,
) {
    let n = problem.len();
    if order.len() == n {
        let f = problem.evaluate(order);
        best.orders += 1;
        best.pressure = best.pressure.min(f.pressure);
        if problem.within_budget(f.pressure) {
            best.length = Some(best.length.map_or(f.length, |l| l.min(f.length)));
        }
        return;
    }
    for u in 0..n {
        if placed[u] || waiting[u] > 0 {
            continue;
        }
        placed[u] = true;
        order.push(u as u32);
        for &(s, _) in &succs[u] {
            waiting[s as usize] -= 1;
        }
        walk(problem, succs, waiting, placed, order, best);
        for &(s, _) in &succs[u] {
            waiting[s as usize] += 1;
        }
        order.pop();
        placed[u] = false;
    }
}

/// A random problem of `1..=max_nodes` free nodes from `seed`: random latencies, data edges
/// from each value's definition to its users (with the definition's latency), extra ordering
/// edges (latency 0 or the source's), entry values, constants read by one to three nodes,
/// live-out and idle values, an issue width of 1 to 4 and a register budget of 1 to 10.
pub fn random_problem(seed: u64, max_nodes: usize) -> BlockProblem {
    let mut rng = StdRng::seed_from_u64(seed);
    let n = rng.random_range(1..=max_nodes.max(1));
    let latency: Vec<u32> = (0..n).map(|_| rng.random_range(1..=5)).collect();
    let mut edges: Vec<(u32, u32, u32)> = Vec::new();
    let mut values: Vec<ValueLife> = Vec::new();
    let users_after = |rng: &mut StdRng, from: usize, most: usize| -> Vec<u32> {
        let mut users: Vec<u32> = (from..n)
            .filter(|_| rng.random_bool(0.35))
            .map(|u| u as u32)
            .collect();
        users.truncate(most);
        users
    };
    for (d, &lat) in latency.iter().enumerate() {
        for _ in 0..rng.random_range(0..=2) {
            let users = users_after(&mut rng, d + 1, 3);
            let live_out = users.is_empty() || rng.random_bool(0.15);
            for &u in &users {
                edges.push((d as u32, u, lat));
            }
            values.push(ValueLife {
                def: Def::Node(d as u32),
                users,
                live_out,
            });
        }
    }
    let density = rng.random_range(0.0..0.3);
    for (a, &lat) in latency.iter().enumerate() {
        for b in a + 1..n {
            if rng.random_bool(density) {
                let l = if rng.random_bool(0.5) { 0 } else { lat };
                edges.push((a as u32, b as u32, l));
            }
        }
    }
    for _ in 0..rng.random_range(0..=3) {
        let users = users_after(&mut rng, 0, 3);
        if !users.is_empty() {
            let live_out = rng.random_bool(0.3);
            values.push(ValueLife {
                def: Def::Entry,
                users,
                live_out,
            });
        }
    }
    for _ in 0..rng.random_range(0..=3) {
        let users = users_after(&mut rng, 0, 3);
        if !users.is_empty() {
            values.push(ValueLife {
                def: Def::FirstUse,
                users,
                live_out: rng.random_bool(0.1),
            });
        }
    }
    sort_and_merge_edges(&mut edges);
    BlockProblem {
        nodes: (0..n as u32).map(super::super::NodeId).collect(),
        latency,
        edges,
        values,
        idle: rng.random_range(0..=2),
        issue_width: rng.random_range(1..=4),
        register_budget: rng.random_range(1..=10),
    }
}

/// A random problem with interchangeable subtrees: two copies of a random problem of
/// `1..=(max_nodes − 1) / 2` nodes (entry values shared, constants each its own or shared),
/// each copy's nodes without a reader read by its last node, and one node reading the last
/// result of each copy.
pub fn random_symmetric_problem(seed: u64, max_nodes: usize) -> BlockProblem {
    let mut base = random_problem(seed, ((max_nodes.max(3) - 1) / 2).max(1));
    let last = base.len() as u32 - 1;
    for d in 0..last {
        if !base.edges.iter().any(|&(a, _, _)| a == d) {
            base.edges.push((d, last, base.latency[d as usize]));
            base.values.push(ValueLife {
                def: Def::Node(d),
                users: vec![last],
                live_out: false,
            });
        }
    }
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
    let m = base.len() as u32;
    let root = 2 * m;
    let shifted = |users: &[u32]| users.iter().map(|&u| u + m).collect::<Vec<u32>>();
    let mut edges: Vec<(u32, u32, u32)> = base.edges.clone();
    edges.extend(base.edges.iter().map(|&(a, b, l)| (a + m, b + m, l)));
    let root_latency = rng.random_range(1..=5);
    let last_latency = base.latency[m as usize - 1];
    edges.push((m - 1, root, last_latency));
    edges.push((2 * m - 1, root, last_latency));
    let mut values = Vec::new();
    for life in &base.values {
        let copies = match life.def {
            Def::Node(d) => vec![
                (Def::Node(d), life.users.clone()),
                (Def::Node(d + m), shifted(&life.users)),
            ],
            Def::FirstUse if rng.random_bool(0.5) => vec![
                (Def::FirstUse, life.users.clone()),
                (Def::FirstUse, shifted(&life.users)),
            ],
            shared => vec![(shared, [life.users.clone(), shifted(&life.users)].concat())],
        };
        values.extend(copies.into_iter().map(|(def, users)| ValueLife {
            def,
            users,
            live_out: life.live_out,
        }));
    }
    for last in [m - 1, 2 * m - 1] {
        values.push(ValueLife {
            def: Def::Node(last),
            users: vec![root],
            live_out: false,
        });
    }
    values.push(ValueLife {
        def: Def::Node(root),
        users: Vec::new(),
        live_out: true,
    });
    sort_and_merge_edges(&mut edges);
    let mut latency = [base.latency.clone(), base.latency.clone()].concat();
    latency.push(root_latency);
    BlockProblem {
        nodes: (0..=root).map(super::super::NodeId).collect(),
        latency,
        edges,
        values,
        idle: base.idle,
        issue_width: base.issue_width,
        register_budget: base.register_budget + rng.random_range(0..=4),
    }
}
