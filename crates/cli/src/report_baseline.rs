//! The `cranelift-speed` baseline row of `schedlab report --baseline`: the kernel as built,
//! compiled by stock Cranelift at `opt_level=speed` (its e-graph optimiser and elaboration
//! place every pure instruction), with none of schedlab's passes — no bounds-check
//! elimination, no rewrites, no schedule.

use crate::kernel::Kernel;
use crate::report::Row;
use schedlab_backend::compile::compile_with_isa;
use schedlab_backend::stats::code_stats;
use schedlab_backend::{IsaChoice, Target, compile_speed};

/// The strategy column of the baseline rows.
pub const NAME: &str = "cranelift-speed";

/// Compiles `k` for `target` as stock Cranelift does and measures it like a pipeline row
/// (pressure columns are 0: no scheduler ran). llvm-mca problems are added to `problems`.
pub fn row(
    k: &Kernel,
    target: Target,
    isa: IsaChoice,
    mca: bool,
    problems: &mut Vec<String>,
) -> Result<Row, String> {
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
    let codegen_us = crate::report_real::micros(start);
    let code = code_stats(&compiled);
    let mca =
        mca.then(|| crate::report::mca_figures(&compiled, target, &format!(" ({NAME})"), problems));
    let mut cost_problems = Vec::new();
    let cost = crate::report_cost::row_cost(&compiled, &mut cost_problems);
    problems.extend(
        cost_problems
            .into_iter()
            .map(|p| format!("own model ({NAME}): {p}")),
    );
    Ok(Row {
        kernel: k.name.clone(),
        strategy: NAME.to_string(),
        target: target.name().to_string(),
        spills: code.spills,
        reloads: code.reloads,
        frame_bytes: code.frame_bytes,
        insts: code.insts,
        code_bytes: code.code_bytes,
        callee_saved: code.callee_saved.len(),
        max_pressure: 0,
        max_pressure_before: 0,
        checks_per_block: None,
        checks_per_block_unoptimized: None,
        mca_below_bound: mca
            .as_ref()
            .map(|m| crate::report_cost::below_bound(&cost, m)),
        model: mca.is_some().then(|| cost.model.clone()),
        model_bound: mca.is_some().then(|| cost.bound.clone()),
        mca,
        loop_spills: cost.loop_spills,
        loop_reloads: cost.loop_reloads,
        recurrence_bound: cost.recurrence_bound,
        error: None,
        real: crate::report_real::RealColumns::measure(
            true,
            &k.func,
            &compiled.func,
            None,
            Some(codegen_us),
        ),
    })
}
