//! The strategy interface, after LLVM's `MachineSchedStrategy`: a strategy initialises per
//! block, picks the next instruction from the ready set (saying why) and is told what was
//! scheduled. The driver owns the DAG, the ready set, pressure tracking and every IR edit.

use super::dag::NodeId;
use super::ready::{ReadySet, SchedView};
use std::collections::BTreeMap;
use std::fmt;

/// Why a node was picked: the criterion that decided between the candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// It was the only ready node.
    Only,
    /// Lowest source position among the candidates left.
    SourceOrder,
    /// A load, placed as early as possible (Graal's placement).
    LoadFirst,
    /// Computes an operand of a load still to be placed.
    FeedsLoad,
    /// A load (or its address computation) placed right before its first use.
    SinkToUse,
    /// Its operands are available now; the other candidates would stall.
    OperandsReady,
    /// Longest latency path to the end of the block.
    CriticalPath,
    /// Live values exceed the register budget and this lowers them the most.
    ReducePressure,
    /// Keeps live values within the register budget where others would exceed it.
    KeepPressure,
    /// Seeded random choice.
    Random,
    /// Placed by the driver right before its user: a constant (for every strategy) or a node
    /// the strategy binds ([`Strategy::binds_to_user`]).
    Bound,
    /// A load issued about one step ahead of its use: early enough to cover its latency,
    /// late enough not to hold a register longer.
    LoadAhead,
    /// A criterion of a strategy's own (e.g. one defined outside this crate), shown by its
    /// text: a short kebab-case name like the built-in reasons'.
    Custom(&'static str),
}

impl Reason {
    /// Every built-in reason, in report order. A strategy's own [`Reason::Custom`] reasons
    /// are not listed: they appear in `ScheduleStats::pick_reasons` after these.
    pub const ALL: [Reason; 12] = [
        Reason::Only,
        Reason::SourceOrder,
        Reason::LoadFirst,
        Reason::FeedsLoad,
        Reason::SinkToUse,
        Reason::OperandsReady,
        Reason::CriticalPath,
        Reason::ReducePressure,
        Reason::KeepPressure,
        Reason::Random,
        Reason::Bound,
        Reason::LoadAhead,
    ];

    /// Short kebab-case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Only => "only",
            Reason::SourceOrder => "source-order",
            Reason::LoadFirst => "load-first",
            Reason::FeedsLoad => "feeds-load",
            Reason::SinkToUse => "sink-to-use",
            Reason::OperandsReady => "operands-ready",
            Reason::CriticalPath => "critical-path",
            Reason::ReducePressure => "reduce-pressure",
            Reason::KeepPressure => "keep-pressure",
            Reason::Random => "random",
            Reason::Bound => "bound",
            Reason::LoadAhead => "load-ahead",
            Reason::Custom(text) => text,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A strategy's choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick {
    /// The ready node to place next.
    pub node: NodeId,
    /// Why.
    pub reason: Reason,
}

impl Pick {
    /// Shorthand constructor.
    pub fn new(node: NodeId, reason: Reason) -> Self {
        Self { node, reason }
    }
}

/// A scheduling strategy. Implementations are small: all bookkeeping is the driver's.
pub trait Strategy {
    /// Whether the driver should rematerialise loads of never-written memory before building
    /// the DAGs (one load per use, placed right before it).
    fn remat_loads(&self) -> bool {
        false
    }

    /// Whether the driver should place `node` right before its first user instead of offering
    /// it (e.g. a load that folds into its user as a memory operand). Asked once per node after
    /// [`Strategy::init_block`]; the driver binds only nodes that nothing but their users and
    /// the terminator depend on, and binds integer constants for every strategy.
    fn binds_to_user(&self, _view: &SchedView<'_>, _node: NodeId) -> bool {
        false
    }

    /// Called once per block before the first pick.
    fn init_block(&mut self, _view: &SchedView<'_>) {}

    /// Picks the next node; it must be in `ready` (which is never empty).
    fn pick(&mut self, ready: &ReadySet, view: &SchedView<'_>) -> Pick;

    /// For strategies whose pick is always the ready node with the smallest fixed rank: each
    /// node's rank (distinct) and the reason a pick by it records, asked once per block after
    /// [`Strategy::init_block`]. The driver then keeps the ready nodes in a heap and never
    /// calls [`Strategy::pick`]; the picks are the same. `None` (the default) otherwise.
    fn static_priority(&self) -> Option<Vec<(u32, Reason)>> {
        None
    }

    /// Called after the driver placed `node`.
    fn scheduled(&mut self, _node: NodeId, _view: &SchedView<'_>) {}

    /// A schedule of the block just initialised that this strategy already ran with the
    /// driver's own loop from the block's entry state (e.g. `balanced`'s trial of
    /// `remat-loads`, when it keeps that order): asked once per block right after
    /// [`Strategy::init_block`], and when given the driver uses it instead of running the
    /// block a second time. Only this crate can build a [`FinishedBlock`] (from
    /// [`crate::sched::driver`]'s trial run), so a result is always the driver's own. `None`
    /// (the default): the driver runs the block.
    fn take_finished_block(&mut self) -> Option<FinishedBlock> {
        None
    }
}

/// A block the driver has already scheduled in a trial run ([`Strategy::take_finished_block`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinishedBlock {
    /// The nodes in the order the trial placed them.
    pub(crate) order: Vec<NodeId>,
    /// The maximum pressure the driver tracked along that order.
    pub(crate) max_pressure: usize,
    /// How many picks each reason made.
    pub(crate) reasons: BTreeMap<Reason, usize>,
}

impl FinishedBlock {
    /// The nodes in the order the trial placed them.
    pub fn order(&self) -> &[NodeId] {
        &self.order
    }

    /// The maximum number of live values the driver tracked along [`FinishedBlock::order`].
    pub fn max_pressure(&self) -> usize {
        self.max_pressure
    }
}
