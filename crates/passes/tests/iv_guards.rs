//! `iv::guards` (branches a down-counting induction variable's bounds decide) and `iv::fold`
//! (comparisons of constants in entry tests) are exact: small CLIF functions run in Cranelift's
//! interpreter before and after the pass on boundary inputs and must agree; the verifier must
//! accept every result; and the pass must act exactly where its proof applies — not on a guard
//! whose entry check is missing, whose offset is positive, or whose variable counts up.
#![allow(missing_docs)]

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::Function;
use cranelift_interpreter::interpreter::InterpreterError;
use cranelift_interpreter::step::ControlFlow;
use schedlab_passes::iv::{fold, guards};

mod common;
use common::{interpreter, parse, verify};

/// `%f(len, n) -> i32`: returns -1 if `entry_check` and `len > n`; else for `i = len` while
/// `i > 0` (`i += step`): returns -1 if `i + k > n`, otherwise sums `i + k`; returns the sum.
fn counted(entry_check: bool, k: i32, step: i32) -> String {
    let entry = if entry_check {
        "    v2 = icmp sgt v0, v1\n    brif v2, block9, block1\n"
    } else {
        "    jump block1\n"
    };
    format!(
        "function %f(i32, i32) -> i32 {{
block0(v0: i32, v1: i32):
{entry}
block1:
    v3 = iconst.i32 0
    jump block2(v0, v3)

block2(v10: i32, v11: i32):
    v12 = iconst.i32 0
    v13 = icmp sgt v10, v12
    brif v13, block3, block8(v11)

block3:
    v14 = iconst.i32 {k}
    v15 = iadd v10, v14
    v16 = icmp sgt v15, v1
    brif v16, block9, block4

block4:
    v17 = iadd v11, v15
    v18 = iconst.i32 {step}
    v19 = iadd v10, v18
    jump block2(v19, v17)

block8(v20: i32):
    return v20

block9:
    v21 = iconst.i32 -1
    return v21
}}
"
    )
}

/// The result of `%f(args)`, or `None` when it needs more than `fuel` instructions.
fn call(func: &Function, args: &[DataValue], fuel: u64) -> Option<DataValue> {
    match interpreter(func, Some(fuel)).call_by_name("%f", args) {
        Ok(ControlFlow::Return(values)) => values.first().cloned(),
        Err(InterpreterError::FuelExhausted) => None,
        other => panic!("interpreter: {other:?}"),
    }
}

const POINTS: [i32; 14] = [
    i32::MIN,
    i32::MIN + 1,
    -3,
    -1,
    0,
    1,
    2,
    3,
    5,
    8,
    9,
    40,
    i32::MAX - 1,
    i32::MAX,
];

/// Runs the guard pass on `text`, verifies, compares on every `(len, n)` pair that finishes,
/// and returns the number of branches removed and of inputs compared.
fn guards_agree(text: &str) -> (usize, usize) {
    let original = parse(text);
    let mut changed = original.clone();
    let removed = guards::remove_implied_guards(&mut changed);
    verify(&changed);
    let mut compared = 0;
    for len in POINTS {
        for n in POINTS {
            let args = [DataValue::I32(len), DataValue::I32(n)];
            let Some(want) = call(&original, &args, 2_000) else {
                continue;
            };
            assert_eq!(
                call(&changed, &args, 2_000),
                Some(want),
                "len={len} n={n}\n{text}\nafter:\n{}",
                changed.display()
            );
            compared += 1;
        }
    }
    (removed, compared)
}

#[test]
fn a_guard_the_bounds_decide_is_removed_and_the_function_agrees() {
    for (k, step) in [(-1, -1), (0, -1), (-1, -2), (-5, -3), (0, -7)] {
        let text = counted(true, k, step);
        let (removed, compared) = guards_agree(&text);
        assert_eq!(removed, 1, "k={k} step={step}: the guard stays\n{text}");
        assert!(compared > 100, "{compared}");
    }
}

#[test]
fn guards_the_bounds_do_not_decide_stay() {
    // No entry check: `len <= n` is unknown. A positive offset: `len + 1 > n` when `len == n`.
    // Counting up: the variable is not bounded by its start.
    for (entry_check, k, step) in [(false, -1, -1), (true, 1, -1), (true, -1, 1)] {
        let text = counted(entry_check, k, step);
        let (removed, _) = guards_agree(&text);
        assert_eq!(
            removed, 0,
            "entry_check={entry_check} k={k} step={step}: a guard was removed\n{text}"
        );
    }
}

/// `%f(a) -> i32`: `(0 >= -2147483647) & (0 >= 0) & (a < 7)` and `(5 <u 3) | (a > 2)`, combined.
const CONSTANT_TEST: &str = "function %f(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i64 0
    v2 = iconst.i64 -2147483647
    v3 = icmp sge v1, v2
    v4 = icmp sge v1, v1
    v5 = iconst.i32 7
    v6 = icmp slt v0, v5
    v7 = band v3, v4
    v8 = band v7, v6
    v9 = iconst.i32 5
    v10 = iconst.i32 3
    v11 = icmp ult v9, v10
    v12 = icmp sgt v0, v10
    v13 = bor v11, v12
    v14 = uextend.i32 v8
    v15 = uextend.i32 v13
    v23 = iconst.i32 1
    v16 = ishl v15, v23
    v17 = bor v14, v16
    v18 = band v0, v5
    v19 = iconst.i32 1
    v20 = band v18, v19
    v24 = iconst.i32 2
    v21 = ishl v20, v24
    v22 = bor v17, v21
    brif v8, block1, block2

block1:
    return v22

block2:
    v30 = iconst.i32 100
    v31 = iadd v22, v30
    return v31
}
";

#[test]
fn comparisons_of_constants_fold_and_the_function_agrees() {
    let original = parse(CONSTANT_TEST);
    let mut folded = original.clone();
    let count = fold::fold_constant_conditions(&mut folded);
    verify(&folded);
    // Three comparisons of constants, `v7`, `v8` (band with a known 1) and `v13` (bor with a
    // known 0); `v20` (band of a non-truth value with 1) must stay.
    assert_eq!(count, 6, "{}", folded.display());
    let text = folded.display().to_string();
    assert!(!text.contains("icmp sge"), "{text}");
    assert!(text.contains("band"), "band v18, 1 must stay: {text}");
    for a in [i32::MIN, -8, -1, 0, 1, 2, 3, 6, 7, 8, 15, i32::MAX] {
        let args = [DataValue::I32(a)];
        assert_eq!(
            call(&folded, &args, 1_000),
            call(&original, &args, 1_000),
            "a={a}"
        );
    }
}
