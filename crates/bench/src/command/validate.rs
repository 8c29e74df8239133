//! `schedlab bench --validate-model`: measured cycles per hot-loop iteration beside every
//! static model's figure for the same code, with the relative error, for every strategy of
//! MD5, SHA-256, `mulAdd` and `squareToLen` on x86_64, and of six ordinary loops the models
//! were not tuned on ([`loops`]: the `.clif` files as written, one row each).
//!
//! **MD5, measured.** Each strategy's MD5 (the library's configuration with that strategy, as
//! its JIT compiles it: check-free loop, slow path outlined) hashes a 1 MiB message; one
//! iteration of the hot loop is one 64-byte block, so cycles per iteration = time per hash ×
//! effective clock ÷ blocks per hash (16 385 with the padding block; the per-hash overhead is
//! well under 1 %). The effective clock is the bench's add-chain probe
//! ([`super::measure::effective_clock_ghz`]), taken right before each row's hashes in every
//! repetition; rows are timed in a rotated order per repetition. A repetition's sample is the
//! fastest of 25 single hashes (other processes' time slices only ever make a hash slower: the
//! same reasoning as the clock probe's), and the median over repetitions is reported.
//!
//! **SHA-256, measured** the same way, per strategy as the bench JIT-compiles it: see
//! [`sha256`].
//!
//! **BigInteger, measured.** The hot loop is the check-free `mulAdd` loop (for `squareToLen`
//! the one inside its loop over `i`); cycles per call at several operand sizes are fitted with
//! `α·iters(n) + β·n + γ` and `α` is the figure: see [`bigint`] for the method and the hot
//! loop's share of a call.
//!
//! **Static.** MD5: the same configuration compiled for x86_64 (`x86-64-v3`, the host JIT uses
//! the host's features: BMI1/2 on the machines this ran on, so the same instructions);
//! BigInteger: the very code the JIT compiled and the bench times. Costed by schedlab's model
//! (`max(recurrence, resource)` per core, [`schedlab_cost`]), by its
//! schedule simulation (`schedlab-sim/<cpu>`, [`schedlab_cost::sim`]; the lead on the
//! x86 cores, never under the bound) and by llvm-mca
//! on each CPU model it offers. Error = (static − measured) ÷ measured.

mod bigint;
mod loops;
mod output;
mod quiet;
mod sha256;

use super::impls::{self, Imp, RustImpl};
use super::{BenchArgs, Budgets, Format, measure, rotated};
use crate::CliError;
use bigint::{BigFunction, BigKernel, Fit};
use quiet::Contention;
use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_backend::{Compiled, Target};
use schedlab_cost::loop_cost_simulated;
use schedlab_cost::mca::{mca_cpus, mca_cycles};
use schedlab_digests::Md5Builder;
use std::time::Instant;

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
    /// schedlab's figures: which term of the bound binds (`recurrence`, `issue`, `ports
    /// p0+p6`), with every term's cycles.
    binding: Option<String>,
}

/// One strategy of one kernel.
#[derive(Clone, Debug)]
struct ValidationRow {
    kernel: &'static str,
    /// What one hot-loop iteration is.
    iteration: &'static str,
    strategy: String,
    measured: Option<f64>,
    /// BigInteger rows: the sizes, cycles per call and fit behind `measured`.
    fit: Option<Fit>,
    loop_spills: Option<usize>,
    loop_reloads: Option<usize>,
    figures: Vec<Figure>,
}

impl ValidationRow {
    /// The row of `strategy` on `kernel` with the static figures of `compiled` and the
    /// `measured` cycles per iteration (BigInteger: `fit`, behind them).
    fn new(
        (kernel, iteration): (&'static str, &'static str),
        strategy: &str,
        compiled: Result<&Compiled, String>,
        measured: Option<f64>,
        fit: Option<Fit>,
    ) -> Self {
        let (figures, spills) = static_figures(compiled);
        ValidationRow {
            kernel,
            iteration,
            strategy: strategy.to_string(),
            measured,
            fit,
            loop_spills: spills.map(|s| s.0),
            loop_reloads: spills.map(|s| s.1),
            figures,
        }
    }

    /// The rows of `(kernel, strategy, compiled)` timed directly, each with its
    /// per-iteration `samples` (in the same order): their median, no fit.
    fn timed<'a>(
        rows: impl IntoIterator<Item = ((&'static str, &'static str), &'a str, &'a Compiled)>,
        samples: &[Vec<f64>],
    ) -> Vec<Self> {
        rows.into_iter()
            .zip(samples)
            .map(|((kernel, strategy, compiled), samples)| {
                Self::new(
                    kernel,
                    strategy,
                    Ok(compiled),
                    measure::median(samples),
                    None,
                )
            })
            .collect()
    }
}

