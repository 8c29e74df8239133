//! `md5sum` as GNU coreutils 9.1 has it, hashing with schedlab's JIT-compiled MD5.
//!
//! `cargo run --release --example md5sum -- [OPTION]... [FILE]...` prints byte for byte what
//! `/usr/bin/md5sum` prints (stdout, stderr, exit status): the `HASH  NAME` lines with their
//! backslash escaping, `--tag`, `-z`, `-c` with its `OK`/`FAILED` lines and warnings, getopt's
//! option errors and coreutils' quoting of file names in messages. Only `--version` and the
//! footer of `--help` say what this program really is. The program is `examples/common/sum.rs`,
//! shared with `sha256sum`: a reader thread reads the files in pieces, a window of files at a
//! time, and the files of a window are hashed as concurrent streams of one [`LaneEngine`]
//! (their blocks share the SIMD lanes).

#[path = "common/sum.rs"]
mod sum;

use schedlab_digests::{Digest, LaneEngine, Md5, TieredEngine};
use std::sync::OnceLock;

/// Bytes in an MD5 block.
const MD5_BLOCK: usize = 64;

/// A hasher of the process's lane engine, whose streams hold back one piece each
/// ([`sum::pieces::PIECE`]): fed a piece of each file in turn, a round runs one piece per lane.
fn lane_hasher() -> Box<dyn sum::Hasher> {
    static ENGINE: OnceLock<LaneEngine> = OnceLock::new();
    let engine = ENGINE.get_or_init(|| {
        LaneEngine::with_tiered(
            TieredEngine::default_instance(),
            sum::pieces::PIECE / MD5_BLOCK,
        )
    });
    Box::new(engine.hasher())
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
    batch_hasher: lane_hasher,
    start_batch_jit: Md5::start_batch_jit,
};

fn main() {
    sum::main(&MD5);
}
