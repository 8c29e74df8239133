//! Induction-variable strength reduction is exact: small CLIF loops in the kernels' check
//! shape run in Cranelift's interpreter as built and after bounds-check predication plus the
//! `iv` pass, on boundary values of the start, the limit, the base address and the bound —
//! loops that fail their first, a middle or their last check, never run, or would wrap, bases
//! near 0 and near the top of the address space. The loops use the induction variable in an
//! address term (`base + (sext(j) << sh)`, which becomes the pointer), in other arithmetic (both
//! widened and as an `i32`) and after the loop (an exit argument), and the verifier must accept
//! every result.
#![allow(missing_docs)]

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::Function;
use schedlab_passes::bce::{self, BceLevel};
use schedlab_passes::iv::{self, IvStats};

mod common;
use common::{call_f, parse, verify};

/// `function %f(i32 o0, i32 lim, i64 base, i32 len) -> i64`: `header(j, acc)` runs while
/// `j cond lim` (or `j cond K` with a constant limit), checks `j + k` against
/// `max(sext(len), 0)`, folds the address `base + (sext(j) << sh)` into `acc` (and, with
/// `extra_uses`, `sext(j) * 7` and `(j + 5) as i64`), and advances `j += step`. After the
/// loop it returns `acc ^ sext(j)` (the final `j` is an exit argument); a failed check
/// returns `acc ^ 0x5a5a`.
fn looped(cond: &str, limit: Option<i32>, step: i64, k: i64, sh: u8, extra_uses: bool) -> String {
    let scaled = if sh == 0 {
        "    v25 -> v24\n".to_string()
    } else {
        format!("    v29 = iconst.i64 {sh}\n    v25 = ishl v24, v29\n")
    };
    let (limit_def, limit_val) = match limit {
        Some(c) => (format!("    v16 = iconst.i32 {c}\n"), "v16"),
        None => (String::new(), "v1"),
    };
    let extra = if extra_uses {
        "    v35 = iconst.i64 7
    v30 = imul v24, v35
    v31 = iadd v27, v30
    v36 = iconst.i32 5
    v32 = iadd v15, v36
    v33 = sextend.i64 v32
    v34 = iadd v31, v33
"
    } else {
        "    v34 = bor v27, v27\n"
    };
    format!(
        "function %f(i32, i32, i64, i32) -> i64 {{
block0(v0: i32, v1: i32, v2: i64, v3: i32):
    v4 = sextend.i64 v3
    v5 = iconst.i64 0
    v6 = smax v4, v5
    v7 = iconst.i64 1
    jump block1(v0, v7)

block1(v10: i32, v12: i64):
{limit_def}    v13 = icmp {cond} v10, {limit_val}
    brif v13, block2(v10), block5(v10)

block2(v15: i32):
    v20 = iconst.i32 {k}
    v21 = iadd v15, v20
    v22 = sextend.i64 v21
    v23 = icmp ult v22, v6
    brif v23, block4, block6(v12)

block4:
    v24 = sextend.i64 v15
{scaled}    v26 = iadd v2, v25
    v37 = iconst.i64 3
    v28 = imul v12, v37
    v27 = iadd v28, v26
{extra}    v43 = iconst.i32 {step}
    v44 = iadd v15, v43
    jump block1(v44, v34)

block5(v50: i32):
    v51 = sextend.i64 v50
    v52 = bxor v12, v51
    return v52

block6(v60: i64):
    v62 = iconst.i64 0x5a5a
    v61 = bxor v60, v62
    return v61
}}
"
    )
}

/// The result, or `None` when the call needs more than `fuel` instructions.
fn call(func: &Function, args: (i32, i32, i64, i32), fuel: u64) -> Option<i64> {
    let args = [
        DataValue::I32(args.0),
        DataValue::I32(args.1),
        DataValue::I64(args.2),
        DataValue::I32(args.3),
    ];
    call_f(func, &args, Some(fuel))
}

