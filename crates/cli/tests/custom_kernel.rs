//! A kernel registered from outside the crates (the `custom_kernel` example's) gets `report`
//! rows on every target, a `check` on every target and `bench` rows beside stock Cranelift
//! through `schedlab::run_cli`, with no other change; unregistered, its name is refused.
//!
//! Each case re-runs this test binary as a child whose `run_cli_child` test registers the
//! kernel (or not) and runs one command line, so the parent can read its output.

mod common;

#[allow(dead_code)] // the example's `main` and `demo`
#[path = "../../../examples/custom_kernel.rs"]
mod example;

use common::{
    assert_has_line, assert_refused_unregistered, check_registered, cli_child, run_registered,
};
use schedlab_backend::Target;
use schedlab_kernels::registry::Kernel;
use std::process::ExitCode;

/// The child: a no-op unless a parent test runs it ([`run_in_child`]).
#[test]
fn run_cli_child() -> ExitCode {
    cli_child(|| {
        schedlab_kernels::registry::register(&example::KERNEL).expect("the name is free");
    })
}

fn name() -> &'static str {
    example::KERNEL.name()
}

#[test]
fn report_has_the_registered_kernel_on_every_target() {
    let text = run_registered(&format!(
        "report --kernel {} --strategy source,balanced --target all --format csv",
        name()
    ));
    for strategy in ["source", "balanced"] {
        for target in Target::ALL {
            assert_has_line(&text, &format!("{},{strategy},{target},", name()));
        }
    }
}

#[test]
fn check_runs_the_registered_kernel_on_every_target() {
    check_registered(&format!("--kernel {} --strategy balanced --quiet", name()));
}

#[test]
fn bench_times_the_registered_kernel_beside_stock() {
    let text = run_registered(&format!(
        "bench --kernel {} --strategy balanced --quick --reps 1 --format json",
        name()
    ));
    // libtest's own lines surround the child's output: the document is the `{…}` between.
    let (start, end) = (text.find('{'), text.rfind('}'));
    let doc: serde_json::Value = match (start, end) {
        (Some(s), Some(e)) => serde_json::from_str(&text[s..=e]).expect("JSON"),
        _ => panic!("no JSON document:\n{text}"),
    };
    let rows = doc["rows"].as_array().expect("rows");
    let configs: Vec<&str> = rows.iter().filter_map(|r| r["config"].as_str()).collect();
    assert_eq!(configs, ["cranelift-speed", "balanced"], "{doc}");
    for row in rows {
        assert!(row["error"].is_null(), "{row}");
        assert!(
            row["ns_per_call"].as_f64().is_some_and(|ns| ns > 0.0),
            "{row}"
        );
    }
}

#[test]
fn without_registration_the_name_is_refused() {
    let args = format!("report --kernel {}", name());
    assert_refused_unregistered(&args, "kernel", name());
}
