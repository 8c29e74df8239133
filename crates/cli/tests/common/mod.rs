//! Running the `schedlab` binary as a user does, and reading its JSON, for the CLI tests.
#![allow(dead_code)] // each test binary uses its own part

use serde_json::Value;
use std::fmt::Display;
use std::path::Path;
use std::process::{Command, Output};

/// A temporary directory holding one file `name` with `contents`, and the file's path.
pub fn temp_file(name: &str, contents: impl AsRef<[u8]>) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, contents).expect("write");
    (dir, path.display().to_string())
}

/// Runs `schedlab args… option FILE`, where `option` is a plot option (`--plot`,
/// `--plot-pressure`, …) and `FILE` a file `name` in a temporary directory: the output, and the
/// file's text as the run left it.
pub fn schedlab_plotting(
    args: &[&str],
    option: &str,
    name: &str,
) -> (Output, std::io::Result<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    let mut args = args.to_vec();
    args.extend([option, path.to_str().expect("UTF-8 temp path")]);
    let out = schedlab(&args);
    (out, std::fs::read_to_string(&path))
}

/// Runs `schedlab args…`.
pub fn schedlab(args: &[&str]) -> Output {
    schedlab_with_path(args, None)
}

/// Runs the binary, optionally with `PATH` replaced (to hide `java` or `valgrind`), without
/// the translation cache (a test sees Wasmtime's translation and leaves nothing behind).
pub fn schedlab_with_path(args: &[&str], path: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedlab"));
    cmd.args(args).env("SCHEDLAB_CACHE", "off");
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    cmd.output().expect("schedlab runs")
}

/// Runs `schedlab args…` with the translation cache in `cache`.
pub fn schedlab_with_cache(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .env("SCHEDLAB_CACHE", cache)
        .output()
        .expect("schedlab runs")
}

/// Whether `program` (from the Debian package `package`) is installed. Skips with a message,
/// or fails under `SCHEDLAB_REQUIRE_TOOLS=1` (as in CI), when it is not.
pub fn tool_usable(program: &str, package: &str) -> bool {
    use schedlab_backend::tools::{require_program, test_can_use};
    test_can_use(require_program(program, package))
}

/// The names of the targets a `check` in a test runs on: all four when the cross compilers
/// and qemu are installed (required in CI, see [`tool_usable`]), else the host alone.
pub fn checkable_targets() -> Vec<&'static str> {
    let foreign = [
        ("qemu-aarch64", "qemu-user"),
        ("qemu-s390x", "qemu-user"),
        ("qemu-riscv64", "qemu-user"),
        ("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
        ("s390x-linux-gnu-gcc", "gcc-s390x-linux-gnu"),
        ("riscv64-linux-gnu-gcc", "gcc-riscv64-linux-gnu"),
    ];
    let targets = if foreign.iter().all(|(p, package)| tool_usable(p, package)) {
        schedlab_backend::Target::ALL.to_vec()
    } else {
        schedlab_backend::Target::host().into_iter().collect()
    };
    targets.into_iter().map(|t| t.name()).collect()
}

/// The command line a [`cli_child`] runs (space-separated).
const CHILD_ARGS: &str = "SCHEDLAB_TEST_CHILD_ARGS";
/// `1`: the [`cli_child`] registers first.
const CHILD_REGISTERS: &str = "SCHEDLAB_TEST_CHILD_REGISTERS";

/// The body of a test named `run_cli_child` that a parent test re-runs ([`run_in_child`]): a
/// no-op unless the parent asked for a command line; then `register` (if asked) and
/// `schedlab::run_cli` of that line.
pub fn cli_child(register: impl FnOnce()) -> std::process::ExitCode {
    let Ok(args) = std::env::var(CHILD_ARGS) else {
        return std::process::ExitCode::SUCCESS;
    };
    if std::env::var(CHILD_REGISTERS).as_deref() == Ok("1") {
        register();
    }
    let argv = std::iter::once("schedlab").chain(args.split(' '));
    schedlab::run_cli(argv.map(str::to_string))
}

/// Runs `schedlab args` in a child of this test binary (its `run_cli_child` test, which calls
/// [`cli_child`]), with or without the registration.
pub fn run_in_child(args: &str, register: bool) -> Output {
    let registers = if register { "1" } else { "0" };
    rerun_as_child(
        "run_cli_child",
        &[(CHILD_ARGS, args), (CHILD_REGISTERS, registers)],
    )
}

/// [`run_in_child`] with the registration, which must succeed: the child's stdout.
pub fn run_registered(args: &str) -> String {
    let out = run_in_child(args, true);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    text
}

/// [`run_in_child`] without the registration, which must fail saying ``unknown {what} `{name}` ``.
pub fn assert_refused_unregistered(args: &str, what: &str, name: &str) {
    let out = run_in_child(args, false);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains(&format!("unknown {what} `{name}`")), "{err}");
}

/// Some line of `text` starts with `prefix`.
pub fn assert_has_line(text: &str, prefix: &str) {
    assert!(
        text.lines().any(|l| l.starts_with(prefix)),
        "no line starts with `{prefix}`:\n{text}"
    );
}

/// [`run_registered`] of `check ARGS --target …` on the [`checkable_targets`], whose
/// `N passed, 0 failed` summary must count at least one case: the targets and the output.
pub fn check_registered(args: &str) -> (Vec<&'static str>, String) {
    let targets = checkable_targets();
    let text = run_registered(&format!("check {args} --target {}", targets.join(",")));
    let summary = text.lines().find(|l| l.ends_with(" passed, 0 failed"));
    assert!(summary.is_some_and(|l| !l.starts_with("0 ")), "{text}");
    (targets, text)
}

/// Runs this test binary again, only its test `child_test`, with `vars` set: how a test
/// runs `schedlab::run_cli` in a process of its own after registering something.
pub fn rerun_as_child(child_test: &str, vars: &[(&str, &str)]) -> Output {
    let exe = std::env::current_exe().expect("the test binary's path");
    Command::new(exe)
        .args(["--exact", child_test, "--nocapture", "--test-threads=1"])
        .envs(vars.iter().copied())
        .output()
        .expect("the test binary runs")
}

/// Standard output as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The stdout of a run that must have succeeded; a failure shows its stdout and stderr.
pub fn success_stdout(out: &Output) -> String {
    let text = stdout(out);
    assert!(out.status.success(), "{text}\n{}", stderr(out));
    text
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

/// The `impl` names of a bench document's rows, sorted.
pub fn impl_names(doc: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = rows(doc)
        .iter()
        .filter_map(|r| r["impl"].as_str())
        .collect();
    names.sort_unstable();
    names
}

/// Checks a JVM row: its `figure` is a positive time or rate, and its note says the JVM ran in
/// a separate process.
pub fn assert_jvm_row(r: &Value, figure: &str) {
    assert!(r[figure].as_f64().is_some_and(|v| v > 0.0), "{r}");
    assert!(
        r["note"]
            .as_str()
            .is_some_and(|n| n.contains("separate JVM process")),
        "{r}"
    );
}

/// The JSON-lines rows of a successful `report`, without their timing columns.
pub fn untimed_rows(out: &Output) -> Vec<Value> {
    success_stdout(out)
        .lines()
        .map(|line| {
            let mut row: Value = serde_json::from_str(line).expect("one row per line");
            let columns = row.as_object_mut().expect("a row object");
            columns.remove("ir_us");
            columns.remove("codegen_us");
            row
        })
        .collect()
}