/// What MD5's hot-loop iteration is.
const MD5_ITERATION: &str = "one 64-byte block of MD5's check-free loop";

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
        .map(|(s, c)| md5_static_row(s, c))
        .collect();
    let mut contention = Contention::start();
    let measured = measure_md5(&strategies, &configs, budgets, &mut contention)?;
    let mut clocks = measured.clocks;
    for (row, m) in rows.iter_mut().zip(measured.per_strategy) {
        row.measured = m;
    }
    let (sha_rows, sha_clocks) = sha256::rows(&strategies, budgets, &mut contention)?;
    rows.extend(sha_rows);
    clocks.extend(sha_clocks);
    for kernel in BigKernel::ALL {
        let functions: Vec<BigFunction> = strategies
            .iter()
            .map(|s| {
                let f = BigFunction::compile(kernel, &PipelineConfig::with_strategy(s))
                    .map_err(|e| format!("cannot compile {} {s}: {e}", kernel.name()))?;
                bigint::check(kernel, &f).map_err(|e| format!("{} {s}: {e}", kernel.name()))?;
                Ok(f)
            })
            .collect::<Result<_, String>>()
            .map_err(CliError::failure)?;
        let (fits, more_clocks) =
            measure_bigint(kernel, &functions, budgets, args.quick, &mut contention)?;
        clocks.extend(more_clocks);
        for ((s, f), fit) in strategies.iter().zip(&functions).zip(fits) {
            rows.push(ValidationRow::new(
                (kernel.name(), kernel.iteration()),
                s,
                Ok(f.compiled()),
                fit.as_ref().map(|f| f.per_iteration),
                fit,
            ));
        }
    }
    let (loop_rows, loop_clocks) = loops::rows(budgets, &mut contention)?;
    rows.extend(loop_rows);
    clocks.extend(loop_clocks);
    let clock = measure::median(&clocks);
    let text = match args.format {
        Format::Json => output::json_doc(&rows, clock, budgets, &contention),
        Format::Markdown => output::table(&rows, clock, budgets, &contention, true),
        Format::Table => output::table(&rows, clock, budgets, &contention, false),
    };
    print!("{text}");
    Ok(())
}

/// Static figures of one strategy's MD5 as the library's JIT compiles it.
fn md5_static_row(strategy: &str, config: &PipelineConfig) -> ValidationRow {
    let target = Target::X86_64;
    let compiled = pipeline::run_with(
        schedlab_kernels::md5::compress_multi_block(),
        target,
        config,
        &StageOptions::report_lazy(target),
    )
    .map(|a| a.compiled)
    .map_err(|e| e.to_string());
    ValidationRow::new(
        ("md5", MD5_ITERATION),
        strategy,
        compiled.as_ref().map_err(Clone::clone),
        None,
        None,
    )
}

