//! SHA-256's multi-block compression (FIPS 180-4, section 6.2) as the JVM front end sees
//! OpenJDK's `DigestBase.implCompressMultiBlock` looping over `SHA2.implCompress0`.
//!
//! Signature (`SystemV` on every target; the backend adopts the target's default convention):
//!
//! ```text
//! function %sha256_compress_multi_block(i64 state, i64 buf, i32 len, i32 ofs, i32 limit,
//!                                       i64 w) -> i32
//! ```
//!
//! * `state` points to the eight native-endian `int`s of the chaining value (`int[] state`),
//!   read before the loop and written after it, as in [`crate::md5`].
//! * `buf`/`len` are the `byte[]` and its length; `ofs`/`limit` are Java `int`s: blocks start at
//!   `ofs, ofs + 64, …` while `ofs <= limit`.
//! * `w` is `SHA2`'s instance field `int[] W`, the 64-word message schedule. OpenJDK allocates
//!   it as `new int[64]`, so its length is the constant 64 and every access is checked against
//!   it; the array is visible to the caller (an instance field), so its contents after the call
//!   are part of the result.
//! * Returns the offset after the last block, or [`crate::OUT_OF_BOUNDS`] when a read would leave the
//!   buffer; the state then holds exactly the blocks completed before the failing one, and `W`
//!   holds the words of the failing block that `b2iBig64` stored before the failing read.
//!
//! Per block, in `implCompress0`'s order:
//!
//! 1. `b2iBig64(buf, ofs, W)`: 16 **big-endian** checked 4-byte reads, each stored to `W[k]`
//!    with its own check. Cranelift lowers explicit big-endian loads only on s390x, so a read is
//!    a little-endian load followed by `bswap` (the same value on every target).
//! 2. The message schedule `W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]`, t = 16..63:
//!    four checked loads and one checked store each, indices constants after unrolling.
//! 3. 64 rounds reading `ROUND_CONSTS[i]` (an `iconst` after unrolling) and a checked `W[i]`.
//! 4. The feed-forward `state[j] += a..h`.

use crate::case::{Arg, ArrayArg, Case, Effect};
use crate::digest::{self, BlockStep, CaseCall};
use crate::ir_build::{
    DigestLoop, LoopBlocks, build_function, message_flags, param_array, system_v_signature,
};
use crate::java::{CheckedArray, alias_region};
use crate::registry::{CaseOptions, Kernel, KernelInfo};
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{
    Function, InstBuilder, MemFlagsData, Signature, StackSlotData, StackSlotKind, Value, types,
};
use cranelift_frontend::FunctionBuilder;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// Bytes consumed by one compression.
pub const BLOCK_BYTES: i64 = 64;

/// Words in the message schedule `W` (`SHA2.ITERATION`).
pub const SCHEDULE_WORDS: usize = 64;

/// The name the kernel's function carries in CLIF and as a linker symbol.
pub const FUNCTION_NAME: &str = "sha256_compress_multi_block";

/// The name of the private-`W` variant ([`Schedule::Private`], kernel `sha256-local`).
pub const LOCAL_FUNCTION_NAME: &str = "sha256_local_compress_multi_block";

/// Alias-region id of the eight state words.
pub const STATE_REGION: u32 = 1;
/// Alias-region id of the message buffer (`byte[] b`).
pub const MESSAGE_REGION: u32 = 2;
/// Alias-region id of the message schedule (`int[] W`).
pub const SCHEDULE_REGION: u32 = 3;

