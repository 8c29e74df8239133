//! Running the `schedlab` binary as a user does, and reading its JSON, for the CLI tests.
#![allow(dead_code)] // each test binary uses its own part

use serde_json::Value;
use std::fmt::Display;
use std::path::Path;
use std::process::{Command, Output};

/// Runs `schedlab args…`.
pub fn schedlab(args: &[&str]) -> Output {
    schedlab_with_path(args, None)
}

/// Runs the binary, optionally with `PATH` replaced (to hide `java` or `valgrind`).
pub fn schedlab_with_path(args: &[&str], path: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedlab"));
    cmd.args(args);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    cmd.output().expect("schedlab runs")
}

/// Whether `program` (from the Debian package `package`) is installed. Skips with a message,
/// or fails under `SCHEDLAB_REQUIRE_TOOLS=1` (as in CI), when it is not.
pub fn tool_usable(program: &str, package: &str) -> bool {
    use schedlab_backend::tools::{require_program, test_can_use};
    test_can_use(require_program(program, package))
}

/// Standard output as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The JSON document a successful run printed.
pub fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        stderr(out)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout)))
}

/// The `rows` array of a bench document.
pub fn rows(doc: &Value) -> &Vec<Value> {
    doc["rows"].as_array().expect("rows is an array")
}

/// The row of implementation `name` at `size` (bytes for MD5, a label for BigInteger).
pub fn row<'a, S>(doc: &'a Value, name: &str, size: S) -> &'a Value
where
    Value: PartialEq<S>,
    S: Display + Copy,
{
    rows(doc)
        .iter()
        .find(|r| r["impl"].as_str() == Some(name) && r["size"] == size)
        .unwrap_or_else(|| panic!("no row {name} @ {size}"))
}
