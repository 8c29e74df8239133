//! In-block instruction scheduling with pluggable strategies.
//!
//! The seed review (JDK-8251216) found Graal's MD5 code almost as fast as the intrinsic, except
//! that Graal's schedule puts all sixteen message reads at the top of the block, which on
//! x86_64 raises register pressure until values spill. This module reorders the instructions
//! of each block — never across blocks — so that experiments can ask which order the ordinary
//! pipeline needs.
//!
//! The design follows LLVM's MachineScheduler. The driver ([`driver`]) builds each block's
//! dependence DAG ([`DepDag`]: data edges weighted by a [`MachineModel`]'s latencies, memory
//! edges from alias regions, ordering of traps and side effects, terminator last), keeps the
//! ready set, a simple in-order issue model and the live-value count, and rewrites the block.
//! A [`Strategy`] only picks the next instruction from the [`ReadySet`] and says why
//! ([`Reason`]). Integer constants are rematerialisable: the driver clones each per use
//! ([`remat_constants`]) and places every copy right before its user, whatever the strategy.
//! Strategies are registered by name in [`registry::STRATEGIES`] (and at run time, from outside
//! the workspace, with [`register`]):
//!
//! | name | idea |
//! |---|---|
//! | `source` | identity |
//! | `hoist-loads` | Graal: every load at the top of its block |
//! | `sink-loads` | each load right before its first use |
//! | `remat-loads` | a copy of each never-written load right before each use |
//! | `list-latency` | critical path first, avoiding stalls |
//! | `pressure` | latency while live values fit the registers, pressure beyond |
//! | `pressure-remat` | `pressure` after load rematerialisation |
//! | `latency-pressure` | critical path within the budget, slack work just in time, pressure above |
//! | `balanced` | `remat-loads` out of order while the block's working set fits the registers, else `latency-pressure` (the default) |
//! | `shuffle` | seeded random legal order, for testing |
//! | `optimal` | exact ([`optimum`]): shortest order within the register budget, else lowest pressure, proven or with a stated gap |
//!
//! Every schedule can be checked against a DAG rebuilt from the unscheduled function
//! ([`check_schedule`]); [`ScheduleOptions::verify`] makes the driver do so itself.

pub mod dag;
pub mod driver;
pub mod latency;
#[cfg(feature = "optimal")]
pub mod optimum;
pub mod pressure;
pub mod ready;
pub mod registry;
pub mod remat;
pub mod strategies;
pub mod strategy;

pub use dag::{DepDag, DepEdge, EdgeKind, Effect, NodeId};
pub use latency::{Latencies, MachineModel};
pub use pressure::{Liveness, function_max_pressure};
pub use ready::{ReadySet, SchedView};
pub use registry::{STRATEGIES, StrategyEntry, entries, register};
pub use remat::{RematStats, remat_constants, remat_loads};
pub use strategy::{FinishedBlock, Pick, Reason, Strategy};

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{Block, Function, Inst};
use pressure::PressureTracker;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::fmt;

/// How to run the scheduler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScheduleOptions {
    /// Seed of the `shuffle` strategy (ignored by the others).
    pub seed: u64,
    /// Check the result against DAGs rebuilt from the unscheduled function
    /// ([`check_schedule`]) and fail with [`SchedError::Violation`] if an edge is broken.
    pub verify: bool,
    /// Leave out the figures only reports read (a JIT's choice): the pressure before
    /// scheduling and the per-block [`BlockStats`]. [`ScheduleStats::blocks`] is then empty and
    /// the pressure and cycle totals are 0; the strategy, pick reasons and remat counts remain.
    pub skip_statistics: bool,
    /// Cranelift's e-graph (or [`crate::hoist`], moving or sharing loads) ran before
    /// scheduling: its GVN and code motion have already shared and placed the loads, and
    /// `balanced` leaves them so instead of rematerialising them.
    pub after_egraph: bool,
}

/// Figures of one block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockStats {
    /// The block.
    pub block: Block,
    /// Instructions scheduled (after rematerialisation).
    pub insts: usize,
    /// Edges of its DAG.
    pub edges: usize,
    /// Instructions whose position changed.
    pub moved: usize,
    /// Maximum live values in the original function.
    pub pressure_before: usize,
    /// Maximum live values after scheduling.
    pub pressure_after: usize,
    /// Cycles of the DAG's source order on the model's in-order issue model.
    pub cycles_before: u32,
    /// Cycles of the chosen order on the same model.
    pub cycles_after: u32,
}

