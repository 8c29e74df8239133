//! `schedlab report`: spills, code and static cost per kernel × strategy × target.

use crate::CliError;
use crate::kernel::{self, Kernel};
use crate::report_cost;
use crate::report_pressure::Profile;
use schedlab_backend::Target;
use schedlab_backend::pipeline::{Artifact, PipelineConfig};
use schedlab_backend::stats::CodeStats;
use schedlab_bench::text_table::{column_widths, join_cells};
use schedlab_cost::mca::{mca_cpus, mca_cycles};
use schedlab_sources::twins::Twins;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Arguments of `schedlab report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Kernel(s): a registered name or alias (`schedlab list`: md5, md5-mb, muladd,
    /// square-to-len, int-sum, sha256, sha256-local, …), a .clif file, a directory of them or a
    /// pattern like `dir/*.clif` (comma-separated).
    #[arg(long, default_value = "md5")]
    kernel: String,
    #[command(flatten)]
    selection: crate::switch::SelectionArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Cost the hot loop body with llvm-mca on each target's CPU models.
    #[arg(long)]
    mca: bool,
    /// Also draw spills + reloads per strategy and target as a grouped bar chart (SVG).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    stages: crate::switch::StageArgs,
    #[command(flatten)]
    code: crate::switch::CodeArgs,
    /// Run Cranelift's e-graph optimiser as an explicit stage before scheduling (the rows'
    /// strategy then reads `NAME+egraph`).
    #[arg(long)]
    optimize: bool,
    /// Every strategy both without and with the e-graph first (`--optimize`): on real code its
    /// simplifications matter as much as the order.
    #[arg(long, conflicts_with = "optimize")]
    optimize_both: bool,
    #[command(flatten)]
    rewrite: crate::switch::RewriteArgs,
    /// After the rows, one table per target: per strategy the sum and geometric mean of
    /// spills, reloads and instructions, and wins/ties/losses against `source`; with
    /// `--baseline`, per program and overall against stock Cranelift instead (geometric-mean
    /// ratio with its 95 % interval, Wilcoxon signed-rank p, compile-time ratio). CSV stays
    /// one table: with `--format csv` the summary replaces the rows (with `--optimum`, the
    /// distances from the optimum do).
    #[arg(long)]
    summary: bool,
    /// Only the kernels of shard K of N (`K/N`, 1 ≤ K ≤ N): every N-th kernel from the K-th,
    /// so that shards run on separate machines and their JSON lines merge into one summary.
    #[arg(long, value_name = "K/N", value_parser = crate::report_stream::parse_shard)]
    shard: Option<crate::report_stream::Shard>,
    /// Compute no rows: read JSON lines written by `--format jsonl` (one or more files, e.g.
    /// the shards of a run) and print the summary against stock (`--format` table, markdown,
    /// csv or json).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    summary_from: Vec<PathBuf>,
    /// Also draw, per target and strategy, the distribution over functions of the deciding
    /// metric against stock Cranelift as cumulative curves (SVG; needs `--baseline`).
    #[arg(long, value_name = "FILE.svg")]
    plot_cdf: Option<PathBuf>,
    /// The metric that decides wins, ties and losses against stock in the summary.
    #[arg(long, value_enum, default_value_t = crate::report_corpus::Metric::default())]
    decide: crate::report_corpus::Metric,
    /// Also draw live IR values along the hot loop per strategy, one panel per kernel × target,
    /// with the target's register budget as a line (SVG).
    #[arg(long, value_name = "FILE.svg")]
    plot_pressure: Option<PathBuf>,
    /// Add a `cranelift-speed` row per kernel × target: stock Cranelift at `opt_level=speed`,
    /// no schedlab pass (for a `.wasm` function with Wasmtime's flags); every row then carries
    /// its compile time per stage (`ir_us`, `codegen_us`).
    #[arg(long)]
    baseline: bool,
    /// Print every distinct problem met (a figure the model or llvm-mca could not give for a
    /// row) instead of one line of counts per reason.
    #[arg(long)]
    problems: bool,
    /// After the rows, per block the exact optimum (lowest peak pressure; shortest length
    /// within the register budget; proven, or with the gap to a proven bound) beside each
    /// strategy's pressure and length; with `--summary`, each strategy's mean distance from it
    /// (time limit per block and problem: `SCHEDLAB_OPTIMUM_SECONDS`, default 1). CSV stays one
    /// table: with `--format csv` the optimum's table replaces the rows.
    #[arg(long)]
    optimum: bool,
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
    /// JSON lines: one row object per line, streamed as the rows are done, in job order (the
    /// input of `--summary-from`).
    Jsonl,
}

/// One report row: a kernel compiled with one strategy for one target.
#[derive(Serialize, serde::Deserialize, Debug, Clone)]
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
    /// Spill stores per hot-loop iteration (`spills` counts the whole function).
    pub loop_spills: Option<usize>,
    /// Reloads per hot-loop iteration (`reloads` counts the whole function).
    pub loop_reloads: Option<usize>,
    /// Cycles per hot-loop iteration no modelled core beats: the lowest over the target's
    /// cores of max(recurrence, resource) ([`crate::report_cost`]).
    pub recurrence_bound: Option<f64>,
    /// Whether the hot code those figures describe is a loop; `false`: straight-line code (no
    /// loop without calls), costed run back to back, which the loop-cycle metric leaves out;
    /// `null` without figures (and in rows written before the column).
    #[serde(default)]
    pub hot_code_is_loop: Option<bool>,
    /// schedlab's model per core, what `--mca` leads with: the schedule simulation on the
    /// x86_64 cores (never under the bound), the bound max(recurrence, resource) elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<BTreeMap<String, f64>>,
    /// schedlab's bound max(recurrence, resource) per core (with `--mca`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_bound: Option<BTreeMap<String, f64>>,
    /// CPUs whose llvm-mca figure is below schedlab's bound for that core (shown with `*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mca_below_bound: Option<Vec<String>>,
    /// Why this row could not be produced (its figures are then zero); `null` when it was.
    pub error: Option<String>,
    /// E-graph flag, Wasm heap checks in innermost loops, compile time per stage.
    #[serde(flatten)]
    pub real: crate::report_real::RealColumns,
}

/// Runs `schedlab report`.
pub fn run(args: ReportArgs) -> Result<(), CliError> {
    if !args.summary_from.is_empty() {
        let rows = crate::report_stream::read_rows(&args.summary_from)?;
        if let Some(path) = &args.plot_cdf {
            crate::report_cdf::draw(path, &rows, args.decide)
                .map_err(|e| CliError::failure(format!("plot {}: {e}", path.display())))?;
        }
        return crate::report_stream::print_summary(&rows, args.decide, args.format);
    }
    let mut kernels = kernel::resolve_list(&args.kernel)?;
    if let Some(shard) = args.shard {
        kernels = shard.select(kernels);
    }
    let strategies = kernel::strategies(args.selection.strategy.as_deref())?;
    let targets = kernel::targets(args.selection.target.as_deref())?;
    let mut jobs = Vec::new();
    let mut plan = schedlab_sources::twins::TwinPlan::default();
    for k in &kernels {
        let start = jobs.len();
        let mut kernel_targets = k.targets(&targets)?;
        kernel_targets.retain(|&target| match k.unsupported(target) {
            Some(reason) => {
                eprintln!("schedlab: {} / {target}: {reason}; skipped", k.name);
                false
            }
            None => true,
        });
        let egraph = if args.optimize_both {
            vec![false, true]
        } else {
            vec![args.optimize]
        };
        for strategy in &strategies {
            for &optimize in &egraph {
                for &target in &kernel_targets {
                    jobs.push(Job::Pipeline(k, strategy.as_str(), target, optimize));
                }
            }
        }
        if args.baseline {
            for &target in &kernel_targets {
                jobs.push(Job::Baseline(k, target));
            }
        }
        plan.add_kernel(k, &kernel_targets, jobs.len() - start);
    }
    let mut twins: Twins<(Row, Vec<String>, Option<Profile>)> = plan.into_twins();
    if twins.copies() > 0 {
        eprintln!(
            "schedlab: {} of {} rows are of functions that are an earlier function's IR but \
             for names: copied from its rows",
            twins.copies(),
            jobs.len()
        );
    }
    if jobs.is_empty() {
        return Err(CliError::usage(format!(
            "nothing to report: no kernel of `{}` is compiled for --target {}",
            args.kernel,
            args.selection.target.as_deref().unwrap_or("all")
        )));
    }
    let progress = crate::check_clif::progress_bar(jobs.len() as u64, "report");
    // JSON lines stream: each chunk's rows are printed, in job order, once the chunk is done,
    // and kept only when a summary or a picture needs them.
    let streaming = args.format == Format::Jsonl;
    let keep = !streaming
        || args.summary
        || args.plot.is_some()
        || args.plot_cdf.is_some()
        || args.plot_pressure.is_some();
    let mut rows = Vec::new();
    let mut problems = crate::report_problems::Problems::default();
    let mut profiles = Vec::new();
    let (mut total, mut failed_rows) = (0usize, 0usize);
    let chunks: Vec<&[Job]> = jobs.chunks(crate::report_stream::CHUNK).collect();
    // The jobs of chunk `n` that are not copies.
    let own_jobs = |n: usize, twins: &Twins<_>| -> Vec<Job> {
        let first = n * crate::report_stream::CHUNK;
        let own: Vec<Job> = (first..first + chunks[n].len())
            .filter(|&j| !twins.is_copy(j))
            .map(|j| jobs[j])
            .collect();
        progress.inc((chunks[n].len() - own.len()) as u64);
        own
    };
    let build = |own: &[Job]| build_chunk(own, &args, &|n| progress.inc(n));
    let mut next = build(&own_jobs(0, &twins));
    for (n, chunk) in chunks.iter().enumerate() {
        // A chunk is costed while the next is compiled: neither waits for the other's
        // slowest function with a thread idle.
        let following = chunks.get(n + 1).map(|_| own_jobs(n + 1, &twins));
        let (costed, following) = rayon::join(
            || with_costs(std::mem::take(&mut next)),
            || following.map(|own| build(&own)),
        );
        next = following.unwrap_or_default();
        let mut computed = costed.into_iter();
        let first = n * crate::report_stream::CHUNK;
        for (j, job) in (first..).zip(chunk.iter()) {
            let (mut row, found, mut profile) = twins.take(j, &mut computed);
            row.kernel.clone_from(&job.kernel().name);
            if let Some(p) = &mut profile {
                p.kernel.clone_from(&row.kernel);
            }
            total += 1;
            if streaming {
                crate::report_stream::print_line(&row)?;
            }
            if let Some(e) = &row.error {
                failed_rows += 1;
                eprintln!(
                    "schedlab: {} / {} / {}: {e}",
                    row.kernel, row.strategy, row.target
                );
            }
            if keep {
                rows.push(row);
            }
            profiles.extend(profile);
            problems.add_row(found);
        }
    }
    progress.finish_and_clear();
    // With `--optimum` the JSON document is printed after the section is solved: one document.
    let json = (args.format == Format::Json).then(|| json_document(&rows, &args));
    let text = match args.format {
        Format::Jsonl => String::new(),
        Format::Json if args.optimum => String::new(),
        Format::Json => json_text(json.as_ref())?,
        // CSV is one table: with `--summary` the summary's, with `--optimum` the optimum's.
        Format::Csv if args.summary || args.optimum => String::new(),
        Format::Csv => csv(&rows),
        Format::Table => table(&rows, false),
        Format::Markdown => table(&rows, true),
    };
    let printed_with_optimum = args.optimum && args.format == Format::Json;
    let csv = args.format == Format::Csv;
    if !streaming && !printed_with_optimum && !(csv && (args.summary || args.optimum)) {
        println!("{text}");
    }
    let readable = matches!(args.format, Format::Table | Format::Markdown);
    if readable
        && rows
            .iter()
            .any(|r| r.mca_below_bound.as_ref().is_some_and(|b| !b.is_empty()))
    {
        println!("\n{}", report_cost::FOOTNOTE);
    }
    for line in problems.lines(args.problems) {
        eprintln!("{line}");
    }
    // CSV's one table with `--optimum` is the optimum's (with `--summary`, its distances).
    if args.summary
        && !matches!(args.format, Format::Json | Format::Jsonl)
        && !(csv && args.optimum)
    {
        if !csv {
            println!();
        }
        if args.baseline {
            let summary = crate::report_corpus::versus_stock(&rows, args.decide);
            let text = match args.format {
                Format::Csv => crate::report_corpus::csv(&summary),
                other => crate::report_corpus::table(&summary, other == Format::Markdown),
            };
            println!("{text}");
        } else {
            println!("{}", crate::report_summary::summary(&rows, args.format));
        }
    }
    if args.optimum {
        let slow_path = args.code.slow_path;
        let isa = args.code.isa;
        let settings = crate::report_optimum::Settings {
            config: args.rewrite.apply(PipelineConfig {
                bce: args.stages.bce,
                forward_stores: args.stages.forward_stores.enabled(),
                hoist: args.stages.hoist.enabled(),
                optimize: args.optimize,
                ..PipelineConfig::default()
            }),
            options: Box::new(move |target| slow_path.stage_options_isa(target, isa)),
            format: args.format,
            summary: args.summary,
        };
        crate::report_optimum::section(&kernels, &targets, &strategies, &settings, json)?;
    }
    if let Some(path) = &args.plot {
        crate::report_plot::draw(path, &rows)
            .map_err(|e| CliError::failure(format!("plot {}: {e}", path.display())))?;
    }
    if let Some(path) = &args.plot_cdf {
        crate::report_cdf::draw(path, &rows, args.decide)
            .map_err(|e| CliError::failure(format!("plot {}: {e}", path.display())))?;
    }
    if let Some(path) = &args.plot_pressure {
        crate::report_pressure::draw(path, &profiles)
            .map_err(|e| CliError::failure(format!("plot {}: {e}", path.display())))?;
    }
    if streaming && args.summary {
        crate::report_stream::print_summary(&rows, args.decide, Format::Jsonl)?;
    }
    if failed_rows > 0 {
        return Err(CliError::failure(format!(
            "{failed_rows} of {total} rows failed"
        )));
    }
    Ok(())
}

/// The rows as one JSON document, an object whatever the flags: the rows (`rows`), with
/// `--summary` the summary beside them (`summary`), with `--optimum` its section (`optimum`).
fn json_document(rows: &[Row], args: &ReportArgs) -> serde_json::Value {
    match (args.summary, args.baseline) {
        (true, true) => serde_json::json!({
            "rows": rows,
            "summary": crate::report_corpus::versus_stock(rows, args.decide),
        }),
        (true, false) => serde_json::json!({
            "rows": rows,
            "summary": crate::report_summary::summary_rows(rows),
        }),
        _ => serde_json::json!({ "rows": rows }),
    }
}

/// Pretty JSON text of a document.
fn json_text(document: Option<&serde_json::Value>) -> Result<String, CliError> {
    serde_json::to_string_pretty(&document.unwrap_or(&serde_json::Value::Null))
        .map_err(|e| CliError::failure(format!("JSON: {e}")))
}

/// One unit of report work: a kernel through schedlab's pipeline with one strategy, or through
/// stock Cranelift (`--baseline`).
#[derive(Clone, Copy)]
enum Job<'a> {
    Pipeline(&'a Kernel, &'a str, Target, bool),
    Baseline(&'a Kernel, Target),
}

impl Job<'_> {
    fn kernel(&self) -> &Kernel {
        match self {
            Job::Pipeline(k, ..) | Job::Baseline(k, _) => k,
        }
    }
}

/// A row without its own-model columns yet, and the code they are computed from: a chunk's
/// rows are compiled in parallel, then their code is disassembled together
/// ([`report_cost::row_costs`]: one llvm-objdump process per target and thread).
struct Built {
    row: Row,
    /// The code the row's figures come from (`None` for an error row).
    compiled: Option<schedlab_backend::Compiled>,
    /// The earlier row of the chunk whose code this row's is (the same scheduled IR): its
    /// own-model columns and problems are that row's.
    same_code_as: Option<usize>,
    problems: Vec<String>,
    profile: Option<Profile>,
    /// What the own model's problems of this row are prefixed with.
    cost_prefix: &'static str,
}

impl Built {
    fn error(row: Row) -> Self {
        Built {
            row,
            compiled: None,
            same_code_as: None,
            problems: Vec::new(),
            profile: None,
            cost_prefix: "",
        }
    }
}

/// Everything the own model's figures of a compiled function are computed from
/// ([`report_cost::row_costs`]): the target, the machine code (the listing, the hot loop, its
/// bounds and simulation), the VCode listing and the explicit stack slots' bytes (the
/// allocator's spills and reloads, [`schedlab_backend::stats::code_stats`]).
#[derive(PartialEq, Eq, Hash)]
struct CostInputs<'a> {
    target: Target,
    code: &'a [u8],
    vcode: &'a str,
    explicit_slot_bytes: i64,
}

impl<'a> CostInputs<'a> {
    fn of(compiled: &'a schedlab_backend::Compiled) -> Self {
        CostInputs {
            target: compiled.target,
            code: &compiled.code,
            vcode: &compiled.vcode,
            explicit_slot_bytes: schedlab_backend::stats::explicit_slot_bytes(&compiled.func),
        }
    }
}

/// The rows of `built` with their own-model columns, problems and profiles. Code is costed
/// once: a row with the code of an earlier row — the same scheduled IR, or different IR that
/// came out as the same code ([`CostInputs`]) — takes that row's figures.
fn with_costs(mut built: Vec<Built>) -> Vec<(Row, Vec<String>, Option<Profile>)> {
    let mut first_with: std::collections::HashMap<CostInputs<'_>, usize> =
        std::collections::HashMap::new();
    let mut same_cost_as: Vec<Option<usize>> = built.iter().map(|b| b.same_code_as).collect();
    for (i, b) in built.iter().enumerate() {
        if let (Some(compiled), None) = (&b.compiled, b.same_code_as) {
            match first_with.entry(CostInputs::of(compiled)) {
                std::collections::hash_map::Entry::Occupied(earlier) => {
                    same_cost_as[i] = Some(*earlier.get());
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(i);
                }
            }
        }
    }
    drop(first_with);
    for (b, same) in built.iter_mut().zip(&same_cost_as) {
        b.same_code_as = *same;
    }
    let costed: Vec<usize> = (0..built.len())
        .filter(|&i| built[i].compiled.is_some() && built[i].same_code_as.is_none())
        .collect();
    // The simulation's figures reach only rows with llvm-mca's beside them
    // ([`report_cost::fill`]).
    let simulate = built.iter().any(|b| b.row.mca.is_some());
    let costs = {
        let compiled: Vec<&schedlab_backend::Compiled> = costed
            .iter()
            .filter_map(|&i| built[i].compiled.as_ref())
            .collect();
        report_cost::row_costs(&compiled, simulate)
    };
    let mut cost_of: Vec<Option<(report_cost::RowCost, Vec<String>)>> = vec![None; built.len()];
    for (i, cost) in costed.into_iter().zip(costs) {
        cost_of[i] = Some(cost);
    }
    for i in 0..built.len() {
        if let Some(earlier) = built[i].same_code_as {
            cost_of[i] = cost_of[earlier].clone();
        }
    }
    built
        .into_iter()
        .zip(cost_of)
        .map(|(mut b, cost)| {
            if let Some((cost, found)) = cost {
                report_cost::fill(&mut b.row, cost);
                let prefix = b.cost_prefix;
                b.problems
                    .extend(found.into_iter().map(|p| format!("{prefix}{p}")));
            }
            (b.row, b.problems, b.profile)
        })
        .collect()
}

/// The rows of `chunk`, in its order. The pipeline rows of one kernel and target are built
/// together ([`crate::compile::compile_kernel_configs_timed`]: shared stages before the
/// schedule, one compile per distinct scheduled function), each such group and each stock
/// row in parallel with the others.
fn build_chunk(chunk: &[Job], args: &ReportArgs, done: &(dyn Fn(u64) + Sync)) -> Vec<Built> {
    use rayon::prelude::*;
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, job) in chunk.iter().enumerate() {
        let same_group = |group: &Vec<usize>| match (&chunk[group[0]], job) {
            (Job::Pipeline(a, _, at, _), Job::Pipeline(b, _, bt, _)) => {
                std::ptr::eq(*a, *b) && at == bt
            }
            _ => false,
        };
        match groups.iter_mut().find(|g| same_group(g)) {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    let built: Vec<Vec<(usize, Built)>> = groups
        .par_iter()
        .map(|group| {
            let rows = match chunk[group[0]] {
                Job::Baseline(k, target) => vec![(group[0], baseline_row(k, target, args))],
                Job::Pipeline(k, _, target, _) => {
                    let strategies: Vec<(usize, &str, bool)> = group
                        .iter()
                        .map(|&i| match chunk[i] {
                            Job::Pipeline(_, strategy, _, optimize) => (i, strategy, optimize),
                            Job::Baseline(..) => unreachable!("a group holds pipeline rows"),
                        })
                        .collect();
                    report_rows(k, target, &strategies, args)
                }
            };
            done(rows.len() as u64);
            rows
        })
        .collect();
    let mut slots: Vec<Option<Built>> = (0..chunk.len()).map(|_| None).collect();
    for (i, b) in built.into_iter().flatten() {
        slots[i] = Some(b);
    }
    slots
        .into_iter()
        .map(|b| b.expect("every job of the chunk is built"))
        .collect()
}

/// The `cranelift-speed` row behind [`crate::guard::catch`]: a failure is this row's error.
fn baseline_row(k: &Kernel, target: Target, args: &ReportArgs) -> Built {
    let name = crate::report_baseline::NAME;
    let built = crate::guard::catch(|| {
        let mut found = Vec::new();
        let row =
            crate::report_baseline::row(k, target, args.code.isa.choice(), args.mca, &mut found);
        (row, found)
    });
    match built {
        Ok((Ok((row, compiled)), found)) => Built {
            row,
            compiled: Some(compiled),
            same_code_as: None,
            problems: found
                .into_iter()
                .map(|p| format!("llvm-mca: {p}"))
                .collect(),
            profile: None,
            cost_prefix: crate::report_baseline::COST_PROBLEM,
        },
        Ok((Err(e), _)) | Err(e) => {
            let mut row = error_row(k, name, target, e);
            row.real.optimized = true;
            Built::error(row)
        }
    }
}

/// A row's llvm-mca cycles per CPU model (with `--mca`) and the problems met getting them.
type McaFigures = (Option<BTreeMap<String, f64>>, Vec<String>);

/// The pipeline rows of `k` on `target`, one per `(job index, strategy, optimize)` of
/// `strategies`, each failure or panic that row's error and nothing else's
/// ([`crate::compile::compile_kernel_configs_timed`]); with `--plot-pressure`, also each row's
/// pressure profile. A row whose code is an earlier row's takes that row's llvm-mca figures.
fn report_rows(
    k: &Kernel,
    target: Target,
    strategies: &[(usize, &str, bool)],
    args: &ReportArgs,
) -> Vec<(usize, Built)> {
    let configs: Vec<PipelineConfig> = strategies
        .iter()
        .map(|&(_, strategy, optimize)| {
            args.rewrite.apply(PipelineConfig {
                bce: args.stages.bce,
                forward_stores: args.stages.forward_stores.enabled(),
                hoist: args.stages.hoist.enabled(),
                optimize,
                ..PipelineConfig::with_strategy(strategy)
            })
        })
        .collect();
    let options = crate::compile::measuring_options(
        k,
        args.code.slow_path.stage_options_isa(target, args.code.isa),
    );
    let runs = crate::compile::compile_kernel_configs_timed(k, target, &configs, &options);
    // llvm-mca once per distinct code, in parallel.
    let mca_of: Vec<McaFigures> = {
        use rayon::prelude::*;
        runs.par_iter()
            .map(|run| match run {
                Ok(run) if args.mca && run.same_code_as.is_none() => {
                    let mut found = Vec::new();
                    let mca = mca_figures(&run.artifact.compiled, target, "", &mut found);
                    let found = found.into_iter().map(|p| format!("llvm-mca: {p}"));
                    (Some(mca), found.collect())
                }
                _ => (None, Vec::new()),
            })
            .collect()
    };
    let mut rows: Vec<(usize, Built)> = Vec::with_capacity(runs.len());
    for (i, (&(job, strategy, optimize), run)) in strategies.iter().zip(runs).enumerate() {
        let label = if optimize {
            format!("{strategy}+egraph")
        } else {
            strategy.to_string()
        };
        let strategy = label.as_str();
        let built = match run {
            Ok(run) => {
                let earlier = run.same_code_as.map(|i| &rows[i]);
                let (mca, mca_problems) = mca_of[run.same_code_as.unwrap_or(i)].clone();
                let profile = args.plot_pressure.is_some().then(|| {
                    crate::report_pressure::profile(&k.name, strategy, target, &run.artifact)
                });
                let mut row = row(k, strategy, target, &run.artifact, mca);
                // Times only beside stock's (`--baseline`): without it the rows stay
                // byte-identical from run to run.
                let timed = |us: u64| args.baseline.then_some(us);
                row.real = crate::report_real::RealColumns::measure(
                    optimize,
                    &k.func,
                    &run.artifact.func,
                    timed(run.times.ir_us),
                    timed(run.times.codegen_us),
                );
                Built {
                    row,
                    compiled: Some(run.artifact.compiled),
                    same_code_as: earlier.map(|&(chunk_index, _)| chunk_index),
                    problems: mca_problems,
                    profile,
                    cost_prefix: "own model: ",
                }
            }
            Err(e) => {
                let mut row = error_row(k, strategy, target, e);
                row.real.optimized = optimize;
                Built::error(row)
            }
        };
        rows.push((job, built));
    }
    rows
}

impl Row {
    /// The row of `kernel`, `strategy` and `target` with the code figures of `code` and
    /// nothing else yet (zeros, no columns, no error).
    pub fn of_code(kernel: &str, strategy: &str, target: Target, code: &CodeStats) -> Self {
        Row {
            kernel: kernel.to_string(),
            strategy: strategy.to_string(),
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
            mca: None,
            loop_spills: None,
            loop_reloads: None,
            recurrence_bound: None,
            hot_code_is_loop: None,
            model: None,
            mca_below_bound: None,
            model_bound: None,
            error: None,
            real: Default::default(),
        }
    }
}

fn error_row(k: &Kernel, strategy: &str, target: Target, error: String) -> Row {
    Row {
        error: Some(error),
        ..Row::of_code(&k.name, strategy, target, &CodeStats::default())
    }
}

fn row(
    k: &Kernel,
    strategy: &str,
    target: Target,
    a: &Artifact,
    mca: Option<BTreeMap<String, f64>>,
) -> Row {
    // The own-model columns stay empty here: [`report_cost::fill`].
    Row {
        max_pressure: a.ir.schedule.max_pressure_after,
        max_pressure_before: a.ir.schedule.max_pressure_before,
        checks_per_block: a.ir.bce.as_ref().map(|b| b.checks_per_block),
        checks_per_block_unoptimized: a.ir.bce.as_ref().map(|b| b.checks_per_block_unoptimized),
        mca,
        ..Row::of_code(&k.name, strategy, target, &a.code)
    }
}

/// llvm-mca cycles per iteration for each of the target's CPU models; problems (e.g. llvm-mca
/// missing) are collected once each, named `{target} {cpu}{label}`, and reported after the
/// table.
pub fn mca_figures(
    compiled: &schedlab_backend::Compiled,
    target: Target,
    label: &str,
    problems: &mut Vec<String>,
) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for cpu in mca_cpus(target) {
        match mca_cycles(compiled, cpu) {
            Ok(c) => {
                out.insert((*cpu).to_string(), (c * 10.0).round() / 10.0);
            }
            Err(e) => {
                let msg = format!("{target} {cpu}{label}: {e}");
                if !problems.contains(&msg) {
                    problems.push(msg);
                }
            }
        }
    }
    out
}

const HEADERS: [&str; 15] = [
    "status",
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
    "loop sp/rl",
    "bound",
    "cycles/iter: model (mca llvm-mca)",
];

fn cells(r: &Row) -> Vec<String> {
    let opt = |v: Option<usize>| v.map_or("-".to_string(), |v| v.to_string());
    let mca = r
        .mca
        .as_ref()
        .map_or("-".to_string(), |m| report_cost::mca_cell(r, m));
    let loop_counts = match (r.loop_spills, r.loop_reloads) {
        (Some(s), Some(l)) => format!("{s}/{l}"),
        _ => "-".to_string(),
    };
    let bound = r
        .recurrence_bound
        .map_or("-".to_string(), |b| format!("{b:.1}"));
    let status = if r.error.is_some() { "ERROR" } else { "ok" };
    vec![
        status.to_string(),
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
        loop_counts,
        bound,
        mca,
    ]
}

fn table(rows: &[Row], markdown: bool) -> String {
    let show_mca = rows.iter().any(|r| r.mca.is_some());
    let ncols = if show_mca {
        HEADERS.len()
    } else {
        HEADERS.len() - 1
    };
    // The status column only when some row failed, so that good reports look as before.
    let first = usize::from(rows.iter().all(|r| r.error.is_none()));
    let headers = &HEADERS[first..ncols];
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| cells(r).into_iter().take(ncols).skip(first).collect())
        .collect();
    let widths = column_widths(headers, &body);
    let numeric = |i: usize| (4..=9).contains(&(i + first)) || i + first == 13;
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
        join_cells(&padded, markdown)
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        line(headers.iter().map(|s| s.to_string()).collect())
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
        let _ = writeln!(out, "{}", line(r));
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
        "kernel,strategy,target,spills,reloads,frame_bytes,insts,code_bytes,callee_saved,max_pressure,max_pressure_before,checks_per_block,checks_per_block_unoptimized,error,loop_spills,loop_reloads,recurrence_bound,hot_code_is_loop",
    );
    for cpu in &cpus {
        let _ = write!(out, ",mca_{cpu}");
    }
    if !cpus.is_empty() {
        out.push_str(",mca_below_bound");
    }
    let _ = write!(out, ",{}", crate::report_real::CSV_HEADER);
    out.push('\n');
    let opt = |v: Option<usize>| v.map_or(String::new(), |v| v.to_string());
    for r in rows {
        let _ = write!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            crate::grid::csv_field(&r.kernel),
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
            opt(r.checks_per_block_unoptimized),
            r.error
                .as_deref()
                .map(crate::grid::csv_field)
                .unwrap_or_default()
        );
        let _ = write!(
            out,
            ",{},{},{},{}",
            opt(r.loop_spills),
            opt(r.loop_reloads),
            r.recurrence_bound.map_or(String::new(), |b| b.to_string()),
            r.hot_code_is_loop.map_or(String::new(), |l| l.to_string())
        );
        for cpu in &cpus {
            let v = r.mca.as_ref().and_then(|m| m.get(cpu));
            let _ = write!(out, ",{}", v.map_or(String::new(), |v| v.to_string()));
        }
        if !cpus.is_empty() {
            let below = r
                .mca_below_bound
                .as_ref()
                .map_or(String::new(), |b| b.join(" "));
            let _ = write!(out, ",{below}");
        }
        let _ = write!(out, ",{}", r.real.csv_cells());
        out.push('\n');
    }
    out.trim_end().to_string()
}
