//! `report --optimum`: per block the exact optimum ([`schedlab_passes::sched::optimum`]) —
//! the lowest peak pressure, and the shortest length within the register budget — beside each
//! strategy's pressure and length; with `--summary`, each strategy's mean distance from it
//! per target over the kernels given (e.g. the `.clif` corpus).
//!
//! The blocks are the pipeline's function right before scheduling (its text after the
//! rewrites, parsed back), so the optimum is taken on exactly the DAG every strategy
//! schedules. A strategy that rematerialises loads schedules more instructions than the
//! problem has; its figures are marked `*` and left out of the distances. A length marked `+`
//! belongs to an order whose working set exceeds the register budget (it may be shorter than
//! the constrained optimum); it is left out of the length distance and counted instead.

use crate::CliError;
use crate::kernel::Kernel;
use crate::report::Format;
use schedlab_backend::Target;
use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_passes::sched::optimum::{self, BlockComparison, SolveLimits, Status};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What `report --optimum` needs from the report's arguments.
pub struct Settings {
    /// The pipeline configuration (its strategy is ignored).
    pub config: PipelineConfig,
    /// Stage options per target.
    pub options: Box<dyn Fn(Target) -> StageOptions + Sync>,
    /// Output format.
    pub format: Format,
    /// Add the per-target distances.
    pub summary: bool,
}

impl Settings {
    /// CSV with `--summary`: one table, the distances alone.
    pub fn summary_alone(&self) -> bool {
        self.summary && self.format == Format::Csv
    }
}

/// One solved problem as reported.
#[derive(Serialize, Debug, Clone)]
pub struct Solved {
    /// The best value found (`None`: no order within the budget).
    pub value: Option<u32>,
    /// The proven lower bound.
    pub bound: u32,
    /// `optimal`, `gap`, `infeasible` or `unknown`.
    pub status: String,
    /// Solver wall time, seconds (from the run that solved it; a cached block keeps it).
    pub seconds: f64,
}

/// One strategy's figures for a block.
#[derive(Serialize, Debug, Clone)]
pub struct Measured {
    /// Peak pressure.
    pub pressure: u32,
    /// In-order issue length.
    pub length: u32,
    /// Working set within the register budget.
    pub within_budget: bool,
    /// Scheduled the same instructions as the problem (not a load-rematerialising strategy).
    pub same_instructions: bool,
}

/// One block's row.
#[derive(Serialize, Debug, Clone)]
pub struct OptimumRow {
    /// Kernel.
    pub kernel: String,
    /// Target.
    pub target: String,
    /// Block.
    pub block: String,
    /// Free nodes (instructions the order decides).
    pub nodes: usize,
    /// Registers the working set may use.
    pub budget: u32,
    /// Minimum peak pressure.
    pub pressure: Solved,
    /// Minimum length within the budget.
    pub length: Solved,
    /// Per strategy.
    pub strategies: BTreeMap<String, Measured>,
}

/// Per target and strategy: the mean distance from the optimum.
#[derive(Serialize, Debug, Clone)]
pub struct GapRow {
    /// Target.
    pub target: String,
    /// Strategy.
    pub strategy: String,
    /// Blocks compared (same instructions as the problem).
    pub blocks: usize,
    /// Mean of (pressure - optimum) / optimum, per cent.
    pub pressure_gap_percent: f64,
    /// Blocks at the minimum pressure.
    pub pressure_optimal: usize,
    /// Mean of (length - optimum) / optimum over blocks within the budget, per cent.
    pub length_gap_percent: f64,
    /// Blocks within the budget at the minimum length.
    pub length_optimal: usize,
    /// Blocks where the strategy's order exceeds the budget although an order within it exists.
    pub over_budget: usize,
}

/// Prints the `--optimum` section for every kernel × target; an error if a comparison failed.
///
/// With `--format json`, `rows` is the report's own document: the section joins it as its
/// `optimum` member (`{"blocks": [...], "gaps": [...]}`; an array of rows becomes `{"rows":
/// [...]}` first), so the output is one JSON document.
pub fn section(
    kernels: &[Kernel],
    targets: &[Target],
    strategies: &[String],
    settings: &Settings,
    rows_document: Option<serde_json::Value>,
) -> Result<(), CliError> {
    let mut found = Vec::new();
    let blocks = rows(kernels, targets, strategies, settings, &mut found);
    match rows_document {
        Some(document) => println!("{}", one_document(document, &blocks)?),
        None => {
            // CSV's one table stands alone; the others follow the rows after a blank line.
            if !matches!(settings.format, Format::Jsonl | Format::Csv) {
                println!();
            }
            println!("{}", render(&blocks, settings)?);
        }
    }
    for problem in &found {
        eprintln!("schedlab: {problem}");
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(CliError::failure(format!(
            "{} kernel × target optimum comparisons failed",
            found.len()
        )))
    }
}

