//! The `md5sum`/`sha256sum` program of GNU coreutils 9.1, shared by `examples/md5sum.rs` and
//! `examples/sha256sum.rs`: everything but the hash function and the words that name it.
//!
//! It prints byte for byte what coreutils prints (stdout, stderr, exit status): the
//! `HASH  NAME` lines with their backslash escaping, `--tag`, `-z`, `-c` with its `OK`/`FAILED`
//! lines and warnings, getopt's option errors and coreutils' quoting of file names in messages.
//! Only `--version` and the footer of `--help` say what the program really is.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::process;

#[path = "pieces.rs"]
pub mod pieces;

/// What differs between `md5sum` and `sha256sum`.
pub struct Algorithm {
    /// The program name coreutils prints in front of every message.
    pub program: &'static str,
    /// The algorithm's name in tagged lines and messages (`MD5`, `SHA256`).
    pub tag: &'static str,
    /// Bytes in a digest.
    pub digest_len: usize,
    /// The algorithm's name in prose (`MD5`, `SHA-256`), for `--help`'s footer.
    pub name: &'static str,
    /// The document `--help` says the sums follow (`RFC 1321`, `FIPS-180-2`).
    pub standard: &'static str,
    /// `--version`'s second line.
    pub version: &'static str,
    /// A fresh incremental hasher.
    pub hasher: fn() -> Box<dyn Hasher>,
    /// A hasher for one of several files read together, fed a [`pieces::PIECE`] of each file
    /// in turn: hashers alive at the same time may share work (the SIMD lanes of one engine).
    pub batch_hasher: fn() -> Box<dyn Hasher>,
    /// Starts compiling whatever makes hashing several files fast, without waiting (may do
    /// nothing).
    pub start_batch_jit: fn(),
}

/// An incremental hash.
pub trait Hasher {
    /// Adds bytes.
    fn update(&mut self, data: &[u8]);
    /// The digest of everything added.
    fn finalize(self: Box<Self>) -> Vec<u8>;
}

impl<D: digest::Digest + 'static> Hasher for D {
    fn update(&mut self, data: &[u8]) {
        digest::Digest::update(self, data);
    }
    fn finalize(self: Box<Self>) -> Vec<u8> {
        digest::Digest::finalize(*self).to_vec()
    }
}

/// The algorithm this process runs (set once by [`main`]).
static ALGORITHM: std::sync::OnceLock<&'static Algorithm> = std::sync::OnceLock::new();

fn alg() -> &'static Algorithm {
    ALGORITHM.get().copied().unwrap_or(&UNSET)
}

/// Never used: [`main`] sets the algorithm before anything reads it.
static UNSET: Algorithm = Algorithm {
    program: "sum",
    tag: "",
    digest_len: 0,
    name: "",
    standard: "",
    version: "",
    hasher: || panic!("no algorithm set"),
    batch_hasher: || panic!("no algorithm set"),
    start_batch_jit: || {},
};

/// `--help`, as coreutils 9.1 words it for `md5sum` and `sha256sum`, with a footer saying
/// what this program really is.
fn help_text(alg: &Algorithm) -> String {
    let (program, tag, name, standard) = (alg.program, alg.tag, alg.name, alg.standard);
    let bits = alg.digest_len * 8;
    format!(
        "\
Usage: {program} [OPTION]... [FILE]...
Print or check {tag} ({bits}-bit) checksums.

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

The sums are computed as described in {standard}.
When checking, the input should be a former output of this program.
The default mode is to print a line with: checksum, a space,
a character indicating input mode ('*' for binary, ' ' for text
or where binary is insignificant), and name for each FILE.

Note: There is no difference between binary mode and text mode on GNU systems.

This {program} is an example of schedlab, hashing with its JIT-compiled {name}.
"
    )
}

/// Hex digits in a digest.
fn hex_len() -> usize {
    alg().digest_len * 2
}
/// Bytes read from a file per `update` (coreutils' `BLOCKSIZE`).
const CHUNK: usize = 32 * 1024;
/// Size of stdio's stdout buffer, flushed when full even without a newline.
const STDOUT_BUF: usize = 4096;

/// An operand between the reader thread's first word on it and its line or message.
enum Progress {
    /// Nothing heard yet.
    Waiting,
    /// Pieces arriving.
    Hashing(Box<dyn Hasher>),
    /// Hashed: its digest.
    Done(Vec<u8>),
    /// Could not be read: the error to report.
    Failed(io::Error),
    /// For this thread to read when its turn comes ([`pieces::Event::Own`]).
    Own,
}

/// The operands not printed yet, from the first one on, as the reader's events leave them.
#[derive(Default)]
struct InOrder {
    /// Index of the first operand in `progress`.
    first: usize,
    progress: VecDeque<Progress>,
}

