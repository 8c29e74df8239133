//! The Rust transcription of `BigInteger.mulAdd` / `squareToLen` against `num-bigint`, and its
//! Java corner cases (argument checks, wrapping `int` arithmetic, aliasing).

use num_bigint::BigUint;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use schedlab_kernels::bigint::Entry;
use schedlab_kernels::bigint::reference::{
    self, Input, JavaException, mul_add_with, square_to_len_with,
};

/// A big-endian `int[]` magnitude as a number.
fn value(mag: &[i32]) -> BigUint {
    let digits: Vec<u32> = mag.iter().rev().map(|&w| w as u32).collect();
    BigUint::from_slice(&digits)
}

/// Random words, with all-ones and zero words over-represented (carry chains).
fn words(rng: &mut StdRng, n: usize) -> Vec<i32> {
    (0..n)
        .map(|_| match rng.random_range(0..8) {
            0 => -1,
            1 => 0,
            2 => i32::MIN,
            _ => rng.random(),
        })
        .collect()
}

#[test]
fn square_to_len_matches_num_bigint() {
    let mut rng = StdRng::seed_from_u64(0x5eed_0003);
    for len in 1..=200usize {
        for _ in 0..3 {
            let x = words(&mut rng, len);
            let mut z = vec![0x5a5a_5a5au32 as i32; 2 * len];
            let n = i32::try_from(len).expect("small");
            reference::square_to_len(&x, n, &mut z, 2 * n).expect("valid arguments");
            let v = value(&x);
            assert_eq!(value(&z), &v * &v, "len {len}: x = {x:?}");
        }
    }
}

#[test]
fn square_of_all_ones_carries_through_every_word() {
    for len in [1usize, 2, 7, 64, 200] {
        let x = vec![-1i32; len];
        let mut z = vec![0; 2 * len];
        let n = len as i32;
        reference::square_to_len(&x, n, &mut z, 2 * n).expect("valid");
        let v = value(&x);
        assert_eq!(value(&z), &v * &v);
    }
}

#[test]
fn mul_add_matches_num_bigint() {
    let mut rng = StdRng::seed_from_u64(0x5eed_0007);
    for len in 1..=200usize {
        let out_len = len + rng.random_range(0..8usize);
        let offset = rng.random_range(0..=out_len - len);
        let extra = rng.random_range(0..3usize);
        let input = words(&mut rng, len + extra);
        let k: i32 = if len % 5 == 0 { -1 } else { rng.random() };
        let before = words(&mut rng, out_len);
        let mut out = before.clone();
        let carry = reference::mul_add(&mut out, &input, offset as i32, len as i32, k)
            .expect("valid arguments");
        // The window `len` ints ending `offset` ints before the end gains in[0..len] * k.
        let (lo, hi) = (out_len - offset - len, out_len - offset);
        let expected = value(&before[lo..hi]) + value(&input[..len]) * BigUint::from(k as u32);
        let got = value(&out[lo..hi]) + (BigUint::from(carry) << (32 * len));
        assert_eq!(got, expected, "len {len} offset {offset}");
        assert_eq!(out[..lo], before[..lo], "words before the window");
        assert_eq!(out[hi..], before[hi..], "words after the window");
    }
}

#[test]
fn mul_add_argument_checks_throw_illegal_argument() {
    let input = [1, 2, 3];
    let iae = Err(JavaException::IllegalArgument);
    let call = |offset, len| {
        let mut out = [0i32; 4];
        reference::mul_add(&mut out, &input, offset, len, 7)
    };
    assert_eq!(call(0, 4), iae, "len > in.length");
    assert_eq!(call(-1, 1), iae, "offset < 0");
    assert_eq!(call(4, 1), iae, "offset > out.length - 1");
    assert_eq!(call(2, 3), iae, "len > out.length - offset");
    assert_eq!(call(3, 1), Ok(0), "last word");
    assert_eq!(call(0, 0), Ok(0), "empty");
    assert_eq!(call(0, -5), Ok(0), "negative len: no iteration");
    // len = MIN_VALUE passes every check; `len - 1` wraps to MAX_VALUE: in[MAX_VALUE].
    assert_eq!(call(0, i32::MIN), Err(JavaException::OutOfBounds));
}