/// What a scheduling run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleStats {
    /// Strategy name.
    pub strategy: String,
    /// Target of the machine model.
    pub target: String,
    /// Maximum simultaneously live values over all blocks, before.
    pub max_pressure_before: usize,
    /// Maximum simultaneously live values over all blocks, after.
    pub max_pressure_after: usize,
    /// Per-block figures, in layout order.
    pub blocks: Vec<BlockStats>,
    /// How many picks each reason decided.
    pub pick_reasons: BTreeMap<Reason, usize>,
    /// Load copies inserted by rematerialisation.
    pub remat_count: usize,
    /// Original loads replaced by those copies.
    pub remat_loads: usize,
    /// Instructions whose position changed, over all blocks.
    pub moved: usize,
    /// Sum of the blocks' `cycles_before`.
    pub cycles_before: u64,
    /// Sum of the blocks' `cycles_after`.
    pub cycles_after: u64,
}

/// A schedule that breaks the DAG of the unscheduled function.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleViolation {
    /// A block of the original function is missing.
    #[error("block {0} is missing after scheduling")]
    MissingBlock(Block),
    /// A block does not hold the same instructions as before.
    #[error("block {block} holds different instructions after scheduling: {detail}")]
    DifferentInstructions {
        /// The block.
        block: Block,
        /// What differs.
        detail: String,
    },
    /// An edge's target was placed before its source.
    #[error("block {block}: {kind} edge broken, `{from}` must precede `{to}`")]
    EdgeBroken {
        /// The block.
        block: Block,
        /// The kind of dependence.
        kind: EdgeKind,
        /// The instruction that must come first.
        from: String,
        /// The instruction that must come second.
        to: String,
    },
}

/// Why scheduling failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchedError {
    /// No strategy has this name.
    #[error("unknown scheduling strategy `{name}`; valid strategies: {}", valid.join(", "))]
    UnknownStrategy {
        /// The name asked for.
        name: String,
        /// The registered names.
        valid: Vec<&'static str>,
    },
    /// [`register`] was given a name that is already taken.
    #[error("a scheduling strategy called `{name}` is already registered")]
    DuplicateStrategy {
        /// The name asked for.
        name: String,
    },
    /// [`register`] was given a name that cannot be selected on a command line.
    #[error("cannot register a scheduling strategy called `{name}`: {reason}")]
    InvalidStrategyName {
        /// The name asked for.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A strategy picked a node that was not ready (a bug in the strategy).
    #[error("strategy `{strategy}` picked {node} in {block}, which is not ready")]
    InvalidPick {
        /// The strategy.
        strategy: String,
        /// The block.
        block: Block,
        /// The node.
        node: NodeId,
    },
    /// A strategy's static priority does not rank every node of the block (a bug in the
    /// strategy).
    #[error("strategy `{strategy}` ranked the wrong number of nodes in {block}")]
    InvalidPriority {
        /// The strategy.
        strategy: String,
        /// The block.
        block: Block,
    },
    /// The verifying run found a broken dependence.
    #[error("schedule violates its DAG: {0}")]
    Violation(#[from] ScheduleViolation),
}

/// The strategy names, in report order: the built-ins, then those added by [`register`].
pub fn strategy_names() -> Vec<&'static str> {
    entries().iter().map(|e| e.name).collect()
}

/// The entry called `name`, built-in or registered.
pub fn strategy(name: &str) -> Result<StrategyEntry, SchedError> {
    entries()
        .into_iter()
        .find(|e| e.name == name)
        .ok_or_else(|| SchedError::UnknownStrategy {
            name: name.to_string(),
            valid: strategy_names(),
        })
}

/// Schedules every block of `func` with the strategy called `strategy`.
pub fn schedule(
    func: &mut Function,
    strategy: &str,
    model: &MachineModel,
) -> Result<ScheduleStats, SchedError> {
    schedule_with_options(func, strategy, model, &ScheduleOptions::default())
}

/// [`schedule`] with a seed for `shuffle`.
pub fn schedule_with_seed(
    func: &mut Function,
    strategy: &str,
    model: &MachineModel,
    seed: u64,
) -> Result<ScheduleStats, SchedError> {
    let opts = ScheduleOptions {
        seed,
        ..ScheduleOptions::default()
    };
    schedule_with_options(func, strategy, model, &opts)
}

/// [`schedule`] with explicit options. On error `func` may be partly scheduled.
pub fn schedule_with_options(
    func: &mut Function,
    strategy_name: &str,
    model: &MachineModel,
    opts: &ScheduleOptions,
) -> Result<ScheduleStats, SchedError> {
    let entry = strategy(strategy_name)?;
    let mut strat = (entry.make)(opts);
    schedule_with_strategy(func, entry.name, strat.as_mut(), model, opts)
}

