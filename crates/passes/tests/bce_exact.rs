//! Merging is exact, not approximately right: small CLIF functions made only of checks run in
//! Cranelift's interpreter before and after the pass, on every boundary of `i32` and of the
//! bound, including bases where `base + k` wraps and negative offsets. The pass must also
//! refuse the merges that would not be exact (unknown bound range, different exits, a store
//! in between).
#![allow(missing_docs)]

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::Function;
use schedlab_passes::bce::{self, BceLevel};

mod common;
use common::{call_f, parse};

/// How the test function computes its bound from `len`.
#[derive(Clone, Copy)]
enum Bound {
    /// `max(sext(len) + adj, 0)`: in `0..=2^31 - 1 + adj`, as the kernels compute it.
    Clamped(i64),
    /// `uextend(len)`: up to `2^32 - 1`, too large for an exact merge.
    Unsigned,
}

/// `function %f(i32 base, i32 len) -> i32`: one check per offset, in order, each on
/// `base + k`; passing all returns 1, a failure returns the exit argument (`base`, or
/// `base + i` per check when `vary_exit`). `store_before` puts a store before that check.
fn chain(offsets: &[i64], bound: Bound, vary_exit: bool, store_before: Option<usize>) -> String {
    let mut s = String::from(
        "function %f(i32, i32) -> i32 {\n    ss0 = explicit_slot 4\n\nblock0(v0: i32, v1: i32):\n",
    );
    match bound {
        Bound::Clamped(adj) => s.push_str(&format!(
            "    v2 = sextend.i64 v1\n    v3 = iconst.i64 {adj}\n    v4 = iadd v2, v3\n    \
             v5 = iconst.i64 0\n    v6 = smax v4, v5\n"
        )),
        Bound::Unsigned => s.push_str("    v6 = uextend.i64 v1\n"),
    }
    let exit = offsets.len() + 2;
    for (i, k) in offsets.iter().enumerate() {
        let n = 100 + 10 * i;
        if i > 0 {
            s.push_str(&format!("\nblock{i}:\n"));
        }
        if store_before == Some(i) {
            s.push_str(&format!(
                "    v{} = stack_addr.i64 ss0\n    store v0, v{}\n",
                n + 9,
                n + 9
            ));
        }
        let exit_arg = if vary_exit {
            s.push_str(&format!(
                "    v{} = iconst.i32 {i}\n    v{} = iadd v0, v{}\n",
                n + 7,
                n + 8,
                n + 7
            ));
            n + 8
        } else {
            0
        };
        s.push_str(&format!(
            "    v{n} = iconst.i32 {k}\n    v{} = iadd v0, v{n}\n    v{} = sextend.i64 v{}\n    \
             v{} = icmp ult v{}, v6\n    brif v{}, block{}, block{exit}(v{exit_arg})\n",
            n + 1,
            n + 2,
            n + 1,
            n + 3,
            n + 2,
            n + 3,
            i + 1
        ));
    }
    s.push_str(&format!(
        "\nblock{}:\n    v90 = iconst.i32 1\n    return v90\n\nblock{exit}(v91: i32):\n    return v91\n}}\n",
        offsets.len()
    ));
    s
}

fn call(func: &Function, base: i32, len: i32) -> i32 {
    call_f(func, &[DataValue::I32(base), DataValue::I32(len)], None).expect("no fuel limit")
}

fn lens() -> Vec<i32> {
    vec![
        0,
        1,
        3,
        4,
        5,
        7,
        63,
        64,
        65,
        100,
        i32::MAX,
        i32::MAX - 1,
        i32::MAX - 4,
        -1,
        i32::MIN,
    ]
}

fn bases(len: i32) -> Vec<i32> {
    let mut v: Vec<i32> = (-70..=70).collect();
    for edge in [i32::MIN, i32::MAX, len] {
        for d in -70..=70 {
            v.push(edge.wrapping_add(d));
        }
    }
    v
}

/// Runs the pass at `merge` and compares both functions on every input; returns the number
/// of checks left.
fn merged_agrees(text: &str) -> usize {
    let original = parse(text);
    let mut merged = original.clone();
    bce::run(&mut merged, BceLevel::Merge).expect("bce runs");
    for len in lens() {
        for base in bases(len) {
            assert_eq!(
                call(&merged, base, len),
                call(&original, base, len),
                "base={base} len={len}\n{text}\nmerged:\n{}",
                merged.display()
            );
        }
    }
    bce::count_checks(&merged)
}

#[test]
fn md5_offsets_merge_to_one_exact_check() {
    let offsets: Vec<i64> = (0..16).map(|k| 4 * k).collect();
    assert_eq!(
        merged_agrees(&chain(&offsets, Bound::Clamped(-3), false, None)),
        1
    );
}

#[test]
fn unordered_and_negative_offsets_merge_when_exact() {
    // kmin = -3 with bound <= 2^31 - 4: a wrapped `base - 3` is >= 2^31 - 3 > bound.
    let text = chain(&[5, -3, 0, 2, 5], Bound::Clamped(-3), false, None);
    assert_eq!(merged_agrees(&text), 1);
    let text = chain(&[-4, 4], Bound::Clamped(-4), false, None);
    assert_eq!(merged_agrees(&text), 1);
}

#[test]
fn negative_offsets_that_could_wrap_into_bounds_are_not_merged() {
    // bound may be 2^31 - 1 and `i32::MIN + 1 - 4` wraps to 2^31 - 3, which passes: the
    // original accepts it, a merged check could not.
    let text = chain(&[-4, 4], Bound::Clamped(0), false, None);
    assert_eq!(merged_agrees(&text), 2);
}

#[test]
fn bound_without_a_known_range_is_not_merged() {
    let text = chain(&[0, 4, 8], Bound::Unsigned, false, None);
    assert_eq!(merged_agrees(&text), 3);
}

#[test]
fn different_exit_arguments_are_not_merged() {
    let text = chain(&[0, 4, 8], Bound::Clamped(-3), true, None);
    assert_eq!(merged_agrees(&text), 3);
}

#[test]
fn a_store_splits_the_run() {
    // Checks 0 and 1 merge; the store before check 2 starts a new run with checks 2 and 3.
    let text = chain(&[0, 4, 8, 12], Bound::Clamped(-3), false, Some(2));
    assert_eq!(merged_agrees(&text), 2);
}

#[test]
fn chain_text_is_what_the_recogniser_sees() {
    // Guard against a test that passes because nothing was recognised.
    let f = parse(&chain(&[0, 4, 8], Bound::Clamped(-3), false, None));
    assert_eq!(bce::count_checks(&f), 3);
}
