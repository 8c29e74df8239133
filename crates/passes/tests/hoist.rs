//! Loop-invariant loads, value numbering and boolean tests (`schedlab_passes::hoist`):
//! on a hand-written loop each rewrite happens where it may and nowhere else; on random loops
//! (invariant and varying arithmetic, loads of read-only and of written memory, conditional
//! blocks inside the loop, duplicated expressions) and on the random straight-line functions
//! of `testgen`, the result verifies and `cranelift-interpreter` computes the same results
//! before and after the pass.

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, AliasRegionData, Block, Function, InstBuilder, MemFlagsData, Opcode, Signature,
    StackSlotData, StackSlotKind, Type, UserFuncName, Value, types,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_interpreter::interpreter::InterpreterError;
use cranelift_interpreter::step::ControlFlow;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use schedlab_passes::hoist;
use schedlab_passes::testgen::{self, GenConfig};

mod common;
use common::{interpreter, parse, verify};

/// A counted loop over a read-only table (`ss0`, `region0`) accumulating into a buffer it
/// writes (`ss1`, `region1`):
/// - `v20 = imul v0, v1` and `v27 = icmp ne v2, v5` are invariant and pure: they stay (the
///   pass moves loads only);
/// - `v21` (a `can_move` load of the table) is hoisted, `v22` (the same load again, in the
///   conditional block) becomes `v21`;
/// - `v23` (a `notrap` load of the table in the header, before anything that traps) is
///   hoisted: the entry block jumps straight to the header;
/// - `v24` reads the written buffer: stays;
/// - `v25 = udiv v0, v2` may trap (and is only reached when `v2 != 0`): stays;
/// - `v56 = uextend v52` repeats the header's `v53`, and so does `v58` in the header itself:
///   both become `v53`; `v29` and `v30` repeat `v26` (an `iadd` of no extension): they stay;
/// - `v61 = iadd v1, v56` repeats the header's address `v60 = iadd v1, v53` once `v56` is
///   `v53`, and so does `v64` in the header itself: both become `v60`; `v65` repeats it after
///   the loop and `v68` repeats `v67` in a block outside the loop (where sharing saves no loop
///   cycles): they stay;
/// - `v28 = icmp ne (uextend (icmp ...)), 0` is the comparison itself, and the header's `brif`
///   on a zero-extended comparison tests the comparison.
const LOOP: &str = "
function %f(i64, i64, i64) -> i64 {
    ss0 = explicit_slot 16, align = 8
    ss1 = explicit_slot 8, align = 8
    region0 = 1 \"table\"
    region1 = 2 \"acc\"

block0(v0: i64, v1: i64, v2: i64):
    v3 = stack_addr.i64 ss0
    v4 = stack_addr.i64 ss1
    store notrap aligned region0 v0, v3
    store notrap aligned region0 v1, v3+8
    store notrap aligned region1 v1, v4
    v5 = iconst.i64 0
    jump block1(v5)

block1(v10: i64):
    v23 = load.i64 notrap aligned region0 v3+8
    v52 = ireduce.i32 v10
    v53 = uextend.i64 v52
    v58 = uextend.i64 v52
    v60 = iadd v1, v53
    v64 = iadd v1, v53
    v50 = iconst.i64 5
    v11 = icmp slt v10, v50
    v40 = uextend.i32 v11
    brif v40, block2, block5

block2:
    v20 = imul v0, v1
    v21 = load.i64 notrap aligned can_move region0 v3
    v24 = load.i64 notrap aligned region1 v4
    v12 = iadd v10, v24
    v26 = iadd v20, v12
    v29 = iadd v20, v12
    v27 = icmp ne v2, v5
    v41 = uextend.i32 v27
    v42 = iconst.i32 0
    v28 = icmp ne v41, v42
    brif v28, block3, block4(v29)

block3:
    v22 = load.i64 notrap aligned can_move region0 v3
    v25 = udiv v0, v2
    v30 = iadd v20, v12
    v31 = iadd v30, v25
    v32 = iadd v31, v22
    jump block4(v32)

block4(v33: i64):
    v34 = iadd v33, v21
    v35 = iadd v34, v23
    v56 = uextend.i64 v52
    v55 = iadd v35, v56
    v61 = iadd v1, v56
    v62 = iadd v55, v61
    store notrap aligned region1 v62, v4
    v51 = iconst.i64 1
    v36 = iadd v10, v51
    jump block1(v36)

block5:
    v65 = iadd v1, v53
    v66 = ireduce.i32 v1
    v67 = uextend.i64 v66
    v68 = uextend.i64 v66
    v37 = load.i64 notrap aligned region1 v4
    return v37
}
";

