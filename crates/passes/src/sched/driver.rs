//! The driver: builds each block's DAG, keeps the ready set, the in-order issue model and the
//! pressure state, asks the strategy for picks and rewrites the block in the chosen order.

use super::dag::{DepDag, EdgeKind, NodeId};
use super::latency::MachineModel;
use super::pressure::PressureTracker;
use super::ready::{ReadySet, SchedView};
use super::strategy::{FinishedBlock, Pick, Reason, Strategy};
use super::{BlockStats, SchedError};
use cranelift_codegen::ir::{Block, Function, Inst, Opcode};
use std::collections::BTreeMap;

/// The order `strategy` would give the block `view` shows and the maximum pressure of that
/// order, without touching the function: a trial run of the driver from the block's entry
/// state (asked by strategies that choose between orders, e.g. `balanced`). The view must be
/// the one given to [`Strategy::init_block`] (nothing placed yet).
pub(crate) fn trial_block(
    view: &SchedView<'_>,
    strategy: &mut dyn Strategy,
) -> Result<FinishedBlock, SchedError> {
    let mut reasons = BTreeMap::new();
    let (order, max_pressure) = schedule_block(
        view.func,
        view.pressure.clone(),
        view.dag,
        view.model,
        strategy,
        "trial",
        &mut reasons,
    )?;
    Ok(FinishedBlock {
        order,
        max_pressure,
        reasons,
    })
}

