//! Checks of constant indices ([`schedlab_passes::bce::constant`]): removed exactly when the
//! bound's definition proves them, kept otherwise; SHA-256's `W` checks all go.
#![allow(missing_docs)]

use cranelift_codegen::ir::{
    AbiParam, Function, InstBuilder, MemFlagsData, Signature, UserFuncName, types,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use schedlab_kernels::java::{CheckedArray, OUT_OF_BOUNDS};
use schedlab_kernels::sha256;
use schedlab_passes::bce::{self, BceLevel};

/// `(i64 a, i64 b, i32 len_b) -> i32`: reads `a` (an `int[64]`, length a constant) at
/// `constant_a` indices (`base + k` as `(base, k)`), then `b[3]` (length a parameter), each
/// checked, and returns 0; a failed check returns [`OUT_OF_BOUNDS`].
fn constant_reads(constant_a: &[(i64, i64)]) -> Function {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params
        .extend([types::I64, types::I64, types::I32].map(AbiParam::new));
    sig.returns.push(AbiParam::new(types::I32));
    let mut func = Function::with_name_signature(UserFuncName::testcase("constant_reads"), sig);
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    let entry = b.create_block();
    let oob = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let params = b.block_params(entry).to_vec();
    let flags = MemFlagsData::new().with_notrap().with_readonly();
    let sixty_four = b.ins().iconst(types::I32, 64);
    let a = CheckedArray::new(&mut b, params[0], sixty_four, 1, 2, flags);
    let array_b = CheckedArray::new(&mut b, params[1], params[2], 1, 2, flags);
    for &(base, k) in constant_a {
        let base = b.ins().iconst(types::I32, base);
        a.checked_load(&mut b, types::I32, base, k, oob, &[]);
    }
    let three = b.ins().iconst(types::I32, 3);
    array_b.checked_load(&mut b, types::I32, three, 0, oob, &[]);
    let zero = b.ins().iconst(types::I32, 0);
    b.ins().return_(&[zero]);
    b.switch_to_block(oob);
    b.seal_block(oob);
    let status = b.ins().iconst(types::I32, i64::from(OUT_OF_BOUNDS));
    b.ins().return_(&[status]);
    b.finalize(schedlab_kernels::ir_build::frontend_config());
    func
}

#[test]
fn only_indices_the_bound_proves_lose_their_checks() {
    // In bounds: 3, 0 + 63. Out: 64, -1, i32::MAX + 1 (wraps to i32::MIN as a Java int).
    let reads = [(3, 0), (0, 63), (0, 64), (-1, 0), (i64::from(i32::MAX), 1)];
    let mut func = constant_reads(&reads);
    assert_eq!(bce::count_checks(&func), 6);
    let stats = bce::run(&mut func, BceLevel::Merge).expect("bce runs");
    assert_eq!(stats.checks_constant, 2, "only a[3] and a[63] are proven");
    // The three out-of-bounds reads fail at run time, and b[3] depends on b's length: kept
    // (on distinct bases, so merging leaves them apart).
    assert_eq!(bce::count_checks(&func), 4, "{stats}");
    let off = {
        let mut f = constant_reads(&reads);
        bce::run(&mut f, BceLevel::Off).expect("bce runs")
    };
    assert_eq!(off.checks_constant, 0, "level off removes nothing");
}

#[test]
fn a_proven_check_alone_leaves_no_check() {
    let mut func = constant_reads(&[(0, 0), (10, 5)]);
    let stats = bce::run(&mut func, BceLevel::Merge).expect("bce runs");
    assert_eq!(stats.checks_constant, 2);
    assert_eq!(bce::count_checks(&func), 1, "only b[3]'s check is left");
}

#[test]
fn sha256_loses_every_w_check_and_predication_the_rest() {
    let w_checks = 16 + 48 * 5 + 64;
    let mut func = sha256::compress_multi_block();
    let merged = bce::run(&mut func, BceLevel::Merge).expect("bce runs");
    assert_eq!(merged.checks_per_block_unoptimized, 16 + w_checks);
    assert_eq!(merged.checks_constant, w_checks);
    // A store to W follows every message read, so the 16 reads' checks stay apart.
    assert_eq!(merged.checks_per_block, 16);
    let mut func = sha256::compress_multi_block();
    let predicated = bce::run(&mut func, BceLevel::Predicate).expect("bce runs");
    assert_eq!(predicated.checks_per_block, 0);
    assert_eq!(
        predicated.checks_after, 16,
        "the checked fallback loop keeps its 16"
    );
}