/// The block holding the instruction that defines `v` (after the pass; aliases resolved).
fn block_of(func: &Function, v: Value) -> Option<Block> {
    match func.dfg.value_def(v) {
        cranelift_codegen::ir::ValueDef::Result(inst, _) => func.layout.inst_block(inst),
        _ => None,
    }
}

/// `vN`.
fn value(_func: &Function, n: u32) -> Value {
    Value::from_u32(n)
}

/// The operands of the instruction defining `vN`.
fn operands_of(func: &Function, n: u32) -> Vec<Value> {
    match func.dfg.value_def(Value::from_u32(n)) {
        cranelift_codegen::ir::ValueDef::Result(inst, _) => func.dfg.inst_args(inst).to_vec(),
        other => panic!("v{n} is {other:?}"),
    }
}

fn block(n: u32) -> Block {
    Block::from_u32(n)
}

/// The one value `func` returns on `args`, or the trap it stopped with.
fn outcome(func: &Function, args: &[DataValue]) -> Result<Vec<DataValue>, String> {
    match interpreter(func, Some(1_000_000)).call_by_name(&func.name.to_string(), args) {
        Ok(ControlFlow::Return(values)) => Ok(values.to_vec()),
        Ok(ControlFlow::Trap(code)) => Err(format!("trap {code:?}")),
        Ok(other) => Err(format!("did not return: {other:?}")),
        Err(InterpreterError::FuelExhausted) => Err("fuel".into()),
        Err(e) => Err(format!("interpreter error: {e}")),
    }
}

#[test]
fn each_rewrite_happens_where_it_may() {
    let original = parse(LOOP);
    let mut func = original.clone();
    let stats = hoist::run(&mut func);
    verify(&func);
    let text = func.display().to_string();
    // Hoisted to the entry block (the header's immediate dominator).
    for n in [21, 23] {
        assert_eq!(
            block_of(&func, value(&func, n)),
            Some(block(0)),
            "v{n}\n{text}"
        );
    }
    // Pure and invariant, or a duplicate in its own block: left in the loop.
    for n in [20, 27, 29] {
        assert_eq!(
            block_of(&func, value(&func, n)),
            Some(block(2)),
            "v{n}\n{text}"
        );
    }
    // Shared: the conditional block's load and the repeated extension (their users read the
    // earlier values).
    assert_eq!(operands_of(&func, 32)[1], value(&func, 21), "{text}");
    assert_eq!(operands_of(&func, 55)[1], value(&func, 53), "{text}");
    assert_eq!(operands_of(&func, 62)[1], value(&func, 60), "{text}");
    // Shared values are gone (the pass leaves no alias behind); the others stay.
    for n in [58, 64] {
        assert!(!func.dfg.value_is_real(value(&func, n)), "v{n}\n{text}");
    }
    for n in [29, 30, 53, 60, 65, 67, 68] {
        assert!(func.dfg.value_is_real(value(&func, n)), "v{n}\n{text}");
    }
    assert_eq!(operands_of(&func, 31)[0], value(&func, 30), "{text}");
    assert_eq!(block_of(&func, value(&func, 30)), Some(block(3)), "{text}");
    // Left in the loop: the load of written memory, the division that may trap.
    assert_eq!(block_of(&func, value(&func, 24)), Some(block(2)), "{text}");
    assert_eq!(block_of(&func, value(&func, 25)), Some(block(3)), "{text}");
    // The boolean tests.
    let body_branch = func.layout.last_inst(block(2)).expect("terminator");
    assert_eq!(
        func.dfg.inst_args(body_branch)[0],
        value(&func, 27),
        "{text}"
    );
    let header_branch = func.layout.last_inst(block(1)).expect("terminator");
    assert_eq!(func.dfg.insts[header_branch].opcode(), Opcode::Brif);
    assert_eq!(
        func.dfg.inst_args(header_branch)[0],
        Value::from_u32(11),
        "{text}"
    );
    assert_eq!(
        stats,
        hoist::HoistStats {
            loads_hoisted: 2,
            loads_shared_in_loops: 1,
            pure_numbered: 4,
            loads_numbered: 0,
            conditions_simplified: 2,
            divisions_by_constants: 0,
        },
        "{text}"
    );
    for (a, b, c) in [(3, 4, 0), (3, 4, 2), (-7, 11, 5), (i64::MAX, 2, 1)] {
        let args = [DataValue::I64(a), DataValue::I64(b), DataValue::I64(c)];
        assert_eq!(outcome(&original, &args), outcome(&func, &args), "{args:?}");
    }
}