/// Schedules one block with `strategy` from the entry state `pressure`; returns the order,
/// the reasons of the picks and the maximum pressure the driver tracked.
pub(crate) fn schedule_block(
    func: &Function,
    mut pressure: PressureTracker,
    dag: &DepDag,
    model: &MachineModel,
    strategy: &mut dyn Strategy,
    strategy_name: &str,
    reasons: &mut BTreeMap<Reason, usize>,
) -> Result<(Vec<NodeId>, usize), SchedError> {
    let n = dag.len();
    let mut ready_cycle = vec![0u32; n];
    let mut scheduled = vec![false; n];
    let mut ready = ReadySet::default();
    // Strategies with a fixed priority: the ready nodes in a set ordered by rank instead.
    let mut ranked: Option<Vec<(u32, Reason)>> = None;
    let mut by_rank = RankSet::default();
    let (mut cycle, mut issued) = (0u32, 0u32);
    // Empty until the strategy has seen the block (it may hand over a finished run).
    let mut order = Vec::new();
    // Filled once the strategy has seen the block (it may bind nodes of its own).
    let mut bound: Vec<bool> = Vec::new();
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
                bound: &bound,
            }
        };
    }
    strategy.init_block(&view!());
    // The strategy already ran this block with this loop (a trial it keeps): use that run.
    if let Some(finished) = strategy.take_finished_block() {
        for (reason, count) in finished.reasons {
            *reasons.entry(reason).or_default() += count;
        }
        return Ok((finished.order, finished.max_pressure));
    }
    let mut waiting: Vec<usize> = dag.nodes().map(|id| dag.preds(id).count()).collect();
    order.reserve_exact(n);
    if let Some(ranks) = strategy.static_priority() {
        if ranks.len() != n {
            return Err(SchedError::InvalidPriority {
                strategy: strategy_name.to_string(),
                block: dag.block(),
            });
        }
        by_rank = RankSet::with_ranks(&ranks);
        ranked = Some(ranks);
    }
    // Bound nodes (constants for every strategy, and what the strategy binds) are never
    // offered: once their predecessors are placed they count as available for their users'
    // readiness, and each is placed right before the first user picked.
    // (All three tests are pure; the cheap ones go first.)
    bound = dag
        .nodes()
        .map(|id| {
            (is_constant(func, dag, id) || strategy.binds_to_user(&view!(), id))
                && bindable(dag, id)
        })
        .collect();
    // Per node: edges from bound predecessors not placed yet (most picks have none, so
    // looking for them can be skipped; the terminator depends on every node).
    let mut unplaced_bound_preds = vec![0u32; n];
    for id in dag.nodes().filter(|id| bound[id.index()]) {
        for (succ, _) in dag.succs(id) {
            unplaced_bound_preds[succ.index()] += 1;
        }
    }
    let mut reason_counts = ReasonCounts::default();
    let mut work: Vec<NodeId> = Vec::new();
    let release =
        |id: NodeId, ready: &mut ReadySet, by_rank: &mut RankSet, work: &mut Vec<NodeId>| {
            if bound[id.index()] {
                work.push(id);
            } else {
                match &ranked {
                    Some(_) => by_rank.insert(id),
                    None => ready.insert(id),
                }
            }
        };
    // A bound node that became available releases its users at once (zero latency: a constant
    // is an immediate or a cheap materialisation, a bound load folds into its user).
    let drain = |work: &mut Vec<NodeId>,
                 ready: &mut ReadySet,
                 by_rank: &mut RankSet,
                 waiting: &mut Vec<usize>,
                 ready_cycle: &mut Vec<u32>| {
        while let Some(b) = work.pop() {
            for (succ, _) in dag.succs(b) {
                let s = succ.index();
                ready_cycle[s] = ready_cycle[s].max(ready_cycle[b.index()]);
                waiting[s] -= 1;
                if waiting[s] == 0 {
                    release(succ, ready, by_rank, work);
                }
            }
        }
    };
    // `drain` on the driver's own work list, ready sets, counts and ready cycles.
    macro_rules! drain_work {
        () => {
            drain(
                &mut work,
                &mut ready,
                &mut by_rank,
                &mut waiting,
                &mut ready_cycle,
            )
        };
    }
    for id in dag.nodes() {
        if waiting[id.index()] == 0 {
            release(id, &mut ready, &mut by_rank, &mut work);
        }
    }
    drain_work!();
    let mut pending: Vec<NodeId> = Vec::new();
    while !(ready.is_empty() && by_rank.is_empty()) {
        let pick = if let Some(ranks) = &ranked {
            let only = by_rank.len() == 1;
            let node = by_rank.pop_min().expect("checked non-empty");
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
        // The pick's bound predecessors first (theirs before them), in source order.
        pending.clear();
        if unplaced_bound_preds[pick.node.index()] > 0 {
            collect_bound(dag, &bound, &scheduled, pick.node, &mut pending);
        }
        for &b in &pending {
            reason_counts.add(Reason::Bound, reasons);
            scheduled[b.index()] = true;
            order.push(b);
            pressure.place(b.index());
            for (succ, _) in dag.succs(b) {
                unplaced_bound_preds[succ.index()] -= 1;
            }
            strategy.scheduled(b, &view!());
        }
        reason_counts.add(pick.reason, reasons);
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
                release(succ, &mut ready, &mut by_rank, &mut work);
            }
        }
        drain_work!();
        strategy.scheduled(id, &view!());
    }
    debug_assert_eq!(order.len(), n, "a DAG always drains");
    reason_counts.add_to(reasons);
    Ok((order, pressure.max()))
}

/// The ready nodes of a strategy with a fixed priority: a bit set over the ranks whose
/// lowest set bit is the next pick — the node a min-by_rank of `(rank, node)` would pop.
#[derive(Debug, Default)]
struct RankSet {
    words: Vec<u64>,
    /// Per node: its position in the order of `(rank, node)`.
    slot_of_node: Vec<u32>,
    /// Per slot: the node.
    node_of_slot: Vec<NodeId>,
    len: usize,
}