/// The round constants `K[0..64]` (FIPS 180-4, section 4.2.2; OpenJDK's `ROUND_CONSTS`).
pub const ROUND_CONSTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// The initial hash value `H(0)` (FIPS 180-4, section 5.3.3).
pub const INITIAL_STATE: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The SHA-256 examples of FIPS 180-4 (NIST's "Examples with Intermediate Values"): the
/// one-block message "abc" and the two-block 448-bit message, with their digests.
pub const FIPS180_EXAMPLES: [(&str, &str); 2] = [
    (
        "abc",
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    ),
    (
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ),
];

/// SHA-256 padding of a whole message (FIPS 180-4, 5.1.1): `0x80`, zeros to 56 mod 64, then
/// the bit length big-endian; the result is whole 64-byte blocks.
pub fn pad_message(message: &[u8]) -> Vec<u8> {
    digest::pad_with_length(message, u64::to_be_bytes)
}

/// The digest of a chaining value: the eight words big-endian.
pub fn digest_bytes(state: &[u32; 8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_exact_mut(4).zip(state) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// The kernel's signature:
/// `(state: i64, buf: i64, len: i32, ofs: i32, limit: i32, w: i64) -> i32`.
pub fn signature() -> Signature {
    signature_for(Schedule::Argument)
}

/// Where the message schedule `W` lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// `SHA2`'s instance field: the sixth argument, visible to the caller (`sha256`).
    Argument,
    /// A 256-byte stack slot of the compiled function, as the `sha2` crate and OpenSSL keep
    /// it: no one outside the call can observe it (`sha256-local`).
    Private,
}

/// The signature of the variant that keeps `W` in `schedule`: the five common parameters,
/// plus `w: i64` for [`Schedule::Argument`].
pub fn signature_for(schedule: Schedule) -> Signature {
    use types::{I32, I64};
    let params: &[types::Type] = match schedule {
        Schedule::Argument => &[I64, I64, I32, I32, I32, I64],
        Schedule::Private => &[I64, I64, I32, I32, I32],
    };
    system_v_signature(params, &[I32])
}

/// Builds the Java-literal multi-block compression function: per block 16 checked message
/// reads, 16 + 48 checked stores and 4 × 48 + 64 checked loads of `W`.
pub fn compress_multi_block() -> Function {
    compress_multi_block_with(Schedule::Argument)
}

/// [`compress_multi_block`] with `W` kept in `schedule`. A private `W` is the same
/// `int[64]` with the same checks, addressed through one `stack_addr` in the entry block.
pub fn compress_multi_block_with(schedule: Schedule) -> Function {
    let name = match schedule {
        Schedule::Argument => FUNCTION_NAME,
        Schedule::Private => LOCAL_FUNCTION_NAME,
    };
    build_function(name, signature_for(schedule), |b| {
        let state_region = alias_region(b, STATE_REGION, "sha256 state");
        let message_region = alias_region(b, MESSAGE_REGION, "byte[] b");
        let schedule_region = alias_region(b, SCHEDULE_REGION, "int[] W");
        let state_flags = MemFlagsData::trusted().with_alias_region(Some(state_region));
        let message_flags = message_flags(message_region);
        // A Java `int[]` holds native-endian ints; the checks guard every access.
        let schedule_flags = MemFlagsData::new()
            .with_notrap()
            .with_alias_region(Some(schedule_region));

        let lp = DigestLoop::create(b, 8);
        let LoopBlocks { entry, oob, .. } = lp.blocks;

        // entry: read the state, compute both bounds once.
        b.switch_to_block(entry);
        b.seal_block(entry);
        let [state, buf, len, ofs, limit] = param_array(b, entry);
        let w = match schedule {
            Schedule::Argument => b.block_params(entry)[5],
            Schedule::Private => {
                let bytes = (4 * SCHEDULE_WORDS) as u32;
                let slot = b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    bytes,
                    2,
                ));
                b.ins().stack_addr(types::I64, slot, 0)
            }
        };
        let words = DigestLoop::load_state(b, state, state_flags, 8);
        let message = CheckedArray::new(b, buf, len, 4, 0, message_flags);
        let schedule_len = b.ins().iconst(types::I32, SCHEDULE_WORDS as i64);
        let schedule = CheckedArray::new(b, w, schedule_len, 1, 2, schedule_flags);
        let zero = b.ins().iconst(types::I32, 0);
        lp.enter(b, ofs, &words);

        // header, then body: implCompress0.
        let (chain_in, block_ofs) = lp.test_and_enter_body::<8>(b, limit);
        let mut schedule_ops = ScheduleOps {
            array: schedule,
            zero,
            oob,
            oob_args: chain_in,
        };
        // b2iBig64: `out[k] = (int) BE.INT_ARRAY.get(in, inOfs + 4k)` — read, then store.
        for k in 0..16 {
            let raw = message.checked_load(b, types::I32, block_ofs, 4 * k, oob, &chain_in);
            let word = b.ins().bswap(raw);
            schedule_ops.store(b, word, k);
        }
        for t in 16..SCHEDULE_WORDS as i64 {
            schedule_word(b, &schedule_ops, t);
        }
        let mut chain = chain_in;
        for (i, &k) in ROUND_CONSTS.iter().enumerate() {
            chain = round(b, &mut schedule_ops, i as i64, k, chain);
        }
        lp.close(b, block_ofs, &chain_in, &chain, state, state_flags);
    })
}

