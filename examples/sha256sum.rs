//! `sha256sum` as GNU coreutils 9.1 has it, hashing with schedlab's JIT-compiled SHA-256
//! (`schedlab_digests::Sha256`, the `sha256` kernel).
//!
//! `cargo run --release --example sha256sum -- [OPTION]... [FILE]...` prints byte for byte what
//! `/usr/bin/sha256sum` prints (stdout, stderr, exit status), `-c`/`--check` included. The
//! program is `examples/common/sum.rs`, shared with `md5sum`; only the hash and its names
//! differ.

#[path = "common/sum.rs"]
mod sum;

use schedlab_digests::{Digest, Sha256};

/// SHA-256 as `sum` needs it.
static SHA256: sum::Algorithm = sum::Algorithm {
    program: "sha256sum",
    tag: "SHA256",
    digest_len: 32,
    name: "SHA-256",
    standard: "FIPS-180-2",
    version: "SHA-256 by schedlab's JIT-compiled compression function; output compatible with \
              GNU coreutils sha256sum.",
    hasher: || Box::new(Sha256::new()),
    // No multi-buffer SHA-256 kernel: every file has a hasher of its own.
    batch_hasher: || Box::new(Sha256::new()),
    start_batch_jit: || {},
};

fn main() {
    sum::main(&SHA256);
}
