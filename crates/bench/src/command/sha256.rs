//! `schedlab bench --kernel sha256`: schedlab's `sha256` kernel per scheduling strategy against
//! OpenSSL (with and without its SHA extensions), `sha2` (default and portable backend) and
//! HotSpot (with and without `UseSHA256Intrinsics`), in one run of the one measurement loop.
//! Ratios are to the best schedlab row of the same size, taken within each repetition.
//! The rows live in [`crate::sha256`]; this file chooses them and prints.

use super::output::{ReportedBudgets, json_text, quick_note, size_label, table};
use super::{BenchArgs, Budgets, Format, parse_sizes};
use crate::CliError;
use crate::Samples;
use crate::host::{cpu_model, load_average, progress_bar};
use crate::md5::{Kind, buffer};
use crate::sha256::{
    self as rows_mod, ChildContext, ChildRow, HOTSPOT_NO_INTRINSIC, OPENSSL, OPENSSL_MASKED,
    SHA2_SOFT,
};
use crate::stats::{pearson, ranks};
use serde_json::{Value, json};
use std::time::Duration;

/// The sizes timed unless `--size` says otherwise.
const DEFAULT_SIZES: &str = "64,1k,16k,1m";
/// The size the goals are stated at.
const GOAL_SIZE: usize = 1 << 20;

/// Runs the hidden worker of the OpenSSL-masked row: `--sha256-worker openssl SIZES WARMUP
/// BUDGET` times OpenSSL in this process (whose `OPENSSL_ia32cap` the parent set) and prints
/// the child protocol.
pub fn worker(name: &str, input: &[String]) -> Result<(), CliError> {
    let [sizes, _warmup, budget] = input else {
        return Err(CliError::usage(
            "--sha256-worker takes <size,size,...> <warm-up ms> <budget ms>",
        ));
    };
    let sizes: Vec<usize> = sizes
        .split(',')
        .map(|s| s.trim().parse().ok())
        .collect::<Option<_>>()
        .ok_or_else(|| CliError::usage(format!("bad worker sizes `{sizes}`")))?;
    let budget: u64 = budget
        .parse()
        .map_err(|_| CliError::usage(format!("bad worker budget `{budget}`")))?;
    let rows = rows_mod::rows(&[], |n| n == name).map_err(CliError::failure)?;
    let row = rows.first().ok_or_else(|| {
        CliError::usage(format!(
            "unknown worker `{name}`; valid: {OPENSSL}, {}",
            rows_mod::SHA2
        ))
    })?;
    let mask = std::env::var("OPENSSL_ia32cap").unwrap_or_else(|_| "unset".into());
    let info = format!("OPENSSL_ia32cap={mask}");
    let text = rows_mod::worker_output(row, &info, &sizes, Duration::from_millis(budget))
        .map_err(CliError::failure)?;
    print!("{text}");
    Ok(())
}

/// One row of the report, in-process or not.
struct Reported {
    name: String,
    kind: Kind,
    strategy: Option<String>,
    /// Whole-function spills and reloads (schedlab rows).
    spills: Option<(usize, usize)>,
    /// Spills and reloads per hot-loop iteration (schedlab rows), or why absent.
    loop_spills: Option<Result<(usize, usize), String>>,
    note: Option<String>,
    absent: Option<String>,
    warning: Option<String>,
}

/// Every row name `--impl` accepts.
fn valid_names(strategies: &[String]) -> Vec<String> {
    let mut names: Vec<String> = strategies
        .iter()
        .map(|s| rows_mod::schedlab_row_name(s))
        .collect();
    if let Some(first) = strategies.first() {
        names.push(rows_mod::w_in_memory_row_name(first));
    }
    names.extend(
        [
            OPENSSL,
            rows_mod::SHA2,
            OPENSSL_MASKED,
            SHA2_SOFT,
            rows_mod::HOTSPOT_INTRINSIC,
            HOTSPOT_NO_INTRINSIC,
            rows_mod::REFERENCE_SHA_NI,
        ]
        .map(String::from),
    );
    names
}

