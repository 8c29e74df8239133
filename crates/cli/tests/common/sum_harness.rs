// The differential harness of `tests/md5sum.rs` and `tests/sha256sum.rs`, included with
// `include!` after the including file defines `PROGRAM` (the example's and coreutils' program
// name) and `COREUTILS` (coreutils' binary): build the example, run a `Case` under both, compare
// stdout, stderr and status byte for byte.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The example binary, built once per test process.
fn example() -> &'static Path {
    static EXAMPLE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match EXAMPLE.get_or_init(build_example) {
        Ok(path) => path,
        Err(e) => panic!("cannot build the {PROGRAM} example: {e}"),
    }
}

fn build_example() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    // This test runs from <target-dir>/<profile-dir>/deps/.
    let profile_dir = exe.parent().and_then(Path::parent);
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args(["build", "--example", PROGRAM, "-p", "schedlab"])
        .arg("--message-format=json-render-diagnostics")
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .stderr(Stdio::inherit());
    if let Some(dir) = profile_dir {
        match dir.file_name().and_then(OsStr::to_str) {
            // The test profile's artifacts were just built for this test: reuse them.
            Some("debug") => {
                cargo.args(["--profile", "test"]);
            }
            None => {}
            Some("release") => {
                cargo.arg("--release");
            }
            Some(other) => {
                cargo.args(["--profile", other]);
            }
        }
        if let Some(target) = dir.parent().filter(|t| t.join("CACHEDIR.TAG").exists()) {
            cargo.arg("--target-dir").arg(target);
        }
    }
    let out = cargo.output().map_err(|e| format!("running cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo build failed ({})", out.status));
    }
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let is_example = msg["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "example"));
        if msg["reason"] == "compiler-artifact"
            && msg["target"]["name"] == PROGRAM
            && is_example
            && let Some(path) = msg["executable"].as_str()
        {
            return Ok(PathBuf::from(path));
        }
    }
    Err(format!("cargo reported no executable for example {PROGRAM}"))
}

/// One invocation, run under both programs.
struct Case {
    label: String,
    args: Vec<OsString>,
    stdin: Option<Vec<u8>>,
    env: Vec<(&'static str, &'static str)>,
    stdout_to_dev_full: bool,
    /// A lower soft limit on open file descriptors (`RLIMIT_NOFILE`).
    fd_limit: Option<u64>,
}

impl Case {
    fn new(label: impl Into<String>, args: &[&[u8]]) -> Self {
        Self {
            label: label.into(),
            args: args
                .iter()
                .map(|a| OsStr::from_bytes(a).to_os_string())
                .collect(),
            stdin: None,
            env: Vec::new(),
            stdout_to_dev_full: false,
            fd_limit: None,
        }
    }

    fn stdin(mut self, data: &[u8]) -> Self {
        self.stdin = Some(data.to_vec());
        self
    }

    fn env(mut self, key: &'static str, value: &'static str) -> Self {
        self.env.push((key, value));
        self
    }

    fn dev_full(mut self) -> Self {
        self.stdout_to_dev_full = true;
        self
    }

    fn fd_limit(mut self, limit: u64) -> Self {
        self.fd_limit = Some(limit);
        self
    }
}

fn run(program: &Path, dir: &Path, case: &Case) -> Output {
    let mut cmd = Command::new(program);
    // coreutils names itself after argv[0]; the example always says its own name.
    cmd.arg0(PROGRAM)
        .args(&case.args)
        .current_dir(dir)
        .env("LC_ALL", "C.UTF-8")
        .env_remove("POSIXLY_CORRECT")
        .env_remove("LANGUAGE")
        .stdin(if case.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped());
    for (key, value) in &case.env {
        cmd.env(key, value);
    }
    if let Some(limit) = case.fd_limit {
        let set_limit = move || {
            let mut rlim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: getrlimit/setrlimit only read and write `rlim`, which outlives the calls;
            // both are async-signal-safe, as code between fork and exec must be.
            if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rlim) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            rlim.rlim_cur = limit.min(rlim.rlim_max);
            // SAFETY: as above.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rlim) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        };
        // SAFETY: the closure only calls async-signal-safe functions and allocates nothing.
        unsafe {
            cmd.pre_exec(set_limit);
        }
    }
    if case.stdout_to_dev_full {
        let full = fs::OpenOptions::new().write(true).open("/dev/full");
        cmd.stdout(full.expect("open /dev/full"));
    } else {
        cmd.stdout(Stdio::piped());
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("{}: spawn {}: {e}", case.label, program.display()));
    let writer = child.stdin.take().map(|mut pipe| {
        let data = case.stdin.clone().unwrap_or_default();
        // The program may exit before reading everything; a broken pipe is fine then.
        std::thread::spawn(move || drop(pipe.write_all(&data)))
    });
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("{}: wait {}: {e}", case.label, program.display()));
    if let Some(writer) = writer {
        writer.join().expect("stdin writer thread");
    }
    out
}

