//! Executing the BigInteger kernels (`schedlab_kernels::bigint`) for any target, through
//! [`crate::emulate`]'s plumbing: in-process through the JIT on the host, else linked with
//! `harness/bigint_harness.c` and run under qemu. The harness puts every `int[]` between two
//! `PROT_NONE` pages, flush against the lower or the upper one ([`Layout`]), so an access the
//! kernel should have refused crashes the run.
//!
//! Cases carry their own expectation ([`MulAddCase::expected`], [`SquareToLenCase::expected`])
//! from the Rust transcription of the Java code.

use crate::emulate::{EmulateError, Harness, run_harness, toolchain_status};
use crate::jit::{JitError, JitFunction};
use crate::object::emit_object;
use crate::target::Target;
use cranelift_codegen::ir::{Function, Signature};
use schedlab_kernels::bigint::reference::{Input, mul_add_with, square_to_len_with};
use schedlab_kernels::bigint::{Entry, mul_add_signature, square_to_len_signature};
use std::fmt::Write as _;

/// The BigInteger harness (`harness/bigint_harness.c`).
pub const BIGINT_HARNESS: Harness = Harness {
    name: "bigint_harness",
    source: include_str!("../harness/bigint_harness.c"),
};

/// Where the harness places each array between its guard pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// The array begins right after a guard page (catches index -1).
    Start,
    /// The array ends right before a guard page (catches index `length`).
    End,
}

impl Layout {
    /// Both layouts.
    pub const ALL: [Layout; 2] = [Layout::Start, Layout::End];

    fn word(self) -> &'static str {
        match self {
            Layout::Start => "start",
            Layout::End => "end",
        }
    }
}

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

