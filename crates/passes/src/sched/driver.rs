//! The driver: builds each block's DAG, keeps the ready set, the in-order issue model and the
//! pressure state, asks the strategy for picks and rewrites the block in the chosen order.

use super::dag::{DepDag, NodeId};
use super::latency::MachineModel;
use super::pressure::{Liveness, PressureTracker};
use super::ready::{ReadySet, SchedView};
use super::strategy::{Pick, Reason, Strategy};
use super::{BlockStats, SchedError};
use cranelift_codegen::ir::{Block, Function, Inst};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// Schedules one block with `strategy`; returns the order, the reasons of the picks and the
/// maximum pressure the driver tracked.
pub(crate) fn schedule_block(
    func: &Function,
    liveness: &Liveness,
    dag: &DepDag,
    model: &MachineModel,
    strategy: &mut dyn Strategy,
    strategy_name: &str,
    reasons: &mut BTreeMap<Reason, usize>,
) -> Result<(Vec<NodeId>, usize), SchedError> {
    let n = dag.len();
    let insts: Vec<Inst> = dag.nodes().map(|id| dag.inst(id)).collect();
    let mut pressure = PressureTracker::new(func, liveness, dag.block(), &insts);
    let mut waiting: Vec<usize> = dag.nodes().map(|id| dag.preds(id).count()).collect();
    let mut ready_cycle = vec![0u32; n];
    let mut scheduled = vec![false; n];
    let mut ready = ReadySet::default();
    // Strategies with a fixed priority: the ready nodes in a min-heap by rank instead.
    let mut ranked: Option<Vec<(u32, Reason)>> = None;
    let mut heap: BinaryHeap<Reverse<(u32, NodeId)>> = BinaryHeap::new();
    let (mut cycle, mut issued) = (0u32, 0u32);
    let mut order = Vec::with_capacity(n);
    macro_rules! view {
        () => {
            SchedView {
                func,
                dag,
                model,
                pressure: &pressure,
                ready_cycle: &ready_cycle,
                scheduled: &scheduled,
                cycle,
                placed: order.len(),
            }
        };
    }
    strategy.init_block(&view!());
    if let Some(ranks) = strategy.static_priority() {
        if ranks.len() != n {
            return Err(SchedError::InvalidPriority {
                strategy: strategy_name.to_string(),
                block: dag.block(),
            });
        }
        ranked = Some(ranks);
    }
    let make_ready = |id: NodeId,
                      ready: &mut ReadySet,
                      heap: &mut BinaryHeap<Reverse<(u32, NodeId)>>,
                      ranked: &Option<Vec<(u32, Reason)>>| match ranked {
        Some(ranks) => heap.push(Reverse((ranks[id.index()].0, id))),
        None => ready.insert(id),
    };
    for id in dag.nodes() {
        if waiting[id.index()] == 0 {
            make_ready(id, &mut ready, &mut heap, &ranked);
        }
    }
    while !(ready.is_empty() && heap.is_empty()) {
        let pick = if let Some(ranks) = &ranked {
            let only = heap.len() == 1;
            let Reverse((_, node)) = heap.pop().expect("checked non-empty");
            let reason = if only {
                Reason::Only
            } else {
                ranks[node.index()].1
            };
            Pick::new(node, reason)
        } else {
            let pick = match ready.nodes() {
                [only] => Pick::new(*only, Reason::Only),
                _ => strategy.pick(&ready, &view!()),
            };
            if !ready.remove(pick.node) {
                return Err(SchedError::InvalidPick {
                    strategy: strategy_name.to_string(),
                    block: dag.block(),
                    node: pick.node,
                });
            }
            pick
        };
        *reasons.entry(pick.reason).or_default() += 1;
        let id = pick.node;
        scheduled[id.index()] = true;
        order.push(id);
        pressure.place(id.index());
        let at = cycle.max(ready_cycle[id.index()]);
        if at > cycle {
            cycle = at;
            issued = 0;
        }
        issued += 1;
        if issued >= model.issue_width.max(1) {
            cycle += 1;
            issued = 0;
        }
        for (succ, edge) in dag.succs(id) {
            let s = succ.index();
            ready_cycle[s] = ready_cycle[s].max(at + edge.latency);
            waiting[s] -= 1;
            if waiting[s] == 0 {
                make_ready(succ, &mut ready, &mut heap, &ranked);
            }
        }
        strategy.scheduled(id, &view!());
    }
    debug_assert_eq!(order.len(), n, "a DAG always drains");
    Ok((order, pressure.max()))
}

/// Moves the block's instructions into `order` (whose last element is the terminator when
/// the block has one, since every node precedes it).
pub(crate) fn apply_order(func: &mut Function, block: Block, dag: &DepDag, order: &[NodeId]) {
    let current: Vec<Inst> = func.layout.block_insts(block).collect();
    let wanted: Vec<Inst> = order.iter().map(|&id| dag.inst(id)).collect();
    if current == wanted {
        return;
    }
    for &inst in &wanted {
        func.layout.remove_inst(inst);
        func.layout.append_inst(inst, block);
    }
}

/// Per-block statistics for a block scheduled from source order to `order`, whose maximum
/// pressure the driver tracked as `pressure_after`.
pub(crate) fn block_stats(
    dag: &DepDag,
    model: &MachineModel,
    order: &[NodeId],
    pressure_before: usize,
    pressure_after: usize,
) -> BlockStats {
    let source: Vec<NodeId> = dag.nodes().collect();
    BlockStats {
        block: dag.block(),
        insts: dag.len(),
        edges: dag.edge_count(),
        moved: order.iter().zip(&source).filter(|(a, b)| a != b).count(),
        pressure_before,
        pressure_after,
        cycles_before: dag.simulate(&source, model.issue_width),
        cycles_after: dag.simulate(order, model.issue_width),
    }
}
