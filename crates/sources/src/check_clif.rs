//! `schedlab check` on `.clif` files: every run line, on every target the file names, after
//! every scheduling strategy and with the pipeline off (the function as written), through the
//! one executor ([`schedlab_backend::exec`]): the JIT on the host, one generated harness per
//! file and target under qemu elsewhere.
//!
//! A run line is *passed*, *failed* (wrong result, unexpected trap, code that does not
//! compile) or *skipped* with a reason (a malformed line, a type the target lacks, a missing
//! tool). Nothing a file contains ends the process: the pipeline and code generation run under
//! [`crate::guard::catch`], traps happen in a child process or inside the harness.

use crate::CliError;
use crate::clif::{ClifFile, Expect};
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{Signature, types};
use cranelift_codegen::isa::OwnedTargetIsa;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use schedlab_backend::Target;
use schedlab_backend::emulate::EmulateError;
use schedlab_backend::exec::{self, Call, ExecError, Outcome, Unit};
use schedlab_backend::pipeline::{PipelineConfig, run_ir_stages_verified_by};
use schedlab_passes::bce::BceLevel;
use std::collections::BTreeMap;
use std::io::IsTerminal;

/// The pseudo-strategy "no IR stages": the functions as the file wrote them.
pub const OFF: &str = "off";

/// What `check` does with `.clif` files.
pub struct ClifCheck {
    /// Strategies to run after [`OFF`] (registered names).
    pub strategies: Vec<String>,
    /// Targets asked for (each file uses its intersection with these).
    pub targets: Vec<Target>,
    /// Bounds-check elimination level of the pipeline.
    pub bce: BceLevel,
    /// Print only failures, skips and the summary.
    pub quiet: bool,
}

/// The verdict on one run line for one target and strategy.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The expectation held.
    Pass,
    /// It did not, or the code could not be produced or run.
    Fail(String),
    /// The line was not run, for this reason.
    Skip(String),
    /// The line was not run because a compiler or emulator is missing (counted as skipped; the
    /// check then exits with status 1, as a check with nothing run must not pass).
    NoTool(String),
}

/// Runs the check over `files`; exit status 1 when any line failed.
pub fn run(files: &[std::sync::Arc<ClifFile>], check: &ClifCheck) -> Result<(), CliError> {
    let mut jobs = Vec::new();
    let mut skipped_files_lines = 0;
    for (f, file) in files.iter().enumerate() {
        if let Some(why) = file.foreign_only() {
            println!(
                "{} skip: {why} ({} run lines not run)",
                file.name,
                file.run_lines.len()
            );
            skipped_files_lines += file.run_lines.len();
            continue;
        }
        if !file.foreign_targets.is_empty() {
            eprintln!(
                "schedlab: {}: ignoring `target` lines for {} (not one of schedlab's targets)",
                file.name,
                file.foreign_targets.join(", ")
            );
        }
        for target in file.select_targets(&check.targets)? {
            jobs.push((f, target));
        }
    }
    let mut strategies = vec![OFF.to_string()];
    strategies.extend(check.strategies.iter().filter(|s| *s != OFF).cloned());
    let progress = progress_bar(jobs.len() as u64, "check");
    let results: Vec<Vec<Vec<Verdict>>> = jobs
        .par_iter()
        .map(|&(f, target)| {
            let verdicts = check_target(&files[f], target, &strategies, check.bce);
            progress.inc(1);
            verdicts
        })
        .collect();
    progress.finish_and_clear();

    let mut summary: BTreeMap<(Target, usize), [usize; 3]> = BTreeMap::new();
    for (&(f, target), verdicts) in jobs.iter().zip(&results) {
        let file = &files[f];
        for (line, per_strategy) in file.run_lines.iter().zip(verdicts) {
            print_line(file, line, target, &strategies, per_strategy, check.quiet);
            for (s, v) in per_strategy.iter().enumerate() {
                let counts = summary.entry((target, s)).or_default();
                match v {
                    Verdict::Pass => counts[0] += 1,
                    Verdict::Fail(_) => counts[1] += 1,
                    Verdict::Skip(_) | Verdict::NoTool(_) => counts[2] += 1,
                }
            }
        }
    }
    println!();
    println!(
        "{:<8}  {:<14}  {:>6}  {:>6}  {:>7}",
        "target", "strategy", "passed", "failed", "skipped"
    );
    let mut total = [0, 0, skipped_files_lines];
    for ((target, s), counts) in &summary {
        println!(
            "{:<8}  {:<14}  {:>6}  {:>6}  {:>7}",
            target.name(),
            strategies[*s],
            counts[0],
            counts[1],
            counts[2]
        );
        for k in 0..3 {
            total[k] += counts[k];
        }
    }
    println!(
        "{} passed, {} failed, {} skipped ({} files, {} run lines)",
        total[0],
        total[1],
        total[2],
        files.len(),
        files.iter().map(|f| f.run_lines.len()).sum::<usize>()
    );
    if total[1] > 0 {
        return Err(CliError::failure(format!("{} run lines failed", total[1])));
    }
    let mut missing: Vec<&String> = results
        .iter()
        .flatten()
        .flatten()
        .filter_map(|v| match v {
            Verdict::NoTool(why) => Some(why),
            _ => None,
        })
        .collect();
    missing.sort();
    missing.dedup();
    if !missing.is_empty() {
        let list: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        return Err(CliError::failure(format!(
            "run lines were not run: {}",
            list.join("; ")
        )));
    }
    Ok(())
}

