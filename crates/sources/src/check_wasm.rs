//! `schedlab check` on `.wasm` modules: every function after every strategy (without and with
//! the e-graph first) through Cranelift's verifier after each stage and schedlab's schedule
//! legality check, and the functions that need nothing but their arguments executed under
//! cranelift-interpreter before vs after on random arguments
//! ([`schedlab_wasm::soundness`]). One line per module × mode × target × strategy with how
//! many functions each check covered; every failure is printed with its reason.

use crate::CliError;
use crate::kernel::Kernel;
use rayon::prelude::*;
use schedlab_backend::Target;
use schedlab_wasm::soundness::{FunctionCheck, check_function};
use std::collections::BTreeMap;

/// What `check` does with `.wasm` functions.
pub struct WasmCheck {
    /// Strategies (registered names).
    pub strategies: Vec<String>,
    /// Targets.
    pub targets: Vec<Target>,
    /// Random calls per function that needs only its arguments.
    pub calls: usize,
    /// Seed of the random calls.
    pub seed: u64,
    /// Print only failures and the summary.
    pub quiet: bool,
}

/// Tallies of one module × mode × target × strategy line.
#[derive(Default)]
struct Tally {
    functions: usize,
    verified: usize,
    legal: usize,
    executed: usize,
    calls: usize,
    failed: usize,
}

/// Runs the checks; exit status 1 when any function failed one.
pub fn run(kernels: &[Kernel], check: &WasmCheck) -> Result<(), CliError> {
    let mut jobs = Vec::new();
    for k in kernels {
        for strategy in &check.strategies {
            for optimize in [false, true] {
                for &target in &check.targets {
                    jobs.push((k, strategy.as_str(), optimize, target));
                }
            }
        }
    }
    let progress = crate::check_clif::progress_bar(jobs.len() as u64, "check");
    let results: Vec<Result<FunctionCheck, String>> = jobs
        .par_iter()
        .map(|&(k, strategy, optimize, target)| {
            let result = match &k.load_error {
                Some(e) => Err(e.clone()),
                None => crate::guard::catch(|| {
                    let facts = k
                        .clif
                        .as_ref()
                        .map(|(f, _)| f.heap_facts)
                        .unwrap_or_default();
                    check_function(
                        &k.func,
                        target,
                        strategy,
                        optimize,
                        check.calls,
                        check.seed,
                        facts,
                    )
                }),
            };
            progress.inc(1);
            result
        })
        .collect();
    progress.finish_and_clear();
    let mut tallies: BTreeMap<(String, Target, String), Tally> = BTreeMap::new();
    let mut failures = 0;
    for (&(k, strategy, optimize, target), result) in jobs.iter().zip(&results) {
        let module = k
            .clif
            .as_ref()
            .map_or_else(|| k.name.clone(), |(f, _)| f.name.clone());
        let label = if optimize {
            format!("{strategy}+egraph")
        } else {
            strategy.to_string()
        };
        let tally = tallies.entry((module, target, label.clone())).or_default();
        tally.functions += 1;
        let problems = match result {
            Ok(c) => {
                tally.verified += usize::from(c.verifier.is_ok());
                tally.legal += usize::from(c.legality.is_ok());
                if let Some(Ok(n)) = c.execution {
                    tally.executed += 1;
                    tally.calls += n;
                }
                let mut p = Vec::new();
                if let Err(e) = &c.verifier {
                    p.push(format!("verifier: {e}"));
                }
                if let Err(e) = &c.legality {
                    p.push(format!("legality: {e}"));
                }
                if let Some(Err(e)) = &c.execution {
                    p.push(format!("interpreter: {e}"));
                }
                p
            }
            Err(e) => vec![e.clone()],
        };
        if !problems.is_empty() {
            tally.failed += 1;
            failures += 1;
            for p in problems {
                let first = p.lines().next().unwrap_or_default();
                println!("{} {label} {target} FAILED {first}", k.name);
            }
        }
    }
    if !check.quiet {
        println!();
    }
    println!(
        "{:<32}  {:<8}  {:<24}  {:>9}  {:>8}  {:>6}  {:>15}  {:>6}",
        "module:mode",
        "target",
        "strategy",
        "functions",
        "verified",
        "legal",
        "executed/calls",
        "failed"
    );
    for ((module, target, strategy), t) in &tallies {
        println!(
            "{module:<32}  {:<8}  {strategy:<24}  {:>9}  {:>8}  {:>6}  {:>15}  {:>6}",
            target.name(),
            t.functions,
            t.verified,
            t.legal,
            format!("{}/{}", t.executed, t.calls),
            t.failed
        );
    }
    if failures > 0 {
        return Err(CliError::failure(format!(
            "{failures} function checks failed"
        )));
    }
    Ok(())
}
