//! `schedlab bench --kernel NAMES`: any kernel without a workload of its own — a registered
//! kernel on its bench cases, a `.clif` function on its run lines — timed per strategy on the
//! host, with stock Cranelift beside (`cranelift-speed`: the function as built, compiled at
//! `opt_level=speed`, Cranelift's e-graph and no schedlab stage). Each call is judged first (a
//! wrong result is an error row, never a time); the measuring is
//! [`crate::calls::measure`]; this file chooses the subjects and prints their rows.

use super::output::{json_text, opt, table};
use super::{BenchArgs, Budgets, Format};
use crate::CliError;
use crate::calls::{self, CallBudgets, Config, Probe};
use schedlab_backend::check::judge as judge_effect;
use schedlab_backend::exec::{Call, Outcome, Unit};
use schedlab_backend::pipeline::run_ir_stages;
use schedlab_backend::target::OptLevel;
use schedlab_backend::{PipelineConfig, Target};
use schedlab_kernels::case::Placement;
use schedlab_sources::clif::{ClifFile, Expect};
use schedlab_sources::kernel::Kernel;
use serde_json::json;
use std::sync::Arc;

/// The stock row's name.
const STOCK: &str = "cranelift-speed";

/// One kernel's calls and configurations, ready to time.
struct Subject {
    name: String,
    configs: Vec<Config>,
    probes: Vec<Probe>,
    /// What each probe must do.
    expect: Vec<Expectation>,
}

enum Expectation {
    Effect(Result<schedlab_kernels::case::Effect, String>),
    Clif(Expect),
}

impl Expectation {
    fn judge(&self, outcome: &Outcome) -> Option<String> {
        match self {
            Expectation::Effect(Ok(want)) => judge_effect(want, outcome),
            Expectation::Effect(Err(e)) => Some(format!("malformed case: {e}")),
            Expectation::Clif(expect) => match schedlab_sources::check_clif::judge(expect, outcome)
            {
                schedlab_sources::check_clif::Verdict::Pass => None,
                schedlab_sources::check_clif::Verdict::Fail(why)
                | schedlab_sources::check_clif::Verdict::Skip(why)
                | schedlab_sources::check_clif::Verdict::NoTool(why) => Some(why),
            },
        }
    }
}

/// One printed row.
struct Line {
    kernel: String,
    probe: String,
    config: String,
    nanos: Option<f64>,
    speedup: Option<f64>,
    error: Option<String>,
}

/// Runs the bench for `spec` (a `--kernel` list that names no dedicated workload).
pub fn run(spec: &str, args: &BenchArgs) -> Result<(), CliError> {
    if args.callgrind || args.size.is_some() || args.plot.is_some() || args.impls.is_some() {
        return Err(CliError::usage(
            "--callgrind, --size, --plot and --impl apply to the dedicated benches (md5, md5-mb, \
             md5-streams, sha256, muladd, square-to-len); a kernel is timed on its own cases",
        ));
    }
    let target = Target::host()
        .ok_or_else(|| CliError::usage("this host is not one of schedlab's targets"))?;
    let kernels = schedlab_sources::kernel::resolve_list(spec)?;
    if let Some(k) = kernels
        .iter()
        .find(|k| schedlab_sources::wasm_source::is_wasm_kernel(k))
    {
        return Err(CliError::usage(format!(
            "{}: a .wasm function needs its instance (memory, tables) to run; bench times \
             built-in, registered and .clif kernels",
            k.name
        )));
    }
    let strategies = schedlab_sources::kernel::strategies(args.strategy.as_deref())?;
    let budgets = Budgets::new(args.quick, args.reps)?;
    let budgets = CallBudgets {
        reps: budgets.reps as usize,
        sample: budgets.sample,
    };
    let subjects = subjects(&kernels, target, &strategies)?;
    let progress = schedlab_sources::check_clif::progress_bar(
        (subjects.iter().map(|s| s.configs.len()).sum::<usize>() * budgets.reps) as u64,
        "bench",
    );
    let mut lines = Vec::new();
    for subject in &subjects {
        let judge = |p: usize, o: &Outcome| subject.expect[p].judge(o);
        let times = calls::measure(
            target,
            &subject.configs,
            &subject.probes,
            &judge,
            budgets,
            || progress.inc(1),
        )
        .map_err(|e| CliError::failure(format!("{}: {e}", subject.name)))?;
        for (p, probe) in subject.probes.iter().enumerate() {
            for (c, config) in subject.configs.iter().enumerate() {
                let error = times.errors[c][p].clone();
                let timed = error.is_none() && times.errors[0][p].is_none();
                lines.push(Line {
                    kernel: subject.name.clone(),
                    probe: probe.label.clone(),
                    config: config.name.clone(),
                    nanos: times.samples.median(c, p).map(|s| s * 1e9),
                    speedup: timed.then(|| times.samples.speedup(c, 0, p)).flatten(),
                    error,
                });
            }
        }
    }
    progress.finish_and_clear();
    print!("{}", render(&lines, args.format, budgets));
    let failed = lines.iter().filter(|l| l.error.is_some()).count();
    if failed > 0 {
        return Err(CliError::failure(format!(
            "{failed} calls gave a wrong result or did not run"
        )));
    }
    Ok(())
}

