//! Two small non-MD5 kernels for the bounds-check-elimination pass: one it must optimise
//! ([`multi_block`]) and one it must leave alone ([`unmergeable`]).
//!
//! Both share MD5's signature so the same native test harness drives them:
//!
//! ```text
//! function %name(i64 out, i64 array, i32 len, i32 ofs, i32 limit) -> i32
//! ```
//!
//! `array`/`len` are a Java `int[]` and its length in elements (`index_shift` 2), `out` points
//! to one `i32` accumulator that is read on entry and written on exit, and the result is the
//! index after the last group or [`OUT_OF_BOUNDS`].

use crate::case::{Arg, ArrayArg, Case, Effect};
use crate::ir_build::{LoopBlocks, build_function, jump};
use crate::java::{CheckedArray, OUT_OF_BOUNDS, alias_region};
use crate::md5::signature;
use crate::registry::{CaseOptions, Kernel, KernelInfo};
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{
    Block, Function, InstBuilder, MemFlagsData, Value, condcodes::IntCC, types,
};
use cranelift_frontend::FunctionBuilder;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// Elements read per iteration of [`multi_block`].
pub const GROUP: i64 = 8;

/// The name of [`multi_block`]'s function.
pub const FUNCTION_NAME: &str = "int_sum_multi_block";

/// Java:
///
/// ```java
/// int h = out[0];
/// for (; ofs <= limit; ofs += 8) {
///     for (int k = 0; k < 8; k++) h = 31 * h + a[ofs + k];   // unrolled: 8 checked reads
/// }
/// out[0] = h;
/// return ofs;
/// ```
///
/// The hash is order-sensitive, so a test sees whether exactly the completed groups were
/// committed when a read fails.
pub fn multi_block() -> Function {
    build(FUNCTION_NAME, |b, array, _, ofs, h_in, oob| {
        let mut h = h_in;
        for k in 0..GROUP {
            let x = array.checked_load(b, types::I32, ofs, k, oob, &[h_in]);
            let scaled = b.ins().imul_imm_s(h, 31);
            h = b.ins().iadd(scaled, x);
        }
        (h, GROUP)
    })
}

/// A kernel whose checks no sound merge can combine and no loop test can prove; the pass must
/// leave it unchanged at every level:
///
/// ```java
/// int h = out[0];
/// for (; ofs <= limit; ofs += 2) {
///     int j = limit - ofs;
///     h += a[j];            // base j
///     h ^= a[ofs * 3];      // another base, and not ofs + constant
///     out[0] = h;           // a store: the next check may not move above it
///     h += a[j + 1];        // same base and bound as the first, but after the store
/// }
/// return ofs;
/// ```
///
/// None of the indices is the induction variable plus a constant, so loop predication has
/// nothing to prove either.
pub fn unmergeable() -> Function {
    build(
        "unmergeable",
        |b, array, [out, _, _, _, limit], ofs, h, oob| {
            let j = b.ins().isub(limit, ofs);
            let x0 = array.checked_load(b, types::I32, j, 0, oob, &[h]);
            let h1 = b.ins().iadd(h, x0);
            let tripled = b.ins().imul_imm_s(ofs, 3);
            let x1 = array.checked_load(b, types::I32, tripled, 0, oob, &[h]);
            let h2 = b.ins().bxor(h1, x1);
            b.ins().store(MemFlagsData::trusted(), h2, out, 0);
            let x2 = array.checked_load(b, types::I32, j, 1, oob, &[h]);
            let h3 = b.ins().iadd(h2, x2);
            (h3, 2)
        },
    )
}

/// The loop skeleton shared by both kernels: entry, header `ofs <= limit`, a body built by
/// `body(builder, array, entry_params, ofs, h, oob) -> (h', step)`, exit and out-of-bounds
/// blocks.
fn build(
    name: &str,
    body: impl FnOnce(
        &mut FunctionBuilder,
        &CheckedArray,
        [Value; 5],
        Value,
        Value,
        Block,
    ) -> (Value, i64),
) -> Function {
    build_function(name, signature(), |b| {
        let out_region = alias_region(b, 1, "int out[1]");
        let array_region = alias_region(b, 2, "int[] a");
        let out_flags = MemFlagsData::trusted().with_alias_region(Some(out_region));
        // A Java `int[]` holds native-endian ints (big-endian on s390x).
        let array_flags = MemFlagsData::new()
            .with_notrap()
            .with_readonly()
            .with_alias_region(Some(array_region));

        let blocks = LoopBlocks::create(b);
        let LoopBlocks {
            entry,
            header,
            body: body_block,
            exit,
            oob,
        } = blocks;
        for blk in [header, body_block, exit] {
            b.append_block_param(blk, types::I32); // h
            b.append_block_param(blk, types::I32); // ofs
        }
        b.append_block_param(oob, types::I32); // h

        b.switch_to_block(entry);
        b.seal_block(entry);
        let params: [Value; 5] = std::array::from_fn(|i| b.block_params(entry)[i]);
        let [out, array_base, len, ofs, limit] = params;
        let h0 = b.ins().load(types::I32, out_flags, out, 0);
        // A Java int[]: one index per element, 4 bytes apart; bound = length.
        let array = CheckedArray::new(b, array_base, len, 1, 2, array_flags);
        jump(b, header, &[h0, ofs]);

        let bp = blocks.test_and_enter_body(b, IntCC::SignedLessThanOrEqual, 1, limit);
        let (h_out, step) = body(b, &array, params, bp[1], bp[0], oob);
        let next = b.ins().iadd_imm_s(bp[1], step);
        jump(b, header, &[h_out, next]);
        b.seal_block(header);

        b.switch_to_block(exit);
        b.seal_block(exit);
        let ep = b.block_params(exit).to_vec();
        b.ins().store(out_flags, ep[0], out, 0);
        b.ins().return_(&[ep[1]]);

        b.switch_to_block(oob);
        b.seal_block(oob);
        let h = b.block_params(oob)[0];
        b.ins().store(out_flags, h, out, 0);
        let status = b.ins().iconst(types::I32, i64::from(OUT_OF_BOUNDS));
        b.ins().return_(&[status]);
    })
}

