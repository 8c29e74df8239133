//! `md5-mb` through the CLI: registered, `report`, `check` (riscv64 reported unsupported)
//! and `bench --kernel md5-mb` JSON rows.

mod common;

use common::{json, rows, schedlab, stderr, success_stdout};
use std::process::Output;

/// `schedlab bench --kernel KERNEL --quick --size 4k --impl IMPLS --format json`: the document,
/// whose rows must be named `names` in order.
fn quick_bench(kernel: &str, impls: &str, names: &[&str]) -> serde_json::Value {
    let out = schedlab(&[
        "bench", "--kernel", kernel, "--quick", "--size", "4k", "--impl", impls, "--format", "json",
    ]);
    let doc = json(&out);
    let got: Vec<&str> = rows(&doc)
        .iter()
        .filter_map(|r| r["impl"].as_str())
        .collect();
    assert_eq!(got, names, "{doc}");
    doc
}

/// `schedlab COMMAND --kernel md5-mb --strategy STRATEGIES --target TARGETS EXTRA…`.
fn md5_mb(command: &str, strategies: &str, targets: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        command,
        "--kernel",
        "md5-mb",
        "--strategy",
        strategies,
        "--target",
        targets,
    ];
    args.extend_from_slice(extra);
    schedlab(&args)
}

/// [`md5_mb`] `check … --random N EXTRA…`, which must succeed: its stdout.
fn check_md5_mb(strategies: &str, targets: &str, random: &str, extra: &[&str]) -> String {
    success_stdout(&md5_mb(
        "check",
        strategies,
        targets,
        &[&["--random", random], extra].concat(),
    ))
}

