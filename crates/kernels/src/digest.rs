//! What the MD5 and SHA-256 kernels share outside their IR: padding, the Java model of
//! `DigestBase.implCompressMultiBlock`'s checked block loop, and the cases' arguments.

use crate::case::{Arg, ArrayArg, Case};
use crate::java::OUT_OF_BOUNDS;
use cranelift_codegen::data_value::DataValue;
use rand::{Rng, rngs::StdRng};

/// Pads a whole message (RFC 1321 3.1–3.2, FIPS 180-4 5.1.1): `0x80`, zeros to 56 mod 64, then
/// the bit length as `length_bytes` writes it (little-endian for MD5, big-endian for SHA-256);
/// the result is whole 64-byte blocks.
pub fn pad_with_length(message: &[u8], length_bytes: fn(u64) -> [u8; 8]) -> Vec<u8> {
    let mut padded = message.to_vec();
    padded.push(0x80);
    while padded.len() % 64 != 56 {
        padded.push(0);
    }
    padded.extend_from_slice(&length_bytes((message.len() as u64).wrapping_mul(8)));
    padded
}

/// `data`'s whole 64-byte blocks, and its padded tail in a stack buffer: the bytes after
/// them, `0x80`, zeros and the bit length as `length_bytes` writes it, with the tail's length
/// (64 or 128 bytes).
pub fn split_padded(data: &[u8], length_bytes: fn(u64) -> [u8; 8]) -> (&[u8], [u8; 128], usize) {
    let whole = data.len() / 64 * 64;
    let rest = &data[whole..];
    let mut tail = [0u8; 128];
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = 0x80;
    let padded = if rest.len() < 56 { 64 } else { 128 };
    let bits = (data.len() as u64).wrapping_mul(8);
    tail[padded - 8..padded].copy_from_slice(&length_bytes(bits));
    (&data[..whole], tail, padded)
}

/// What [`java_block_loop`] reports to its caller.
pub enum BlockStep {
    /// Message word `index` (0..16) of the current block, its four bytes as read.
    Word {
        /// The word's index in the block.
        index: usize,
        /// Its bytes in memory order.
        bytes: [u8; 4],
    },
    /// All 16 words of the block were read: compress it.
    Compress,
}

/// `DigestBase.implCompressMultiBlock`'s loop in Rust: blocks at `ofs`, `ofs + 64`, …
/// (wrapping like a Java `int`) while `ofs <= limit`; each of a block's 16 word reads at
/// `ofs + 4k` is checked against `len` (the Java array length, at most `buf.len()`) and handed
/// to `step`, then the block is. Returns [`OUT_OF_BOUNDS`] at the first failed check, else the
/// offset after the last block.
///
/// # Panics
/// If `len` exceeds `buf.len()`.
pub fn java_block_loop(
    buf: &[u8],
    len: i32,
    ofs: i32,
    limit: i32,
    mut step: impl FnMut(BlockStep),
) -> i32 {
    assert!(
        usize::try_from(len).map_or(true, |l| l <= buf.len()),
        "len {len} exceeds the buffer's {} bytes",
        buf.len()
    );
    let bound = (i64::from(len) - 3).max(0);
    let mut ofs = ofs;
    while ofs <= limit {
        for (index, k) in (0..16).zip(0i32..) {
            let at = i64::from(ofs.wrapping_add(4 * k));
            if !(0..bound).contains(&at) {
                return OUT_OF_BOUNDS;
            }
            let at = at as usize;
            let bytes = [buf[at], buf[at + 1], buf[at + 2], buf[at + 3]];
            step(BlockStep::Word { index, bytes });
        }
        step(BlockStep::Compress);
        ofs = ofs.wrapping_add(64);
    }
    ofs
}

/// The five arguments every digest kernel takes: the chaining value `state`, `buf` (a Java
/// `byte[]` of exactly its length), its length, `ofs` and `limit`.
pub fn call_args(state: &[u32], buf: Vec<u8>, ofs: i32, limit: i32) -> Vec<Arg> {
    let len = i32::try_from(buf.len()).unwrap_or(i32::MAX);
    vec![
        Arg::Array(ArrayArg::words(state)),
        Arg::Array(ArrayArg::bytes(buf)),
        Arg::Value(DataValue::I32(len)),
        Arg::Value(DataValue::I32(ofs)),
        Arg::Value(DataValue::I32(limit)),
    ]
}

/// A random message of 0 to 599 bytes.
pub fn random_message(rng: &mut StdRng) -> Vec<u8> {
    let len = rng.random_range(0..600usize);
    let mut buf = vec![0u8; len];
    rng.fill(buf.as_mut_slice());
    buf
}

/// The offset and limit of random case `i` over `len` bytes, and the case's label: mostly
/// in-bounds block runs, every third one with hostile offsets and limits.
pub fn random_bounds(rng: &mut StdRng, i: usize, len: usize) -> (i32, i32, String) {
    let (ofs, limit) = if i % 3 == 2 {
        (
            rng.random_range(-80..len as i32 + 80),
            rng.random_range(-80..len as i32 + 80),
        )
    } else {
        (rng.random_range(0..=len.min(70) as i32), len as i32 - 64)
    };
    (
        ofs,
        limit,
        format!("random {i} len={len} ofs={ofs} limit={limit}"),
    )
}

/// A digest kernel's case, read back as [`call_args`] lays it out.
pub struct CaseCall<'c, const N: usize> {
    /// The chaining value.
    pub state: [u32; N],
    /// The message buffer.
    pub buf: &'c Vec<u8>,
    /// `len` (within the buffer), `ofs` and `limit`.
    pub ints: [i32; 3],
}

/// The arguments of a digest kernel's case: the `N` state words (`words_in_text` names their
/// count for the error), the buffer, and `len`, `ofs`, `limit` (`len` checked to lie within
/// the buffer).
pub fn case_call<'c, const N: usize>(
    case: &'c Case,
    words_in_text: &str,
) -> Result<CaseCall<'c, N>, String> {
    let words = ArrayArg::to_words(&case.array(0)?.bytes);
    let state: [u32; N] = words
        .try_into()
        .map_err(|_| format!("the state must hold {words_in_text} words"))?;
    let buf = &case.array(1)?.bytes;
    let (len, ofs, limit) = (case.int(2)?, case.int(3)?, case.int(4)?);
    if usize::try_from(len).map_or(true, |l| l > buf.len()) {
        return Err(format!("len {len} must be between 0 and {}", buf.len()));
    }
    Ok(CaseCall {
        state,
        buf,
        ints: [len, ofs, limit],
    })
}