fn points(len: i32) -> Vec<i32> {
    let mut v = vec![
        i32::MIN,
        i32::MIN + 1,
        i32::MAX - 64,
        i32::MAX - 1,
        i32::MAX,
    ];
    v.extend(-4..=4);
    for d in -3..=2 {
        v.push(len.wrapping_add(d));
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Predicates and reduces `text`, checks the verifier, and compares with the original on every
/// input. Returns the pass's statistics and the number of inputs compared.
fn reduced_agrees(text: &str) -> (IvStats, usize) {
    let original = parse(text);
    let mut reduced = original.clone();
    let bce_stats = bce::run(&mut reduced, BceLevel::Predicate).expect("bce runs");
    let stats = iv::reduce_predicated(&mut reduced, &bce_stats, iv::IvOptions::default());
    verify(&reduced);
    let mut compared = 0;
    for base in [
        0i64,
        64,
        -64,
        i64::MAX - 100,
        i64::MIN + 3,
        0x7fff_1234_5678,
    ] {
        for len in [0, 1, 5, 9, i32::MAX] {
            for o0 in points(len) {
                for lim in points(len) {
                    let args = (o0, lim, base, len);
                    let Some(want) = call(&original, args, 3000) else {
                        continue;
                    };
                    let got = call(&reduced, args, 5000);
                    assert_eq!(
                        got,
                        Some(want),
                        "o0={o0} lim={lim} base={base} len={len}\n{text}\nreduced:\n{}",
                        reduced.display()
                    );
                    compared += 1;
                }
            }
        }
    }
    (stats, compared)
}

#[test]
fn counting_up_becomes_a_pointer_and_stays_exact() {
    for (cond, step, k, sh) in [
        ("sle", 1, 0, 0),
        ("slt", 1, 3, 2),
        ("sle", 4, -1, 0),
        ("slt", 64, 63, 0),
        ("sle", 3, 2, 3),
    ] {
        for extra in [false, true] {
            let text = looped(cond, None, step, k, sh, extra);
            let (stats, compared) = reduced_agrees(&text);
            assert_eq!((stats.loops_reduced, stats.pointer_ivs), (1, 1), "{text}");
            assert_eq!(stats.address_terms, 1, "{text}");
            assert!(compared > 3_000, "{compared}");
        }
    }
}

#[test]
fn counting_down_becomes_a_pointer_and_stays_exact() {
    for (cond, step, k, sh) in [("sge", -1, 0, 2), ("sgt", -3, 1, 0), ("sge", -64, 0, 0)] {
        for extra in [false, true] {
            let text = looped(cond, None, step, k, sh, extra);
            let (stats, compared) = reduced_agrees(&text);
            assert_eq!((stats.loops_reduced, stats.pointer_ivs), (1, 1), "{text}");
            assert!(compared > 3_000, "{compared}");
        }
    }
}

#[test]
fn a_constant_limit_becomes_a_constant_end() {
    for (cond, limit, step) in [("slt", 7, 1), ("sle", 100, 4), ("sge", -5, -2)] {
        let text = looped(cond, Some(limit), step, 0, 2, true);
        let (stats, compared) = reduced_agrees(&text);
        assert_eq!(stats.loops_reduced, 1, "{text}");
        assert!(compared > 1_000, "{compared}");
    }
}

#[test]
fn the_reduced_loop_no_longer_counts_in_32_bits() {
    // The check-free loop's header keeps the accumulator and one i64 parameter for the
    // variable, and no i32 one.
    let text = looped("sle", None, 64, 63, 0, false);
    let mut func = parse(&text);
    let bce_stats = bce::run(&mut func, BceLevel::Predicate).expect("bce runs");
    let stats = iv::reduce_predicated(&mut func, &bce_stats, iv::IvOptions::default());
    assert_eq!(stats.loops_reduced, 1);
    let header = bce_stats.versioned[0].fast_header;
    let types: Vec<String> = func
        .dfg
        .block_params(header)
        .iter()
        .map(|&p| func.dfg.value_type(p).to_string())
        .collect();
    assert_eq!(types, ["i64", "i64"], "{}", func.display());
}

#[test]
fn loops_that_were_not_predicated_are_left_alone() {
    // Without predication there is no no-wrap guarantee: the pass is not run on the loop.
    let text = looped("sle", None, 1, 0, 0, true);
    let mut func = parse(&text);
    let bce_stats = bce::run(&mut func, BceLevel::Merge).expect("bce runs");
    let before = func.display().to_string();
    let stats = iv::reduce_predicated(&mut func, &bce_stats, iv::IvOptions::default());
    assert_eq!(stats, IvStats::default());
    assert_eq!(func.display().to_string(), before);
}