/// A progress bar on stderr when it is a terminal, else a hidden one.
pub fn progress_bar(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed}") {
        bar.set_style(style);
    }
    bar.set_message(what.to_string());
    bar
}

fn print_line(
    file: &ClifFile,
    run_line: &crate::clif::RunLine,
    target: Target,
    strategies: &[String],
    verdicts: &[Verdict],
    quiet: bool,
) {
    let at = format!("{}:{} {:<8}", file.name, run_line.line, target.name());
    if let Some(Verdict::Skip(reason) | Verdict::NoTool(reason)) = verdicts.first()
        && verdicts
            .iter()
            .all(|v| matches!(v, Verdict::Skip(_) | Verdict::NoTool(_)))
    {
        println!("{at} skip: {reason}");
        return;
    }
    let mut all_passed = true;
    for (s, v) in strategies.iter().zip(verdicts) {
        match v {
            Verdict::Pass => {}
            Verdict::Fail(why) => {
                all_passed = false;
                println!("{at} FAIL {s}: {why}   [{}]", run_line.text);
            }
            Verdict::Skip(why) | Verdict::NoTool(why) => {
                all_passed = false;
                println!("{at} skip {s}: {why}");
            }
        }
    }
    if all_passed && !quiet {
        println!("{at} ok ({} strategies)", verdicts.len());
    }
}

