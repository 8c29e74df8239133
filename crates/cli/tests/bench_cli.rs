//! `schedlab bench` end to end: output shapes, the OpenSSL reference row, usage errors, absent
//! tools. No assertion depends on how fast anything ran.

mod common;

use common::{
    assert_jvm_row, json, row, rows, schedlab, schedlab_plotting, schedlab_with_path, stderr,
    tool_usable,
};
use serde_json::Value;
use std::process::Command;

/// The arguments of a quick one-repetition `schedlab bench` over `sizes`, then `rest`.
fn one_rep_bench<'a>(sizes: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["bench", "--quick", "--size", sizes, "--reps", "1"];
    args.extend_from_slice(rest);
    args
}

#[test]
fn quick_json_has_the_required_keys_and_openssl_is_the_reference() {
    let doc = json(&schedlab(&[
        "bench",
        "--quick",
        "--size",
        "64",
        "--format",
        "json",
        "--no-java",
    ]));
    assert_eq!(doc["sizes"], serde_json::json!([64]));
    for r in rows(&doc) {
        for key in [
            "impl",
            "size",
            "mb_per_s",
            "ratio_to_openssl",
            "kind",
            "samples",
        ] {
            assert!(r.get(key).is_some(), "row lacks `{key}`: {r}");
        }
    }
    let openssl = row(&doc, "openssl", 64);
    assert_eq!(openssl["ratio_to_openssl"].as_f64(), Some(1.0));
    assert_eq!(openssl["kind"], "hand-written");
    for name in ["md-5", "openssl", "schedlab/default"] {
        let r = row(&doc, name, 64);
        assert!(r["mb_per_s"].as_f64().is_some_and(|m| m > 0.0), "{r}");
        assert!(
            r["ratio_to_openssl"].as_f64().is_some_and(|x| x > 0.0),
            "{r}"
        );
    }
    assert!(
        rows(&doc)
            .iter()
            .filter(|r| r["kind"] == "schedlab")
            .count()
            >= 1
    );
    // --no-java: the JVM rows are listed, without figures, saying why.
    for name in ["hotspot/intrinsic", "hotspot/no-intrinsic"] {
        let r = row(&doc, name, 64);
        assert!(r["mb_per_s"].is_null(), "{r}");
        assert!(
            r["absent"]
                .as_str()
                .is_some_and(|a| a.contains("--no-java"))
        );
    }
    // Compile times of every schedlab configuration.
    let compile = doc["compile"].as_array().expect("compile array");
    assert!(!compile.is_empty());
    assert!(compile.iter().all(|c| c["median_us"].as_f64().is_some()));
    // The library's way (slow path on first need) and the eager one are both reported (no
    // timing comparison here: that is the bench's job, not a test's).
    let default = compile
        .iter()
        .find(|c| c["impl"] == "schedlab/default")
        .expect("the default row has a compile time");
    let lazy = default["median_us"].as_f64().expect("lazy");
    let eager = default["eager_slow_path_median_us"]
        .as_f64()
        .expect("eager compile time");
    assert!(
        lazy > 0.0 && eager > 0.0,
        "lazy {lazy} µs, eager {eager} µs"
    );
    // The first compile in a new process, measured by running `compile-probe`.
    assert!(
        doc["meta"]["first_compile_fresh_process_us"]
            .as_f64()
            .is_some_and(|us| us > 0.0)
    );
}

#[test]
fn compile_probe_prints_the_phases_of_one_compile() {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .arg("compile-probe")
        .output()
        .expect("schedlab runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    for key in ["build_us", "passes_us", "codegen_us"] {
        assert!(v[key].as_f64().is_some_and(|us| us > 0.0), "{key}: {v}");
    }
}

