//! `schedlab check`: runs each target's machine code (natively on the host, under qemu-user
//! elsewhere) on every case the kernel's registry entry generates, each array flush against a
//! guard page at its end and then at its start, against the entry's Rust model of the Java
//! code. One executor ([`schedlab_backend::exec`]) serves every kernel and every target.

use crate::CliError;
use crate::kernel::{self, Kernel};
use rayon::prelude::*;
use schedlab_backend::Target;
use schedlab_backend::exec::{self, Call, Outcome, Unit};
use schedlab_backend::pipeline::{PipelineConfig, run_ir_stages};
use schedlab_kernels::case::{Case, Effect, Placement};
use schedlab_kernels::registry::{CaseOptions, Kernel as Registered};

/// Arguments of `schedlab check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Kernel(s): md5, md5-mb, muladd, square-to-len, `.clif` files or directories of them
    /// (comma-separated); a `.clif` file's run lines are its checks.
    #[arg(long, default_value = "md5")]
    kernel: String,
    /// Scheduling strategies, comma-separated, or `all`.
    #[arg(long)]
    strategy: Option<String>,
    /// Targets, comma-separated (x86_64, aarch64, s390x, riscv64), or `all`.
    #[arg(long)]
    target: Option<String>,
    /// Random cases per kernel × strategy × target.
    #[arg(long, default_value_t = 24)]
    random: usize,
    /// Seed of the random cases.
    #[arg(long, default_value_t = 1321)]
    seed: u64,
    /// Bounds-check elimination: off, merge (one check per block) or predicate (none in the
    /// hot loop, with a checked fallback loop).
    #[arg(long, default_value = "predicate", value_parser = parse_bce)]
    bce: schedlab_passes::bce::BceLevel,
    /// Print only failures and the summary.
    #[arg(long, short)]
    quiet: bool,
}

/// A labelled case with its expected outcome, printed on one line.
pub(crate) struct Verdict {
    pub(crate) label: String,
    pub(crate) ok: bool,
    pub(crate) detail: String,
}

/// Tallies results and prints one line per case.
struct Tally {
    passed: usize,
    failed: usize,
    quiet: bool,
}