impl InOrder {
    /// The progress of `operand`, unless it is printed already.
    fn get(&mut self, operand: usize) -> Option<&mut Progress> {
        let at = operand.checked_sub(self.first)?;
        if at >= self.progress.len() {
            self.progress.resize_with(at + 1, || Progress::Waiting);
        }
        self.progress.get_mut(at)
    }

    /// Applies the reader's `event` for `operand`; gives a piece's buffer back.
    fn apply(&mut self, operand: usize, event: pieces::Event) -> Option<pieces::Buffer> {
        let Some(progress) = self.get(operand) else {
            // Never happens: an operand is printed only after its last event.
            return match event {
                pieces::Event::Piece { buffer, .. } => Some(buffer),
                _ => None,
            };
        };
        match event {
            pieces::Event::Piece { buffer, len } => {
                if let Progress::Waiting = progress {
                    *progress = Progress::Hashing((alg().batch_hasher)());
                }
                if let Progress::Hashing(hasher) = progress {
                    hasher.update(&buffer[..len]);
                }
                return Some(buffer);
            }
            pieces::Event::End => {
                *progress = match std::mem::replace(progress, Progress::Waiting) {
                    Progress::Hashing(hasher) => Progress::Done(hasher.finalize()),
                    Progress::Waiting => Progress::Done((alg().batch_hasher)().finalize()),
                    other => other,
                }
            }
            pieces::Event::Failed(e) => *progress = Progress::Failed(e),
            pieces::Event::Own => *progress = Progress::Own,
        }
        None
    }

    /// Takes the first operand's progress if it is final (not waiting for the reader).
    fn pop_settled(&mut self) -> Option<(usize, Progress)> {
        let front = self.progress.front()?;
        if matches!(front, Progress::Waiting | Progress::Hashing(_)) {
            return None;
        }
        let progress = self.progress.pop_front()?;
        self.first += 1;
        Some((self.first - 1, progress))
    }
}

/// Runs the program for `algorithm` and exits.
pub fn main(algorithm: &'static Algorithm) {
    let _ = ALGORITHM.set(algorithm);
    restore_sigpipe();
    let args: Vec<Vec<u8>> = std::env::args_os()
        .skip(1)
        .map(OsString::into_vec)
        .collect();
    let mut ctx = Ctx::new();
    let code = ctx.run(args);
    ctx.exit(code);
}

/// Dies on a broken pipe like a C program instead of reporting `EPIPE` (Rust ignores SIGPIPE).
fn restore_sigpipe() {
    #[cfg(target_os = "linux")]
    {
        unsafe extern "C" {
            fn signal(signum: i32, handler: usize) -> usize;
        }
        const SIGPIPE: i32 = 13;
        const SIG_DFL: usize = 0;
        // SAFETY: only resets one signal's disposition to the default, before any thread exists.
        unsafe {
            signal(SIGPIPE, SIG_DFL);
        }
    }
}

/// The long options in coreutils' table order (the order of getopt's ambiguity messages).
const LONG_OPTS: [(&str, Opt); 12] = [
    ("check", Opt::Check),
    ("ignore-missing", Opt::IgnoreMissing),
    ("quiet", Opt::Quiet),
    ("status", Opt::Status),
    ("warn", Opt::Warn),
    ("strict", Opt::Strict),
    ("tag", Opt::Tag),
    ("zero", Opt::Zero),
    ("binary", Opt::Binary),
    ("text", Opt::Text),
    ("help", Opt::Help),
    ("version", Opt::Version),
];

/// One command-line option (none takes an argument).
#[derive(Clone, Copy, Debug)]
enum Opt {
    Binary,
    Check,
    Text,
    Warn,
    Zero,
    IgnoreMissing,
    Quiet,
    Status,
    Strict,
    Tag,
    Help,
    Version,
}

/// Program state: options, the emulated stdout stream and the check-mode format memory.
struct Ctx {
    /// `-b` = 1, `-t` = 0, neither = -1 (as coreutils keeps it).
    binary: i8,
    check: bool,
    tag: bool,
    zero: bool,
    status_only: bool,
    warn: bool,
    quiet: bool,
    strict: bool,
    ignore_missing: bool,
    /// Whether a check line used the reversed BSD format: unknown (-1), no (0), yes (1); like
    /// coreutils this persists across check files.
    bsd_reversed: i8,
    /// Whether the locale's charset is UTF-8 (printable UTF-8 stays unquoted in messages).
    utf8: bool,
    out: Stdout,
}

impl Ctx {
    fn new() -> Self {
        Self {
            binary: -1,
            check: false,
            tag: false,
            zero: false,
            status_only: false,
            warn: false,
            quiet: false,
            strict: false,
            ignore_missing: false,
            bsd_reversed: -1,
            utf8: locale_is_utf8(),
            out: Stdout::new(),
        }
    }

