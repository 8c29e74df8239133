//! `balanced`: one default for every target, whose behaviour follows the target's machine
//! model and the block being scheduled (never the kernel).
//!
//! * **Out-of-order cores** (the model has a reorder buffer: x86_64's Zen 3, AArch64's
//!   ThunderX2, s390x's z13), **when the block's working set fits the registers**: the hardware
//!   hides the latency of a load issued right before its use, so the schedule spends nothing
//!   on latency and everything on registers — `remat-loads`' order: each load of never-written
//!   memory copied to each use and placed right before it (on x86_64 and s390x it folds into
//!   its user as a memory operand). This keeps MD5's loop free of spills on x86_64 and
//!   AArch64. One exception to source order: each loop-carried update (a pointer or counter
//!   step the back edge passes on) goes as early as it costs no register
//!   ([`RematLoads::with_early_updates`]), so the next iteration's loads can start early.
//! * **Out-of-order cores, when spills are unavoidable**: if even `remat-loads`' order needs
//!   more registers than the budget for the values the block works on, the allocator must
//!   spill inside the block's dependence chains whatever the order. What then decides the
//!   speed is where the spills and reloads fall relative to the critical path, and
//!   `latency-pressure` is the order that weighs both (SHA-256's 64 rounds on x86_64 and
//!   s390x).
//! * **In-order cores** ([`MachineModel::in_order`](crate::sched::MachineModel::in_order):
//!   riscv64's SiFive U74): nothing reorders what the schedule leaves exposed, so the order
//!   must cover the latencies itself — `latency-pressure`'s cascade: critical path within the
//!   register budget, slack work just in time (each load about one step ahead of its use),
//!   pressure relief above the budget.
//!
//! **The working set** of a block in an order is its maximum live values
//! ([`PressureTracker`](crate::sched::pressure::PressureTracker)) minus the values that are
//! live through the block without being read in it: those can sit in a spill slot for the
//! whole block, stored before it and reloaded after it, off its chains. For straight-line code
//! in a fixed order the registers needed without spilling equal the maximum live values (the
//! live ranges are intervals), so a working set above the budget means spills the allocator
//! cannot move out of the block. The test is exact, not a tuned margin: `remat-loads`' order
//! is built once as a trial (the driver's own loop on a copy of its state; no IR is touched)
//! and its working set compared with [`SchedView::register_limit`]. When the block takes that
//! order, the trial run is handed to the driver as the block's schedule
//! ([`Strategy::take_finished_block`]) instead of being run again.

use super::latency_pressure::LatencyPressure;
use super::remat_loads::RematLoads;
use crate::sched::driver::trial_block;
use crate::sched::registry::StrategyEntry;
use crate::sched::{
    FinishedBlock, MachineModel, NodeId, Pick, ReadySet, Reason, SchedError, SchedView,
    ScheduleOptions, Strategy, schedule_with_strategy,
};
use cranelift_codegen::ir::{Block, Function};

/// `remat-loads` on out-of-order cores while the block's working set fits the registers,
/// `latency-pressure` otherwise and on in-order cores.
#[derive(Debug)]
pub struct Balanced {
    /// The order used on out-of-order cores when the working set fits.
    registers_first: RematLoads,
    /// The order used on in-order cores and where spills are unavoidable.
    latency_and_pressure: LatencyPressure,
    /// The current block uses `latency-pressure`'s order.
    use_latency_pressure: bool,
    /// Every block's choice so far, in scheduling order.
    choices: Vec<(Block, BalancedChoice)>,
    /// The current block's trial run of `remat-loads`, when that is the order it takes.
    finished: Option<FinishedBlock>,
    /// Rematerialise loads of never-written memory (off after the e-graph, see
    /// [`Balanced::after_egraph`]).
    remat: bool,
}

impl Default for Balanced {
    fn default() -> Self {
        Self {
            registers_first: RematLoads::with_early_updates(),
            latency_and_pressure: LatencyPressure::default(),
            use_latency_pressure: false,
            choices: Vec::new(),
            finished: None,
            remat: true,
        }
    }
}

/// What `balanced` chose for a block, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalancedChoice {
    /// The model is in-order: `latency-pressure`.
    InOrder,
    /// Out of order, and `remat-loads`' working set fits the budget: `remat-loads`.
    Fits {
        /// Working set of `remat-loads`' order (max live values minus idle live-through ones).
        working_set: usize,
    },
    /// Out of order, and `remat-loads`' working set exceeds the budget: `latency-pressure`.
    SpillsUnavoidable {
        /// Working set of `remat-loads`' order.
        working_set: usize,
    },
}

impl BalancedChoice {
    /// Decides for the block `view` shows (as given to [`Strategy::init_block`]).
    pub fn for_block(view: &SchedView<'_>) -> BalancedChoice {
        Self::decide(view).0
    }

    /// [`BalancedChoice::for_block`], with `remat-loads`' trial schedule of the block when
    /// the choice is [`BalancedChoice::Fits`] (the order the block then takes, already run).
    fn decide(view: &SchedView<'_>) -> (BalancedChoice, Option<FinishedBlock>) {
        Self::decide_with(view, &mut RematLoads::with_early_updates())
    }