/// A loop reading a pointer from `vmctx` and then through it, in two blocks: the second
/// block's pointer is shared with the first's, and so the load through it must be too (its
/// address names the shared load only through an alias).
const CHAINED: &str = "
function %g(i64, i64) -> i64 {
    region0 = 1 \"vmctx\"

block0(v0: i64, v1: i64):
    v2 = iconst.i64 0
    jump block1(v2)

block1(v10: i64):
    v11 = load.i64 notrap aligned can_move region0 v0+8
    v12 = load.i64 notrap aligned can_move region0 v11
    v13 = iadd v10, v12
    brif v13, block2, block3

block2:
    v20 = load.i64 notrap aligned can_move region0 v0+8
    v21 = load.i64 notrap aligned can_move region0 v20
    v22 = iadd v13, v21
    jump block1(v22)

block3:
    return v10
}
";

#[test]
fn a_load_through_a_shared_pointer_is_shared() {
    let mut func = parse(CHAINED);
    let stats = hoist::run(&mut func);
    verify(&func);
    let text = func.display().to_string();
    assert_eq!(operands_of(&func, 22)[1], value(&func, 12), "{text}");
    assert_eq!(block_of(&func, value(&func, 12)), Some(block(0)), "{text}");
    assert_eq!(
        (stats.loads_hoisted, stats.loads_shared_in_loops),
        (2, 2),
        "{text}"
    );
}

/// `udiv` and `urem` of an `i32` and an `i64` by constants `d32` and `d64`, and a `udiv` by a
/// zero constant (it traps: left alone).
fn divisions(d32: u32, d64: u64) -> Function {
    parse(&format!(
        "
function %div(i32, i64) -> i32, i32, i64, i64 {{
block0(v0: i32, v1: i64):
    v2 = iconst.i32 {d32}
    v3 = udiv v0, v2
    v4 = urem v0, v2
    v5 = iconst.i64 {d64}
    v6 = udiv v1, v5
    v7 = urem v1, v5
    brif v0, block1, block2

block1:
    return v3, v4, v6, v7

block2:
    v8 = iconst.i32 0
    v9 = udiv v0, v8
    return v9, v4, v6, v7
}}
"
    ))
}

