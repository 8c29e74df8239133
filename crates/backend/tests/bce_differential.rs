//! Bounds-check elimination, differentially and natively: the original, merged and predicated
//! kernels (and the predicated one with its induction variable strength-reduced) run on the host against buffers whose last byte sits right before a `PROT_NONE`
//! page, on random and adversarial `(len, ofs, limit)`. Every variant must return the same
//! value and leave the same state as the original and as a plain-Rust model of the Java code;
//! a read past the end faults instead of passing silently.
#![allow(missing_docs)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use schedlab_backend::JitFunction;
use schedlab_backend::exec::GuardedRegion;
use schedlab_kernels::case::Placement;
use schedlab_kernels::{int_sum, md5};
use schedlab_passes::bce::{self, BceLevel};
use schedlab_passes::iv;
use std::sync::OnceLock;

type Kernel = unsafe extern "C" fn(*mut u32, *const u8, i32, i32, i32) -> i32;

/// A kernel compiled at every level (and predicated with its induction variable reduced),
/// kept for the whole process.
struct Variants {
    kernels: Vec<(String, Kernel)>,
}

fn compile(func: &cranelift_codegen::ir::Function) -> Kernel {
    let jit = JitFunction::compile(func).expect("JIT compiles the kernel");
    let ptr = jit.code_ptr();
    std::mem::forget(jit);
    // SAFETY: the kernels have exactly this signature (`md5::signature()`), and the code
    // memory is never freed.
    unsafe { std::mem::transmute::<*const u8, Kernel>(ptr) }
}

fn variants(build: fn() -> cranelift_codegen::ir::Function) -> Variants {
    let mut kernels: Vec<(String, Kernel)> = BceLevel::ALL
        .into_iter()
        .map(|level| {
            let mut func = build();
            bce::run(&mut func, level).expect("bce runs");
            (level.to_string(), compile(&func))
        })
        .collect();
    let mut func = build();
    let stats = bce::run(&mut func, BceLevel::Predicate).expect("bce runs");
    let reduced = iv::reduce_predicated(&mut func, &stats, iv::IvOptions::default());
    assert_eq!(reduced.loops_reduced, 1, "the check-free loop is reduced");
    kernels.push(("predicate+iv".to_string(), compile(&func)));
    Variants { kernels }
}

fn md5_variants() -> &'static Variants {
    static V: OnceLock<Variants> = OnceLock::new();
    V.get_or_init(|| variants(md5::compress_multi_block))
}

fn int_sum_variants() -> &'static Variants {
    static V: OnceLock<Variants> = OnceLock::new();
    V.get_or_init(|| variants(int_sum::multi_block))
}

/// `len` readable bytes that end exactly where a `PROT_NONE` page begins (with another
/// `PROT_NONE` page below the first data page).
struct GuardedBuffer(GuardedRegion);

impl GuardedBuffer {
    /// A writable buffer filled from `fill`.
    fn new(len: usize, fill: impl FnMut(usize) -> u8) -> Self {
        Self::map(len, libc::PROT_READ | libc::PROT_WRITE, 0, Some(fill))
    }

    /// A read-only buffer of zero pages, cheap even at 2 GiB: nothing is committed.
    fn zeros(len: usize) -> Self {
        Self::map(
            len,
            libc::PROT_READ,
            libc::MAP_NORESERVE,
            None::<fn(usize) -> u8>,
        )
    }

    fn map(len: usize, prot: i32, extra: i32, fill: Option<impl FnMut(usize) -> u8>) -> Self {
        let region = GuardedRegion::new(len, Placement::End, prot, extra)
            .unwrap_or_else(|e| panic!("mmap of {len} guarded bytes failed: {e}"));
        let data = region.as_mut_ptr();
        if let Some(mut fill) = fill {
            for i in 0..len {
                // SAFETY: i < len, inside the writable data pages.
                unsafe { *data.add(i) = fill(i) };
            }
        }
        Self(region)
    }

    /// The first byte.
    fn data(&self) -> *mut u8 {
        self.0.as_mut_ptr()
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: the region is mapped readable for the buffer's lifetime.
        unsafe { std::slice::from_raw_parts(self.data(), self.0.len()) }
    }
}

