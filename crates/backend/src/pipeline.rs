//! The whole pipeline in one place, in the order it runs:
//!
//! ```text
//! build → verify → bce → verify → optimise? → schedule → verify → compile (opt_level=none) → stats
//! ```
//!
//! Each stage is a free function from its own module; this file only sequences them, keeps
//! the intermediate CLIF text for `schedlab dump`, and collects every stage's statistics.

use crate::compile::{CompileError, Compiled, compile, optimize};
use crate::target::Target;
use cranelift_codegen::ir::Function;
use cranelift_codegen::settings;

/// What to run on a kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PipelineConfig {
    /// Run Cranelift's e-graph optimiser as an explicit stage before scheduling.
    pub optimize: bool,
    /// Run the critical-path rewrites (masked merge, reassociation by ready time).
    pub rewrites: bool,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            optimize: false,
            rewrites: true,
        }
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
    /// Code generation failed.
    #[error(transparent)]
    Compile(#[from] CompileError),
}

/// The CLIF text after each IR stage.
#[derive(Clone, Debug, Default)]
pub struct StageText {
    /// As built.
    pub clif: String,
}

/// Everything the pipeline produced for one kernel and target.
#[derive(Clone, Debug)]
pub struct Artifact {
    /// The function as it went into code generation.
    pub func: Function,
    /// The IR after each stage.
    pub stages: StageText,
    /// Machine code and VCode listing.
    pub compiled: Compiled,
}

/// Runs the IR stages (everything before code generation) on `func` for `target`.
pub fn run_ir_stages(
    func: &mut Function,
    target: Target,
    config: &PipelineConfig,
) -> Result<StageText, PipelineError> {
    let stages = StageText {
        clif: func.display().to_string(),
    };
    verify(func, "build")?;
    if config.optimize {
        optimize(func, target)?;
        verify(func, "optimise")?;
    }
    if config.rewrites {
        schedlab_passes::rewrite::run_all(func, &schedlab_passes::rewrite::unit_latency);
        verify(func, "rewrite")?;
    }
    Ok(stages)
}

/// Runs the whole pipeline and compiles for `target`.
pub fn run(
    mut func: Function,
    target: Target,
    config: &PipelineConfig,
) -> Result<Artifact, PipelineError> {
    let stages = run_ir_stages(&mut func, target, config)?;
    let compiled = compile(&func, target)?;
    Ok(Artifact {
        func,
        stages,
        compiled,
    })
}

/// Runs Cranelift's verifier, naming the stage that broke the function.
pub fn verify(func: &Function, stage: &'static str) -> Result<(), PipelineError> {
    let flags = settings::Flags::new(settings::builder());
    cranelift_codegen::verify_function(func, &flags).map_err(|errors| PipelineError::Verify {
        stage,
        message: cranelift_codegen::print_errors::pretty_verifier_error(func, None, errors),
    })
}