#[test]
fn report_has_both_lane_counts_and_no_check_left_in_the_hot_loop() {
    let out = md5_mb(
        "report",
        "remat-loads",
        "x86_64,aarch64,riscv64",
        &["--format", "json"],
    );
    let doc = json(&out);
    let rows = doc["rows"].as_array().expect("report rows");
    let kernels: Vec<&str> = rows.iter().filter_map(|r| r["kernel"].as_str()).collect();
    assert_eq!(
        kernels.iter().filter(|k| **k == "md5-mb-x4").count(),
        2,
        "{doc}"
    );
    assert_eq!(
        kernels.iter().filter(|k| **k == "md5-mb-x8").count(),
        2,
        "{doc}"
    );
    assert!(
        stderr(&out).contains("riscv64") && stderr(&out).contains("unsupported"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn check_runs_on_the_host_and_reports_riscv64_unsupported() {
    let text = check_md5_mb("remat-loads", "x86_64,riscv64", "9", &[]);
    assert!(text.contains("riscv64 UNSUPPORTED"), "{text}");
    assert!(
        text.contains("in lane 7"),
        "RFC vectors in every lane: {text}"
    );
    assert!(text.trim_end().ends_with(" 0 failed"), "{text}");
}

#[test]
fn bench_json_rows_have_aggregate_throughput_and_ratio() {
    let doc = quick_bench(
        "md5-mb",
        "schedlab-mb/x4/remat-loads,schedlab-mb/x8/remat-loads",
        &[
            "schedlab-mb/x4/remat-loads",
            "schedlab-mb/x8/remat-loads",
            "openssl",
        ],
    );
    for row in rows(&doc) {
        for key in ["impl", "size", "mb_per_s", "ratio_to_openssl", "lanes"] {
            assert!(row.get(key).is_some(), "missing {key} in {row}");
        }
        assert_eq!(row["size"], 4096);
        assert!(row["mb_per_s"].as_f64().is_some_and(|v| v > 0.0), "{row}");
    }
}

#[test]
fn streams_bench_rows_go_through_the_engine_and_name_the_one_stream_ratio() {
    let doc = quick_bench(
        "md5-streams",
        "lanes/1 streams,lanes/4 streams,library (1 stream)",
        &[
            "lanes/1 streams",
            "lanes/4 streams",
            "library (1 stream)",
            "openssl",
        ],
    );
    let rows = rows(&doc);
    for row in rows {
        assert_eq!(row["size"], 4096);
        assert!(row["mb_per_s"].as_f64().is_some_and(|v| v > 0.0), "{row}");
        assert!(
            row["ratio_to_openssl"].as_f64().is_some_and(|v| v > 0.0),
            "{row}"
        );
    }
    assert_eq!(rows[1]["messages"], 4, "{doc}");
    let one = &doc["one_stream_engine_over_library"][0];
    assert!(one.as_f64().is_some_and(|v| v > 0.0), "{doc}");
    // Lane use of the engine rows: one stream never calls the lane kernel, four share it.
    let used = doc["lane_use"].as_array().expect("lane_use");
    assert_eq!(used.len(), 2, "{doc}");
    assert_eq!(used[0]["impl"], "lanes/1 streams", "{doc}");
    assert_eq!(used[0]["lane_rounds"], 0, "{doc}");
    assert_eq!(used[1]["lanes"], doc["library_lanes"], "{doc}");
    assert!(
        used[1]["lane_blocks"].as_u64().is_some_and(|b| b > 0),
        "{doc}"
    );
}

#[test]
fn streams_bench_times_the_word_area_beside_the_register_form() {
    // Both rows are checked against OpenSSL's digest before timing (a wrong kernel is an error).
    let doc = quick_bench(
        "md5-streams",
        "block fn x8,block fn x8 regs",
        &["block fn x8 regs", "block fn x8", "openssl"],
    );
    let rows = rows(&doc);
    for row in &rows[..2] {
        assert_eq!(row["messages"], 8, "{row}");
        assert!(
            row["ratio_to_openssl"].as_f64().is_some_and(|v| v > 0.0),
            "{row}"
        );
    }
}

/// Emulator-dependent: skipped with a message unless the tools are present, mandatory when
/// `SCHEDLAB_REQUIRE_EMULATORS=1` or `SCHEDLAB_REQUIRE_TOOLS=1`.
fn emulators_ready() -> bool {
    let tools = [
        "qemu-aarch64",
        "qemu-s390x",
        "aarch64-linux-gnu-gcc",
        "s390x-linux-gnu-gcc",
    ];
    let have = tools
        .iter()
        .all(|p| schedlab_backend::emulate::find_program(p).is_some());
    let required = ["SCHEDLAB_REQUIRE_EMULATORS", "SCHEDLAB_REQUIRE_TOOLS"]
        .iter()
        .any(|v| std::env::var(v).as_deref() == Ok("1"));
    if !have && required {
        panic!(
            "qemu-user / cross gcc missing (Debian: qemu-user gcc-aarch64-linux-gnu \
             gcc-s390x-linux-gnu libc6-dev-arm64-cross libc6-dev-s390x-cross)"
        );
    }
    if !have {
        eprintln!("skipping: qemu-user or cross gcc missing");
    }
    have
}

#[test]
fn check_passes_on_aarch64_and_s390x_under_qemu() {
    if !emulators_ready() {
        return;
    }
    let text = check_md5_mb("remat-loads,pressure", "aarch64,s390x", "6", &["--quiet"]);
    assert!(text.trim_end().ends_with(" 0 failed"), "{text}");
}

#[test]
fn check_passes_for_the_hybrid_kernels_on_every_target() {
    // x86_64 natively; AArch64 and s390x (big-endian: the scalar lanes' words byte-swapped)
    // under qemu when the emulators are present.
    let targets = if emulators_ready() {
        "x86_64,aarch64,s390x"
    } else {
        "x86_64"
    };
    let text = success_stdout(&schedlab(&[
        "check",
        "--kernel",
        "md5-mb-hybrid",
        "--strategy",
        "remat-loads",
        "--target",
        targets,
        "--forward-stores",
        "off",
        "--random",
        "6",
        "--quiet",
    ]));
    assert!(text.trim_end().ends_with(" 0 failed"), "{text}");
}

#[test]
fn streams_bench_checks_every_lane_of_a_hybrid_kernel() {
    // The row's digests are checked in all nine lanes (the scalar one too) before timing.
    let doc = quick_bench(
        "md5-streams",
        "block fn x8+s1",
        &["block fn x8+s1", "openssl"],
    );
    let row = &rows(&doc)[0];
    assert_eq!(row["messages"], 9, "{row}");
    assert!(
        row["ratio_to_openssl"].as_f64().is_some_and(|v| v > 0.0),
        "{row}"
    );
}

#[test]
fn streams_bench_block_function_inputs_and_strategies_are_checked_rows() {
    // Separate copies, placed copies, the engine's copy-then-compress and another strategy:
    // every lane of each is checked against the reference before timing.
    let doc = quick_bench(
        "md5-streams",
        "block fn x8 by source,block fn x8 distinct,block fn x8 distinct placed,block fn x8 copied",
        &[
            "block fn x8 by source",
            "block fn x8 distinct",
            "block fn x8 distinct placed",
            "block fn x8 copied",
            "openssl",
        ],
    );
    for row in rows(&doc).iter().take(4) {
        assert_eq!(row["messages"], 8, "{row}");
        assert!(
            row["ratio_to_openssl"].as_f64().is_some_and(|v| v > 0.0),
            "{row}"
        );
    }
}

/// `schedlab bench --kernel md5-streams --quick --size 4k --impl IMPLS`, which must fail
/// without a panic: its stderr.
fn refused_streams_bench(impls: &str) -> String {
    let out = schedlab(&[
        "bench",
        "--kernel",
        "md5-streams",
        "--quick",
        "--size",
        "4k",
        "--impl",
        impls,
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn streams_bench_refuses_an_unknown_strategy_with_its_name() {
    let err = refused_streams_bench("block fn x8 by no-such-order");
    assert!(err.contains("no-such-order"), "{err}");
}

#[test]
fn streams_bench_feeds_the_engine_updates_of_another_size() {
    let doc = quick_bench(
        "md5-streams",
        "lanes/4 streams in 1k updates",
        &["lanes/4 streams in 1k updates", "openssl"],
    );
    let row = &rows(&doc)[0];
    assert_eq!(row["messages"], 4, "{row}");
    let err = refused_streams_bench("lanes/four streams in 1k updates");
    assert!(err.contains("stream count"), "{err}");
}

#[test]
fn streams_bench_feeds_the_engine_in_a_shuffled_order() {
    // Every stream's digest is checked against OpenSSL before timing, whatever order its
    // pieces came in; the lane use of each row is reported.
    let doc = quick_bench(
        "md5-streams",
        "lanes/4 streams in random order,lanes/4 streams in 1k updates in random order",
        &[
            "lanes/4 streams in random order",
            "lanes/4 streams in 1k updates in random order",
            "openssl",
        ],
    );
    for row in rows(&doc).iter().take(2) {
        assert_eq!(row["messages"], 4, "{row}");
    }
    let used: Vec<&str> = doc["lane_use"]
        .as_array()
        .expect("lane use")
        .iter()
        .filter_map(|u| u["impl"].as_str())
        .collect();
    assert!(
        used.contains(&"lanes/4 streams in 1k updates in random order"),
        "{used:?}"
    );
    let err = refused_streams_bench("lanes/4 streams in 0k updates in random order");
    assert!(err.contains("size"), "{err}");
}
