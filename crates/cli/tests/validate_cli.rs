//! `schedlab bench --validate-model` as a user runs it: one row per strategy with a measured
//! figure and every static model's figure and relative error (structure only: no measured
//! value is asserted, and nothing is timed).

mod common;

use common::{json, schedlab};

#[test]
fn validate_model_json_has_measured_and_static_figures_per_strategy() {
    if !cfg!(target_arch = "x86_64") {
        eprintln!("skipping: --validate-model measures x86_64 code");
        return;
    }
    let doc = json(&schedlab(&[
        "bench",
        "--validate-model",
        "--quick",
        "--format",
        "json",
    ]));
    assert!(
        doc["meta"]["clock_ghz"].as_f64().is_some_and(|c| c > 0.0),
        "{doc}"
    );
    let rows = doc["rows"].as_array().expect("rows");
    let strategies = schedlab_passes::sched::strategy_names();
    assert_eq!(
        rows.len(),
        strategies.len() - 1,
        "every strategy but shuffle"
    );
    for row in rows {
        let measured = row["measured_cycles_per_iteration"]
            .as_f64()
            .expect("a measured figure");
        assert!(measured > 0.0, "{row}");
        let models = row["models"].as_array().expect("models");
        assert!(!models.is_empty(), "{row}");
        for m in models {
            let name = m["model"].as_str().expect("model name");
            match m["cycles_per_iteration"].as_f64() {
                Some(c) => {
                    let err = m["relative_error"]
                        .as_f64()
                        .expect("an error beside a figure");
                    assert!(((c - measured) / measured - err).abs() < 1e-9, "{m}");
                }
                // A missing tool is reported, never silently dropped; in CI (tools required)
                // every model must have its figure.
                None => {
                    assert!(m["error"].as_str().is_some(), "{name}: {m}");
                    assert!(
                        std::env::var("SCHEDLAB_REQUIRE_TOOLS").as_deref() != Ok("1"),
                        "SCHEDLAB_REQUIRE_TOOLS=1 but {name} has no figure: {m}"
                    );
                    eprintln!("{name}: {}", m["error"]);
                }
            }
        }
        assert!(
            models.iter().any(|m| m["model"]
                .as_str()
                .is_some_and(|n| n.starts_with("schedlab/"))),
            "{row}"
        );
    }
}
