//! `.wasm` modules as kernels: `report` (with the stock baseline, the summary against it, JSON
//! lines, shards), `check` and `dump` on a small real module, and the errors a bad one gives.

mod common;

use common::{schedlab, stderr, stdout, success_stdout, temp_file, untimed_rows};
use serde_json::Value;

const SMALL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../wasm/tests/fixtures/small.wasm"
);
const FUNCTIONS: [&str; 4] = ["sum_table", "fill_table", "mix", "checksum"];

fn json(args: &[&str]) -> Value {
    common::json(&schedlab(args))
}

#[test]
fn report_has_every_function_in_both_modes_beside_stock_cranelift() {
    let v = json(&[
        "report",
        "--kernel",
        SMALL,
        "--strategy",
        "source,balanced",
        "--target",
        "x86_64,aarch64",
        "--baseline",
        "--summary",
        "--format",
        "json",
    ]);
    let rows = v["rows"].as_array().expect("rows");
    for mode in ["guard", "explicit"] {
        for f in FUNCTIONS {
            let kernel = format!("small.wasm:{mode}:{f}");
            for strategy in ["source", "balanced", "cranelift-speed"] {
                for target in ["x86_64", "aarch64"] {
                    let row = rows
                        .iter()
                        .find(|r| {
                            r["kernel"] == kernel.as_str()
                                && r["strategy"] == strategy
                                && r["target"] == target
                        })
                        .unwrap_or_else(|| panic!("{kernel} {strategy} {target}"));
                    assert!(row["error"].is_null(), "{row}");
                    assert!(row["insts"].as_u64() > Some(0), "{row}");
                    assert_eq!(row["optimized"], strategy == "cranelift-speed", "{row}");
                    assert!(row["codegen_us"].as_u64().is_some(), "{row}");
                }
            }
        }
    }
    // The loop over the table: explicit checks in its loop, none with guard pages.
    let checks = |mode: &str| {
        rows.iter()
            .find(|r| {
                r["kernel"] == format!("small.wasm:{mode}:sum_table").as_str()
                    && r["strategy"] == "source"
            })
            .and_then(|r| r["loop_heap_checks_before"].as_u64())
    };
    assert_eq!(checks("guard"), Some(0));
    assert!(checks("explicit") > Some(0), "{:?}", checks("explicit"));
    let summary = v["summary"].as_array().expect("summary");
    let stock = summary
        .iter()
        .find(|s| {
            s["program"] == "small.wasm:guard"
                && s["target"] == "x86_64"
                && s["strategy"] == "cranelift-speed"
        })
        .expect("stock's own summary row");
    assert_eq!(stock["functions"], 4);
    assert_eq!(stock["ties"], 4, "stock ties with itself: {stock}");
    assert!(
        summary.iter().any(|s| s["program"] == "all"),
        "an overall row"
    );
}

