//! RFC 1321 appendix A.5 test suite through the `digest` API.

use schedlab_digests::{Digest, Md5};
use schedlab_kernels::md5::RFC1321_SUITE as SUITE;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn one_shot_digest_matches_the_rfc() {
    for (input, expected) in SUITE {
        assert_eq!(
            hex(&Md5::digest(input.as_bytes())),
            expected,
            "MD5({input:?})"
        );
    }
}

#[test]
fn incremental_update_reset_and_clone_match_the_rfc() {
    for (input, expected) in SUITE {
        let mut h = Md5::new();
        for byte in input.as_bytes() {
            h.update([*byte]);
        }
        let copy = h.clone();
        assert_eq!(
            hex(&h.finalize_reset()),
            expected,
            "byte-wise MD5({input:?})"
        );
        assert_eq!(hex(&copy.finalize()), expected, "cloned MD5({input:?})");
        h.update(input.as_bytes());
        assert_eq!(hex(&h.finalize()), expected, "MD5({input:?}) after reset");
    }
}

#[test]
fn default_is_a_fresh_hasher() {
    let h = Md5::default();
    assert_eq!(hex(&h.finalize()), SUITE[0].1);
}