impl RankSet {
    /// An empty set for nodes whose ranks are `ranks` (indexed by node).
    fn with_ranks(ranks: &[(u32, Reason)]) -> RankSet {
        let n = ranks.len();
        let mut node_of_slot = vec![NodeId(u32::MAX); n];
        // The usual case: the ranks are 0..n in some order, so a rank is its slot.
        let mut is_permutation = true;
        for (node, &(rank, _)) in ranks.iter().enumerate() {
            match node_of_slot.get_mut(rank as usize) {
                Some(slot) if slot.0 == u32::MAX => *slot = NodeId(node as u32),
                _ => {
                    is_permutation = false;
                    break;
                }
            }
        }
        let slot_of_node: Vec<u32> = if is_permutation {
            ranks.iter().map(|&(rank, _)| rank).collect()
        } else {
            let mut by_rank: Vec<u32> = (0..n as u32).collect();
            by_rank.sort_unstable_by_key(|&node| (ranks[node as usize].0, node));
            let mut slots = vec![0u32; n];
            for (slot, &node) in by_rank.iter().enumerate() {
                slots[node as usize] = slot as u32;
                node_of_slot[slot] = NodeId(node);
            }
            slots
        };
        RankSet {
            words: vec![0; n.div_ceil(64)],
            slot_of_node,
            node_of_slot,
            len: 0,
        }
    }

    fn insert(&mut self, node: NodeId) {
        let slot = self.slot_of_node[node.index()] as usize;
        let (word, bit) = (slot / 64, slot % 64);
        if self.words[word] & (1 << bit) == 0 {
            self.words[word] |= 1 << bit;
            self.len += 1;
        }
    }

