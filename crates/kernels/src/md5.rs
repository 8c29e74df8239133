//! MD5's multi-block compression (RFC 1321) as the JVM front end sees OpenJDK's
//! `MD5.implCompressMultiBlock` looping over `implCompress0`.
//!
//! Signature (`SystemV` on every target; the backend adopts the target's default convention):
//!
//! ```text
//! function %md5_compress_multi_block(i64 state, i64 buf, i32 len, i32 ofs, i32 limit) -> i32
//! ```
//!
//! * `state` points to four native-endian `u32` words (A, B, C, D), read before the loop and
//!   written after it.
//! * `buf`/`len` are the `byte[]` and its length; `ofs`/`limit` are Java `int`s: blocks start at
//!   `ofs, ofs + 64, …` while `ofs <= limit`.
//! * Returns the offset after the last block, or [`crate::OUT_OF_BOUNDS`] when a read would leave
//!   the buffer; the state then holds exactly the blocks completed before the failing one.
//!
//! Every message word is a little-endian 32-bit read with its own bounds check (16 per block),
//! and the 64 steps follow `MD5.java`'s `FF`/`GG`/`HH`/`II` helpers operation for operation, in
//! Java's evaluation order. They are generated from [`SHIFTS`], [`MESSAGE_ORDER`] and [`SINES`].

use crate::case::{ArrayArg, Case, Effect};
use crate::digest::{self, BlockStep, CaseCall};
use crate::ir_build::{
    DigestLoop, LoopBlocks, build_function, message_flags, param_array, system_v_signature,
};
use crate::java::{CheckedArray, alias_region};
use crate::registry::{CaseOptions, Kernel, KernelInfo};
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{Function, InstBuilder, MemFlagsData, Signature, Value, types};
use cranelift_frontend::FunctionBuilder;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// Bytes consumed by one compression.
pub const BLOCK_BYTES: i64 = 64;

/// The name the kernel's function carries in CLIF and as a linker symbol.
pub const FUNCTION_NAME: &str = "md5_compress_multi_block";

/// Alias-region id of the four state words.
pub const STATE_REGION: u32 = 1;
/// Alias-region id of the message buffer (`byte[] b`).
pub const MESSAGE_REGION: u32 = 2;

/// Left-rotation amounts, `SHIFTS[round][step % 4]` (RFC 1321, S11..S44).
pub const SHIFTS: [[i64; 4]; 4] = [
    [7, 12, 17, 22],
    [5, 9, 14, 20],
    [4, 11, 16, 23],
    [6, 10, 15, 21],
];

/// Which message word step `16 * round + i` adds, `MESSAGE_ORDER[round][i]`.
pub const MESSAGE_ORDER: [[usize; 16]; 4] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [1, 6, 11, 0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12],
    [5, 8, 11, 14, 1, 4, 7, 10, 13, 0, 3, 6, 9, 12, 15, 2],
    [0, 7, 14, 5, 12, 3, 10, 1, 8, 15, 6, 13, 4, 11, 2, 9],
];

/// The additive constants `T[i] = floor(2^32 * |sin(i + 1)|)` (RFC 1321, section 3.4).
pub const SINES: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

/// The initial chaining value A, B, C, D (RFC 1321, section 3.3).
pub const INITIAL_STATE: [u32; 4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];

/// RFC 1321 appendix A.5: the test suite's messages and their digests.
pub const RFC1321_SUITE: [(&str, &str); 7] = [
    ("", "d41d8cd98f00b204e9800998ecf8427e"),
    ("a", "0cc175b9c0f1b6a831c399e269772661"),
    ("abc", "900150983cd24fb0d6963f7d28e17f72"),
    ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
    (
        "abcdefghijklmnopqrstuvwxyz",
        "c3fcd3d76192e4007dfb496cca67e13b",
    ),
    (
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "d174ab98d277d9f5a5611c2c9f419d9f",
    ),
    (
        "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
        "57edf4a22be3c955ac49da2e2107b67a",
    ),
];

/// MD5 padding of a whole message (RFC 1321, 3.1–3.2): `0x80`, zeros to 56 mod 64, then the
/// bit length little-endian; the result is whole 64-byte blocks.
pub fn pad_message(message: &[u8]) -> Vec<u8> {
    digest::pad_with_length(message, u64::to_le_bytes)
}

