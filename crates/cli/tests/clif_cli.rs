//! `.clif` files as kernels: the run-line corpus on every target, failures that are failures,
//! panicking input that leaves the other rows, the file's targets, `report --summary`.

mod common;

use common::{schedlab, stderr, stdout, success_stdout, temp_file};
use schedlab_backend::Target;
use schedlab_backend::emulate::toolchain_status;
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clif")
}

fn corpus_file(name: &str) -> String {
    corpus().join(name).display().to_string()
}

/// The targets whose code can run here. A missing tool fails the test when
/// `SCHEDLAB_REQUIRE_TOOLS=1` (or the older `SCHEDLAB_REQUIRE_EMULATORS=1`) is set, naming the
/// Debian packages; otherwise that target is skipped with a message.
fn runnable_targets() -> Vec<Target> {
    let required = ["SCHEDLAB_REQUIRE_TOOLS", "SCHEDLAB_REQUIRE_EMULATORS"]
        .iter()
        .any(|v| std::env::var(v).as_deref() == Ok("1"));
    Target::ALL
        .into_iter()
        .filter(|&t| match toolchain_status(t) {
            Ok(_) => true,
            Err(missing) if required => panic!("SCHEDLAB_REQUIRE_TOOLS=1 but {missing}"),
            Err(missing) => {
                eprintln!("skipping {t}: {missing}");
                false
            }
        })
        .collect()
}

fn target_list(targets: &[Target]) -> String {
    targets
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(",")
}

/// The `N passed, M failed, K skipped` summary line.
fn totals(text: &str) -> (usize, usize, usize) {
    let line = text
        .lines()
        .find(|l| l.contains(" passed, ") && l.contains(" skipped"))
        .unwrap_or_else(|| panic!("no summary line in:\n{text}"));
    let num = |word: &str| -> usize {
        let words: Vec<&str> = line.split([' ', ',']).filter(|w| !w.is_empty()).collect();
        let i = words.iter().position(|w| *w == word).expect("word");
        words[i - 1].parse().expect("number")
    };
    (num("passed"), num("failed"), num("skipped"))
}

/// `schedlab COMMAND --kernel KERNEL --target TARGETS --strategy STRATEGIES EXTRA…`: the
/// output and its stdout.
fn run_on(
    command: &str,
    kernel: &str,
    targets: &str,
    strategies: &str,
    extra: &[&str],
) -> (std::process::Output, String) {
    let mut args = vec![
        command,
        "--kernel",
        kernel,
        "--target",
        targets,
        "--strategy",
        strategies,
    ];
    args.extend_from_slice(extra);
    let out = schedlab(&args);
    let text = stdout(&out);
    (out, text)
}

#[test]
fn the_corpus_has_at_least_fifty_files_with_run_lines() {
    let mut files = 0;
    let mut pending = vec![corpus()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("corpus dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "clif") {
                let text = std::fs::read_to_string(&path).expect("read");
                assert!(
                    text.contains("; run") || text.contains("; trap:") || text.contains("; print:"),
                    "{} has no run line",
                    path.display()
                );
                files += 1;
            }
        }
    }
    assert!(files >= 50, "{files} files");
}

#[test]
fn every_run_line_of_the_corpus_passes_or_is_skipped_with_its_reason_on_every_target() {
    let targets = runnable_targets();
    if targets.is_empty() {
        return;
    }
    let dir = corpus().display().to_string();
    let (out, text) = run_on(
        "check",
        &dir,
        &target_list(&targets),
        "source,pressure,shuffle",
        &["--quiet"],
    );
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    let (passed, failed, skipped) = totals(&text);
    assert_eq!(failed, 0, "{text}");
    assert!(passed > 100 * targets.len(), "{passed} passed:\n{text}");
    assert!(skipped > 0, "the hostile files' lines are skipped");
    for reason in ["expected an i64", "`print:` states no expected value"] {
        assert!(text.contains(reason), "no skip `{reason}` in:\n{text}");
    }
    if targets.contains(&Target::X86_64) {
        assert!(
            text.contains("need `set enable_llvm_abi_extensions=true`"),
            "{text}"
        );
    }
    if targets.contains(&Target::Riscv64) {
        assert!(text.contains("riscv64 without the V extension"), "{text}");
    }
    // Every target × strategy (and `off`) has a summary row.
    for t in &targets {
        for s in ["off", "source", "pressure", "shuffle"] {
            assert!(
                text.lines()
                    .any(|l| l.split_whitespace().take(2).eq([t.name(), s])),
                "no summary row {t} {s}:\n{text}"
            );
        }
    }
}

const WRONG: &str = "test run
function %double(i32) -> i32 {
block0(v0: i32):
    v1 = iadd v0, v0
    return v1
}
; run: %double(2) == 4
; run: %double(2) == 5
; run: %double(3) != 6