/// The report's JSON document with the section as its `optimum` member (the gaps always
/// computed, so the shape does not depend on `--summary`).
fn one_document(document: serde_json::Value, blocks: &[OptimumRow]) -> Result<String, CliError> {
    let mut document = match document {
        serde_json::Value::Object(map) => map,
        rows => serde_json::Map::from_iter([("rows".to_string(), rows)]),
    };
    document.insert(
        "optimum".to_string(),
        serde_json::json!({ "blocks": blocks, "gaps": gaps(blocks) }),
    );
    serde_json::to_string_pretty(&document).map_err(|e| CliError::failure(format!("JSON: {e}")))
}

/// The rows for every kernel × target, solving each block (cached blocks are free); problems
/// are appended to `problems`.
pub fn rows(
    kernels: &[Kernel],
    targets: &[Target],
    strategies: &[String],
    settings: &Settings,
    problems: &mut Vec<String>,
) -> Vec<OptimumRow> {
    let names: Vec<&'static str> = strategies
        .iter()
        .filter_map(|s| schedlab_passes::sched::strategy(s).ok().map(|e| e.name))
        .collect();
    let limits = SolveLimits::from_env();
    let mut out = Vec::new();
    for k in kernels {
        let Ok(kernel_targets) = k.targets(targets) else {
            continue;
        };
        for target in kernel_targets {
            if k.unsupported(target).is_some() {
                continue;
            }
            match compare(k, target, &names, settings, limits) {
                Ok(blocks) => {
                    for c in blocks.iter().filter(|c| c.problem.len() > 1) {
                        out.push(row(&k.name, target, c));
                    }
                }
                Err(e) => problems.push(format!("optimum: {} / {target}: {e}", k.name)),
            }
        }
    }
    out
}

