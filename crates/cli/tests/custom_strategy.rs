//! A strategy registered from outside the crates (the `custom_strategy` example's) gets a
//! `report` row, a `check` and a `list` line through `schedlab::run_cli`, and its name is
//! refused when it is not registered.
//!
//! Each case re-runs this test binary as a child whose `run_cli_child` test registers the
//! strategy (or not) and runs one command line, so the parent can read its output.

mod common;

#[allow(dead_code)] // the example's `main` and `demo`
#[path = "../../../examples/custom_strategy.rs"]
mod example;

use common::{checkable_targets, rerun_as_child, stderr, stdout, tool_usable};
use schedlab_backend::Target;
use std::process::{ExitCode, Output};

/// The command line the child runs (space-separated).
const CHILD_ARGS: &str = "SCHEDLAB_TEST_CUSTOM_STRATEGY_ARGS";
/// `1`: the child registers the example's strategy first.
const CHILD_REGISTERS: &str = "SCHEDLAB_TEST_CUSTOM_STRATEGY_REGISTERS";

/// The child: a no-op unless the parent set [`CHILD_ARGS`].
#[test]
fn run_cli_child() -> ExitCode {
    let Ok(args) = std::env::var(CHILD_ARGS) else {
        return ExitCode::SUCCESS;
    };
    if std::env::var(CHILD_REGISTERS).as_deref() == Ok("1") {
        schedlab_passes::sched::register(example::ENTRY).expect("the example's name is free");
    }
    let argv = std::iter::once("schedlab").chain(args.split(' '));
    schedlab::run_cli(argv.map(str::to_string))
}

/// Runs `schedlab args` in a child of this test binary, with or without the registration.
fn run(args: &str, register: bool) -> Output {
    let registers = if register { "1" } else { "0" };
    rerun_as_child(
        "run_cli_child",
        &[(CHILD_ARGS, args), (CHILD_REGISTERS, registers)],
    )
}

fn name() -> &'static str {
    example::ENTRY.name
}

#[test]
fn report_has_the_registered_strategy_beside_a_built_in_on_every_target() {
    let out = run(
        &format!(
            "report --kernel md5 --strategy remat-loads,{} --target all --format csv",
            name()
        ),
        true,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for strategy in ["remat-loads", name()] {
        for target in Target::ALL {
            let prefix = format!("md5,{strategy},{target},");
            let row = text.lines().find(|l| l.starts_with(&prefix));
            let spills = row.and_then(|r| r.split(',').nth(3)).map(str::parse::<u32>);
            assert!(
                matches!(spills, Some(Ok(_))),
                "no {prefix} row with spills:\n{text}"
            );
        }
    }
}

#[test]
fn report_mca_costs_the_registered_strategy() {
    if !tool_usable("llvm-mca", "llvm-14") {
        return;
    }
    let out = run(
        &format!(
            "report --kernel md5 --strategy {} --target x86_64 --format csv --mca",
            name()
        ),
        true,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // libtest's own lines surround the child's output; the header may follow one of them.
    let header: Vec<&str> = text
        .lines()
        .find_map(|l| l.find("kernel,strategy,").map(|at| &l[at..]))
        .expect("a CSV header")
        .split(',')
        .collect();
    let column = header
        .iter()
        .position(|c| *c == "mca_znver3")
        .expect("an mca_znver3 column");
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!("md5,{},x86_64,", name())))
        .expect("the strategy's row");
    let cycles = row.split(',').nth(column).map(str::parse::<f64>);
    assert!(matches!(cycles, Some(Ok(c)) if c > 0.0), "{row}");
}

#[test]
fn check_runs_the_registered_strategy() {
    let targets = checkable_targets();
    let list: Vec<&str> = targets.iter().map(|t| t.name()).collect();
    let out = run(
        &format!(
            "check --kernel md5 --strategy {} --target {}",
            name(),
            list.join(",")
        ),
        true,
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    for target in list {
        let prefix = format!("md5 {} {target} ", name());
        assert!(
            text.lines().any(|l| l.starts_with(&prefix)),
            "no {prefix}lines:\n{text}"
        );
    }
    let summary = text.lines().find(|l| l.ends_with(" passed, 0 failed"));
    assert!(summary.is_some_and(|l| !l.starts_with("0 ")), "{text}");
}

#[test]
fn list_shows_the_registered_strategy() {
    let out = run("list", true);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{} ", name())));
    assert!(
        line.is_some_and(|l| l.contains(example::ENTRY.summary)),
        "{text}"
    );
}

#[test]
fn without_registration_the_name_is_refused() {
    let out = run(&format!("report --kernel md5 --strategy {}", name()), false);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!("unknown strategy `{}`", name())),
        "{err}"
    );
}