#[test]
fn impl_mul_add_keeps_writes_made_before_the_exception() {
    // out.length - offset - 1 = 1: writes out[1], out[0], then reads out[-1].
    let mut out = [10, 20, 30];
    let input = [1, 1, 1];
    let r = mul_add_with(Entry::Impl, &mut out, Input::Array(&input), 1, 3, 2);
    assert_eq!(r, Err(JavaException::OutOfBounds));
    assert_eq!(out, [12, 22, 30]);
}

#[test]
fn mul_add_in_place_reads_what_it_wrote() {
    // in == out: in[j] for j < len are read after out[…] above them were written.
    let mut a = [1, 1, 1, 1];
    let carry = mul_add_with(Entry::Wrapper, &mut a, Input::SameAsOut, 0, 2, 3).expect("valid");
    // o = 3: a[3] = 1*3 + 1 = 4; o = 2: a[2] = a[0]*3 + a[2] = 4.
    assert_eq!((a, carry), ([1, 1, 4, 4], 0));
}

/// `square_to_len` entered at `entry` on `x = [5, 6]` and a zeroed `z` of `zsize` words.
fn square_five_six(entry: Entry, len: i32, zsize: usize, zlen: i32) -> Result<(), JavaException> {
    let mut z = vec![0; zsize];
    square_to_len_with(entry, Input::Array(&[5, 6]), len, &mut z, zlen)
}

#[test]
fn square_to_len_argument_checks_throw_illegal_argument() {
    let iae = Err(JavaException::IllegalArgument);
    let call = |len, zsize, zlen| square_five_six(Entry::Wrapper, len, zsize, zlen);
    assert_eq!(call(0, 4, 4), iae, "len < 1");
    assert_eq!(call(3, 6, 6), iae, "len > x.length");
    assert_eq!(call(2, 3, 3), iae, "len * 2 > z.length");
    assert_eq!(call(2, 4, 0), iae, "zlen < 1");
    assert_eq!(call(2, 4, 5), iae, "zlen > z.length");
    assert_eq!(call(2, 4, 4), Ok(()));
    // zlen < 2 * len is allowed: only the shift and the low bit use zlen.
    assert_eq!(call(2, 4, 1), Ok(()));
}

#[test]
fn impl_square_to_len_reaches_the_array_checks() {
    let oob = Err(JavaException::OutOfBounds);
    let call = |len, zsize, zlen| square_five_six(Entry::Impl, len, zsize, zlen);
    assert_eq!(call(3, 6, 6), oob, "x[2]");
    assert_eq!(call(2, 3, 3), oob, "z[3]");
    assert_eq!(call(2, 4, 5), oob, "z[4] in the shift");
    assert_eq!(call(2, 4, -1), oob, "a[0] read, then a[-2]");
    assert_eq!(call(0, 4, 4), oob, "x[-1] for the low bit");
    assert_eq!(call(-3, 4, 4), oob, "x[-4] for the low bit");
    // zlen = 0: primitiveLeftShift returns at once, z[-1] fails.
    assert_eq!(call(2, 4, 0), oob);
}

#[test]
fn square_in_place_is_java_s_result() {
    // x == z: Java squares whatever it has overwritten; the result is deterministic.
    let mut a = [3, 0];
    let r = square_to_len_with(Entry::Impl, Input::SameAsOut, 1, &mut a, 2);
    assert_eq!(r, Ok(()));
    // squares: x[0] = 3 → z[0] = 0, z[1] = 4 (9 >>> 1); off-diagonal: t = x[0] = 0 (z[0]),
    // mulAdd with len 0 → 0, addOne(z, 0, 1, 0) adds 0 to z[0]; shift: z = [0, 8];
    // low bit: x[0] = z[0] = 0 → [0, 8].
    assert_eq!(a, [0, 8]);
}