/// Every run line of `file` on `target`, per strategy (`[line][strategy]`).
pub fn check_target(
    file: &ClifFile,
    target: Target,
    strategies: &[String],
    bce: BceLevel,
) -> Vec<Vec<Verdict>> {
    if file.interpret_only {
        return interpret_target(file, target, strategies, bce);
    }
    let n = strategies.len();
    let mut verdicts: Vec<Vec<Option<Verdict>>> = vec![vec![None; n]; file.run_lines.len()];
    let isa = match file.isa_to_run(target) {
        Some(Ok(isa)) => isa,
        Some(Err(e)) => return fill(file, n, &Verdict::Skip(e)),
        None => {
            return fill(
                file,
                n,
                &Verdict::Skip(format!("the file is not compiled for {target}")),
            );
        }
    };
    // Lines that cannot run on this target at all.
    let throws = reaches_throw_entry(file);
    let mut runnable = Vec::new();
    for (i, line) in file.run_lines.iter().enumerate() {
        let reason = match &line.spec {
            Err(e) => Some(e.clone()),
            Ok(spec) if spec.expect == Expect::Print => {
                Some("`print:` states no expected value".to_string())
            }
            Ok(spec) if throws[spec.function] && !exec::provides_throw_entry(target) => {
                Some(format!(
                    "reaches Cranelift's runner's exception-throw entry %{THROW_ENTRY}, which \
                     schedlab's executor provides only to native code on an x86_64 host \
                     (notes/clif-semantics.md)"
                ))
            }
            Ok(spec) => unsupported(target, &isa, &file.functions[spec.function].signature),
        };
        match reason {
            Some(r) => verdicts[i]
                .iter_mut()
                .for_each(|v| *v = Some(Verdict::Skip(r.clone()))),
            None => runnable.push(i),
        }
    }
    // One unit per strategy that gets through the IR stages.
    let mut units = Vec::new();
    let mut unit_strategy = Vec::new();
    for (s, strategy) in strategies.iter().enumerate() {
        match crate::guard::catch(|| build_unit(file, target, strategy, bce)) {
            Ok(Ok(unit)) => {
                units.push(unit);
                unit_strategy.push(s);
            }
            Ok(Err(e)) | Err(e) => {
                for &i in &runnable {
                    verdicts[i][s] = Some(Verdict::Fail(format!("pipeline: {e}")));
                }
            }
        }
    }
    let mut calls = Vec::new();
    let mut call_slots = Vec::new();
    for (u, &s) in unit_strategy.iter().enumerate() {
        for &i in &runnable {
            if let Ok(spec) = &file.run_lines[i].spec {
                calls.push(Call::scalars(u, spec.function, &spec.args));
                call_slots.push((i, s));
            }
        }
    }
    if !calls.is_empty() {
        match crate::guard::catch(|| exec::execute(target, &isa, &units, &calls)) {
            Ok(Ok(outcomes)) => {
                for ((i, s), outcome) in call_slots.iter().zip(outcomes) {
                    if let Ok(spec) = &file.run_lines[*i].spec {
                        verdicts[*i][*s] = Some(judge(&spec.expect, &outcome));
                    }
                }
            }
            Ok(Err(ExecError::Emulate(EmulateError::MissingTool(missing)))) => {
                for (i, s) in &call_slots {
                    verdicts[*i][*s] = Some(Verdict::NoTool(missing.to_string()));
                }
            }
            Ok(Err(e)) => {
                for (i, s) in &call_slots {
                    verdicts[*i][*s] = Some(Verdict::Fail(format!("execution: {e}")));
                }
            }
            Err(panic) => {
                for (i, s) in &call_slots {
                    verdicts[*i][*s] = Some(Verdict::Fail(format!("execution {panic}")));
                }
            }
        }
    }
    verdicts
        .into_iter()
        .map(|row| {
            row.into_iter()
                .map(|v| v.unwrap_or_else(|| Verdict::Fail("internal: no verdict".into())))
                .collect()
        })
        .collect()
}

use exec::THROW_ENTRY;

/// Per function of `file`: whether it calls [`THROW_ENTRY`], directly or through the file's
/// other functions (a call by name, `call` or `func_addr`).
fn reaches_throw_entry(file: &ClifFile) -> Vec<bool> {
    use cranelift_codegen::ir::{ExternalName, UserFuncName};
    let name_of = |func: &cranelift_codegen::ir::Function, r| match &func.dfg.ext_funcs[r].name {
        ExternalName::TestCase(name) => Some(UserFuncName::Testcase(name.clone())),
        ExternalName::User(u) => Some(UserFuncName::User(
            func.params.user_named_funcs()[*u].clone(),
        )),
        _ => None,
    };
    let throw = UserFuncName::testcase(THROW_ENTRY);
    let mut reaches: Vec<bool> = file
        .functions
        .iter()
        .map(|f| {
            f.dfg
                .ext_funcs
                .keys()
                .any(|r| name_of(f, r) == Some(throw.clone()))
        })
        .collect();
    // Propagate to callers until nothing changes (a file has a handful of functions).
    loop {
        let mut changed = false;
        for (i, f) in file.functions.iter().enumerate() {
            if reaches[i] {
                continue;
            }
            let calls_one = f.dfg.ext_funcs.keys().any(|r| {
                name_of(f, r).is_some_and(|n| {
                    file.functions
                        .iter()
                        .position(|g| g.name == n)
                        .is_some_and(|k| reaches[k])
                })
            });
            if calls_one {
                reaches[i] = true;
                changed = true;
            }
        }
        if !changed {
            return reaches;
        }
    }
}

