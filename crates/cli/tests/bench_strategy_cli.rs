//! `schedlab bench --strategy NAMES`: one `schedlab/<name>` row per named strategy, timed with
//! the rows `--impl` keeps; unknown names are a usage error listing the valid ones.

mod common;

use common::{impl_names, json, row, schedlab, stderr};

#[test]
fn a_named_strategy_gets_its_own_row_beside_the_selected_ones() {
    // `shuffle` is a registered strategy that the default row list leaves out.
    let doc = json(&schedlab(&[
        "bench",
        "--strategy",
        "shuffle",
        "--impl",
        "md-5",
        "--quick",
        "--reps",
        "1",
        "--size",
        "64",
        "--no-java",
        "--format",
        "json",
    ]));
    let names = impl_names(&doc);
    assert_eq!(names, ["md-5", "openssl", "schedlab/shuffle"]);
    let shuffle = row(&doc, "schedlab/shuffle", 64);
    assert_eq!(shuffle["kind"], "schedlab");
    assert!(
        shuffle["mb_per_s"].as_f64().is_some_and(|m| m > 0.0),
        "{shuffle}"
    );
}

#[test]
fn an_unknown_strategy_is_a_usage_error_listing_the_valid_ones() {
    let out = schedlab(&["bench", "--strategy", "no-such-strategy", "--no-java"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("unknown strategy `no-such-strategy`"), "{err}");
    assert!(err.contains("remat-loads"), "{err}");
}