/// The kernel's signature: `(state: i64, buf: i64, len: i32, ofs: i32, limit: i32) -> i32`.
pub fn signature() -> Signature {
    use types::{I32, I64};
    system_v_signature(&[I64, I64, I32, I32, I32], &[I32])
}

/// Builds the Java-literal multi-block compression function (16 bounds checks per block).
pub fn compress_multi_block() -> Function {
    build_function(FUNCTION_NAME, signature(), |b| {
        let state_region = alias_region(b, STATE_REGION, "md5 state");
        let message_region = alias_region(b, MESSAGE_REGION, "byte[] b");
        let state_flags = MemFlagsData::trusted().with_alias_region(Some(state_region));
        let message_flags = message_flags(message_region);
        let lp = DigestLoop::create(b, 4);
        let LoopBlocks { entry, oob, .. } = lp.blocks;

        // entry: read the state, compute the buffer's bound once.
        b.switch_to_block(entry);
        b.seal_block(entry);
        let [state, buf, len, ofs, limit] = param_array(b, entry);
        let words = DigestLoop::load_state(b, state, state_flags, 4);
        let message = CheckedArray::new(b, buf, len, 4, 0, message_flags);
        lp.enter(b, ofs, &words);

        // header, then body: implCompress0 — 16 checked reads, then 64 steps.
        let (chain_in, block_ofs) = lp.test_and_enter_body::<4>(b, limit);
        let x: Vec<Value> = (0..16)
            .map(|k| message.checked_load(b, types::I32, block_ofs, 4 * k, oob, &chain_in))
            .collect();
        let chain_out = sixty_four_steps(b, chain_in, &x);
        lp.close(b, block_ofs, &chain_in, &chain_out, state, state_flags);
    })
}

/// The 64 steps of one block; returns the new (a, b, c, d) before the feed-forward add.
fn sixty_four_steps(b: &mut FunctionBuilder, input: [Value; 4], x: &[Value]) -> [Value; 4] {
    let mut chain = input;
    for step_index in 0..64 {
        chain = step(b, &ScalarOps, step_index, chain, x);
    }
    chain
}

/// The operations of one MD5 step that depend on the lane shape: adding the round constant and
/// rotating. Everything else ([`round_function`], the additions) is the same CLIF on `i32` and
/// on `i32x4`, so the scalar and the multi-buffer kernels share one generator ([`step`]).
pub(crate) trait StepOps {
    /// `v` plus step `step_index`'s round constant [`SINES`] (wrapping, per lane) — minus one
    /// in the steps of round 3 when [`StepOps::subtracts_round_i`].
    fn add_sine(&self, b: &mut FunctionBuilder, v: Value, step_index: usize) -> Value;
    /// Whether round 3 (`II`) is computed as a subtraction (see [`step`]); `add_sine` then
    /// adds its round constant minus one. Vectors gain by it: they have no `not`.
    fn subtracts_round_i(&self) -> bool {
        false
    }
    /// `v` rotated left by `amount` bits (per lane).
    fn rotl(&self, b: &mut FunctionBuilder, v: Value, amount: i64) -> Value;
    /// Message word `k` for a step of round `round` (0..4): `x[k]` itself unless the lane shape
    /// keeps the words in memory and reads one at each use.
    fn message_word(
        &self,
        _b: &mut FunctionBuilder,
        x: &[Value],
        k: usize,
        _round: usize,
    ) -> Value {
        x[k]
    }
}

/// One `i32`: `iadd_imm` and `rotl_imm`.
struct ScalarOps;

impl StepOps for ScalarOps {
    fn add_sine(&self, b: &mut FunctionBuilder, v: Value, step_index: usize) -> Value {
        b.ins().iadd_imm_s(v, i64::from(SINES[step_index] as i32))
    }

    fn rotl(&self, b: &mut FunctionBuilder, v: Value, amount: i64) -> Value {
        b.ins().rotl_imm_u(v, amount)
    }
}

