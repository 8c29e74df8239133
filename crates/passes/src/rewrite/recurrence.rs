//! Loop recurrences of a function's values: which values lie on a common cycle of the value
//! graph (operands → results, branch arguments → block parameters).
//!
//! Two values are on a common recurrence exactly when they are in the same strongly connected
//! component of that graph: each is computed, through some loop's back edge, from the other.
//! Reassociation uses it to add a recurrent operand (a loop's carried sum) last: an
//! out-of-order core computes the operands that do not wait for the previous iteration ahead
//! of it, so in a loop bound by its recurrence those arrive first whatever their latency.

use super::ready::Aliases;
use cranelift_codegen::ir::{BlockArg, Function, Value};

/// The component of a value the graph did not contain.
const UNKNOWN: u32 = u32::MAX;

/// Identifies the strongly connected component of every value.
pub(crate) struct Recurrences {
    /// By value number; values past the end (created later) are on none.
    component: Vec<u32>,
}

impl Recurrences {
    /// Computes the components of `func`'s value graph, operands read as `aliases` says;
    /// none at all when no branch goes back to its own block or an earlier one in the layout
    /// (no loop).
    pub(crate) fn of(func: &Function, aliases: Aliases) -> Recurrences {
        let dfg = &func.dfg;
        let values = dfg.num_values();
        if !has_back_branch(func) {
            return Recurrences {
                component: Vec::new(),
            };
        }
        let mut edges: Vec<(u32, u32)> = Vec::with_capacity(values * 2);
        let node = |v: Value| aliases.resolve(func, v).as_u32();
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                for &result in dfg.inst_results(inst) {
                    for &arg in dfg.inst_args(inst) {
                        edges.push((node(arg), result.as_u32()));
                    }
                }
                for call in
                    dfg.insts[inst].branch_destination(&dfg.jump_tables, &dfg.exception_tables)
                {
                    let target = call.block(&dfg.value_lists);
                    for (arg, &param) in call.args(&dfg.value_lists).zip(dfg.block_params(target)) {
                        if let BlockArg::Value(arg) = arg {
                            edges.push((node(arg), param.as_u32()));
                        }
                    }
                }
            }
        }
        // Only components of two or more values are recurrences; the others are UNKNOWN.
        Recurrences {
            component: recurrent_components(values, &edges),
        }
    }

    /// Whether `a` and `b` are distinct values on a common recurrence (values created after
    /// the components were computed are on none).
    pub(crate) fn common(&self, a: Value, b: Value) -> bool {
        let of = |v: Value| {
            self.component
                .get(v.as_u32() as usize)
                .copied()
                .unwrap_or(UNKNOWN)
        };
        let (ca, cb) = (of(a), of(b));
        a != b && ca != UNKNOWN && ca == cb
    }
}

/// A node not reached yet by [`Walk`].
const UNVISITED: u32 = u32::MAX;

/// The state of Tarjan's depth-first walk.
struct Walk {
    /// Discovery order of each node ([`UNVISITED`] before).
    index: Vec<u32>,
    /// Lowest discovery order reachable through the node's subtree and one back edge.
    low: Vec<u32>,
    on_stack: Vec<bool>,
    /// Nodes whose component is not complete yet.
    stack: Vec<u32>,
    /// The depth-first path: each node with the position of its next successor to visit.
    path: Vec<(u32, u32)>,
    next_index: u32,
}

impl Walk {
    /// Discovers `v` and enters it.
    #[inline]
    fn visit(&mut self, v: u32, first: &[u32]) {
        let vi = v as usize;
        self.index[vi] = self.next_index;
        self.low[vi] = self.next_index;
        self.next_index += 1;
        self.on_stack[vi] = true;
        self.stack.push(v);
        self.path.push((v, first[vi]));
    }
}

