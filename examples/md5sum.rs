//! `md5sum` as GNU coreutils 9.1 has it, hashing with schedlab's JIT-compiled MD5.
//!
//! `cargo run --release --example md5sum -- [OPTION]... [FILE]...` prints byte for byte what
//! `/usr/bin/md5sum` prints (stdout, stderr, exit status): the `HASH  NAME` lines with their
//! backslash escaping, `--tag`, `-z`, `-c` with its `OK`/`FAILED` lines and warnings, getopt's
//! option errors and coreutils' quoting of file names in messages. Only `--version` and the
//! footer of `--help` say what this program really is. The program is `examples/common/sum.rs`,
//! shared with `sha256sum`: a reader thread reads the files ahead, and each batch of small files
//! is hashed as concurrent streams of one [`LaneEngine`] (their blocks share the SIMD lanes).

#[path = "common/sum.rs"]
mod sum;

use schedlab_digests::{Digest, LaneEngine, Md5};
use std::sync::OnceLock;

/// Bytes fed to a stream per `update`, round-robin over a batch's files (the engine's
/// default hold-back: a round then runs full lanes of 256 blocks).
const PIECE: usize = 16 << 10;

/// Every message of a batch as one stream of the process's lane engine, fed round-robin.
fn digest_streams(messages: &[&[u8]]) -> Vec<Vec<u8>> {
    static ENGINE: OnceLock<LaneEngine> = OnceLock::new();
    let engine = ENGINE.get_or_init(LaneEngine::new);
    let mut hashers: Vec<Md5> = messages.iter().map(|_| engine.hasher()).collect();
    let longest = messages.iter().map(|m| m.len()).max().unwrap_or(0);
    for start in (0..longest).step_by(PIECE) {
        for (h, m) in hashers.iter_mut().zip(messages) {
            if let Some(piece) = m.get(start..m.len().min(start + PIECE)) {
                h.update(piece);
            }
        }
    }
    hashers.into_iter().map(|h| h.finalize().to_vec()).collect()
}

/// MD5 as `sum` needs it.
static MD5: sum::Algorithm = sum::Algorithm {
    program: "md5sum",
    tag: "MD5",
    digest_len: 16,
    name: "MD5",
    standard: "RFC 1321",
    version: "MD5 by schedlab's JIT-compiled compression function; output compatible with GNU \
              coreutils md5sum.",
    hasher: || Box::new(Md5::new()),
    digest_many: digest_streams,
    start_batch_jit: Md5::start_batch_jit,
};

fn main() {
    sum::main(&MD5);
}
