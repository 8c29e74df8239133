//! `schedlab check`: runs each target's machine code (natively on the host, under qemu-user
//! elsewhere) on every case the kernel's registry entry generates, each array flush against a
//! guard page at its end and then at its start, against the entry's Rust model of the Java
//! code. One executor ([`schedlab_backend::exec`]) serves every kernel and every target.

use crate::CliError;
use crate::kernel::{self, Kernel};
use rayon::prelude::*;
use schedlab_backend::Target;
use schedlab_backend::check::run_kernel_cases;
use schedlab_backend::pipeline::{PipelineConfig, run_ir_stages};
use schedlab_kernels::registry::CaseOptions;

/// Arguments of `schedlab check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Kernel(s): a registered name or alias (`schedlab list`), `.clif` files, `.wasm` modules
    /// or directories of them (comma-separated); a `.clif` file's run lines are its checks, a
    /// module's functions are verified, checked for legal schedules and, where they need only
    /// their arguments, interpreted before vs after (`--random` calls each).
    #[arg(long, default_value = "md5")]
    kernel: String,
    #[command(flatten)]
    selection: crate::switch::SelectionArgs,
    /// Random cases per built-in kernel × strategy × target (default 24). A `.clif` file's
    /// checks are its run lines, so `--random` with only `.clif` kernels is a usage error.
    #[arg(long)]
    random: Option<usize>,
    /// Seed of the random cases.
    #[arg(long, default_value_t = 1321)]
    seed: u64,
    #[command(flatten)]
    stages: crate::switch::StageArgs,
    #[command(flatten)]
    rewrite: crate::switch::RewriteArgs,
    /// Print only failures and the summary.
    #[arg(long, short)]
    quiet: bool,
}

/// Random cases per built-in kernel × strategy × target when `--random` is not given.
const DEFAULT_RANDOM: usize = 24;

/// The verdict label of a kernel × target the target cannot compile (printed, not counted).
const UNSUPPORTED: &str = "UNSUPPORTED";

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
        if v.label == UNSUPPORTED {
            println!("{prefix} {UNSUPPORTED} {}", v.detail);
            return;
        }
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
    let (wasm_kernels, other): (Vec<Kernel>, Vec<Kernel>) = kernel::resolve_list(&args.kernel)?
        .into_iter()
        .partition(crate::wasm_source::is_wasm_kernel);
    let (clif_kernels, kernels): (Vec<Kernel>, Vec<Kernel>) =
        other.into_iter().partition(|k| k.builtin.is_none());
    // `off` (no IR stages) is always part of a `.clif` check; accept it by name too.
    let strategy_spec = args.selection.strategy.as_deref().map(|s| {
        kernel::split_list(s)
            .filter(|n| *n != crate::check_clif::OFF)
            .collect::<Vec<_>>()
            .join(",")
    });
    let strategies = match strategy_spec.as_deref() {
        Some("") => Vec::new(),
        spec => kernel::strategies(spec)?,
    };
    let targets = kernel::targets(args.selection.target.as_deref())?;
    if kernels.is_empty() && wasm_kernels.is_empty() && args.random.is_some() {
        return Err(CliError::usage(
            "--random applies to built-in kernels; a .clif file's checks are its `; run:` lines",
        ));
    }
    let wasm_result = if wasm_kernels.is_empty() {
        Ok(())
    } else {
        let check = crate::check_wasm::WasmCheck {
            strategies: strategies.clone(),
            targets: targets.clone(),
            calls: args.random.unwrap_or(DEFAULT_RANDOM),
            seed: args.seed,
            quiet: args.quiet,
        };
        crate::check_wasm::run(&wasm_kernels, &check)
    };
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
            bce: args.stages.bce,
            quiet: args.quiet,
        };
        crate::check_clif::run(&files, &check)
    };
    let clif_result = wasm_result.and(clif_result);
    if kernels.is_empty() {
        return clif_result;
    }
    let mut tally = Tally {
        passed: 0,
        failed: 0,
        quiet: args.quiet,
    };
    let mut errors = Vec::new();
    let mut jobs: Vec<(&Kernel, &String, Target)> = Vec::new();
    for k in &kernels {
        for strategy in &strategies {
            jobs.extend(targets.iter().map(|&t| (k, strategy, t)));
        }
    }
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
            label: UNSUPPORTED.into(),
            ok: true,
            detail: reason,
        }]);
    }
    let mut func = k.func.clone();
    let config = args.rewrite.apply(PipelineConfig {
        bce: args.stages.bce,
        forward_stores: args.stages.forward_stores.enabled(),
        hoist: args.stages.hoist.enabled(),
        ..PipelineConfig::with_strategy(strategy)
    });
    run_ir_stages(&mut func, target, &config).map_err(|e| e.to_string())?;
    let options = CaseOptions {
        seed: args.seed,
        random: args.random.unwrap_or(DEFAULT_RANDOM),
    };
    let cases = entry.cases(&options);
    let verdicts = crate::guard::catch(|| run_kernel_cases(entry, func, target, &cases))?
        .map_err(|e| e.to_string())?;
    Ok(verdicts
        .into_iter()
        .map(|v| Verdict {
            label: v.label,
            ok: v.mismatch.is_none(),
            detail: v.mismatch.unwrap_or_default(),
        })
        .collect())
}
