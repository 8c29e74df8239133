//! The BigInteger kernels JIT-compiled for the host, against the Rust transcription of the Java
//! code: random operands of 1..=200 ints, and hostile lengths, offsets and multipliers. Every
//! `int[]` sits between two `PROT_NONE` pages, flush against one of them (both layouts are
//! run), so any access outside the arrays kills the test process.

use schedlab_backend::JitFunction;
use schedlab_backend::emulate_bigint::{
    Layout, MulAddCase, SquareToLenCase, hostile_mul_add_cases, hostile_square_cases,
    random_mul_add_cases, random_square_cases,
};
use schedlab_kernels::bigint::{self, Entry, ILLEGAL_ARGUMENT, OUT_OF_BOUNDS};

mod common;
use common::{Guarded, MulAddFn, SquareFn};

struct Kernels {
    mul_add: MulAddFn,
    square: SquareFn,
}

fn kernels(entry: Entry) -> Kernels {
    let m = JitFunction::compile(&bigint::mul_add_with(entry)).expect("mul_add compiles");
    let s = JitFunction::compile(&bigint::square_to_len_with(entry)).expect("square compiles");
    // SAFETY: the kernels' signatures are the documented ones these types spell.
    unsafe {
        let k = Kernels {
            mul_add: std::mem::transmute::<*const u8, MulAddFn>(m.code_ptr()),
            square: std::mem::transmute::<*const u8, SquareFn>(s.code_ptr()),
        };
        // The JIT's code memory lives for the process (see `JitFunction`).
        std::mem::forget((m, s));
        k
    }
}

fn run_mul_add(k: &Kernels, entry: Entry, case: &MulAddCase) {
    let expected = case.expected(entry);
    for layout in Layout::ALL {
        let out = Guarded::new(&case.out, layout);
        let input = case.input.as_ref().map(|v| Guarded::new(v, layout));
        let (in_ptr, in_len) = input
            .as_ref()
            .map_or((out.data.cast_const(), out.len()), |g| {
                (g.data.cast_const(), g.len())
            });
        // SAFETY: pointers and lengths describe the guarded arrays.
        let ret = unsafe {
            (k.mul_add)(
                out.data,
                out.len(),
                in_ptr,
                in_len,
                case.offset,
                case.len,
                case.k,
            )
        };
        assert_eq!(
            (ret, out.to_vec()),
            (expected.ret, expected.written.clone()),
            "{entry:?} {layout:?} {case:?}"
        );
        if let (Some(g), Some(v)) = (&input, &case.input) {
            assert_eq!(&g.to_vec(), v, "`in` is never written");
        }
    }
}

fn run_square(k: &Kernels, entry: Entry, case: &SquareToLenCase) {
    let expected = case.expected(entry);
    for layout in Layout::ALL {
        let z = Guarded::new(&case.z, layout);
        let x = case.x.as_ref().map(|v| Guarded::new(v, layout));
        let (x_ptr, x_len) = x.as_ref().map_or((z.data.cast_const(), z.len()), |g| {
            (g.data.cast_const(), g.len())
        });
        // SAFETY: pointers and lengths describe the guarded arrays.
        let ret = unsafe { (k.square)(x_ptr, x_len, case.len, z.data, z.len(), case.zlen) };
        assert_eq!(
            (i64::from(ret), z.to_vec()),
            (expected.ret, expected.written.clone()),
            "{entry:?} {layout:?} {case:?}"
        );
        if let (Some(g), Some(v)) = (&x, &case.x) {
            assert_eq!(&g.to_vec(), v, "`x` is never written");
        }
    }
}

/// Counts (out of bounds, illegal argument, normal) expected outcomes.
fn tally(rets: impl Iterator<Item = i64>) -> [usize; 3] {
    let mut t = [0; 3];
    for r in rets {
        t[if r == i64::from(OUT_OF_BOUNDS) {
            0
        } else if r == i64::from(ILLEGAL_ARGUMENT) {
            1
        } else {
            2
        }] += 1;
    }
    t
}

#[test]
fn square_to_len_random_operands() {
    let k = kernels(Entry::Wrapper);
    let cases = random_square_cases(0x0003_5eed, 1..=200);
    assert_eq!(cases.len(), 200);
    for case in &cases {
        assert_eq!(case.expected(Entry::Wrapper).ret, 0, "valid arguments");
        run_square(&k, Entry::Wrapper, case);
    }
}

#[test]
fn mul_add_random_operands() {
    let k = kernels(Entry::Wrapper);
    let cases = random_mul_add_cases(0x0007_5eed, 1..=200);
    for case in &cases {
        assert!(case.expected(Entry::Wrapper).ret >= 0, "valid arguments");
        run_mul_add(&k, Entry::Wrapper, case);
    }
}

#[test]
fn mul_add_hostile_arguments() {
    for entry in [Entry::Wrapper, Entry::Impl] {
        let k = kernels(entry);
        let cases = hostile_mul_add_cases(0xbad5);
        let t = tally(cases.iter().map(|c| c.expected(entry).ret));
        // `implMulAdd` alone has no argument check; with it, `len = MIN_VALUE` passes the
        // checks and fails on `in[MAX_VALUE]`.
        let needed = if entry == Entry::Impl {
            [true, false, true]
        } else {
            [true; 3]
        };
        for (n, need) in t.iter().zip(needed) {
            assert!(!need || *n > 0, "{entry:?}: each outcome occurs: {t:?}");
        }
        for case in &cases {
            run_mul_add(&k, entry, case);
        }
    }
}

#[test]
fn square_to_len_hostile_arguments() {
    for entry in [Entry::Wrapper, Entry::Impl] {
        let k = kernels(entry);
        let cases = hostile_square_cases(0xbad7);
        let t = tally(cases.iter().map(|c| c.expected(entry).ret));
        // Once `implSquareToLenChecks` passed no access can fail (unless `len * 2` wraps,
        // which needs more than 2^30 ints): the wrapper never reports out of bounds. Without
        // it, the squares loop fails before the inner `mulAdd` check could.
        let needed = match entry {
            Entry::Wrapper => [false, true, true],
            Entry::Impl => [true, false, true],
        };
        for (n, need) in t.iter().zip(needed) {
            assert!(!need || *n > 0, "{entry:?}: each outcome occurs: {t:?}");
        }
        for case in &cases {
            run_square(&k, entry, case);
        }
    }
}
