//! `schedlab list`: every kernel, strategy, target and CPU model with one line, as a table and
//! as JSON.

mod common;

use common::{json, schedlab, stderr, stdout};
use schedlab_backend::Target;
use schedlab_backend::pipeline::DEFAULT_STRATEGY;
use schedlab_cost::mca::mca_cpus;

const SECTIONS: [&str; 4] = ["kernels", "strategies", "targets", "cpus"];

/// The names a section must list, in order.
fn expected(section: &str) -> Vec<String> {
    let strings = |v: Vec<&str>| v.into_iter().map(String::from).collect();
    match section {
        "kernels" => strings(schedlab_kernels::registry::names()),
        "strategies" => strings(schedlab_passes::sched::strategy_names()),
        "targets" => strings(Target::ALL.iter().map(|t| t.name()).collect()),
        _ => strings(
            Target::ALL
                .iter()
                .flat_map(|&t| mca_cpus(t).iter().copied())
                .collect(),
        ),
    }
}

#[test]
fn json_lists_every_name_with_a_summary_and_marks_the_default_strategy() {
    let doc = json(&schedlab(&["list", "--format", "json"]));
    for section in SECTIONS {
        let items = doc[section]
            .as_array()
            .unwrap_or_else(|| panic!("{section} array"));
        let names: Vec<String> = items
            .iter()
            .map(|i| i["name"].as_str().expect("a name").to_string())
            .collect();
        assert_eq!(names, expected(section), "{section}");
        for item in items {
            let summary = item["summary"].as_str().unwrap_or("");
            assert!(!summary.trim().is_empty(), "{section}: {item}");
        }
    }
    let defaults: Vec<&str> = doc["strategies"]
        .as_array()
        .expect("strategies")
        .iter()
        .filter(|s| s["default"] == true)
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(defaults, [DEFAULT_STRATEGY]);
}

#[test]
fn table_has_a_section_per_kind_and_a_line_per_name() {
    let out = schedlab(&["list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for section in SECTIONS {
        let body: Vec<&str> = text
            .split(&format!("{section}:\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("no {section} section:\n{text}"))
            .lines()
            .take_while(|l| l.starts_with("  "))
            .collect();
        let names: Vec<String> = body
            .iter()
            .filter_map(|l| l.split_whitespace().next())
            .map(String::from)
            .collect();
        assert_eq!(names, expected(section), "{section}:\n{text}");
        assert!(
            body.iter().all(|l| l.split_whitespace().count() > 1),
            "{text}"
        );
    }
    let default_line = text
        .lines()
        .find(|l| l.contains("(default)"))
        .unwrap_or_default();
    assert_eq!(
        default_line.split_whitespace().next(),
        Some(DEFAULT_STRATEGY)
    );
}

#[test]
fn an_unknown_format_is_a_usage_error() {
    let out = schedlab(&["list", "--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("table"), "{}", stderr(&out));
}
