//! The `--validate-model` table and JSON document, and which model leads on this CPU.

use super::bigint::{BigKernel, SAMPLES};
use super::loops::is_ordinary_loop;
use super::quiet::{Contention, QUIET_BUDGET, QUIET_MARGIN, QUIET_WAIT};
use super::{Figure, MESSAGE, SINGLE_HASHES, ValidationRow};
use crate::command::Budgets;
use crate::text_table::{column_widths, join_cells};
use serde_json::json;
use std::fmt::Write as _;

/// `(static − measured) ÷ measured`, when there is a positive measurement.
pub(super) fn error(figure: f64, measured: Option<f64>) -> Option<f64> {
    measured.filter(|m| *m > 0.0).map(|m| (figure - m) / m)
}

fn model_names(rows: &[ValidationRow]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in rows {
        for f in &r.figures {
            if !names.contains(&f.model) {
                names.push(f.model.clone());
            }
        }
    }
    names
}

/// This CPU as `/proc/cpuinfo` names it: vendor, family, model, and whether it advertises
/// a Golden Cove server feature (AMX or AVX512-FP16).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct CpuId {
    vendor: String,
    family: u32,
    model: u32,
    golden_cove_server_features: bool,
}

impl CpuId {
    /// Reads the first processor's identification.
    fn of_host() -> Option<Self> {
        Self::parse(&std::fs::read_to_string("/proc/cpuinfo").ok()?)
    }

    fn parse(cpuinfo: &str) -> Option<Self> {
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let flags = field("flags").unwrap_or_default();
        Some(Self {
            vendor: field("vendor_id")?,
            family: field("cpu family")?.parse().ok()?,
            model: field("model")?.parse().ok()?,
            golden_cove_server_features: flags
                .split_whitespace()
                .any(|f| matches!(f, "amx_tile" | "avx512_fp16")),
        })
    }

    /// The schedlab table of this core's family, which `report --mca` leads with for it:
    /// Intel Sapphire/Emerald Rapids (family 6 models 143, 207) and the Golden/Raptor Cove
    /// client cores `sapphirerapids`, and so is any Intel core with AMX or AVX512-FP16 (only
    /// Golden Cove server cores have them; some hypervisors report another model number, e.g.
    /// 167 on an AMX host of this machine kind); other Intel cores `skylake`; AMD Zen 3
    /// (family 25, models 0–15 and 32–95) `znver3`, Zen 4 (other family-25 models) and Zen 5
    /// (family 26) `znver4`.
    fn lead_model(&self) -> Option<&'static str> {
        match (self.vendor.as_str(), self.family, self.model) {
            ("GenuineIntel", 6, 143 | 207 | 151 | 154 | 183 | 186 | 191) => Some("sapphirerapids"),
            ("GenuineIntel", 6, _) if self.golden_cove_server_features => Some("sapphirerapids"),
            ("GenuineIntel", 6, _) => Some("skylake"),
            ("AuthenticAMD", 25, 0..=15 | 32..=95) => Some("znver3"),
            ("AuthenticAMD", 25 | 26, _) => Some("znver4"),
            _ => None,
        }
    }
}

/// A goal for the lead model over a set of rows.
#[derive(Clone, Copy, Debug)]
struct Goal {
    /// The issue that set it.
    issue: u32,
    /// The largest |relative error| it allows.
    within: f64,
    /// Whether it is about the ordinary loops (else the kernels).
    ordinary_loops: bool,
}

/// Issue 12: on the kernels (MD5, SHA-256, BigInteger), the lead model within ±5 %.
const KERNEL_GOAL: Goal = Goal {
    issue: 12,
    within: 0.05,
    ordinary_loops: false,
};

/// Issue 32: on the ordinary loops (code the model was not tuned on), within ±10 %.
const LOOP_GOAL: Goal = Goal {
    issue: 32,
    within: 0.10,
    ordinary_loops: true,
};

/// The lead model for this CPU and how it fares over the rows of a goal with both figures.
struct LeadSummary {
    /// `schedlab-sim/<core>` (what `report --mca` leads with on the x86 cores, which all have
    /// a simulation), else `schedlab/<core>`.
    model: String,
    /// The largest |relative error|.
    worst: Option<f64>,
    /// Rows within the goal and rows with both figures.
    within_goal: (usize, usize),
}

