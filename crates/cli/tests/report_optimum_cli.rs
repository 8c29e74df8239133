//! `schedlab report --optimum`: every block's optimum is a floor for every strategy that
//! schedules the same instructions, and the `optimal` strategy reaches it.

mod common;

use common::{schedlab, stderr, stdout};
use serde_json::Value;

#[test]
fn optimum_bounds_every_strategy_and_optimal_reaches_it() {
    // The JSON of `--optimum` follows the rows' JSON array: read both documents in turn.
    let out = schedlab(&[
        "report",
        "--kernel",
        "muladd",
        "--target",
        "x86_64,aarch64",
        "--strategy",
        "source,list-latency,pressure,balanced,optimal",
        "--optimum",
        "--summary",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let documents: Vec<Value> = serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .expect("valid JSON documents");
    let optimum = documents.last().expect("the --optimum document");
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
    let gaps = optimum["gaps"].as_array().expect("--summary adds the gaps");
    assert_eq!(gaps.len(), 2 * 5, "two targets × five strategies");
}
