//! Loop rotation on small loops, run by Cranelift's interpreter before and after the pass: the
//! results agree for trip counts 0, 1, 2 and more; a loop of the right shape ends in a
//! conditional back edge from its latch; a loop of another shape is left alone.

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{Function, Opcode};
use cranelift_codegen::settings;
use schedlab_passes::rotate::rotate_loops;

mod common;
use common::{call_f, parse};

/// `sum(i * k for i in 0..n) + i_final * 1000`: the header computes a value (`sq`) the body
/// reads, and the exit block (whose only predecessor is the header) reads a header parameter
/// directly, the shape BCE's predicated loops have.
const SUM: &str = "
function %f(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = iconst.i32 0
    jump block1(v2, v2)

block1(v3: i32, v4: i32):
    v5 = imul v3, v1
    v6 = icmp slt v3, v0
    brif v6, block2, block3

block2:
    v7 = iadd v4, v5
    v11 = iconst.i32 1
    v8 = iadd v3, v11
    jump block1(v8, v7)

block3:
    v12 = iconst.i32 1000
    v9 = imul v3, v12
    v10 = iadd v4, v9
    return v10
}
";

/// The header's test branches into the loop from both sides: not a rotatable shape.
const TWO_WAY: &str = "
function %f(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = iconst.i32 0
    jump block1(v2)

block1(v3: i32):
    v4 = icmp slt v3, v0
    brif v4, block2, block3

block2:
    v9 = iconst.i32 1
    v5 = iadd v3, v9
    v6 = icmp slt v5, v0
    brif v6, block1(v5), block4(v5)

block3:
    v10 = iconst.i32 2
    v7 = iadd v3, v10
    jump block1(v7)

block4(v8: i32):
    return v8
}
";

fn call(func: &Function, n: i32, k: i32) -> i32 {
    call_f(func, &[DataValue::I32(n), DataValue::I32(k)], None).expect("no fuel limit")
}

fn verify(func: &Function) {
    let flags = settings::Flags::new(settings::builder());
    if let Err(errors) = cranelift_codegen::verify_function(func, &flags) {
        panic!(
            "{}",
            cranelift_codegen::print_errors::pretty_verifier_error(func, None, errors)
        );
    }
}

/// Blocks that end in `brif` to themselves (a bottom-tested single-block loop).
fn self_looping_brifs(func: &Function) -> usize {
    func.layout
        .blocks()
        .filter(|&b| {
            func.layout.last_inst(b).is_some_and(|i| {
                func.dfg.insts[i].opcode() == Opcode::Brif
                    && func.block_successors(b).any(|s| s == b)
            })
        })
        .count()
}

#[test]
fn a_top_tested_loop_is_rotated_and_computes_the_same() {
    let original = parse(SUM);
    let mut rotated = original.clone();
    let stats = rotate_loops(&mut rotated);
    verify(&rotated);
    assert_eq!(stats.loops_rotated, 1, "{}", rotated.display());
    assert_eq!(stats.insts_cloned, 2, "{}", rotated.display());
    assert_eq!(self_looping_brifs(&rotated), 1, "{}", rotated.display());
    for n in [-3, 0, 1, 2, 3, 17] {
        for k in [0, 1, -7, 123_456] {
            assert_eq!(call(&rotated, n, k), call(&original, n, k), "n={n} k={k}");
        }
    }
}

#[test]
fn other_loop_shapes_are_left_alone() {
    let mut func = parse(TWO_WAY);
    let before = func.display().to_string();
    let stats = rotate_loops(&mut func);
    assert_eq!(stats.loops_rotated, 0);
    assert_eq!(func.display().to_string(), before);
}