/// Step `step_index` (0..64) of MD5 in Java's evaluation order: `a += ((F + x) + ac);
/// a = rotl(a, s) + b`; returns the rotated chain (d, a', b, c).
pub(crate) fn step(
    b: &mut FunctionBuilder,
    ops: &dyn StepOps,
    step_index: usize,
    [va, vb, vc, vd]: [Value; 4],
    x: &[Value],
) -> [Value; 4] {
    let (round, i) = (step_index / 16, step_index % 16);
    let word = ops.message_word(b, x, MESSAGE_ORDER[round][i], round);
    let sum = if round == 3 && ops.subtracts_round_i() {
        // II = c ^ (b | ~d) = ~(c ^ (d & ~b)) = -(c ^ (d & ~b)) - 1, so
        // a + II + x + ac = (a + (x + (ac - 1))) - (c ^ (d & ~b)): no `not` of d.
        let d_not_b = b.ins().band_not(vd, vb);
        let mixed = b.ins().bxor(vc, d_not_b);
        let plus_ac = ops.add_sine(b, word, step_index);
        let plus_a = b.ins().iadd(va, plus_ac);
        b.ins().isub(plus_a, mixed)
    } else {
        let mixed = round_function(b, round, vb, vc, vd);
        // Java: `a += F + x + ac;` evaluates ((F + x) + ac) and then adds it to a.
        let plus_x = b.ins().iadd(mixed, word);
        let plus_ac = ops.add_sine(b, plus_x, step_index);
        b.ins().iadd(va, plus_ac)
    };
    let rotated = ops.rotl(b, sum, SHIFTS[round][i % 4]);
    let new_a = b.ins().iadd(rotated, vb);
    [vd, new_a, vb, vc]
}

/// `MD5.java`'s round functions in its operand order.
fn round_function(b: &mut FunctionBuilder, round: usize, vb: Value, vc: Value, vd: Value) -> Value {
    match round {
        // FF: (b & c) | ((~b) & d)
        0 => {
            let bc = b.ins().band(vb, vc);
            let not_b = b.ins().bnot(vb);
            let nbd = b.ins().band(not_b, vd);
            b.ins().bor(bc, nbd)
        }
        // GG: (b & d) | (c & (~d))
        1 => {
            let bd = b.ins().band(vb, vd);
            let not_d = b.ins().bnot(vd);
            let cnd = b.ins().band(vc, not_d);
            b.ins().bor(bd, cnd)
        }
        // HH: (b ^ c) ^ d
        2 => {
            let bc = b.ins().bxor(vb, vc);
            b.ins().bxor(bc, vd)
        }
        // II: c ^ (b | (~d))
        _ => {
            let not_d = b.ins().bnot(vd);
            let bnd = b.ins().bor(vb, not_d);
            b.ins().bxor(vc, bnd)
        }
    }
}

/// `MD5.implCompressMultiBlock` in Rust, with the kernel's exact semantics: blocks at `ofs`,
/// `ofs + 64`, … (wrapping like a Java `int`) while `ofs <= limit`; each of a block's 16 reads
/// at `ofs + 4k` is checked against `len` (the Java array length, at most `buf.len()`), and
/// a failed check returns [`crate::OUT_OF_BOUNDS`] with `state` holding the completed blocks.
/// Returns the offset after the last block otherwise.
///
/// # Panics
/// If `len` exceeds `buf.len()`.
pub fn java_compress_multi_block(
    state: &mut [u32; 4],
    buf: &[u8],
    len: i32,
    ofs: i32,
    limit: i32,
) -> i32 {
    let mut block = [0u8; 64];
    digest::java_block_loop(buf, len, ofs, limit, |step| match step {
        BlockStep::Word { index, bytes } => block[4 * index..4 * index + 4].copy_from_slice(&bytes),
        BlockStep::Compress => reference_compress(state, &block),
    })
}

/// The 16 little-endian message words of a 64-byte block (RFC 1321's `X[0..16]`).
#[inline]
pub fn message_words(block: &[u8]) -> [u32; 16] {
    std::array::from_fn(|i| {
        u32::from_le_bytes([
            block[4 * i],
            block[4 * i + 1],
            block[4 * i + 2],
            block[4 * i + 3],
        ])
    })
}

