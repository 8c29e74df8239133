//! Bounds-check elimination on the BigInteger kernels, differentially and natively: each
//! kernel is compiled with `BceLevel::Off`, `Merge` and `Predicate` (and `Predicate` followed
//! by induction-variable strength reduction) and run on the host with
//! every `int[]` between two `PROT_NONE` pages (flush against one, both layouts), on random
//! operands and on hostile lengths and offsets. Every level must return the same value and
//! leave the same array contents as the checked original (and as the Rust transcription of the
//! Java code); an access the checks should have refused kills the process.
//!
//! The predicated loops are mulAdd's (`j` counting down with `j >= 0`, `o` in lockstep) and
//! squareToLen's squares loop (`i` stepping by 2 while `j` steps by 1) and
//! primitiveLeftShift: the `Impl` entry reaches them with arguments no wrapper check filtered,
//! so the preheader tests see inputs that fail in the first, a middle or the last iteration.
#![allow(missing_docs)]

use schedlab_backend::JitFunction;
use schedlab_kernels::bigint::cases::{
    BigIntOutcome, MulAddCase, SquareToLenCase, hostile_mul_add_cases, hostile_square_cases,
    random_mul_add_cases, random_square_cases,
};
use schedlab_kernels::bigint::{self, Entry, OUT_OF_BOUNDS};
use schedlab_kernels::case::Placement as Layout;
use schedlab_passes::bce::{self, BceLevel};
use schedlab_passes::iv;
use std::sync::OnceLock;

mod common;
use common::{Guarded, MulAddFn, SquareFn};

/// Both kernels at one entry, compiled at every level (Off first), and predicated with their
/// induction variables strength-reduced (`predicate+iv`).
struct Variants {
    mul_add: Vec<(String, MulAddFn)>,
    square: Vec<(String, SquareFn)>,
}

/// Every variant: each level, then `Predicate` followed by the `iv` pass.
fn levels() -> Vec<(BceLevel, bool)> {
    let mut v: Vec<(BceLevel, bool)> = BceLevel::ALL.into_iter().map(|l| (l, false)).collect();
    v.push((BceLevel::Predicate, true));
    v
}

fn label((level, reduce): (BceLevel, bool)) -> String {
    if reduce {
        format!("{level}+iv")
    } else {
        level.to_string()
    }
}

fn compile_at(
    mut func: cranelift_codegen::ir::Function,
    (level, reduce): (BceLevel, bool),
) -> *const u8 {
    let stats = bce::run(&mut func, level).expect("bce runs");
    if reduce {
        iv::reduce_predicated(&mut func, &stats, iv::IvOptions::default());
    }
    let jit = JitFunction::compile(&func).expect("JIT compiles the kernel");
    let ptr = jit.code_ptr();
    // The JIT's code memory lives for the process.
    std::mem::forget(jit);
    ptr
}

fn variants(entry: Entry) -> &'static Variants {
    static WRAPPER: OnceLock<Variants> = OnceLock::new();
    static IMPL: OnceLock<Variants> = OnceLock::new();
    let cell = match entry {
        Entry::Wrapper => &WRAPPER,
        Entry::Impl => &IMPL,
    };
    cell.get_or_init(|| Variants {
        mul_add: at_every_level(
            || bigint::mul_add_with(entry),
            // SAFETY: the kernel's signature is the documented one `MulAddFn` spells.
            |p| unsafe { std::mem::transmute::<*const u8, MulAddFn>(p) },
        ),
        square: at_every_level(
            || bigint::square_to_len_with(entry),
            // SAFETY: the kernel's signature is the documented one `SquareFn` spells.
            |p| unsafe { std::mem::transmute::<*const u8, SquareFn>(p) },
        ),
    })
}

/// The kernel `build` makes, compiled at every level of [`levels`] and labelled; `as_fn`
/// turns its code pointer into the function type of its signature.
fn at_every_level<F>(
    build: impl Fn() -> cranelift_codegen::ir::Function,
    as_fn: impl Fn(*const u8) -> F,
) -> Vec<(String, F)> {
    levels()
        .into_iter()
        .map(|level| {
            let p = compile_at(build(), level);
            (label(level), as_fn(p))
        })
        .collect()
}

