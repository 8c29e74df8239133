//! Every target's BigInteger machine code, executed: through the JIT and through the linked C
//! harness (guard pages on both sides of every array) on the host, under qemu for the others
//! (s390x runs the same algorithm on big-endian `int[]` memory). Checked against the Rust
//! transcription of the Java code on random operands and hostile arguments, for both entries
//! (Java wrapper checks, and the `@IntrinsicCandidate` method alone).
//!
//! Without a cross compiler or qemu the foreign targets are skipped with a message; with
//! `SCHEDLAB_REQUIRE_EMULATORS=1` they fail instead.

mod common;

use schedlab_backend::Target;
use schedlab_backend::emulate_bigint::{
    BigIntOutcome, Layout, hostile_mul_add_cases, hostile_square_cases, random_mul_add_cases,
    random_square_cases, run_cases, run_cases_linked,
};
use schedlab_kernels::bigint::{Entry, mul_add_with, square_to_len_with};

fn compare(target: Target, what: &str, got: &[BigIntOutcome], want: &[BigIntOutcome]) {
    assert_eq!(got.len(), want.len(), "{target} {what}: result count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g, w, "{target} {what}: case {i}");
    }
    eprintln!("{target} {what}: {} cases agree", got.len());
}

fn run_target(target: Target) {
    if !common::runnable(target) {
        return;
    }
    let seed = 0xb16_0000 + target as u64;
    // Random operands of 1..=200 ints (every length for square_to_len, every third for
    // mul_add), then the hostile grid.
    let squares = random_square_cases(seed, 1..=200);
    let mul_adds = random_mul_add_cases(seed, (1..=200).step_by(3));
    let hostile_squares = hostile_square_cases(seed);
    let hostile_mul_adds = hostile_mul_add_cases(seed);
    for entry in [Entry::Wrapper, Entry::Impl] {
        let square = square_to_len_with(entry);
        let mul_add = mul_add_with(entry);
        for layout in Layout::ALL {
            let how = |what: &str, linked: bool| {
                let via = if linked { "linked" } else { "run" };
                format!("{entry:?} {layout:?} {what} ({via})")
            };
            // On the host: the JIT once, and the C harness (guard pages) in every layout.
            let paths: &[bool] = if target.is_host() {
                if layout == Layout::Start {
                    &[false, true]
                } else {
                    &[true]
                }
            } else {
                &[false]
            };
            for &linked in paths {
                for (what, cases) in [("square", &squares), ("hostile square", &hostile_squares)] {
                    let want: Vec<_> = cases.iter().map(|c| c.expected(entry)).collect();
                    let got = if linked {
                        run_cases_linked(&square, target, layout, cases)
                    } else {
                        run_cases(&square, target, layout, cases)
                    };
                    let got = got.unwrap_or_else(|e| panic!("{target}: {e}"));
                    compare(target, &how(what, linked), &got, &want);
                }
                for (what, cases) in [
                    ("mul_add", &mul_adds),
                    ("hostile mul_add", &hostile_mul_adds),
                ] {
                    let want: Vec<_> = cases.iter().map(|c| c.expected(entry)).collect();
                    let got = if linked {
                        run_cases_linked(&mul_add, target, layout, cases)
                    } else {
                        run_cases(&mul_add, target, layout, cases)
                    };
                    let got = got.unwrap_or_else(|e| panic!("{target}: {e}"));
                    compare(target, &how(what, linked), &got, &want);
                }
            }
        }
    }
}

#[test]
fn x86_64_executes_bigint_kernels() {
    run_target(Target::X86_64);
}

#[test]
fn aarch64_executes_bigint_kernels_under_qemu() {
    run_target(Target::Aarch64);
}

#[test]
fn s390x_executes_bigint_kernels_under_qemu() {
    run_target(Target::S390x);
}

#[test]
fn riscv64_executes_bigint_kernels_under_qemu() {
    run_target(Target::Riscv64);
}