    /// Parses `args` like `getopt_long`, then hashes or checks every operand; returns the status.
    fn run(&mut self, args: Vec<Vec<u8>>) -> i32 {
        let mut operands = self.parse_args(args);
        if let Some(msg) = self.conflict() {
            self.error(msg.as_bytes(), None);
            self.usage_failure();
        }
        if self.binary < 0 {
            self.binary = 0;
        }
        if operands.is_empty() {
            operands.push(b"-".to_vec());
        }
        let mut ok = true;
        if self.check {
            for name in &operands {
                ok &= self.digest_check(name);
            }
        } else {
            ok &= self.hash_operands(&operands);
        }
        i32::from(!ok)
    }

    /// Hashes every operand and prints its line or error, in operand order; true if every
    /// file was read. With several operands a reader thread reads the regular files in pieces
    /// ([`pieces`]) while this thread hashes them, a stream per file.
    fn hash_operands(&mut self, operands: &[Vec<u8>]) -> bool {
        if operands.len() < 2 {
            return self.hash_each(operands);
        }
        let (pieces_tx, pieces_rx) = std::sync::mpsc::channel::<pieces::Message>();
        let (spare_tx, spare_rx) = std::sync::mpsc::channel::<pieces::Buffer>();
        std::thread::scope(|scope| {
            let reader = std::thread::Builder::new()
                .name("read-ahead".into())
                .spawn_scoped(scope, move || {
                    pieces::read_operands(operands, &pieces_tx, &spare_rx, alg().start_batch_jit);
                });
            if reader.is_err() {
                // No thread: read each file when its turn comes.
                return self.hash_each(operands);
            }
            let mut in_order = InOrder::default();
            let mut ok = true;
            for pieces::Message { operand, event } in pieces_rx.iter() {
                if let Some(buffer) = in_order.apply(operand, event) {
                    let _ = spare_tx.send(buffer);
                }
                ok &= self.print_settled(&mut in_order, operands);
            }
            // The reader is done; anything it left unsettled is read here.
            for progress in &mut in_order.progress {
                if matches!(progress, Progress::Waiting | Progress::Hashing(_)) {
                    *progress = Progress::Own;
                }
            }
            ok &= self.print_settled(&mut in_order, operands);
            ok & self.hash_each(&operands[in_order.first.min(operands.len())..])
        })
    }

    /// Hashes `operands` one after the other on this thread; true if every file was read.
    fn hash_each(&mut self, operands: &[Vec<u8>]) -> bool {
        let mut ok = true;
        for name in operands {
            ok &= self.hash_own(name);
        }
        ok
    }

    /// Hashes `name` on this thread and prints its line; true unless it could not be read.
    fn hash_own(&mut self, name: &[u8]) -> bool {
        match self.digest_file(name) {
            Ok(Some(digest)) => {
                self.output_line(name, &digest);
                true
            }
            Ok(None) => true,
            Err(()) => false,
        }
    }

    /// Prints the lines and messages of the operands settled at the front of `in_order`,
    /// hashing those left to this thread; true unless one of them could not be read.
    fn print_settled(&mut self, in_order: &mut InOrder, operands: &[Vec<u8>]) -> bool {
        let mut ok = true;
        while let Some((operand, progress)) = in_order.pop_settled() {
            let Some(name) = operands.get(operand) else {
                continue;
            };
            match progress {
                Progress::Done(digest) => self.output_line(name, &digest),
                Progress::Failed(e) => {
                    let quoted = quotef(name, self.utf8);
                    self.error(&quoted, Some(&e));
                    ok = false;
                }
                Progress::Own => ok &= self.hash_own(name),
                Progress::Waiting | Progress::Hashing(_) => {}
            }
        }
        ok
    }

