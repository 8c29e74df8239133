//! `schedlab bench --kernel sha256` end to end with `--quick` budgets: every row is present,
//! measured, and was checked against `sha2` (the bench fails on a wrong digest, so a row with
//! figures is a verified row). No assertion depends on how fast anything ran.

mod common;

use common::{impl_names, json, row, rows, schedlab, stderr, tool_usable};

#[test]
fn every_row_is_measured_with_a_verified_digest() {
    let java = tool_usable("java", "openjdk-17-jdk-headless")
        && tool_usable("javac", "openjdk-17-jdk-headless");
    let mut args = vec![
        "bench", "--kernel", "sha256", "--quick", "--reps", "1", "--size", "64,1k", "--format",
        "json",
    ];
    if !java {
        args.push("--no-java");
    }
    let doc = json(&schedlab(&args));
    assert_eq!(doc["sizes"], serde_json::json!([64, 1024]));
    let mut names = vec!["openssl", "openssl/no-sha-ext", "sha2", "sha2/soft"];
    if java {
        names.extend(["hotspot/intrinsic", "hotspot/no-intrinsic"]);
    }
    for strategy in schedlab_passes::sched::strategy_names() {
        if strategy != "shuffle" {
            names.push(Box::leak(format!("schedlab/{strategy}").into_boxed_str()));
        }
    }
    for name in &names {
        for size in [64, 1024] {
            let r = row(&doc, name, size);
            assert!(r["absent"].is_null(), "{name} absent: {r}");
            assert!(
                r["mb_per_s"].as_f64().is_some_and(|m| m > 0.0),
                "{name} @ {size} has no figure: {r}"
            );
            assert!(
                r["ratio_to_best_schedlab"]
                    .as_f64()
                    .is_some_and(|x| x > 0.0),
                "{r}"
            );
        }
    }
    // Exactly one default, and the schedlab rows carry their compile statistics.
    let schedlab_rows: Vec<_> = rows(&doc)
        .iter()
        .filter(|r| r["kind"] == "schedlab" && r["size"] == 64)
        .collect();
    assert_eq!(
        schedlab_rows
            .iter()
            .filter(|r| r["default"] == true)
            .count(),
        1
    );
    assert!(schedlab_rows.iter().all(|r| r["spills"].is_u64()));
    // The default once more with `W` in memory: its own code (other spill figures), and the
    // ratio of the two reported.
    let default = schedlab_rows
        .iter()
        .find(|r| r["default"] == true)
        .expect("a default row");
    let in_memory_name = format!("{}/w-in-memory", default["impl"].as_str().unwrap_or(""));
    let in_memory = row(&doc, &in_memory_name, 64);
    assert!(
        in_memory["mb_per_s"].as_f64().is_some_and(|m| m > 0.0),
        "{in_memory}"
    );
    assert_ne!(
        (&in_memory["spills"], &in_memory["reloads"]),
        (&default["spills"], &default["reloads"]),
        "forwarding changed nothing: {in_memory}"
    );
    assert_eq!(doc["forwarding"]["w_in_memory"], in_memory_name.as_str());
    assert!(doc["forwarding"]["ratio"].as_f64().is_some_and(|r| r > 0.0));
    // The children said what they ran with.
    let note = |name: &str| {
        row(&doc, name, 64)["note"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(
        note("sha2/soft").contains("backend=soft"),
        "{}",
        note("sha2/soft")
    );
    assert!(
        note("openssl/no-sha-ext").contains("OPENSSL_ia32cap=:~0x20000000"),
        "{}",
        note("openssl/no-sha-ext")
    );
    if java {
        assert!(note("hotspot/no-intrinsic").contains("UseSHA256Intrinsics=false"));
        assert!(note("hotspot/intrinsic").contains("UseSHA256Intrinsics=true"));
    }
    // The spread and the goals are reported (their values are measurements, not checked).
    assert!(doc["spread"].as_array().is_some_and(|s| s.len() == 2));
    assert!(doc["goals"].as_array().is_some_and(|g| g.len() == 4));
}

#[test]
fn impl_and_strategy_select_rows_and_bad_names_are_usage_errors() {
    let doc = json(&schedlab(&[
        "bench",
        "--kernel",
        "sha256",
        "--quick",
        "--reps",
        "1",
        "--size",
        "64",
        "--format",
        "json",
        "--no-java",
        "--impl",
        "openssl",
        "--strategy",
        "pressure",
    ]));
    let names = impl_names(&doc);
    let default = format!(
        "schedlab/{}",
        schedlab_backend::pipeline::PipelineConfig::default().strategy
    );
    let mut want = vec![default.as_str(), "openssl", "schedlab/pressure"];
    want.sort_unstable();
    want.dedup();
    assert_eq!(names, want);

    let out = schedlab(&["bench", "--kernel", "sha256", "--impl", "sha1", "--no-java"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("valid:"), "{}", stderr(&out));
    let out = schedlab(&["bench", "--kernel", "sha256", "--strategy", "nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
