//! Compiling schedlab's Cranelift functions: per-target ISAs, the host JIT and the
//! compile step whose instruction order is the scheduler's.
//!
//! Every path — host JIT, foreign targets, object files — goes through [`compile::compile`]
//! with `opt_level=none`, so the order a scheduling pass leaves in the IR is the order the
//! machine code has. Cranelift's own optimiser runs only as the explicit, optional
//! [`compile::optimize`] stage, before scheduling. The static cost model of the code compiled
//! here (recurrence bound, schedule simulation, llvm-mca) is the `schedlab-cost` crate.
#![deny(missing_docs)]

pub mod block_edges;
pub mod check;
pub mod code_cache;
pub mod compile;
pub mod emulate;
pub mod exec;
pub mod jit;
pub mod object;
pub mod pipeline;
pub mod stats;
pub mod target;
pub mod tools;

pub use compile::{CompileError, Compiled, compile, compile_for, compile_speed, optimize};
pub use jit::{JitCode, JitError, JitFunction, JitOptions};
pub use pipeline::{Artifact, PipelineConfig, PipelineError};
pub use target::{IsaChoice, Target, TargetError};
