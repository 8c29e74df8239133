//! A kernel defined outside schedlab's crates, registered at run time and then reported,
//! checked on every target and benchmarked next to stock Cranelift through `schedlab::run_cli`
//! — this file and the one `register` call are all it takes.
//!
//! ```sh
//! cargo run --release --example custom_kernel              # report, check and bench it
//! cargo run --release --example custom_kernel -- list      # or any schedlab command line
//! ```
//!
//! The kernel, `int-dot`, is Java's
//!
//! ```java
//! static int dot(int[] a, int[] b) {
//!     int s = 0;
//!     for (int i = 0; i < a.length; i++) s += a[i] * b[i];   // both reads checked
//!     return s;
//! }
//! ```
//!
//! as a JVM front end hands it over (every array read bounds-checked; a failed check returns
//! schedlab's `ArrayIndexOutOfBoundsException` status instead of a sum).

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, Function, InstBuilder, MemFlagsData, Signature, types};
use cranelift_codegen::ir::{BlockArg, UserFuncName};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use schedlab_kernels::case::{Arg, ArrayArg, Case, Effect};
use schedlab_kernels::ir_build::frontend_config;
use schedlab_kernels::java::{CheckedArray, OUT_OF_BOUNDS, alias_region};
use schedlab_kernels::registry::{self, CaseOptions, Kernel, KernelInfo};
use std::process::ExitCode;

/// `int-dot`: the dot product of two `int[]`, every read checked.
pub struct IntDot;

/// The registry entry (the test `crates/cli/tests/custom_kernel.rs` registers it too).
pub static KERNEL: IntDot = IntDot;

impl IntDot {
    fn case(label: &str, a: &[i32], b: &[i32]) -> Case {
        let len = |x: &[i32]| DataValue::I32(i32::try_from(x.len()).unwrap_or(i32::MAX));
        Case::new(
            label,
            vec![
                Arg::Array(ArrayArg::ints(a)),
                Arg::Value(len(a)),
                Arg::Array(ArrayArg::ints(b)),
                Arg::Value(len(b)),
            ],
        )
    }

    /// The Java code in Rust: `int` arithmetic wraps; a read past `b`'s end is the exception.
    fn reference(a: &[i32], b: &[i32]) -> i32 {
        let mut s = 0i32;
        for (i, &x) in a.iter().enumerate() {
            let Some(&y) = b.get(i) else {
                return OUT_OF_BOUNDS;
            };
            s = s.wrapping_add(x.wrapping_mul(y));
        }
        s
    }

    /// The function, as a JVM front end hands it over.
    fn function() -> Function {
        // fn(a: i64, a_len: i32, b: i64, b_len: i32) -> i32
        let mut sig = Signature::new(CallConv::SystemV);
        for ty in [types::I64, types::I32, types::I64, types::I32] {
            sig.params.push(AbiParam::new(ty));
        }
        sig.returns.push(AbiParam::new(types::I32));
        let mut func = Function::with_name_signature(UserFuncName::testcase("int_dot"), sig);
        let mut ctx = FunctionBuilderContext::new();
        let mut fb = FunctionBuilder::new(&mut func, &mut ctx);
        let flags = |fb: &mut FunctionBuilder, id, name| {
            let region = alias_region(fb, id, name);
            MemFlagsData::new()
                .with_notrap()
                .with_readonly()
                .with_alias_region(Some(region))
        };
        let (entry, header, body, exit, oob) = (
            fb.create_block(),
            fb.create_block(),
            fb.create_block(),
            fb.create_block(),
            fb.create_block(),
        );
        fb.append_block_params_for_function_params(entry);
        for block in [header, body] {
            fb.append_block_param(block, types::I32); // i
            fb.append_block_param(block, types::I32); // s
        }
        fb.append_block_param(exit, types::I32); // s

        fb.switch_to_block(entry);
        let [a, a_len, b, b_len] = std::array::from_fn(|k| fb.block_params(entry)[k]);
        let a_flags = flags(&mut fb, 1, "int[] a");
        let b_flags = flags(&mut fb, 2, "int[] b");
        let a = CheckedArray::new(&mut fb, a, a_len, 1, 2, a_flags);
        let b = CheckedArray::new(&mut fb, b, b_len, 1, 2, b_flags);
        let zero = fb.ins().iconst(types::I32, 0);
        fb.ins().jump(header, &[zero.into(), zero.into()]);

        fb.switch_to_block(header);
        let (i, s) = (fb.block_params(header)[0], fb.block_params(header)[1]);
        let more = fb.ins().icmp(IntCC::SignedLessThan, i, a_len);
        let args = [BlockArg::Value(i), BlockArg::Value(s)];
        fb.ins()
            .brif(more, body, &args, exit, &[BlockArg::Value(s)]);

        fb.switch_to_block(body);
        let (i, s) = (fb.block_params(body)[0], fb.block_params(body)[1]);
        let x = a.checked_load(&mut fb, types::I32, i, 0, oob, &[]);
        let y = b.checked_load(&mut fb, types::I32, i, 0, oob, &[]);
        let product = fb.ins().imul(x, y);
        let s = fb.ins().iadd(s, product);
        let i = fb.ins().iadd_imm_s(i, 1);
        fb.ins().jump(header, &[i.into(), s.into()]);

        fb.switch_to_block(exit);
        let s = fb.block_params(exit)[0];
        fb.ins().return_(&[s]);

        fb.switch_to_block(oob);
        let status = fb.ins().iconst(types::I32, i64::from(OUT_OF_BOUNDS));
        fb.ins().return_(&[status]);
        fb.seal_all_blocks();
        fb.finalize(frontend_config());
        func
    }
}