/// The reference semantics of [`multi_block`] in plain Rust (Java `int` arithmetic).
pub fn reference_multi_block(out: &mut i32, a: &[i32], ofs: i32, limit: i32) -> i32 {
    let mut h = *out;
    let mut ofs = ofs;
    while ofs <= limit {
        let mut next = h;
        for k in 0..GROUP as i32 {
            let i = ofs.wrapping_add(k);
            let Some(&x) = usize::try_from(i).ok().and_then(|i| a.get(i)) else {
                *out = h;
                return OUT_OF_BOUNDS;
            };
            next = next.wrapping_mul(31).wrapping_add(x);
        }
        h = next;
        ofs = ofs.wrapping_add(GROUP as i32);
    }
    *out = h;
    ofs
}

/// The registry entry of [`multi_block`] (`int-sum`).
pub static KERNEL: IntSumKernel = IntSumKernel;

/// `int-sum`: [`multi_block`], eight checked `int[]` reads per iteration.
#[derive(Clone, Copy, Debug)]
pub struct IntSumKernel;

impl IntSumKernel {
    fn case(label: String, h: i32, a: &[i32], ofs: i32, limit: i32) -> Case {
        let len = i32::try_from(a.len()).unwrap_or(i32::MAX);
        Case::new(
            label,
            vec![
                Arg::Array(ArrayArg::ints(&[h])),
                Arg::Array(ArrayArg::ints(a)),
                Arg::Value(DataValue::I32(len)),
                Arg::Value(DataValue::I32(ofs)),
                Arg::Value(DataValue::I32(limit)),
            ],
        )
    }
}

impl Kernel for IntSumKernel {
    fn info(&self) -> KernelInfo {
        KernelInfo {
            name: "int-sum",
            summary: "an order-sensitive hash over int[] groups of eight: the smallest predicable loop",
            aliases: &[],
            build: multi_block,
        }
    }

    fn cases(&self, options: &CaseOptions) -> Vec<Case> {
        let mut rng = StdRng::seed_from_u64(options.seed);
        let mut cases = Vec::new();
        for i in 0..options.random.max(1) {
            let a: Vec<i32> = (0..rng.random_range(0..100))
                .map(|_| rng.random())
                .collect();
            let n = a.len() as i32;
            let ofs = rng.random_range(0..=n.min(9));
            let label = format!("random {i} len={n} ofs={ofs}");
            cases.push(Self::case(label, rng.random(), &a, ofs, n - GROUP as i32));
        }
        // The last group one element too long; a negative offset; a limit past the end.
        for (n, ofs, limit) in [(15, 0, 8), (16, -1, 8), (8, 0, i32::MAX)] {
            let a: Vec<i32> = (1..=n).collect();
            let label = format!("hostile len={n} ofs={ofs} limit={limit}");
            cases.push(Self::case(label, 17, &a, ofs, limit));
        }
        cases
    }

    fn expected(&self, case: &Case) -> Result<Effect, String> {
        let out = ArrayArg::to_words(&case.array(0)?.bytes);
        let [h] = out[..] else {
            return Err("out must hold one int".into());
        };
        let a: Vec<i32> = ArrayArg::to_words(&case.array(1)?.bytes)
            .into_iter()
            .map(|w| w as i32)
            .collect();
        if case.int(2)? as usize != a.len() {
            return Err("len must be the array's length".into());
        }
        let mut h = h as i32;
        let ret = reference_multi_block(&mut h, &a, case.int(3)?, case.int(4)?);
        Ok(Effect {
            returns: vec![DataValue::I32(ret)],
            arrays: vec![ArrayArg::ints(&[h]).bytes, ArrayArg::ints(&a).bytes],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::settings;

    #[test]
    fn kernels_verify() {
        let flags = settings::Flags::new(settings::builder());
        for f in [multi_block(), unmergeable()] {
            cranelift_codegen::verify_function(&f, &flags).expect("kernel verifies");
        }
    }
}
