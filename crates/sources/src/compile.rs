//! The pipeline on one [`Kernel`] of any source: with a `.clif` file's or a `.wasm` module's
//! ISA and heap facts where it has them, behind [`crate::guard::catch`], timing the IR stages
//! and code generation apart.

use crate::kernel::Kernel;
use schedlab_backend::Target;
use schedlab_backend::compile::compile_with_isa;
use schedlab_backend::pipeline::{self, Artifact, PipelineConfig, StageOptions};
use schedlab_backend::stats::code_stats;
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

/// [`compile_kernel`] with the time of its IR stages and of code generation.
pub fn compile_kernel_timed(
    k: &Kernel,
    target: Target,
    config: &PipelineConfig,
    options: &StageOptions,
) -> Result<(Artifact, StageTimes), String> {
    if let Some(e) = &k.load_error {
        return Err(e.clone());
    }
    crate::guard::catch(|| run_timed(k, target, config, options)).and_then(|result| result)
}

/// The pipeline for one kernel and target — with a `.clif` file's or a `.wasm` module's ISA
/// where it has one — timing the IR stages and code generation apart.
fn run_timed(
    k: &Kernel,
    target: Target,
    config: &PipelineConfig,
    options: &StageOptions,
) -> Result<(Artifact, StageTimes), String> {
    let mut func = k.func.clone();
    let start = Instant::now();
    let (stages, ir) = pipeline::run_ir_stages_with(&mut func, target, config, options)
        .map_err(|e| e.to_string())?;
    let ir_us = micros(start);
    let start = Instant::now();
    let compiled = match &k.clif {
        Some((file, _)) => match file.isa(target) {
            Some(Ok(isa)) => compile_with_isa(func.clone(), target, isa.as_ref(), true),
            Some(Err(e)) => return Err(format!("cannot build the ISA from the file's flags: {e}")),
            None => return Err(format!("the file is not compiled for {target}")),
        },
        None => schedlab_backend::compile_for(&func, target, options.isa),
    }
    .map_err(|e| e.to_string())?;
    let codegen_us = micros(start);
    let code = code_stats(&compiled);
    Ok((
        Artifact {
            func,
            stages,
            ir,
            compiled,
            code,
        },
        StageTimes { ir_us, codegen_us },
    ))
}
