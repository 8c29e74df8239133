//! `SCHEDLAB_MD5_JIT=off`: the default engine never compiles, says so, and hashes right.
//! (Its own test binary: the variable is read once, when the default engine is created.)

use digest::Digest;
use schedlab_digests::{Backend, JIT_ENV, Md5};

#[test]
fn the_disabled_jit_is_reported_and_hashing_is_portable() {
    // SAFETY: the only test of this binary, run before anything reads the environment.
    unsafe { std::env::set_var(JIT_ENV, "off") };
    let data: Vec<u8> = (0..2 << 20).map(|i: usize| (i % 251) as u8).collect();
    assert_eq!(Md5::digest(&data), md5::Md5::digest(&data));
    let parts: Vec<&[u8]> = data.chunks(70_001).collect();
    for (m, got) in parts.iter().zip(Md5::digest_many(&parts)) {
        assert_eq!(got, md5::Md5::digest(m));
    }
    let expected = Backend::Failed(format!("the JIT is disabled by {JIT_ENV}=off"));
    assert_eq!(Md5::backend(), expected);
    assert_eq!(Md5::batch_backend(), expected);
    assert_eq!(Md5::wait_for_jit(), (expected.clone(), expected));
}