#[test]
fn json_lines_from_shards_merge_into_the_summary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut files = Vec::new();
    let mut lines = 0;
    for shard in ["1/2", "2/2"] {
        let out = schedlab(&[
            "report",
            "--kernel",
            &format!("{SMALL}:guard"),
            "--strategy",
            "balanced",
            "--target",
            "x86_64",
            "--baseline",
            "--optimize-both",
            "--format",
            "jsonl",
            "--shard",
            shard,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        for line in text.lines() {
            let row: Value = serde_json::from_str(line).expect("one row per line");
            assert!(row["strategy"].is_string(), "{row}");
        }
        lines += text.lines().count();
        let path = dir.path().join(shard.replace('/', "-") + ".jsonl");
        std::fs::write(&path, text).expect("written");
        files.push(path.display().to_string());
    }
    // Four functions × (balanced, balanced+egraph, stock).
    assert_eq!(lines, 12);
    let mut args = vec!["report", "--summary-from"];
    args.extend(files.iter().map(String::as_str));
    let svg = dir.path().join("cdf.svg").display().to_string();
    args.extend(["--format", "json", "--decide", "insts", "--plot-cdf", &svg]);
    let summary = json(&args);
    let picture = std::fs::read_to_string(&svg).expect("the CDF picture");
    assert!(picture.contains("<svg") && picture.contains("balanced+egraph"));
    let rows = summary["summary"].as_array().expect("summary rows");
    assert!(summary["default_largest_losses"].is_array(), "{summary}");
    let egraph = rows
        .iter()
        .find(|s| s["strategy"] == "balanced+egraph")
        .expect("the e-graph variant");
    assert_eq!(egraph["functions"], 4);
    assert_eq!(egraph["metric"], "insts");
    assert!(
        egraph["compile_time_ratio"].as_f64() > Some(0.0),
        "{egraph}"
    );
}

/// The rows of `report --format jsonl` without the two timing columns, which differ from run
/// to run.
#[test]
fn a_function_met_again_gets_the_rows_it_gets_alone() {
    // The same module twice: every function of the second is a twin of the first's.
    let dir = tempfile::tempdir().expect("temp dir");
    for copy in ["a.wasm", "b.wasm"] {
        std::fs::copy(SMALL, dir.path().join(copy)).expect("copied");
    }
    let report = |kernel: &str| {
        schedlab(&[
            "report",
            "--kernel",
            kernel,
            "--strategy",
            "source,balanced",
            "--optimize-both",
            "--baseline",
            "--target",
            "x86_64,aarch64",
            "--format",
            "jsonl",
        ])
    };
    let both = report(&dir.path().display().to_string());
    // 2 modules × 2 modes × 4 functions × (2 strategies × 2 e-graph settings + stock) × 2 targets.
    assert!(
        stderr(&both).contains("80 of 160 rows are of functions that are an earlier"),
        "{}",
        stderr(&both)
    );
    let copied: Vec<Value> = untimed_rows(&both)
        .into_iter()
        .filter(|r| {
            r["kernel"]
                .as_str()
                .is_some_and(|k| k.starts_with("b.wasm:"))
        })
        .collect();
    let alone = untimed_rows(&report(&dir.path().join("b.wasm").display().to_string()));
    assert_eq!(copied.len(), 80);
    assert_eq!(copied, alone);
}

#[test]
fn a_run_with_the_translation_cache_gives_the_rows_of_one_without() {
    let cache = tempfile::tempdir().expect("temp dir");
    let args = [
        "report",
        "--kernel",
        SMALL,
        "--strategy",
        "source,balanced",
        "--optimize-both",
        "--baseline",
        "--target",
        "x86_64",
        "--format",
        "jsonl",
    ];
    let uncached = untimed_rows(&schedlab(&args));
    let entries = || std::fs::read_dir(cache.path()).expect("the cache").count();
    let filling = common::schedlab_with_cache(&args, cache.path());
    assert_eq!(entries(), 2, "one entry per mode");
    let reading = common::schedlab_with_cache(&args, cache.path());
    assert_eq!(entries(), 2);
    assert_eq!(untimed_rows(&filling), uncached);
    assert_eq!(untimed_rows(&reading), uncached);
    assert_eq!(stderr(&reading), stderr(&filling));
}

#[test]
fn check_verifies_schedules_and_interprets_argument_only_functions() {
    let out = schedlab(&[
        "check",
        "--kernel",
        SMALL,
        "--strategy",
        "balanced,shuffle",
        "--target",
        "x86_64",
        "--random",
        "8",
        "--quiet",
    ]);
    let text = success_stdout(&out);
    // mix needs only its arguments with guard pages (executed with both strategies, without
    // and with the e-graph); explicit mode checks the stack limit through vmctx and a call.
    let executed: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("small.wasm:guard") && l.contains(" 1/"))
        .collect();
    assert_eq!(executed.len(), 4, "{text}");
    assert!(text.contains("small.wasm:explicit"), "{text}");
}

#[test]
fn dump_prints_one_function_of_one_mode() {
    let kernel = format!("{SMALL}:explicit:sum_table");
    let out = schedlab(&["dump", "--kernel", &kernel, "--stage", "clif"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // Explicit checks branch to cold blocks that raise the trap through a call.
    assert!(text.contains(" cold:"), "{text}");
    assert_eq!(text.matches("function ").count(), 1, "{text}");
}

#[test]
fn a_bad_module_or_name_exits_2_naming_the_file_and_the_reason() {
    let (_dir, bad) = temp_file("bad.wasm", b"\0asm\x01\0\0\0\x01\xff");
    let out = schedlab(&["report", "--kernel", &bad]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("bad.wasm"), "{}", stderr(&out));
    let out = schedlab(&["dump", "--kernel", &format!("{SMALL}:guard:nope")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("nope"), "{}", stderr(&out));
    let out = schedlab(&["report", "--kernel", &format!("{SMALL}:fast")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("guard, explicit"), "{}", stderr(&out));
}
