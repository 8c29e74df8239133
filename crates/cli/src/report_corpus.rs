//! `report --summary` over a corpus with the stock-Cranelift rows (`--baseline`): per program
//! (a module in one bounds-check mode, a `.clif` file, a built-in kernel) and overall, per
//! target and strategy, against `cranelift-speed` on the same function:
//!
//! - sums of spills, reloads, instructions and code bytes, and the compile-time ratio
//!   (the strategy's IR stages + code generation over stock's code generation, summed);
//! - the geometric-mean ratio of the deciding metric, `(x + 1) / (stock + 1)` (shifted: spill
//!   counts are often 0), with a 95 % confidence interval (normal approximation on the logs);
//! - wins / ties / losses on the deciding metric ([`Metric`], `--decide`);
//! - the paired Wilcoxon signed-rank test of the differences (normal approximation with tie
//!   correction, two-sided p; zero differences dropped, as Wilcoxon's original test does).
//!
//! Only functions whose stock row and strategy row both compiled are paired; the others are
//! counted as `unpaired`.

use crate::report::Row;
use schedlab_bench::stats::{mean_with_ci, round4, wilcoxon_signed_rank};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The strategy name of the stock rows.
const STOCK: &str = crate::report_baseline::NAME;

/// The metric that decides a win, a tie or a loss against stock.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Spill stores plus reloads.
    #[default]
    SpillsReloads,
    /// Spill stores.
    Spills,
    /// Reloads.
    Reloads,
    /// Machine instructions.
    Insts,
    /// Machine code bytes.
    CodeBytes,
    /// Stack frame bytes.
    FrameBytes,
    /// schedlab's modelled cycles per innermost-loop iteration: rows whose hot code is a loop
    /// the model costs. Straight-line code's figure (run back to back, so it depends on which
    /// registers one run's outputs and the next run's inputs happen to share) is left out;
    /// rows written before `hot_code_is_loop` existed count as they did.
    LoopCycles,
    /// Compile time in microseconds.
    CompileTime,
}

impl Metric {
    /// The metric of a row (`None` when the row has none, e.g. no modelled loop).
    pub fn of(self, r: &Row) -> Option<f64> {
        let n = |v: usize| Some(v as f64);
        match self {
            Metric::SpillsReloads => n(r.spills + r.reloads),
            Metric::Spills => n(r.spills),
            Metric::Reloads => n(r.reloads),
            Metric::Insts => n(r.insts),
            Metric::CodeBytes => n(r.code_bytes),
            Metric::FrameBytes => n(r.frame_bytes as usize),
            Metric::LoopCycles => r
                .recurrence_bound
                .filter(|_| r.hot_code_is_loop != Some(false)),
            Metric::CompileTime => r.real.compile_us().map(|us| us as f64),
        }
    }

    /// The name `--decide` takes.
    pub fn name(self) -> &'static str {
        match self {
            Metric::SpillsReloads => "spills-reloads",
            Metric::Spills => "spills",
            Metric::Reloads => "reloads",
            Metric::Insts => "insts",
            Metric::CodeBytes => "code-bytes",
            Metric::FrameBytes => "frame-bytes",
            Metric::LoopCycles => "loop-cycles",
            Metric::CompileTime => "compile-time",
        }
    }
}

/// One program × target × strategy against stock.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct VersusStock {
    /// Program (`all` for the whole corpus).
    pub program: String,
    /// Target.
    pub target: String,
    /// Strategy (`cranelift-speed` itself: its own sums, ratios 1).
    pub strategy: String,
    /// Functions with both rows compiled.
    pub functions: usize,
    /// Functions whose strategy or stock row failed.
    pub unpaired: usize,
    /// Sum of spills.
    pub spills: usize,
    /// Sum of reloads.
    pub reloads: usize,
    /// Sum of instructions.
    pub insts: usize,
    /// Sum of code bytes.
    pub code_bytes: usize,
    /// Sum of Wasm heap checks in innermost-loop blocks as translated, and as code generation
    /// received them (after bounds-check elimination).
    pub loop_heap_checks: (usize, usize),
    /// Shifted geometric mean of spills + reloads.
    pub spills_reloads_geomean: f64,
    /// Functions with a modelled innermost-loop figure, and their geometric mean of cycles.
    pub loop_cycles_functions: usize,
    /// Geometric mean of modelled cycles per innermost-loop iteration over those functions.
    pub loop_cycles_geomean: Option<f64>,
    /// The deciding metric.
    pub metric: Metric,
    /// Functions where it is lower than stock's.
    pub wins: usize,
    /// Equal.
    pub ties: usize,
    /// Higher.
    pub losses: usize,
    /// Geometric mean of (metric + 1) / (stock + 1) over the paired functions with the metric.
    pub ratio_geomean: Option<f64>,
    /// Its 95 % confidence interval.
    pub ratio_ci95: Option<(f64, f64)>,
    /// Wilcoxon signed-rank test, two-sided p-value (`None` when every difference is 0).
    pub wilcoxon_p: Option<f64>,
    /// Sum of compile time over sum of stock's compile time.
    pub compile_time_ratio: Option<f64>,
}

