//! Loop predication is exact for induction variables counting up or down and for a second
//! induction variable in lockstep: small CLIF loops run in Cranelift's interpreter before and
//! after the pass, on boundary values of the start, the limit, the lockstep variable's start
//! and the bound — the loop failing in its first, a middle or its last iteration, or never,
//! and values that wrap. The result (including a value computed in the header and used after
//! the loop) must be the original's.
#![allow(missing_docs)]

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::Function;
use schedlab_passes::bce::{self, BceLevel};

mod common;
use common::{call_f, parse};

/// `function %f(i32 o0, i32 lim, i32 p0, i32 len) -> i32`: a loop `header(j, p, acc)` that
/// runs while `j cond lim`, checks `j + k1` and `p + k2` against `max(sext(len), 0)`, adds
/// both indices to `acc` and advances `j += step`, `p += t`. After the loop it returns
/// `acc` (a header value used after the loop); a failed check returns `acc ^ 0x5a5a`.
fn looped(cond: &str, step: i64, t: i64, k1: i64, k2: i64) -> String {
    format!(
        "function %f(i32, i32, i32, i32) -> i32 {{
block0(v0: i32, v1: i32, v2: i32, v3: i32):
    v4 = sextend.i64 v3
    v5 = iconst.i64 0
    v6 = smax v4, v5
    v7 = iconst.i32 0
    jump block1(v0, v2, v7)

block1(v10: i32, v11: i32, v12: i32):
    v13 = icmp {cond} v10, v1
    brif v13, block2, block5

block2:
    v20 = iconst.i32 {k1}
    v21 = iadd v10, v20
    v22 = sextend.i64 v21
    v23 = icmp ult v22, v6
    brif v23, block3, block6(v12)

block3:
    v30 = iconst.i32 {k2}
    v31 = iadd v11, v30
    v32 = sextend.i64 v31
    v33 = icmp ult v32, v6
    brif v33, block4, block6(v12)

block4:
    v40 = iadd v12, v31
    v47 = iconst.i32 3
    v41 = imul v40, v47
    v42 = iadd v41, v21
    v43 = iconst.i32 {step}
    v44 = iadd v10, v43
    v45 = iconst.i32 {t}
    v46 = iadd v11, v45
    jump block1(v44, v46, v42)

block5:
    return v12

block6(v50: i32):
    v51 = iconst.i32 0x5a5a
    v52 = bxor v50, v51
    return v52
}}
"
    )
}

/// The result, or `None` when the call needs more than `fuel` instructions.
fn call(func: &Function, args: [i32; 4], fuel: u64) -> Option<i32> {
    call_f(func, &args.map(DataValue::I32), Some(fuel))
}

fn starts(len: i32) -> Vec<i32> {
    let mut v = vec![i32::MIN, i32::MIN + 1, i32::MIN + 2, i32::MAX - 1, i32::MAX];
    v.extend(-4..=4);
    for d in -3..=2 {
        v.push(len.wrapping_add(d));
        v.push(len.wrapping_mul(2).wrapping_add(d));
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Runs the pass at `predicate`, compares both functions on every input, and returns
/// (loops versioned, checks left in the check-free copy, inputs compared).
fn predicated_agrees(text: &str) -> (usize, usize, usize) {
    let original = parse(text);
    let mut predicated = original.clone();
    let stats = bce::run(&mut predicated, BceLevel::Predicate).expect("bce runs");
    let fast_checks = stats
        .loops
        .iter()
        .filter(|l| l.unchecked_copy)
        .map(|l| l.checks)
        .sum();
    let mut compared = 0;
    for len in [0, 1, 2, 5, 9, i32::MAX] {
        for o0 in starts(len) {
            for lim in starts(len) {
                for p0 in [i32::MIN, -3, -1, 0, 1, 2, 4, len - 1, len, i32::MAX] {
                    let args = [o0, lim, p0, len];
                    let Some(want) = call(&original, args, 4000) else {
                        continue;
                    };
                    let got = call(&predicated, args, 6000);
                    assert_eq!(
                        got,
                        Some(want),
                        "o0={o0} lim={lim} p0={p0} len={len}\n{text}\npredicated:\n{}",
                        predicated.display()
                    );
                    compared += 1;
                }
            }
        }
    }
    (stats.loops_versioned, fast_checks, compared)
}

/// Every `looped(cond, step, t, k1, k2)` is versioned once, keeps no check in its fast copy
/// and agrees with the original on more than 10 000 calls.
fn assert_versioned_exactly(loops: &[(&str, i64, i64, i64, i64)]) {
    for &(cond, step, t, k1, k2) in loops {
        let text = looped(cond, step, t, k1, k2);
        let (versioned, left, compared) = predicated_agrees(&text);
        assert_eq!((versioned, left), (1, 0), "{text}");
        assert!(compared > 10_000, "{compared}");
    }
}

#[test]
fn counting_down_with_a_lockstep_variable_is_exact() {
    // mulAdd's shape (`j >= lim`, both -1) and variations: strict test, step -3 with the
    // second variable moving up (r = -2) or not at all (r = 0), offsets on both sides.
    assert_versioned_exactly(&[
        ("sge", -1, -1, 0, 0),
        ("sgt", -1, -1, 1, -1),
        ("sge", -3, 6, -2, 3),
        ("sgt", -3, 0, 0, 2),
        ("sge", -1, 2, 0, 1),
    ]);
}

#[test]
fn counting_up_with_a_lockstep_variable_is_exact() {
    // squareToLen's squares loop (`j < lim`, j +1, i +2) and variations.
    assert_versioned_exactly(&[
        ("slt", 1, 2, 0, 1),
        ("sle", 1, 2, 0, 0),
        ("slt", 2, -4, 1, -2),
        ("sle", 3, 3, -1, 0),
    ]);
}

#[test]
fn a_variable_not_in_lockstep_keeps_its_check() {
    // p advances by 3 while j advances by 2: not a multiple, so only j's check is proven.
    let text = looped("slt", 2, 3, 0, 0);
    let (versioned, left, _) = predicated_agrees(&text);
    assert_eq!((versioned, left), (1, 1), "{text}");
}

#[test]
fn a_test_against_the_direction_is_left_alone() {
    // Counting down with `j < lim` (or up with `j > lim`): no range, no versioning.
    for (cond, step) in [("slt", -1), ("sgt", 1)] {
        let text = looped(cond, step, step, 0, 0);
        let (versioned, _, _) = predicated_agrees(&text);
        assert_eq!(versioned, 0, "{text}");
    }
}