/// Runs every case under both programs in `dir` (cases in parallel, they only read `dir`);
/// panics listing every difference.
fn compare(dir: &Path, cases: &[Case]) {
    assert!(
        Path::new(COREUTILS).is_file(),
        "{COREUTILS} is missing: this test compares against GNU coreutils' {PROGRAM} \
         (Debian package `coreutils`)"
    );
    let ours = example();
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get().min(8));
    let mut failures: Vec<(usize, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut found = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(case) = cases.get(i) else {
                            break found;
                        };
                        if let Some(diff) = differences(ours, dir, case) {
                            found.push((i, diff));
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("comparison thread"))
            .collect()
    });
    failures.sort();
    let report: Vec<String> = failures.into_iter().map(|(_, diff)| diff).collect();
    assert!(
        report.is_empty(),
        "{} of {} cases differ from coreutils:\n{}",
        report.len(),
        cases.len(),
        report.join("\n")
    );
}

/// How the example's run of `case` differs from coreutils', if it does.
fn differences(ours: &Path, dir: &Path, case: &Case) -> Option<String> {
    let want = run(Path::new(COREUTILS), dir, case);
    let got = run(ours, dir, case);
    let mut diffs = Vec::new();
    if got.status.code() != want.status.code() {
        diffs.push(format!(
            "  status: coreutils {:?}, example {:?}",
            want.status.code(),
            got.status.code()
        ));
    }
    for (stream, w, g) in [
        ("stdout", &want.stdout, &got.stdout),
        ("stderr", &want.stderr, &got.stderr),
    ] {
        if w != g {
            diffs.push(format!(
                "  {stream}:\n    coreutils: \"{}\"\n    example:   \"{}\"",
                w.escape_ascii(),
                g.escape_ascii()
            ));
        }
    }
    if diffs.is_empty() {
        return None;
    }
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| format!("\"{}\"", a.as_bytes().escape_ascii()))
        .collect();
    Some(format!(
        "{} (args {}):\n{}",
        case.label,
        args.join(" "),
        diffs.join("\n")
    ))
}

/// Deterministic pseudo-random bytes.
fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

fn write(dir: &Path, name: &[u8], data: &[u8]) {
    fs::write(dir.join(OsStr::from_bytes(name)), data).expect("write test file");
}

/// Boundary sizes around the 64-byte block and the 56-byte padding limit, plus 1 MiB.
const SIZES: [(&str, usize); 8] = [
    ("empty", 0),
    ("one", 1),
    ("b55", 55),
    ("b56", 56),
    ("b63", 63),
    ("b64", 64),
    ("b65", 65),
    ("mib", 1 << 20),
];

/// Names coreutils escapes in its output (`\`, newline, carriage return) or quotes in its
/// messages (blank, quote, colon, tab, non-ASCII, invalid UTF-8, leading `#`).
const ODD_NAMES: [&[u8]; 11] = [
    b"back\\slash",
    b"new\nline",
    b"cr\rname",
    b"all\\three\n\r",
    b"sp ace",
    b"quo'te",
    b"colon:x",
    b"tab\tx",
    "é".as_bytes(),
    b"bad\xffutf8",
    b"#hash",
];

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, (name, len)) in SIZES.iter().enumerate() {
        write(dir.path(), name.as_bytes(), &bytes(*len, i as u64 + 1));
    }
    for (i, name) in ODD_NAMES.iter().enumerate() {
        write(dir.path(), name, &bytes(i * 7 + 1, 100 + i as u64));
    }
    fs::create_dir(dir.path().join("subdir")).expect("mkdir");
    dir
}

fn all_files() -> Vec<&'static [u8]> {
    let mut names: Vec<&[u8]> = SIZES.iter().map(|(n, _)| n.as_bytes()).collect();
    names.extend(ODD_NAMES);
    names
}

fn with(flags: &[&'static str], names: &[&'static [u8]]) -> Vec<&'static [u8]> {
    flags
        .iter()
        .map(|f| f.as_bytes())
        .chain(names.iter().copied())
        .collect()
}


/// A case per file of [`SIZES`], each named alone.
fn size_cases() -> Vec<Case> {
    SIZES
        .iter()
        .map(|(name, _)| Case::new(format!("size {name}"), &[name.as_bytes()]))
        .collect()
}

/// A case per option set of `flag_sets`, each over every file.
fn all_files_cases(flag_sets: &[&[&'static str]]) -> Vec<Case> {
    let files = all_files();
    flag_sets
        .iter()
        .map(|flags| Case::new(format!("all files {flags:?}"), &with(flags, &files)))
        .collect()
}

/// What coreutils prints for every file of `dir` with `flags`: a list for `-c` to check.
fn coreutils_list(dir: &Path, flags: &[&[u8]]) -> Vec<u8> {
    let out = Command::new(COREUTILS)
        .args(flags.iter().map(|f| OsStr::from_bytes(f)))
        .arg("--")
        .args(all_files().iter().map(|f| OsStr::from_bytes(f)))
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("run coreutils {PROGRAM}: {e}"));
    assert!(out.status.success(), "coreutils {PROGRAM} failed");
    out.stdout
}

/// The `hex_len` hex digits of file `one`'s digest in a plain `list`.
fn digest_of_one(list: &[u8], hex_len: usize) -> String {
    let at = list
        .windows(6)
        .position(|w| w == b"  one\n")
        .expect("`one` in the list");
    String::from_utf8_lossy(&list[at - hex_len..at]).into_owned()
}