/// The lead model's name, its largest |error| and how many of the goal's rows meet it.
fn lead_summary(rows: &[ValidationRow], goal: Goal) -> Option<LeadSummary> {
    let rows: Vec<&ValidationRow> = rows
        .iter()
        .filter(|r| is_ordinary_loop(r.kernel) == goal.ordinary_loops)
        .collect();
    let core = CpuId::of_host()?.lead_model()?;
    let sim = format!("schedlab-sim/{core}");
    let has_sim = rows
        .iter()
        .any(|r| r.figures.iter().any(|f| f.model == sim && f.cycles.is_ok()));
    let model = if has_sim {
        sim
    } else {
        format!("schedlab/{core}")
    };
    let errors: Vec<f64> = rows
        .iter()
        .filter_map(|r| {
            let f = r.figures.iter().find(|f| f.model == model)?;
            error(*f.cycles.as_ref().ok()?, r.measured).map(f64::abs)
        })
        .collect();
    Some(LeadSummary {
        model,
        worst: errors.iter().copied().reduce(f64::max),
        within_goal: (
            errors.iter().filter(|e| **e <= goal.within + 1e-12).count(),
            errors.len(),
        ),
    })
}

/// The `--format json` document.
pub(super) fn json_doc(
    rows: &[ValidationRow],
    clock: Option<f64>,
    budgets: Budgets,
    contention: &Contention,
) -> String {
    let json_rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let models: Vec<serde_json::Value> = r
                .figures
                .iter()
                .map(|f| match &f.cycles {
                    Ok(c) => json!({
                        "model": f.model,
                        "cycles_per_iteration": c,
                        "relative_error": error(*c, r.measured),
                        "binding": f.binding,
                    }),
                    Err(e) => json!({ "model": f.model, "error": e }),
                })
                .collect();
            let fit = r.fit.as_ref().map(|f| {
                json!({
                    "sizes_ints": f.sizes,
                    "cycles_per_call": f.cycles_per_call,
                    "cycles_per_word_outside_hot_loop": f.per_word,
                    "fixed_cycles_per_call": f.fixed,
                    "hot_loop_share": f.hot_loop_share,
                })
            });
            json!({
                "kernel": r.kernel,
                "strategy": r.strategy,
                "target": "x86_64",
                "iteration": r.iteration,
                "measured_cycles_per_iteration": r.measured,
                "fit": fit,
                "loop_spills": r.loop_spills,
                "loop_reloads": r.loop_reloads,
                "models": models,
            })
        })
        .collect();
    let lead = lead_summary(rows, KERNEL_GOAL);
    let lead_loops = lead_summary(rows, LOOP_GOAL);
    let doc = json!({
        "meta": {
            "cpu": super::super::cpu_model(),
            "clock_ghz": clock,
            "contention": {
                "alu_probe_readings": contention.readings,
                "quiet_margin": QUIET_MARGIN,
                "quiet_figure": contention.quiet_figure(),
                "max_wait_seconds_per_row": QUIET_WAIT.as_secs(),
                "max_wait_seconds_per_run": QUIET_BUDGET.as_secs(),
                "row_samples_started_quiet": contention.quiet_rows,
                "row_samples_started_disturbed": contention.disturbed_rows,
                "seconds_waited": contention.waited.as_secs_f64(),
            },
            "reps": budgets.reps,
            "md5_message_bytes": MESSAGE,
            "bigint_samples_per_size": SAMPLES,
            "lead_model": lead.as_ref().map(|l| l.model.clone()),
            "lead_max_abs_relative_error": lead.as_ref().and_then(|l| l.worst),
            "lead_rows_within_5_percent": lead.as_ref().map(|l| l.within_goal.0),
            "lead_rows_compared": lead.as_ref().map(|l| l.within_goal.1),
            "lead_loops_max_abs_relative_error": lead_loops.as_ref().and_then(|l| l.worst),
            "lead_loop_rows_within_10_percent": lead_loops.as_ref().map(|l| l.within_goal.0),
            "lead_loop_rows_compared": lead_loops.as_ref().map(|l| l.within_goal.1),
        },
        "rows": json_rows,
    });
    format!(
        "{}\n",
        serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    )
}

/// Cycles with two decimals under 10 (the BigInteger loops' few cycles), else one.
fn cycles_text(c: f64) -> String {
    if c < 10.0 {
        format!("{c:.2}")
    } else {
        format!("{c:.1}")
    }
}

/// `share` column: the hot loop's share of a call at the largest size (MD5: `-`).
fn share_cell(r: &ValidationRow) -> String {
    r.fit
        .as_ref()
        .and_then(|f| f.hot_loop_share.last())
        .map_or("-".to_string(), |s| format!("{:.0}%", s * 100.0))
}

