//! The ready set and the read-only view of the driver's state that strategies consult.

use super::dag::{DepDag, NodeId};
use super::latency::MachineModel;
use super::pressure::PressureTracker;
use super::strategy::{Pick, Reason};
use cranelift_codegen::ir::Function;
use std::cmp::Ordering;

/// Nodes whose predecessors have all been placed, in source order.
#[derive(Clone, Debug, Default)]
pub struct ReadySet {
    nodes: Vec<NodeId>,
}

impl ReadySet {
    pub(crate) fn insert(&mut self, n: NodeId) {
        if let Err(at) = self.nodes.binary_search(&n) {
            self.nodes.insert(at, n);
        }
    }

    pub(crate) fn remove(&mut self, n: NodeId) -> bool {
        match self.nodes.binary_search(&n) {
            Ok(at) => {
                self.nodes.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    /// The ready nodes in source order.
    pub fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    /// Number of ready nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether nothing is ready.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether `n` is ready.
    pub fn contains(&self, n: NodeId) -> bool {
        self.nodes.binary_search(&n).is_ok()
    }

    /// The earliest node in source order.
    pub fn first(&self) -> Option<NodeId> {
        self.nodes.first().copied()
    }

    /// The ready node with the smallest key; ties go to the earlier source position.
    pub fn min_by_key<K: Ord>(&self, mut key: impl FnMut(NodeId) -> K) -> Option<NodeId> {
        self.nodes.iter().copied().min_by_key(|&n| key(n))
    }

    /// LLVM `tryCandidate`-style selection: walks the candidates keeping the best, where
    /// `better(a, b)` says whether `a` beats `b` and on which criterion. Returns the winner and
    /// the criterion that last decided in its favour (`SourceOrder` when nothing did).
    pub fn select(
        &self,
        mut better: impl FnMut(NodeId, NodeId) -> Option<(Ordering, Reason)>,
    ) -> Option<(NodeId, Reason)> {
        let mut best: Option<(NodeId, Reason)> = None;
        for &c in &self.nodes {
            best = Some(match best {
                None => (c, Reason::SourceOrder),
                Some((b, why)) => match better(c, b) {
                    Some((Ordering::Less, reason)) => (c, reason),
                    Some((_, reason)) if why == Reason::SourceOrder => (b, reason),
                    _ => (b, why),
                },
            });
        }
        best
    }

    /// The pick [`ReadySet::select`] makes with `better`, for the criterion that decided it.
    ///
    /// # Panics
    /// If nothing is ready (the driver never offers an empty ready set).
    pub fn pick_by(
        &self,
        better: impl FnMut(NodeId, NodeId) -> Option<(Ordering, Reason)>,
    ) -> Pick {
        let (node, reason) = self
            .select(better)
            .expect("the driver never offers an empty ready set");
        Pick::new(node, reason)
    }

    /// The earliest node in source order, picked for `reason`.
    ///
    /// # Panics
    /// If nothing is ready (the driver never offers an empty ready set).
    pub fn pick_first(&self, reason: Reason) -> Pick {
        let node = self
            .first()
            .expect("the driver never offers an empty ready set");
        Pick::new(node, reason)
    }
}

/// Read-only view of the driver's state for the strategy.
pub struct SchedView<'a> {
    /// The function (instructions are not yet moved while a block is being scheduled).
    pub func: &'a Function,
    /// The block's DAG.
    pub dag: &'a DepDag,
    /// The machine model.
    pub model: &'a MachineModel,
    pub(crate) pressure: &'a PressureTracker,
    pub(crate) ready_cycle: &'a [u32],
    pub(crate) scheduled: &'a [bool],
    pub(crate) cycle: u32,
    pub(crate) placed: usize,
    /// Per node: the driver places it right before its first user (constants, bound loads).
    pub(crate) bound: &'a [bool],
}

impl SchedView<'_> {
    /// The current cycle of the driver's in-order issue model.
    pub fn cycle(&self) -> u32 {
        self.cycle
    }

    /// Earliest cycle at which `n`'s operands are available.
    pub fn ready_cycle(&self, n: NodeId) -> u32 {
        self.ready_cycle[n.index()]
    }

    /// Cycles `n` would wait if issued now.
    pub fn stall(&self, n: NodeId) -> u32 {
        self.ready_cycle(n).saturating_sub(self.cycle)
    }

    /// Whether `n` has been placed.
    pub fn is_scheduled(&self, n: NodeId) -> bool {
        self.scheduled[n.index()]
    }

    /// Number of nodes placed so far in this block.
    pub fn placed(&self) -> usize {
        self.placed
    }

    /// Values live at the current point.
    pub fn live(&self) -> usize {
        self.pressure.live()
    }

    /// Change in live values if `n` is placed next, with the bound predecessors the driver
    /// places right before it: each of those is live at `n` (the tracker alone would count
    /// its value as dying there without ever having counted it live).
    pub fn pressure_delta(&self, n: NodeId) -> isize {
        let mut bound_preds: Vec<NodeId> = self
            .dag
            .preds(n)
            .map(|(p, _)| p)
            .filter(|p| {
                self.bound.get(p.index()).copied().unwrap_or(false) && !self.scheduled[p.index()]
            })
            .collect();
        bound_preds.sort_unstable();
        bound_preds.dedup();
        self.pressure.delta(n.index()) + bound_preds.len() as isize
    }

    /// The register budget: the model's allocatable integer registers.
    pub fn register_limit(&self) -> usize {
        self.model.allocatable_gprs
    }
}

/// Compares two candidates on a key where smaller is better, reporting `reason` if they differ.
pub fn prefer_smaller<K: Ord>(a: K, b: K, reason: Reason) -> Option<(Ordering, Reason)> {
    match a.cmp(&b) {
        Ordering::Equal => None,
        o => Some((o, reason)),
    }
}

/// The latency criteria shared by the latency-aware strategies: first avoid a stall, then
/// prefer the longer critical path.
pub fn latency_criteria(view: &SchedView<'_>, a: NodeId, b: NodeId) -> Option<(Ordering, Reason)> {
    prefer_smaller(view.stall(a), view.stall(b), Reason::OperandsReady).or_else(|| {
        prefer_smaller(
            std::cmp::Reverse(view.dag.height(a)),
            std::cmp::Reverse(view.dag.height(b)),
            Reason::CriticalPath,
        )
    })
}
