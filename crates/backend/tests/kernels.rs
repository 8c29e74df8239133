//! Every registered kernel × every scheduling strategy × every target, through the one
//! executor: each kernel's cases (test vectors, random, hostile) with every array flush against
//! a guard page at its end and then at its start, natively on the host and under qemu for the
//! others, against the kernel's Rust model of the Java code. And the proof that the guard pages
//! catch what they should: a deliberately broken kernel that reads one word past its array
//! fails on every target.
//!
//! Without a cross compiler or qemu the foreign targets are skipped with a message; with
//! `SCHEDLAB_REQUIRE_TOOLS=1` (CI) they fail instead.

mod common;

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{
    AbiParam, Function, InstBuilder, MemFlagsData, Signature, UserFuncName, condcodes::IntCC, types,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use schedlab_backend::Target;
use schedlab_backend::check::run_kernel_cases;
use schedlab_backend::pipeline::PipelineConfig;
use schedlab_kernels::case::{Arg, ArrayArg, Case, Effect};
use schedlab_kernels::registry::{CaseOptions, Kernel, KernelInfo};
use schedlab_passes::sched::strategy_names;

/// Few random cases per run: every strategy and target multiplies them.
const OPTIONS: CaseOptions = CaseOptions {
    seed: 2026,
    random: 6,
};

fn every_kernel_every_strategy(target: Target) {
    let every_strategy = |_: &dyn Kernel| strategy_names();
    let tally = common::tally_every_kernel(
        target,
        &OPTIONS,
        every_strategy,
        PipelineConfig::with_strategy,
        |_, _| {},
    );
    if let Some(tally) = tally {
        tally.assert_all_agree(target);
    }
}

common::test_on_every_target!(every_kernel_every_strategy:
    x86_64_every_kernel_every_strategy => X86_64,
    aarch64_every_kernel_every_strategy_under_qemu => Aarch64,
    s390x_every_kernel_every_strategy_under_qemu => S390x,
    riscv64_every_kernel_every_strategy_under_qemu => Riscv64,
);

/// `int sum(int[] a)` compiled with an off-by-one loop bound: `for (i = 0; i <= a.length;
/// i++)` without the bounds check Java would have, so it reads one word past the array. Its
/// model is the correct Java sum.
struct ReadsPastTheEnd;

impl ReadsPastTheEnd {
    /// The function with the off-by-one bound.
    fn function() -> Function {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(types::I64));
        sig.params.push(AbiParam::new(types::I32));
        sig.returns.push(AbiParam::new(types::I32));
        let mut func = Function::with_name_signature(UserFuncName::testcase("past_end"), sig);
        let mut ctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut ctx);
        let (entry, head, body, exit) = (
            b.create_block(),
            b.create_block(),
            b.create_block(),
            b.create_block(),
        );
        b.append_block_params_for_function_params(entry);
        b.append_block_param(head, types::I32); // i
        b.append_block_param(head, types::I32); // sum
        b.append_block_param(exit, types::I32);
        b.switch_to_block(entry);
        let (a, len) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let zero = b.ins().iconst(types::I32, 0);
        b.ins().jump(head, &[zero.into(), zero.into()]);
        b.switch_to_block(head);
        let (i, sum) = (b.block_params(head)[0], b.block_params(head)[1]);
        let more = b.ins().icmp(IntCC::SignedLessThanOrEqual, i, len); // the bug: `<=`
        b.ins().brif(more, body, &[], exit, &[sum.into()]);
        b.switch_to_block(body);
        let wide = b.ins().sextend(types::I64, i);
        let offset = b.ins().ishl_imm_u(wide, 2);
        let address = b.ins().iadd(a, offset);
        let x = b
            .ins()
            .load(types::I32, MemFlagsData::trusted(), address, 0);
        let next_sum = b.ins().iadd(sum, x);
        let next_i = b.ins().iadd_imm_s(i, 1);
        b.ins().jump(head, &[next_i.into(), next_sum.into()]);
        b.switch_to_block(exit);
        let result = b.block_params(exit)[0];
        b.ins().return_(&[result]);
        b.seal_all_blocks();
        b.finalize(schedlab_kernels::ir_build::frontend_config());
        func
    }
}

impl Kernel for ReadsPastTheEnd {
    fn info(&self) -> KernelInfo {
        KernelInfo {
            name: "test-reads-past-the-end",
            summary: "sums a[0..=length]: one word too many",
            aliases: &[],
            build: Self::function,
        }
    }

    fn cases(&self, _: &CaseOptions) -> Vec<Case> {
        (1..=5)
            .map(|n| {
                let words: Vec<i32> = (1..=n).collect();
                Case::new(
                    format!("length {n}"),
                    vec![
                        Arg::Array(ArrayArg::ints(&words)),
                        Arg::Value(DataValue::I32(n)),
                    ],
                )
            })
            .collect()
    }

    fn expected(&self, case: &Case) -> Result<Effect, String> {
        let array = case.array(0)?;
        let sum = ArrayArg::to_words(&array.bytes)
            .into_iter()
            .fold(0i32, |s, w| s.wrapping_add(w as i32));
        Ok(Effect {
            returns: vec![DataValue::I32(sum)],
            arrays: vec![array.bytes.clone()],
        })
    }
}

#[test]
fn a_read_one_word_past_the_end_traps_on_every_target() {
    let kernel = ReadsPastTheEnd;
    for target in Target::ALL {
        if !common::runnable(target) {
            continue;
        }
        let cases = kernel.cases(&OPTIONS);
        let verdicts = run_kernel_cases(&kernel, kernel.build(), target, &cases)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        for v in &verdicts {
            // Flush against the guard page at the end, the extra read faults; at the start,
            // it reads the zeros after the array and the sum comes out right by luck.
            if v.label.ends_with("[end]") {
                let mismatch = v.mismatch.as_deref().unwrap_or("no mismatch");
                assert!(
                    mismatch.contains("SIGSEGV") || mismatch.contains("SIGBUS"),
                    "{target} {}: expected a trap, got: {mismatch}",
                    v.label
                );
            } else {
                assert_eq!(v.mismatch, None, "{target} {}", v.label);
            }
        }
    }
}