/// The strongly connected components of the graph on `nodes` nodes with `edges` (from, to):
/// for each node, a number shared by exactly the members of its component when that has two
/// or more members, [`UNKNOWN`] otherwise. Tarjan's algorithm, iterative (no recursion depth
/// limit), over the edges sorted into per-node ranges.
fn recurrent_components(nodes: usize, edges: &[(u32, u32)]) -> Vec<u32> {
    // Successor lists, compressed: `targets[first[v]..first[v + 1]]`.
    let mut first = vec![0u32; nodes + 1];
    for &(from, _) in edges {
        first[from as usize + 1] += 1;
    }
    for v in 0..nodes {
        first[v + 1] += first[v];
    }
    let mut fill = first.clone();
    let mut targets = vec![0u32; edges.len()];
    for &(from, to) in edges {
        targets[fill[from as usize] as usize] = to;
        fill[from as usize] += 1;
    }
    let mut walk = Walk {
        index: vec![UNVISITED; nodes],
        low: vec![0; nodes],
        on_stack: vec![false; nodes],
        stack: Vec::new(),
        path: Vec::new(),
        next_index: 0,
    };
    let mut component = vec![UNKNOWN; nodes];
    let mut next_component = 0u32;
    for root in 0..nodes {
        // A node without successors is a component of its own.
        if walk.index[root] != UNVISITED || first[root] == first[root + 1] {
            continue;
        }
        walk.visit(root as u32, &first);
        while let Some(&mut (v, ref mut position)) = walk.path.last_mut() {
            let vi = v as usize;
            if *position < first[vi + 1] {
                let w = targets[*position as usize];
                *position += 1;
                let wi = w as usize;
                if walk.index[wi] == UNVISITED {
                    walk.visit(w, &first);
                } else if walk.on_stack[wi] {
                    walk.low[vi] = walk.low[vi].min(walk.index[wi]);
                }
                continue;
            }
            walk.path.pop();
            if let Some(&(parent, _)) = walk.path.last() {
                let pi = parent as usize;
                walk.low[pi] = walk.low[pi].min(walk.low[vi]);
            }
            if walk.low[vi] == walk.index[vi] {
                // The component: `v` and the nodes above it on the stack.
                let top = walk.stack.iter().rposition(|&n| n == v).unwrap_or(0);
                let recurrent = walk.stack.len() - top > 1;
                for &n in &walk.stack[top..] {
                    walk.on_stack[n as usize] = false;
                    if recurrent {
                        component[n as usize] = next_component;
                    }
                }
                walk.stack.truncate(top);
                next_component += u32::from(recurrent);
            }
        }
    }
    component
}

/// Whether some branch targets its own block or a block placed before it (every loop has one).
fn has_back_branch(func: &Function) -> bool {
    let dfg = &func.dfg;
    let mut seen = cranelift_codegen::entity::EntitySet::with_capacity(dfg.num_blocks());
    for block in func.layout.blocks() {
        seen.insert(block);
        if let Some(inst) = func.layout.last_inst(block) {
            let targets =
                dfg.insts[inst].branch_destination(&dfg.jump_tables, &dfg.exception_tables);
            if targets
                .iter()
                .any(|call| seen.contains(call.block(&dfg.value_lists)))
            {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::test_function as function;

    #[test]
    fn a_carried_sum_and_its_result_share_a_recurrence_an_invariant_does_not() {
        let func = function(
            "function %f(i64, i64) -> i64 {
             block0(v0: i64, v1: i64):
                 jump block1(v0, v1)
             block1(v2: i64, v3: i64):
                 v4 = iadd v2, v1
                 v5 = iadd v3, v4
                 v6 = iconst.i64 1
                 v7 = isub v3, v6
                 brif v7, block1(v5, v7), block2(v5)
             block2(v8: i64):
                 return v8
             }",
        );
        let rec = Recurrences::of(&func, Aliases::Resolve);
        let v = Value::from_u32;
        // v2 → v4 → v5 → v2: the carried sum.
        assert!(rec.common(v(2), v(5)));
        assert!(rec.common(v(4), v(2)));
        // v1 is loop-invariant; v3/v7 form their own recurrence (the counter).
        assert!(!rec.common(v(1), v(5)));
        assert!(!rec.common(v(3), v(5)));
        assert!(rec.common(v(3), v(7)));
        assert!(!rec.common(v(8), v(5)));
        assert!(!rec.common(v(5), v(5)));
    }

    /// The components equal petgraph's Tarjan implementation's on random graphs (as
    /// partitions: the numbering may differ).
    #[test]
    fn components_match_petgraph_on_random_graphs() {
        use petgraph::graph::{DiGraph, NodeIndex};
        use rand::{Rng, SeedableRng, rngs::StdRng};
        let mut rng = StdRng::seed_from_u64(15);
        for _ in 0..300 {
            let nodes = rng.random_range(1..40usize);
            let edge_count = rng.random_range(0..nodes * 3);
            let edges: Vec<(u32, u32)> = (0..edge_count)
                .map(|_| {
                    (
                        rng.random_range(0..nodes as u32),
                        rng.random_range(0..nodes as u32),
                    )
                })
                .collect();
            let ours = recurrent_components(nodes, &edges);
            let mut graph: DiGraph<(), (), u32> = DiGraph::new();
            for _ in 0..nodes {
                graph.add_node(());
            }
            for &(a, b) in &edges {
                graph.add_edge(NodeIndex::new(a as usize), NodeIndex::new(b as usize), ());
            }
            let mut theirs = vec![UNKNOWN; nodes];
            let mut next = 0;
            petgraph::algo::TarjanScc::new().run(&graph, |members: &[NodeIndex<u32>]| {
                if members.len() > 1 {
                    for n in members {
                        theirs[n.index()] = next;
                    }
                    next += 1;
                }
            });
            for a in 0..nodes {
                assert_eq!(ours[a] == UNKNOWN, theirs[a] == UNKNOWN, "{edges:?}");
                for b in 0..nodes {
                    let same = |c: &[u32]| c[a] != UNKNOWN && c[a] == c[b];
                    assert_eq!(same(&ours), same(&theirs), "{a} {b} {edges:?}");
                }
            }
        }
    }
}