#[test]
fn divisions_by_constants_compute_the_same_without_a_divide() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut divisors: Vec<(u32, u64)> = vec![
        (1, 1),
        (2, 8),
        (3, 7),
        (7, 10),
        (10, 1_000_000_007),
        (641, u64::MAX),
        (u32::MAX, u64::MAX - 1),
        ((1 << 31) + 1, (1 << 63) + 1),
    ];
    for _ in 0..24 {
        let d32 = rng.random::<u32>() >> rng.random_range(0..32);
        let d64 = rng.random::<u64>() >> rng.random_range(0..64);
        divisors.push((d32.max(1), d64.max(1)));
    }
    for (d32, d64) in divisors {
        let original = divisions(d32, d64);
        let mut func = original.clone();
        let stats = hoist::run(&mut func);
        verify(&func);
        let text = func.display().to_string();
        assert_eq!(stats.divisions_by_constants, 4, "{text}");
        let divides = func
            .layout
            .blocks()
            .flat_map(|b| func.layout.block_insts(b))
            .filter(|&i| matches!(func.dfg.insts[i].opcode(), Opcode::Udiv | Opcode::Urem))
            .count();
        assert_eq!(divides, 1, "only the division by zero stays\n{text}");
        for _ in 0..64 {
            let x32 = match rng.random_range(0..4) {
                0 => u32::MAX - rng.random_range(0..3),
                1 => d32.wrapping_mul(rng.random_range(0..8)),
                _ => rng.random::<u32>() | 1,
            };
            let x64 = match rng.random_range(0..4) {
                0 => u64::MAX - rng.random_range(0..3),
                1 => d64.wrapping_mul(rng.random_range(0..8)),
                _ => rng.random(),
            };
            let args = [
                DataValue::I32(x32.max(1) as i32),
                DataValue::I64(x64 as i64),
            ];
            let expected = vec![
                DataValue::I32((x32.max(1) / d32) as i32),
                DataValue::I32((x32.max(1) % d32) as i32),
                DataValue::I64((x64 / d64) as i64),
                DataValue::I64((x64 % d64) as i64),
            ];
            assert_eq!(outcome(&original, &args), Ok(expected.clone()), "{args:?}");
            assert_eq!(outcome(&func, &args), Ok(expected), "{args:?}\n{text}");
        }
    }
}

/// A header load in a loop whose header is entered from a conditional branch: it could run
/// where it did not (the loop not taken), so it stays.
const GUARDED: &str = "
function %f(i64, i64) -> i64 {
    ss0 = explicit_slot 8, align = 8
    region0 = 1 \"table\"

block0(v0: i64, v1: i64):
    v3 = stack_addr.i64 ss0
    store notrap aligned region0 v0, v3
    v5 = iconst.i64 0
    brif v1, block1(v5), block3(v5)

block1(v10: i64):
    v20 = load.i64 notrap aligned region0 v3
    v50 = iconst.i64 3
    v11 = icmp slt v10, v50
    brif v11, block2, block3(v10)

block2:
    v12 = iadd v10, v20
    jump block1(v12)

block3(v30: i64):
    return v30
}
";

#[test]
fn a_load_that_could_run_where_it_did_not_stays() {
    let mut func = parse(GUARDED);
    let stats = hoist::run(&mut func);
    verify(&func);
    assert_eq!(stats.loads_hoisted, 0, "{}", func.display());
    assert_eq!(block_of(&func, value(&func, 20)), Some(block(1)));
}

/// Random loops: see [`random_loop`].
fn check_random_loop(seed: u64) -> Result<hoist::HoistStats, String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let original = random_loop(&mut rng);
    verify(&original);
    let mut func = original.clone();
    let stats = hoist::run(&mut func);
    let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
    cranelift_codegen::verify_function(&func, &flags).map_err(|e| {
        format!(
            "seed {seed}: verifier: {e}\n{}\nbefore:\n{}",
            func.display(),
            original.display()
        )
    })?;
    for _ in 0..4 {
        let args = [
            DataValue::I64(rng.random()),
            DataValue::I64(rng.random()),
            DataValue::I32(rng.random_range(0..12)),
        ];
        let (before, after) = (outcome(&original, &args), outcome(&func, &args));
        if before != after {
            return Err(format!(
                "seed {seed}, args {args:?}: {before:?} before, {after:?} after\n{}\nbefore:\n{}",
                func.display(),
                original.display()
            ));
        }
    }
    Ok(stats)
}