/// Checked accesses of `W` at constant indices (0..64, so `4 * index` fits an offset),
/// leaving through `oob` with the block's input chaining value.
struct ScheduleOps {
    array: CheckedArray,
    zero: Value,
    oob: cranelift_codegen::ir::Block,
    oob_args: [Value; 8],
}

impl ScheduleOps {
    /// The check of `W[index]`, in the shape every checked access has; the access itself
    /// addresses `W + 4 * index` directly, as a JIT does for a constant index.
    fn check(&self, b: &mut FunctionBuilder, index: i64) -> i32 {
        self.array
            .check(b, self.zero, index, self.oob, &self.oob_args);
        (4 * index) as i32
    }

    fn load(&self, b: &mut FunctionBuilder, index: i64) -> Value {
        let offset = self.check(b, index);
        b.ins()
            .load(types::I32, self.array.flags, self.array.base, offset)
    }

    fn store(&self, b: &mut FunctionBuilder, value: Value, index: i64) {
        let offset = self.check(b, index);
        b.ins()
            .store(self.array.flags, value, self.array.base, offset);
    }
}

/// `(x >>> a) ^ (x >>> b) ^ (x >>> c)` as rotations, or with a plain shift for the last term
/// when `shift_last` (σ0, σ1).
fn three_way(b: &mut FunctionBuilder, x: Value, [r1, r2, r3]: [i64; 3], shift_last: bool) -> Value {
    let first = b.ins().rotr_imm_u(x, r1);
    let second = b.ins().rotr_imm_u(x, r2);
    let third = if shift_last {
        b.ins().ushr_imm_u(x, r3)
    } else {
        b.ins().rotr_imm_u(x, r3)
    };
    let partial = b.ins().bxor(first, second);
    b.ins().bxor(partial, third)
}

/// `SHA2.java`'s schedule step in its evaluation order:
/// `W_t2 = W[t-2]; W_t15 = W[t-15]; W[t] = delta1(W_t2) + W[t-7] + delta0(W_t15) + W[t-16]`.
fn schedule_word(b: &mut FunctionBuilder, ops: &ScheduleOps, t: i64) {
    let w_t2 = ops.load(b, t - 2);
    let w_t15 = ops.load(b, t - 15);
    let delta0 = three_way(b, w_t15, [7, 18, 3], true);
    let delta1 = three_way(b, w_t2, [17, 19, 10], true);
    let w_t7 = ops.load(b, t - 7);
    let sum = b.ins().iadd(delta1, w_t7);
    let sum = b.ins().iadd(sum, delta0);
    let w_t16 = ops.load(b, t - 16);
    let sum = b.ins().iadd(sum, w_t16);
    ops.store(b, sum, t);
}

