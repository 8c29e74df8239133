//! A plain Rust transcription of the Java code the kernels are built from, statement for
//! statement, for differential tests of the compiled kernels.
//!
//! Java `int` arithmetic wraps (`wrapping_*`), `x & LONG_MASK` is `x as u32 as u64`, an array
//! access outside `0..length` is [`JavaException::OutOfBounds`] and a wrapper's failed argument
//! check is [`JavaException::IllegalArgument`]. Writes happen in Java's order, so after an
//! exception the arrays hold exactly what Java would have left in them. `out`/`z` and `in`/`x`
//! may be the same array ([`Input::SameAsOut`]), as they may in Java.
//!
//! The transcription is itself tested against `num-bigint` (`tests/bigint_reference.rs`).

use super::Entry;
use crate::java::{ILLEGAL_ARGUMENT, OUT_OF_BOUNDS};

/// `BigInteger.LONG_MASK`: `x & LONG_MASK` zero-extends an `int` to a `long`.
pub const LONG_MASK: u64 = 0xffff_ffff;

/// The Java exception a call ends with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JavaException {
    /// `IllegalArgumentException` from a wrapper's argument check.
    IllegalArgument,
    /// `ArrayIndexOutOfBoundsException`.
    OutOfBounds,
}

impl JavaException {
    /// The status a compiled kernel returns for this exception.
    pub fn status(self) -> i32 {
        match self {
            JavaException::IllegalArgument => ILLEGAL_ARGUMENT,
            JavaException::OutOfBounds => OUT_OF_BOUNDS,
        }
    }
}

/// The second array argument (`in` of `mulAdd`, `x` of `squareToLen`).
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// A distinct array.
    Array(&'a [i32]),
    /// The same array as the written one (`out` / `z`).
    SameAsOut,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Arr {
    Out,
    In,
}

/// The two `int[]` a call sees, with Java's `length` and checked element access.
struct Arrays<'a> {
    out: &'a mut [i32],
    input: Input<'a>,
}

/// A Java array length: a slice longer than `i32::MAX` is seen through its first `i32::MAX`
/// elements (no Java array is longer).
fn java_length(len: usize) -> i32 {
    i32::try_from(len).unwrap_or(i32::MAX)
}

impl Arrays<'_> {
    fn slice(&self, a: Arr) -> &[i32] {
        match (a, self.input) {
            (Arr::In, Input::Array(x)) => x,
            _ => self.out,
        }
    }

    fn length(&self, a: Arr) -> i32 {
        java_length(self.slice(a).len())
    }

    fn get(&self, a: Arr, index: i32) -> Result<i32, JavaException> {
        let slice = self.slice(a);
        usize::try_from(index)
            .ok()
            .filter(|&i| index < java_length(slice.len()) && i < slice.len())
            .map(|i| slice[i])
            .ok_or(JavaException::OutOfBounds)
    }

    fn set(&mut self, a: Arr, index: i32, value: i32) -> Result<(), JavaException> {
        // Only `out` is ever written; `in` is written only when it is `out`.
        debug_assert!(a == Arr::Out || matches!(self.input, Input::SameAsOut));
        let len = java_length(self.out.len());
        match usize::try_from(index) {
            Ok(i) if index < len => {
                self.out[i] = value;
                Ok(())
            }
            _ => Err(JavaException::OutOfBounds),
        }
    }
}

/// `BigInteger.mulAdd(out, in, offset, len, k)`: multiplies `in[0..len]` by `k`, adds it into
/// `out` ending `offset` ints before its end, and returns the carry (`implMulAddCheck` then
/// `implMulAdd`).
pub fn mul_add(
    out: &mut [i32],
    input: &[i32],
    offset: i32,
    len: i32,
    k: i32,
) -> Result<u32, JavaException> {
    mul_add_with(Entry::Wrapper, out, Input::Array(input), offset, len, k)
}

/// [`mul_add`] entered at `entry`, with `in` possibly the same array as `out`.
pub fn mul_add_with(
    entry: Entry,
    out: &mut [i32],
    input: Input<'_>,
    offset: i32,
    len: i32,
    k: i32,
) -> Result<u32, JavaException> {
    let mut m = Arrays { out, input };
    if entry == Entry::Wrapper {
        impl_mul_add_check(&m, offset, len)?;
    }
    impl_mul_add(&mut m, offset, len, k).map(|carry| carry as u32)
}

/// `BigInteger.squareToLen`'s checked part: `implSquareToLenChecks(x, len, z, zlen)` then
/// `implSquareToLen(x, len, z, zlen)`, squaring the big-endian magnitude `x[0..len]` into
/// `z[0..zlen]`.
pub fn square_to_len(x: &[i32], len: i32, z: &mut [i32], zlen: i32) -> Result<(), JavaException> {
    square_to_len_with(Entry::Wrapper, Input::Array(x), len, z, zlen)
}

/// [`square_to_len`] entered at `entry`, with `x` possibly the same array as `z`.
pub fn square_to_len_with(
    entry: Entry,
    x: Input<'_>,
    len: i32,
    z: &mut [i32],
    zlen: i32,
) -> Result<(), JavaException> {
    let mut m = Arrays { out: z, input: x };
    if entry == Entry::Wrapper {
        impl_square_to_len_checks(&m, len, zlen)?;
    }
    impl_square_to_len(&mut m, len, zlen)
}

fn illegal(bad: bool) -> Result<(), JavaException> {
    if bad {
        Err(JavaException::IllegalArgument)
    } else {
        Ok(())
    }
}

