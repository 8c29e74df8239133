//! `--forward-stores on|off` on `dump`, `check` and `report`: with the pass, `sha256-local`'s
//! forwarded stage has no `W` load or store left and its slot is empty; without it the
//! forward stage is the BCE stage; `check` passes either way; a bad value exits with status 2.

mod common;

use common::{json, schedlab, stderr, stdout};

fn dump(kernel: &str, stage: &str, forward: &str) -> String {
    let out = schedlab(&[
        "dump",
        "--kernel",
        kernel,
        "--stage",
        stage,
        "--slow-path",
        "lazy",
        "--forward-stores",
        forward,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

/// Lines that access `W` (alias region "int[] W" is `region2`).
fn w_accesses(text: &str) -> usize {
    text.lines()
        .filter(|l| (l.contains("load") || l.contains("store")) && l.contains("region2"))
        .count()
}

#[test]
fn dump_shows_the_forward_stage() {
    let bce = dump("sha256-local", "bce", "on");
    assert_eq!(w_accesses(&bce), 64 + 4 * 48 + 64, "{bce}");
    let forwarded = dump("sha256-local", "forward", "on");
    assert_eq!(w_accesses(&forwarded), 0, "{forwarded}");
    assert!(forwarded.contains("explicit_slot 0"), "{forwarded}");
    // The visible W keeps its 64 stores; its loads are gone.
    let visible = dump("sha256", "forward", "on");
    assert_eq!(w_accesses(&visible), 64, "{visible}");
    assert_eq!(dump("sha256-local", "forward", "off"), bce);
}

#[test]
fn check_passes_with_and_without_forwarding() {
    for forward in ["on", "off"] {
        let out = schedlab(&[
            "check",
            "--kernel",
            "sha256,sha256-local",
            "--target",
            "x86_64",
            "--forward-stores",
            forward,
            "-q",
        ]);
        assert!(out.status.success(), "{forward}: {}", stderr(&out));
        assert!(stdout(&out).contains(" 0 failed"), "{}", stdout(&out));
    }
}

#[test]
fn report_rows_change_only_for_sha256() {
    let rows = |kernel: &str, forward: &str| {
        json(&schedlab(&[
            "report",
            "--kernel",
            kernel,
            "--strategy",
            "source",
            "--target",
            "x86_64",
            "--forward-stores",
            forward,
            "--format",
            "json",
        ]))
    };
    assert_eq!(rows("md5", "on"), rows("md5", "off"));
    assert_ne!(rows("sha256-local", "on"), rows("sha256-local", "off"));
}

#[test]
fn a_bad_value_is_a_usage_error() {
    let out = schedlab(&["dump", "--kernel", "sha256", "--forward-stores", "maybe"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("maybe"), "{}", stderr(&out));
}