function %boom(i32) -> i32 {
block0(v0: i32):
    trapz v0, user1
    return v0
}
; run: %boom(0) == 0
; trap: %boom(1)
; run: %boom(2) == 2
";

#[test]
fn wrong_results_and_unexpected_traps_fail_on_every_target_without_a_crash() {
    let targets = runnable_targets();
    if targets.is_empty() {
        return;
    }
    let (_dir, path) = temp_file("wrong.clif", WRONG);
    let (out, text) = run_on("check", &path, &target_list(&targets), "source", &[]);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", stderr(&out));
    let (passed, failed, _) = totals(&text);
    // Per target and strategy (off, source): lines 7 and 18 pass, 8, 9, 16, 17 fail.
    assert_eq!(failed, 4 * 2 * targets.len(), "{text}");
    assert_eq!(passed, 2 * 2 * targets.len(), "{text}");
    for t in &targets {
        for (line, what) in [
            (8, "expected [5], got [4]"),
            (9, "expected anything but [6]"),
            (16, "unexpected trap"),
            (17, "expected a trap, got [1]"),
        ] {
            let prefix = format!("wrong.clif:{line} {}", t.name());
            assert!(
                text.lines()
                    .any(|l| l.starts_with(&prefix) && l.contains(what)),
                "no `{what}` for {prefix}:\n{text}"
            );
        }
    }
}

