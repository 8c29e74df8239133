//! `schedlab reference`: every hand-written reference loop is costed on each of its cores,
//! beside schedlab's compiled kernel on the same core, and bad requests exit 2 with a message.

mod common;

use common::{json, schedlab, stderr};
use schedlab_backend::tools::test_can_use;
use schedlab_cost::reference::REFERENCES;

#[test]
fn json_has_one_costed_row_per_reference_and_core() {
    // llvm-mca 14 and 19 are the tools; without them the rows carry errors.
    if !test_can_use(schedlab_cost::mca::mca_tool_for("neoverse-v2"))
        || !test_can_use(schedlab_cost::mca::mca_tool_for("znver3"))
    {
        return;
    }
    let out = schedlab(&["reference", "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = json(&out);
    let rows = rows.as_array().expect("a JSON array");
    let expected: usize = REFERENCES.iter().map(|r| r.cpus.len()).sum();
    assert_eq!(rows.len(), expected);
    for row in rows {
        assert!(row["error"].is_null(), "{row}");
        let reference = row["reference_cycles"].as_f64().expect("reference cycles");
        let schedlab = row["schedlab_cycles"].as_f64().expect("schedlab cycles");
        let ratio = row["ratio"].as_f64().expect("ratio");
        assert!(reference > 0.0 && schedlab > 0.0, "{row}");
        assert!((ratio - schedlab / reference).abs() < 0.01, "{row}");
    }
}

#[test]
fn a_kernel_without_a_reference_or_an_unknown_one_is_refused() {
    let out = schedlab(&["reference", "--kernel", "md5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no reference loop for kernel `md5`"),
        "{}",
        stderr(&out)
    );
    let out = schedlab(&["reference", "--kernel", "no-such-kernel"]);
    assert_eq!(out.status.code(), Some(2));
    let out = schedlab(&["reference", "--strategy", "no-such-strategy"]);
    assert_eq!(out.status.code(), Some(2));
}
