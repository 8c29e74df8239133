//! `schedlab bench --validate-model`: measured cycles per hot-loop iteration beside every
//! static model's figure for the same code, with the relative error.
//!
//! **Measured.** Each strategy's MD5 (the library's configuration with that strategy, as its
//! JIT compiles it: check-free loop, slow path outlined) hashes a 1 MiB message; one
//! iteration of the hot loop is one 64-byte block, so cycles per iteration = time per hash ×
//! effective clock ÷ blocks per hash (16 385 with the padding block). The effective clock is
//! the bench's add-chain probe ([`super::measure::effective_clock_ghz`]), taken right before
//! each row's hashes in every repetition; rows are timed in a rotated order per repetition. A repetition's sample is the
//! fastest of 25 single hashes (other processes' time slices only ever make a hash slower: the
//! same reasoning as the clock probe's), and the median over repetitions is reported.
//!
//! **Static.** The same configuration compiled for x86_64 (`x86-64-v3`, the host JIT uses the
//! host's features: BMI1/2 on the machines this ran on, so the same instructions) and costed by
//! schedlab's model (`max(recurrence, resource)` per core, [`schedlab_backend::cost`]) and by
//! llvm-mca on each CPU model it offers. Error = (static − measured) ÷ measured.
//!
//! Only MD5 is validated: the BigInteger kernels' hot loops are the predicated `mulAdd` loops,
//! whose static figure (the largest natural loop: the checked fallback, or for `squareToLen`
//! the outer loop with the inner one nested) is not one iteration of the loop that runs, so
//! a per-iteration comparison would not be like for like (see `notes/design.md`).

use super::impls::{self, Imp, RustImpl};
use super::{BenchArgs, Budgets, Format, measure, rotated};
use crate::CliError;
use schedlab_backend::Target;
use schedlab_backend::cost::loop_cost;
use schedlab_backend::mca::{mca_cpus, mca_cycles};
use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_md5::Md5Builder;
use serde_json::json;
use std::fmt::Write as _;

/// Message size timed: large enough that the per-hash overhead is well under 1 %.
const MESSAGE: usize = 1 << 20;
/// Calls of the clock probe (7 probes each) before each row's hashes; the fastest counts.
const PROBE_ROUNDS: usize = 4;
/// Single hashes per repetition and row; the fastest counts.
const SINGLE_HASHES: usize = 25;
/// 64-byte blocks per hash of [`MESSAGE`] bytes, padding block included.
const BLOCKS: f64 = (MESSAGE / 64 + 1) as f64;

/// One static model's figure for a row.
#[derive(Clone, Debug)]
struct Figure {
    /// `schedlab/<cpu>` or `llvm-mca/<cpu>`.
    model: String,
    /// Cycles per iteration, or why there is none.
    cycles: Result<f64, String>,
}

/// One strategy of one kernel.
#[derive(Clone, Debug)]
struct ValidationRow {
    kernel: &'static str,
    strategy: String,
    measured: Option<f64>,
    loop_spills: Option<usize>,
    loop_reloads: Option<usize>,
    figures: Vec<Figure>,
}

/// Runs `schedlab bench --validate-model`.
pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    if Target::host() != Some(Target::X86_64) {
        return Err(CliError::failure(
            "--validate-model measures x86_64 code and needs an x86_64 host",
        ));
    }
    let budgets = Budgets::new(args.quick, args.reps)?;
    let strategies: Vec<&str> = schedlab_passes::sched::strategy_names()
        .iter()
        .copied()
        .filter(|s| *s != "shuffle")
        .collect();
    let default = impls::library_default();
    let configs: Vec<PipelineConfig> = strategies
        .iter()
        .map(|s| PipelineConfig {
            strategy: (*s).to_string(),
            ..default.clone()
        })
        .collect();
    let mut rows: Vec<ValidationRow> = strategies
        .iter()
        .zip(&configs)
        .map(|(s, c)| static_row(s, c))
        .collect();
    let measured = measure_md5(&strategies, &configs, budgets)?;
    for (row, m) in rows.iter_mut().zip(measured.per_strategy) {
        row.measured = m;
    }
    let text = match args.format {
        Format::Json => json_doc(&rows, measured.clock_ghz, budgets),
        Format::Markdown => table(&rows, measured.clock_ghz, budgets, true),
        Format::Table => table(&rows, measured.clock_ghz, budgets, false),
    };
    print!("{text}");
    Ok(())
}

/// Static figures of one strategy's MD5 as the library's JIT compiles it.
fn static_row(strategy: &str, config: &PipelineConfig) -> ValidationRow {
    let target = Target::X86_64;
    let compiled = pipeline::run_with(
        schedlab_kernels::md5::compress_multi_block(),
        target,
        config,
        &StageOptions::report_lazy(target),
    )
    .map(|a| a.compiled)
    .map_err(|e| e.to_string());
    let mut figures = Vec::new();
    let mut spills = (None, None);
    match compiled.as_ref().map(loop_cost) {
        Ok(Ok(cost)) => {
            spills = (Some(cost.spills.spills), Some(cost.spills.reloads));
            for b in &cost.bounds {
                figures.push(Figure {
                    model: format!("schedlab/{}", b.cpu),
                    cycles: Ok(b.bound()),
                });
            }
        }
        Ok(Err(e)) => figures.push(Figure {
            model: "schedlab".to_string(),
            cycles: Err(e.to_string()),
        }),
        Err(e) => figures.push(Figure {
            model: "schedlab".to_string(),
            cycles: Err(e.clone()),
        }),
    }
    for cpu in mca_cpus(target) {
        let cycles = match &compiled {
            Ok(c) => mca_cycles(c, cpu).map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        };
        figures.push(Figure {
            model: format!("llvm-mca/{cpu}"),
            cycles,
        });
    }
    ValidationRow {
        kernel: "md5",
        strategy: strategy.to_string(),
        measured: None,
        loop_spills: spills.0,
        loop_reloads: spills.1,
        figures,
    }
}