/// Runs `schedlab bench --kernel sha256`.
pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    if let Some(name) = &args.sha256_worker {
        return worker(name, &args.worker_input);
    }
    if args.callgrind || args.plot.is_some() {
        return Err(CliError::usage(
            "--callgrind and --plot are not available for --kernel sha256",
        ));
    }
    let sizes = parse_sizes(args.size.as_deref().unwrap_or(DEFAULT_SIZES))?;
    let budgets = Budgets::new(args.quick, args.reps)?;
    let mut strategies = rows_mod::default_strategies();
    let extra = match &args.strategy {
        Some(names) => schedlab_sources::kernel::strategies(Some(names))?,
        None => Vec::new(),
    };
    for s in &extra {
        if !strategies.contains(s) {
            strategies.push(s.clone());
        }
    }
    let valid = valid_names(&strategies);
    let wanted: Option<Vec<String>> = match &args.impls {
        None => None,
        Some(text) => {
            let names: Vec<String> = text.split(',').map(|s| s.trim().to_string()).collect();
            if let Some(bad) = names.iter().find(|n| !valid.contains(n)) {
                return Err(CliError::usage(format!(
                    "unknown implementation `{bad}`; valid: {}",
                    valid.join(", ")
                )));
            }
            Some(names)
        }
    };
    let default_row = rows_mod::schedlab_row_name(&strategies[0]);
    let keep = |name: &str| {
        name == default_row
            || extra.iter().any(|s| rows_mod::schedlab_row_name(s) == name)
            || wanted.as_ref().is_none_or(|w| w.iter().any(|x| x == name))
    };
    let in_process = rows_mod::rows(&strategies, keep).map_err(CliError::failure)?;
    rows_mod::check_digests(&in_process, &sizes).map_err(CliError::failure)?;

    // The out-of-process rows, and why any of them cannot run.
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failure(format!("cannot locate the schedlab binary: {e}")))?;
    let worker_args: Vec<String> = ["bench", "--kernel", "sha256", "--sha256-worker", OPENSSL]
        .map(String::from)
        .to_vec();
    let mut children: Vec<(ChildRow, Option<String>)> = Vec::new();
    if keep(OPENSSL_MASKED) {
        children.push((rows_mod::openssl_masked_row(&exe, &worker_args), None));
    }
    if keep(SHA2_SOFT) {
        match rows_mod::build_sha2_soft() {
            Ok(program) => children.push((rows_mod::sha2_soft_row(&program), None)),
            Err(e) => children.push((
                rows_mod::sha2_soft_row(std::path::Path::new("sha2-soft-bench")),
                Some(e),
            )),
        }
    }
    let context = ChildContext::prepare(!args.no_java);
    for row in rows_mod::hotspot_rows() {
        if keep(row.name) {
            let absent = context.java_error().map(str::to_string);
            children.push((row, absent));
        }
    }

    let load_start = load_average();
    let runnable = children.iter().filter(|(_, a)| a.is_none()).count();
    let steps = sizes.len() * in_process.len()
        + budgets.reps as usize * (sizes.len() * in_process.len() + runnable);
    let progress = progress_bar(steps as u64, "bench sha256");
    let buffers: Vec<Vec<u8>> = sizes.iter().map(|&s| buffer(s)).collect();
    let mut errors: Vec<Option<String>> = vec![None; children.len()];
    let mut infos: Vec<Option<String>> = vec![None; children.len()];
    let mut wrong_digest = None;
    let mut work = crate::Grid {
        rows: in_process.len(),
        sizes: buffers.len(),
        time: |row: usize, size: usize, n: u64| in_process[row].time(&buffers[size], n),
    };
    let runnable_rows: Vec<usize> = (0..children.len())
        .filter(|&ci| children[ci].1.is_none())
        .collect();
    let samples = crate::run(
        &mut work,
        &budgets.measurement(),
        children.len(),
        &progress,
        |rep, external| {
            let name = |ci: usize| children[ci].0.name;
            crate::run_external_rows(
                rep,
                &runnable_rows,
                &progress,
                name,
                &mut errors,
                |ci, _| {
                    let child = &children[ci].0;
                    let (warmup, budget) = if child.kind == Kind::Jvm {
                        (budgets.jvm_warmup, budgets.jvm_sample)
                    } else {
                        (budgets.sample, budgets.sample)
                    };
                    let run = child.run(&context, &sizes, warmup, budget)?;
                    infos[ci].get_or_insert_with(|| {
                        run.info
                            .iter()
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    });
                    if let Err(e) = rows_mod::check_child_digests(child.name, &run) {
                        wrong_digest.get_or_insert(e);
                    }
                    for s in &run.samples {
                        let Some(si) = sizes.iter().position(|&x| x == s.size) else {
                            continue;
                        };
                        external.record(ci, si, s.size as f64 / (s.mb_per_s * 1e6));
                    }
                    Ok(())
                },
            );
        },
    );
    progress.finish_and_clear();
    if let Some(message) = wrong_digest {
        return Err(CliError::failure(message));
    }

    let mut reported: Vec<Reported> = in_process
        .iter()
        .map(|r| {
            let (spills, loop_spills) = match &r.imp {
                rows_mod::Imp::Schedlab(k) => {
                    (Some((k.spills, k.reloads)), Some(k.loop_spills.clone()))
                }
                _ => (None, None),
            };
            Reported {
                name: r.name.clone(),
                kind: r.kind,
                strategy: r.strategy.clone(),
                spills,
                loop_spills,
                note: None,
                absent: None,
                warning: None,
            }
        })
        .collect();
    for (ci, (child, absent)) in children.iter().enumerate() {
        let row = in_process.len() + ci;
        let none_measured = (0..sizes.len()).all(|si| samples.finite(row, si).is_empty());
        let absent = absent
            .clone()
            .or_else(|| none_measured.then(|| errors[ci].clone().unwrap_or_default()));
        let warning = errors[ci].clone().filter(|_| absent.is_none());
        let note = match &infos[ci] {
            Some(info) => format!("{}; the child reported {info}", child.note),
            None => child.note.clone(),
        };
        reported.push(Reported {
            name: child.name.to_string(),
            kind: child.kind,
            strategy: None,
            spills: None,
            loop_spills: None,
            note: Some(note),
            absent,
            warning,
        });
    }
    let report = Report {
        sizes,
        rows: reported,
        samples,
        default_row,
        budgets: budgets.reported(),
        quick: args.quick,
        cpu: cpu_model(),
        load: (load_start, load_average()),
        host_has_sha: host_has_sha(),
    };
    print!("{}", report.render(args.format));
    Ok(())
}

