//! `schedlab bench --kernel square-to-len | muladd` end to end: output shapes, the reference
//! rows, usage errors. No assertion depends on how fast anything ran.

mod common;

use common::{assert_jvm_row, json, row, rows, schedlab, schedlab_plotting, stderr, tool_usable};
use serde_json::Value;

const KEYS: [&str; 9] = [
    "impl",
    "kind",
    "size",
    "ints",
    "ns_per_op",
    "ratio_to_jvm_intrinsic",
    "ratio_to_jvm_no_intrinsic",
    "ratio_to_num_bigint",
    "samples",
];

#[test]
fn square_to_len_quick_json_has_the_expected_keys_and_rows() {
    let doc = json(&schedlab(&[
        "bench",
        "--kernel",
        "square-to-len",
        "--quick",
        "--no-java",
        "--format",
        "json",
    ]));
    assert_eq!(doc["kernel"], "square-to-len");
    assert_eq!(
        doc["sizes"],
        serde_json::json!(["seed", "256", "1024", "2048", "4096", "8192"])
    );
    for r in rows(&doc) {
        for key in KEYS {
            assert!(r.get(key).is_some(), "row lacks `{key}`: {r}");
        }
    }
    assert_eq!(row(&doc, "schedlab/default", "seed")["ints"], 34);
    assert_eq!(row(&doc, "schedlab/default", "seed")["bits"], 1075);
    assert_eq!(row(&doc, "schedlab/default", "8192")["ints"], 256);
    let num = row(&doc, "num-bigint", "1024");
    assert_eq!(num["ratio_to_num_bigint"].as_f64(), Some(1.0));
    assert_eq!(num["kind"], "pure-rust");
    let schedlab_rows: Vec<&Value> = rows(&doc)
        .iter()
        .filter(|r| r["kind"] == "schedlab")
        .collect();
    assert!(schedlab_rows.len() > 1, "default and each strategy");
    for r in schedlab_rows {
        assert!(r["ns_per_op"].as_f64().is_some_and(|t| t > 0.0), "{r}");
        assert!(
            r["ratio_to_num_bigint"].as_f64().is_some_and(|x| x > 0.0),
            "{r}"
        );
        // No JVM: those ratios are null, not made up.
        assert!(r["ratio_to_jvm_intrinsic"].is_null(), "{r}");
    }
    for name in [
        "hotspot/intrinsic",
        "hotspot/no-intrinsic",
        "hotspot/intrinsic/multiply",
    ] {
        let r = row(&doc, name, "256");
        assert!(r["ns_per_op"].is_null(), "{r}");
        assert!(
            r["absent"]
                .as_str()
                .is_some_and(|a| a.contains("--no-java")),
            "{r}"
        );
    }
    let compile = doc["compile"].as_array().expect("compile array");
    assert!(compile.iter().any(|c| c["impl"] == "schedlab/default"));
}

#[test]
fn muladd_is_benchmarked_too() {
    let doc = json(&schedlab(&[
        "bench",
        "--kernel",
        "muladd",
        "--quick",
        "--no-java",
        "--size",
        "seed,256",
        "--reps",
        "1",
        "--impl",
        "schedlab/default",
        "--format",
        "json",
    ]));
    assert_eq!(doc["kernel"], "muladd");
    for size in ["seed", "256"] {
        for name in ["schedlab/default", "num-bigint"] {
            let r = row(&doc, name, size);
            assert!(r["ns_per_op"].as_f64().is_some_and(|t| t > 0.0), "{r}");
        }
    }
    // --impl keeps only the named rows (num-bigint is the reference and always timed).
    assert!(rows(&doc).iter().all(|r| r["impl"] != "schedlab/source"));
}

#[test]
fn jvm_rows_are_measured_and_checked_when_java_exists() {
    if !(tool_usable("java", "openjdk-17-jdk-headless")
        && tool_usable("javac", "openjdk-17-jdk-headless"))
    {
        return;
    }
    let doc = json(&schedlab(&[
        "bench",
        "--kernel",
        "square-to-len",
        "--quick",
        "--size",
        "256",
        "--reps",
        "1",
        "--impl",
        "schedlab/default,hotspot/intrinsic,hotspot/no-intrinsic",
        "--format",
        "json",
    ]));
    for name in ["hotspot/intrinsic", "hotspot/no-intrinsic"] {
        assert_jvm_row(row(&doc, name, "256"), "ns_per_op");
    }
    let r = row(&doc, "schedlab/default", "256");
    for key in ["ratio_to_jvm_intrinsic", "ratio_to_jvm_no_intrinsic"] {
        assert!(r[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {r}");
    }
    assert!(doc["meta"]["java_version"].is_string());
}

#[test]
fn markdown_has_both_tables_and_plot_writes_an_svg() {
    let args = [
        "bench",
        "--kernel",
        "square-to-len",
        "--quick",
        "--no-java",
        "--size",
        "seed,512",
        "--reps",
        "1",
        "--format",
        "markdown",
    ];
    let (out, plot) = schedlab_plotting(&args, "--plot", "bigint.svg");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text.lines().next().unwrap_or_default();
    assert!(
        header.starts_with('|') && header.contains("seed") && header.contains("512 b"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("num-bigint") && l.contains("1.00×"))
    );
    assert!(text.contains("speed-up vs"), "{text}");
    let plot = plot.expect("svg written");
    assert!(plot.contains("<svg") && plot.contains("schedlab/default"));
}

#[test]
fn unknown_kernel_is_a_usage_error_listing_valid_ones() {
    let out = schedlab(&["bench", "--kernel", "sha1", "--no-java"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    for valid in ["md5", "square-to-len", "muladd"] {
        assert!(err.contains(valid), "{err}");
    }
}

#[test]
fn bad_sizes_rows_and_modes_are_usage_errors() {
    for bad in ["33", "seed,huge", "0"] {
        let out = schedlab(&[
            "bench",
            "--kernel",
            "square-to-len",
            "--size",
            bad,
            "--no-java",
        ]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("valid sizes") && err.contains("seed"), "{err}");
    }
    // An MD5 row is no BigInteger row; the error lists the valid ones.
    let out = schedlab(&["bench", "--kernel", "muladd", "--impl", "openssl"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("num-bigint") && err.contains("hotspot/intrinsic"));
    // Callgrind counts MD5 only.
    let out = schedlab(&["bench", "--kernel", "square-to-len", "--callgrind"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
