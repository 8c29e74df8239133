//! Interchangeable subtrees of a block: the symmetry the timed search ([`super::timed`]) folds
//! its failed states under.
//!
//! Where two operands of one node are computed by disjoint trees of the same shape — the two
//! halves of a reduction tree, say — swapping the trees maps the problem onto itself, and a
//! state after a prefix is as good as the state with the trees' progress swapped. The search
//! remembers each state in a canonical form: bottom-up, the progress of each group of
//! interchangeable trees is sorted, so states that differ only by such swaps meet in one key.
//!
//! Each swap is checked as a whole against the problem (latencies, every dependence, every
//! value's definition, readers and liveness on exit), so a shape the matching misjudges is
//! left out, never folded wrongly.

use super::{BlockProblem, Def};
use std::collections::HashMap;

/// Groups of interchangeable subtrees, innermost first. Each member is its tree's nodes in an
/// order that corresponds position by position across the group's members.
pub struct Symmetry {
    groups: Vec<Vec<Vec<u32>>>,
}

impl Symmetry {
    /// The interchangeable subtrees of `problem`, each swap verified as an automorphism.
    pub fn of(problem: &BlockProblem) -> Self {
        let n = problem.len();
        let preds = problem.preds();
        let shape = shapes(problem, &preds);
        let problem_values = value_multiset(problem, &(0..n as u32).collect::<Vec<_>>());
        let mut edges = problem.edges.clone();
        edges.sort_unstable();
        let mut in_members = vec![false; n];
        let mut groups = Vec::new();
        // Indices are a topological order: inner trees come first.
        for x in 0..n {
            let mut candidates: Vec<u32> = preds[x].iter().map(|&(p, _)| p).collect();
            candidates.sort_unstable_by_key(|&p| (shape[p as usize], p));
            candidates.dedup();
            for same in candidates.chunk_by(|&a, &b| shape[a as usize] == shape[b as usize]) {
                if same.len() < 2 {
                    continue;
                }
                let first = tree_in_order(same[0], &preds, &shape);
                for &u in &first {
                    in_members[u as usize] = true;
                }
                let mut members = vec![first.clone()];
                for &other in &same[1..] {
                    let tree = tree_in_order(other, &preds, &shape);
                    let disjoint = tree.iter().all(|&u| !in_members[u as usize]);
                    if disjoint
                        && tree.len() == first.len()
                        && swaps_onto_itself(problem, &first, &tree, &edges, &problem_values)
                    {
                        for &u in &tree {
                            in_members[u as usize] = true;
                        }
                        members.push(tree);
                    }
                }
                for &u in members.iter().flatten() {
                    in_members[u as usize] = false;
                }
                if members.len() >= 2 {
                    groups.push(members);
                }
            }
        }
        Symmetry { groups }
    }

    /// How many groups of interchangeable subtrees there are.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// Rewrites `per_node` (one code per node) into the canonical form of its state.
    pub fn canonicalise(&self, per_node: &mut [u32]) {
        if self.groups.is_empty() {
            return;
        }
        let from = self.canonical_order(per_node);
        let codes: Vec<u32> = from.iter().map(|&u| per_node[u as usize]).collect();
        per_node.copy_from_slice(&codes);
    }

    /// The automorphism that takes a state to its canonical form: node `i` of the canonical
    /// state holds the code of node `from[i]` of `per_node`. Within each group, innermost
    /// first, the members are sorted by their codes.
    pub fn canonical_order(&self, per_node: &[u32]) -> Vec<u32> {
        let mut from: Vec<u32> = (0..per_node.len() as u32).collect();
        if self.groups.is_empty() {
            return from;
        }
        let mut ranked: Vec<(Vec<u32>, Vec<u32>)> = Vec::new();
        for members in &self.groups {
            ranked.clear();
            ranked.extend(members.iter().map(|tree| {
                let sources: Vec<u32> = tree.iter().map(|&u| from[u as usize]).collect();
                let codes = sources.iter().map(|&u| per_node[u as usize]).collect();
                (codes, sources)
            }));
            ranked.sort_unstable();
            for (tree, (_, sources)) in members.iter().zip(&ranked) {
                for (&u, &source) in tree.iter().zip(sources) {
                    from[u as usize] = source;
                }
            }
        }
        from
    }
}

/// Per node: a hash of the shape of the tree above it (latencies, edge latencies, entry values
/// read by index, constants and results by count), equal for subtrees that may be swapped.
fn shapes(problem: &BlockProblem, preds: &[Vec<(u32, u32)>]) -> Vec<u64> {
    let (reads, defines) = problem.reads_and_defines();
    let mut shape = vec![0u64; problem.len()];
    for u in 0..problem.len() {
        let mut words = vec![u64::from(problem.latency[u]), u64::from(defines[u])];
        let mut inputs: Vec<u64> = preds[u]
            .iter()
            .map(|&(p, l)| mix(shape[p as usize], u64::from(l)))
            .collect();
        let mut outside: Vec<u64> = reads[u]
            .iter()
            .filter_map(|&v| match problem.values[v].def {
                Def::Entry => Some(mix(1, v as u64)),
                Def::FirstUse => Some(mix(2, problem.values[v].users.len() as u64)),
                Def::Node(_) => None,
            })
            .collect();
        inputs.sort_unstable();
        outside.sort_unstable();
        words.extend(inputs);
        words.push(u64::MAX);
        words.extend(outside);
        shape[u] = words.into_iter().fold(0xcbf2_9ce4_8422_2325, mix);
    }
    shape
}

fn mix(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29)
}

/// `root` and every node above it, depth first, operands in shape order.
fn tree_in_order(root: u32, preds: &[Vec<(u32, u32)>], shape: &[u64]) -> Vec<u32> {
    let mut order = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root];
    while let Some(u) = stack.pop() {
        if !seen.insert(u) {
            continue;
        }
        order.push(u);
        let mut above: Vec<u32> = preds[u as usize].iter().map(|&(p, _)| p).collect();
        above.sort_unstable_by_key(|&p| std::cmp::Reverse((shape[p as usize], p)));
        stack.extend(above);
    }
    order
}

/// Whether exchanging `a[i]` with `b[i]` for every `i` maps the problem (its `edges` sorted)
/// onto itself.
fn swaps_onto_itself(
    problem: &BlockProblem,
    a: &[u32],
    b: &[u32],
    edges: &[(u32, u32, u32)],
    values: &HashMap<(Def, Vec<u32>, bool), u32>,
) -> bool {
    let mut image: Vec<u32> = (0..problem.len() as u32).collect();
    for (&x, &y) in a.iter().zip(b) {
        image[x as usize] = y;
        image[y as usize] = x;
    }
    let latencies =
        (0..problem.len()).all(|u| problem.latency[u] == problem.latency[image[u] as usize]);
    let edges_kept = problem.edges.iter().all(|&(f, t, l)| {
        edges
            .binary_search(&(image[f as usize], image[t as usize], l))
            .is_ok()
    });
    latencies && edges_kept && value_multiset(problem, &image) == *values
}

/// Every value as (definition, readers, live on exit) under the node map `image`, counted.
fn value_multiset(problem: &BlockProblem, image: &[u32]) -> HashMap<(Def, Vec<u32>, bool), u32> {
    let mut count = HashMap::new();
    for life in &problem.values {
        let def = match life.def {
            Def::Node(d) => Def::Node(image[d as usize]),
            other => other,
        };
        let mut users: Vec<u32> = life.users.iter().map(|&u| image[u as usize]).collect();
        users.sort_unstable();
        *count.entry((def, users, life.live_out)).or_insert(0) += 1;
    }
    count
}