fn mul_add_once(f: MulAddFn, case: &MulAddCase, layout: Layout) -> BigIntOutcome {
    let out = Guarded::new(&case.out, layout);
    let input = case.input.as_ref().map(|v| Guarded::new(v, layout));
    let (in_ptr, in_len) = input
        .as_ref()
        .map_or((out.data.cast_const(), out.len()), |g| {
            (g.data.cast_const(), g.len())
        });
    // SAFETY: pointers and lengths describe the guarded arrays.
    let ret = unsafe {
        f(
            out.data,
            out.len(),
            in_ptr,
            in_len,
            case.offset,
            case.len,
            case.k,
        )
    };
    if let (Some(g), Some(v)) = (&input, &case.input) {
        assert_eq!(&g.to_vec(), v, "`in` is never written");
    }
    BigIntOutcome {
        ret,
        written: out.to_vec(),
    }
}

fn square_once(f: SquareFn, case: &SquareToLenCase, layout: Layout) -> BigIntOutcome {
    let z = Guarded::new(&case.z, layout);
    let x = case.x.as_ref().map(|v| Guarded::new(v, layout));
    let (x_ptr, x_len) = x.as_ref().map_or((z.data.cast_const(), z.len()), |g| {
        (g.data.cast_const(), g.len())
    });
    // SAFETY: pointers and lengths describe the guarded arrays.
    let ret = unsafe { f(x_ptr, x_len, case.len, z.data, z.len(), case.zlen) };
    if let (Some(g), Some(v)) = (&x, &case.x) {
        assert_eq!(&g.to_vec(), v, "`x` is never written");
    }
    BigIntOutcome {
        ret: i64::from(ret),
        written: z.to_vec(),
    }
}

/// Runs every level of one kernel (`levels`, Off first, each called through `once`) on every
/// case and layout against the Java model's `expected` outcome; returns how many cases ended out
/// of bounds.
fn check_levels<C: std::fmt::Debug, F: Copy>(
    entry: Entry,
    levels: &[(String, F)],
    cases: &[C],
    expected: impl Fn(&C) -> BigIntOutcome,
    once: fn(F, &C, Layout) -> BigIntOutcome,
) -> usize {
    let mut oob = 0;
    for case in cases {
        let expected = expected(case);
        oob += usize::from(expected.ret == i64::from(OUT_OF_BOUNDS));
        for layout in Layout::ALL {
            let original = once(levels[0].1, case, layout);
            assert_eq!(original, expected, "off {entry:?} {layout:?} {case:?}");
            for (level, f) in &levels[1..] {
                let got = once(*f, case, layout);
                assert_eq!(got, original, "{level} {entry:?} {layout:?} {case:?}");
            }
        }
    }
    oob
}

/// [`check_levels`] on `mulAdd`.
fn check_mul_add(entry: Entry, cases: &[MulAddCase]) -> usize {
    let levels = &variants(entry).mul_add;
    check_levels(entry, levels, cases, |c| c.expected(entry), mul_add_once)
}

/// [`check_levels`] on `squareToLen`.
fn check_square(entry: Entry, cases: &[SquareToLenCase]) -> usize {
    let levels = &variants(entry).square;
    check_levels(entry, levels, cases, |c| c.expected(entry), square_once)
}

/// Asserts that of `cases` cases, of which `oob` fail a bounds check, more than 200 take the
/// checked fallback and more than 200 the fast path.
fn assert_both_paths_taken(oob: usize, cases: usize) {
    assert!(oob > 200, "only {oob} cases fail a bounds check");
    assert!(oob < cases - 200, "only {} pass", cases - oob);
}

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// An int near `around` (within `spread`), or now and then an extreme.
    fn near(&mut self, around: i64, spread: i64) -> i32 {
        match self.below(12) {
            0 => i32::MIN,
            1 => i32::MAX,
            2 => i32::MIN + 1,
            3 => i32::MAX - 1,
            _ => {
                let d = (self.below((2 * spread + 1) as u64) as i64) - spread;
                (around + d).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
            }
        }
    }

    fn words(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| (self.next() >> 32) as i32).collect()
    }
}