/// The reference compression of one 64-byte block, straight from RFC 1321, for tests and
/// differential checks of the compiled kernel.
pub fn reference_compress(state: &mut [u32; 4], block: &[u8; 64]) {
    let x = message_words(block);
    let [mut a, mut b, mut c, mut d] = *state;
    for round in 0..4 {
        for i in 0..16 {
            let f = match round {
                0 => (b & c) | (!b & d),
                1 => (b & d) | (c & !d),
                2 => b ^ c ^ d,
                _ => c ^ (b | !d),
            };
            let sum = a
                .wrapping_add(f)
                .wrapping_add(x[MESSAGE_ORDER[round][i]])
                .wrapping_add(SINES[16 * round + i]);
            let new_a = sum.rotate_left(SHIFTS[round][i % 4] as u32).wrapping_add(b);
            (a, b, c, d) = (d, new_a, b, c);
        }
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d]) {
        *s = s.wrapping_add(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir_checks::{assert_verifies, bounds_checks, count};
    use cranelift_codegen::ir::Opcode;

    #[test]
    fn verifies() {
        assert_verifies(&compress_multi_block());
    }

    #[test]
    fn sixteen_bounds_checks_per_block() {
        let func = compress_multi_block();
        // The loop body is the only place with checks; it processes one block per iteration.
        assert_eq!(bounds_checks(&func), 16);
        let loads = count(&func, Opcode::Load);
        assert_eq!(loads, 4 + 16, "4 state words and 16 message words");
    }

    #[test]
    fn sines_match_their_definition() {
        for (i, &t) in SINES.iter().enumerate() {
            let exact = ((i as f64 + 1.0).sin().abs() * 4294967296.0).floor() as u32;
            assert_eq!(t, exact, "T[{}]", i + 1);
        }
    }

    #[test]
    fn reference_matches_rfc1321_empty_message() {
        let mut block = [0u8; 64];
        block[0] = 0x80;
        let mut state = INITIAL_STATE;
        reference_compress(&mut state, &block);
        let digest: Vec<u8> = state.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(
            digest,
            [
                0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04, 0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8,
                0x42, 0x7e
            ]
        );
    }
}

/// The registry entry of [`compress_multi_block`] (`md5`).
pub static KERNEL: Md5Kernel = Md5Kernel;

/// `md5`: the multi-block compression loop; see [`KERNEL`].
#[derive(Clone, Copy, Debug)]
pub struct Md5Kernel;

impl Md5Kernel {
    /// A call on `buf` (a Java `byte[]` of exactly its length) from the chaining value `state`.
    pub fn case(label: String, state: [u32; 4], buf: Vec<u8>, ofs: i32, limit: i32) -> Case {
        Case::new(label, digest::call_args(&state, buf, ofs, limit))
    }
}

impl Kernel for Md5Kernel {
    fn info(&self) -> KernelInfo {
        KernelInfo {
            name: "md5",
            summary: "MD5's multi-block compression (DigestBase.implCompressMultiBlock + MD5.implCompress0), 16 checked reads per block",
            aliases: &[],
            build: compress_multi_block,
        }
    }

    fn cases(&self, options: &CaseOptions) -> Vec<Case> {
        let mut cases: Vec<Case> = RFC1321_SUITE
            .iter()
            .map(|(msg, digest)| {
                let padded = pad_message(msg.as_bytes());
                let limit = padded.len() as i32 - 64;
                Self::case(format!("rfc1321 {digest}"), INITIAL_STATE, padded, 0, limit)
            })
            .collect();
        let mut rng = StdRng::seed_from_u64(options.seed);
        for i in 0..options.random {
            let buf = digest::random_message(&mut rng);
            let state: [u32; 4] = rng.random();
            let (ofs, limit, label) = digest::random_bounds(&mut rng, i, buf.len());
            cases.push(Self::case(label, state, buf, ofs, limit));
        }
        // The last block ends one byte past the array; a negative offset; a wrapping limit.
        for (len, ofs, limit) in [(127, 0, 63), (128, -1, 64), (64, 0, i32::MAX)] {
            let label = format!("hostile len={len} ofs={ofs} limit={limit}");
            cases.push(Self::case(
                label,
                INITIAL_STATE,
                vec![0x5a; len],
                ofs,
                limit,
            ));
        }
        cases
    }

    fn expected(&self, case: &Case) -> Result<Effect, String> {
        let CaseCall {
            mut state,
            buf,
            ints: [len, ofs, limit],
        } = digest::case_call::<4>(case, "four")?;
        let ret = java_compress_multi_block(&mut state, buf, len, ofs, limit);
        Ok(Effect {
            returns: vec![DataValue::I32(ret)],
            arrays: vec![ArrayArg::words(&state).bytes, buf.clone()],
        })
    }
}
