//! JIT compile time of a kernel per configuration, as the JIT runs it: build the IR, run the
//! pipeline's IR stages (BCE, rewrites, scheduling; the verifier only for a strategy given as
//! code), generate code and make
//! it executable.

use crate::md5::NamedConfig;
use crate::measure::median;
use cranelift_codegen::ir::Function;
use schedlab_backend::pipeline::{PipelineConfig, StageOptions, run_ir_stages_with};
use schedlab_backend::{JitFunction, JitOptions, Target};
use schedlab_digests::{CompileTimings, Compressor, SlowPath};
use std::time::{Duration, Instant};

/// Median compile time of one configuration, split by phase (microseconds).
#[derive(Clone, Debug)]
pub struct CompileTime {
    /// Row name of the configuration.
    pub name: String,
    /// Building the kernel's IR.
    pub build_us: f64,
    /// The pipeline's IR stages.
    pub passes_us: f64,
    /// Cranelift code generation and making the code executable.
    pub codegen_us: f64,
    /// All three, per run; the median is reported.
    pub total_us: f64,
    /// Every run's total.
    pub samples_us: Vec<f64>,
    /// MD5 only: the median total when the checked slow path is compiled eagerly as well
    /// (`total_us` is the library's way: slow path on first need).
    pub eager_total_us: Option<f64>,
}

impl CompileTime {
    fn from_runs(name: &str, runs: &[CompileTimings], eager: Option<&[CompileTimings]>) -> Self {
        let med = |f: fn(&CompileTimings) -> f64| {
            median(&runs.iter().map(f).collect::<Vec<_>>()).unwrap_or(f64::NAN)
        };
        CompileTime {
            name: name.to_string(),
            build_us: med(|t| t.build_us),
            passes_us: med(|t| t.passes_us),
            codegen_us: med(|t| t.codegen_us),
            total_us: med(CompileTimings::total_us),
            samples_us: runs.iter().map(CompileTimings::total_us).collect(),
            eager_total_us: eager
                .and_then(|e| median(&e.iter().map(CompileTimings::total_us).collect::<Vec<_>>())),
        }
    }
}

/// Untimed compilations before the timed ones, for at least this long: the core's clock
/// ramps up from idle over the first tens of milliseconds of work, and the allocator and
/// caches warm up, which would otherwise land on the first configuration measured.
const WARM_UP: Duration = Duration::from_millis(200);

/// Compiles the MD5 kernel with each configuration `runs` times exactly as the `Md5` library
/// does (`Compressor::compile`: slow path compiled on first need), each followed by a compile
/// that also generates the checked slow path, and keeps the medians. Configurations take turns
/// (one compile each per round) after an untimed warm-up, so that none is measured on a colder
/// machine than another.
pub fn measure_md5(configs: &[NamedConfig], runs: usize) -> Result<Vec<CompileTime>, String> {
    let compile = |named: &NamedConfig, slow| {
        Compressor::compile_timed(&named.config, slow)
            .map(|(_, timings)| timings)
            .map_err(|e| format!("{}: {e}", named.name))
    };
    let start = Instant::now();
    while let Some(first) = configs.first()
        && start.elapsed() < WARM_UP
    {
        compile(first, SlowPath::Lazy)?;
    }
    let mut lazy = vec![Vec::new(); configs.len()];
    let mut eager = vec![Vec::new(); configs.len()];
    for _ in 0..runs.max(1) {
        for (i, named) in configs.iter().enumerate() {
            lazy[i].push(compile(named, SlowPath::Lazy)?);
            eager[i].push(compile(named, SlowPath::Eager)?);
        }
    }
    Ok(configs
        .iter()
        .zip(lazy.iter().zip(&eager))
        .map(|(named, (l, e))| CompileTime::from_runs(&named.name, l, Some(e)))
        .collect())
}

/// The compile time of the [`crate::md5::CRANELIFT_SPEED`] row, `runs` times: the MD5 kernel
/// as built, JIT-compiled by stock Cranelift at `opt_level=speed` (its e-graph included in
/// `codegen_us`; `passes_us` is zero, no schedlab pass runs). Taken after the schedlab rows,
/// whose warm-up has already brought the clock up.
pub fn measure_stock_md5(runs: usize) -> Result<CompileTime, String> {
    let mut samples = Vec::new();
    for _ in 0..runs.max(1) {
        let (_, [build_us, codegen_us]) = crate::md5::StockMd5::compile_timed()?;
        samples.push(CompileTimings {
            build_us,
            passes_us: 0.0,
            codegen_us,
        });
    }
    Ok(CompileTime::from_runs(
        crate::md5::CRANELIFT_SPEED,
        &samples,
        None,
    ))
}

/// What `schedlab compile-probe` prints: one compile of the library's default configuration in
/// a process that has compiled nothing before (ISA built on the way, caches and clock cold).
pub fn probe() -> Result<String, String> {
    let (_, t) = Compressor::compile_timed(&PipelineConfig::default(), SlowPath::Lazy)
        .map_err(|e| e.to_string())?;
    Ok(serde_json::json!({
        "build_us": t.build_us,
        "passes_us": t.passes_us,
        "codegen_us": t.codegen_us,
    })
    .to_string())
}

/// Median total of [`probe`] over `processes` fresh processes of this executable, in
/// microseconds: the compile a program using the `Md5` library pays before its first hash.
pub fn first_compile_in_fresh_processes(processes: usize) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find schedlab itself: {e}"))?;
    let mut totals = Vec::new();
    for _ in 0..processes.max(1) {
        let out = std::process::Command::new(&exe)
            .arg("compile-probe")
            .output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("compile-probe printed no JSON: {e}"))?;
        let part = |k: &str| v[k].as_f64().ok_or(format!("compile-probe: no {k}"));
        totals.push(part("build_us")? + part("passes_us")? + part("codegen_us")?);
    }
    median(&totals).ok_or_else(|| "no compile-probe ran".to_string())
}

/// Compiles the kernel `kernel` returns with each configuration `runs` times for the host as
/// the JIT does (IR stages, no listing) and keeps the medians.
pub fn measure(
    configs: &[NamedConfig],
    runs: usize,
    kernel: fn() -> Function,
) -> Result<Vec<CompileTime>, String> {
    let target = Target::host().ok_or("the host architecture has no schedlab backend")?;
    let jit = JitOptions {
        verify: false,
        listing: false,
    };
    let mut out = Vec::new();
    for named in configs {
        let mut runs_of = Vec::new();
        for _ in 0..runs.max(1) {
            let t0 = Instant::now();
            let mut func = kernel();
            let t1 = Instant::now();
            run_ir_stages_with(&mut func, target, &named.config, &StageOptions::jit(None))
                .map_err(|e| format!("{}: {e}", named.name))?;
            let t2 = Instant::now();
            JitFunction::compile_with(func, &jit).map_err(|e| format!("{}: {e}", named.name))?;
            let t3 = Instant::now();
            let us = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e6;
            runs_of.push(CompileTimings {
                build_us: us(t0, t1),
                passes_us: us(t1, t2),
                codegen_us: us(t2, t3),
            });
        }
        out.push(CompileTime::from_runs(&named.name, &runs_of, None));
    }
    Ok(out)
}