/// The configurations (stock first: the ratios' reference) and probes of every kernel; the
/// functions of one `.clif` file are timed together, as one unit per configuration.
fn subjects(
    kernels: &[Kernel],
    target: Target,
    strategies: &[String],
) -> Result<Vec<Subject>, CliError> {
    let isa = |opt| target.isa(opt).map_err(CliError::failure);
    let (speed, none) = (isa(OptLevel::Speed)?, isa(OptLevel::None)?);
    let mut subjects = Vec::new();
    let mut files: Vec<(Arc<ClifFile>, Vec<usize>)> = Vec::new();
    for k in kernels {
        if let Some(reason) = &k.load_error {
            return Err(CliError::usage(format!("{}: {reason}", k.name)));
        }
        if let Some((file, index)) = &k.clif {
            match files.iter_mut().find(|(f, _)| Arc::ptr_eq(f, file)) {
                Some((_, chosen)) => chosen.push(*index),
                None => files.push((Arc::clone(file), vec![*index])),
            }
            continue;
        }
        let Some(entry) = k.builtin else { continue };
        if let Some(reason) = k.unsupported(target) {
            return Err(CliError::usage(format!("{}: {reason}", k.name)));
        }
        let unit = |label: &str, functions| Unit {
            label: label.to_string(),
            functions,
        };
        let mut configs = vec![Config {
            name: STOCK.into(),
            isa: speed.clone(),
            unit: unit(STOCK, vec![k.func.clone()]),
        }];
        for strategy in strategies {
            let mut func = k.func.clone();
            run_ir_stages(&mut func, target, &PipelineConfig::with_strategy(strategy))
                .map_err(|e| CliError::failure(format!("{} {strategy}: {e}", k.name)))?;
            configs.push(Config {
                name: strategy.clone(),
                isa: none.clone(),
                unit: unit(strategy, vec![func]),
            });
        }
        let cases = entry.bench_cases();
        subjects.push(Subject {
            name: k.name.clone(),
            configs,
            probes: cases
                .iter()
                .map(|case| Probe {
                    label: case.label.clone(),
                    call: Call::of_case(0, 0, case, Placement::End),
                })
                .collect(),
            expect: cases
                .iter()
                .map(|case| Expectation::Effect(entry.expected(case)))
                .collect(),
        });
    }
    for (file, chosen) in files {
        subjects.push(clif_subject(&file, &chosen, target, strategies, &speed)?);
    }
    Ok(subjects)
}

/// A `.clif` file's chosen functions on their run lines (trap and print lines are not timed).
fn clif_subject(
    file: &ClifFile,
    chosen: &[usize],
    target: Target,
    strategies: &[String],
    speed: &cranelift_codegen::isa::OwnedTargetIsa,
) -> Result<Subject, CliError> {
    let isa = match file.isa(target) {
        Some(Ok(isa)) => isa.clone(),
        Some(Err(e)) => return Err(CliError::usage(format!("{}: {e}", file.name))),
        None => {
            return Err(CliError::usage(format!(
                "{}: the file is not compiled for the host ({target})",
                file.name
            )));
        }
    };
    let mut configs = vec![Config {
        name: STOCK.into(),
        isa: speed.clone(),
        unit: Unit {
            label: STOCK.into(),
            functions: file.functions.clone(),
        },
    }];
    for strategy in strategies {
        let unit =
            schedlab_sources::check_clif::build_unit(file, target, strategy, Default::default())
                .map_err(|e| CliError::failure(format!("{} {strategy}: {e}", file.name)))?;
        configs.push(Config {
            name: strategy.clone(),
            isa: isa.clone(),
            unit,
        });
    }
    let mut probes = Vec::new();
    let mut expect = Vec::new();
    for line in &file.run_lines {
        let Ok(spec) = &line.spec else { continue };
        let timed = matches!(spec.expect, Expect::Equal(_) | Expect::NotEqual(_));
        if !timed || !chosen.contains(&spec.function) {
            continue;
        }
        let function = &file.functions[spec.function];
        if schedlab_sources::check_clif::unsupported(target, &isa, &function.signature).is_some() {
            continue;
        }
        probes.push(Probe {
            label: format!(
                "line {}: {}",
                line.line,
                line.text.trim_start_matches(';').trim()
            ),
            call: Call::scalars(0, spec.function, &spec.args),
        });
        expect.push(Expectation::Clif(spec.expect.clone()));
    }
    if probes.is_empty() {
        return Err(CliError::usage(format!(
            "{}: no `; run:` line of the chosen functions states a result to time against",
            file.name
        )));
    }
    Ok(Subject {
        name: file.name.clone(),
        configs,
        probes,
        expect,
    })
}

fn render(lines: &[Line], format: Format, budgets: CallBudgets) -> String {
    let method = format!(
        "median of {} repetitions; each call repeated until one run takes ≥ {} ms of the \
         timing process's CPU time; × stock: cranelift-speed's time ÷ the row's, within each \
         repetition",
        budgets.reps,
        budgets.sample.as_millis()
    );
    if format == Format::Json {
        let rows: Vec<_> = lines
            .iter()
            .map(|l| {
                json!({
                    "kernel": l.kernel,
                    "call": l.probe,
                    "config": l.config,
                    "ns_per_call": l.nanos,
                    "speedup_vs_stock": l.speedup,
                    "error": l.error,
                })
            })
            .collect();
        return json_text(&json!({ "method": method, "rows": rows }));
    }
    let headers: Vec<String> = ["kernel", "call", "config", "ns/call", "× stock", "error"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    let body: Vec<Vec<String>> = lines
        .iter()
        .map(|l| {
            vec![
                l.kernel.clone(),
                l.probe.clone(),
                l.config.clone(),
                opt(l.nanos, 1),
                opt(l.speedup, 3),
                l.error.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let mut out = table(&headers, &body, format);
    out.push_str(&format!("\n{method}\n"));
    out
}
