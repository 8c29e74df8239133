//! The critical-path rewrites: what they recognise, that the verifier accepts their output,
//! and that results are unchanged (cranelift-interpreter, random inputs).

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{Function, Opcode};
use cranelift_interpreter::step::ControlFlow;
use proptest::prelude::*;
use schedlab_passes::rewrite::{
    ConstantPlacement, masked_merge, reassociate, reassociate_with, unit_latency,
};

mod common;
use common::{count, interpreter, parse, verify};

fn run(func: &Function, args: &[u32]) -> Vec<DataValue> {
    let args: Vec<DataValue> = args.iter().map(|&a| DataValue::I32(a as i32)).collect();
    match interpreter(func, None).call_by_name(&func.name.to_string(), &args) {
        Ok(ControlFlow::Return(values)) => values.to_vec(),
        other => panic!("interpreter: {other:?}"),
    }
}

/// MD5's F step: the mask `b` comes from a chain, so it is ready last.
const F_STEP: &str = "function %f(i32, i32, i32, i32) -> i32 {
block0(v0: i32, v1: i32, v2: i32, v3: i32):
    v4 = rotl v0, v1
    v5 = iadd v4, v1        ; b: ready late
    v6 = band v5, v2
    v7 = bnot v5
    v8 = band v7, v3
    v9 = bor v6, v8
    return v9
}";

/// MD5's G step: the mask `d` is ready early, `b` late, and the merge feeds an addition.
const G_STEP: &str = "function %g(i32, i32, i32, i32) -> i32 {
block0(v0: i32, v1: i32, v2: i32, v3: i32):
    v4 = rotl v0, v1
    v5 = iadd v4, v1        ; b: ready late
    v6 = band v5, v3
    v7 = bnot v3
    v8 = band v2, v7
    v9 = bor v6, v8
    v10 = iadd v9, v0
    return v10
}";

/// Java's `a += F + x + ac` with F late: every addition waits for F as written.
const SUM: &str = "function %sum(i32, i32, i32, i32) -> i32 {
block0(v0: i32, v1: i32, v2: i32, v3: i32):
    v4 = rotl v0, v1
    v5 = rotl v4, v1
    v6 = iadd v5, v2        ; F + x
    v7 = iconst.i32 0xd76aa478
    v8 = iadd v6, v7        ; + ac
    v9 = iadd v3, v8        ; a + ...
    return v9
}";

fn same_results(original: &Function, rewritten: &Function, inputs: &[[u32; 4]]) {
    for args in inputs {
        assert_eq!(
            run(original, args),
            run(rewritten, args),
            "inputs {args:x?}"
        );
    }
}

const INPUTS: [[u32; 4]; 4] = [
    [0, 0, 0, 0],
    [0xffff_ffff, 7, 0x1234_5678, 0x9abc_def0],
    [0x8000_0000, 31, 0x0f0f_0f0f, 0xf0f0_f0f0],
    [0xdead_beef, 12, 0xcafe_babe, 0x0bad_f00d],
];

#[test]
fn late_mask_becomes_the_xor_form() {
    let original = parse(F_STEP);
    let mut func = original.clone();
    let stats = masked_merge(&mut func, &unit_latency);
    verify(&func);
    assert_eq!(
        (stats.merges, stats.to_xor_form, stats.to_disjoint_add),
        (1, 1, 0)
    );
    assert_eq!(
        count(&func, Opcode::Bnot),
        0,
        "the xor form needs no not:\n{}",
        func.display()
    );
    assert_eq!(count(&func, Opcode::Bor), 0);
    same_results(&original, &func, &INPUTS);
}

#[test]
fn early_mask_feeding_an_add_becomes_a_disjoint_add() {
    let original = parse(G_STEP);
    let mut func = original.clone();
    let stats = masked_merge(&mut func, &unit_latency);
    verify(&func);
    assert_eq!(
        (stats.merges, stats.to_xor_form, stats.to_disjoint_add),
        (1, 0, 1)
    );
    assert_eq!(count(&func, Opcode::Bor), 0);
    same_results(&original, &func, &INPUTS);
}

#[test]
fn early_mask_not_feeding_an_add_is_left_alone() {
    let text = G_STEP.replace("v10 = iadd v9, v0", "v10 = bxor v9, v0");
    let original = parse(&text);
    let mut func = original.clone();
    let stats = masked_merge(&mut func, &unit_latency);
    assert_eq!(
        (stats.merges, stats.to_xor_form, stats.to_disjoint_add),
        (1, 0, 0)
    );
    assert_eq!(func.display().to_string(), original.display().to_string());
}

#[test]
fn the_late_operand_is_added_last() {
    let original = parse(SUM);
    let mut func = original.clone();
    let stats = reassociate(&mut func, &unit_latency);
    verify(&func);
    assert_eq!(stats.trees, 1);
    assert_eq!(stats.shortened, 1, "{}", func.display());
    assert_eq!(
        stats.cycles_saved, 2,
        "F waited for two additions, now for none before the last"
    );
    // The returned value is `F + (early operands)`: its defining add takes F (v5) directly.
    let block = func.layout.entry_block().expect("entry");
    let ret = func.layout.last_inst(block).expect("return");
    let root = func.dfg.inst_args(ret)[0];
    let root_inst = func.dfg.value_def(root).unwrap_inst();
    let args = func.dfg.inst_args(root_inst);
    assert!(
        args.iter().any(|a| a.to_string() == "v5"),
        "{}",
        func.display()
    );
    same_results(&original, &func, &INPUTS);
}

/// The defining instruction's opcode and operands of `v`, as text.
fn def_text(func: &Function, v: cranelift_codegen::ir::Value) -> String {
    func.dfg
        .display_inst(func.dfg.value_def(v).unwrap_inst())
        .to_string()
}