#[test]
fn missing_java_is_reported_in_the_rows() {
    let empty = tempfile::tempdir().expect("tempdir");
    let doc = json(&schedlab_with_path(
        &one_rep_bench(
            "64",
            &["--format", "json", "--impl", "openssl,hotspot/intrinsic"],
        ),
        Some(empty.path()),
    ));
    let r = row(&doc, "hotspot/intrinsic", 64);
    assert!(
        r["mb_per_s"].is_null() && r["ratio_to_openssl"].is_null(),
        "{r}"
    );
    assert!(
        r["absent"].as_str().is_some_and(|a| a.contains("java")),
        "{r}"
    );
}

#[test]
fn jvm_rows_are_measured_in_their_own_process_when_java_exists() {
    if !(tool_usable("java", "openjdk-17-jdk-headless")
        && tool_usable("javac", "openjdk-17-jdk-headless"))
    {
        return;
    }
    let doc = json(&schedlab(&one_rep_bench(
        "64,1k",
        &["--format", "json", "--impl", "openssl,hotspot/intrinsic"],
    )));
    for size in [64, 1024] {
        assert_jvm_row(row(&doc, "hotspot/intrinsic", size), "mb_per_s");
    }
    assert!(doc["meta"]["java_version"].is_string());
}

#[test]
fn markdown_and_table_formats_print_one_row_per_implementation() {
    for format in ["markdown", "table"] {
        let out = schedlab(&one_rep_bench("64,1k", &["--no-java", "--format", format]));
        assert!(out.status.success(), "{}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        let header = text.lines().next().unwrap_or_default();
        assert!(
            header.contains("impl") && header.contains("1 KiB"),
            "{text}"
        );
        assert!(
            text.lines()
                .any(|l| l.contains("openssl") && l.contains("1.000×"))
        );
        assert!(text.lines().any(|l| l.contains("md-5")));
        if format == "markdown" {
            assert!(header.starts_with('|'), "{text}");
        }
    }
}

#[test]
fn plot_writes_an_svg() {
    let args = one_rep_bench("64", &["--no-java", "--format", "json"]);
    let (out, text) = schedlab_plotting(&args, "--plot", "bench.svg");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = text.expect("svg written");
    assert!(text.contains("<svg") && text.contains("openssl"), "{text}");
}

#[test]
fn bad_size_is_a_usage_error_listing_valid_sizes() {
    for bad in ["64,huge", "0", "1q"] {
        let out = schedlab(&["bench", "--size", bad, "--no-java"]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("valid sizes") && err.contains("1k"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn bad_format_is_a_usage_error_listing_valid_formats() {
    let out = schedlab(&["bench", "--format", "xml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    for valid in ["table", "markdown", "json"] {
        assert!(err.contains(valid), "{err}");
    }
}

#[test]
fn unknown_implementation_and_zero_reps_are_usage_errors() {
    let out = schedlab(&["bench", "--impl", "sha1", "--no-java"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("sha1") && err.contains("openssl") && err.contains("hotspot/intrinsic"));

    let out = schedlab(&["bench", "--reps", "0", "--no-java"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn callgrind_without_valgrind_says_so() {
    let empty = tempfile::tempdir().expect("tempdir");
    let out = schedlab_with_path(
        &["bench", "--callgrind", "--impl", "openssl"],
        Some(empty.path()),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("valgrind not found"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn callgrind_counts_instructions_per_block() {
    if !tool_usable("valgrind", "valgrind") {
        return;
    }
    let doc = json(&schedlab(&[
        "bench",
        "--callgrind",
        "--impl",
        "openssl",
        "--format",
        "json",
    ]));
    let r = &rows(&doc)[0];
    assert_eq!(r["impl"], "openssl");
    // Deterministic counts: an MD5 block is hundreds of instructions on any ISA.
    let per_block = r["instructions_per_block"].as_f64().expect("number");
    assert!(per_block > 100.0 && per_block < 10_000.0, "{r}");
    assert!(
        r["instructions_64b_message"]
            .as_u64()
            .is_some_and(|n| n as f64 > per_block)
    );
}
