//! Store-to-load forwarding on both SHA-256 kernels, differentially in Cranelift's interpreter:
//! the kernel as built, after forwarding alone, after predicated BCE and after BCE plus
//! forwarding must all return what the Rust model of the Java code says, leave the same state
//! and — for `sha256`, whose `W` the caller sees — the same `W`. A wrapper function puts the
//! arrays in its own stack slots (the interpreter has no other memory), calls the kernel and
//! returns the return value, the state and `W`.
#![allow(missing_docs)]

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{
    AbiParam, ExtFuncData, ExternalName, Function, InstBuilder, MemFlagsData, Signature,
    StackSlotData, StackSlotKind, UserFuncName, Value, types,
};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::settings;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::ControlFlow;
use schedlab_kernels::case::{Arg, ArrayArg, Case};
use schedlab_kernels::registry::{CaseOptions, Kernel};
use schedlab_kernels::sha256::{self, SCHEDULE_WORDS, Schedule};
use schedlab_kernels::sha256_local;
use schedlab_passes::bce::{self, BceLevel};
use schedlab_passes::forward;

/// `%wrapper() -> (ret, state[8], W[64] when visible)`: the case's arrays in stack slots.
fn wrapper(kernel: &Function, case: &Case, visible_w: bool) -> Function {
    let mut sig = Signature::new(CallConv::SystemV);
    let outputs = 1 + 8 + if visible_w { SCHEDULE_WORDS } else { 0 };
    sig.returns
        .extend(std::iter::repeat_n(AbiParam::new(types::I32), outputs));
    let mut func = Function::with_name_signature(UserFuncName::testcase("wrapper"), sig);
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    let block = b.create_block();
    b.switch_to_block(block);
    b.seal_block(block);
    let flags = MemFlagsData::new();
    let array = |b: &mut FunctionBuilder, bytes: &[u8]| -> Value {
        let size = bytes.len().max(4) as u32;
        let slot =
            b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, size, 2));
        let addr = b.ins().stack_addr(types::I64, slot, 0);
        for (i, &byte) in bytes.iter().enumerate() {
            let v = b.ins().iconst(types::I8, i64::from(byte));
            b.ins().store(flags, v, addr, i as i32);
        }
        addr
    };
    let mut args = Vec::new();
    let mut arrays = Vec::new();
    for arg in &case.args {
        match arg {
            Arg::Array(a) => {
                let addr = array(&mut b, &a.bytes);
                arrays.push(addr);
                args.push(addr);
            }
            Arg::Value(DataValue::I32(x)) => args.push(b.ins().iconst(types::I32, i64::from(*x))),
            other => panic!("unexpected argument {other:?}"),
        }
    }
    let sigref = b.import_signature(kernel.signature.clone());
    let name = match &kernel.name {
        UserFuncName::Testcase(t) => ExternalName::TestCase(t.clone()),
        other => panic!("unexpected name {other}"),
    };
    let callee = b.import_function(ExtFuncData {
        name,
        signature: sigref,
        colocated: true,
        patchable: false,
    });
    let call = b.ins().call(callee, &args);
    let mut results = vec![b.inst_results(call)[0]];
    let words = |b: &mut FunctionBuilder, addr: Value, n: usize, out: &mut Vec<Value>| {
        for i in 0..n {
            out.push(b.ins().load(types::I32, flags, addr, 4 * i as i32));
        }
    };
    words(&mut b, arrays[0], 8, &mut results);
    if visible_w {
        words(&mut b, arrays[2], SCHEDULE_WORDS, &mut results);
    }
    b.ins().return_(&results);
    b.finalize(schedlab_kernels::ir_build::frontend_config());
    func
}

fn interpret(kernel: &Function, case: &Case, visible_w: bool) -> Vec<u32> {
    let wrap = wrapper(kernel, case, visible_w);
    let mut env = FunctionStore::default();
    env.add(wrap.name.to_string(), &wrap);
    env.add(kernel.name.to_string(), kernel);
    let state = InterpreterState::default().with_function_store(env);
    match Interpreter::new(state).call_by_name("%wrapper", &[]) {
        Ok(ControlFlow::Return(values)) => values
            .iter()
            .map(|v| match v {
                DataValue::I32(x) => *x as u32,
                other => panic!("unexpected result {other:?}"),
            })
            .collect(),
        other => panic!("interpreter: {other:?}"),
    }
}

/// What the model says the wrapper returns.
fn expected(kernel: &dyn Kernel, case: &Case, visible_w: bool) -> Vec<u32> {
    let effect = kernel.expected(case).expect("well-formed case");
    let mut out = vec![match effect.returns[0] {
        DataValue::I32(r) => r as u32,
        ref other => panic!("unexpected return {other:?}"),
    }];
    out.extend(ArrayArg::to_words(&effect.arrays[0]));
    if visible_w {
        out.extend(ArrayArg::to_words(&effect.arrays[2]));
    }
    out
}

fn verify(func: &Function, what: &str) {
    let flags = settings::Flags::new(settings::builder());
    cranelift_codegen::verify_function(func, &flags).unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// The four variants of `build`'s function, with the forwarding statistics of the last.
fn variants(build: fn() -> Function) -> (Vec<(&'static str, Function)>, forward::ForwardStats) {
    let built = build();
    let mut forwarded = build();
    forward::run(&mut forwarded);
    let mut predicated = build();
    bce::run(&mut predicated, BceLevel::Predicate).expect("bce runs");
    let mut both = predicated.clone();
    let stats = forward::run(&mut both);
    let all = vec![
        ("built", built),
        ("forward", forwarded),
        ("predicate", predicated),
        ("predicate+forward", both),
    ];
    for (what, f) in &all {
        verify(f, what);
    }
    (all, stats)
}

fn differential(kernel: &dyn Kernel, build: fn() -> Function, visible_w: bool) {
    let (variants, _) = variants(build);
    let cases = kernel.cases(&CaseOptions {
        seed: 16,
        random: 6,
    });
    for case in &cases {
        let want = expected(kernel, case, visible_w);
        for (what, func) in &variants {
            assert_eq!(
                interpret(func, case, visible_w),
                want,
                "{} {what}: {}",
                kernel.name(),
                case.label
            );
        }
    }
}

#[test]
fn visible_w_forwarding_agrees_with_the_model_and_keeps_w() {
    differential(&sha256::KERNEL, sha256::compress_multi_block, true);
}

#[test]
fn private_w_forwarding_agrees_with_the_model() {
    differential(
        &sha256_local::KERNEL,
        || sha256::compress_multi_block_with(Schedule::Private),
        false,
    );
}

#[test]
fn every_w_load_is_forwarded_and_only_private_stores_die() {
    // Per loop copy (check-free and checked): 4 × 48 + 64 loads of W.
    let per_copy = 4 * 48 + 64;
    let (_, visible) = variants(sha256::compress_multi_block);
    assert_eq!(visible.loads_forwarded, 2 * per_copy);
    assert_eq!(visible.stores_removed, 0, "the caller sees W");
    let (_, private) = variants(|| sha256::compress_multi_block_with(Schedule::Private));
    assert_eq!(private.loads_forwarded, 2 * per_copy);
    assert_eq!(private.stores_removed, 2 * (16 + 48));
    assert_eq!(private.slots_freed, 1);
}
