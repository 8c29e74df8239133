//! JIT compile time of a kernel per configuration: build the IR, run the pipeline's IR stages
//! (BCE, rewrites, scheduling, whatever the configuration enables), generate code.

use super::impls::NamedConfig;
use super::measure::median;
use cranelift_codegen::Context;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::Function;
use schedlab_backend::Target;
use schedlab_backend::pipeline::run_ir_stages_with;
use schedlab_backend::target::OptLevel;
use std::time::Instant;

/// Median compile time of one configuration, split by phase (microseconds).
#[derive(Clone, Debug)]
pub struct CompileTime {
    /// Row name of the configuration.
    pub name: String,
    /// Building the kernel's IR.
    pub build_us: f64,
    /// The pipeline's IR stages (including their verifier runs).
    pub passes_us: f64,
    /// Cranelift code generation with the JIT's ISA.
    pub codegen_us: f64,
    /// All three, per run; the median is reported.
    pub total_us: f64,
    /// Every run's total.
    pub samples_us: Vec<f64>,
}

/// Compiles the kernel `kernel` returns with each configuration `runs` times for the host and
/// keeps the medians.
///
/// The ISA is built once outside the timed region, as a JIT keeps it; code generation is one
/// `Context::compile` with the ISA the JIT uses (verifier on, `opt_level=none`).
pub fn measure(
    configs: &[NamedConfig],
    runs: usize,
    kernel: fn() -> Function,
) -> Result<Vec<CompileTime>, String> {
    let target = Target::host().ok_or("the host architecture has no schedlab backend")?;
    let isa = target
        .isa(OptLevel::None)
        .map_err(|e| format!("cannot build the {target} ISA: {e}"))?;
    let mut out = Vec::new();
    for named in configs {
        let (mut build, mut passes, mut codegen, mut total) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs.max(1) {
            let t0 = Instant::now();
            let mut func = kernel();
            let t1 = Instant::now();
            // As the library's JIT runs them: no CLIF text kept for `dump`.
            run_ir_stages_with(&mut func, target, &named.config, false)
                .map_err(|e| format!("{}: {e}", named.name))?;
            let t2 = Instant::now();
            func.signature.call_conv = isa.default_call_conv();
            let mut ctx = Context::for_function(func);
            ctx.compile(isa.as_ref(), &mut ControlPlane::default())
                .map_err(|e| format!("{}: code generation failed: {:?}", named.name, e.inner))?;
            let t3 = Instant::now();
            let us = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e6;
            build.push(us(t0, t1));
            passes.push(us(t1, t2));
            codegen.push(us(t2, t3));
            total.push(us(t0, t3));
        }
        let med = |v: &[f64]| median(v).unwrap_or(f64::NAN);
        out.push(CompileTime {
            name: named.name.clone(),
            build_us: med(&build),
            passes_us: med(&passes),
            codegen_us: med(&codegen),
            total_us: med(&total),
            samples_us: total,
        });
    }
    Ok(out)
}