/// Schedules every block of `func` with a strategy object that need not be registered (its
/// statistics carry `name`). On error `func` may be partly scheduled.
pub fn schedule_with_strategy(
    func: &mut Function,
    name: &str,
    strat: &mut dyn Strategy,
    model: &MachineModel,
    opts: &ScheduleOptions,
) -> Result<ScheduleStats, SchedError> {
    let blocks: Vec<Block> = func.layout.blocks().collect();
    // Scheduling (and rematerialisation, which copies inside blocks) leaves the control flow
    // as it is: one set of edges serves both liveness computations.
    let preds = pressure::Predecessors::of(func);
    let pressure_before: HashMap<Block, usize> = if opts.skip_statistics {
        HashMap::default()
    } else {
        let liveness_before = Liveness::compute_over(func, &preds);
        let pressures = pressure::blocks_max_pressure(func, &liveness_before, &blocks);
        blocks.iter().copied().zip(pressures).collect()
    };

    // Rematerialisation compares values: resolve aliases once for both passes (neither
    // creates an alias).
    func.dfg.resolve_all_aliases();
    let (remat, _) = remat::remat_resolved(func, strat.remat_loads(), true);
    let snapshot = opts.verify.then(|| func.clone());
    // Every block's DAG first: reordering one block changes no other block's DAG, and the
    // DAGs list what each block reads from elsewhere, which is all liveness needs.
    let dags = DepDag::build_all_resolved(func, &blocks, model);
    // Reordering inside blocks does not change live-in/live-out sets, so one liveness serves
    // the driver and the statistics after scheduling.
    let liveness = Liveness::from_dags(func, &dags, &preds);

    let mut reasons = BTreeMap::new();
    let mut block_stats = Vec::with_capacity(blocks.len());
    // The pressure trackers' value numbering, shared by the blocks (all zero between them).
    let mut value_ids = SecondaryMap::with_capacity(func.dfg.num_values());
    value_ids.resize(func.dfg.num_values());
    for (&block, dag) in blocks.iter().zip(&dags) {
        let pressure = PressureTracker::for_dag(func, &liveness, dag, &mut value_ids);
        let (order, pressure_after) =
            driver::schedule_block(func, pressure, dag, model, strat, name, &mut reasons)?;
        driver::apply_order(func, block, dag, &order);
        if !opts.skip_statistics {
            let before = pressure_before.get(&block).copied().unwrap_or(0);
            block_stats.push(driver::block_stats(
                dag,
                model,
                &order,
                before,
                pressure_after,
            ));
        }
    }
    if let Some(snapshot) = snapshot {
        check_schedule(&snapshot, func)?;
    }
    Ok(ScheduleStats {
        strategy: name.to_string(),
        target: model.target.to_string(),
        max_pressure_before: pressure_before.values().copied().max().unwrap_or(0),
        max_pressure_after: block_stats
            .iter()
            .map(|b| b.pressure_after)
            .max()
            .unwrap_or(0),
        moved: block_stats.iter().map(|b| b.moved).sum(),
        cycles_before: block_stats.iter().map(|b| u64::from(b.cycles_before)).sum(),
        cycles_after: block_stats.iter().map(|b| u64::from(b.cycles_after)).sum(),
        blocks: block_stats,
        pick_reasons: reasons,
        remat_count: remat.copies,
        remat_loads: remat.loads_rematerialized,
    })
}

/// Checks that `after` is a legal in-block reordering of `before`: the same blocks hold the
/// same instructions, and every edge of each block's DAG (built from `before`) still points
/// forward. Latencies do not matter for legality, so any model gives the same answer.
pub fn check_schedule(before: &Function, after: &Function) -> Result<(), ScheduleViolation> {
    let model = MachineModel::zen3();
    for block in before.layout.blocks() {
        if !after.layout.is_block_inserted(block) {
            return Err(ScheduleViolation::MissingBlock(block));
        }
        let dag = DepDag::build(before, block, &model);
        let placed: Vec<Inst> = after.layout.block_insts(block).collect();
        let pos: HashMap<Inst, usize> = placed.iter().enumerate().map(|(i, &x)| (x, i)).collect();
        if placed.len() != dag.len() {
            return Err(ScheduleViolation::DifferentInstructions {
                block,
                detail: format!("{} instructions before, {} after", dag.len(), placed.len()),
            });
        }
        if let Some(missing) = dag
            .nodes()
            .map(|n| dag.inst(n))
            .find(|i| !pos.contains_key(i))
        {
            return Err(ScheduleViolation::DifferentInstructions {
                block,
                detail: format!("`{}` is gone", before.dfg.display_inst(missing)),
            });
        }
        for (from, to, edge) in dag.edges() {
            let (a, b) = (dag.inst(from), dag.inst(to));
            if pos[&a] >= pos[&b] {
                return Err(ScheduleViolation::EdgeBroken {
                    block,
                    kind: edge.kind,
                    from: before.dfg.display_inst(a).to_string(),
                    to: before.dfg.display_inst(b).to_string(),
                });
            }
        }
    }
    Ok(())
}

impl fmt::Display for ScheduleStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on {}: max pressure {} -> {}, {} moved, {} remat copies, model cycles {} -> {}; picks:",
            self.strategy,
            self.target,
            self.max_pressure_before,
            self.max_pressure_after,
            self.moved,
            self.remat_count,
            self.cycles_before,
            self.cycles_after
        )?;
        for (reason, n) in &self.pick_reasons {
            write!(f, " {reason}={n}")?;
        }
        Ok(())
    }
}
