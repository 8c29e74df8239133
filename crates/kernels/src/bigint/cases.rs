//! Calls of the BigInteger kernels as Java sees them (arrays and ints), their generators
//! (random operands, hostile lengths and offsets) and their expected outcome from the Rust
//! transcription of the Java code ([`super::reference`]).

use super::Entry;
use super::reference::{Input, mul_add_with, square_to_len_with};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// One call `mul_add(out, in, offset, len, k)`; the arrays' lengths are their sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MulAddCase {
    /// `out` before the call.
    pub out: Vec<i32>,
    /// `in`, or `None` when `in` is `out` itself.
    pub input: Option<Vec<i32>>,
    /// Java `offset`.
    pub offset: i32,
    /// Java `len`.
    pub len: i32,
    /// Java `k`.
    pub k: i32,
}

/// One call `square_to_len(x, len, z, zlen)`; the arrays' lengths are their sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SquareToLenCase {
    /// `x`, or `None` when `x` is `z` itself.
    pub x: Option<Vec<i32>>,
    /// Java `len`.
    pub len: i32,
    /// `z` before the call.
    pub z: Vec<i32>,
    /// Java `zlen`.
    pub zlen: i32,
}

/// What a call returned and left in its written array (`out` or `z`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BigIntOutcome {
    /// `mul_add`: the carry (`0..=u32::MAX`) or a negative status; `square_to_len`: 0 or a
    /// status.
    pub ret: i64,
    /// The written array after the call.
    pub written: Vec<i32>,
}

impl MulAddCase {
    /// What the Java code leaves, entered at `entry` (the Rust transcription).
    pub fn expected(&self, entry: Entry) -> BigIntOutcome {
        let mut out = self.out.clone();
        let input = self.input.as_deref().map_or(Input::SameAsOut, Input::Array);
        let r = mul_add_with(entry, &mut out, input, self.offset, self.len, self.k);
        BigIntOutcome {
            ret: r.map_or_else(|e| i64::from(e.status()), i64::from),
            written: out,
        }
    }
}

impl SquareToLenCase {
    /// What the Java code leaves, entered at `entry` (the Rust transcription).
    pub fn expected(&self, entry: Entry) -> BigIntOutcome {
        let mut z = self.z.clone();
        let x = self.x.as_deref().map_or(Input::SameAsOut, Input::Array);
        let r = square_to_len_with(entry, x, self.len, &mut z, self.zlen);
        BigIntOutcome {
            ret: r.map_or_else(|e| i64::from(e.status()), |()| 0),
            written: z,
        }
    }
}

/// Random words for the generators: all-ones, zero and `MIN_VALUE` over-represented (long
/// carry chains).
struct Words(StdRng);

impl Words {
    fn new(seed: u64) -> Self {
        Self(StdRng::seed_from_u64(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n.max(1))
    }

    fn word(&mut self) -> i32 {
        match self.below(8) {
            0 => -1,
            1 => 0,
            2 => i32::MIN,
            _ => self.0.random(),
        }
    }

    fn words(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| self.word()).collect()
    }
}

fn int(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Valid `square_to_len` calls squaring `len` random ints for each `len` in `lens` (`z` and
/// `x` sometimes a little longer than needed, `z` full of garbage).
pub fn random_square_cases(
    seed: u64,
    lens: impl IntoIterator<Item = usize>,
) -> Vec<SquareToLenCase> {
    let mut rng = Words::new(seed);
    lens.into_iter()
        .filter(|&len| len > 0)
        .map(|len| {
            let (x_extra, z_extra) = (rng.below(2), rng.below(2));
            let n = int(len);
            SquareToLenCase {
                x: Some(rng.words(len + x_extra)),
                len: n,
                z: rng.words(2 * len + z_extra),
                zlen: n.saturating_mul(2),
            }
        })
        .collect()
}

/// Valid `mul_add` calls of `len` random ints for each `len` in `lens`, at a random offset
/// of a slightly longer `out`, with a random `k`; every seventh has `in` = `out`.
pub fn random_mul_add_cases(seed: u64, lens: impl IntoIterator<Item = usize>) -> Vec<MulAddCase> {
    let mut rng = Words::new(seed);
    lens.into_iter()
        .enumerate()
        .map(|(i, len)| {
            let out_len = len + 1 + rng.below(6);
            let offset = int(rng.below(out_len - len + 1).min(out_len - 1));
            let in_extra = rng.below(3);
            let input = rng.words(len + in_extra);
            MulAddCase {
                out: rng.words(out_len),
                input: (i % 7 != 6).then_some(input),
                offset,
                len: int(len),
                k: rng.word(),
            }
        })
        .collect()
}

/// Java ints that break arithmetic on lengths and offsets near `n`.
pub fn hostile_ints(n: i32) -> Vec<i32> {
    let mut v = vec![
        i32::MIN,
        i32::MIN + 1,
        -2,
        -1,
        0,
        1,
        2,
        n.wrapping_sub(1),
        n,
        n.wrapping_add(1),
        n.wrapping_mul(2),
        i32::MAX - 1,
        i32::MAX,
    ];
    v.sort_unstable();
    v.dedup();
    v
}

/// For each `(a_len, b_len)` of `sizes`, two random arrays `a` and `b` of those lengths and
/// a case `make(a, b, i, j, same)` for every [`hostile_ints`] `i` of `a_len`, `j` of `b_len`
/// and `same` false (separate arrays) and true (one array passed twice).
fn hostile_grid<T>(
    seed: u64,
    sizes: [(usize, usize); 5],
    make: impl Fn(&[i32], &[i32], i32, i32, bool) -> T,
) -> Vec<T> {
    let mut rng = Words::new(seed);
    let mut cases = Vec::new();
    for (a_len, b_len) in sizes {
        let a = rng.words(a_len);
        let b = rng.words(b_len);
        for i in hostile_ints(int(a_len)) {
            for j in hostile_ints(int(b_len)) {
                for same in [false, true] {
                    cases.push(make(&a, &b, i, j, same));
                }
            }
        }
    }
    cases
}

/// `mul_add` calls on small arrays with every combination of [`hostile_ints`] offsets and
/// lengths, `in` separate and `in` = `out`.
pub fn hostile_mul_add_cases(seed: u64) -> Vec<MulAddCase> {
    let sizes = [(0, 0), (1, 1), (4, 3), (3, 5), (6, 6)];
    hostile_grid(seed, sizes, |out, input, offset, len, same| MulAddCase {
        out: out.to_vec(),
        input: (!same).then(|| input.to_vec()),
        offset,
        len,
        k: -1,
    })
}

/// `square_to_len` calls on small arrays with every combination of [`hostile_ints`] `len`
/// and `zlen`, `x` separate and `x` = `z`.
pub fn hostile_square_cases(seed: u64) -> Vec<SquareToLenCase> {
    let sizes = [(0, 0), (1, 2), (2, 3), (3, 6), (4, 9)];
    hostile_grid(seed, sizes, |x, z, len, zlen, same| SquareToLenCase {
        x: (!same).then(|| x.to_vec()),
        len,
        z: z.to_vec(),
        zlen,
    })
}
