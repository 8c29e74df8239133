//! One contract for every command: an empty or duplicated list, a target no file names, a
//! function that does not verify, `--random` where it cannot apply, a closed pipe, and picking
//! one function of a file.

mod common;

use common::{json, rows, schedlab, stderr, stdout, temp_file};
use std::io::Write;
use std::process::{Command, Stdio};

const TWO_FUNCTIONS: &str = "crates/cli/tests/clif/call_simple.clif";

/// A path relative to the workspace root, as the tests see it.
fn workspace_path(relative: &str) -> String {
    format!("{}/../../{relative}", env!("CARGO_MANIFEST_DIR"))
}

fn assert_usage_error(args: &[&str], needle: &str) {
    let out = schedlab(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{args:?} printed {}", stdout(&out));
    assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
}

#[test]
fn an_empty_strategy_or_target_list_is_a_usage_error() {
    assert_usage_error(&["report", "--strategy", ""], "names no strategy");
    assert_usage_error(&["report", "--strategy", " , "], "names no strategy");
    assert_usage_error(&["report", "--target", ""], "names no target");
    assert_usage_error(&["dump", "--target", ","], "names no target");
    assert_usage_error(&["check", "--target", ""], "names no target");
}

#[test]
fn a_target_that_no_file_names_is_a_usage_error() {
    let (dir, _) = temp_file(
        "only_aarch64.clif",
        "target aarch64\nfunction %f(i32) -> i32 {\nblock0(v0: i32):\n return v0\n}\n",
    );
    let dir_arg = dir.path().display().to_string();
    assert_usage_error(
        &["report", "--kernel", &dir_arg, "--target", "x86_64"],
        "nothing to report",
    );
}

#[test]
fn repeated_names_give_one_row_each() {
    let out = schedlab(&[
        "report",
        "--strategy",
        "source,source,balanced",
        "--target",
        "x86_64,x86_64",
        "--kernel",
        "int-sum,int-sum",
        "--format",
        "json",
    ]);
    let doc = json(&out);
    let rows = rows(&doc);
    let keys: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {} {}", r["kernel"], r["strategy"], r["target"]))
        .collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_ne!(keys[0], keys[1]);
}

#[test]
fn a_function_that_does_not_verify_is_reported_once_with_exit_2() {
    // `iadd` of an i32 and an i64: parses, but the verifier rejects it.
    let (_dir, file) = temp_file(
        "ill_typed.clif",
        "function %f(i32, i64) -> i32 {\nblock0(v0: i32, v1: i64):\n v2 = iadd v0, v1\n return v2\n}\n",
    );
    let out = schedlab(&["report", "--kernel", &file, "--strategy", "all"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("does not verify").count(), 1, "{err}");
    assert!(err.contains("ill_typed.clif:%f"), "{err}");
}

#[test]
fn random_cases_do_not_apply_to_clif_files() {
    let file = workspace_path(TWO_FUNCTIONS);
    assert_usage_error(
        &["check", "--kernel", &file, "--random", "5"],
        "--random applies to built-in kernels",
    );
}

#[test]
fn dump_takes_a_list_and_one_function_of_a_file() {
    let file = workspace_path(TWO_FUNCTIONS);
    let whole = schedlab(&["dump", "--kernel", &file, "--stage", "clif"]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    let functions = stdout(&whole).matches("function %").count();
    assert!(functions >= 2, "{}", stdout(&whole));

    let first = stdout(&whole)
        .lines()
        .find_map(|l| l.strip_prefix("function %"))
        .and_then(|rest| rest.split('(').next())
        .expect("a function name")
        .to_string();
    for spec in [format!("{file}:%{first}"), format!("{file}:{first}")] {
        let one = schedlab(&["dump", "--kernel", &spec, "--stage", "clif"]);
        assert!(one.status.success(), "{spec}: {}", stderr(&one));
        assert_eq!(stdout(&one).matches("function %").count(), 1, "{spec}");
        assert!(stdout(&one).contains(&format!("function %{first}(")));
    }

    let listed = schedlab(&[
        "dump",
        "--kernel",
        &format!("int-sum,{file}:%{first}"),
        "--stage",
        "clif",
    ]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert_eq!(
        stdout(&listed).matches("function ").count(),
        2,
        "{}",
        stdout(&listed)
    );

    assert_usage_error(
        &["dump", "--kernel", &format!("{file}:%nope")],
        "defines no function %nope",
    );
}

#[test]
fn a_closed_pipe_ends_dump_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["dump", "--stage", "asm", "--kernel", "sha256"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("schedlab runs");
    // Close the reading end at once, as `| head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("waits");
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
    let _ = std::io::stderr().flush();
}