/// Key of a function: program, function, target.
type FunctionKey = (String, String, String);

/// The program of a kernel name: `FILE.wasm:MODE` for a module's function, `FILE.clif` for a
/// `.clif` file's, the name itself for a built-in kernel.
pub fn program(kernel: &str) -> &str {
    let mut colons = kernel.match_indices(':').map(|(i, _)| i);
    let first = colons.next();
    match first {
        Some(i) if kernel[..i].ends_with(".wasm") => colons.next().map_or(kernel, |j| &kernel[..j]),
        Some(i) => &kernel[..i],
        None => kernel,
    }
}

/// The comparison of every strategy with stock, per program and overall (`all`), in the order
/// programs, targets and strategies first appear.
pub fn versus_stock(rows: &[Row], metric: Metric) -> Vec<VersusStock> {
    let mut stock: BTreeMap<FunctionKey, &Row> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.strategy == STOCK && r.error.is_none())
    {
        stock.insert(key(r), r);
    }
    let mut order: Vec<(String, String, String)> = Vec::new();
    let mut groups: BTreeMap<(String, String, String), Vec<&Row>> = BTreeMap::new();
    for r in rows {
        for program in [program(&r.kernel).to_string(), "all".to_string()] {
            let g = (program, r.target.clone(), r.strategy.clone());
            if !groups.contains_key(&g) {
                order.push(g.clone());
            }
            groups.entry(g).or_default().push(r);
        }
    }
    // Programs in order of appearance, `all` last; within, targets then strategies.
    let mut programs: Vec<&String> = Vec::new();
    for (p, _, _) in &order {
        if !programs.contains(&p) && p != "all" {
            programs.push(p);
        }
    }
    let all = "all".to_string();
    if programs.len() > 1 {
        programs.push(&all);
    }
    let mut out = Vec::new();
    for p in programs {
        let mut targets: Vec<&String> = Vec::new();
        for (q, t, _) in &order {
            if q == p && !targets.contains(&t) {
                targets.push(t);
            }
        }
        for t in targets {
            for g in order.iter().filter(|(q, tt, _)| q == p && tt == t) {
                out.push(compare(g, &groups[g], &stock, metric));
            }
        }
    }
    out
}

fn key(r: &Row) -> FunctionKey {
    (
        program(&r.kernel).to_string(),
        r.kernel.clone(),
        r.target.clone(),
    )
}

fn compare(
    (program, target, strategy): &(String, String, String),
    group: &[&Row],
    stock: &BTreeMap<FunctionKey, &Row>,
    metric: Metric,
) -> VersusStock {
    let paired: Vec<(&Row, &Row)> = group
        .iter()
        .filter(|r| r.error.is_none())
        .filter_map(|r| stock.get(&key(r)).map(|s| (*r, *s)))
        .collect();
    let sum = |f: fn(&Row) -> usize| paired.iter().map(|(r, _)| f(r)).sum::<usize>();
    let (mut wins, mut ties, mut losses) = (0, 0, 0);
    let mut logs = Vec::new();
    let mut diffs = Vec::new();
    let (mut time, mut stock_time) = (0u64, 0u64);
    for (r, s) in &paired {
        if let (Some(x), Some(y)) = (metric.of(r), metric.of(s)) {
            match x.partial_cmp(&y) {
                Some(std::cmp::Ordering::Less) => wins += 1,
                Some(std::cmp::Ordering::Greater) => losses += 1,
                _ => ties += 1,
            }
            logs.push(((x + 1.0) / (y + 1.0)).ln());
            diffs.push(x - y);
        }
        if let (Some(a), Some(b)) = (r.real.compile_us(), s.real.compile_us()) {
            time += a;
            stock_time += b;
        }
    }
    let cycles: Vec<f64> = paired
        .iter()
        .filter_map(|(r, _)| Metric::LoopCycles.of(r))
        .collect();
    let (ratio_geomean, ratio_ci95) = mean_with_ci(&logs)
        .map(|(m, lo, hi)| {
            (
                Some(round4(m.exp())),
                Some((round4(lo.exp()), round4(hi.exp()))),
            )
        })
        .unwrap_or((None, None));
    VersusStock {
        program: program.clone(),
        target: target.clone(),
        strategy: strategy.clone(),
        functions: paired.len(),
        unpaired: group.len() - paired.len(),
        spills: sum(|r| r.spills),
        reloads: sum(|r| r.reloads),
        insts: sum(|r| r.insts),
        code_bytes: sum(|r| r.code_bytes),
        loop_heap_checks: (
            sum(|r| r.real.loop_heap_checks_before.unwrap_or(0)),
            sum(|r| r.real.loop_heap_checks.unwrap_or(0)),
        ),
        spills_reloads_geomean: round4(schedlab_bench::stats::geomean(
            &paired
                .iter()
                .map(|(r, _)| r.spills + r.reloads)
                .collect::<Vec<_>>(),
        )),
        loop_cycles_functions: cycles.len(),
        loop_cycles_geomean: (!cycles.is_empty()).then(|| {
            round4(
                (cycles
                    .iter()
                    .map(|c| c.max(f64::MIN_POSITIVE).ln())
                    .sum::<f64>()
                    / cycles.len() as f64)
                    .exp(),
            )
        }),
        metric,
        wins,
        ties,
        losses,
        ratio_geomean,
        ratio_ci95,
        wilcoxon_p: wilcoxon_signed_rank(&diffs).map(round4),
        compile_time_ratio: (stock_time > 0).then(|| round4(time as f64 / stock_time as f64)),
    }
}

