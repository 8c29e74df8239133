//! The executor's timing of any function: calls judged first, then timed per configuration.

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, Function, InstBuilder, Signature, UserFuncName, types};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use schedlab_backend::Target;
use schedlab_backend::exec::{Call, Outcome, Unit};
use schedlab_backend::target::OptLevel;
use schedlab_bench::calls::{CallBudgets, Config, Probe, measure};
use std::time::Duration;

/// `fn(n) -> n`: a loop of `n` dependent adds, returning the count.
fn counting_loop() -> Function {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.push(AbiParam::new(types::I64));
    sig.returns.push(AbiParam::new(types::I64));
    let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    let entry = b.create_block();
    let head = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.append_block_param(head, types::I64);
    b.append_block_param(head, types::I64);
    b.append_block_param(exit, types::I64);
    b.switch_to_block(entry);
    let n = b.block_params(entry)[0];
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().jump(head, &[zero.into(), n.into()]);
    b.switch_to_block(head);
    let (acc, left) = (b.block_params(head)[0], b.block_params(head)[1]);
    let done = b.ins().icmp_imm_s(IntCC::Equal, left, 0);
    let acc1 = b.ins().iadd_imm_s(acc, 1);
    let left1 = b.ins().iadd_imm_s(left, -1);
    b.ins().brif(
        done,
        exit,
        &[acc.into()],
        head,
        &[acc1.into(), left1.into()],
    );
    b.switch_to_block(exit);
    let result = b.block_params(exit)[0];
    b.ins().return_(&[result]);
    b.seal_all_blocks();
    b.finalize(schedlab_kernels::ir_build::frontend_config());
    func
}

#[test]
fn times_a_loop_and_scales_with_its_trip_count() {
    let target = Target::host().expect("the host is a schedlab target");
    let unit = Unit {
        label: "loop".into(),
        functions: vec![counting_loop()],
    };
    let config = |name: &str, opt| Config {
        name: name.into(),
        isa: target.isa(opt).expect("host ISA"),
        unit: unit.clone(),
    };
    let configs = [
        config("none", OptLevel::None),
        config("speed", OptLevel::Speed),
    ];
    let probe = |n: i64| Probe {
        label: format!("n={n}"),
        call: Call::scalars(0, 0, &[DataValue::I64(n)]),
    };
    let probes = [probe(1_000), probe(100_000)];
    let want = [1_000i64, 100_000];
    let judge = |p: usize, o: &Outcome| match o {
        Outcome::Returned(e) if e.returns == [DataValue::I64(want[p])] => None,
        other => Some(format!("{other}")),
    };
    let budgets = CallBudgets {
        reps: 3,
        sample: Duration::from_millis(5),
    };
    let times = measure(target, &configs, &probes, &judge, budgets, || {}).expect("runs");
    for c in 0..configs.len() {
        assert_eq!(times.errors[c], [None, None], "config {c}");
        let short = times.samples.median(c, 0).expect("timed");
        let long = times.samples.median(c, 1).expect("timed");
        // 100× the iterations: far more than 10× the time on any machine (the loop is a
        // dependent chain; the call's overhead is a few nanoseconds).
        assert!(long > 10.0 * short, "config {c}: {long} vs {short}");
    }
    let wrong = |_: usize, _: &Outcome| Some("always wrong".to_string());
    let judged =
        measure(target, &configs[..1], &probes[..1], &wrong, budgets, || {}).expect("runs");
    assert_eq!(judged.errors[0][0].as_deref(), Some("always wrong"));
    assert!(judged.samples.median(0, 0).is_none());
}