/// A small deterministic generator (xorshift64*), so generated cases reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A word; all-ones, zero and `MIN_VALUE` are over-represented (long carry chains).
    fn word(&mut self) -> i32 {
        match self.below(8) {
            0 => -1,
            1 => 0,
            2 => i32::MIN,
            _ => (self.next() >> 32) as i32,
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
    let mut rng = Rng(seed | 1);
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
    let mut rng = Rng(seed | 1);
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

/// `mul_add` calls on small arrays with every combination of [`hostile_ints`] offsets and
/// lengths, `in` separate and `in` = `out`.
pub fn hostile_mul_add_cases(seed: u64) -> Vec<MulAddCase> {
    let mut rng = Rng(seed | 1);
    let mut cases = Vec::new();
    for (out_len, in_len) in [(0, 0), (1, 1), (4, 3), (3, 5), (6, 6)] {
        let out = rng.words(out_len);
        let input = rng.words(in_len);
        for offset in hostile_ints(int(out_len)) {
            for len in hostile_ints(int(in_len)) {
                for same in [false, true] {
                    cases.push(MulAddCase {
                        out: out.clone(),
                        input: (!same).then(|| input.clone()),
                        offset,
                        len,
                        k: -1,
                    });
                }
            }
        }
    }
    cases
}

/// `square_to_len` calls on small arrays with every combination of [`hostile_ints`] `len`
/// and `zlen`, `x` separate and `x` = `z`.
pub fn hostile_square_cases(seed: u64) -> Vec<SquareToLenCase> {
    let mut rng = Rng(seed | 1);
    let mut cases = Vec::new();
    for (x_len, z_len) in [(0, 0), (1, 2), (2, 3), (3, 6), (4, 9)] {
        let x = rng.words(x_len);
        let z = rng.words(z_len);
        for len in hostile_ints(int(x_len)) {
            for zlen in hostile_ints(int(z_len)) {
                for same in [false, true] {
                    cases.push(SquareToLenCase {
                        x: (!same).then(|| x.clone()),
                        len,
                        z: z.clone(),
                        zlen,
                    });
                }
            }
        }
    }
    cases
}

/// A test case of one BigInteger kernel: the kernel's signature, the case's line for the C
/// harness and its run through the host JIT.
pub trait BigIntCase: Sized {
    /// The kernel's signature (checked before anything runs).
    fn signature() -> Signature;
    /// Appends the case's harness line (without the newline) for `layout`.
    fn push_harness_line(&self, layout: Layout, line: &mut String);
    /// Runs `cases` through `jit`, whose signature is [`BigIntCase::signature`].
    fn run_jit(jit: &JitFunction, cases: &[Self]) -> Vec<BigIntOutcome>;
}

impl BigIntCase for MulAddCase {
    fn signature() -> Signature {
        mul_add_signature()
    }

    fn push_harness_line(&self, layout: Layout, line: &mut String) {
        let _ = write!(
            line,
            "mul_add {} {} {} {} ",
            layout.word(),
            self.offset,
            self.len,
            self.k
        );
        push_array(line, Some(&self.out));
        line.push(' ');
        push_array(line, self.input.as_deref());
    }

    fn run_jit(jit: &JitFunction, cases: &[Self]) -> Vec<BigIntOutcome> {
        // SAFETY: the signature was checked; the JIT's calling convention is the host's C one.
        let kernel: MulAddFn =
            unsafe { std::mem::transmute::<*const u8, MulAddFn>(jit.code_ptr()) };
        cases
            .iter()
            .map(|c| {
                let mut out = c.out.clone();
                let out_len = java_length(&out);
                let out_ptr = out.as_mut_ptr();
                let (in_ptr, in_len) = match &c.input {
                    Some(v) => (v.as_ptr(), java_length(v)),
                    None => (out_ptr.cast_const(), out_len),
                };
                // SAFETY: each pointer addresses as many ints as the length passed with it;
                // the kernel checks every access against those lengths.
                let ret = unsafe { kernel(out_ptr, out_len, in_ptr, in_len, c.offset, c.len, c.k) };
                BigIntOutcome { ret, written: out }
            })
            .collect()
    }
}

impl BigIntCase for SquareToLenCase {
    fn signature() -> Signature {
        square_to_len_signature()
    }

    fn push_harness_line(&self, layout: Layout, line: &mut String) {
        let _ = write!(
            line,
            "square_to_len {} {} {} ",
            layout.word(),
            self.len,
            self.zlen
        );
        push_array(line, self.x.as_deref());
        line.push(' ');
        push_array(line, Some(&self.z));
    }

    fn run_jit(jit: &JitFunction, cases: &[Self]) -> Vec<BigIntOutcome> {
        // SAFETY: as for `MulAddCase`.
        let kernel: SquareFn =
            unsafe { std::mem::transmute::<*const u8, SquareFn>(jit.code_ptr()) };
        cases
            .iter()
            .map(|c| {
                let mut z = c.z.clone();
                let z_len = java_length(&z);
                let z_ptr = z.as_mut_ptr();
                let (x_ptr, x_len) = match &c.x {
                    Some(v) => (v.as_ptr(), java_length(v)),
                    None => (z_ptr.cast_const(), z_len),
                };
                // SAFETY: as for `MulAddCase`.
                let ret = unsafe { kernel(x_ptr, x_len, c.len, z_ptr, z_len, c.zlen) };
                BigIntOutcome {
                    ret: i64::from(ret),
                    written: z,
                }
            })
            .collect()
    }
}

/// Runs the kernel `func` for `target` on each case: through the JIT on the host (`layout`
/// does not apply: the arrays are plain vectors), else linked and under qemu.
pub fn run_cases<C: BigIntCase>(
    func: &Function,
    target: Target,
    layout: Layout,
    cases: &[C],
) -> Result<Vec<BigIntOutcome>, EmulateError> {
    check_signature(func, &C::signature())?;
    if target.is_host() {
        let jit = JitFunction::compile(func)?;
        return Ok(C::run_jit(&jit, cases));
    }
    run_cases_linked(func, target, layout, cases)
}

/// [`run_cases`] through the C harness and its guard pages, also on the host.
pub fn run_cases_linked<C: BigIntCase>(
    func: &Function,
    target: Target,
    layout: Layout,
    cases: &[C],
) -> Result<Vec<BigIntOutcome>, EmulateError> {
    check_signature(func, &C::signature())?;
    let mut input = String::new();
    for c in cases {
        c.push_harness_line(layout, &mut input);
        input.push('\n');
    }
    run_linked(func, target, &input, cases.len())
}

fn check_signature(func: &Function, expected: &Signature) -> Result<(), EmulateError> {
    if func.signature.params != expected.params || func.signature.returns != expected.returns {
        return Err(JitError::Signature {
            expected: expected.to_string(),
            found: func.signature.to_string(),
        }
        .into());
    }
    Ok(())
}

/// An `int[]` field: 8 hex digits per element, `-` when empty, `=` for the written array.
fn push_array(s: &mut String, words: Option<&[i32]>) {
    match words {
        None => s.push('='),
        Some([]) => s.push('-'),
        Some(words) => {
            for w in words {
                let _ = write!(s, "{:08x}", *w as u32);
            }
        }
    }
}

fn run_linked(
    func: &Function,
    target: Target,
    input: &str,
    cases: usize,
) -> Result<Vec<BigIntOutcome>, EmulateError> {
    toolchain_status(target)?;
    let object = emit_object(func, target)?;
    let output = run_harness(&object, &BIGINT_HARNESS, input)?;
    parse_output(&output, target, cases)
}

fn parse_output(
    output: &str,
    target: Target,
    cases: usize,
) -> Result<Vec<BigIntOutcome>, EmulateError> {
    let bad = |line: usize, text: &str| EmulateError::Output {
        target,
        harness: BIGINT_HARNESS.name.to_string(),
        line,
        text: text.to_string(),
    };
    let mut outcomes = Vec::with_capacity(cases);
    for (i, text) in output.lines().enumerate() {
        let [ret, words] = text.split(' ').collect::<Vec<_>>()[..] else {
            return Err(bad(i + 1, text));
        };
        let ret: i64 = ret.parse().map_err(|_| bad(i + 1, text))?;
        let written = if words == "-" {
            Vec::new()
        } else if words.len() % 8 != 0 || !words.is_ascii() {
            return Err(bad(i + 1, text));
        } else {
            (0..words.len() / 8)
                .map(|w| u32::from_str_radix(&words[8 * w..8 * w + 8], 16).map(|v| v as i32))
                .collect::<Result<Vec<i32>, _>>()
                .map_err(|_| bad(i + 1, text))?
        };
        outcomes.push(BigIntOutcome { ret, written });
    }
    if outcomes.len() != cases {
        return Err(bad(
            0,
            &format!("{} result lines for {cases} cases", outcomes.len()),
        ));
    }
    Ok(outcomes)
}

type MulAddFn = unsafe extern "C" fn(*mut i32, i32, *const i32, i32, i32, i32, i32) -> i64;
type SquareFn = unsafe extern "C" fn(*const i32, i32, i32, *mut i32, i32, i32) -> i32;

fn java_length(v: &[i32]) -> i32 {
    i32::try_from(v.len()).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_encoded_and_parsed_back() {
        let mut s = String::new();
        push_array(&mut s, Some(&[-1, 0x1234, i32::MIN]));
        assert_eq!(s, "ffffffff0000123480000000");
        let parsed = parse_output(&format!("-2147483648 {s}\n0 -\n"), Target::S390x, 2);
        let parsed = parsed.ok();
        assert_eq!(
            parsed,
            Some(vec![
                BigIntOutcome {
                    ret: i64::from(i32::MIN),
                    written: vec![-1, 0x1234, i32::MIN]
                },
                BigIntOutcome {
                    ret: 0,
                    written: vec![]
                }
            ])
        );
        assert!(parse_output("0 123\n", Target::S390x, 1).is_err());
        assert!(parse_output("0 -\n", Target::S390x, 2).is_err());
    }
}