/// The table (`--format table` or `markdown`).
pub(super) fn table(
    rows: &[ValidationRow],
    clock: Option<f64>,
    budgets: Budgets,
    contention: &Contention,
    markdown: bool,
) -> String {
    let models = model_names(rows);
    let mut header = vec![
        "kernel".to_string(),
        "strategy".to_string(),
        "loop sp/rl".to_string(),
        "measured".to_string(),
        "share".to_string(),
    ];
    header.extend(models.iter().cloned());
    let mut body: Vec<Vec<String>> = Vec::new();
    for r in rows {
        let mut cells = vec![
            r.kernel.to_string(),
            r.strategy.clone(),
            match (r.loop_spills, r.loop_reloads) {
                (Some(s), Some(l)) => format!("{s}/{l}"),
                _ => "-".to_string(),
            },
            r.measured.map_or("-".to_string(), cycles_text),
            share_cell(r),
        ];
        for name in &models {
            let cell = match r.figures.iter().find(|f| &f.model == name) {
                Some(Figure { cycles: Ok(c), .. }) => match error(*c, r.measured) {
                    Some(e) => format!("{} ({:+.1}%)", cycles_text(*c), e * 100.0),
                    None => cycles_text(*c),
                },
                Some(Figure { cycles: Err(_), .. }) => "n/a".to_string(),
                None => "-".to_string(),
            };
            cells.push(cell);
        }
        body.push(cells);
    }
    let widths = column_widths(&header, &body);
    let line = |cols: &[String]| -> String {
        let padded: Vec<String> = cols
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        join_cells(&padded, markdown)
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Cycles per hot-loop iteration, x86_64, at an effective clock of {} GHz (median of the \
         probes); medians over {} repetitions; static figures with their error against measured.",
        clock.map_or("?".to_string(), |c| format!("{c:.2}")),
        budgets.reps,
    );
    out.push('\n');
    let _ = writeln!(out, "{}", contention.summary());
    out.push('\n');
    let _ = writeln!(
        out,
        "- md5: {}; measured = the fastest of {SINGLE_HASHES} single 1 MiB hashes per \
         repetition, ÷ 16 385 blocks.",
        super::MD5_ITERATION
    );
    let _ = writeln!(
        out,
        "- sha256: {}; measured = the fastest of {SINGLE_HASHES} single 1 MiB hashes per \
         repetition, ÷ 16 385 blocks.",
        super::sha256::SHA256_ITERATION
    );
    for kernel in BigKernel::ALL {
        let sizes: Vec<String> = kernel.sizes().iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "- {}: {}; measured = α of the fit α·iters(n) + β·n + γ to cycles per call at n = {} \
             ints (the fastest of {SAMPLES} ≈50 µs batches per size and repetition); share = \
             α·iters(n) ÷ cycles per call at the largest n{}.",
            kernel.name(),
            kernel.iteration(),
            sizes.join(", "),
            share_range(rows, kernel.name())
        );
    }
    let _ = writeln!(out, "{}", super::loops::method_line());
    out.push('\n');
    let _ = writeln!(out, "{}", line(&header));
    if markdown {
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w.max(3))).collect();
        let _ = writeln!(out, "| {} |", rule.join(" | "));
    }
    for r in &body {
        let _ = writeln!(out, "{}", line(r));
    }
    out.push('\n');
    for goal in [KERNEL_GOAL, LOOP_GOAL] {
        let _ = writeln!(out, "{}", lead_line(rows, goal));
    }
    out.push('\n');
    out.push_str(&error_ranges(rows, &models));
    let mut problems: Vec<String> = Vec::new();
    for r in rows {
        for f in &r.figures {
            if let Err(e) = &f.cycles {
                let p = format!("{}: {e}", f.model);
                if !problems.contains(&p) {
                    problems.push(p);
                }
            }
        }
    }
    if !problems.is_empty() {
        out.push_str("\nn/a:\n");
        for p in problems {
            let _ = writeln!(out, "- {p}");
        }
    }
    out
}