#[test]
fn random_loops_compute_the_same() {
    let mut total = hoist::HoistStats::default();
    for seed in 0..300 {
        let s = check_random_loop(seed).unwrap_or_else(|e| panic!("{e}"));
        total.loads_hoisted += s.loads_hoisted;
        total.loads_shared_in_loops += s.loads_shared_in_loops;
        total.pure_numbered += s.pure_numbered;
        total.loads_numbered += s.loads_numbered;
        total.conditions_simplified += s.conditions_simplified;
    }
    // The generator exercises every rewrite.
    assert!(total.loads_hoisted > 100, "{total:?}");
    assert!(total.loads_shared_in_loops > 10, "{total:?}");
    assert!(total.pure_numbered > 20, "{total:?}");
    assert!(total.conditions_simplified > 100, "{total:?}");
}

#[test]
fn random_straight_line_functions_compute_the_same() {
    let mut numbered = 0;
    for seed in 0..500 {
        let mut rng = StdRng::seed_from_u64(seed);
        let original = testgen::random_function(&mut rng, &GenConfig::default());
        let inputs = testgen::random_inputs(&mut rng);
        let mut func = original.clone();
        let stats = hoist::run(&mut func);
        numbered += stats.pure_numbered + stats.loads_numbered;
        verify(&func);
        let args = [
            DataValue::I64(inputs.wide[0]),
            DataValue::I64(inputs.wide[1]),
            DataValue::I32(inputs.narrow[0]),
            DataValue::I32(inputs.narrow[1]),
        ];
        assert_eq!(
            outcome(&original, &args),
            outcome(&func, &args),
            "seed {seed}\n{}",
            original.display()
        );
    }
    assert!(numbered > 0);
}

