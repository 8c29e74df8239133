//! `report --summary`: over a corpus of kernels, per target and strategy, the sum and the
//! geometric mean of spills, reloads and instructions, and wins/ties/losses against `source`.
//!
//! The geometric mean is taken of `x + 1`, minus 1 (a shifted geometric mean), because
//! spill counts are often zero. A *win* is a kernel whose `spills + reloads` is lower than
//! with `source` on the same target, a *loss* higher; rows with an error are left out (and
//! so is a kernel whose `source` row failed, from wins/ties/losses).

use crate::report::{Format, Row};
use schedlab_bench::stats::{geomean, round2};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The summary of one target × strategy.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// Target.
    pub target: String,
    /// Strategy.
    pub strategy: String,
    /// Rows that compiled.
    pub kernels: usize,
    /// Sum of spills.
    pub spills: usize,
    /// Shifted geometric mean of spills.
    pub spills_geomean: f64,
    /// Sum of reloads.
    pub reloads: usize,
    /// Shifted geometric mean of reloads.
    pub reloads_geomean: f64,
    /// Sum of instructions.
    pub insts: usize,
    /// Shifted geometric mean of instructions.
    pub insts_geomean: f64,
    /// Kernels with fewer spills + reloads than with `source`.
    pub wins: usize,
    /// Kernels with as many.
    pub ties: usize,
    /// Kernels with more.
    pub losses: usize,
}

/// One summary row per target and strategy, in the rows' order of first appearance.
pub fn summary_rows(rows: &[Row]) -> Vec<SummaryRow> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut groups: BTreeMap<(String, String), Vec<&Row>> = BTreeMap::new();
    let mut source: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.error.is_none()) {
        let key = (r.target.clone(), r.strategy.clone());
        if !order.contains(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(r);
        if r.strategy == "source" {
            source.insert((r.target.clone(), r.kernel.clone()), r.spills + r.reloads);
        }
    }
    // Group by target first, keeping the strategies' order.
    let mut targets: Vec<String> = Vec::new();
    for (t, _) in &order {
        if !targets.contains(t) {
            targets.push(t.clone());
        }
    }
    let mut out = Vec::new();
    for t in &targets {
        for key in order.iter().filter(|(target, _)| target == t) {
            let group = &groups[key];
            let field = |f: fn(&Row) -> usize| group.iter().map(|r| f(r)).collect::<Vec<_>>();
            let (spills, reloads, insts) = (
                field(|r| r.spills),
                field(|r| r.reloads),
                field(|r| r.insts),
            );
            let (mut wins, mut ties, mut losses) = (0, 0, 0);
            for r in group {
                if let Some(&base) = source.get(&(r.target.clone(), r.kernel.clone())) {
                    let cost = r.spills + r.reloads;
                    match cost.cmp(&base) {
                        std::cmp::Ordering::Less => wins += 1,
                        std::cmp::Ordering::Equal => ties += 1,
                        std::cmp::Ordering::Greater => losses += 1,
                    }
                }
            }
            out.push(SummaryRow {
                target: key.0.clone(),
                strategy: key.1.clone(),
                kernels: group.len(),
                spills: spills.iter().sum(),
                spills_geomean: round2(geomean(&spills)),
                reloads: reloads.iter().sum(),
                reloads_geomean: round2(geomean(&reloads)),
                insts: insts.iter().sum(),
                insts_geomean: round2(geomean(&insts)),
                wins,
                ties,
                losses,
            });
        }
    }
    out
}

/// The summary as one table per target (Markdown when `format` is Markdown, CSV for CSV).
pub fn summary(rows: &[Row], format: Format) -> String {
    let summary = summary_rows(rows);
    let mut out = String::new();
    if format == Format::Csv {
        out.push_str("target,strategy,kernels,spills,spills_geomean,reloads,reloads_geomean,insts,insts_geomean,wins,ties,losses\n");
        for s in &summary {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                s.target,
                s.strategy,
                s.kernels,
                s.spills,
                s.spills_geomean,
                s.reloads,
                s.reloads_geomean,
                s.insts,
                s.insts_geomean,
                s.wins,
                s.ties,
                s.losses
            );
        }
        return out.trim_end().to_string();
    }
    let md = format == Format::Markdown;
    let mut target = String::new();
    for s in &summary {
        if s.target != target {
            target = s.target.clone();
            if md {
                let _ = writeln!(out, "\n**{target}**\n");
                let _ = writeln!(
                    out,
                    "| strategy | kernels | spills (sum / gmean) | reloads (sum / gmean) | insts (sum / gmean) | vs source W/T/L |"
                );
                let _ = writeln!(out, "| --- | ---: | ---: | ---: | ---: | ---: |");
            } else {
                let _ = writeln!(out, "\n{target}");
                let header = [
                    "strategy",
                    "kernels",
                    "spills sum/gmean",
                    "reloads sum/gmean",
                    "insts sum/gmean",
                    "W/T/L vs source",
                ];
                let _ = writeln!(out, "{}", text_line(header.map(str::to_string)));
            }
        }
        let sg = |sum: usize, g: f64| format!("{sum} / {g:.2}");
        let cells = [
            s.strategy.clone(),
            s.kernels.to_string(),
            sg(s.spills, s.spills_geomean),
            sg(s.reloads, s.reloads_geomean),
            sg(s.insts, s.insts_geomean),
            format!("{}/{}/{}", s.wins, s.ties, s.losses),
        ];
        if md {
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        } else {
            let _ = writeln!(out, "{}", text_line(cells));
        }
    }
    out.trim().to_string()
}

/// A line of the text summary: the strategy left-aligned, the figures right-aligned.
fn text_line([strategy, kernels, spills, reloads, insts, wtl]: [String; 6]) -> String {
    format!("  {strategy:<14} {kernels:>7} {spills:>18} {reloads:>18} {insts:>20} {wtl:>14}")
}