struct Measured {
    per_strategy: Vec<Option<f64>>,
    clock_ghz: Option<f64>,
}

/// Median cycles per block of each configuration's JIT-compiled MD5 on a 1 MiB message.
fn measure_md5(
    names: &[&str],
    configs: &[PipelineConfig],
    budgets: Budgets,
) -> Result<Measured, CliError> {
    let mut engines = Vec::new();
    for (name, config) in names.iter().zip(configs) {
        let engine = Md5Builder::new()
            .config(config.clone())
            .build()
            .map_err(|e| CliError::failure(format!("cannot compile {name}: {e}")))?;
        engines.push(RustImpl {
            name: (*name).to_string(),
            kind: impls::Kind::Schedlab,
            imp: Imp::Schedlab(engine),
        });
    }
    let data = impls::buffer(MESSAGE);
    let reference = impls::md5_crate_digest(&data);
    for e in &engines {
        if e.digest(&data) != reference {
            return Err(CliError::failure(format!(
                "{} computed a wrong digest of {MESSAGE} bytes",
                e.name
            )));
        }
    }
    // Warm-up (the core's clock ramps up over the first tens of milliseconds of work).
    for e in &engines {
        measure::calibrate(e, &data, budgets.sample);
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); engines.len()];
    let mut clocks = Vec::new();
    for rep in 0..budgets.reps as usize {
        for k in 0..engines.len() {
            let i = rotated(k, rep, engines.len());
            // The clock right before the row's hashes (boost drifts within a repetition), as
            // the fastest of 4 × 7 probes: as many chances to run undisturbed as the hashes get,
            // or a disturbed probe would read the clock low and the cycles with it.
            let Some(ghz) = (0..PROBE_ROUNDS)
                .filter_map(|_| measure::effective_clock_ghz())
                .reduce(f64::max)
            else {
                return Err(CliError::failure("no effective-clock probe on this host"));
            };
            clocks.push(ghz);
            // The fastest of several single hashes (≈1.6 ms each): on a shared machine a
            // longer sample is always cut by other processes' time slices, which only ever
            // make a sample slower; the clock probe is taken the same way.
            let fastest = (0..SINGLE_HASHES)
                .map(|_| measure::time_hashes(&engines[i], &data, 1).as_secs_f64())
                .fold(f64::INFINITY, f64::min);
            samples[i].push(fastest * ghz * 1e9 / BLOCKS);
        }
    }
    Ok(Measured {
        per_strategy: samples.iter().map(|s| measure::median(s)).collect(),
        clock_ghz: measure::median(&clocks),
    })
}

fn error(figure: f64, measured: Option<f64>) -> Option<f64> {
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

fn json_doc(rows: &[ValidationRow], clock: Option<f64>, budgets: Budgets) -> String {
    let rows: Vec<serde_json::Value> = rows
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
                    }),
                    Err(e) => json!({ "model": f.model, "error": e }),
                })
                .collect();
            json!({
                "kernel": r.kernel,
                "strategy": r.strategy,
                "target": "x86_64",
                "measured_cycles_per_iteration": r.measured,
                "loop_spills": r.loop_spills,
                "loop_reloads": r.loop_reloads,
                "models": models,
            })
        })
        .collect();
    let doc = json!({
        "meta": {
            "cpu": super::cpu_model(),
            "clock_ghz": clock,
            "reps": budgets.reps,
            "sample_ms": budgets.sample.as_secs_f64() * 1e3,
            "message_bytes": MESSAGE,
            "iteration": "one 64-byte block (the hot loop's body)",
        },
        "rows": rows,
    });
    format!(
        "{}\n",
        serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    )
}

fn table(rows: &[ValidationRow], clock: Option<f64>, budgets: Budgets, markdown: bool) -> String {
    let models = model_names(rows);
    let mut header = vec![
        "kernel".to_string(),
        "strategy".to_string(),
        "loop sp/rl".to_string(),
        "measured".to_string(),
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
            r.measured.map_or("-".to_string(), |m| format!("{m:.1}")),
        ];
        for name in &models {
            let cell = match r.figures.iter().find(|f| &f.model == name) {
                Some(Figure { cycles: Ok(c), .. }) => match error(*c, r.measured) {
                    Some(e) => format!("{c:.1} ({:+.1}%)", e * 100.0),
                    None => format!("{c:.1}"),
                },
                Some(Figure { cycles: Err(_), .. }) => "n/a".to_string(),
                None => "-".to_string(),
            };
            cells.push(cell);
        }
        body.push(cells);
    }
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &body {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cols: &[String]| -> String {
        let padded: Vec<String> = cols
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c:<w$}"))
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
        "Cycles per hot-loop iteration (MD5: one 64-byte block), x86_64; measured = median over {} \
         repetitions of the fastest of {SINGLE_HASHES} single 1 MiB hashes, at an effective clock \
         of {} GHz (median of the probes); static figures with their error against measured.",
        budgets.reps,
        clock.map_or("?".to_string(), |c| format!("{c:.2}"))
    );
    out.push('\n');
    let _ = writeln!(out, "{}", line(&header));
    if markdown {
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w.max(3))).collect();
        let _ = writeln!(out, "| {} |", rule.join(" | "));
    }
    for r in &body {
        let _ = writeln!(out, "{}", line(r));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_relative_to_measured() {
        assert_eq!(error(110.0, Some(100.0)), Some(0.1));
        assert_eq!(error(90.0, None), None);
        assert_eq!(error(90.0, Some(0.0)), None);
    }
}