/// Runs every variant of `v` and the model on one input; all must agree.
fn check_all(
    v: &Variants,
    buf: &GuardedBuffer,
    len: i32,
    ofs: i32,
    limit: i32,
    init: [u32; 4],
    model: impl Fn(&mut [u32; 4]) -> i32,
) {
    let mut expected_state = init;
    let expected = model(&mut expected_state);
    for (level, kernel) in &v.kernels {
        let mut state = init;
        // SAFETY: `state` has four words, `buf` is readable for its length and every
        // variant reads only within `len`, which never exceeds that unless `len` is
        // negative (then no read passes its check).
        let got = unsafe { kernel(state.as_mut_ptr(), buf.data(), len, ofs, limit) };
        assert_eq!(
            (got, state),
            (expected, expected_state),
            "bce={level} len={len} ofs={ofs} limit={limit}"
        );
    }
}

fn md5_case(buf: &GuardedBuffer, len: i32, ofs: i32, limit: i32, init: [u32; 4]) {
    check_all(md5_variants(), buf, len, ofs, limit, init, |s| {
        md5::java_compress_multi_block(s, buf.bytes(), len, ofs, limit)
    });
}

/// Offsets and limits around every boundary of a `len`-byte buffer and of `i32`.
fn interesting(len: i32) -> Vec<i32> {
    let mut v = vec![
        0,
        1,
        3,
        4,
        -1,
        -3,
        -4,
        -63,
        -64,
        -65,
        i32::MIN,
        i32::MIN + 1,
        i32::MIN + 63,
        i32::MAX,
        i32::MAX - 1,
        i32::MAX - 3,
        i32::MAX - 4,
        i32::MAX - 60,
        i32::MAX - 63,
        i32::MAX - 64,
        i32::MAX - 65,
        i32::MAX - 127,
        i32::MAX - 128,
    ];
    for d in [
        -129, -128, -127, -65, -64, -63, -62, -61, -60, -4, -3, -1, 0, 1, 64,
    ] {
        v.push(len.wrapping_add(d));
    }
    v
}

#[test]
fn md5_adversarial_boundaries() {
    let mut rng = StdRng::seed_from_u64(0x6d64_3562);
    for len in [
        0usize, 1, 3, 4, 63, 64, 65, 127, 128, 129, 191, 192, 320, 1000,
    ] {
        let buf = GuardedBuffer::new(len, |_| rng.random());
        let l = i32::try_from(len).expect("small");
        let points = interesting(l);
        for &ofs in &points {
            for &limit in &points {
                md5_case(&buf, l, ofs, limit, rng.random());
            }
        }
    }
}

#[test]
fn md5_lengths_that_are_not_lengths() {
    // Negative `len` (u32::MAX, 0x8000_0000 as i32, …): the bound clamps to 0, nothing is read.
    let buf = GuardedBuffer::new(64, |i| i as u8);
    for len in [-1, -3, -4, -64, i32::MIN, i32::MIN + 3] {
        for ofs in [0, 1, -1, i32::MAX - 63, i32::MIN] {
            for limit in [0, 64, i32::MAX, -1, i32::MIN] {
                md5_case(&buf, len, ofs, limit, md5::INITIAL_STATE);
            }
        }
    }
}

#[test]
fn md5_random_inputs() {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    for _ in 0..60 {
        let len = rng.random_range(0..5000usize);
        let buf = GuardedBuffer::new(len, |_| rng.random());
        let l = i32::try_from(len).expect("small");
        for _ in 0..40 {
            let ofs = match rng.random_range(0..4) {
                0 => rng.random(),
                1 => rng.random_range(-100..l + 100),
                2 => 64 * rng.random_range(-2..l / 64 + 2),
                _ => i32::MAX - rng.random_range(0..200),
            };
            let limit = match rng.random_range(0..4) {
                0 => rng.random(),
                1 => l - 64 + rng.random_range(-3..=3),
                2 => ofs.wrapping_add(rng.random_range(-70..l + 70)),
                _ => i32::MAX - rng.random_range(0..200),
            };
            md5_case(&buf, l, ofs, limit, rng.random());
        }
    }
}