/// The pipeline up to scheduling, then every block solved and every strategy measured.
fn compare(
    k: &Kernel,
    target: Target,
    names: &[&'static str],
    settings: &Settings,
    limits: SolveLimits,
) -> Result<Vec<BlockComparison>, String> {
    let source = schedlab_passes::sched::strategy("source").map_err(|e| e.to_string())?;
    let config = settings.config.clone().using_strategy(source);
    let options = (settings.options)(target);
    let mut func = k.func.clone();
    let (stages, _) = crate::guard::catch(|| {
        pipeline::run_ir_stages_with(&mut func, target, &config, &options)
            .map_err(|e| e.to_string())
    })
    .and_then(|r| r)?;
    let before = cranelift_reader::parse_functions(&stages.rewrite)
        .map_err(|e| format!("the text before scheduling does not parse back: {e}"))?
        .into_iter()
        .next()
        .ok_or("the text before scheduling holds no function")?;
    let model = config.model_for(target);
    crate::guard::catch(|| {
        optimum::compare(&before, &model, names, limits).map_err(|e| e.to_string())
    })
    .and_then(|r| r)
}

fn solved(b: &optimum::Bounded) -> Solved {
    Solved {
        value: b.value,
        bound: b.bound,
        status: b.status.name().to_string(),
        seconds: b.seconds,
    }
}

fn row(kernel: &str, target: Target, c: &BlockComparison) -> OptimumRow {
    let strategies = c
        .strategies
        .iter()
        .map(|&(name, f, same)| {
            (
                name.to_string(),
                Measured {
                    pressure: f.pressure,
                    length: f.length,
                    within_budget: c.problem.within_budget(f.pressure),
                    same_instructions: same,
                },
            )
        })
        .collect();
    OptimumRow {
        kernel: kernel.to_string(),
        target: target.to_string(),
        block: c.block.to_string(),
        nodes: c.problem.len(),
        budget: c.problem.register_budget,
        pressure: solved(&c.optimum.pressure),
        length: solved(&c.optimum.length),
        strategies,
    }
}

/// Per target × strategy distances from the optimum.
pub fn gaps(rows: &[OptimumRow]) -> Vec<GapRow> {
    let mut acc: BTreeMap<(String, String), (GapRow, usize)> = BTreeMap::new();
    for r in rows {
        for (name, m) in &r.strategies {
            if !m.same_instructions {
                continue;
            }
            let (g, length_blocks) =
                acc.entry((r.target.clone(), name.clone()))
                    .or_insert_with(|| {
                        (
                            GapRow {
                                target: r.target.clone(),
                                strategy: name.clone(),
                                blocks: 0,
                                pressure_gap_percent: 0.0,
                                pressure_optimal: 0,
                                length_gap_percent: 0.0,
                                length_optimal: 0,
                                over_budget: 0,
                            },
                            0,
                        )
                    });
            g.blocks += 1;
            if let Some(p) = r.pressure.value {
                g.pressure_gap_percent += relative(m.pressure, p);
                g.pressure_optimal += usize::from(m.pressure <= p);
            }
            if let Some(l) = r.length.value {
                if m.within_budget {
                    g.length_gap_percent += relative(m.length, l);
                    g.length_optimal += usize::from(m.length <= l);
                    *length_blocks += 1;
                } else {
                    g.over_budget += 1;
                }
            }
        }
    }
    acc.into_values()
        .map(|(mut g, length_blocks)| {
            g.pressure_gap_percent /= g.blocks.max(1) as f64;
            g.length_gap_percent /= length_blocks.max(1) as f64;
            g
        })
        .collect()
}

fn relative(value: u32, optimum: u32) -> f64 {
    if optimum == 0 {
        0.0
    } else {
        100.0 * (f64::from(value) - f64::from(optimum)) / f64::from(optimum)
    }
}

/// A solved figure: the value, and the bound and status when not optimal.
fn figure(s: &Solved) -> String {
    match (s.status.as_str(), s.value) {
        ("optimal", Some(v)) => v.to_string(),
        ("gap", Some(v)) => format!("{v} (>= {})", s.bound),
        (status, Some(v)) => format!("{v} ({status})"),
        (status, None) => status.to_string(),
    }
}

/// The `--optimum` section in `format` (JSON: `{"blocks": [...], "gaps": [...]}`; JSON lines:
/// one `{"optimum_block": …}` line per block, then one `{"optimum_gap": …}` line per target and
/// strategy; CSV: one table without prose, the blocks or with `--summary` the distances alone).
pub fn render(rows: &[OptimumRow], settings: &Settings) -> Result<String, CliError> {
    let json = |e: serde_json::Error| CliError::failure(format!("JSON: {e}"));
    if settings.format == Format::Json {
        return serde_json::to_string_pretty(&serde_json::json!({
            "blocks": rows,
            "gaps": gaps(rows),
        }))
        .map_err(json);
    }
    if settings.format == Format::Jsonl {
        let mut lines = Vec::new();
        for r in rows {
            lines.push(
                serde_json::to_string(&serde_json::json!({ "optimum_block": r })).map_err(json)?,
            );
        }
        for g in gaps(rows) {
            lines.push(
                serde_json::to_string(&serde_json::json!({ "optimum_gap": g })).map_err(json)?,
            );
        }
        return Ok(lines.join("\n"));
    }
    let markdown = settings.format == Format::Markdown;
    let csv = settings.format == Format::Csv;
    if settings.summary_alone() {
        return Ok(grid(&gap_lines(&gaps(rows)), false, true)
            .trim_end()
            .to_string());
    }
    let strategies: Vec<String> = rows
        .first()
        .map(|r| r.strategies.keys().cloned().collect())
        .unwrap_or_default();
    let mut header: Vec<String> = [
        "kernel",
        "target",
        "block",
        "nodes",
        "min pressure",
        "s",
        "budget",
        "min length in budget",
        "s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(strategies.iter().map(|s| format!("{s} p/l")));
    let mut lines: Vec<Vec<String>> = vec![header];
    for r in rows {
        let mut cells = vec![
            r.kernel.clone(),
            r.target.clone(),
            r.block.clone(),
            r.nodes.to_string(),
            figure(&r.pressure),
            format!("{:.2}", r.pressure.seconds),
            r.budget.to_string(),
            figure(&r.length),
            format!("{:.2}", r.length.seconds),
        ];
        for s in &strategies {
            cells.push(r.strategies.get(s).map_or("-".to_string(), |m| {
                format!(
                    "{}/{}{}{}",
                    m.pressure,
                    m.length,
                    if m.within_budget { "" } else { "+" },
                    if m.same_instructions { "" } else { "*" }
                )
            }));
        }
        lines.push(cells);
    }
    let mut text = grid(&lines, markdown, csv);
    if csv {
        return Ok(text.trim_end().to_string());
    }
    text.push_str(
        "\np/l: peak pressure / in-order issue length; + working set over the register budget; \
         * load copies: a different instruction set (left out of the distances)\n",
    );
    if settings.summary {
        text.push('\n');
        text.push_str(&grid(&gap_lines(&gaps(rows)), markdown, false));
    }
    let unsettled = rows
        .iter()
        .filter(|r| {
            r.pressure.status != Status::Optimal.name()
                || !matches!(r.length.status.as_str(), "optimal" | "infeasible")
        })
        .count();
    let _ = writeln!(
        text,
        "\n{} blocks, {} settled (both problems optimal or proven infeasible), {unsettled} with a gap",
        rows.len(),
        rows.len() - unsettled
    );
    Ok(text)
}

/// The distances from the optimum as table lines: a header, then a line per target and
/// strategy.
fn gap_lines(gaps: &[GapRow]) -> Vec<Vec<String>> {
    let header = [
        "target",
        "strategy",
        "blocks",
        "pressure gap %",
        "at min pressure",
        "length gap %",
        "at min length",
        "over budget",
    ];
    let mut lines = vec![header.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    for g in gaps {
        lines.push(vec![
            g.target.clone(),
            g.strategy.clone(),
            g.blocks.to_string(),
            format!("{:.2}", g.pressure_gap_percent),
            g.pressure_optimal.to_string(),
            format!("{:.2}", g.length_gap_percent),
            g.length_optimal.to_string(),
            g.over_budget.to_string(),
        ]);
    }
    lines
}

/// Aligned columns, a Markdown table or CSV.
fn grid(lines: &[Vec<String>], markdown: bool, csv: bool) -> String {
    if csv {
        crate::grid::csv(lines)
    } else {
        crate::grid::left_aligned(lines, markdown)
    }
}
