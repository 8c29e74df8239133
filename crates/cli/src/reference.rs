//! `schedlab reference`: what a hand-written intrinsic built on a CPU's cryptographic extension
//! needs per block (e.g. HotSpot's AArch64 SHA-256 stub, `-XX:+UseSHA256Intrinsics`), costed
//! by llvm-mca on every core that has the extension, beside schedlab's compiled kernel on the
//! same core. The loops are `schedlab_cost::reference`; a test runs each against `sha2`.

use crate::CliError;
use crate::kernel::{IsaMode, SlowPathMode};
use schedlab_backend::Target;
use schedlab_backend::pipeline::{DEFAULT_STRATEGY, PipelineConfig};
use schedlab_cost::mca::{mca_cpus, mca_cycles};
use schedlab_cost::reference::{REFERENCES, Reference};
use serde::Serialize;

/// Arguments of `schedlab reference`.
#[derive(clap::Args, Debug)]
pub struct ReferenceArgs {
    /// Kernels, comma-separated (default: every kernel that has a reference loop).
    #[arg(long)]
    kernel: Option<String>,
    /// Targets, comma-separated, or `all` (default: every target with a reference loop).
    #[arg(long)]
    target: Option<String>,
    /// The schedlab strategy to compare with (default: the default strategy).
    #[arg(long)]
    strategy: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReferenceFormat::Table)]
    format: ReferenceFormat,
}

/// How `schedlab reference` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceFormat {
    /// Aligned columns.
    Table,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// A JSON array of row objects.
    Json,
}

/// One reference loop on one core, beside schedlab's kernel on that core.
#[derive(Clone, Debug, Serialize)]
struct Row {
    kernel: String,
    reference: String,
    stands_for: String,
    target: String,
    cpu: String,
    /// llvm-mca's cycles per iteration (one block) of the reference loop.
    reference_cycles: Option<f64>,
    strategy: String,
    /// schedlab's compiled kernel on the same core: its own model where the core is
    /// modelled, else llvm-mca (`schedlab_model` says which).
    schedlab_cycles: Option<f64>,
    schedlab_model: Option<String>,
    /// `schedlab_cycles / reference_cycles`.
    ratio: Option<f64>,
    error: Option<String>,
}