/// One function where a strategy does worse than stock on the deciding metric.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Loss {
    /// Kernel (program and function).
    pub kernel: String,
    /// Target.
    pub target: String,
    /// Strategy.
    pub strategy: String,
    /// The metric with the strategy.
    pub value: f64,
    /// The metric with stock Cranelift.
    pub stock: f64,
    /// Spills / reloads / instructions with the strategy.
    pub spills_reloads_insts: (usize, usize, usize),
    /// The same with stock.
    pub stock_spills_reloads_insts: (usize, usize, usize),
}

/// The `n` functions where `strategy` loses most against stock on `metric` (largest
/// difference first; ties by name, so the list is deterministic).
pub fn largest_losses(rows: &[Row], strategy: &str, metric: Metric, n: usize) -> Vec<Loss> {
    let stock: BTreeMap<(&str, &str), &Row> = rows
        .iter()
        .filter(|r| r.strategy == STOCK && r.error.is_none())
        .map(|r| ((r.kernel.as_str(), r.target.as_str()), r))
        .collect();
    let mut losses: Vec<Loss> = rows
        .iter()
        .filter(|r| r.strategy == strategy && r.error.is_none())
        .filter_map(|r| {
            let s = stock.get(&(r.kernel.as_str(), r.target.as_str()))?;
            let (value, base) = (metric.of(r)?, metric.of(s)?);
            (value > base).then(|| Loss {
                kernel: r.kernel.clone(),
                target: r.target.clone(),
                strategy: r.strategy.clone(),
                value,
                stock: base,
                spills_reloads_insts: (r.spills, r.reloads, r.insts),
                stock_spills_reloads_insts: (s.spills, s.reloads, s.insts),
            })
        })
        .collect();
    losses.sort_by(|a, b| {
        (b.value - b.stock)
            .total_cmp(&(a.value - a.stock))
            .then_with(|| a.kernel.cmp(&b.kernel))
            .then_with(|| a.target.cmp(&b.target))
    });
    losses.truncate(n);
    losses
}

/// The losses as a Markdown or plain list.
pub fn losses_table(losses: &[Loss], metric: Metric) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| function | target | strategy | {} (stock) | spills/reloads/insts (stock) |",
        metric.name()
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|");
    for l in losses {
        let (s, r, i) = l.spills_reloads_insts;
        let (ss, sr, si) = l.stock_spills_reloads_insts;
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} ({}) | {s}/{r}/{i} ({ss}/{sr}/{si}) |",
            l.kernel, l.target, l.strategy, l.value, l.stock
        );
    }
    out.trim_end().to_string()
}

