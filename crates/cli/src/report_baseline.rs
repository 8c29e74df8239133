//! The `cranelift-speed` baseline row of `schedlab report --baseline`: the kernel as built,
//! compiled by stock Cranelift at `opt_level=speed` (its e-graph optimiser and elaboration
//! place every pure instruction), with none of schedlab's passes — no bounds-check
//! elimination, no rewrites, no schedule.

use crate::kernel::Kernel;
use crate::report::Row;
use schedlab_backend::compile::compile_with_isa;
use schedlab_backend::stats::code_stats;
use schedlab_backend::{Compiled, IsaChoice, Target, compile_speed};

/// The strategy column of the baseline rows.
pub const NAME: &str = "cranelift-speed";

/// What the own model's problems of a baseline row are prefixed with.
pub const COST_PROBLEM: &str = "own model (cranelift-speed): ";

/// Compiles `k` for `target` as stock Cranelift does and measures it like a pipeline row
/// (pressure columns are 0: no scheduler ran), with the code; the own-model columns are
/// [`crate::report_cost::fill`]'s. llvm-mca problems are added to `problems`.
pub fn row(
    k: &Kernel,
    target: Target,
    isa: IsaChoice,
    mca: bool,
    problems: &mut Vec<String>,
) -> Result<(Row, Compiled), String> {
    if let Some(e) = &k.load_error {
        return Err(e.clone());
    }
    // A source with its own stock flags (a `.wasm` module: Wasmtime's) compiles with them.
    let start = std::time::Instant::now();
    let compiled = match k.clif.as_ref().and_then(|(f, _)| f.stock_isa(target)) {
        Some(Ok(own)) => compile_with_isa(k.func.clone(), target, own.as_ref(), true),
        Some(Err(e)) => return Err(format!("cannot build the stock ISA: {e}")),
        None => compile_speed(&k.func, target, isa),
    }
    .map_err(|e| e.to_string())?;
    let codegen_us = crate::compile::micros(start);
    let code = code_stats(&compiled);
    let mca =
        mca.then(|| crate::report::mca_figures(&compiled, target, &format!(" ({NAME})"), problems));
    let row = Row {
        mca,
        real: crate::report_real::RealColumns::measure(
            true,
            &k.func,
            &compiled.func,
            None,
            Some(codegen_us),
        ),
        ..Row::of_code(&k.name, NAME, target, &code)
    };
    Ok((row, compiled))
}