/// `implMulAddCheck(out, in, offset, len, k)`.
fn impl_mul_add_check(m: &Arrays<'_>, offset: i32, len: i32) -> Result<(), JavaException> {
    let (out_length, in_length) = (m.length(Arr::Out), m.length(Arr::In));
    illegal(len > in_length)?;
    illegal(offset < 0)?;
    illegal(offset > out_length.wrapping_sub(1))?;
    illegal(len > out_length.wrapping_sub(offset))
}

/// `implMulAdd(out, in, offset, len, k)`; returns `(int) carry`.
fn impl_mul_add(m: &mut Arrays<'_>, offset: i32, len: i32, k: i32) -> Result<i32, JavaException> {
    let k_long = k as u32 as u64; // k & LONG_MASK
    let mut carry: u64 = 0;
    let mut offset = m.length(Arr::Out).wrapping_sub(offset).wrapping_sub(1);
    let mut j = len.wrapping_sub(1);
    while j >= 0 {
        let product = (m.get(Arr::In, j)? as u32 as u64)
            .wrapping_mul(k_long)
            .wrapping_add(m.get(Arr::Out, offset)? as u32 as u64)
            .wrapping_add(carry);
        let index = offset;
        offset = offset.wrapping_sub(1);
        m.set(Arr::Out, index, product as i32)?;
        carry = product >> 32;
        j -= 1;
    }
    Ok(carry as i32)
}

/// `implSquareToLenChecks(x, len, z, zlen)`.
fn impl_square_to_len_checks(m: &Arrays<'_>, len: i32, zlen: i32) -> Result<(), JavaException> {
    let (z_length, x_length) = (m.length(Arr::Out), m.length(Arr::In));
    illegal(len < 1)?;
    illegal(len > x_length)?;
    illegal(len.wrapping_mul(2) > z_length)?;
    illegal(zlen < 1)?;
    illegal(zlen > z_length)
}

/// `implSquareToLen(x, len, z, zlen)` (the returned `z` is the written array).
fn impl_square_to_len(m: &mut Arrays<'_>, len: i32, zlen: i32) -> Result<(), JavaException> {
    // Store the squares, right shifted one bit (i.e., divided by 2).
    let mut last_product_low_word: i32 = 0;
    let (mut j, mut i) = (0i32, 0i32);
    while j < len {
        let piece = m.get(Arr::In, j)? as u32 as u64;
        let product = piece.wrapping_mul(piece);
        let high = (last_product_low_word << 31) | (product >> 33) as i32;
        m.set(Arr::Out, i, high)?;
        i = i.wrapping_add(1);
        m.set(Arr::Out, i, (product >> 1) as i32)?;
        i = i.wrapping_add(1);
        last_product_low_word = product as i32;
        j += 1;
    }

    // Add in off-diagonal sums.
    let (mut i, mut offset) = (len, 1i32);
    while i > 0 {
        let t = m.get(Arr::In, i - 1)?;
        impl_mul_add_check(m, offset, i - 1)?;
        let t = impl_mul_add(m, offset, i - 1, t)?;
        add_one(m, offset.wrapping_sub(1), i, t)?;
        i -= 1;
        offset = offset.wrapping_add(2);
    }

    // Shift back up and set low bit.
    primitive_left_shift(m, zlen, 1)?;
    let last = zlen.wrapping_sub(1);
    let z_last = m.get(Arr::Out, last)?;
    let x_last = m.get(Arr::In, len.wrapping_sub(1))?;
    m.set(Arr::Out, last, z_last | (x_last & 1))
}

/// `addOne(a, offset, mlen, carry)` on `out`; returns the carry out.
fn add_one(m: &mut Arrays<'_>, offset: i32, mlen: i32, carry: i32) -> Result<i32, JavaException> {
    let mut offset = m
        .length(Arr::Out)
        .wrapping_sub(1)
        .wrapping_sub(mlen)
        .wrapping_sub(offset);
    let t = (m.get(Arr::Out, offset)? as u32 as u64) + (carry as u32 as u64);
    m.set(Arr::Out, offset, t as i32)?;
    if (t >> 32) == 0 {
        return Ok(0);
    }
    let mut mlen = mlen;
    loop {
        mlen = mlen.wrapping_sub(1);
        if mlen < 0 {
            return Ok(1);
        }
        offset = offset.wrapping_sub(1);
        if offset < 0 {
            return Ok(1); // Carry out of number
        }
        let incremented = m.get(Arr::Out, offset)?.wrapping_add(1);
        m.set(Arr::Out, offset, incremented)?;
        if m.get(Arr::Out, offset)? != 0 {
            return Ok(0);
        }
    }
}

/// `primitiveLeftShift(a, len, n)` on `out` (`0 <= n < 32`).
fn primitive_left_shift(m: &mut Arrays<'_>, len: i32, n: u32) -> Result<(), JavaException> {
    if len == 0 || n == 0 {
        return Ok(());
    }
    let n2 = 32 - n;
    let mut i = 0i32;
    let mut c = m.get(Arr::Out, i)?;
    let end = i.wrapping_add(len).wrapping_sub(1);
    while i < end {
        let b = c;
        c = m.get(Arr::Out, i + 1)?;
        m.set(Arr::Out, i, (b << n) | ((c as u32) >> n2) as i32)?;
        i += 1;
    }
    let last = len.wrapping_sub(1);
    let shifted = m.get(Arr::Out, last)? << n;
    m.set(Arr::Out, last, shifted)
}
