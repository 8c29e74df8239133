//! `sha256sum` as GNU coreutils 9.1 has it, hashing with schedlab's JIT-compiled SHA-256
//! (`schedlab_md5::Sha256`, the `sha256` kernel).
//!
//! `cargo run --release --example sha256sum -- [OPTION]... [FILE]...` prints byte for byte what
//! `/usr/bin/sha256sum` prints (stdout, stderr, exit status), `-c`/`--check` included. The
//! program is `examples/common/sum.rs`, shared with `md5sum`; only the hash and its names
//! differ.

#[path = "common/sum.rs"]
mod sum;

use schedlab_md5::{Digest, Sha256};

/// SHA-256 as `sum` needs it.
static SHA256: sum::Algorithm = sum::Algorithm {
    program: "sha256sum",
    tag: "SHA256",
    digest_len: 32,
    help: HELP,
    version: "SHA-256 by schedlab's JIT-compiled compression function; output compatible with \
              GNU coreutils sha256sum.",
    hasher: || Box::new(Sha256::new()),
    // No multi-buffer SHA-256 kernel: a batch is hashed one message after the other.
    digest_many: |messages| {
        messages
            .iter()
            .map(|m| Sha256::digest(m).to_vec())
            .collect()
    },
    start_batch_jit: || {},
};

fn main() {
    sum::main(&SHA256);
}

/// `sha256sum --help`, as coreutils 9.1 words it.
const HELP: &str = "\
Usage: sha256sum [OPTION]... [FILE]...
Print or check SHA256 (256-bit) checksums.

With no FILE, or when FILE is -, read standard input.
  -b, --binary          read in binary mode
  -c, --check           read checksums from the FILEs and check them
      --tag             create a BSD-style checksum
  -t, --text            read in text mode (default)
  -z, --zero            end each output line with NUL, not newline,
                          and disable file name escaping

The following five options are useful only when verifying checksums:
      --ignore-missing  don't fail or report status for missing files
      --quiet           don't print OK for each successfully verified file
      --status          don't output anything, status code shows success
      --strict          exit non-zero for improperly formatted checksum lines
  -w, --warn            warn about improperly formatted checksum lines

      --help        display this help and exit
      --version     output version information and exit

The sums are computed as described in FIPS-180-2.
When checking, the input should be a former output of this program.
The default mode is to print a line with: checksum, a space,
a character indicating input mode ('*' for binary, ' ' for text
or where binary is insignificant), and name for each FILE.

Note: There is no difference between binary mode and text mode on GNU systems.

This sha256sum is an example of schedlab, hashing with its JIT-compiled SHA-256.
";