/// Round `i` in `SHA2.java`'s order: `T1 = h + Σ1(e) + Ch(e,f,g) + ROUND_CONSTS[i] + W[i]`,
/// `T2 = Σ0(a) + Maj(a,b,c)`; returns the shifted (a..h).
fn round(
    b: &mut FunctionBuilder,
    ops: &mut ScheduleOps,
    i: i64,
    k: u32,
    [va, vb, vc, vd, ve, vf, vg, vh]: [Value; 8],
) -> [Value; 8] {
    let sigma0_a = three_way(b, va, [2, 13, 22], false);
    let sigma1_e = three_way(b, ve, [6, 11, 25], false);
    // ch = (e & f) ^ ((~e) & g)
    let ef = b.ins().band(ve, vf);
    let not_e = b.ins().bnot(ve);
    let neg = b.ins().band(not_e, vg);
    let ch = b.ins().bxor(ef, neg);
    // maj = (a & b) ^ (a & c) ^ (b & c)
    let ab = b.ins().band(va, vb);
    let ac = b.ins().band(va, vc);
    let bc = b.ins().band(vb, vc);
    let maj = b.ins().bxor(ab, ac);
    let maj = b.ins().bxor(maj, bc);
    // T1 = h + sigma1_e + ch + ROUND_CONSTS[i] + W[i], left to right.
    let t1 = b.ins().iadd(vh, sigma1_e);
    let t1 = b.ins().iadd(t1, ch);
    let t1 = b.ins().iadd_imm_s(t1, i64::from(k as i32));
    let w_i = ops.load(b, i);
    let t1 = b.ins().iadd(t1, w_i);
    let t2 = b.ins().iadd(sigma0_a, maj);
    let new_e = b.ins().iadd(vd, t1);
    let new_a = b.ins().iadd(t1, t2);
    [new_a, va, vb, vc, new_e, ve, vf, vg]
}

/// `DigestBase.implCompressMultiBlock` over `SHA2.implCompress0` in Rust, with the kernel's
/// exact semantics: blocks at `ofs`, `ofs + 64`, … (wrapping like a Java `int`) while
/// `ofs <= limit`; each of a block's 16 big-endian reads at `ofs + 4k` is checked against `len`
/// (the Java array length, at most `buf.len()`) and then stored to `w[k]`; a failed check
/// returns [`crate::OUT_OF_BOUNDS`] with `state` holding the completed blocks and `w` the words
/// stored so far. Returns the offset after the last block otherwise.
///
/// # Panics
/// If `len` exceeds `buf.len()`.
pub fn java_compress_multi_block(
    state: &mut [u32; 8],
    w: &mut [u32; SCHEDULE_WORDS],
    buf: &[u8],
    len: i32,
    ofs: i32,
    limit: i32,
) -> i32 {
    digest::java_block_loop(buf, len, ofs, limit, |step| match step {
        BlockStep::Word { index, bytes } => w[index] = u32::from_be_bytes(bytes),
        BlockStep::Compress => {
            expand_schedule(w);
            rounds(state, w);
        }
    })
}

/// Fills `w[16..]` from the message words in `w[..16]`.
fn expand_schedule(w: &mut [u32; SCHEDULE_WORDS]) {
    for t in 16..SCHEDULE_WORDS {
        w[t] = small_sigma1(w[t - 2])
            .wrapping_add(w[t - 7])
            .wrapping_add(small_sigma0(w[t - 15]))
            .wrapping_add(w[t - 16]);
    }
}

fn small_sigma0(x: u32) -> u32 {
    x.rotate_right(7) ^ x.rotate_right(18) ^ (x >> 3)
}

fn small_sigma1(x: u32) -> u32 {
    x.rotate_right(17) ^ x.rotate_right(19) ^ (x >> 10)
}

/// The 64 rounds and the feed-forward over a complete schedule.
fn rounds(state: &mut [u32; 8], w: &[u32; SCHEDULE_WORDS]) {
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for (k, w) in ROUND_CONSTS.iter().zip(w) {
        let big_sigma1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = h
            .wrapping_add(big_sigma1)
            .wrapping_add(ch)
            .wrapping_add(*k)
            .wrapping_add(*w);
        let big_sigma0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = big_sigma0.wrapping_add(maj);
        (h, g, f, e, d, c, b, a) = (g, f, e, d.wrapping_add(t1), c, b, a, t1.wrapping_add(t2));
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = s.wrapping_add(v);
    }
}

/// The reference compression of one 64-byte block, straight from FIPS 180-4 section 6.2.2,
/// for tests and differential checks of the compiled kernel.
pub fn reference_compress(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; SCHEDULE_WORDS];
    for (t, chunk) in block.chunks_exact(4).enumerate() {
        w[t] = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    expand_schedule(&mut w);
    rounds(state, &w);
}

/// The registry entry of [`compress_multi_block`] (`sha256`).
pub static KERNEL: Sha256Kernel = Sha256Kernel;

