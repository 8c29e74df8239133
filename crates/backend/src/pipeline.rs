//! The whole pipeline in one place, in the order it runs:
//!
//! ```text
//! build → verify → bce (slow path outlined?) → verify → forward? (store→load, dead scratch
//!       stores) → verify → optimise? → hoist? (invariant loads, value numbering) → verify
//!       → rewrite → verify
//!       → iv (strength reduction in the check-free loops) → verify
//!       → schedule → verify → rotate (loops tested at the bottom) → verify
//!       → compile (opt_level=none) → stats
//! ```
//!
//! [`StageOptions`] says how: a report keeps every stage's text and verifies after each stage;
//! the JIT verifies only what a strategy given as code produced ([`StageOptions::verify_result`])
//! and may outline the checked slow path
//! ([`schedlab_passes::deopt`]) so that only the fast loop is compiled.
//!
//! Each stage is a free function from its own module; this file only sequences them, keeps
//! the intermediate CLIF text for `schedlab dump`, and collects every stage's statistics.

use crate::compile::{CompileError, Compiled, compile_for, compile_with_isa, optimize};
use crate::stats::{CodeStats, code_stats};
use crate::target::{IsaChoice, Target};
use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::{CallConv, TargetIsa};
use cranelift_codegen::settings;
use schedlab_passes::bce::heap::HeapFacts;
use schedlab_passes::bce::{self, BceError, BceLevel, BceStats};
use schedlab_passes::deopt::SlowPathCall;
use schedlab_passes::forward::{self, ForwardStats};
use schedlab_passes::hoist::{self, HoistStats};
use schedlab_passes::iv::{self, IvStats};
use schedlab_passes::rewrite::{self, ConstantPlacement, RewriteStats, model_latency};
use schedlab_passes::rotate::{self, RotateStats};
use schedlab_passes::sched::{
    self, MachineModel, SchedError, ScheduleOptions, ScheduleStats, StrategyEntry,
};

/// The scheduling strategy the pipeline (and so the `Md5` library) uses unless told otherwise:
/// `balanced`, which follows the target's machine model — `remat-loads`' order (each message
/// load right before its use, as the hand-written intrinsics do) on out-of-order cores,
/// `latency-pressure` on in-order ones (riscv64's SiFive U74). `scripts/goal-table` checks it
/// against every other strategy per kernel × target × CPU model (`notes/design.md`, "One default
/// for every target: `balanced`").
pub const DEFAULT_STRATEGY: &str = "balanced";

/// Whether the pipeline forwards stores to loads unless told otherwise: on. It only changes
/// code that reloads what it stored (of the built-in kernels: SHA-256's `W`; MD5, mulAdd,
/// squareToLen and int_sum compile byte-identically either way). With `W` in values x86_64
/// spills more (the window does not fit 14 registers) yet runs about 20 % faster, because the
/// message schedule no longer waits on a store → load round trip through `W` two steps
/// back (`notes/design.md`, "Forwarding on by default").
pub const DEFAULT_FORWARD_STORES: bool = true;

/// Whether the pipeline hoists loop-invariant loads, shares values, simplifies boolean
/// tests and divides by constants by multiplication ([`schedlab_passes::hoist`]) unless told
/// otherwise: on. Without it the default's innermost loops modelled 1.12× (x86_64) and 1.09×
/// (aarch64) stock Cranelift's cycles on a corpus shard, with it 0.94× and 0.95×
/// (`notes/real-programs.md`, "Why the default's loops model slower than stock without the
/// e-graph"); the kernels' code changes by a few instructions at most (MD5's checked
/// fallback).
pub const DEFAULT_HOIST: bool = true;