#[test]
fn a_panic_in_code_generation_is_one_rows_error_and_the_other_rows_survive() {
    // An i128 argument on x86_64 without `enable_llvm_abi_extensions`: Cranelift panics.
    let path = corpus_file("hostile/i128_without_abi_flag.clif");
    let (out, _) = run_on(
        "report",
        &path,
        "x86_64,aarch64",
        "source,pressure",
        &["--format", "json"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        !err.contains("RUST_BACKTRACE") && !err.contains("thread '"),
        "{err}"
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON rows");
    let rows = rows["rows"].as_array().expect("the rows");
    assert_eq!(rows.len(), 2 * 2 * 2, "every row is there");
    for row in rows {
        let failed = row["kernel"]
            .as_str()
            .is_some_and(|k| k.ends_with("%add128"))
            && row["target"] == "x86_64";
        if failed {
            let error = row["error"].as_str().unwrap_or_default();
            assert!(
                error.contains("panicked") && error.contains("i128"),
                "{row}"
            );
        } else {
            assert!(row["error"].is_null(), "{row}");
            assert!(row["insts"].as_u64().unwrap_or(0) > 0, "{row}");
        }
    }
    assert!(err.contains("2 of 8 rows failed"), "{err}");

    // The table gets a status column when a row failed.
    let (_, text) = run_on("report", &path, "x86_64", "source", &[]);
    assert!(text.starts_with("status"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("ERROR")).count(),
        1,
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("ok")).count(),
        1,
        "{text}"
    );

    // `dump` of the same function is one error message, not a crash.
    let out = schedlab(&[
        "dump", "--kernel", &path, "--target", "x86_64", "--stage", "asm",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("i128") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
}

#[test]
fn the_files_target_lines_choose_the_targets_and_an_empty_intersection_is_a_usage_error() {
    let path = corpus_file("isa_target_lines.clif");
    let out = schedlab(&[
        "report",
        "--kernel",
        &path,
        "--strategy",
        "source",
        "--format",
        "json",
    ]);
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON rows");
    let targets: Vec<&str> = rows["rows"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|r| r["target"].as_str())
        .collect();
    assert_eq!(targets, ["aarch64", "s390x"], "{}", stderr(&out));

    let out = schedlab(&["report", "--kernel", &path, "--target", "x86_64,riscv64"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("aarch64, s390x"), "{err}");
    let out = schedlab(&["check", "--kernel", &path, "--target", "x86_64"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn report_summary_gives_sums_geomeans_and_wins_against_source_per_target() {
    let dir = corpus().display().to_string();
    let summary_report = || {
        run_on(
            "report",
            &dir,
            "aarch64,s390x",
            "source,hoist-loads",
            &["--summary", "--format", "json"],
        )
    };
    let (out, _) = summary_report();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = doc["rows"].as_array().expect("rows");
    let summary = doc["summary"].as_array().expect("summary");
    assert_eq!(summary.len(), 4, "{summary:?}");
    for s in summary {
        let (target, strategy) = (s["target"].as_str(), s["strategy"].as_str());
        let group: Vec<_> = rows
            .iter()
            .filter(|r| {
                r["target"].as_str() == target
                    && r["strategy"].as_str() == strategy
                    && r["error"].is_null()
            })
            .collect();
        assert_eq!(s["kernels"].as_u64(), Some(group.len() as u64), "{s}");
        let insts: u64 = group.iter().filter_map(|r| r["insts"].as_u64()).sum();
        assert_eq!(s["insts"].as_u64(), Some(insts), "{s}");
        let wtl: u64 = ["wins", "ties", "losses"]
            .iter()
            .filter_map(|k| s[*k].as_u64())
            .sum();
        assert!(wtl <= group.len() as u64, "{s}");
        if strategy == Some("source") {
            assert_eq!(s["ties"].as_u64(), Some(group.len() as u64), "{s}");
        }
    }
    // Rows are in a deterministic order: the same command gives the same document.
    let (_, again) = summary_report();
    assert_eq!(again, stdout(&out));
}

/// `check` on one file of `semantics/`, x86_64 (run natively) and `--strategy source`, which
/// must succeed: its passed, failed and skipped counts and its stdout.
fn check_semantics_file(name: &str) -> ((usize, usize, usize), String) {
    check_semantics_file_on(name, "x86_64")
}

/// [`check_semantics_file`] on `targets` (a `--target` list).
fn check_semantics_file_on(name: &str, targets: &str) -> ((usize, usize, usize), String) {
    let path = corpus_file(&format!("semantics/{name}"));
    let (out, text) = run_on("check", &path, targets, "source", &[]);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    (totals(&text), text)
}

#[test]
fn a_file_for_targets_schedlab_does_not_build_is_skipped_with_its_reason() {
    let (counts, text) = check_semantics_file("foreign_target_only.clif");
    assert_eq!(counts, (0, 0, 2), "{text}");
    assert!(
        text.contains("foreign_target_only.clif skip: its `target` lines name only pulley64"),
        "{text}"
    );
    // With a file that runs, that file's lines decide: passed, and the exit status is 0.
    let dir = corpus().join("semantics").display().to_string();
    let out = schedlab(&["check", "--kernel", &dir, "--target", "x86_64", "--quiet"]);
    let text = success_stdout(&out);
    let (passed, failed, skipped) = totals(&text);
    assert!(passed > 0 && failed == 0 && skipped >= 2, "{text}");
}

/// Files of `semantics/` that pass on x86_64 whatever the host (run natively on an x86_64
/// host, else emulated), with their counts.
#[test]
fn semantics_files_pass_with_their_counts() {
    for (file, counts) in [
        // Four lines × (off, source), each expectation true only of the function the line
        // follows: a run line runs the function it follows whatever name it writes.
        ("run_line_follows_function.clif", (8, 0, 0)),
        // off and source: the pipeline's verifier runs see `preserve_frame_pointers`.
        ("set_flags_reach_the_verifier.clif", (2, 0, 0)),
        // A `test interpret` file runs under the interpreter before and after each strategy:
        // four lines × (off, source), the i128 ones too (compiled for x86_64 they would be
        // skipped).
        ("interpret_only.clif", (8, 0, 0)),
        // A tail function keeps its convention and `return_call`: two lines × (off, source);
        // 100,000 tail calls in constant stack.
        ("tail_call_convention.clif", (4, 0, 0)),
        // The x86 byte-shuffle fallback is provided to code without SSSE3: two lines × (off,
        // source); before, the JIT could not resolve `__cranelift_x86_pshufb`.
        ("x86_shuffle_libcall.clif", (4, 0, 0)),
    ] {
        let (got, text) = check_semantics_file(file);
        assert_eq!(got, counts, "{file}:\n{text}");
    }
}

/// Files of `semantics/` for the native executor of an x86_64 host, with their counts.
#[test]
fn semantics_files_pass_through_the_native_executor() {
    if !cfg!(target_arch = "x86_64") {
        eprintln!("skipping: the files name only x86_64, run natively on an x86_64 host");
        return;
    }
    for (file, counts) in [
        // Half and quad floats and twenty results. Before: the f16/f128 lines were skipped
        // ("not supported by schedlab's executor") and the 20-result line too ("more than 16
        // results"). 5 lines × (off, source).
        ("half_quad_floats_and_many_results.clif", (10, 0, 0)),
        // A throw through the runner's entry resumes at the handler of its tag. Before: each
        // line reaching `%__cranelift_throw` was skipped (and before that failed as a call to
        // an unknown function). Five lines × (off, source): a tag caught in the caller, a
        // catch-all, a tag passing over a frame whose handler is for another tag and a frame
        // without `try_call`, the inner frame's tag, and a line without a throw.
        ("throw_resumes_at_its_handler.clif", (10, 0, 0)),
    ] {
        let (got, text) = check_semantics_file(file);
        assert_eq!(got, counts, "{file}:\n{text}");
    }
}

/// Whether this x86_64 host has AVX-VNNI (the flag the two files below ask for).
fn host_has_avx_vnni() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avxvnni");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[test]
fn a_target_line_whose_isa_flags_the_host_lacks_is_not_run_on_the_host() {
    if !cfg!(target_arch = "x86_64") {
        eprintln!("skipping: the files name only x86_64, run natively on an x86_64 host");
        return;
    }
    // A later line the host can run takes over: 2 lines × (off, source) pass either way.
    let (counts, text) = check_semantics_file("host_lacks_isa_flag.clif");
    assert_eq!(counts, (4, 0, 0), "{text}");
    // No line the host can run: skipped with the flag named, unless the host has it.
    let (counts, text) = check_semantics_file("host_lacks_every_isa_line.clif");
    if host_has_avx_vnni() {
        assert_eq!(counts, (2, 0, 0), "{text}");
    } else {
        assert_eq!(counts, (0, 0, 2), "{text}");
        assert!(
            text.contains("needs an ISA flag this host lacks (has_avx_vnni)"),
            "{text}"
        );
    }
}

#[test]
fn a_target_line_needing_what_the_emulator_lacks_is_skipped_naming_the_flags() {
    // Before: run under qemu, these lines failed with SIGILL (Cranelift's runtest files
    // asking for riscv64 extensions or s390x arch15). Decided before anything runs, so no
    // emulator is needed here.
    let (counts, text) = check_semantics_file_on("emulator_lacks_isa_flag.clif", "s390x,riscv64");
    assert_eq!(counts, (0, 0, 4), "{text}");
    for flags in ["has_mie4, has_vxrs_ext3", "has_zcb"] {
        assert!(
            text.contains(&format!("qemu-user 7.2 does not emulate ({flags})")),
            "{text}"
        );
    }
}

/// A file whose throw finds no handler: tag 2 where only tag 1 is caught, and a throw whose
/// frame pointers delimit no frames (entry 0).
const UNCAUGHT_THROW: &str = "test run
set preserve_frame_pointers=true
target x86_64

function %throw(i64, i32) tail {
    fn0 = %__cranelift_throw(i64, i64, i64, i32, i64, i64)
block0(v0: i64, v1: i32):
    v2 = get_frame_pointer.i64
    v3 = load.i64 v2
    v4 = get_return_address.i64
    v5 = iconst.i64 0
    call fn0(v0, v3, v4, v1, v5, v5)
    return
}

function %catch_tag1(i64, i32) -> i64 tail {
    sig0 = (i64, i32) tail
    fn0 = %throw(i64, i32) tail
block0(v0: i64, v1: i32):
    try_call fn0(v0, v1), sig0, block1(), [ tag1: block2(exn0) ]
block1:
    v2 = iconst.i64 0
    return v2
block2(v3: i64):
    v4 = iconst.i64 1
    return v4
}

function %throw_tag(i32) -> i64 {
    fn0 = %catch_tag1(i64, i32) -> i64 tail
block0(v0: i32):
    v1 = get_frame_pointer.i64
    v2 = call fn0(v1, v0)
    return v2
}
; run: %throw_tag(1) == 1
; run: %throw_tag(2) == 1

function %no_entry_frame(i32) -> i64 {
    fn0 = %throw(i64, i32) tail
block0(v0: i32):
    v1 = iconst.i64 0
    call fn0(v1, v0)
    v2 = iconst.i64 1
    return v2
}
; run: %no_entry_frame(5) == 1
";

#[test]
fn a_throw_without_a_handler_fails_its_line_naming_the_tag() {
    if !cfg!(target_arch = "x86_64") {
        eprintln!("skipping: the executor provides the throw entry on an x86_64 host only");
        return;
    }
    let (_dir, path) = temp_file("uncaught_throw.clif", UNCAUGHT_THROW);
    let (out, text) = run_on("check", &path, "x86_64", "source", &[]);
    // A failure, not a crash: exit 1, the caught line passes, the others fail with the reason.
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", stderr(&out));
    assert_eq!(totals(&text), (2, 4, 0), "{text}");
    assert!(
        text.contains(
            "uncaught exception: the throw of tag 2 through %__cranelift_throw found no handler"
        ),
        "{text}"
    );
    assert!(
        text.contains("called with tag 5 and frame pointers that delimit no frames"),
        "{text}"
    );
}

#[test]
fn a_line_reaching_the_throw_entry_under_emulation_is_skipped_with_that_reason() {
    // The qemu C harness has no throw entry (notes/clif-semantics.md, rule 9). Decided before
    // anything runs, so no emulator is needed here.
    let text = UNCAUGHT_THROW.replace(
        "target x86_64",
        "target aarch64\ntarget s390x\ntarget riscv64",
    );
    let (_dir, path) = temp_file("throw_under_emulation.clif", &text);
    let (out, text) = run_on("check", &path, "aarch64,s390x,riscv64", "source", &[]);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    // Three lines × (off, source) × three targets.
    assert_eq!(totals(&text), (0, 0, 18), "{text}");
    assert!(
        text.contains("provides only to native code on an x86_64 host"),
        "{text}"
    );
}
