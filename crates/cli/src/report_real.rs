//! The report columns real programs need beside the kernel columns: whether the e-graph ran
//! before scheduling, Wasm heap bounds checks in innermost loops before → after, and compile
//! time per stage — and the timed compile that fills them.

use crate::kernel::Kernel;
use cranelift_codegen::ir::Function;
use schedlab_backend::Target;
use schedlab_backend::compile::compile_with_isa;
use schedlab_backend::pipeline::{self, Artifact, PipelineConfig};
use schedlab_backend::stats::code_stats;
use serde::Serialize;
use std::time::Instant;

/// Columns every report row has (JSON: flattened into the row; CSV: the last columns).
#[derive(Serialize, serde::Deserialize, Debug, Clone, Default, PartialEq)]
pub struct RealColumns {
    /// Cranelift's e-graph optimiser ran before scheduling (`--optimize`; always for the
    /// stock `cranelift-speed` row).
    pub optimized: bool,
    /// Wasm heap bounds checks (conditional `heap_oob` traps) in innermost-loop blocks of the
    /// function as given; `None` without a loop.
    pub loop_heap_checks_before: Option<usize>,
    /// The same in what code generation received.
    pub loop_heap_checks: Option<usize>,
    /// Microseconds in schedlab's IR stages (for `.wasm` functions without the verifier, as
    /// [`measuring_options`] says); `None` for the stock row, whose e-graph runs inside code
    /// generation, and without `--baseline` (rows then repeat byte for byte).
    pub ir_us: Option<u64>,
    /// Microseconds in code generation (Cranelift's `compile`: for the stock row, with its
    /// e-graph; lowering, register allocation, emission); `None` without `--baseline`.
    pub codegen_us: Option<u64>,
}

/// The CSV header of [`RealColumns`], in [`RealColumns::csv_cells`] order.
pub const CSV_HEADER: &str = "optimized,loop_heap_checks_before,loop_heap_checks,ir_us,codegen_us";

impl RealColumns {
    /// The census of `before` and `after` with the given flags and times.
    pub fn measure(
        optimized: bool,
        before: &Function,
        after: &Function,
        ir_us: Option<u64>,
        codegen_us: Option<u64>,
    ) -> Self {
        Self {
            optimized,
            loop_heap_checks_before: schedlab_wasm::heap_checks(before).innermost_loops,
            loop_heap_checks: schedlab_wasm::heap_checks(after).innermost_loops,
            ir_us,
            codegen_us,
        }
    }

    /// The CSV cells (empty for `None`).
    pub fn csv_cells(&self) -> String {
        let opt = |v: Option<usize>| v.map_or(String::new(), |v| v.to_string());
        let us = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        format!(
            "{},{},{},{},{}",
            self.optimized,
            opt(self.loop_heap_checks_before),
            opt(self.loop_heap_checks),
            us(self.ir_us),
            us(self.codegen_us)
        )
    }

    /// Total compile microseconds (IR stages + code generation).
    pub fn compile_us(&self) -> Option<u64> {
        self.codegen_us.map(|c| c + self.ir_us.unwrap_or(0))
    }
}

/// Microseconds since `start`.
pub fn micros(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The stage options a report row of `k` runs with: a `.wasm` function's IR stages run as a
/// compiler would run them — no stage text, no verifier between stages (`check` runs those on
/// every function) — so that their time compares with stock Cranelift's, which Wasmtime runs
/// without its verifier, and with its module's heap facts; other kernels keep `options`.
pub fn measuring_options(k: &Kernel, options: pipeline::StageOptions) -> pipeline::StageOptions {
    if crate::wasm_source::is_wasm_kernel(k) {
        pipeline::StageOptions {
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
pub fn with_heap_facts(k: &Kernel, options: pipeline::StageOptions) -> pipeline::StageOptions {
    match &k.clif {
        Some((file, _)) => pipeline::StageOptions {
            heap_facts: file.heap_facts,
            ..options
        },
        None => options,
    }
}

/// Stage times of one pipeline run.
#[derive(Clone, Copy, Debug)]
pub struct StageTimes {
    /// IR stages.
    pub ir_us: u64,
    /// Code generation.
    pub codegen_us: u64,
}

/// The pipeline for one kernel and target — with a `.clif` file's or a `.wasm` module's ISA
/// where it has one — timing the IR stages and code generation apart.
pub fn run_timed(
    k: &Kernel,
    target: Target,
    config: &PipelineConfig,
    options: &pipeline::StageOptions,
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