/// The comparison as text: one table per program and target (Markdown when `markdown`).
pub fn table(summary: &[VersusStock], markdown: bool) -> String {
    let mut out = String::new();
    let mut current = (String::new(), String::new());
    let headers = [
        "strategy",
        "functions",
        "spills",
        "reloads",
        "insts",
        "code bytes",
        "loop checks",
        "sp+rl gmean",
        "loop cycles gmean (n)",
        "W/T/L",
        "ratio gmean [95% CI]",
        "Wilcoxon p",
        "compile time ×",
    ];
    for s in summary {
        if (s.program.clone(), s.target.clone()) != current {
            current = (s.program.clone(), s.target.clone());
            let title = format!(
                "{} / {} (deciding metric: {})",
                s.program,
                s.target,
                s.metric.name()
            );
            if markdown {
                let _ = writeln!(out, "\n**{title}**\n");
                let _ = writeln!(out, "| {} |", headers.join(" | "));
                let _ = writeln!(out, "|---|{}", "---:|".repeat(headers.len() - 1));
            } else {
                let _ = writeln!(out, "\n{title}");
                let _ = writeln!(out, "  {}", headers.join("  "));
            }
        }
        let opt =
            |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
        let cells = [
            s.strategy.clone(),
            format!(
                "{}{}",
                s.functions,
                if s.unpaired > 0 {
                    format!(" (+{} failed)", s.unpaired)
                } else {
                    String::new()
                }
            ),
            s.spills.to_string(),
            s.reloads.to_string(),
            s.insts.to_string(),
            s.code_bytes.to_string(),
            format!("{} → {}", s.loop_heap_checks.0, s.loop_heap_checks.1),
            format!("{:.2}", s.spills_reloads_geomean),
            format!(
                "{} ({})",
                opt(s.loop_cycles_geomean, 2),
                s.loop_cycles_functions
            ),
            format!("{}/{}/{}", s.wins, s.ties, s.losses),
            match (s.ratio_geomean, s.ratio_ci95) {
                (Some(g), Some((lo, hi))) => format!("{g:.3} [{lo:.3}, {hi:.3}]"),
                _ => "-".to_string(),
            },
            opt(s.wilcoxon_p, 4),
            opt(s.compile_time_ratio, 2),
        ];
        if markdown {
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        } else {
            let _ = writeln!(out, "  {}", cells.join("  "));
        }
    }
    out.trim().to_string()
}

/// The summary as one CSV table: a header line, then a row per program, target and strategy
/// (empty cells where a figure is undefined).
pub fn csv(summary: &[VersusStock]) -> String {
    let mut out = String::from(
        "program,target,strategy,functions,unpaired,spills,reloads,insts,code_bytes,\
         loop_heap_checks_translated,loop_heap_checks_generated,spills_reloads_geomean,\
         loop_cycles_functions,loop_cycles_geomean,metric,wins,ties,losses,ratio_geomean,\
         ratio_ci95_low,ratio_ci95_high,wilcoxon_p,compile_time_ratio\n",
    );
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for s in summary {
        let (low, high) = s.ratio_ci95.unzip();
        let cells = [
            crate::grid::csv_field(&s.program),
            crate::grid::csv_field(&s.target),
            crate::grid::csv_field(&s.strategy),
            s.functions.to_string(),
            s.unpaired.to_string(),
            s.spills.to_string(),
            s.reloads.to_string(),
            s.insts.to_string(),
            s.code_bytes.to_string(),
            s.loop_heap_checks.0.to_string(),
            s.loop_heap_checks.1.to_string(),
            s.spills_reloads_geomean.to_string(),
            s.loop_cycles_functions.to_string(),
            opt(s.loop_cycles_geomean),
            s.metric.name().to_string(),
            s.wins.to_string(),
            s.ties.to_string(),
            s.losses.to_string(),
            opt(s.ratio_geomean),
            opt(low),
            opt(high),
            opt(s.wilcoxon_p),
            opt(s.compile_time_ratio),
        ];
        let _ = writeln!(out, "{}", cells.join(","));
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_of_kernel_names() {
        assert_eq!(
            program("regex.wasm:explicit:core::fmt::write"),
            "regex.wasm:explicit"
        );
        assert_eq!(program("regex.wasm:guard"), "regex.wasm:guard");
        assert_eq!(program("dir/f.clif:%add"), "dir/f.clif");
        assert_eq!(program("md5"), "md5");
    }

    #[test]
    fn loop_cycles_leave_out_straight_line_code() {
        let code = schedlab_backend::stats::CodeStats::default();
        let mut row = Row::of_code("f", "balanced", schedlab_backend::Target::X86_64, &code);
        row.recurrence_bound = Some(13.0);
        // Written before the column: counted as before.
        assert_eq!(Metric::LoopCycles.of(&row), Some(13.0));
        row.hot_code_is_loop = Some(true);
        assert_eq!(Metric::LoopCycles.of(&row), Some(13.0));
        row.hot_code_is_loop = Some(false);
        assert_eq!(Metric::LoopCycles.of(&row), None);
        // Every other metric keeps the row.
        assert_eq!(Metric::Insts.of(&row), Some(0.0));
    }
}
