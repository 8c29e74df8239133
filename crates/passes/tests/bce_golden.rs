//! Golden `.clif` tests of bounds-check elimination, for a reviewer to read.
//!
//! `tests/golden/<kernel>.clif` is the kernel as the front end builds it; the test checks that
//! it still is, parses it back with `cranelift-reader`, runs the pass at each level and
//! compares the result with `tests/golden/<kernel>.<level>.clif`, whose header comment carries
//! the pass's counters. A mismatch prints a diff; re-bless with
//!
//! ```text
//! SCHEDLAB_BLESS=1 cargo test -p schedlab-passes --test bce_golden
//! ```
#![allow(missing_docs)]

use cranelift_codegen::ir::Function;
use schedlab_kernels::{int_sum, md5};
use schedlab_passes::bce::{self, BceLevel};
use std::path::PathBuf;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn blessing() -> bool {
    std::env::var_os("SCHEDLAB_BLESS").is_some_and(|v| v != "0" && !v.is_empty())
}

/// Compares `actual` with the golden file `name`, or rewrites it when blessing.
fn expect_golden(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    if blessing() {
        std::fs::create_dir_all(golden_dir()).expect("create tests/golden");
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}\nrun with SCHEDLAB_BLESS=1 to create it",
            path.display()
        )
    });
    if expected != actual {
        panic!(
            "{} differs from the pass's output (- golden, + actual):\n{}\n\
             re-bless with SCHEDLAB_BLESS=1 if the change is intended",
            path.display(),
            unified_diff(&expected, actual, 3)
        );
    }
}

/// A line diff (longest common subsequence) in unified style, with `context` lines around
/// each change.
fn unified_diff(old: &str, new: &str, context: usize) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // (tag, line): ' ' same, '-' only in old, '+' only in new.
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    let mut out = String::new();
    let mut last_printed: Option<usize> = None;
    for &k in &changed {
        let from = k.saturating_sub(context);
        let to = (k + context + 1).min(ops.len());
        let start = match last_printed {
            Some(p) if p + 1 >= from => p + 1,
            _ => {
                out.push_str(&format!("@@ op {from} @@\n"));
                from
            }
        };
        for (tag, line) in ops.iter().take(to).skip(start) {
            out.push_str(&format!("{tag}{line}\n"));
        }
        last_printed = Some(to - 1);
    }
    out
}

fn kernels() -> [(&'static str, Function); 4] {
    [
        ("md5", md5::compress_multi_block()),
        ("int_sum", int_sum::multi_block()),
        ("unmergeable", int_sum::unmergeable()),
        // A loop counting down with a second induction variable in lockstep.
        ("mul_add", schedlab_kernels::bigint::mul_add()),
    ]
}

#[test]
fn golden_before_and_after() {
    for (name, built) in kernels() {
        let before = built.display().to_string();
        expect_golden(&format!("{name}.clif"), &before);
        // The input is the file, as in a Cranelift filetest.
        let text = std::fs::read_to_string(golden_dir().join(format!("{name}.clif")))
            .expect("golden input");
        let parsed = cranelift_reader::parse_functions(&text)
            .expect("golden input parses")
            .remove(0);
        for level in [BceLevel::Merge, BceLevel::Predicate] {
            let mut func = parsed.clone();
            let stats = bce::run(&mut func, level).expect("bce runs");
            let actual = format!(
                "; bce golden: {name}.clif at level {level}\n; {stats}\n; regenerate: \
                 SCHEDLAB_BLESS=1 cargo test -p schedlab-passes --test bce_golden\n\n{}",
                func.display()
            );
            expect_golden(&format!("{name}.{level}.clif"), &actual);
        }
    }
}

#[test]
fn golden_outputs_parse_and_verify() {
    if blessing() {
        return;
    }
    let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
    for (name, _) in kernels() {
        for level in [BceLevel::Merge, BceLevel::Predicate] {
            let path = golden_dir().join(format!("{name}.{level}.clif"));
            let text = std::fs::read_to_string(&path).expect("golden output");
            let func = cranelift_reader::parse_functions(&text)
                .expect("golden output parses")
                .remove(0);
            cranelift_codegen::verify_function(&func, &flags).expect("golden output verifies");
        }
    }
}

#[test]
fn diff_shows_the_change() {
    let d = unified_diff("a\nb\nc\n", "a\nx\nc\n", 1);
    assert_eq!(d, "@@ op 0 @@\n a\n-b\n+x\n c\n");
}