/// Fuel for one interpreted call (instructions), so a line that loops forever fails.
const INTERPRETER_FUEL: u64 = 100_000_000;

/// A `test interpret` file's run lines on `target`'s pipeline: each strategy's IR (the IR
/// stages use `target`'s machine model) run under Cranelift's interpreter, nothing compiled.
fn interpret_target(
    file: &ClifFile,
    target: Target,
    strategies: &[String],
    bce: BceLevel,
) -> Vec<Vec<Verdict>> {
    let mut verdicts = vec![Vec::with_capacity(strategies.len()); file.run_lines.len()];
    for strategy in strategies {
        let unit = crate::guard::catch(|| build_unit(file, target, strategy, bce));
        for (i, line) in file.run_lines.iter().enumerate() {
            let verdict = match (&line.spec, &unit) {
                (Err(e), _) => Verdict::Skip(e.clone()),
                (Ok(spec), _) if spec.expect == Expect::Print => {
                    Verdict::Skip("`print:` states no expected value".to_string())
                }
                (Ok(_), Ok(Err(e)) | Err(e)) => Verdict::Fail(format!("pipeline: {e}")),
                (Ok(spec), Ok(Ok(unit))) => {
                    let name = file.functions[spec.function].name.to_string();
                    match crate::guard::catch(|| interpret(&unit.functions, &name, &spec.args)) {
                        Ok(Ok(Some(values))) => judge(
                            &spec.expect,
                            &Outcome::Returned(schedlab_kernels::case::Effect {
                                returns: values,
                                arrays: Vec::new(),
                            }),
                        ),
                        Ok(Ok(None)) => judge(&spec.expect, &Outcome::Trapped("trap".into())),
                        Ok(Err(e)) | Err(e) => Verdict::Fail(format!("interpreter: {e}")),
                    }
                }
            };
            verdicts[i].push(verdict);
        }
    }
    verdicts
}

/// Calls `name` among `functions` under Cranelift's interpreter: its results, or `None` for
/// a trap.
fn interpret(
    functions: &[cranelift_codegen::ir::Function],
    name: &str,
    args: &[DataValue],
) -> Result<Option<Vec<DataValue>>, String> {
    use cranelift_interpreter::environment::FunctionStore;
    use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
    use cranelift_interpreter::step::ControlFlow;
    let mut store = FunctionStore::default();
    for func in functions {
        store.add(func.name.to_string(), func);
    }
    let state = InterpreterState::default().with_function_store(store);
    match Interpreter::new(state)
        .with_fuel(Some(INTERPRETER_FUEL))
        .call_by_name(name, args)
    {
        Ok(ControlFlow::Return(values)) => Ok(Some(values.to_vec())),
        Ok(ControlFlow::Trap(_)) => Ok(None),
        Ok(other) => Err(format!("unexpected end of the call: {other:?}")),
        Err(e) => Err(e.to_string()),
    }
}

fn fill(file: &ClifFile, n: usize, v: &Verdict) -> Vec<Vec<Verdict>> {
    vec![vec![v.clone(); n]; file.run_lines.len()]
}

/// The file's functions after the pipeline's IR stages with `strategy` (or untouched for
/// [`OFF`]).
pub fn build_unit(
    file: &ClifFile,
    target: Target,
    strategy: &str,
    bce: BceLevel,
) -> Result<Unit, String> {
    let mut functions = file.functions.clone();
    if strategy != OFF {
        let config = PipelineConfig {
            bce,
            ..PipelineConfig::with_strategy(strategy)
        };
        let options = schedlab_wasm::soundness::verifying_options(Default::default());
        // Every verifier run checks against the file's ISA and `set` flags, as the compiler's.
        let isa = match file.isa_to_run(target) {
            Some(Ok(isa)) => Some(isa),
            _ => None,
        };
        for func in &mut functions {
            run_ir_stages_verified_by(func, target, &config, &options, isa.as_deref())
                .map_err(|e| format!("{}: {e}", func.name))?;
        }
    }
    Ok(Unit {
        label: strategy.to_string(),
        functions,
    })
}