/// Runs `schedlab reference`.
pub fn run(args: ReferenceArgs) -> Result<(), CliError> {
    let strategy = args
        .strategy
        .clone()
        .unwrap_or_else(|| DEFAULT_STRATEGY.to_string());
    crate::kernel::strategies(Some(&strategy))?;
    let targets = match &args.target {
        Some(spec) => crate::kernel::targets(Some(spec))?,
        None => Target::ALL.to_vec(),
    };
    let kernels: Vec<String> = match &args.kernel {
        Some(spec) => crate::kernel::split_list(spec)
            .map(str::to_string)
            .collect(),
        None => {
            let mut names: Vec<String> = REFERENCES.iter().map(|r| r.kernel.to_string()).collect();
            names.dedup();
            names
        }
    };
    let mut rows = Vec::new();
    for name in &kernels {
        let resolved = crate::kernel::resolve(name)?;
        let chosen: Vec<&Reference> = REFERENCES
            .iter()
            .filter(|r| r.kernel == name && targets.contains(&r.target))
            .collect();
        if chosen.is_empty() {
            return Err(CliError::usage(format!(
                "no reference loop for kernel `{name}` on {}: references exist for {}",
                targets
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                REFERENCES
                    .iter()
                    .map(|r| format!("{} ({} on {})", r.kernel, r.name, r.target))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        for kernel in &resolved {
            for reference in &chosen {
                rows.extend(rows_for(kernel, reference, &strategy));
            }
        }
    }
    let failed = rows.iter().any(|r| r.error.is_some());
    match args.format {
        ReferenceFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&rows)
                .map_err(|e| CliError::failure(format!("serialising the rows: {e}")))?
        ),
        ReferenceFormat::Table => print!("{}", table(&rows, false)),
        ReferenceFormat::Markdown => print!("{}", table(&rows, true)),
    }
    if failed {
        return Err(CliError::failure(
            "some rows could not be costed (see `error`)",
        ));
    }
    Ok(())
}

/// The rows of one reference: one per core it is costed on.
fn rows_for(kernel: &crate::kernel::Kernel, reference: &Reference, strategy: &str) -> Vec<Row> {
    let config = PipelineConfig::with_strategy(strategy);
    let options = SlowPathMode::Lazy.stage_options_isa(reference.target, IsaMode::Level);
    let compiled = crate::compile::compile_kernel(kernel, reference.target, &config, &options);
    let own = compiled
        .as_ref()
        .ok()
        .map(|a| schedlab_cost::loop_cost(&a.compiled));
    reference
        .cpus
        .iter()
        .map(|cpu| {
            let mut errors = Vec::new();
            let reference_cycles = reference
                .cycles(cpu)
                .map_err(|e| errors.push(format!("reference: {}", first_lines(&e.to_string()))))
                .ok();
            let (schedlab_cycles, schedlab_model) = match (&compiled, &own) {
                (Err(e), _) => {
                    errors.push(format!("compiling {}: {e}", kernel.name));
                    (None, None)
                }
                (Ok(artifact), own) => {
                    let modelled =
                        own.as_ref()
                            .and_then(|cost| cost.as_ref().ok())
                            .and_then(|cost| {
                                cost.bounds
                                    .iter()
                                    .find(|b| b.cpu == *cpu)
                                    .map(|b| b.bound())
                            });
                    match modelled {
                        Some(cycles) => (Some(cycles), Some("schedlab".to_string())),
                        None if mca_cpus(reference.target).contains(cpu) => {
                            match mca_cycles(&artifact.compiled, cpu) {
                                Ok(c) => (Some(c), Some("llvm-mca".to_string())),
                                Err(e) => {
                                    errors.push(format!("llvm-mca on {}: {e}", kernel.name));
                                    (None, None)
                                }
                            }
                        }
                        None => {
                            errors.push(format!("no model of {cpu} for {}", kernel.name));
                            (None, None)
                        }
                    }
                }
            };
            let ratio = match (schedlab_cycles, reference_cycles) {
                (Some(s), Some(r)) if r > 0.0 => Some(s / r),
                _ => None,
            };
            Row {
                kernel: kernel.name.clone(),
                reference: reference.name.to_string(),
                stands_for: reference.stands_for.to_string(),
                target: reference.target.to_string(),
                cpu: cpu.to_string(),
                reference_cycles: reference_cycles.map(tenth),
                strategy: strategy.to_string(),
                schedlab_cycles: schedlab_cycles.map(tenth),
                schedlab_model,
                ratio: ratio.map(|r| (r * 100.0).round() / 100.0),
                error: (!errors.is_empty()).then(|| errors.join("; ")),
            }
        })
        .collect()
}

/// The first lines of a tool's error: enough to say what went wrong.
fn first_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().take(3).collect();
    lines.join(" / ")
}

fn tenth(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

fn table(rows: &[Row], markdown: bool) -> String {
    let headers = [
        "kernel",
        "reference",
        "target",
        "cpu",
        "reference cycles/block (llvm-mca)",
        "strategy",
        "schedlab cycles/block",
        "schedlab / reference",
    ];
    let cell = |v: Option<f64>| v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.1}"));
    let mut lines = vec![headers.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    lines.extend(rows.iter().map(|r| {
        vec![
            r.kernel.clone(),
            r.reference.clone(),
            r.target.clone(),
            r.cpu.clone(),
            cell(r.reference_cycles),
            r.strategy.clone(),
            match (&r.schedlab_cycles, &r.schedlab_model) {
                (Some(c), Some(m)) => format!("{c:.1} ({m})"),
                _ => "n/a".to_string(),
            },
            r.ratio
                .map_or_else(|| "n/a".to_string(), |v| format!("{v:.2}×")),
        ]
    }));
    let mut out = crate::grid::left_aligned(&lines, markdown);
    for r in rows.iter().filter(|r| r.error.is_some()) {
        out.push_str(&format!(
            "{} {} on {}: {}\n",
            r.reference,
            r.target,
            r.cpu,
            r.error.as_deref().unwrap_or_default()
        ));
    }
    out
}