/// How the lead model fares on `goal`'s rows, as a sentence.
fn lead_line(rows: &[ValidationRow], goal: Goal) -> String {
    let what = if goal.ordinary_loops {
        "the ordinary loops"
    } else {
        "the kernels"
    };
    let percent = goal.within * 100.0;
    match lead_summary(rows, goal) {
        Some(LeadSummary {
            model,
            worst: Some(worst),
            within_goal: (within, compared),
        }) => format!(
            "Lead model for this CPU on {what}: {model}; largest |error| over their rows: \
             {:.1} % (goal of issue {}: {percent:.0} %); {within} of {compared} rows within \
             {percent:.0} %.",
            worst * 100.0,
            goal.issue
        ),
        Some(LeadSummary { model, .. }) => {
            format!("Lead model for this CPU on {what}: {model}; no row has both figures.")
        }
        None => "This CPU is not one a schedlab table stands for (see notes/design.md).".into(),
    }
}

/// Per model, the range of its errors over the rows of each kernel and over all of them:
/// what a foreign target's column can be judged by (its x86 counterpart, same model code).
fn error_ranges(rows: &[ValidationRow], models: &[String]) -> String {
    let range = |name: &str, kernel: Option<&str>| -> Option<(f64, f64)> {
        rows.iter()
            .filter(|r| kernel.is_none_or(|k| r.kernel == k))
            .filter_map(|r| {
                let f = r.figures.iter().find(|f| f.model == name)?;
                error(*f.cycles.as_ref().ok()?, r.measured)
            })
            .fold(None, |acc, e| match acc {
                None => Some((e, e)),
                Some((lo, hi)) => Some((lo.min(e), hi.max(e))),
            })
    };
    let fmt = |r: Option<(f64, f64)>| {
        r.map_or("-".to_string(), |(lo, hi)| {
            format!("{:+.1} … {:+.1} %", lo * 100.0, hi * 100.0)
        })
    };
    let mut kernels: Vec<&str> = Vec::new();
    for r in rows {
        if !kernels.contains(&r.kernel) {
            kernels.push(r.kernel);
        }
    }
    let mut out = String::from("Error range per model (lowest … highest over the strategies):\n\n");
    for name in models {
        let per_kernel: Vec<String> = kernels
            .iter()
            .map(|k| format!("{k} {}", fmt(range(name, Some(k)))))
            .collect();
        let _ = writeln!(
            out,
            "- {name}: all {}; {}",
            fmt(range(name, None)),
            per_kernel.join(", ")
        );
    }
    out
}

/// `; per size over the strategies: 16 ints 40–45 %, …` for `kernel`'s rows, or nothing.
fn share_range(rows: &[ValidationRow], kernel: &str) -> String {
    let fits: Vec<_> = rows
        .iter()
        .filter(|r| r.kernel == kernel)
        .filter_map(|r| r.fit.as_ref())
        .collect();
    let Some(first) = fits.first() else {
        return String::new();
    };
    let parts: Vec<String> = first
        .sizes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let shares = fits.iter().filter_map(|f| f.hot_loop_share.get(i).copied());
            let (lo, hi) = shares.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
                (lo.min(s), hi.max(s))
            });
            format!("{n}: {:.0}–{:.0} %", lo * 100.0, hi * 100.0)
        })
        .collect();
    format!(" (per n over the strategies: {})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_relative_to_measured() {
        assert_eq!(error(110.0, Some(100.0)), Some(0.1));
        assert_eq!(error(90.0, None), None);
        assert_eq!(error(90.0, Some(0.0)), None);
    }

    #[test]
    fn the_lead_model_follows_the_core_family() {
        let cpu = |vendor: &str, family: u32, model: u32| {
            CpuId::parse(&format!(
                "processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\n\
                 model\t\t: {model}\nmodel name\t: x\n"
            ))
            .expect("parses")
        };
        assert_eq!(
            cpu("GenuineIntel", 6, 207).lead_model(),
            Some("sapphirerapids")
        );
        assert_eq!(cpu("GenuineIntel", 6, 85).lead_model(), Some("skylake"));
        let amx_host = CpuId::parse(
            "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 167\n\
             flags\t\t: fpu avx512f amx_bf16 avx512_fp16 amx_tile\n",
        )
        .expect("parses");
        assert_eq!(amx_host.lead_model(), Some("sapphirerapids"));
        assert_eq!(cpu("GenuineIntel", 6, 167).lead_model(), Some("skylake"));
        assert_eq!(cpu("AuthenticAMD", 25, 1).lead_model(), Some("znver3"));
        assert_eq!(cpu("AuthenticAMD", 25, 17).lead_model(), Some("znver4"));
        assert_eq!(cpu("AuthenticAMD", 26, 2).lead_model(), Some("znver4"));
        assert_eq!(cpu("HygonGenuine", 24, 1).lead_model(), None);
        assert_eq!(CpuId::parse("garbage"), None);
    }
}