    /// `getopt_long` with coreutils' option table: options may follow operands (unless
    /// `POSIXLY_CORRECT` is set), `--` ends them, long names may be abbreviated.
    fn parse_args(&mut self, args: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let posix = std::env::var_os("POSIXLY_CORRECT").is_some();
        let mut operands = Vec::new();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            if arg == b"--" {
                operands.extend(args.by_ref());
            } else if let Some(long) = arg.strip_prefix(b"--") {
                let opt = self.long_option(long);
                self.apply(opt);
            } else if arg.len() > 1 && arg[0] == b'-' {
                for &c in &arg[1..] {
                    let opt = match c {
                        b'b' => Opt::Binary,
                        b'c' => Opt::Check,
                        b't' => Opt::Text,
                        b'w' => Opt::Warn,
                        b'z' => Opt::Zero,
                        _ => {
                            let program = alg().program;
                            let mut msg = format!("{program}: invalid option -- '").into_bytes();
                            msg.extend_from_slice(&[c, b'\'', b'\n']);
                            write_stderr(&msg);
                            self.usage_failure();
                        }
                    };
                    self.apply(opt);
                }
            } else {
                operands.push(arg);
                if posix {
                    operands.extend(args.by_ref());
                }
            }
        }
        operands
    }

    /// Resolves `--NAME[=VALUE]` (given without the dashes) to an option or exits with
    /// getopt's message.
    fn long_option(&mut self, text: &[u8]) -> Opt {
        let (name, has_value) = match text.iter().position(|&b| b == b'=') {
            Some(eq) => (&text[..eq], true),
            None => (text, false),
        };
        let found = match LONG_OPTS.iter().find(|(n, _)| n.as_bytes() == name) {
            Some(exact) => *exact,
            None => {
                let candidates: Vec<_> = LONG_OPTS
                    .iter()
                    .filter(|(n, _)| n.as_bytes().starts_with(name))
                    .collect();
                let mut msg = format!("{}: ", alg().program).into_bytes();
                match candidates.as_slice() {
                    [one] => **one,
                    [] => {
                        msg.extend_from_slice(b"unrecognized option '--");
                        msg.extend_from_slice(text);
                        msg.extend_from_slice(b"'\n");
                        write_stderr(&msg);
                        self.usage_failure();
                    }
                    many => {
                        msg.extend_from_slice(b"option '--");
                        msg.extend_from_slice(text);
                        msg.extend_from_slice(b"' is ambiguous; possibilities:");
                        for (n, _) in many {
                            msg.extend_from_slice(format!(" '--{n}'").as_bytes());
                        }
                        msg.push(b'\n');
                        write_stderr(&msg);
                        self.usage_failure();
                    }
                }
            }
        };
        if has_value {
            let msg = format!(
                "{}: option '--{}' doesn't allow an argument\n",
                alg().program,
                found.0
            );
            write_stderr(msg.as_bytes());
            self.usage_failure();
        }
        found.1
    }

    /// Applies one option as coreutils' option loop does (`--help`/`--version` exit at once).
    fn apply(&mut self, opt: Opt) {
        match opt {
            Opt::Binary => self.binary = 1,
            Opt::Text => self.binary = 0,
            Opt::Check => self.check = true,
            Opt::Zero => self.zero = true,
            Opt::IgnoreMissing => self.ignore_missing = true,
            Opt::Strict => self.strict = true,
            Opt::Tag => {
                self.tag = true;
                self.binary = 1;
            }
            Opt::Status => (self.status_only, self.warn, self.quiet) = (true, false, false),
            Opt::Warn => (self.status_only, self.warn, self.quiet) = (false, true, false),
            Opt::Quiet => (self.status_only, self.warn, self.quiet) = (false, false, true),
            Opt::Help => {
                self.out.put(help_text(alg()).as_bytes());
                self.exit(0);
            }
            Opt::Version => {
                let text = format!(
                    "{} (schedlab) {}\n{}\n",
                    alg().program,
                    env!("CARGO_PKG_VERSION"),
                    alg().version
                );
                self.out.put(text.as_bytes());
                self.exit(0);
            }
        }
    }

    /// The first option combination coreutils rejects, in its order of checks.
    fn conflict(&self) -> Option<String> {
        let msg = if self.tag && self.binary == 0 {
            "--tag does not support --text mode"
        } else if self.zero && self.check {
            "the --zero option is not supported when verifying checksums"
        } else if self.tag && self.check {
            "the --tag option is meaningless when verifying checksums"
        } else if self.binary >= 0 && self.check {
            "the --binary and --text options are meaningless when verifying checksums"
        } else if self.check {
            return None;
        } else {
            let name = if self.ignore_missing {
                "ignore-missing"
            } else if self.status_only {
                "status"
            } else if self.warn {
                "warn"
            } else if self.quiet {
                "quiet"
            } else if self.strict {
                "strict"
            } else {
                return None;
            };
            return Some(format!(
                "the --{name} option is meaningful only when verifying checksums"
            ));
        };
        Some(msg.to_string())
    }

    /// Hashes the file `name` (`-` is stdin). `Ok(None)`: missing, and `--ignore-missing`.
    /// Errors are reported on stderr.
    fn digest_file(&mut self, name: &[u8]) -> Result<Option<Vec<u8>>, ()> {
        let result = if name == b"-" {
            digest_reader(&mut io::stdin().lock())
        } else {
            match File::open(OsStr::from_bytes(name)) {
                Ok(mut file) => digest_reader(&mut file),
                Err(e) if self.ignore_missing && e.kind() == io::ErrorKind::NotFound => {
                    return Ok(None);
                }
                Err(e) => Err(e),
            }
        };
        match result {
            Ok(digest) => Ok(Some(digest)),
            Err(e) => {
                let quoted = quotef(name, self.utf8);
                self.error(&quoted, Some(&e));
                Err(())
            }
        }
    }

    /// Prints `HASH  NAME` (or `TAG (NAME) = HASH` with `--tag`), escaping the name unless `-z`.
    fn output_line(&mut self, name: &[u8], digest: &[u8]) {
        let escape = !self.zero && problematic(name);
        let mut line = Vec::with_capacity(name.len() + 48);
        if escape {
            line.push(b'\\');
        }
        if self.tag {
            line.extend_from_slice(alg().tag.as_bytes());
            line.extend_from_slice(b" (");
            push_name(&mut line, name, escape);
            line.extend_from_slice(b") = ");
            push_hex(&mut line, digest);
        } else {
            push_hex(&mut line, digest);
            line.push(b' ');
            line.push(if self.binary == 1 { b'*' } else { b' ' });
            push_name(&mut line, name, escape);
        }
        line.push(if self.zero { 0 } else { b'\n' });
        self.out.put(&line);
    }

    /// `-c`: verifies every line of the checksum list `list_name`; true if all is well.
    fn digest_check(&mut self, list_name: &[u8]) -> bool {
        if list_name == b"-" {
            let stdin = io::stdin();
            let mut reader = stdin.lock();
            self.check_lines(b"standard input", &mut reader, true)
        } else {
            match File::open(OsStr::from_bytes(list_name)) {
                Ok(file) => self.check_lines(list_name, &mut BufReader::new(file), false),
                Err(e) => {
                    let quoted = quotef(list_name, self.utf8);
                    self.error(&quoted, Some(&e));
                    false
                }
            }
        }
    }

    /// The body of coreutils' `digest_check` over an open list.
    fn check_lines(&mut self, list_name: &[u8], reader: &mut dyn BufRead, is_stdin: bool) -> bool {
        let list_quoted = quotef(list_name, self.utf8);
        let mut misformatted = 0u64;
        let mut mismatched = 0u64;
        let mut unreadable = 0u64;
        let mut properly_formatted = false;
        let mut matched = false;
        let mut line_number = 0u64;
        let mut line = Vec::new();
        loop {
            line_number += 1;
            line.clear();
            match read_line(reader, &mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => {
                    let mut msg = list_quoted.clone();
                    msg.extend_from_slice(b": read error");
                    self.error(&msg, None);
                    return false;
                }
            }
            if line[0] == b'#' {
                continue;
            }
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.is_empty() {
                continue;
            }
            let parsed = self
                .split_3(&line)
                .filter(|entry| !(is_stdin && entry.name == b"-"));
            let Some(entry) = parsed else {
                misformatted += 1;
                if self.warn {
                    let mut msg = list_quoted.clone();
                    msg.extend_from_slice(
                        format!(
                            ": {line_number}: improperly formatted {} checksum line",
                            alg().tag
                        )
                        .as_bytes(),
                    );
                    self.error(&msg, None);
                }
                continue;
            };
            properly_formatted = true;
            let escape = !self.status_only && entry.name.contains(&b'\n');
            let mut report = Vec::new();
            if escape {
                report.push(b'\\');
            }
            push_name(&mut report, &entry.name, escape);
            match self.digest_file(&entry.name) {
                Err(()) => {
                    unreadable += 1;
                    if !self.status_only {
                        report.extend_from_slice(b": FAILED open or read\n");
                        self.out.put(&report);
                    }
                }
                Ok(None) => {}
                Ok(Some(digest)) => {
                    let good = hex_equal(&entry.hex, &digest);
                    if good {
                        matched = true;
                    } else {
                        mismatched += 1;
                    }
                    if !self.status_only && (!good || !self.quiet) {
                        let verdict: &[u8] = if good { b": OK\n" } else { b": FAILED\n" };
                        report.extend_from_slice(verdict);
                        self.out.put(&report);
                    }
                }
            }
        }

        if !properly_formatted {
            let mut msg = list_quoted;
            msg.extend_from_slice(b": no properly formatted checksum lines found");
            self.error(&msg, None);
        } else if !self.status_only {
            let plural = |n: u64, one: &str, many: &str| {
                format!("WARNING: {n} {}", if n == 1 { one } else { many })
            };
            if misformatted != 0 {
                let msg = plural(
                    misformatted,
                    "line is improperly formatted",
                    "lines are improperly formatted",
                );
                self.error(msg.as_bytes(), None);
            }
            if unreadable != 0 {
                let msg = plural(
                    unreadable,
                    "listed file could not be read",
                    "listed files could not be read",
                );
                self.error(msg.as_bytes(), None);
            }
            if mismatched != 0 {
                let msg = plural(
                    mismatched,
                    "computed checksum did NOT match",
                    "computed checksums did NOT match",
                );
                self.error(msg.as_bytes(), None);
            }
            if self.ignore_missing && !matched {
                let mut msg = list_quoted;
                msg.extend_from_slice(b": no file was verified");
                self.error(&msg, None);
            }
        }
        properly_formatted
            && matched
            && mismatched == 0
            && unreadable == 0
            && (!self.strict || misformatted == 0)
    }

    /// Splits a checksum line (without its line end) into digest and file name, accepting the
    /// `HASH  NAME`, `HASH *NAME`, reversed BSD `HASH NAME` and tagged `TAG (NAME) = HASH`
    /// forms, with a leading backslash announcing an escaped name; `None` if malformed.
    fn split_3(&mut self, s: &[u8]) -> Option<Entry> {
        // C reads past the end of the line into its terminating NUL.
        let at = |i: usize| s.get(i).copied().unwrap_or(0);
        let mut i = 0;
        while is_white(at(i)) {
            i += 1;
        }
        let escaped = at(i) == b'\\';
        if escaped {
            i += 1;
        }
        let tag = alg().tag.as_bytes();
        if s[i..].starts_with(tag) {
            i += tag.len();
            if at(i) == b' ' {
                i += 1;
            }
            return if at(i) == b'(' {
                bsd_split_3(&s[i + 1..], escaped)
            } else {
                None
            };
        }
        // Shortest checksum line: digest, one blank, a one-byte name.
        if s.len() - i < hex_len() + 2 + usize::from(at(i) == b'\\') {
            return None;
        }
        let hex = &s[i..i + hex_len()];
        i += hex_len();
        if !is_white(at(i)) || !hex.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        i += 1;
        if s.len() - i == 1 || (at(i) != b' ' && at(i) != b'*') {
            // Reversed BSD format; never mixed with the standard one.
            if self.bsd_reversed == 0 {
                return None;
            }
            self.bsd_reversed = 1;
        } else if self.bsd_reversed != 1 {
            self.bsd_reversed = 0;
            i += 1;
        }
        let name = file_name(&s[i..], escaped)?;
        Some(Entry {
            hex: hex.to_vec(),
            name,
        })
    }

    /// Reports `PROGRAM: MSG[: strerror]` on stderr after flushing stdout, as `error()` does.
    fn error(&mut self, msg: &[u8], err: Option<&io::Error>) {
        self.out.flush();
        let mut line = format!("{}: ", alg().program).into_bytes();
        line.extend_from_slice(msg);
        if let Some(e) = err {
            line.extend_from_slice(b": ");
            line.extend_from_slice(strerror(e).as_bytes());
        }
        line.push(b'\n');
        write_stderr(&line);
    }

    /// `usage(EXIT_FAILURE)`.
    fn usage_failure(&mut self) -> ! {
        let program = alg().program;
        write_stderr(format!("Try '{program} --help' for more information.\n").as_bytes());
        self.exit(1);
    }

    /// Exits with `code` after gnulib's `close_stdout`: a failed write to stdout turns into
    /// `PROGRAM: write error` and status 1.
    fn exit(&mut self, code: i32) -> ! {
        let pending = self.out.has_pending();
        let failed_before = self.out.failed;
        let close_error = if pending { self.out.flush() } else { None };
        if failed_before || close_error.is_some() {
            let mut msg = format!("{}: write error", alg().program).into_bytes();
            if let Some(e) = close_error {
                msg.extend_from_slice(format!(": {}", strerror(&e)).as_bytes());
            }
            msg.push(b'\n');
            write_stderr(&msg);
            process::exit(1);
        }
        process::exit(code);
    }
}