/// What to run on a kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PipelineConfig {
    /// How far bounds-check elimination goes.
    pub bce: BceLevel,
    /// Forward stores to loads and remove dead stores to private scratch memory
    /// ([`schedlab_passes::forward`]), right after bounds-check elimination.
    pub forward_stores: bool,
    /// Run Cranelift's e-graph optimiser as an explicit stage before scheduling.
    pub optimize: bool,
    /// Hoist loop-invariant loads, share identical values and simplify boolean tests
    /// ([`schedlab_passes::hoist`]), after forwarding (and the e-graph).
    pub hoist: bool,
    /// Run the critical-path rewrites (masked merge, reassociation by ready time).
    pub rewrites: bool,
    /// With the rewrites: leave trees of `i8` conditions (a predicated loop's preheader test)
    /// as built instead of reassociating them ([`rewrite::RewriteOptions::keep_conditions`]).
    pub keep_conditions: bool,
    /// Where reassociation puts a tree's folded constant (early: off the dependence chain).
    pub constants: ConstantPlacement,
    /// Strength-reduce the induction variables of predicated check-free loops
    /// ([`schedlab_passes::iv`]): a pointer and an end pointer instead of the 32-bit `int`.
    pub strength_reduce: bool,
    /// The in-block scheduling strategy, by registered name (ignored when `strategy_entry`
    /// is set; [`PipelineConfig::with_strategy_entry`] keeps both in step).
    pub strategy: String,
    /// A strategy given directly, registered or not: used instead of looking `strategy` up.
    pub strategy_entry: Option<StrategyEntry>,
    /// The scheduler's and rewrites' machine model; `None`: [`machine_model`] of the target.
    pub machine_model: Option<MachineModel>,
    /// Seed for the `shuffle` strategy.
    pub seed: u64,
    /// Rotate loops after scheduling ([`schedlab_passes::rotate`]): the test at the bottom,
    /// one conditional branch per iteration.
    pub rotate_loops: bool,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            bce: BceLevel::Predicate,
            forward_stores: DEFAULT_FORWARD_STORES,
            optimize: false,
            hoist: DEFAULT_HOIST,
            rewrites: true,
            keep_conditions: false,
            constants: ConstantPlacement::Early,
            strength_reduce: true,
            strategy: DEFAULT_STRATEGY.to_string(),
            strategy_entry: None,
            machine_model: None,
            seed: 0,
            rotate_loops: true,
        }
    }
}

impl PipelineConfig {
    /// The default configuration with another scheduling strategy.
    pub fn with_strategy(strategy: &str) -> Self {
        Self {
            strategy: strategy.to_string(),
            ..Self::default()
        }
    }

    /// The default configuration scheduling with `entry`, which need not be registered (a
    /// strategy defined by a program outside this workspace). Statistics and reports name it
    /// `entry.name`.
    pub fn with_strategy_entry(entry: StrategyEntry) -> Self {
        Self::default().using_strategy(entry)
    }

    /// This configuration scheduling with `entry` (see [`PipelineConfig::with_strategy_entry`]).
    pub fn using_strategy(self, entry: StrategyEntry) -> Self {
        Self {
            strategy: entry.name.to_string(),
            strategy_entry: Some(entry),
            ..self
        }
    }

    /// This configuration with `model` instead of the target's machine model.
    pub fn using_model(self, model: MachineModel) -> Self {
        Self {
            machine_model: Some(model),
            ..self
        }
    }

    /// The strategy this configuration schedules with: `strategy_entry`, or the registry's
    /// entry called `strategy`.
    pub fn resolve_strategy(&self) -> Result<StrategyEntry, SchedError> {
        match self.strategy_entry {
            Some(entry) => Ok(entry),
            None => sched::strategy(&self.strategy),
        }
    }

    /// The machine model this configuration schedules for on `target`: the override, or
    /// [`machine_model`] of the target.
    pub fn model_for(&self, target: Target) -> MachineModel {
        self.machine_model
            .clone()
            .unwrap_or_else(|| machine_model(target))
    }
}

