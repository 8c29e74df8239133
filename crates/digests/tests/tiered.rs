//! The tiered library: correct hashes before, during and after the background compile, and a
//! JIT that cannot compile leaves a working, portable library that says why.

use digest::Digest;
use schedlab_digests::{Backend, Md5, Md5Builder};

fn messages() -> Vec<Vec<u8>> {
    (0..300usize)
        .step_by(7)
        .chain([1000, 4096, 65536 + 13])
        .map(|len| (0..len).map(|i| (i * 13 + len) as u8).collect())
        .collect()
}

#[test]
fn a_failing_jit_stays_portable_and_every_hash_is_right() {
    // An unknown strategy makes the pipeline (hence every compile of this engine) fail.
    let engine = Md5Builder::new().strategy("no-such-strategy").tiered();
    let (single, batch) = engine.wait_for_jit();
    for backend in [single, batch, engine.backend(), engine.batch_backend()] {
        match backend {
            Backend::Failed(reason) => assert!(reason.contains("no-such-strategy"), "{reason}"),
            other => panic!("expected a failed JIT, got {other:?}"),
        }
    }
    let all = messages();
    for m in &all {
        assert_eq!(engine.digest(m), md5::Md5::digest(m), "{} bytes", m.len());
    }
    let refs: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
    let many = engine.digest_many(&refs);
    for (m, got) in refs.iter().zip(many) {
        assert_eq!(got, md5::Md5::digest(m), "{} bytes in a batch", m.len());
    }
}

#[test]
fn the_default_engine_hashes_right_before_and_after_the_jit() {
    let all = messages();
    let refs: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
    // Whatever tier runs now (usually portable: little input so far).
    for m in &refs {
        assert_eq!(Md5::digest(m), md5::Md5::digest(m));
    }
    let (single, batch) = Md5::wait_for_jit();
    assert_eq!(single, Backend::Jit);
    if cfg!(target_arch = "riscv64") {
        // RV64GC has no SIMD lowering for the lane kernel: batches stay on the single-stream
        // path and the backend says why.
        assert!(
            matches!(&batch, Backend::Failed(why) if why.contains("needs SIMD")),
            "{batch:?}"
        );
    } else {
        assert_eq!(batch, Backend::Jit);
    }
    assert_eq!(Md5::backend(), Backend::Jit);
    for m in &refs {
        assert_eq!(Md5::digest(m), md5::Md5::digest(m));
    }
    for (m, got) in refs.iter().zip(Md5::digest_many(&refs)) {
        assert_eq!(got, md5::Md5::digest(m), "{} bytes in a batch", m.len());
    }
}

#[test]
fn a_hasher_that_switches_tier_mid_message_stays_right() {
    let data: Vec<u8> = (0..3 << 20).map(|i: usize| (i >> 3) as u8).collect();
    let engine = Md5Builder::new().strategy("sink-loads").tiered();
    let mut h = engine.hasher();
    // Feed in pieces while the compile starts (after the threshold) and finishes.
    for chunk in data.chunks(100_003) {
        h.update(chunk);
    }
    assert_eq!(h.finalize(), md5::Md5::digest(&data));
}
