//! Loop recurrences of a function's values: which values lie on a common cycle of the value
//! graph (operands → results, branch arguments → block parameters).
//!
//! Two values are on a common recurrence exactly when they are in the same strongly connected
//! component of that graph: each is computed, through some loop's back edge, from the other.
//! Reassociation uses it to add a recurrent operand (a loop's carried sum) last: an
//! out-of-order core computes the operands that do not wait for the previous iteration ahead
//! of it, so in a loop bound by its recurrence those arrive first whatever their latency.

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{BlockArg, Function, Value};
use petgraph::algo::TarjanScc;
use petgraph::graph::{DiGraph, NodeIndex};

/// The component of a value the graph did not contain.
const UNKNOWN: u32 = u32::MAX;

/// Identifies the strongly connected component of every value.
pub(crate) struct Recurrences {
    component: SecondaryMap<Value, u32>,
}

impl Recurrences {
    /// Computes the components of `func`'s value graph (aliases resolved); none at all when
    /// no branch goes back to its own block or an earlier one in the layout (no loop).
    pub(crate) fn of(func: &Function) -> Recurrences {
        let dfg = &func.dfg;
        let values = dfg.num_values();
        if !has_back_branch(func) {
            return Recurrences {
                component: SecondaryMap::with_default(UNKNOWN),
            };
        }
        let mut graph: DiGraph<(), (), u32> = DiGraph::with_capacity(values, values * 2);
        for _ in 0..values {
            graph.add_node(());
        }
        let node = |v: Value| NodeIndex::new(dfg.resolve_aliases(v).as_u32() as usize);
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                for &result in dfg.inst_results(inst) {
                    for &arg in dfg.inst_args(inst) {
                        graph.add_edge(node(arg), node(result), ());
                    }
                }
                for call in
                    dfg.insts[inst].branch_destination(&dfg.jump_tables, &dfg.exception_tables)
                {
                    let target = call.block(&dfg.value_lists);
                    for (arg, &param) in call.args(&dfg.value_lists).zip(dfg.block_params(target)) {
                        if let BlockArg::Value(arg) = arg {
                            graph.add_edge(node(arg), node(param), ());
                        }
                    }
                }
            }
        }
        // Only components of two or more values are recurrences; the others stay UNKNOWN.
        let mut component = SecondaryMap::with_default(UNKNOWN);
        component.resize(values);
        let mut next = 0;
        TarjanScc::new().run(&graph, |members: &[NodeIndex<u32>]| {
            if members.len() > 1 {
                for n in members {
                    component[Value::from_u32(n.index() as u32)] = next;
                }
                next += 1;
            }
        });
        Recurrences { component }
    }

    /// Whether `a` and `b` are distinct values on a common recurrence (values created after
    /// the components were computed are on none).
    pub(crate) fn common(&self, a: Value, b: Value) -> bool {
        let (ca, cb) = (self.component[a], self.component[b]);
        a != b && ca != UNKNOWN && ca == cb
    }
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
        let rec = Recurrences::of(&func);
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
}