/// Why the pipeline stopped.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The verifier rejected the function after a stage.
    #[error("verifier failed after {stage}:\n{message}")]
    Verify {
        /// The stage that produced the invalid function.
        stage: &'static str,
        /// The verifier's annotated output.
        message: String,
    },
    /// Bounds-check elimination failed.
    #[error(transparent)]
    Bce(#[from] BceError),
    /// The scheduler rejected the request (e.g. an unknown strategy).
    #[error(transparent)]
    Schedule(#[from] SchedError),
    /// Code generation failed.
    #[error(transparent)]
    Compile(#[from] CompileError),
}

/// The CLIF text after each IR stage.
#[derive(Clone, Debug, Default)]
pub struct StageText {
    /// As built.
    pub clif: String,
    /// After bounds-check elimination.
    pub bce: String,
    /// After store-to-load forwarding (the BCE text when the stage is off).
    pub forward: String,
    /// After the rewrites (and the optional optimise stage) and induction-variable reduction.
    pub rewrite: String,
    /// After scheduling: what code generation receives.
    pub sched: String,
}

/// Statistics of the IR stages.
#[derive(Clone, Debug)]
pub struct IrStats {
    /// What bounds-check elimination did.
    pub bce: Option<BceStats>,
    /// What store-to-load forwarding did (`None` when disabled).
    pub forward: Option<ForwardStats>,
    /// What hoisting and value numbering did (`None` when disabled).
    pub hoist: Option<HoistStats>,
    /// What the rewrites did (`None` when disabled).
    pub rewrite: Option<RewriteStats>,
    /// What induction-variable strength reduction did (`None` when disabled).
    pub iv: Option<IvStats>,
    /// What the scheduler did.
    pub schedule: ScheduleStats,
    /// What loop rotation did (`None` when disabled).
    pub rotate: Option<RotateStats>,
}

/// Everything the pipeline produced for one kernel and target.
#[derive(Clone, Debug)]
pub struct Artifact {
    /// The function as it went into code generation.
    pub func: Function,
    /// The IR after each stage.
    pub stages: StageText,
    /// The IR stages' statistics.
    pub ir: IrStats,
    /// Machine code and VCode listing.
    pub compiled: Compiled,
    /// Spills, reloads, frame, instructions, code size.
    pub code: CodeStats,
}

/// How the IR stages run, beyond what the [`PipelineConfig`] selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageOptions {
    /// Keep the CLIF text after each stage (for `schedlab dump`).
    pub record_text: bool,
    /// Run the verifier after every stage (naming the stage that broke the function); when
    /// off, the end result is verified once if `verify_result` says so.
    pub verify_stages: bool,
    /// Verify the end result when `verify_stages` is off. The JIT leaves it off for the
    /// registered strategies, whose output on every kernel the tests verify after each stage
    /// (as Wasmtime runs Cranelift without its verifier in production); a strategy given as a
    /// [`PipelineConfig::strategy_entry`] is verified regardless.
    pub verify_result: bool,
    /// Predicated loops whose entry path is restartable call this instead of keeping a
    /// checked copy ([`schedlab_passes::deopt`]; see [`BceStats::versioned`]).
    pub slow_path: Option<SlowPathCall>,
    /// Collect the scheduler's report-only figures (pressure before, per-block statistics).
    pub statistics: bool,
    /// The CPU features code generation uses ([`run_with`]; the JIT builds its own ISA).
    pub isa: IsaChoice,
    /// What the IR's producer guarantees about heap bounds (a Wasm module's memory minimum),
    /// for removing Wasmtime's heap checks ([`schedlab_passes::bce::heap`]).
    pub heap_facts: HeapFacts,
}

impl StageOptions {
    /// What reports and `dump` use: every stage's text, the verifier after every stage, both
    /// loop copies compiled.
    pub const REPORT: StageOptions = StageOptions {
        record_text: true,
        verify_stages: true,
        verify_result: true,
        slow_path: None,
        statistics: true,
        isa: IsaChoice::Level,
        heap_facts: HeapFacts { min_bound: 0 },
    };

    /// [`StageOptions::REPORT`] with the slow path outlined to a placeholder call: the function
    /// the JIT compiles, for measuring (not running) on any target.
    pub fn report_lazy(target: Target) -> Self {
        StageOptions {
            slow_path: Some(SlowPathCall::placeholder(CallConv::triple_default(
                &target.triple(),
            ))),
            ..Self::REPORT
        }
    }

    /// What the JIT uses: no text, no verifier run for registered strategies (see
    /// [`StageOptions::verify_result`]), no report-only figures, the slow path as given.
    pub fn jit(slow_path: Option<SlowPathCall>) -> Self {
        StageOptions {
            record_text: false,
            verify_stages: false,
            verify_result: false,
            slow_path,
            statistics: false,
            isa: IsaChoice::Native,
            heap_facts: HeapFacts { min_bound: 0 },
        }
    }
}

/// Runs the IR stages (everything before code generation) on `func` for `target`, keeping
/// the CLIF text after each stage.
pub fn run_ir_stages(
    func: &mut Function,
    target: Target,
    config: &PipelineConfig,
) -> Result<(StageText, IrStats), PipelineError> {
    run_ir_stages_with(func, target, config, &StageOptions::REPORT)
}

/// [`run_ir_stages`] with explicit [`StageOptions`].
pub fn run_ir_stages_with(
    func: &mut Function,
    target: Target,
    config: &PipelineConfig,
    options: &StageOptions,
) -> Result<(StageText, IrStats), PipelineError> {
    run_ir_stages_verified_by(func, target, config, options, None)
}

/// [`run_ir_stages_with`], every verifier run checking against `verifier_isa` (a `.clif`
/// file's ISA with its `set` flags, e.g. `preserve_frame_pointers` for `get_frame_pointer`);
/// `None`: Cranelift's default flags, no ISA.
pub fn run_ir_stages_verified_by(
    func: &mut Function,
    target: Target,
    config: &PipelineConfig,
    options: &StageOptions,
    verifier_isa: Option<&dyn TargetIsa>,
) -> Result<(StageText, IrStats), PipelineError> {
    let before = stages_before_schedule(func, target, config, options, verifier_isa)?;
    schedule_stages(func, before, config, options, verifier_isa)
}

/// A function after the IR stages before the schedule (BCE, forwarding, the optional
/// e-graph, the rewrites, induction variables), which do not depend on the strategy: one
/// [`prepare_ir_stages`] serves every strategy's [`schedule_prepared`].
#[derive(Clone, Debug)]
pub struct Prepared {
    func: Function,
    before: BeforeSchedule,
}

/// What the stages before the schedule recorded, and the machine model they used.
#[derive(Clone, Debug)]
struct BeforeSchedule {
    model: MachineModel,
    stages: StageText,
    bce: BceStats,
    forward: Option<ForwardStats>,
    hoist: Option<HoistStats>,
    rewrite: Option<RewriteStats>,
    iv: Option<IvStats>,
}

/// The IR stages before the schedule, with `config`'s switches (its strategy is not read).
pub fn prepare_ir_stages(
    mut func: Function,
    target: Target,
    config: &PipelineConfig,
    options: &StageOptions,
    verifier_isa: Option<&dyn TargetIsa>,
) -> Result<Prepared, PipelineError> {
    let before = stages_before_schedule(&mut func, target, config, options, verifier_isa)?;
    Ok(Prepared { func, before })
}

/// The schedule and loop rotation of `prepared` with `config`'s strategy (every other switch,
/// and the machine model, are the ones `prepared` was made with): the function as code
/// generation receives it, the text after each stage and the statistics of them all.
pub fn schedule_prepared(
    prepared: Prepared,
    config: &PipelineConfig,
    options: &StageOptions,
    verifier_isa: Option<&dyn TargetIsa>,
) -> Result<(Function, StageText, IrStats), PipelineError> {
    let Prepared { mut func, before } = prepared;
    let (stages, stats) = schedule_stages(&mut func, before, config, options, verifier_isa)?;
    Ok((func, stages, stats))
}

fn stages_before_schedule(
    func: &mut Function,
    target: Target,
    config: &PipelineConfig,
    options: &StageOptions,
    verifier_isa: Option<&dyn TargetIsa>,
) -> Result<BeforeSchedule, PipelineError> {
    let verify = |func: &Function, stage| verify_against(func, stage, verifier_isa);
    let model = config.model_for(target);
    let text = |func: &Function| stage_text(func, options);
    let verify_stage = |func: &Function, stage| {
        if options.verify_stages {
            verify(func, stage)
        } else {
            Ok(())
        }
    };
    let mut stages = StageText {
        clif: text(func),
        ..StageText::default()
    };
    verify_stage(func, "build")?;
    // The census of checks before and after is for reports only.
    let bce_stats = bce::run(
        func,
        bce::BceOptions {
            level: config.bce,
            verify_stages: options.verify_stages,
            slow_path: options.slow_path.as_ref(),
            count_checks: options.statistics,
            heap_facts: options.heap_facts,
            verifier_isa,
        },
    )?;
    verify_stage(func, "bce")?;
    stages.bce = text(func);
    let forward = if config.forward_stores {
        let stats = forward::run(func);
        verify_stage(func, "forward")?;
        stages.forward = text(func);
        Some(stats)
    } else {
        stages.forward = stages.bce.clone();
        None
    };
    if config.optimize {
        optimize(func, target)?;
        verify_stage(func, "optimise")?;
    }
    let hoist = if config.hoist {
        let stats = hoist::run(func);
        verify_stage(func, "hoist")?;
        Some(stats)
    } else {
        None
    };
    let rewrite = if config.rewrites {
        let latency = model_latency(&model);
        // Predicating BCE and forwarding leave no instruction reading an alias (checked in
        // debug builds); Cranelift's optimiser may.
        let resolved = config.bce == BceLevel::Predicate && !config.optimize;
        let stats = rewrite::run(
            func,
            &latency,
            rewrite::RewriteOptions {
                constants: config.constants,
                lean: !options.statistics,
                aliases_resolved: resolved,
                keep_conditions: config.keep_conditions,
            },
        );
        verify_stage(func, "rewrite")?;
        Some(stats)
    } else {
        None
    };
    // After the rewrites: address folding has made the `base + sext(iv)` terms it absorbs.
    let iv = if config.strength_reduce {
        // Predicating BCE leaves no instruction reading an alias, forwarding resolves the ones
        // it makes and the rewrites make none; the scheduler resolves what the reduction makes
        // (the recorded text would show them).
        let lean = config.bce == BceLevel::Predicate && !config.optimize && !options.record_text;
        let stats = iv::reduce_predicated(
            func,
            &bce_stats,
            iv::IvOptions {
                aliases_resolved: lean,
                // The rewrites end with a dead-code sweep.
                no_dead_code: config.rewrites,
            },
        );
        verify_stage(func, "iv")?;
        Some(stats)
    } else {
        None
    };
    stages.rewrite = text(func);
    Ok(BeforeSchedule {
        model,
        stages,
        bce: bce_stats,
        forward,
        hoist,
        rewrite,
        iv,
    })
}

/// The CLIF text of `func` when `options` record it, else nothing.
fn stage_text(func: &Function, options: &StageOptions) -> String {
    if options.record_text {
        func.display().to_string()
    } else {
        String::new()
    }
}

fn schedule_stages(
    func: &mut Function,
    before: BeforeSchedule,
    config: &PipelineConfig,
    options: &StageOptions,
    verifier_isa: Option<&dyn TargetIsa>,
) -> Result<(StageText, IrStats), PipelineError> {
    let BeforeSchedule {
        model,
        mut stages,
        bce: bce_stats,
        forward,
        hoist,
        rewrite,
        iv,
    } = before;
    let verify = |func: &Function, stage| verify_against(func, stage, verifier_isa);
    let text = |func: &Function| stage_text(func, options);
    let schedule_options = ScheduleOptions {
        seed: config.seed,
        verify: false,
        skip_statistics: !options.statistics,
        // Rematerialising loads next to their users would undo what the e-graph or the
        // hoisting pass shared and moved out of loops.
        after_egraph: config.optimize || hoist.is_some_and(|h| h.loads_moved() > 0),
    };
    let entry = config.resolve_strategy()?;
    let mut strategy = (entry.make)(&schedule_options);
    let schedule = sched::schedule_with_strategy(
        func,
        entry.name,
        strategy.as_mut(),
        &model,
        &schedule_options,
    )?;
    // A strategy given as code is verified right after it ran, so an error names it.
    if options.verify_stages || config.strategy_entry.is_some() {
        verify(func, "schedule")?;
    }
    // The scheduler resolved every alias and makes none.
    let rotate = config
        .rotate_loops
        .then(|| rotate::rotate_loops_resolved(func));
    // The end result: after every stage when reporting, once when the JIT asks for it.
    if options.verify_stages || options.verify_result {
        verify(
            func,
            if config.rotate_loops {
                "rotate"
            } else {
                "schedule"
            },
        )?;
    }
    stages.sched = text(func);
    Ok((
        stages,
        IrStats {
            bce: Some(bce_stats),
            forward,
            hoist,
            rewrite,
            iv,
            schedule,
            rotate,
        },
    ))
}

/// Runs the whole pipeline and compiles for `target`.
pub fn run(
    func: Function,
    target: Target,
    config: &PipelineConfig,
) -> Result<Artifact, PipelineError> {
    run_with(func, target, config, &StageOptions::REPORT)
}

/// [`run`] with explicit [`StageOptions`].
pub fn run_with(
    func: Function,
    target: Target,
    config: &PipelineConfig,
    options: &StageOptions,
) -> Result<Artifact, PipelineError> {
    run_then_compile(func, target, config, options, |func| {
        compile_for(func, target, options.isa)
    })
}

/// [`run_with`] compiling with an ISA the caller built (e.g. from a `.clif` file's `set` and
/// `target` lines, [`crate::exec::isa`]) instead of the target's default one.
pub fn run_with_isa(
    func: Function,
    target: Target,
    isa: &dyn TargetIsa,
    config: &PipelineConfig,
    options: &StageOptions,
) -> Result<Artifact, PipelineError> {
    run_then_compile(func, target, config, options, |func| {
        compile_with_isa(func.clone(), target, isa, true)
    })
}

/// The IR stages on `func`, then `compile` on their result, and the code's statistics.
fn run_then_compile(
    mut func: Function,
    target: Target,
    config: &PipelineConfig,
    options: &StageOptions,
    compile: impl FnOnce(&Function) -> Result<Compiled, CompileError>,
) -> Result<Artifact, PipelineError> {
    let (stages, ir) = run_ir_stages_with(&mut func, target, config, options)?;
    let compiled = compile(&func)?;
    let code = code_stats(&compiled);
    Ok(Artifact {
        func,
        stages,
        ir,
        compiled,
        code,
    })
}

/// The scheduler's machine model of `target`.
pub fn machine_model(target: Target) -> MachineModel {
    MachineModel::for_target(target.name()).unwrap_or_else(MachineModel::zen3)
}

/// Runs Cranelift's verifier, naming the stage that broke the function.
pub fn verify(func: &Function, stage: &'static str) -> Result<(), PipelineError> {
    verify_against(func, stage, None)
}

/// [`verify`] against `isa` and its flags (`None`: Cranelift's default flags, no ISA).
fn verify_against(
    func: &Function,
    stage: &'static str,
    isa: Option<&dyn TargetIsa>,
) -> Result<(), PipelineError> {
    let flags = settings::Flags::new(settings::builder());
    match isa {
        Some(isa) => cranelift_codegen::verify_function(func, isa),
        None => cranelift_codegen::verify_function(func, &flags),
    }
    .map_err(|errors| PipelineError::Verify {
        stage,
        message: cranelift_codegen::print_errors::pretty_verifier_error(func, None, errors),
    })
}
