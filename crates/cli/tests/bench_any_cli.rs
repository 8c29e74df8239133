//! `schedlab bench --kernel` for kernels without a dedicated bench: a built-in kernel on its
//! cases, a `.clif` function on its run lines, stock Cranelift beside every strategy, each call
//! judged before it is timed. Only the shape and the verdicts are asserted, never a time.

mod common;

use common::{json, rows, schedlab, stderr, temp_file};
use serde_json::Value;
use std::path::Path;

const LOOPS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clif/loops");

/// `schedlab bench --kernel KERNEL --strategy STRATEGIES --quick --reps 1 EXTRA…`.
fn quick_bench(kernel: &str, strategies: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "bench",
        "--kernel",
        kernel,
        "--strategy",
        strategies,
        "--quick",
        "--reps",
        "1",
    ];
    args.extend_from_slice(extra);
    schedlab(&args)
}

fn configs_of(doc: &Value) -> Vec<String> {
    let mut configs: Vec<String> = rows(doc)
        .iter()
        .map(|r| r["config"].as_str().expect("config").to_string())
        .collect();
    configs.sort();
    configs.dedup();
    configs
}

/// Every row timed, no error, and the stock row is the ratios' reference.
fn assert_all_timed(doc: &Value) {
    for row in rows(doc) {
        assert!(row["error"].is_null(), "{row}");
        let ns = row["ns_per_call"].as_f64().expect("a time");
        assert!(ns > 0.0, "{row}");
        if row["config"] == "cranelift-speed" {
            assert_eq!(row["speedup_vs_stock"].as_f64(), Some(1.0), "{row}");
        } else {
            assert!(row["speedup_vs_stock"].as_f64().is_some(), "{row}");
        }
    }
}

#[test]
fn a_clif_file_is_timed_on_its_run_lines_beside_stock() {
    let file = Path::new(LOOPS).join("horner_i64.clif");
    let out = quick_bench(
        file.to_str().expect("utf-8 path"),
        "source,balanced",
        &["--format", "json"],
    );
    let doc = json(&out);
    assert_eq!(configs_of(&doc), ["balanced", "cranelift-speed", "source"]);
    let text = std::fs::read_to_string(&file).expect("the loop file");
    let run_lines = text.lines().filter(|l| l.starts_with("; run:")).count();
    assert!(run_lines > 0);
    assert_eq!(rows(&doc).len(), 3 * run_lines, "{doc}");
    assert_all_timed(&doc);
}

#[test]
fn a_kernel_that_writes_its_arrays_is_judged_after_the_timed_repeats() {
    // int-sum writes its accumulator: every repeat must start from the case's inputs, or the
    // array read back after the repeats differs from the Java model's.
    let out = quick_bench("int-sum", "balanced", &["--format", "json"]);
    let doc = json(&out);
    assert_eq!(configs_of(&doc), ["balanced", "cranelift-speed"]);
    assert_all_timed(&doc);
}

#[test]
fn a_wrong_result_is_an_error_row_and_exit_1() {
    let (_dir, file) = temp_file(
        "wrong.clif",
        "test run\nfunction %add1(i64) -> i64 {\nblock0(v0: i64):\n    v9 = iconst.i64 1\n    v1 = iadd v0, v9\n    \
         return v1\n}\n; run: %add1(1) == 3\n",
    );
    let out = quick_bench(&file, "source", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = common::stdout(&out);
    assert!(text.contains("expected [3], got [2]"), "{text}");
}

#[test]
fn bad_requests_are_usage_errors() {
    for args in [
        &["bench", "--kernel", "no-such-kernel"][..],
        &["bench", "--kernel", "int-sum", "--size", "1k"][..],
        &[
            "bench",
            "--kernel",
            "int-sum",
            "--strategy",
            "no-such-strategy",
        ][..],
    ] {
        let out = schedlab(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
}