impl Tally {
    fn record(&mut self, prefix: &str, v: Verdict) {
        if v.ok {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        if !v.ok || !self.quiet {
            let status = if v.ok { "ok" } else { "MISMATCH" };
            println!("{prefix} {:<28} {status} {}", v.label, v.detail);
        }
    }
}

/// Runs `schedlab check`.
pub fn run(args: CheckArgs) -> Result<(), CliError> {
    let (clif_kernels, kernels): (Vec<Kernel>, Vec<Kernel>) = kernel::resolve_list(&args.kernel)?
        .into_iter()
        .partition(|k| k.builtin.is_none());
    // `off` (no IR stages) is always part of a `.clif` check; accept it by name too.
    let strategy_spec = args.strategy.as_deref().map(|s| {
        kernel::split_list(s)
            .filter(|n| *n != crate::check_clif::OFF)
            .collect::<Vec<_>>()
            .join(",")
    });
    let strategies = match strategy_spec.as_deref() {
        Some("") => Vec::new(),
        spec => kernel::strategies(spec)?,
    };
    let targets = kernel::targets(args.target.as_deref())?;
    let clif_result = if clif_kernels.is_empty() {
        Ok(())
    } else {
        let mut files: Vec<std::sync::Arc<crate::clif::ClifFile>> = Vec::new();
        for (file, _) in clif_kernels.iter().filter_map(|k| k.clif.as_ref()) {
            if !files.iter().any(|f| std::sync::Arc::ptr_eq(f, file)) {
                files.push(std::sync::Arc::clone(file));
            }
        }
        let check = crate::check_clif::ClifCheck {
            strategies: strategies.clone(),
            targets: targets.clone(),
            bce: args.bce,
            quiet: args.quiet,
        };
        crate::check_clif::run(&files, &check)
    };
    if kernels.is_empty() {
        return clif_result;
    }
    let mut tally = Tally {
        passed: 0,
        failed: 0,
        quiet: args.quiet,
    };
    let mut errors = Vec::new();
    let jobs: Vec<(&Kernel, &String, Target)> = kernels
        .iter()
        .flat_map(|k| {
            strategies
                .iter()
                .flat_map(move |s| targets.iter().map(move |&t| (k, s, t)))
        })
        .collect();
    // Compile and run every kernel × strategy × target in parallel; print in order.
    let results: Vec<Result<Vec<Verdict>, String>> = jobs
        .par_iter()
        .map(|&(k, strategy, target)| check_one(k, strategy, target, &args))
        .collect();
    for ((k, strategy, target), result) in jobs.iter().zip(results) {
        let prefix = format!("{} {strategy} {target}", k.name);
        match result {
            Ok(verdicts) => verdicts.into_iter().for_each(|v| tally.record(&prefix, v)),
            Err(e) => {
                println!("{prefix} ERROR {e}");
                errors.push(format!("{prefix}: {e}"));
            }
        }
    }
    println!(
        "{} passed, {} failed",
        tally.passed,
        tally.failed + errors.len()
    );
    if tally.failed > 0 || !errors.is_empty() {
        return Err(CliError::failure(format!(
            "{} mismatches, {} errors",
            tally.failed,
            errors.len()
        )));
    }
    clif_result
}

/// Runs one kernel × strategy × target: the IR stages, then every case in both placements
/// through the executor. A target that cannot compile the kernel gives one `UNSUPPORTED`
/// verdict line and no cases.
fn check_one(
    k: &Kernel,
    strategy: &str,
    target: Target,
    args: &CheckArgs,
) -> Result<Vec<Verdict>, String> {
    let Some(entry) = k.builtin else {
        return Ok(Vec::new());
    };
    if let Some(reason) = k.unsupported(target) {
        return Ok(vec![Verdict {
            label: "UNSUPPORTED".into(),
            ok: true,
            detail: reason,
        }]);
    }
    let mut func = k.func.clone();
    let config = PipelineConfig {
        bce: args.bce,
        ..PipelineConfig::with_strategy(strategy)
    };
    run_ir_stages(&mut func, target, &config).map_err(|e| e.to_string())?;
    let options = CaseOptions {
        seed: args.seed,
        random: args.random,
    };
    run_cases(entry, func, target, &entry.cases(&options))
}

/// Runs `cases` of `entry` on `func` (after the IR stages) for `target`, every case with its
/// arrays against the guard page at their end and then at their start; one verdict per case
/// and placement.
pub(crate) fn run_cases(
    entry: &dyn Registered,
    func: cranelift_codegen::ir::Function,
    target: Target,
    cases: &[Case],
) -> Result<Vec<Verdict>, String> {
    let isa = target
        .isa(cranelift_codegen::settings::OptLevel::None)
        .map_err(|e| format!("ISA: {e}"))?;
    let units = [Unit {
        label: entry.name().to_string(),
        functions: vec![func],
    }];
    let runs: Vec<(&Case, Placement)> = Placement::ALL
        .iter()
        .flat_map(|&p| cases.iter().map(move |c| (c, p)))
        .collect();
    let calls: Vec<Call> = runs
        .iter()
        .map(|(case, placement)| Call {
            unit: 0,
            function: 0,
            args: case.args.clone(),
            memory: case.memory.clone(),
            placement: *placement,
        })
        .collect();
    let outcomes = crate::guard::catch(|| exec::execute(target, &isa, &units, &calls))
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok(runs
        .iter()
        .zip(outcomes)
        .map(|((case, placement), got)| {
            let label = format!("{} [{}]", case.label, placement.name());
            match entry.expected(case) {
                Ok(want) => judge(label, &want, &got),
                Err(e) => Verdict {
                    label,
                    ok: false,
                    detail: format!("malformed case: {e}"),
                },
            }
        })
        .collect())
}

/// Compares what the call did with what the Java code does; the detail names the first
/// difference (arrays by index and byte offset, not in full).
fn judge(label: String, want: &Effect, got: &Outcome) -> Verdict {
    let detail = match got {
        Outcome::Returned(effect) if effect == want => String::new(),
        Outcome::Returned(effect) if effect.returns != want.returns => format!(
            "returned {:?}, expected {:?}",
            effect.returns, want.returns
        ),
        Outcome::Returned(effect) => first_array_difference(&want.arrays, &effect.arrays),
        other => format!("{other}, expected it to return {:?}", want.returns),
    };
    Verdict {
        ok: detail.is_empty(),
        label,
        detail,
    }
}

fn first_array_difference(want: &[Vec<u8>], got: &[Vec<u8>]) -> String {
    if want.len() != got.len() {
        return format!("{} arrays back, expected {}", got.len(), want.len());
    }
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        if w.len() != g.len() {
            return format!("array {i}: {} bytes back, expected {}", g.len(), w.len());
        }
        if let Some(at) = w.iter().zip(g).position(|(a, b)| a != b) {
            let end = (at + 8).min(w.len());
            return format!(
                "array {i} differs at byte {at}: {:02x?}, expected {:02x?}",
                &g[at..end],
                &w[at..end]
            );
        }
    }
    String::new()
}

fn parse_bce(s: &str) -> Result<schedlab_passes::bce::BceLevel, String> {
    s.parse()
        .map_err(|e: schedlab_passes::bce::BceError| e.to_string())
}