/// `sha256`: the multi-block compression loop; see [`KERNEL`].
#[derive(Clone, Copy, Debug)]
pub struct Sha256Kernel;

impl Sha256Kernel {
    /// A call on `buf` (a Java `byte[]` of exactly its length) from the chaining value `state`,
    /// with `w` as the schedule array's contents before the call.
    pub fn case(
        label: String,
        state: [u32; 8],
        buf: Vec<u8>,
        ofs: i32,
        limit: i32,
        w: &[u32; SCHEDULE_WORDS],
    ) -> Case {
        let mut args = digest::call_args(&state, buf, ofs, limit);
        args.push(Arg::Array(ArrayArg::words(w)));
        Case::new(label, args)
    }
}

impl Kernel for Sha256Kernel {
    fn info(&self) -> KernelInfo {
        KernelInfo {
            name: "sha256",
            summary: "SHA-256's multi-block compression (DigestBase.implCompressMultiBlock + SHA2.implCompress0), 16 big-endian checked reads and a checked int[64] W per block",
            aliases: &[],
            build: compress_multi_block,
        }
    }

    fn cases(&self, options: &CaseOptions) -> Vec<Case> {
        let fresh = [0u32; SCHEDULE_WORDS];
        let mut cases: Vec<Case> = FIPS180_EXAMPLES
            .iter()
            .map(|(msg, digest)| {
                let padded = pad_message(msg.as_bytes());
                let limit = padded.len() as i32 - 64;
                let label = format!("fips180-4 {}", &digest[..16]);
                Self::case(label, INITIAL_STATE, padded, 0, limit, &fresh)
            })
            .collect();
        let mut rng = StdRng::seed_from_u64(options.seed);
        for i in 0..options.random {
            let buf = digest::random_message(&mut rng);
            let state: [u32; 8] = rng.random();
            // A W left over from earlier blocks: the kernel must overwrite what Java does.
            let w: [u32; SCHEDULE_WORDS] = std::array::from_fn(|_| rng.random());
            let (ofs, limit, label) = digest::random_bounds(&mut rng, i, buf.len());
            cases.push(Self::case(label, state, buf, ofs, limit, &w));
        }
        // The last block ends one byte past the array (W holds half of it afterwards); a
        // negative offset; a wrapping limit.
        let stale: [u32; SCHEDULE_WORDS] = std::array::from_fn(|i| 0x5150_0000 | i as u32);
        for (len, ofs, limit) in [(127, 0, 64), (128, -1, 64), (64, 0, i32::MAX)] {
            let label = format!("hostile len={len} ofs={ofs} limit={limit}");
            let buf = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            cases.push(Self::case(label, INITIAL_STATE, buf, ofs, limit, &stale));
        }
        cases
    }