    /// Removes and returns the node of the lowest rank.
    fn pop_min(&mut self) -> Option<NodeId> {
        let word = self.words.iter().position(|&w| w != 0)?;
        let bit = self.words[word].trailing_zeros();
        self.words[word] &= !(1 << bit);
        self.len -= 1;
        Some(self.node_of_slot[word * 64 + bit as usize])
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Pick counts per reason for one block: the built-in reasons in an array, merged into the
/// caller's map at the end (the same counts as adding each pick to the map).
#[derive(Debug, Default)]
struct ReasonCounts {
    counts: [usize; Reason::ALL.len()],
}

impl ReasonCounts {
    /// Counts one pick made for `reason`; a strategy's own reason goes to `map` directly.
    fn add(&mut self, reason: Reason, map: &mut BTreeMap<Reason, usize>) {
        match Self::slot(reason) {
            Some(slot) => self.counts[slot] += 1,
            None => *map.entry(reason).or_default() += 1,
        }
    }

    /// The reason's position in [`Reason::ALL`], if it is a built-in one.
    fn slot(reason: Reason) -> Option<usize> {
        let slot = match reason {
            Reason::Only => 0,
            Reason::SourceOrder => 1,
            Reason::LoadFirst => 2,
            Reason::FeedsLoad => 3,
            Reason::SinkToUse => 4,
            Reason::OperandsReady => 5,
            Reason::CriticalPath => 6,
            Reason::ReducePressure => 7,
            Reason::KeepPressure => 8,
            Reason::Random => 9,
            Reason::Bound => 10,
            Reason::LoadAhead => 11,
            Reason::Custom(_) => return None,
        };
        debug_assert_eq!(Reason::ALL[slot], reason);
        Some(slot)
    }

    /// Adds the counts to `map` (reasons never picked are not added).
    fn add_to(&self, map: &mut BTreeMap<Reason, usize>) {
        for (&reason, &count) in Reason::ALL.iter().zip(&self.counts) {
            if count > 0 {
                *map.entry(reason).or_default() += count;
            }
        }
    }
}

/// Whether `node` may be bound to its users: it has users in the block, and apart from them
/// nothing but the terminator depends on it (so placing it late breaks no memory order).
pub(crate) fn bindable(dag: &DepDag, node: NodeId) -> bool {
    let mut has_user = false;
    for (succ, edge) in dag.succs(node) {
        if edge.kind == EdgeKind::Data {
            has_user = true;
        } else if Some(succ) != dag.terminator() {
            return false;
        }
    }
    has_user && Some(node) != dag.terminator()
}

/// An integer constant: rematerialisable for free, so bound to its users for every strategy.
pub(crate) fn is_constant(func: &Function, dag: &DepDag, node: NodeId) -> bool {
    func.dfg.insts[dag.inst(node)].opcode() == Opcode::Iconst && dag.preds(node).next().is_none()
}

/// Appends `node`'s unplaced bound predecessors to `out`, each after its own, in source
/// order. (Each step takes the lowest such predecessor above the last one taken: no list to
/// build and sort, as a node has few.)
fn collect_bound(
    dag: &DepDag,
    bound: &[bool],
    scheduled: &[bool],
    node: NodeId,
    out: &mut Vec<NodeId>,
) {
    let mut last: Option<NodeId> = None;
    loop {
        let next = dag
            .preds(node)
            .map(|(p, _)| p)
            .filter(|&p| {
                last.is_none_or(|l| p > l)
                    && bound[p.index()]
                    && !scheduled[p.index()]
                    && !out.contains(&p)
            })
            .min();
        let Some(p) = next else {
            return;
        };
        collect_bound(dag, bound, scheduled, p, out);
        out.push(p);
        last = Some(p);
    }
}

/// Moves the block's instructions into `order` (whose last element is the terminator when
/// the block has one, since every node precedes it). The block must still be in the DAG's
/// source order. The instructions of a longest run of `order` that is already in source
/// order stay where they are; each other one is moved right before its successor in
/// `order` (the same instruction order as moving every instruction, with fewer moves).
pub(crate) fn apply_order(func: &mut Function, block: Block, dag: &DepDag, order: &[NodeId]) {
    debug_assert!(
        func.layout
            .block_insts(block)
            .eq(dag.nodes().map(|n| dag.inst(n))),
        "the block is in the DAG's source order"
    );
    let stays = longest_increasing(order);
    // Back to front: the successor of each moved instruction is already in its final place.
    let mut successor: Option<Inst> = None;
    for (&node, &stay) in order.iter().zip(&stays).rev() {
        let inst = dag.inst(node);
        if !stay {
            func.layout.remove_inst(inst);
            match successor {
                Some(next) => func.layout.insert_inst(inst, next),
                None => func.layout.append_inst(inst, block),
            }
        }
        successor = Some(inst);
    }
}

/// Marks a longest strictly increasing subsequence of `order` (patience sorting).
fn longest_increasing(order: &[NodeId]) -> Vec<bool> {
    // tails[k]: index in `order` of the smallest last element of an increasing run of
    // length k + 1; before[i]: the index preceding `i` in its run.
    let mut tails: Vec<usize> = Vec::with_capacity(order.len());
    let mut before: Vec<usize> = vec![usize::MAX; order.len()];
    for (i, &node) in order.iter().enumerate() {
        // Schedules keep most of the source order: usually the longest run just grows.
        let k = match tails.last() {
            Some(&last) if order[last] < node => tails.len(),
            _ => tails.partition_point(|&t| order[t] < node),
        };
        if k > 0 {
            before[i] = tails[k - 1];
        }
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut stays = vec![false; order.len()];
    let mut at = tails.last().copied();
    while let Some(i) = at {
        stays[i] = true;
        at = (before[i] != usize::MAX).then_some(before[i]);
    }
    stays
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
    let moved = order.iter().zip(&source).filter(|(a, b)| a != b).count();
    let cycles_before = dag.simulate(&source, model.issue_width);
    // An order that moved nothing is the source order: the same simulation.
    let cycles_after = if moved == 0 && order.len() == source.len() {
        cycles_before
    } else {
        dag.simulate(order, model.issue_width)
    };
    BlockStats {
        block: dag.block(),
        insts: dag.len(),
        edges: dag.edge_count(),
        moved,
        pressure_before,
        pressure_after,
        cycles_before,
        cycles_after,
    }
}