    /// [`BalancedChoice::decide`] with `trial` as the `remat-loads` instance that runs the
    /// trial (it is left initialised for the block).
    fn decide_with(
        view: &SchedView<'_>,
        trial: &mut RematLoads,
    ) -> (BalancedChoice, Option<FinishedBlock>) {
        if view.model.in_order {
            return (BalancedChoice::InOrder, None);
        }
        // A trial of a built-in strategy cannot fail; if it ever did, the safe choice is the
        // register-first order the block would have had before this rule.
        let Ok(finished) = trial_block(view, trial) else {
            return (BalancedChoice::Fits { working_set: 0 }, None);
        };
        let working_set = finished
            .max_pressure()
            .saturating_sub(view.pressure.idle_through());
        if working_set > view.register_limit() {
            (BalancedChoice::SpillsUnavoidable { working_set }, None)
        } else {
            (BalancedChoice::Fits { working_set }, Some(finished))
        }
    }

    /// Whether the block takes `latency-pressure`'s order.
    pub fn uses_latency_pressure(self) -> bool {
        !matches!(self, BalancedChoice::Fits { .. })
    }
}

/// What `balanced` chooses for each block of `func` on `model`, in layout order (`func` is not
/// changed: a copy is scheduled).
pub fn block_choices(
    func: &Function,
    model: &MachineModel,
) -> Result<Vec<(Block, BalancedChoice)>, SchedError> {
    let mut copy = func.clone();
    let mut balanced = Balanced::default();
    let opts = ScheduleOptions {
        skip_statistics: true,
        ..ScheduleOptions::default()
    };
    schedule_with_strategy(&mut copy, ENTRY.name, &mut balanced, model, &opts)?;
    Ok(balanced.choices)
}

impl Balanced {
    /// `balanced` for code Cranelift's e-graph has already optimised: the same orders, without
    /// load rematerialisation. The e-graph's GVN shares the repeated loads of never-written
    /// memory (Wasmtime's `vmctx` fields: heap base, bound) and its code motion hoists them;
    /// copying them back to every use then costs instructions and, measured, registers: on
    /// miniz_oxide's deflate module (guard pages, x86_64, e-graph first, 225 functions)
    /// rematerialisation added 7 % instructions and 16 % spills + reloads to `pressure`'s and
    /// to `sink-loads`' order (`pressure-remat`, `remat-loads`), while `sink-loads`' order
    /// alone matched source order (`notes/real-programs.md`, "Why the default lost to source
    /// order"). Without the e-graph (every built-in kernel's default pipeline) nothing changes.
    pub fn after_egraph() -> Self {
        Self {
            remat: false,
            ..Self::default()
        }
    }

    fn active(&mut self) -> &mut dyn Strategy {
        if self.use_latency_pressure {
            &mut self.latency_and_pressure
        } else {
            &mut self.registers_first
        }
    }

    fn active_ref(&self) -> &dyn Strategy {
        if self.use_latency_pressure {
            &self.latency_and_pressure
        } else {
            &self.registers_first
        }
    }
}

impl Strategy for Balanced {
    fn remat_loads(&self) -> bool {
        // Both orders work on rematerialised loads, and without them after the e-graph.
        self.remat
    }

    fn binds_to_user(&self, view: &SchedView<'_>, node: NodeId) -> bool {
        self.active_ref().binds_to_user(view, node)
    }

    fn init_block(&mut self, view: &SchedView<'_>) {
        let (choice, finished) = BalancedChoice::decide_with(view, &mut self.registers_first);
        self.choices.push((view.dag.block(), choice));
        self.use_latency_pressure = choice.uses_latency_pressure();
        // `remat-loads`' order was run as the trial from this very state: keep that run
        // (the driver takes it) instead of running the same strategy again. The active order
        // is still initialised, for a caller that asks for picks instead (e.g. a wrapper that
        // does not forward `take_finished_block`): when the trial is kept, that is the trial's
        // own instance, initialised for this block by the trial (`remat-loads` keeps no state
        // that its picks change).
        let trial_kept = finished.is_some();
        self.finished = finished;
        if !trial_kept {
            self.active().init_block(view);
        }
    }

    fn take_finished_block(&mut self) -> Option<FinishedBlock> {
        self.finished.take()
    }

    fn pick(&mut self, ready: &ReadySet, view: &SchedView<'_>) -> Pick {
        self.active().pick(ready, view)
    }

    fn static_priority(&self) -> Option<Vec<(u32, Reason)>> {
        self.active_ref().static_priority()
    }

    fn scheduled(&mut self, node: NodeId, view: &SchedView<'_>) {
        self.active().scheduled(node, view);
    }
}

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "balanced",
    summary: "remat-loads' order on out-of-order cores while the block's working set fits the \
              registers; latency-pressure where spills are unavoidable and on in-order cores",
    make: |options| {
        Box::new(if options.after_egraph {
            Balanced::after_egraph()
        } else {
            Balanced::default()
        })
    },
};
