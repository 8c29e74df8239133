//! `md5sum` as GNU coreutils 9.1 has it, hashing with schedlab's JIT-compiled MD5.
//!
//! `cargo run --release --example md5sum -- [OPTION]... [FILE]...` prints byte for byte what
//! `/usr/bin/md5sum` prints (stdout, stderr, exit status): the `HASH  NAME` lines with their
//! backslash escaping, `--tag`, `-z`, `-c` with its `OK`/`FAILED` lines and warnings, getopt's
//! option errors and coreutils' quoting of file names in messages. Only `--version` and the
//! footer of `--help` say what this program really is. The program is `examples/common/sum.rs`,
//! shared with `sha256sum`; small files are hashed in batches with [`Md5::digest_many`].

#[path = "common/sum.rs"]
mod sum;

use schedlab_md5::{Digest, Md5};

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
    digest_many: |messages| {
        Md5::digest_many(messages)
            .into_iter()
            .map(|d| d.to_vec())
            .collect()
    },
    start_batch_jit: Md5::start_batch_jit,
};

fn main() {
    sum::main(&MD5);
}