/// A random counted loop `(a: i64, b: i64, n: i32) -> i64`:
///
/// ```text
/// block0:  fill "table" (region 1, written only here) and "acc" (region 2) from a, b
/// header(i, x):  random ops (loads of the table, invariant arithmetic), then
///                brif (uextend (icmp slt i, n)), body, exit(x)
/// body:    random ops over a, b, i, x: arithmetic, loads of the table (can_move, notrap or
///          trapping), loads and stores of "acc" at an address that varies or not, repeated
///          expressions, divisions by a value that may be zero behind a test; sometimes a
///          conditional block with more of the same, joined with a parameter
/// latch:   more random ops; jump header(i + 1, x')
/// exit(x): x + every word of "acc"
/// ```
fn random_loop(rng: &mut StdRng) -> Function {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params
        .extend([types::I64, types::I64, types::I32].map(AbiParam::new));
    sig.returns.push(AbiParam::new(types::I64));
    let mut func = Function::with_name_signature(UserFuncName::testcase("f"), sig);
    let table_slot =
        func.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 32, 3));
    let acc_slot =
        func.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 32, 3));
    let table_region = func.dfg.alias_regions.insert(AliasRegionData {
        user_id: 1,
        description: "table".into(),
    });
    let acc_region = func.dfg.alias_regions.insert(AliasRegionData {
        user_id: 2,
        description: "acc".into(),
    });
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    let entry = b.create_block();
    let header = b.create_block();
    let body = b.create_block();
    let latch = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.append_block_param(header, types::I32);
    b.append_block_param(header, types::I64);
    b.append_block_param(latch, types::I64);
    b.append_block_param(exit, types::I64);

    b.switch_to_block(entry);
    let p = b.block_params(entry).to_vec();
    let (a, bb, n) = (p[0], p[1], p[2]);
    let table = b.ins().stack_addr(types::I64, table_slot, 0);
    let acc = b.ins().stack_addr(types::I64, acc_slot, 0);
    let table_write = MemFlagsData::trusted().with_alias_region(Some(table_region));
    let acc_flags = MemFlagsData::trusted().with_alias_region(Some(acc_region));
    let mut w = a;
    for i in 0..4 {
        let m = b.ins().imul_imm_s(w, 0x9E37_79B9_7F4A_7C15u64 as i64);
        w = b.ins().bxor(m, bb);
        b.ins().store(table_write, w, table, 8 * i);
        b.ins().store(acc_flags, bb, acc, 8 * i);
    }
    let zero = b.ins().iconst(types::I32, 0);
    // The header is entered from a jump (its loads may move) or from a conditional branch.
    if rng.random_bool(0.7) {
        b.ins().jump(header, &[zero.into(), a.into()]);
    } else {
        let t = b.ins().icmp_imm_s(IntCC::NotEqual, bb, 3);
        b.ins()
            .brif(t, header, &[zero.into(), a.into()], exit, &[a.into()]);
    }

    let mut g = Gen {
        rng,
        table,
        acc,
        table_flags: MemFlagsData::trusted().with_alias_region(Some(table_region)),
        acc_flags,
        pool: vec![a, bb],
        exprs: Vec::new(),
        index: zero,
    };

    b.switch_to_block(header);
    let hp = b.block_params(header).to_vec();
    let (i, x) = (hp[0], hp[1]);
    g.pool.push(x);
    g.index = i;
    for _ in 0..g.rng.random_range(0..4) {
        g.op(&mut b, false);
    }
    let t = b.ins().icmp(IntCC::SignedLessThan, i, n);
    let t32 = b.ins().uextend(types::I32, t);
    let header_value = g.last();
    b.ins().brif(t32, body, &[], exit, &[header_value.into()]);

    b.switch_to_block(body);
    b.seal_block(body);
    if g.rng.random_bool(0.5) {
        let wide_i = b.ins().uextend(types::I64, i);
        g.pool.push(wide_i);
    }
    for _ in 0..g.rng.random_range(2..12) {
        g.op(&mut b, true);
    }
    let pool_before = g.pool.len();
    let x1 = g.last();
    if g.rng.random_bool(0.6) {
        let cond_block = b.create_block();
        let c = g.pick();
        let c = b.ins().band_imm_s(c, 3);
        let c = b.ins().icmp_imm_s(IntCC::NotEqual, c, 0);
        let c = b.ins().uextend(types::I32, c);
        let zero = b.ins().iconst(types::I32, 0);
        let c = b.ins().icmp(IntCC::NotEqual, c, zero);
        b.ins().brif(c, cond_block, &[], latch, &[x1.into()]);
        b.switch_to_block(cond_block);
        b.seal_block(cond_block);
        for _ in 0..g.rng.random_range(1..8) {
            g.op(&mut b, true);
        }
        let y = g.last();
        b.ins().jump(latch, &[y.into()]);
        // Values of the conditional block do not reach the latch.
        g.pool.truncate(pool_before);
        g.exprs.retain(|e| g.pool.contains(&e.0));
    } else {
        b.ins().jump(latch, &[x1.into()]);
    }

    b.switch_to_block(latch);
    b.seal_block(latch);
    let lp = b.block_params(latch).to_vec();
    // More of the same after the conditional block (which does not dominate the latch).
    for _ in 0..g.rng.random_range(0..3) {
        g.op(&mut b, true);
    }
    let acc_value = b.ins().load(types::I64, g.acc_flags, g.acc, 0);
    let sum = b.ins().iadd(lp[0], acc_value);
    let latest = g.last();
    let next_x = b.ins().bxor(sum, latest);
    b.ins().store(g.acc_flags, next_x, g.acc, 8);
    let next_i = b.ins().iadd_imm_s(i, 1);
    b.ins().jump(header, &[next_i.into(), next_x.into()]);
    b.seal_block(header);

    b.switch_to_block(exit);
    b.seal_block(exit);
    let mut r = b.block_params(exit)[0];
    for k in 0..4 {
        let word = b.ins().load(types::I64, acc_flags, acc, 8 * k);
        let rot = b.ins().rotl_imm_s(r, 7);
        r = b.ins().iadd(rot, word);
    }
    b.ins().return_(&[r]);
    b.seal_all_blocks();
    b.finalize(testgen::frontend_config());
    func
}

