//! `schedlab report`: spills, code and static cost per kernel × strategy × target.

use crate::CliError;
use crate::kernel::{self, Kernel};
use schedlab_backend::Target;
use schedlab_backend::mca::{mca_cpus, mca_cycles};
use schedlab_backend::pipeline::{self, Artifact, PipelineConfig};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Arguments of `schedlab report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Kernel(s): md5, md5-mb (md5-mb-x4, md5-mb-x8), muladd, square-to-len, or a .clif file
    /// (comma-separated).
    #[arg(long, default_value = "md5")]
    kernel: String,
    /// Scheduling strategies, comma-separated, or `all`.
    #[arg(long)]
    strategy: Option<String>,
    /// Targets, comma-separated (x86_64, aarch64, s390x, riscv64), or `all`.
    #[arg(long)]
    target: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Cost the hot loop body with llvm-mca on each target's CPU models.
    #[arg(long)]
    mca: bool,
    /// Also draw spills + reloads per strategy and target as a grouped bar chart (SVG).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Bounds-check elimination: off, merge (one check per block) or predicate (none in the
    /// hot loop, with a checked fallback loop).
    #[arg(long, default_value = "predicate", value_parser = parse_bce)]
    bce: schedlab_passes::bce::BceLevel,
    /// Run Cranelift's e-graph optimiser as an explicit stage before scheduling.
    #[arg(long)]
    optimize: bool,
    /// The checked slow path of predicated loops: `eager` compiles it in the same function,
    /// `lazy` outlines it to a call as the `Md5` library's JIT does (the call's address is a
    /// placeholder: the code is for measuring, not running).
    #[arg(long, value_enum, default_value_t = crate::kernel::SlowPathMode::Eager)]
    slow_path: crate::kernel::SlowPathMode,
    /// Skip the critical-path rewrites (masked merge, reassociation).
    #[arg(long)]
    no_rewrites: bool,
}

/// Output formats.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// Comma-separated values with a header line.
    Csv,
    /// A JSON array of row objects.
    Json,
}

/// One report row: a kernel compiled with one strategy for one target.
#[derive(Serialize, Debug, Clone)]
pub struct Row {
    /// Kernel name.
    pub kernel: String,
    /// Scheduling strategy.
    pub strategy: String,
    /// Target.
    pub target: String,
    /// Spill stores inserted by the register allocator.
    pub spills: usize,
    /// Reloads inserted by the register allocator.
    pub reloads: usize,
    /// Stack frame bytes.
    pub frame_bytes: u32,
    /// Machine instructions (VCode).
    pub insts: usize,
    /// Machine code bytes.
    pub code_bytes: usize,
    /// Callee-saved registers the function saves.
    pub callee_saved: usize,
    /// Maximum simultaneously live IR values after scheduling.
    pub max_pressure: usize,
    /// The same before scheduling.
    pub max_pressure_before: usize,
    /// Bounds checks per loop iteration after bounds-check elimination.
    pub checks_per_block: Option<usize>,
    /// Bounds checks per loop iteration as built.
    pub checks_per_block_unoptimized: Option<usize>,
    /// llvm-mca cycles per hot-loop iteration, by CPU model (with `--mca`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mca: Option<BTreeMap<String, f64>>,
}

/// Runs `schedlab report`.
pub fn run(args: ReportArgs) -> Result<(), CliError> {
    let kernels = kernel::resolve_list(&args.kernel)?;
    let strategies = kernel::strategies(args.strategy.as_deref())?;
    let targets = kernel::targets(args.target.as_deref())?;
    let mut rows = Vec::new();
    let mut mca_problems = Vec::new();
    for k in &kernels {
        for strategy in &strategies {
            for &target in &targets {
                if let Some(reason) = crate::check_mb::unsupported(k.kind, target) {
                    eprintln!("schedlab: {} / {target}: {reason}; skipped", k.name);
                    continue;
                }
                let config = PipelineConfig {
                    bce: args.bce,
                    optimize: args.optimize,
                    rewrites: !args.no_rewrites,
                    ..PipelineConfig::with_strategy(strategy)
                };
                let options = args.slow_path.stage_options(target);
                let artifact = pipeline::run_with(k.func.clone(), target, &config, &options)
                    .map_err(|e| {
                        CliError::failure(format!("{} / {strategy} / {target}: {e}", k.name))
                    })?;
                let mca = args
                    .mca
                    .then(|| mca_figures(&artifact, target, &mut mca_problems));
                rows.push(row(k, strategy, target, &artifact, mca));
            }
        }
    }
    let text = match args.format {
        Format::Json => serde_json::to_string_pretty(&rows)
            .map_err(|e| CliError::failure(format!("JSON: {e}")))?,
        Format::Csv => csv(&rows),
        Format::Table => table(&rows, false),
        Format::Markdown => table(&rows, true),
    };
    println!("{text}");
    for problem in mca_problems {
        eprintln!("schedlab: llvm-mca: {problem}");
    }
    if let Some(path) = &args.plot {
        crate::report_plot::draw(path, &rows)
            .map_err(|e| CliError::failure(format!("plot {}: {e}", path.display())))?;
    }
    Ok(())
}

fn row(
    k: &Kernel,
    strategy: &str,
    target: Target,
    a: &Artifact,
    mca: Option<BTreeMap<String, f64>>,
) -> Row {
    Row {
        kernel: k.name.clone(),
        strategy: strategy.to_string(),
        target: target.name().to_string(),
        spills: a.code.spills,
        reloads: a.code.reloads,
        frame_bytes: a.code.frame_bytes,
        insts: a.code.insts,
        code_bytes: a.code.code_bytes,
        callee_saved: a.code.callee_saved.len(),
        max_pressure: a.ir.schedule.max_pressure_after,
        max_pressure_before: a.ir.schedule.max_pressure_before,
        checks_per_block: a.ir.bce.as_ref().map(|b| b.checks_per_block),
        checks_per_block_unoptimized: a.ir.bce.as_ref().map(|b| b.checks_per_block_unoptimized),
        mca,
    }
}

/// llvm-mca cycles per iteration for each of the target's CPU models; problems (e.g. llvm-mca
/// missing) are collected once each and reported after the table.
fn mca_figures(a: &Artifact, target: Target, problems: &mut Vec<String>) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for cpu in mca_cpus(target) {
        match mca_cycles(&a.compiled, cpu) {
            Ok(c) => {
                out.insert((*cpu).to_string(), (c * 10.0).round() / 10.0);
            }
            Err(e) => {
                let msg = format!("{target} {cpu}: {e}");
                if !problems.contains(&msg) {
                    problems.push(msg);
                }
            }
        }
    }
    out
}

const HEADERS: [&str; 12] = [
    "kernel",
    "strategy",
    "target",
    "spills",
    "reloads",
    "frame",
    "insts",
    "bytes",
    "csr",
    "pressure",
    "checks/blk",
    "mca cycles/iter",
];

fn cells(r: &Row) -> Vec<String> {
    let opt = |v: Option<usize>| v.map_or("-".to_string(), |v| v.to_string());
    let mca = r.mca.as_ref().map_or("-".to_string(), |m| {
        if m.is_empty() {
            "n/a".to_string()
        } else {
            m.iter()
                .map(|(cpu, c)| format!("{cpu} {c}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    });
    vec![
        r.kernel.clone(),
        r.strategy.clone(),
        r.target.clone(),
        r.spills.to_string(),
        r.reloads.to_string(),
        r.frame_bytes.to_string(),
        r.insts.to_string(),
        r.code_bytes.to_string(),
        r.callee_saved.to_string(),
        format!("{}→{}", r.max_pressure_before, r.max_pressure),
        format!(
            "{}→{}",
            opt(r.checks_per_block_unoptimized),
            opt(r.checks_per_block)
        ),
        mca,
    ]
}

fn table(rows: &[Row], markdown: bool) -> String {
    let body: Vec<Vec<String>> = rows.iter().map(cells).collect();
    let show_mca = rows.iter().any(|r| r.mca.is_some());
    let ncols = if show_mca {
        HEADERS.len()
    } else {
        HEADERS.len() - 1
    };
    let mut widths: Vec<usize> = HEADERS[..ncols].iter().map(|h| h.chars().count()).collect();
    for r in &body {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let numeric = |i: usize| (3..=8).contains(&i);
    let line = |cols: Vec<String>| -> String {
        let padded: Vec<String> = cols
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, &w))| {
                if numeric(i) {
                    format!("{c:>w$}")
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        if markdown {
            format!("| {} |", padded.join(" | "))
        } else {
            padded.join("  ").trim_end().to_string()
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        line(HEADERS[..ncols].iter().map(|s| s.to_string()).collect())
    );
    if markdown {
        let rule: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                if numeric(i) {
                    format!("{}:", "-".repeat(w.max(2) - 1))
                } else {
                    "-".repeat(w)
                }
            })
            .collect();
        let _ = writeln!(out, "| {} |", rule.join(" | "));
    }
    for r in body {
        let _ = writeln!(out, "{}", line(r.into_iter().take(ncols).collect()));
    }
    out.trim_end().to_string()
}

fn csv(rows: &[Row]) -> String {
    let cpus: Vec<String> = {
        let mut all: Vec<String> = rows
            .iter()
            .filter_map(|r| r.mca.as_ref())
            .flat_map(|m| m.keys().cloned())
            .collect();
        all.sort();
        all.dedup();
        all
    };
    let mut out = String::from(
        "kernel,strategy,target,spills,reloads,frame_bytes,insts,code_bytes,callee_saved,max_pressure,max_pressure_before,checks_per_block,checks_per_block_unoptimized",
    );
    for cpu in &cpus {
        let _ = write!(out, ",mca_{cpu}");
    }
    out.push('\n');
    let opt = |v: Option<usize>| v.map_or(String::new(), |v| v.to_string());
    for r in rows {
        let _ = write!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&r.kernel),
            r.strategy,
            r.target,
            r.spills,
            r.reloads,
            r.frame_bytes,
            r.insts,
            r.code_bytes,
            r.callee_saved,
            r.max_pressure,
            r.max_pressure_before,
            opt(r.checks_per_block),
            opt(r.checks_per_block_unoptimized)
        );
        for cpu in &cpus {
            let v = r.mca.as_ref().and_then(|m| m.get(cpu));
            let _ = write!(out, ",{}", v.map_or(String::new(), |v| v.to_string()));
        }
        out.push('\n');
    }
    out.trim_end().to_string()
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn parse_bce(s: &str) -> Result<schedlab_passes::bce::BceLevel, String> {
    s.parse()
        .map_err(|e: schedlab_passes::bce::BceError| e.to_string())
}