/// Whether the host CPU has the SHA extensions (the masked OpenSSL row must then be slower).
fn host_has_sha() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("sha")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Everything one run produced, and the figures derived from it.
struct Report {
    sizes: Vec<usize>,
    rows: Vec<Reported>,
    samples: Samples,
    default_row: String,
    budgets: ReportedBudgets,
    quick: bool,
    cpu: Option<String>,
    load: (Option<f64>, Option<f64>),
    host_has_sha: bool,
}

/// A goal of issue 16 and its measured ratio.
struct Goal {
    what: String,
    ratio: Option<f64>,
    goal: f64,
}

impl Report {
    fn index(&self, name: &str) -> Option<usize> {
        self.rows
            .iter()
            .position(|r| r.name == name && r.absent.is_none())
    }

    fn mb_per_s(&self, row: usize, si: usize) -> Option<f64> {
        let size = self.sizes[si] as f64;
        self.samples.median_of(row, si, |s| size / s / 1e6)
    }

    /// The schedlab row with the highest median MB/s at size `si`.
    /// With `except`, among the other *strategies* (rows with a strategy), else among every
    /// schedlab configuration.
    fn best_schedlab(&self, si: usize, except: Option<&str>) -> Option<usize> {
        (0..self.rows.len())
            .filter(|&r| self.rows[r].kind == Kind::Schedlab)
            .filter(|&r| {
                except.is_none_or(|e| self.rows[r].name != e && self.rows[r].strategy.is_some())
            })
            .filter_map(|r| self.mb_per_s(r, si).map(|m| (r, m)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(r, _)| r)
    }

    /// Row's MB/s ÷ the best schedlab row's, median over repetitions.
    fn ratio_to_best(&self, row: usize, si: usize) -> Option<f64> {
        if self.rows[row].absent.is_some() {
            return None;
        }
        let best = self.best_schedlab(si, None)?;
        self.samples.speedup(row, best, si)
    }

    /// The size the goals are read at: 1 MiB if timed, else the largest.
    fn goal_size(&self) -> Option<usize> {
        self.sizes
            .iter()
            .position(|&s| s == GOAL_SIZE)
            .or_else(|| (0..self.sizes.len()).max_by_key(|&i| self.sizes[i]))
    }

    fn goals(&self) -> Vec<Goal> {
        let Some(si) = self.goal_size() else {
            return Vec::new();
        };
        let best = self.best_schedlab(si, None);
        let best_name = best.map_or("—".to_string(), |b| self.rows[b].name.clone());
        let versus = |other: &str| {
            let o = self.index(other)?;
            self.samples.speedup(best?, o, si)
        };
        let mut goals = vec![
            Goal {
                what: format!("best schedlab ({best_name}) ÷ {SHA2_SOFT}"),
                ratio: versus(SHA2_SOFT),
                goal: 1.0,
            },
            Goal {
                what: format!("best schedlab ({best_name}) ÷ {HOTSPOT_NO_INTRINSIC}"),
                ratio: versus(HOTSPOT_NO_INTRINSIC),
                goal: 1.3,
            },
            Goal {
                what: format!("best schedlab ({best_name}) ÷ {OPENSSL_MASKED}"),
                ratio: versus(OPENSSL_MASKED),
                goal: 0.95,
            },
        ];
        let default = self.index(&self.default_row);
        let other = self.best_schedlab(si, Some(&self.default_row));
        if let (Some(d), Some(o)) = (default, other) {
            goals.push(Goal {
                what: format!(
                    "default ({}) ÷ best other strategy ({})",
                    self.default_row, self.rows[o].name
                ),
                ratio: self.samples.speedup(d, o, si),
                goal: 0.98,
            });
        }
        goals
    }

    /// The SHA-NI reference loop's measured cycles per 64-byte block at the goal size (MB/s and
    /// the effective clock of this run) beside llvm-mca's figure for the same loop per core.
    fn reference_check(&self) -> Option<String> {
        let si = self.goal_size()?;
        let row = self.index(rows_mod::REFERENCE_SHA_NI)?;
        let mb_per_s = self.mb_per_s(row, si)?;
        let ghz = self.samples.clock_ghz()?;
        let measured = 64.0 / (mb_per_s * 1e6) * ghz * 1e9;
        let reference = schedlab_cost::reference::REFERENCES
            .iter()
            .find(|r| r.name == "sha256-ni")?;
        let modelled: Vec<String> = reference
            .cpus
            .iter()
            .filter_map(|cpu| {
                let cycles = reference.cycles(cpu).ok()?;
                Some(format!(
                    "{cpu} {cycles:.1} ({:+.1} %)",
                    (cycles - measured) / measured * 100.0
                ))
            })
            .collect();
        Some(format!(
            "{}: measured {measured:.1} cycles per 64-byte block at {} ({ghz:.2} GHz effective); \
             llvm-mca: {}",
            rows_mod::REFERENCE_SHA_NI,
            size_label(self.sizes[si]),
            if modelled.is_empty() {
                "n/a".to_string()
            } else {
                modelled.join(", ")
            }
        ))
    }

    /// OpenSSL ÷ OpenSSL masked at the goal size: > 1 when the mask took effect.
    fn mask_effect(&self) -> Option<f64> {
        let si = self.goal_size()?;
        let (o, m) = (self.index(OPENSSL)?, self.index(OPENSSL_MASKED)?);
        self.samples.speedup(o, m, si)
    }

    /// Whether row `r` is `schedlab/<strategy>` (not a configuration variant).
    fn is_strategy_row(&self, r: usize) -> bool {
        self.rows[r].kind == Kind::Schedlab && self.rows[r].strategy.is_some()
    }

    /// Default ÷ the default with `W` in memory at the goal size, if both were timed.
    fn forwarding_effect(&self) -> Option<(String, usize, f64)> {
        let si = self.goal_size()?;
        let strategy = self.default_row.strip_prefix("schedlab/")?;
        let variant = rows_mod::w_in_memory_row_name(strategy);
        let (d, v) = (self.index(&self.default_row)?, self.index(&variant)?);
        Some((variant, self.sizes[si], self.samples.speedup(d, v, si)?))
    }

    /// (min, max) median MB/s across the schedlab strategy rows at size `si`.
    fn spread(&self, si: usize) -> Option<(f64, f64)> {
        let values: Vec<f64> = (0..self.rows.len())
            .filter(|&r| self.is_strategy_row(r))
            .filter_map(|r| self.mb_per_s(r, si))
            .collect();
        let min = values.iter().copied().reduce(f64::min)?;
        let max = values.iter().copied().reduce(f64::max)?;
        Some((min, max))
    }

    /// Spearman's ρ between the schedlab rows' reloads per hot-loop iteration and their median
    /// MB/s at size `si` (average ranks for ties); `None` with fewer than three rows or no
    /// variation.
    fn reload_speed_correlation(&self, si: usize) -> Option<f64> {
        let pairs: Vec<(f64, f64)> = (0..self.rows.len())
            .filter(|&r| self.is_strategy_row(r))
            .filter_map(|r| {
                let reloads = match &self.rows[r].loop_spills {
                    Some(Ok((_, l))) => *l as f64,
                    _ => return None,
                };
                Some((reloads, self.mb_per_s(r, si)?))
            })
            .collect();
        if pairs.len() < 3 {
            return None;
        }
        let xs = ranks(&pairs.iter().map(|p| p.0).collect::<Vec<_>>());
        let ys = ranks(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
        pearson(&xs, &ys)
    }

    fn spill_spread(&self) -> Option<(usize, usize)> {
        let totals: Vec<usize> = self
            .rows
            .iter()
            .filter(|r| r.strategy.is_some())
            .filter_map(|r| r.spills.map(|(s, l)| s + l))
            .collect();
        Some((*totals.iter().min()?, *totals.iter().max()?))
    }

    fn render(&self, format: Format) -> String {
        match format {
            Format::Json => json_text(&self.json()),
            Format::Table | Format::Markdown => {
                let mut out = self.table(format);
                out.push('\n');
                for line in self.notes() {
                    if format == Format::Markdown {
                        out.push_str("- ");
                    }
                    out.push_str(&line);
                    out.push('\n');
                }
                out
            }
        }
    }

    fn table(&self, format: Format) -> String {
        let mut headers = vec!["impl".to_string(), "kind".to_string()];
        headers.extend(self.sizes.iter().map(|&s| size_label(s)));
        headers.push("spills/reloads".into());
        headers.push("loop sp/rl".into());
        let body: Vec<Vec<String>> = self
            .rows
            .iter()
            .enumerate()
            .map(|(ri, row)| {
                let mark = if row.name == self.default_row {
                    " (default)"
                } else {
                    ""
                };
                let mut line = vec![format!("{}{mark}", row.name), row.kind.as_str().into()];
                for si in 0..self.sizes.len() {
                    let m = self.mb_per_s(ri, si).filter(|_| row.absent.is_none());
                    line.push(match (m, self.ratio_to_best(ri, si)) {
                        (None, _) => "absent".into(),
                        (Some(m), Some(r)) => format!("{m:.1} ({r:.3}×)"),
                        (Some(m), None) => format!("{m:.1}"),
                    });
                }
                line.push(row.spills.map_or("—".into(), |(s, l)| format!("{s}/{l}")));
                line.push(match &row.loop_spills {
                    Some(Ok((s, l))) => format!("{s}/{l}"),
                    Some(Err(_)) => "n/a".into(),
                    None => "—".into(),
                });
                line
            })
            .collect();
        table(&headers, &body, format)
    }

    fn notes(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "MB/s (decimal), median of {} repetitions of {:.0} ms per sample, one thread, \
             one-shot hash including padding; (×) = median over repetitions of the row's MB/s \
             ÷ the best schedlab row's at that size in the same repetition.{}",
            self.budgets.reps,
            self.budgets.sample_ms,
            quick_note(self.quick)
        )];
        lines.push(format!(
            "schedlab/<strategy> = the sha256 kernel JIT-compiled with the pipeline's default \
             configuration and that scheduling strategy (both loops in one function, as the \
             Sha256 library compiles it); {} is the default. spills/reloads: whole function; \
             loop sp/rl: per hot-loop iteration (one 64-byte block).",
            self.default_row
        ));
        for (si, &size) in self.sizes.iter().enumerate() {
            if let Some((lo, hi)) = self.spread(si) {
                lines.push(format!(
                    "spread across strategies at {}: {lo:.1}..{hi:.1} MB/s ({:+.1} %)",
                    size_label(size),
                    (hi / lo - 1.0) * 100.0
                ));
            }
        }
        if let Some((lo, hi)) = self.spill_spread() {
            lines.push(format!(
                "spread of spills + reloads (whole function) across strategies: {lo}..{hi}"
            ));
        }
        if let Some(si) = self.goal_size() {
            let mut ranked: Vec<(f64, String)> = (0..self.rows.len())
                .filter(|&r| self.rows[r].kind == Kind::Schedlab)
                .filter_map(|r| {
                    let m = self.mb_per_s(r, si)?;
                    let row = &self.rows[r];
                    let strategy = row.strategy.as_deref().unwrap_or(&row.name);
                    let loop_figures = match &row.loop_spills {
                        Some(Ok((s, l))) => format!(", loop {s}/{l}"),
                        _ => String::new(),
                    };
                    let whole = row
                        .spills
                        .map_or(String::new(), |(s, l)| format!("spills {s}/{l}"));
                    Some((m, format!("{strategy} {m:.1} ({whole}{loop_figures})")))
                })
                .collect();
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
            if let Some(rho) = self.reload_speed_correlation(si) {
                lines.push(format!(
                    "rank correlation (Spearman) across strategies at {} between reloads per \
                     hot-loop iteration and MB/s: ρ = {rho:.2} (-1: every extra reload costs \
                     speed; near 0: reloads do not predict speed on this core)",
                    size_label(self.sizes[si])
                ));
            }
            let ranked: Vec<String> = ranked.into_iter().map(|(_, s)| s).collect();
            lines.push(format!(
                "strategies at {}, fastest first (MB/s; spills/reloads whole function, per \
                 hot-loop iteration): {}",
                size_label(self.sizes[si]),
                ranked.join("; ")
            ));
            for g in self.goals() {
                lines.push(format!(
                    "goal at {}: {} = {} (goal ≥ {:.2}: {})",
                    size_label(self.sizes[si]),
                    g.what,
                    g.ratio.map_or("n/a".into(), |r| format!("{r:.3}")),
                    g.goal,
                    match g.ratio {
                        Some(r) if r >= g.goal => "met",
                        Some(_) => "not met",
                        None => "not measured",
                    }
                ));
            }
        }
        if let Some((variant, size, r)) = self.forwarding_effect() {
            lines.push(format!(
                "store-to-load forwarding at {}: {} ÷ {variant} = {r:.3}× ({variant}: the same \
                 strategy with --forward-stores off, so `W` stays in memory as in the Java source)",
                size_label(size),
                self.default_row
            ));
        }
        match self.mask_effect() {
            Some(r) => lines.push(format!(
                "mask check: {OPENSSL} ÷ {OPENSSL_MASKED} = {r:.2}×{}",
                if self.host_has_sha && r < 1.2 {
                    " — WARNING: the host has SHA extensions but the masked row is not clearly \
                     slower; the mask may not have taken effect"
                } else if self.host_has_sha {
                    " (the host has SHA extensions: the mask took effect)"
                } else {
                    " (the host has no SHA extensions: both rows run the same code)"
                }
            )),
            None => lines.push(format!("mask check: {OPENSSL_MASKED} not measured")),
        }
        if let Some(line) = self.reference_check() {
            lines.push(line);
        }
        for row in &self.rows {
            lines.extend(super::output::note_lines(
                &row.name,
                row.note.as_deref(),
                row.absent.as_deref(),
                row.warning.as_deref(),
            ));
            if let Some(Err(e)) = &row.loop_spills {
                lines.push(format!("{}: loop sp/rl n/a — {e}.", row.name));
            }
        }
        if self.rows.iter().any(|r| r.kind == Kind::Jvm) {
            lines.push(format!(
                "JVM and child processes: {:.0} ms JVM warm-up, {:.0} ms per size (Rust children: \
                 {:.0} ms calibration + {:.0} ms per size).",
                self.budgets.jvm_warmup_ms,
                self.budgets.jvm_sample_ms,
                self.budgets.sample_ms,
                self.budgets.sample_ms
            ));
        }
        lines.push(format!(
            "machine: {}; load average {} before, {} after; effective clock {} GHz.",
            self.cpu.as_deref().unwrap_or("unknown CPU"),
            super::output::opt(self.load.0, 2),
            super::output::opt(self.load.1, 2),
            super::output::opt(self.samples.clock_ghz(), 2)
        ));
        lines
    }

