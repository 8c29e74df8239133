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
    help: HELP,
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

/// `md5sum --help`, as coreutils 9.1 words it.
const HELP: &str = "\
Usage: md5sum [OPTION]... [FILE]...
Print or check MD5 (128-bit) checksums.

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

The sums are computed as described in RFC 1321.
When checking, the input should be a former output of this program.
The default mode is to print a line with: checksum, a space,
a character indicating input mode ('*' for binary, ' ' for text
or where binary is insignificant), and name for each FILE.

Note: There is no difference between binary mode and text mode on GNU systems.

This md5sum is an example of schedlab, hashing with its JIT-compiled MD5.
";