/// Why a function with `sig` cannot be called on `target` with `isa`, if it cannot.
pub fn unsupported(target: Target, isa: &OwnedTargetIsa, sig: &Signature) -> Option<String> {
    let types: Vec<_> = sig
        .params
        .iter()
        .chain(&sig.returns)
        .map(|p| p.value_type)
        .collect();
    // f16 and f128 pass through the native executor's slots like any value; the C harness
    // that runs foreign targets' code under qemu has no portable type for them.
    let half_or_quad = |t: &types::Type| *t == types::F16 || *t == types::F128;
    if let Some(ty) = types
        .iter()
        .find(|t| !exec::slot_supports(**t) || (!target.is_host() && half_or_quad(t)))
    {
        return Some(format!(
            "values of type {ty} are not supported by schedlab's executor"
        ));
    }
    let isa_flag = |name: &str| {
        isa.isa_flags()
            .iter()
            .find(|v| v.name == name)
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    };
    if target == Target::X86_64
        && types.contains(&types::I128)
        && !isa.flags().enable_llvm_abi_extensions()
    {
        return Some(
            "i128 arguments or results on x86_64 need `set enable_llvm_abi_extensions=true`"
                .to_string(),
        );
    }
    if target == Target::Riscv64 && types.iter().any(|t| t.is_vector()) && !isa_flag("has_v") {
        return Some(
            "riscv64 without the V extension (`target riscv64 has_v`) has no vector types"
                .to_string(),
        );
    }
    None
}

/// Compares an outcome with the line's expectation.
pub fn judge(expect: &Expect, outcome: &Outcome) -> Verdict {
    match (expect, outcome) {
        (_, Outcome::NotRun(why)) => Verdict::Fail(why.clone()),
        (Expect::Trap, Outcome::Trapped(signal)) if signal != "timeout" => Verdict::Pass,
        (Expect::Trap, other) => Verdict::Fail(format!("expected a trap, got {other}")),
        (_, Outcome::Trapped(signal)) => Verdict::Fail(format!("unexpected trap ({signal})")),
        (Expect::Equal(want), Outcome::Returned(effect)) => {
            let got = &effect.returns;
            if same_values(want, got) {
                Verdict::Pass
            } else {
                Verdict::Fail(format!("expected {}, got {}", list(want), list(got)))
            }
        }
        (Expect::NotEqual(want), Outcome::Returned(effect)) => {
            if same_values(want, &effect.returns) {
                Verdict::Fail(format!("expected anything but {}, got it", list(want)))
            } else {
                Verdict::Pass
            }
        }
        (Expect::Print, _) => Verdict::Skip("`print:` states no expected value".into()),
    }
}

fn list(values: &[DataValue]) -> String {
    let text: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("[{}]", text.join(", "))
}

/// Bit-for-bit equality; an integer written for the reader's bare `; run` form (an `i8` 0) is
/// compared by value with a result of another integer type.
fn same_values(want: &[DataValue], got: &[DataValue]) -> bool {
    want.len() == got.len()
        && want.iter().zip(got).all(|(w, g)| {
            if w.ty() != g.ty() && w.ty().is_int() && g.ty().is_int() {
                int_value(w) == int_value(g)
            } else {
                w.bitwise_eq(g)
            }
        })
}

fn int_value(v: &DataValue) -> Option<i128> {
    match v {
        DataValue::I8(x) => Some(i128::from(*x)),
        DataValue::I16(x) => Some(i128::from(*x)),
        DataValue::I32(x) => Some(i128::from(*x)),
        DataValue::I64(x) => Some(i128::from(*x)),
        DataValue::I128(x) => Some(*x),
        _ => None,
    }
}