/// A parsed checksum line.
struct Entry {
    /// The 32 hex digits, either case.
    hex: Vec<u8>,
    /// The unescaped file name.
    name: Vec<u8>,
}

/// The tagged form after `TAG (` or `TAG(`: `NAME) = HASH`.
fn bsd_split_3(s: &[u8], escaped: bool) -> Option<Entry> {
    let close = s.iter().rposition(|&b| b == b')')?;
    let name = file_name(&s[..close], escaped)?;
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut i = close + 1;
    while is_white(at(i)) {
        i += 1;
    }
    if at(i) != b'=' {
        return None;
    }
    i += 1;
    while is_white(at(i)) {
        i += 1;
    }
    // Exactly 32 hex digits, then the end of the (C) string.
    let hex = s.get(i..i + hex_len())?;
    if !hex.iter().all(u8::is_ascii_hexdigit) || at(i + hex_len()) != 0 {
        return None;
    }
    Some(Entry {
        hex: hex.to_vec(),
        name,
    })
}

/// The file name of a check line: unescaped if the line started with `\`, else up to the
/// first NUL (C string semantics).
fn file_name(raw: &[u8], escaped: bool) -> Option<Vec<u8>> {
    if !escaped {
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        return Some(raw[..end].to_vec());
    }
    let mut name = Vec::with_capacity(raw.len());
    let mut bytes = raw.iter();
    while let Some(&b) = bytes.next() {
        match b {
            b'\\' => match bytes.next()? {
                b'n' => name.push(b'\n'),
                b'r' => name.push(b'\r'),
                b'\\' => name.push(b'\\'),
                _ => return None,
            },
            0 => return None,
            _ => name.push(b),
        }
    }
    Some(name)
}