#[test]
fn constants_placed_late_join_the_tree_last() {
    let original = parse(SUM);
    let (mut early, mut late) = (original.clone(), original.clone());
    reassociate_with(&mut early, &unit_latency, ConstantPlacement::Early);
    let stats = reassociate_with(&mut late, &unit_latency, ConstantPlacement::Late);
    verify(&late);
    assert_eq!(stats.trees, 1);
    let root = |f: &Function| {
        let block = f.layout.entry_block().expect("entry");
        f.dfg.inst_args(f.layout.last_inst(block).expect("return"))[0]
    };
    // Late: root = (everything else) + constant, and F (v5) is inside the left operand.
    let late_root = def_text(&late, root(&late));
    let late_args = late
        .dfg
        .inst_args(late.dfg.value_def(root(&late)).unwrap_inst());
    assert!(
        def_text(&late, late_args[1]).contains("iconst"),
        "{late_root}\n{}",
        late.display()
    );
    assert!(
        def_text(&late, late_args[0]).contains("v5"),
        "{}",
        late.display()
    );
    // Early: the constant is already combined with an early operand; F joins last.
    let early_args = early
        .dfg
        .inst_args(early.dfg.value_def(root(&early)).unwrap_inst());
    assert!(
        early_args.iter().any(|a| a.to_string() == "v5"),
        "{}",
        early.display()
    );
    assert_ne!(late.display().to_string(), early.display().to_string());
    same_results(&original, &late, &INPUTS);
}

/// A random tree over four inputs, as CLIF text.
fn random_function(ops: &[(u8, u8, u8)]) -> String {
    let mut body = String::new();
    let mut next = 4;
    for &(op, a, b) in ops {
        let a = a as usize % next;
        let b = b as usize % next;
        let line = match op % 7 {
            0 | 1 => format!("v{next} = iadd v{a}, v{b}"),
            2 => format!("v{next} = bxor v{a}, v{b}"),
            3 => format!("v{next} = band v{a}, v{b}"),
            4 => format!("v{next} = bor v{a}, v{b}"),
            5 => format!("v{next} = bnot v{a}"),
            _ => format!("v{next} = iconst.i32 {}", (a * 977 + b) as i32 - 3),
        };
        body.push_str("    ");
        body.push_str(&line);
        body.push('\n');
        next += 1;
    }
    format!(
        "function %r(i32, i32, i32, i32) -> i32 {{\nblock0(v0: i32, v1: i32, v2: i32, v3: i32):\n{body}    return v{}\n}}",
        next - 1
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]
    #[test]
    fn rewrites_never_change_results(
        ops in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..40),
        inputs in proptest::collection::vec(any::<[u32; 4]>(), 3),
    ) {
        let original = parse(&random_function(&ops));
        let mut func = original.clone();
        schedlab_passes::rewrite::run(&mut func, &unit_latency, ConstantPlacement::Early);
        verify(&func);
        let mut late = original.clone();
        schedlab_passes::rewrite::run(&mut late, &unit_latency, ConstantPlacement::Late);
        verify(&late);
        for args in &inputs {
            prop_assert_eq!(run(&original, args), run(&func, args));
            prop_assert_eq!(run(&original, args), run(&late, args));
        }
    }
}

#[test]
fn address_constants_fold_into_one_shared_base_and_offsets() {
    let text = "function %addr(i64, i64) -> i32 {
block0(v0: i64, v1: i64):
    v2 = iconst.i64 4
    v3 = iadd v1, v2
    v4 = iadd v0, v3
    v5 = load.i32 notrap v4
    v6 = iconst.i64 8
    v7 = iadd v1, v6
    v8 = iadd v7, v0
    v9 = load.i32 notrap v8+2
    v10 = iadd v5, v9
    return v10
}";
    let mut func = parse(text);
    let stats = schedlab_passes::rewrite::fold_address_offsets(&mut func);
    verify(&func);
    assert_eq!(
        (stats.folded, stats.shared_bases),
        (2, 1),
        "{}",
        func.display()
    );
    let shown = func.display().to_string();
    assert!(shown.contains("+4\n") && shown.contains("+10\n"), "{shown}");
}

/// A preheader's test as predicating bounds-check elimination builds it: one range test per
/// array folded into the conjunction as it is made.
const CONDITION_CHAIN: &str = "function %tests(i32, i32, i32, i32) -> i8 {
block0(v0: i32, v1: i32, v2: i32, v3: i32):
    v4 = icmp sge v0, v3
    v5 = icmp slt v0, v1
    v6 = band v4, v5
    v7 = icmp sge v2, v1
    v8 = band v6, v7
    v9 = icmp slt v2, v3
    v10 = band v8, v9
    v11 = icmp slt v1, v3
    v12 = band v10, v11
    return v12
}";

#[test]
fn conditions_are_kept_as_a_chain_only_when_asked() {
    use schedlab_passes::rewrite::{RewriteOptions, run as rewrite};
    let original = parse(CONDITION_CHAIN);
    let mut kept = original.clone();
    rewrite(
        &mut kept,
        &unit_latency,
        RewriteOptions {
            keep_conditions: true,
            ..RewriteOptions::default()
        },
    );
    verify(&kept);
    assert_eq!(
        kept.display().to_string(),
        original.display().to_string(),
        "the chain is left as built"
    );
    let mut rebuilt = original.clone();
    let stats = rewrite(&mut rebuilt, &unit_latency, RewriteOptions::default());
    verify(&rebuilt);
    assert_eq!(stats.reassociate.trees, 1, "{}", rebuilt.display());
    assert_ne!(
        rebuilt.display().to_string(),
        original.display().to_string(),
        "by default the conjunction is reassociated by ready time"
    );
}
