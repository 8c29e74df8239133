//! `schedlab report --optimum`: every block's optimum is a floor for every strategy that
//! schedules the same instructions, and the `optimal` strategy reaches it.

mod common;

use common::{schedlab, success_stdout};
use serde_json::Value;

/// `schedlab report --kernel muladd --target TARGETS --strategy STRATEGIES --optimum EXTRA…`,
/// which must succeed: its stdout.
fn muladd_optimum(targets: &str, strategies: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "report",
        "--kernel",
        "muladd",
        "--target",
        targets,
        "--strategy",
        strategies,
        "--optimum",
    ];
    args.extend_from_slice(extra);
    success_stdout(&schedlab(&args))
}

#[test]
fn optimum_bounds_every_strategy_and_optimal_reaches_it() {
    // One JSON document: the rows, the summary and the optimum section as members.
    let text = muladd_optimum(
        "x86_64,aarch64",
        "source,list-latency,pressure,balanced,optimal",
        &["--summary", "--format", "json"],
    );
    let documents: Vec<Value> = serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .expect("valid JSON");
    assert_eq!(documents.len(), 1, "one JSON document: {text}");
    let document = &documents[0];
    assert!(document["rows"].as_array().is_some_and(|r| !r.is_empty()));
    assert!(document["summary"].is_array() || document["summary"].is_object());
    let optimum = &document["optimum"];
    let blocks = optimum["blocks"].as_array().expect("blocks");
    assert!(!blocks.is_empty());
    let mut compared = 0;
    for b in blocks {
        assert_eq!(b["pressure"]["status"], "optimal", "{b}");
        let min_pressure = b["pressure"]["value"].as_u64().expect("a pressure");
        let min_length = b["length"]["value"].as_u64();
        for (name, m) in b["strategies"].as_object().expect("strategies") {
            if m["same_instructions"] != true {
                continue;
            }
            compared += 1;
            let pressure = m["pressure"].as_u64().expect("pressure");
            assert!(pressure >= min_pressure, "{name} below the minimum: {b}");
            if let (Some(l), true) = (min_length, m["within_budget"] == true) {
                assert!(m["length"].as_u64() >= Some(l), "{name} below: {b}");
            }
        }
        let optimal = &b["strategies"]["optimal"];
        match min_length {
            Some(l) => {
                assert_eq!(optimal["length"].as_u64(), Some(l), "{b}");
                assert_eq!(optimal["within_budget"], true, "{b}");
            }
            None => assert_eq!(optimal["pressure"].as_u64(), Some(min_pressure), "{b}"),
        }
    }
    assert!(compared > blocks.len(), "{compared} comparisons");
    let gaps = optimum["gaps"].as_array().expect("the gaps");
    assert_eq!(gaps.len(), 2 * 5, "two targets × five strategies");
}

#[test]
fn optimum_json_lines_are_one_document_each() {
    let text = muladd_optimum("x86_64", "source,optimal", &["--format", "jsonl"]);
    let lines: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let blocks = lines
        .iter()
        .filter(|l| l.get("optimum_block").is_some())
        .count();
    let gaps = lines
        .iter()
        .filter(|l| l.get("optimum_gap").is_some())
        .count();
    assert!(
        blocks > 0 && gaps == 2,
        "{blocks} blocks, {gaps} gap lines: {text}"
    );
}