fn is_white(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Whether an output name needs the leading-backslash escaping.
fn problematic(name: &[u8]) -> bool {
    name.iter().any(|&b| matches!(b, b'\\' | b'\n' | b'\r'))
}

/// Appends `name`, with `\\`, `\n` and `\r` escapes if `escape`.
fn push_name(out: &mut Vec<u8>, name: &[u8], escape: bool) {
    if !escape {
        out.extend_from_slice(name);
        return;
    }
    for &b in name {
        match b {
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            _ => out.push(b),
        }
    }
}

fn push_hex(out: &mut Vec<u8>, digest: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for &b in digest {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 15)]);
    }
}

/// Case-insensitive comparison of a listed digest with a computed one.
fn hex_equal(hex: &[u8], digest: &[u8]) -> bool {
    let mut expected = Vec::with_capacity(hex_len());
    push_hex(&mut expected, digest);
    hex.eq_ignore_ascii_case(&expected)
}

/// Hashes everything `reader` yields, `CHUNK` bytes at a time.
fn digest_reader(reader: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut hasher = (alg().hasher)();
    let mut buf = vec![0u8; CHUNK];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(hasher.finalize()),
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// `getline`: one line including its `\n`, however long; `Ok(0)` at end of input.
fn read_line(reader: &mut dyn BufRead, line: &mut Vec<u8>) -> io::Result<usize> {
    loop {
        match reader.read_until(b'\n', line) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// The C library's message for `e`, without Rust's ` (os error N)` suffix.
fn strerror(e: &io::Error) -> String {
    let text = e.to_string();
    match (e.raw_os_error(), text.rfind(" (os error ")) {
        (Some(_), Some(cut)) => text[..cut].to_string(),
        _ => text,
    }
}

fn write_stderr(bytes: &[u8]) {
    // Nothing sensible is left to do if stderr itself fails.
    let _ = io::stderr().lock().write_all(bytes);
}

/// Whether the locale (`LC_ALL`, `LC_CTYPE`, `LANG`, first one set) uses UTF-8.
fn locale_is_utf8() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty())
        .is_some_and(|v| {
            let v = v.to_string_lossy().to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

/// stdout as a line-buffered C stream: flushed at each newline, when full, and before every
/// message on stderr; a failed flush drops the buffer and is remembered for `close_stdout`.
struct Stdout {
    buf: Vec<u8>,
    sink: io::Result<File>,
    failed: bool,
}

impl Stdout {
    fn new() -> Self {
        let sink = io::stdout().as_fd().try_clone_to_owned().map(File::from);
        Self {
            buf: Vec::new(),
            sink,
            failed: false,
        }
    }

    fn put(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        if bytes.contains(&b'\n') || self.buf.len() >= STDOUT_BUF {
            self.flush();
        }
    }

    fn has_pending(&self) -> bool {
        !self.buf.is_empty()
    }

    /// Writes out the buffer; returns the error if that failed.
    fn flush(&mut self) -> Option<io::Error> {
        if self.buf.is_empty() {
            return None;
        }
        let result = match &mut self.sink {
            Ok(file) => file.write_all(&self.buf),
            Err(e) => Err(e
                .raw_os_error()
                .map_or_else(|| io::Error::from(e.kind()), io::Error::from_raw_os_error)),
        };
        self.buf.clear();
        let e = result.err()?;
        self.failed = true;
        Some(e)
    }
}

/// gnulib's `quotef`: shell-escape quoting of a file name for messages (`':'` quoted too).
fn quotef(name: &[u8], utf8: bool) -> Vec<u8> {
    let units = units(name, utf8);
    if !name.is_empty() && units.iter().all(|u| !u.class.forces_quotes(u.first)) {
        return name.to_vec();
    }
    let single_quote = units.iter().any(|u| u.class == Class::SingleQuote);
    if single_quote
        && units
            .iter()
            .all(|u| u.class.c_compatible(u.first, name.len()))
    {
        let mut out = vec![b'"'];
        out.extend_from_slice(name);
        out.push(b'"');
        return out;
    }
    let mut out = vec![b'\''];
    let mut in_dollar = false;
    for u in &units {
        match u.class {
            Class::Escape(letter) => {
                if !in_dollar {
                    out.extend_from_slice(b"'$'");
                    in_dollar = true;
                }
                out.extend_from_slice(&[b'\\', letter]);
            }
            Class::Unprintable => {
                for &b in u.bytes {
                    if !in_dollar {
                        out.extend_from_slice(b"'$'");
                        in_dollar = true;
                    }
                    out.extend_from_slice(&[b'\\', b'0' + (b >> 6), b'0' + ((b >> 3) & 7)]);
                    out.push(b'0' + (b & 7));
                }
            }
            Class::SingleQuote => {
                out.extend_from_slice(b"'\\''");
                in_dollar = false;
            }
            _ => {
                if in_dollar {
                    out.extend_from_slice(b"''");
                    in_dollar = false;
                }
                out.extend_from_slice(u.bytes);
            }
        }
    }
    out.push(b'\'');
    out
}

/// One character of a name as gnulib's quoting sees it.
struct Unit<'a> {
    bytes: &'a [u8],
    class: Class,
    /// Whether this is the first character.
    first: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    /// Letters, digits and `%+,-./]_@`, or printable non-ASCII: never quoted.
    Plain,
    /// `:` (the colon style quotes it).
    Colon,
    /// A blank.
    Space,
    /// `#` or `~`: special only as the first character.
    HashTilde,
    /// `{` or `}`: special only as the whole name.
    Brace,
    /// `'`.
    SingleQuote,
    /// Other shell metacharacters, `?` and `\`.
    Special,
    /// A control character written as `\a`, `\b`, `\t`, `\n`, `\v`, `\f`, `\r`.
    Escape(u8),
    /// Anything else unprintable, written as octal escapes.
    Unprintable,
}

impl Class {
    /// Whether this character makes the name need quotes.
    fn forces_quotes(self, first: bool) -> bool {
        match self {
            Class::Plain | Class::Brace => false,
            Class::HashTilde => first,
            _ => true,
        }
    }

    /// Whether the name could be quoted with `"..."` instead (only tried if it contains `'`).
    fn c_compatible(self, first: bool, name_len: usize) -> bool {
        match self {
            Class::Plain | Class::Colon | Class::Space | Class::SingleQuote => true,
            Class::HashTilde => first,
            Class::Brace => name_len == 1,
            _ => false,
        }
    }
}

/// Splits `name` into characters: bytes, or UTF-8 sequences in a UTF-8 locale.
fn units(name: &[u8], utf8: bool) -> Vec<Unit<'_>> {
    let mut units = Vec::new();
    let mut i = 0;
    while i < name.len() {
        let b = name[i];
        let (len, class) = if b.is_ascii() {
            let class = match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => Class::Plain,
                b'%' | b'+' | b',' | b'-' | b'.' | b'/' | b']' | b'_' | b'@' => Class::Plain,
                b':' => Class::Colon,
                b' ' => Class::Space,
                b'#' | b'~' => Class::HashTilde,
                b'{' | b'}' if name.len() == 1 => Class::HashTilde,
                b'{' | b'}' => Class::Brace,
                b'\'' => Class::SingleQuote,
                b'!' | b'"' | b'$' | b'&' | b'(' | b')' | b'*' | b';' | b'<' | b'=' | b'>'
                | b'[' | b'^' | b'`' | b'|' | b'?' | b'\\' => Class::Special,
                0x07 => Class::Escape(b'a'),
                0x08 => Class::Escape(b'b'),
                b'\t' => Class::Escape(b't'),
                b'\n' => Class::Escape(b'n'),
                0x0b => Class::Escape(b'v'),
                0x0c => Class::Escape(b'f'),
                b'\r' => Class::Escape(b'r'),
                _ => Class::Unprintable,
            };
            (1, class)
        } else if utf8 {
            let end = name.len().min(i + 4);
            let decoded = match std::str::from_utf8(&name[i..end]) {
                Ok(s) => s.chars().next(),
                Err(e) if e.valid_up_to() > 0 => std::str::from_utf8(&name[i..i + e.valid_up_to()])
                    .ok()
                    .and_then(|s| s.chars().next()),
                Err(_) => None,
            };
            match decoded {
                Some(c) if printable(c) => (c.len_utf8(), Class::Plain),
                Some(c) => (c.len_utf8(), Class::Unprintable),
                None => (1, Class::Unprintable),
            }
        } else {
            (1, Class::Unprintable)
        };
        units.push(Unit {
            bytes: &name[i..i + len],
            class,
            first: i == 0,
        });
        i += len;
    }
    units
}

/// Approximates glibc's `iswprint` in C.UTF-8 for non-ASCII characters.
fn printable(c: char) -> bool {
    let code = u32::from(c);
    let noncharacter = (0xFDD0..=0xFDEF).contains(&code) || code & 0xFFFE == 0xFFFE;
    !(c.is_control() || c == '\u{2028}' || c == '\u{2029}' || noncharacter)
}