/// `len` near `i32::MAX` with a real 2 GiB mapping (zero pages, nothing committed): blocks
/// whose `ofs + 63` overflows must fail exactly where the 16 original checks fail, after the
/// earlier blocks have been committed.
#[test]
fn md5_overflow_near_i32_max() {
    let len = usize::try_from(i32::MAX).expect("fits");
    let buf = GuardedBuffer::zeros(len);
    let l = i32::MAX;
    let mut cases = Vec::new();
    for back in [
        0, 1, 3, 4, 7, 8, 60, 61, 63, 64, 65, 67, 68, 127, 128, 129, 131, 192, 200,
    ] {
        let ofs = l - back;
        for limit in [
            i32::MAX,
            i32::MAX - 63,
            i32::MAX - 64,
            i32::MAX - 65,
            ofs,
            ofs.wrapping_add(64),
        ] {
            cases.push((ofs, limit));
        }
    }
    // Three blocks that fit exactly, then the loop test stops (the predicated path).
    cases.push((l - 3 * 64, l - 64));
    // ... and with one more allowed iteration, which wraps `ofs + 64` past i32::MAX.
    cases.push((l - 3 * 64 + 1, i32::MAX));
    for (ofs, limit) in cases {
        md5_case(&buf, l, ofs, limit, md5::INITIAL_STATE);
    }
}

#[test]
fn md5_long_run_matches_model() {
    // 1 MiB in one call: the fast path end to end.
    let mut rng = StdRng::seed_from_u64(7);
    let len = 1 << 20;
    let buf = GuardedBuffer::new(len, |_| rng.random());
    let l = i32::try_from(len).expect("fits");
    md5_case(&buf, l, 0, l - 64, md5::INITIAL_STATE);
    md5_case(&buf, l, 0, l - 63, md5::INITIAL_STATE);
    md5_case(&buf, l, 1, l - 64, md5::INITIAL_STATE);
}

fn int_sum_case(buf: &GuardedBuffer, len: i32, ofs: i32, limit: i32, init: u32) {
    let ints: Vec<i32> = buf
        .bytes()
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let init_state = [init, 0, 0, 0];
    check_all(int_sum_variants(), buf, len, ofs, limit, init_state, |s| {
        let mut h = s[0] as i32;
        let ints = &ints[..usize::try_from(len.max(0)).expect("non-negative")];
        let r = int_sum::reference_multi_block(&mut h, ints, ofs, limit);
        s[0] = h as u32;
        r
    });
}

#[test]
fn int_sum_adversarial_and_random() {
    let mut rng = StdRng::seed_from_u64(0x1a7);
    for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 100, 1024] {
        let buf = GuardedBuffer::new(4 * len, |_| rng.random());
        let l = i32::try_from(len).expect("small");
        let mut points = interesting(l);
        points.extend([
            l - 8,
            l - 9,
            l - 7,
            i32::MAX - 7,
            i32::MAX - 8,
            i32::MAX - 9,
        ]);
        for &ofs in &points {
            for &limit in &points {
                int_sum_case(&buf, l, ofs, limit, rng.random());
            }
        }
        for _ in 0..200 {
            let ofs = rng.random_range(-20..l + 20);
            let limit = rng.random_range(-20..l + 20);
            int_sum_case(&buf, l, ofs, limit, rng.random());
        }
    }
}

#[test]
fn fast_path_is_taken_and_checked_path_is_kept() {
    // The stats say what the hot loop looks like; the IR must match the claim.
    let mut func = md5::compress_multi_block();
    let stats = bce::run(&mut func, BceLevel::Predicate).expect("bce");
    assert_eq!(stats.checks_per_block_unoptimized, 16);
    assert_eq!(stats.checks_per_block, 0);
    assert_eq!(stats.loops_versioned, 1);
    assert_eq!(
        stats.checks_after, 1,
        "the checked fallback loop keeps its merged check"
    );
}

/// The harness has teeth: with the merged check removed by hand, a read one block past a
/// buffer that is one byte short must fault on the guard page. Runs in a forked child so the
/// fault does not take the test process down.
#[test]
fn guard_page_catches_a_missing_check() {
    let mut func = md5::compress_multi_block();
    bce::run(&mut func, BceLevel::Merge).expect("bce");
    let checks = bce::recognize::all_checks(&func);
    assert_eq!(checks.len(), 1);
    bce::merge::replace_with_jump(&mut func, &checks[0]);
    let broken = compile(&func);
    let buf = GuardedBuffer::new(127, |i| i as u8);
    let mut state = md5::INITIAL_STATE;
    // SAFETY: fork in a test process: the child only calls the JIT code and `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: the child reads past the buffer on purpose; the guard page stops it.
        unsafe {
            broken(state.as_mut_ptr(), buf.data(), 127, 64, 64);
            libc::_exit(0);
        }
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(
        libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSEGV,
        "without its check the kernel must fault on the guard page (status {status:#x})"
    );
    // And the intact kernels report the same input as out of bounds.
    md5_case(&buf, 127, 64, 64, state);
    state[0] ^= 1;
    md5_case(&buf, 127, 0, 64, state);
}