/// `mul_add` at the `Impl` entry: no wrapper check filters `offset`/`len`, so `in[j]` and
/// `out[o]` fail in the first, some middle or the last iteration, or never.
fn near_boundary_mul_add_cases(seed: u64, n: usize) -> Vec<MulAddCase> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let out_len = rng.below(12) as usize;
            let in_len = rng.below(12) as usize;
            let out = rng.words(out_len);
            let input = rng.words(in_len);
            MulAddCase {
                out,
                input: (i % 5 != 4).then_some(input),
                offset: rng.near(0, out_len as i64 + 3),
                len: rng.near(in_len as i64, in_len as i64 + 3),
                k: (rng.next() >> 32) as i32,
            }
        })
        .collect()
}

/// `square_to_len` at the `Impl` entry with `len`/`zlen` around the arrays' sizes, so the
/// squares loop (`z[i]`, `z[i+1]` with `i = 2j`) and the shift loop fail at every position.
fn near_boundary_square_cases(seed: u64, n: usize) -> Vec<SquareToLenCase> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let x_len = 1 + rng.below(8) as usize;
            // Half the cases fit (z exactly or a little longer than 2 * len), the others are
            // off by a little in any direction.
            let fits = rng.below(2) == 0;
            let z_len = if fits {
                2 * x_len + rng.below(2) as usize
            } else {
                rng.below(2 * x_len as u64 + 4) as usize
            };
            let x = rng.words(x_len);
            let (len, zlen) = if fits {
                let len = x_len as i32 - rng.below(2) as i32;
                (len.max(1), 2 * len.max(1))
            } else {
                (
                    rng.near(x_len as i64, x_len as i64 + 2),
                    rng.near(2 * x_len as i64, 2 * x_len as i64 + 3),
                )
            };
            SquareToLenCase {
                x: (i % 5 != 4).then_some(x),
                len,
                z: rng.words(z_len),
                zlen,
            }
        })
        .collect()
}

/// One kernel's three agreement tests, each checking with `$check`: `$random` on random
/// operands (entered at both entries, no call failing a check), `$hostile` on hostile
/// arguments (at both entries) and `$boundary` on calls near every boundary (at the
/// implementation, which must take both the fast path and the checked fallback).
macro_rules! levels_agree_tests {
    (
        $check:ident,
        $random:ident: $random_cases:expr,
        $hostile:ident: $hostile_cases:expr,
        $boundary:ident: $boundary_cases:expr $(,)?
    ) => {
        #[test]
        fn $random() {
            for entry in [Entry::Wrapper, Entry::Impl] {
                let cases = $random_cases;
                assert_eq!($check(entry, &cases), 0);
            }
        }

        #[test]
        fn $hostile() {
            for entry in [Entry::Wrapper, Entry::Impl] {
                $check(entry, &$hostile_cases);
            }
        }

        #[test]
        fn $boundary() {
            let cases = $boundary_cases;
            // The generator must exercise the checked fallback, not only the fast copy.
            assert_both_paths_taken($check(Entry::Impl, &cases), cases.len());
        }
    };
}

levels_agree_tests!(
    check_mul_add,
    mul_add_levels_agree_on_random_operands:
        random_mul_add_cases(0x3e5, (1..=200).chain([1, 2, 3, 64, 65])),
    mul_add_levels_agree_on_hostile_arguments: hostile_mul_add_cases(0xbad),
    mul_add_levels_agree_near_every_boundary: near_boundary_mul_add_cases(0x5eed, 4000),
);

levels_agree_tests!(
    check_square,
    square_to_len_levels_agree_on_random_operands:
        random_square_cases(0x5a7, (1..=120).chain([150, 200])),
    square_to_len_levels_agree_on_hostile_arguments: hostile_square_cases(0xbad),
    square_to_len_levels_agree_near_every_boundary: near_boundary_square_cases(0xfeed, 4000),
);

#[test]
fn predicated_bigint_hot_loops_have_no_checks() {
    for entry in [Entry::Wrapper, Entry::Impl] {
        for build in [bigint::mul_add_with, bigint::square_to_len_with] {
            let mut func = build(entry);
            let stats = bce::run(&mut func, BceLevel::Predicate).expect("bce");
            assert_eq!(
                (stats.checks_per_block_unoptimized, stats.checks_per_block),
                (3, 0),
                "{stats}"
            );
        }
    }
}