impl Kernel for IntDot {
    fn info(&self) -> KernelInfo {
        KernelInfo {
            name: "int-dot",
            summary: "example: a checked int[] dot product registered from outside the crates",
            aliases: &[],
            build: Self::function,
        }
    }

    fn cases(&self, options: &CaseOptions) -> Vec<Case> {
        // A small deterministic generator: the example needs no random-number crate.
        let mut state = options.seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as i32
        };
        let mut cases = vec![
            Self::case("empty", &[], &[]),
            Self::case("1..=4 · 1..=4", &[1, 2, 3, 4], &[1, 2, 3, 4]),
        ];
        for k in 0..options.random {
            let n = usize::try_from(next().rem_euclid(200)).unwrap_or(0);
            let a: Vec<i32> = (0..n).map(|_| next()).collect();
            let b: Vec<i32> = (0..n).map(|_| next()).collect();
            cases.push(Self::case(&format!("random {k} n={n}"), &a, &b));
        }
        // b one element short (the last read fails), b empty, b longer than a.
        cases.push(Self::case("hostile b short", &[1; 9], &[1; 8]));
        cases.push(Self::case("hostile b empty", &[5], &[]));
        cases.push(Self::case("b longer", &[2; 3], &[3; 7]));
        cases
    }

    fn bench_cases(&self) -> Vec<Case> {
        let a: Vec<i32> = (0..4096).map(|i| i * 7 - 3).collect();
        let b: Vec<i32> = (0..4096).map(|i| 11 - i).collect();
        vec![Self::case("n=4096", &a, &b)]
    }

    fn expected(&self, case: &Case) -> Result<Effect, String> {
        let ints = |k: usize| -> Result<Vec<i32>, String> {
            let words = ArrayArg::to_words(&case.array(k)?.bytes);
            Ok(words.into_iter().map(|w| w as i32).collect())
        };
        let (a, b) = (ints(0)?, ints(2)?);
        if case.int(1)? as usize != a.len() || case.int(3)? as usize != b.len() {
            return Err("each length must be its array's".into());
        }
        Ok(Effect {
            returns: vec![DataValue::I32(Self::reference(&a, &b))],
            arrays: vec![ArrayArg::ints(&a).bytes, ArrayArg::ints(&b).bytes],
        })
    }
}

/// The command lines the example runs when given none.
pub fn demo() -> Vec<String> {
    let name = KERNEL.name();
    vec![
        format!("report --kernel {name} --strategy source,balanced --target all"),
        format!("check --kernel {name} --target all --quiet"),
        format!("bench --kernel {name} --strategy source,balanced --quick"),
    ]
}

fn main() -> ExitCode {
    if let Err(e) = registry::register(&KERNEL) {
        eprintln!("custom_kernel: {e}");
        return ExitCode::FAILURE;
    }
    // With arguments this program is `schedlab` plus what it registered.
    schedlab::run_cli_or_demo("custom_kernel", &demo())
}
