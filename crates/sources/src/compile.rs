//! The pipeline on one [`Kernel`] of any source: with a `.clif` file's or a `.wasm` module's
//! ISA and heap facts where it has them, behind [`crate::guard::catch`], timing the IR stages
//! and code generation apart.

use crate::kernel::Kernel;
use cranelift_codegen::ir::Function;
use rayon::prelude::*;
use schedlab_backend::Target;
use schedlab_backend::compile::{Compiled, compile_with_isa};
use schedlab_backend::pipeline::{
    self, Artifact, IrStats, PipelineConfig, Prepared, StageOptions, StageText,
};
use schedlab_backend::stats::{CodeStats, code_stats};
use std::time::Instant;

/// Stage times of one pipeline run.
#[derive(Clone, Copy, Debug)]
pub struct StageTimes {
    /// IR stages.
    pub ir_us: u64,
    /// Code generation.
    pub codegen_us: u64,
}

/// Microseconds since `start`.
pub fn micros(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The stage options a report row of `k` runs with: a `.wasm` function's IR stages run as a
/// compiler would run them — no stage text, no verifier between stages (`check` runs those on
/// every function) — so that their time compares with stock Cranelift's, which Wasmtime runs
/// without its verifier, and with its module's heap facts; other kernels keep `options`.
pub fn measuring_options(k: &Kernel, options: StageOptions) -> StageOptions {
    if crate::wasm_source::is_wasm_kernel(k) {
        StageOptions {
            record_text: false,
            verify_stages: false,
            verify_result: false,
            ..with_heap_facts(k, options)
        }
    } else {
        options
    }
}

/// `options` with the heap facts of `k`'s source (a `.wasm` module's memory minimum).
pub fn with_heap_facts(k: &Kernel, options: StageOptions) -> StageOptions {
    match &k.clif {
        Some((file, _)) => StageOptions {
            heap_facts: file.heap_facts,
            ..options
        },
        None => options,
    }
}

/// The pipeline for one kernel and target, with a `.clif` file's ISA, behind
/// [`crate::guard::catch`]: an error or a panic becomes the returned message.
pub fn compile_kernel(
    k: &Kernel,
    target: Target,
    config: &PipelineConfig,
    options: &StageOptions,
) -> Result<Artifact, String> {
    compile_kernel_timed(k, target, config, options).map(|(artifact, _)| artifact)
}

/// [`compile_kernel`] with the time of its IR stages and of code generation: the pipeline for
/// one kernel and target — with a `.clif` file's or a `.wasm` module's ISA where it has one —
/// behind [`crate::guard::catch`].
pub fn compile_kernel_timed(
    k: &Kernel,
    target: Target,
    config: &PipelineConfig,
    options: &StageOptions,
) -> Result<(Artifact, StageTimes), String> {
    let run = compile_kernel_configs_timed(k, target, std::slice::from_ref(config), options);
    let run = run
        .into_iter()
        .next()
        .expect("one result per configuration")?;
    Ok((run.artifact, run.times))
}

/// Code generation of `func` (the pipeline's result for `k`) for `target`, and its time.
fn codegen_timed(
    k: &Kernel,
    target: Target,
    func: &Function,
    options: &StageOptions,
) -> Result<(Compiled, u64), String> {
    let start = Instant::now();
    let compiled = match &k.clif {
        Some((file, _)) => match file.isa(target) {
            Some(Ok(isa)) => compile_with_isa(func.clone(), target, isa.as_ref(), true),
            Some(Err(e)) => return Err(format!("cannot build the ISA from the file's flags: {e}")),
            None => return Err(format!("the file is not compiled for {target}")),
        },
        None => schedlab_backend::compile_for(func, target, options.isa),
    }
    .map_err(|e| e.to_string())?;
    Ok((compiled, micros(start)))
}

/// The stages before the schedule for one `optimize` value, and their time (µs).
type PreparedTimed = Result<(Prepared, u64), String>;

/// One configuration's result of [`compile_kernel_configs_timed`].
#[derive(Clone, Debug)]
pub struct ConfigRun {
    /// The pipeline's artifact.
    pub artifact: Artifact,
    /// Its stage times: the shared stages before the schedule plus this configuration's
    /// schedule; code generation as measured for the configuration that compiled the code.
    pub times: StageTimes,
    /// The earlier configuration whose scheduled IR was the same text, so that its machine
    /// code (and every figure read from it) serves this one too.
    pub same_code_as: Option<usize>,
}

/// [`compile_kernel_timed`] for several configurations of one kernel and target that differ
/// only in their strategy (and seed) and in `optimize`. The stages before the schedule, which
/// no strategy changes, run once per `optimize` value, and a configuration whose scheduled IR
/// is an earlier one's, text for text, takes that one's machine code instead of compiling it
/// again: what a row reports is what compiling it alone would give, at a fraction of the work
/// when strategies agree (most do on small functions). The schedules, and then the compiles,
/// run in parallel.
pub fn compile_kernel_configs_timed(
    k: &Kernel,
    target: Target,
    configs: &[PipelineConfig],
    options: &StageOptions,
) -> Vec<Result<ConfigRun, String>> {
    if let Some(e) = &k.load_error {
        return configs.iter().map(|_| Err(e.clone())).collect();
    }
    let mut settings: Vec<bool> = Vec::new();
    for config in configs {
        if !settings.contains(&config.optimize) {
            settings.push(config.optimize);
        }
    }
    let prepared: Vec<PreparedTimed> = settings
        .par_iter()
        .map(|&optimize| {
            let config = configs.iter().find(|c| c.optimize == optimize);
            let config = config.expect("a configuration with this setting");
            crate::guard::catch(|| {
                let start = Instant::now();
                pipeline::prepare_ir_stages(k.func.clone(), target, config, options, None)
                    .map(|p| (p, micros(start)))
                    .map_err(|e| e.to_string())
            })
            .and_then(|r| r)
        })
        .collect();
    let scheduled: Vec<Result<Scheduled, String>> = configs
        .par_iter()
        .map(|config| {
            let setting = settings.iter().position(|&o| o == config.optimize);
            let (before, before_us) = prepared[setting.expect("prepared")].clone()?;
            crate::guard::catch(|| {
                let start = Instant::now();
                let (func, stages, ir) = pipeline::schedule_prepared(before, config, options, None)
                    .map_err(|e| e.to_string())?;
                let ir_us = before_us + micros(start);
                Ok(Scheduled {
                    order: layout_order(&func),
                    text: std::sync::OnceLock::new(),
                    func,
                    stages,
                    ir,
                    ir_us,
                })
            })
            .and_then(|r| r)
        })
        .collect();
    let mut firsts: Vec<usize> = Vec::new();
    let mut same_code_as: Vec<Option<usize>> = Vec::with_capacity(scheduled.len());
    for (i, s) in scheduled.iter().enumerate() {
        let Ok(s) = s else {
            same_code_as.push(None);
            continue;
        };
        let earlier = firsts.iter().copied().find(|&f| match &scheduled[f] {
            Ok(first) => first.same_function(s),
            Err(_) => false,
        });
        if earlier.is_none() {
            firsts.push(i);
        }
        same_code_as.push(earlier);
    }
    let compiled: Vec<Option<CompiledTimed>> = (0..configs.len())
        .into_par_iter()
        .map(|i| match (&scheduled[i], same_code_as[i]) {
            (Ok(s), None) => Some(
                crate::guard::catch(|| {
                    codegen_timed(k, target, &s.func, options).map(|(compiled, us)| {
                        let code = code_stats(&compiled);
                        (compiled, code, us)
                    })
                })
                .and_then(|r| r),
            ),
            _ => None,
        })
        .collect();
    scheduled
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let s = s?;
            let from = same_code_as[i].unwrap_or(i);
            let code = compiled[from]
                .as_ref()
                .expect("the first of a text compiles it");
            let (compiled, code, codegen_us) = code.clone()?;
            Ok(ConfigRun {
                artifact: Artifact {
                    func: s.func,
                    stages: s.stages,
                    ir: s.ir,
                    compiled,
                    code,
                },
                times: StageTimes {
                    ir_us: s.ir_us,
                    codegen_us,
                },
                same_code_as: same_code_as[i],
            })
        })
        .collect()
}