/// The state of [`random_loop`]'s body generator.
struct Gen<'r> {
    rng: &'r mut StdRng,
    table: Value,
    acc: Value,
    table_flags: MemFlagsData,
    acc_flags: MemFlagsData,
    /// `i64` values usable as operands here.
    pool: Vec<Value>,
    /// Binary expressions made so far (result, opcode index, operands), for repeating one.
    exprs: Vec<(Value, usize, Value, Value)>,
    /// The loop's `i32` counter, widened now and then (the same extension in several blocks).
    index: Value,
}

impl Gen<'_> {
    /// The newest value of the pool (there is always one: the pool starts with the arguments).
    fn last(&self) -> Value {
        self.pool[self.pool.len() - 1]
    }

    fn pick(&mut self) -> Value {
        let n = self.pool.len();
        if self.rng.random_bool(0.5) {
            self.pool[n - 1 - self.rng.random_range(0..n.min(3))]
        } else {
            self.pool[self.rng.random_range(0..n)]
        }
    }

    fn binary(b: &mut FunctionBuilder, op: usize, x: Value, y: Value) -> Value {
        match op {
            0 => b.ins().iadd(x, y),
            1 => b.ins().isub(x, y),
            2 => b.ins().imul(x, y),
            3 => b.ins().bxor(x, y),
            4 => b.ins().rotl(x, y),
            _ => {
                let c = b.ins().icmp(IntCC::UnsignedLessThan, x, y);
                b.ins().select(c, x, y)
            }
        }
    }

    /// One random operation, its result added to the pool (`in_body`: stores allowed).
    fn op(&mut self, b: &mut FunctionBuilder, in_body: bool) {
        let ty: Type = types::I64;
        let v = match self.rng.random_range(0..11) {
            10 => b.ins().uextend(ty, self.index),
            0..=3 => {
                // Repeat an earlier expression now and then.
                if !self.exprs.is_empty() && self.rng.random_bool(0.3) {
                    let (_, op, x, y) = self.exprs[self.rng.random_range(0..self.exprs.len())];
                    Self::binary(b, op, x, y)
                } else {
                    let (x, y) = (self.pick(), self.pick());
                    let op = self.rng.random_range(0..6);
                    let v = Self::binary(b, op, x, y);
                    self.exprs.push((v, op, x, y));
                    v
                }
            }
            4 | 5 => {
                // The table, read-only after the entry block.
                let offset = 8 * self.rng.random_range(0..4);
                let flags = match self.rng.random_range(0..3) {
                    0 => self.table_flags.with_can_move(),
                    1 => self.table_flags,
                    _ => MemFlagsData::new().with_alias_region(self.table_flags.alias_region()),
                };
                b.ins().load(ty, flags, self.table, offset)
            }
            6 if in_body => {
                // "acc" at a fixed or a varying offset; stored to now and then.
                let offset = 8 * self.rng.random_range(0..4);
                let flags = if self.rng.random_bool(0.5) {
                    self.acc_flags.with_can_move()
                } else {
                    self.acc_flags
                };
                let v = b.ins().load(ty, flags, self.acc, offset);
                if self.rng.random_bool(0.5) {
                    let s = self.pick();
                    b.ins().store(self.acc_flags, s, self.acc, offset);
                }
                v
            }
            7 if in_body => {
                // A division (by a non-zero value, which the pass cannot know: it may trap).
                let (x, y) = (self.pick(), self.pick());
                let one = b.ins().iconst(ty, 1);
                let nz = b.ins().bor(y, one);
                b.ins().udiv(x, nz)
            }
            8 => {
                let x = self.pick();
                let c = b.ins().icmp_imm_s(IntCC::SignedGreaterThan, x, 100);
                let c = b.ins().uextend(types::I64, c);
                let zero = b.ins().iconst(ty, 0);
                let c = b.ins().icmp(IntCC::NotEqual, c, zero);
                let y = self.pick();
                b.ins().select(c, x, y)
            }
            _ => {
                let x = self.pick();
                b.ins().iadd_imm_s(x, 0x1234)
            }
        };
        self.pool.push(v);
    }
}