    fn json(&self) -> Value {
        let mut rows = Vec::new();
        for (ri, row) in self.rows.iter().enumerate() {
            for (si, &size) in self.sizes.iter().enumerate() {
                let measured = row.absent.is_none();
                let size_f = size as f64;
                rows.push(json!({
                    "impl": row.name,
                    "kind": row.kind.as_str(),
                    "strategy": row.strategy,
                    "default": row.name == self.default_row,
                    "size": size,
                    "mb_per_s": if measured { self.mb_per_s(ri, si) } else { None },
                    "ratio_to_best_schedlab": self.ratio_to_best(ri, si),
                    "samples": self.samples.finite(ri, si).into_iter()
                        .map(|s| size_f / s / 1e6).collect::<Vec<f64>>(),
                    "spills": row.spills.map(|s| s.0),
                    "reloads": row.spills.map(|s| s.1),
                    "loop_spills": row.loop_spills.as_ref().and_then(|l| l.as_ref().ok()).map(|l| l.0),
                    "loop_reloads": row.loop_spills.as_ref().and_then(|l| l.as_ref().ok()).map(|l| l.1),
                    "note": row.note,
                    "absent": row.absent,
                    "warning": row.warning,
                }));
            }
        }
        let spread: Vec<Value> = (0..self.sizes.len())
            .filter_map(|si| {
                self.spread(si).map(|(lo, hi)| {
                    json!({ "size": self.sizes[si], "min_mb_per_s": lo, "max_mb_per_s": hi })
                })
            })
            .collect();
        let goals: Vec<Value> = self
            .goals()
            .into_iter()
            .map(|g| json!({ "what": g.what, "ratio": g.ratio, "goal": g.goal }))
            .collect();
        json!({
            "meta": {
                "kernel": "sha256",
                "cpu": self.cpu,
                "load_average_start": self.load.0,
                "load_average_end": self.load.1,
                "effective_clock_ghz": self.samples.clock_ghz(),
                "reps": self.budgets.reps,
                "sample_ms": self.budgets.sample_ms,
                "jvm_warmup_ms": self.budgets.jvm_warmup_ms,
                "jvm_sample_ms": self.budgets.jvm_sample_ms,
                "quick": self.quick,
                "default_row": self.default_row,
                "host_has_sha_extensions": self.host_has_sha,
                "openssl_over_masked": self.mask_effect(),
                "mb": "decimal (1e6 bytes)",
                "ratio": "median over repetitions of row / best schedlab row in the same repetition",
            },
            "sizes": self.sizes,
            "rows": rows,
            "spread": spread,
            "spill_spread": self.spill_spread().map(|(lo, hi)| json!({"min": lo, "max": hi})),
            "goals": goals,
            "forwarding": self.forwarding_effect().map(|(row, size, ratio)| {
                json!({"default": self.default_row, "w_in_memory": row, "size": size, "ratio": ratio})
            }),
        })
    }
}