    fn expected(&self, case: &Case) -> Result<Effect, String> {
        let CaseCall {
            mut state,
            buf,
            ints: [len, ofs, limit],
        } = digest::case_call::<8>(case, "eight")?;
        let w_bytes = &case.array(5)?.bytes;
        let mut w: [u32; SCHEDULE_WORDS] = ArrayArg::to_words(w_bytes)
            .try_into()
            .map_err(|_| format!("W must hold {SCHEDULE_WORDS} ints"))?;
        let ret = java_compress_multi_block(&mut state, &mut w, buf, len, ofs, limit);
        Ok(Effect {
            returns: vec![DataValue::I32(ret)],
            arrays: vec![
                ArrayArg::words(&state).bytes,
                buf.clone(),
                ArrayArg::words(&w).bytes,
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir_checks::{assert_verifies, bounds_checks, count};
    use crate::java::OUT_OF_BOUNDS;
    use cranelift_codegen::ir::Opcode;
    use sha2::Digest;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The digest of `message` through the Java model (one call over every padded block).
    fn model_digest(message: &[u8]) -> [u8; 32] {
        let padded = pad_message(message);
        let mut state = INITIAL_STATE;
        let mut w = [0u32; SCHEDULE_WORDS];
        let len = padded.len() as i32;
        let ret = java_compress_multi_block(&mut state, &mut w, &padded, len, 0, len - 64);
        assert_eq!(ret, len);
        digest_bytes(&state)
    }

    #[test]
    fn verifies() {
        assert_verifies(&compress_multi_block());
    }

    #[test]
    fn every_access_is_checked() {
        let func = compress_multi_block();
        // 16 reads + 16 stores (b2iBig64), 48 × (4 loads + 1 store), 64 loads of W[i].
        assert_eq!(bounds_checks(&func), 16 + 16 + 48 * 5 + 64);
        assert_eq!(count(&func, Opcode::Load), 8 + 16 + 48 * 4 + 64);
        assert_eq!(count(&func, Opcode::Store), 16 + 48 + 2 * 8);
        assert_eq!(count(&func, Opcode::Bswap), 16);
    }

    #[test]
    fn round_constants_are_the_cube_roots_of_the_first_primes() {
        let primes = (2u64..).filter(|n| (2..*n).all(|d| n % d != 0));
        for (k, p) in ROUND_CONSTS.iter().zip(primes) {
            let frac = (p as f64).cbrt().fract();
            assert_eq!(*k, (frac * 4294967296.0) as u32, "prime {p}");
        }
    }

    #[test]
    fn model_matches_the_fips_180_4_examples() {
        for (message, digest) in FIPS180_EXAMPLES {
            assert_eq!(hex(&model_digest(message.as_bytes())), digest, "{message}");
            // The straight FIPS transcription agrees block by block.
            let padded = pad_message(message.as_bytes());
            let mut state = INITIAL_STATE;
            for block in padded.chunks_exact(64) {
                reference_compress(&mut state, block.try_into().expect("64 bytes"));
            }
            assert_eq!(hex(&digest_bytes(&state)), digest);
        }
    }

    #[test]
    fn model_matches_the_sha2_crate_on_random_lengths() {
        let mut rng = StdRng::seed_from_u64(1804);
        let mut lengths: Vec<usize> = (0..=130).collect();
        lengths.extend((0..200).map(|_| rng.random_range(0..=2000usize)));
        lengths.push(2000);
        for len in lengths {
            let mut message = vec![0u8; len];
            rng.fill(message.as_mut_slice());
            let expected = sha2::Sha256::digest(&message);
            assert_eq!(model_digest(&message)[..], expected[..], "length {len}");
        }
    }

    #[test]
    fn a_failing_read_commits_completed_blocks_and_the_stored_words() {
        // Two blocks requested, the second one 5 bytes short: reads 0..=13 of it succeed.
        let buf: Vec<u8> = (0..123u32).map(|i| (i * 13) as u8).collect();
        let mut state = INITIAL_STATE;
        let mut w = [7u32; SCHEDULE_WORDS];
        let ret = java_compress_multi_block(&mut state, &mut w, &buf, 123, 0, 64);
        assert_eq!(ret, OUT_OF_BOUNDS);
        let mut one_block = INITIAL_STATE;
        reference_compress(&mut one_block, buf[..64].try_into().expect("64 bytes"));
        assert_eq!(state, one_block);
        for (k, word) in w.iter().enumerate().take(14) {
            let at = 64 + 4 * k;
            let bytes = [buf[at], buf[at + 1], buf[at + 2], buf[at + 3]];
            assert_eq!(*word, u32::from_be_bytes(bytes), "W[{k}]");
        }
        // W[14..16] still hold the first block's schedule words, not the second's.
        let first = |k: usize| u32::from_be_bytes(buf[4 * k..4 * k + 4].try_into().expect("4"));
        assert_eq!(w[14], first(14));
        assert_eq!(w[15], first(15));
    }

    #[test]
    fn hostile_cases_fail_or_wrap_as_java_does() {
        let cases = KERNEL.cases(&CaseOptions { seed: 1, random: 0 });
        let returns: Vec<DataValue> = cases
            .iter()
            .map(|c| KERNEL.expected(c).expect("well-formed").returns[0].clone())
            .collect();
        let oob = DataValue::I32(OUT_OF_BOUNDS);
        assert_eq!(returns[2..], [oob.clone(), oob.clone(), oob]);
    }
}