/// Every static model's figure for `compiled`'s hot loop, and its spills/reloads.
fn static_figures(compiled: Result<&Compiled, String>) -> (Vec<Figure>, Option<(usize, usize)>) {
    let mut figures = Vec::new();
    let mut spills = None;
    let cost = compiled.as_ref().map(|c| loop_cost_simulated(c));
    match &cost {
        Ok(Ok(cost)) => {
            spills = Some((cost.spills.spills, cost.spills.reloads));
            for b in &cost.bounds {
                figures.push(Figure {
                    model: format!("schedlab/{}", b.cpu),
                    cycles: Ok(b.bound()),
                    binding: Some(binding(b)),
                });
            }
        }
        Ok(Err(e)) => figures.push(Figure {
            model: "schedlab".to_string(),
            cycles: Err(e.to_string()),
            binding: None,
        }),
        Err(e) => figures.push(Figure {
            model: "schedlab".to_string(),
            cycles: Err((*e).clone()),
            binding: None,
        }),
    }
    // The schedule simulation (`cost::sim`), never under the bound: what `report --mca` leads
    // with on these cores.
    for m in schedlab_cost::models::core_models(Target::X86_64) {
        let cycles = match &cost {
            Ok(Ok(c)) => c
                .simulated
                .iter()
                .any(|(cpu, _)| *cpu == m.name)
                .then(|| c.lead(m.name))
                .flatten()
                .ok_or_else(|| "no simulation for this loop".to_string()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(e) => Err((*e).clone()),
        };
        figures.push(Figure {
            model: format!("schedlab-sim/{}", m.name),
            cycles,
            binding: None,
        });
    }
    for cpu in mca_cpus(Target::X86_64) {
        let cycles = match &compiled {
            Ok(c) => mca_cycles(c, cpu).map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        };
        figures.push(Figure {
            model: format!("llvm-mca/{cpu}"),
            cycles,
            binding: None,
        });
    }
    (figures, spills)
}

/// Which term of `b`'s bound binds, and every term: `ports p0+p6 (recurrence 289.0, issue
/// 250.3, ports 120.5)`.
fn binding(b: &schedlab_cost::LoopBound) -> String {
    let issue_alu = if b.resource > b.ports {
        b.resource
    } else {
        0.0
    };
    let which = if b.recurrence >= b.resource {
        "recurrence".to_string()
    } else if b.ports >= b.resource {
        format!("ports {}", b.port_group.join("+"))
    } else {
        "issue".to_string()
    };
    format!(
        "{which} (recurrence {:.2}, issue/ALU {}, ports {:.2} on {})",
        b.recurrence,
        if issue_alu > 0.0 {
            format!("{issue_alu:.2}")
        } else {
            format!("≤ {:.2}", b.resource)
        },
        b.ports,
        if b.port_group.is_empty() {
            "-".to_string()
        } else {
            b.port_group.join("+")
        }
    )
}

/// Fitted cycles per hot-loop iteration of each strategy's BigInteger kernel, and the clock
/// probes taken.
fn measure_bigint(
    kernel: BigKernel,
    functions: &[BigFunction],
    budgets: Budgets,
    quick: bool,
    contention: &mut Contention,
) -> Result<(Vec<Option<Fit>>, Vec<f64>), CliError> {
    let mut benches: Vec<bigint::Bench> = functions
        .iter()
        .map(|f| bigint::Bench::new(kernel, f, quick))
        .collect();
    let (per_rep, clocks) = clocked_samples(functions.len(), &budgets, contention, |i, ghz| {
        Ok(benches[i].cycles_per_call(&functions[i], ghz))
    })?;
    let fits = per_rep
        .iter()
        .zip(&benches)
        .map(|(r, b)| bigint::fit(b.kernel(), &bigint::median_per_size(r)))
        .collect();
    Ok((fits, clocks))
}

/// The effective clock right before a row's samples (boost drifts within a repetition), as
/// the fastest of 4 × 7 probes: as many chances to run undisturbed as the samples get, or a
/// disturbed probe would read the clock low and the cycles with it. First waits for a quiet
/// core ([`Contention::wait_for_quiet`]).
fn probe_clock(contention: &mut Contention) -> Result<f64, CliError> {
    contention.wait_for_quiet();
    (0..PROBE_ROUNDS)
        .filter_map(|_| measure::effective_clock_ghz())
        .reduce(f64::max)
        .ok_or_else(|| CliError::failure("no effective-clock probe on this host"))
}

/// One sample per row and repetition, rows in an order rotated per repetition, each taken by
/// `sample(row, ghz)` right after a clock probe. Returns the samples per row and every probe.
fn clocked_samples<T: Clone>(
    rows: usize,
    budgets: &Budgets,
    contention: &mut Contention,
    mut sample: impl FnMut(usize, f64) -> Result<T, CliError>,
) -> Result<(Vec<Vec<T>>, Vec<f64>), CliError> {
    let mut samples = vec![Vec::new(); rows];
    let mut clocks = Vec::new();
    for rep in 0..budgets.reps as usize {
        for k in 0..rows {
            let i = rotated(k, rep, rows);
            let ghz = probe_clock(contention)?;
            clocks.push(ghz);
            samples[i].push(sample(i, ghz)?);
        }
    }
    Ok((samples, clocks))
}

/// Cycles per unit, at `ghz`, of the fastest of `runs` timed calls of `run` (`units` units
/// each): other processes' time slices only ever make a call slower.
fn fastest_cycles(
    runs: usize,
    units: f64,
    ghz: f64,
    mut run: impl FnMut() -> Result<(), CliError>,
) -> Result<f64, CliError> {
    let mut fastest = f64::INFINITY;
    for _ in 0..runs {
        let start = Instant::now();
        run()?;
        fastest = fastest.min(start.elapsed().as_secs_f64());
    }
    Ok(fastest * ghz * 1e9 / units)
}

struct Measured {
    per_strategy: Vec<Option<f64>>,
    clocks: Vec<f64>,
}

/// Median cycles per block of each configuration's JIT-compiled MD5 on a 1 MiB message.
fn measure_md5(
    names: &[&str],
    configs: &[PipelineConfig],
    budgets: Budgets,
    contention: &mut Contention,
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
    let (samples, clocks) = clocked_samples(engines.len(), &budgets, contention, |i, ghz| {
        // The fastest of several single hashes (≈1.6 ms each): on a shared machine a longer
        // sample is always cut by other processes' time slices, which only ever make a sample
        // slower; the clock probe is taken the same way.
        let fastest = (0..SINGLE_HASHES)
            .map(|_| measure::time_hashes(&engines[i], &data, 1).as_secs_f64())
            .fold(f64::INFINITY, f64::min);
        Ok(fastest * ghz * 1e9 / BLOCKS)
    })?;
    Ok(Measured {
        per_strategy: samples.iter().map(|s| measure::median(s)).collect(),
        clocks,
    })
}
