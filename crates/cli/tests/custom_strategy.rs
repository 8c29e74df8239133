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

use common::{
    assert_has_line, assert_refused_unregistered, check_registered, cli_child, run_registered,
    tool_usable,
};
use schedlab_backend::Target;
use std::process::ExitCode;

/// The child: a no-op unless a parent test runs it ([`run_in_child`]).
#[test]
fn run_cli_child() -> ExitCode {
    cli_child(|| {
        schedlab_passes::sched::register(example::ENTRY).expect("the example's name is free");
    })
}

fn name() -> &'static str {
    example::ENTRY.name
}

#[test]
fn report_has_the_registered_strategy_beside_a_built_in_on_every_target() {
    let text = run_registered(&format!(
        "report --kernel md5 --strategy remat-loads,{} --target all --format csv",
        name()
    ));
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
    let text = run_registered(&format!(
        "report --kernel md5 --strategy {} --target x86_64 --format csv --mca",
        name()
    ));
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
    let (list, text) = check_registered(&format!("--kernel md5 --strategy {}", name()));
    for target in list {
        assert_has_line(&text, &format!("md5 {} {target} ", name()));
    }
}

#[test]
fn list_shows_the_registered_strategy() {
    let text = run_registered("list");
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
    let args = format!("report --kernel md5 --strategy {}", name());
    assert_refused_unregistered(&args, "strategy", name());
}