/// Machine code, its figures and its code-generation time (µs).
type CompiledTimed = Result<(Compiled, CodeStats, u64), String>;

/// One configuration's scheduled function in [`compile_kernel_configs_timed`].
struct Scheduled {
    func: Function,
    /// Its blocks and instructions in layout order ([`layout_order`]).
    order: Vec<u32>,
    /// Its CLIF text, made when an earlier configuration has the same layout order:
    /// configurations with the same text share one compile.
    text: std::sync::OnceLock<String>,
    stages: StageText,
    ir: IrStats,
    ir_us: u64,
}

impl Scheduled {
    /// Whether the two are the same function to code generation: the same CLIF text. The
    /// layout orders are compared first, and the texts only when those are equal: every
    /// configuration starts from one prepared function, so different orders almost always
    /// mean different texts (and when two equal texts have different orders, the only cost
    /// is a compile that could have been shared).
    fn same_function(&self, other: &Scheduled) -> bool {
        self.order == other.order && self.text() == other.text()
    }

    fn text(&self) -> &str {
        self.text.get_or_init(|| self.func.display().to_string())
    }
}

/// The blocks of `func` in layout order, each followed by its instructions (a block's number
/// with the top bit set, then instruction numbers).
fn layout_order(func: &Function) -> Vec<u32> {
    const BLOCK: u32 = 1 << 31;
    let mut order = Vec::with_capacity(func.dfg.num_insts() + func.dfg.num_blocks());
    for block in func.layout.blocks() {
        order.push(BLOCK | block.as_u32());
        order.extend(func.layout.block_insts(block).map(|inst| inst.as_u32()));
    }
    order
}
