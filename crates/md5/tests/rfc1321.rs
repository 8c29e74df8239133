//! RFC 1321 appendix A.5 test suite through the `digest` API.

use schedlab_md5::{Digest, Md5};

const SUITE: [(&str, &str); 7] = [
    ("", "d41d8cd98f00b204e9800998ecf8427e"),
    ("a", "0cc175b9c0f1b6a831c399e269772661"),
    ("abc", "900150983cd24fb0d6963f7d28e17f72"),
    ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
    (
        "abcdefghijklmnopqrstuvwxyz",
        "c3fcd3d76192e4007dfb496cca67e13b",
    ),
    (
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "d174ab98d277d9f5a5611c2c9f419d9f",
    ),
    (
        "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
        "57edf4a22be3c955ac49da2e2107b67a",
    ),
];

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
