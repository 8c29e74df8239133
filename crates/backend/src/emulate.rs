//! Executing a kernel's machine code for any target: the host runs it in-process through the
//! JIT; foreign code is linked with a small C harness by Debian's cross compiler
//! (`<arch>-linux-gnu-gcc -static -O1`) and run under `qemu-<arch>`, called explicitly (no
//! binfmt needed).
//!
//! A harness is one C file in `crates/backend/harness/` that reads one test case per stdin
//! line and prints one result line per case (the protocol is documented at the top of
//! `md5_harness.c`). A new kernel family adds a harness file, a [`Harness`] constant, and a
//! typed wrapper like [`run_md5_cases`] around [`run_harness`].

use crate::compile::CompileError;
use crate::jit::{JitError, JitFunction};
use crate::object::{ObjectError, ObjectFile, emit_object};
use crate::target::Target;
use cranelift_codegen::ir::Function;
use schedlab_kernels::OUT_OF_BOUNDS;
use schedlab_kernels::md5::reference_compress;
use std::fmt::{self, Write as _};
use std::io::{Read, Write};
use std::path::PathBuf;

pub use crate::tools::{MissingProgram, find_program};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one harness run may take before it is killed.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The programs that build and run code for one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    /// The target.
    pub target: Target,
    /// The C compiler that links a harness (`cc` on the host, else `<arch>-linux-gnu-gcc`).
    pub cc: PathBuf,
    /// The user-mode emulator (`qemu-<arch>`); `None` when the code runs natively.
    pub qemu: Option<PathBuf>,
}

/// The tools a target needs that are missing, with the packages that provide them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct MissingTool {
    /// The target that cannot be run.
    pub target: Target,
    /// What is missing.
    pub missing: Vec<MissingProgram>,
}

impl MissingTool {
    /// The Debian packages to install, without duplicates.
    pub fn packages(&self) -> Vec<&str> {
        let mut packages: Vec<&str> = Vec::new();
        for m in &self.missing {
            if !packages.contains(&m.package.as_str()) {
                packages.push(&m.package);
            }
        }
        packages
    }

    fn message(&self) -> String {
        let programs: Vec<String> = self
            .missing
            .iter()
            .map(|m| format!("`{}` (Debian package `{}`)", m.program, m.package))
            .collect();
        format!(
            "cannot run {} code: {} not found on PATH; install with `apt-get install -y {}`",
            self.target,
            programs.join(" and "),
            self.packages().join(" ")
        )
    }
}

/// Why machine code could not be run or its output not understood.
#[derive(Debug, thiserror::Error)]
pub enum EmulateError {
    /// A compiler or emulator is not installed.
    #[error(transparent)]
    MissingTool(#[from] MissingTool),
    /// Compiling for the target failed.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// Compiling for the host JIT failed.
    #[error(transparent)]
    Jit(#[from] JitError),
    /// Writing the object file failed.
    #[error(transparent)]
    Object(#[from] ObjectError),
    /// A test case is inconsistent.
    #[error("case {index}: {message}")]
    BadCase {
        /// Position of the case.
        index: usize,
        /// What is wrong with it.
        message: String,
    },
    /// Temporary files or a child process could not be handled.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Linking the harness failed.
    #[error("linking `{harness}` for {target} with `{cc}` failed: {hint}{stderr}")]
    Link {
        /// What to install, when the linker's messages show a missing C library (else empty).
        hint: String,
        /// The target.
        target: Target,
        /// The harness.
        harness: String,
        /// The compiler used.
        cc: String,
        /// The compiler's messages.
        stderr: String,
    },
    /// The harness exited unsuccessfully (crash, signal, rejected input) or timed out.
    #[error("`{harness}` on {target} failed ({status}):\n{stderr}")]
    Run {
        /// The target.
        target: Target,
        /// The harness.
        harness: String,
        /// Exit status, signal, or "timed out".
        status: String,
        /// What the program printed on stderr.
        stderr: String,
    },
    /// The harness printed something the caller could not parse.
    #[error("`{harness}` on {target}: unexpected output line {line}: {text:?}")]
    Output {
        /// The target.
        target: Target,
        /// The harness.
        harness: String,
        /// 1-based output line (0: a line is missing).
        line: usize,
        /// The text found.
        text: String,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> EmulateError {
    let what = what.into();
    move |source| EmulateError::Io { what, source }
}

/// A C test harness for one kernel family.
#[derive(Clone, Copy, Debug)]
pub struct Harness {
    /// File stem, used in messages and for the temporary source.
    pub name: &'static str,
    /// The C source.
    pub source: &'static str,
}

/// The MD5 multi-block harness (`harness/md5_harness.c`).
pub const MD5_HARNESS: Harness = Harness {
    name: "md5_harness",
    source: include_str!("../harness/md5_harness.c"),
};

/// The GNU triple prefix of Debian's cross compiler for `target`.
fn gnu_prefix(target: Target) -> &'static str {
    match target {
        Target::X86_64 => "x86_64-linux-gnu",
        Target::Aarch64 => "aarch64-linux-gnu",
        Target::S390x => "s390x-linux-gnu",
        Target::Riscv64 => "riscv64-linux-gnu",
    }
}

/// The cross compiler, emulator and their Debian packages for `target` when it is foreign.
fn cross_programs(target: Target) -> [(String, String); 2] {
    let prefix = gnu_prefix(target);
    let qemu = match target {
        Target::X86_64 => "qemu-x86_64",
        Target::Aarch64 => "qemu-aarch64",
        Target::S390x => "qemu-s390x",
        Target::Riscv64 => "qemu-riscv64",
    };
    [
        (
            format!("{prefix}-gcc"),
            format!("gcc-{}", prefix.replace('_', "-")),
        ),
        (qemu.to_string(), "qemu-user".to_string()),
    ]
}

/// The Debian package with the static C library the harness links against for `target`.
pub fn c_library_package(target: Target) -> String {
    if target.is_host() {
        return "libc6-dev".to_string();
    }
    let debian_arch = match target {
        Target::X86_64 => "amd64",
        Target::Aarch64 => "arm64",
        Target::S390x => "s390x",
        Target::Riscv64 => "riscv64",
    };
    format!("libc6-dev-{debian_arch}-cross")
}

/// Whether `cc` can find a static C library: `cc -print-file-name=libc.a` prints a path only
/// when the file exists (GCC prints the bare name otherwise).
fn has_static_libc(cc: &std::path::Path) -> bool {
    Command::new(cc)
        .arg("-print-file-name=libc.a")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        .is_some_and(|path| path.is_absolute() && path.is_file())
}

/// Which compiler and emulator run `target`'s code here, or which Debian packages are missing.
///
/// On the host the harness is linked with the native `cc` (or `gcc`) and run directly. The
/// compiler counts as usable only when it finds a static C library (Debian's cross gcc only
/// *recommends* `libc6-dev-<arch>-cross`).
pub fn toolchain_status(target: Target) -> Result<Toolchain, MissingTool> {
    let (cc_name, cc_pkg, qemu) = if target.is_host() {
        let cc_name = if find_program("cc").is_some() {
            "cc"
        } else {
            "gcc"
        };
        (cc_name.to_string(), "gcc".to_string(), None)
    } else {
        let [(cc_name, cc_pkg), qemu] = cross_programs(target);
        (cc_name, cc_pkg, Some(qemu))
    };
    let mut missing = Vec::new();
    let cc = find_program(&cc_name);
    match &cc {
        None => missing.push(MissingProgram {
            program: cc_name,
            package: cc_pkg,
        }),
        Some(cc) if !has_static_libc(cc) => missing.push(MissingProgram {
            program: format!("the static C library for {target} (libc.a, crt1.o)"),
            package: c_library_package(target),
        }),
        Some(_) => {}
    }
    let qemu = match qemu {
        None => None,
        Some((qemu_name, qemu_pkg)) => {
            let found = find_program(&qemu_name);
            if found.is_none() {
                missing.push(MissingProgram {
                    program: qemu_name,
                    package: qemu_pkg,
                });
            }
            found
        }
    };
    match cc {
        Some(cc) if missing.is_empty() => Ok(Toolchain { target, cc, qemu }),
        _ => Err(MissingTool { target, missing }),
    }
}

/// What to install when a link failed because the target's C library is missing.
fn link_hint(target: Target, stderr: &str) -> String {
    let libc_missing = ["crt1.o", "crti.o", "cannot find -lc", "stdio.h", "stdlib.h"]
        .iter()
        .any(|needle| stderr.contains(needle));
    if libc_missing {
        format!(
            "the C library for {target} is missing: install it with `apt-get install -y {}` \
             (scripts/probe-tools installs everything the tests use)\n",
            c_library_package(target)
        )
    } else {
        String::new()
    }
}

/// Links `object` with `harness` for the object's target, feeds it `input` on stdin and returns
/// its stdout. The harness's `KERNEL` macro is set to the object's symbol.
pub fn run_harness(
    object: &ObjectFile,
    harness: &Harness,
    input: &str,
) -> Result<String, EmulateError> {
    run_harness_source(object, harness.name, harness.source, input)
}

/// [`run_harness`] with a harness source built at run time (the generic executor's generated
/// C file, [`crate::exec`]); `name` is used for messages and the temporary file.
pub fn run_harness_source(
    object: &ObjectFile,
    name: &str,
    source_text: &str,
    input: &str,
) -> Result<String, EmulateError> {
    let target = object.target;
    let tools = toolchain_status(target)?;
    let dir = tempfile::Builder::new()
        .prefix("schedlab-emulate-")
        .tempdir()
        .map_err(io_err("creating a temporary directory"))?;
    let source = dir.path().join(format!("{}.c", name));
    let obj = dir.path().join(format!("{}.o", object.symbol));
    let exe = dir.path().join(format!("{}-{}", name, target));
    std::fs::write(&source, source_text).map_err(io_err("writing the harness source"))?;
    std::fs::write(&obj, &object.bytes).map_err(io_err("writing the object file"))?;

    let link = Command::new(&tools.cc)
        .args(["-static", "-O1", "-w"])
        .arg(format!("-DKERNEL={}", object.symbol))
        .arg("-o")
        .arg(&exe)
        .arg(&source)
        .arg(&obj)
        .arg("-lm")
        .output()
        .map_err(io_err(format!("starting {}", tools.cc.display())))?;
    if !link.status.success() {
        let stderr = String::from_utf8_lossy(&link.stderr).into_owned();
        return Err(EmulateError::Link {
            hint: link_hint(target, &stderr),
            target,
            harness: name.to_string(),
            cc: tools.cc.display().to_string(),
            stderr,
        });
    }

    let mut cmd = match &tools.qemu {
        Some(qemu) => {
            let mut c = Command::new(qemu);
            c.arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    let (status, stdout, stderr) = run_with_timeout(&mut cmd, input.as_bytes(), RUN_TIMEOUT)
        .map_err(io_err(format!("running {} for {target}", name)))?;
    match status {
        Some(s) if s.success() => Ok(String::from_utf8_lossy(&stdout).into_owned()),
        other => Err(EmulateError::Run {
            target,
            harness: name.to_string(),
            status: other.map_or_else(|| "timed out".to_string(), |s| s.to_string()),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        }),
    }
}

/// Runs `cmd` with `input` on stdin; `None` status means it was killed after `timeout`.
fn run_with_timeout(
    cmd: &mut Command,
    input: &[u8],
    timeout: Duration,
) -> std::io::Result<(Option<std::process::ExitStatus>, Vec<u8>, Vec<u8>)> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            // A child that exits early closes the pipe; its status tells what happened.
            let _ = s.write_all(&input);
        }
    });
    let mut out_pipe = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(p) = out_pipe.as_mut() {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    });
    let mut err_pipe = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() > timeout {
            child.kill()?;
            child.wait()?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = writer.join();
    let stdout = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    Ok((status, stdout, stderr))
}

/// One call of the MD5 kernel: `md5_compress_multi_block(state, buf, len, ofs, limit)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Md5Case {
    /// The chaining value A, B, C, D before the call.
    pub state: [u32; 4],
    /// The buffer's bytes (the allocation is exactly this long).
    pub buf: Vec<u8>,
    /// The Java array length the kernel is told; at most `buf.len()`.
    pub len: i32,
    /// Offset of the first block.
    pub ofs: i32,
    /// Blocks start at `ofs, ofs + 64, …` while `<= limit`.
    pub limit: i32,
}

impl Md5Case {
    /// A case over all of `buf` (`len = buf.len()`), compressing every whole block from `ofs`.
    pub fn whole_blocks(state: [u32; 4], buf: Vec<u8>, ofs: i32) -> Self {
        let len = i32::try_from(buf.len()).unwrap_or(i32::MAX);
        let limit = len - 64;
        Md5Case {
            state,
            buf,
            len,
            ofs,
            limit,
        }
    }

    /// What the Java code computes: [`reference_compress`] per block, with the kernel's
    /// bounds checks (each 4-byte read at `ofs + 4k` must satisfy `0 <= i < len - 3`; on a
    /// failed check the state keeps the completed blocks and the result is
    /// [`OUT_OF_BOUNDS`]).
    pub fn expected(&self) -> Md5Outcome {
        let mut state = self.state;
        let bound = (i64::from(self.len) - 3).max(0) as u64;
        let mut ofs = self.ofs;
        while ofs <= self.limit {
            for k in 0..16 {
                let idx = i64::from(ofs.wrapping_add(4 * k));
                if idx < 0 || idx as u64 >= bound {
                    return Md5Outcome {
                        ret: OUT_OF_BOUNDS,
                        state,
                    };
                }
            }
            let start = ofs as usize;
            let mut block = [0u8; 64];
            block.copy_from_slice(&self.buf[start..start + 64]);
            reference_compress(&mut state, &block);
            ofs = ofs.wrapping_add(64);
        }
        Md5Outcome { ret: ofs, state }
    }

    fn check(&self, index: usize) -> Result<(), EmulateError> {
        if self.len < 0 || self.len as usize > self.buf.len() {
            return Err(EmulateError::BadCase {
                index,
                message: format!(
                    "len {} must be between 0 and the buffer size {}",
                    self.len,
                    self.buf.len()
                ),
            });
        }
        Ok(())
    }
}

/// What one kernel call returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Md5Outcome {
    /// The returned offset, or [`OUT_OF_BOUNDS`].
    pub ret: i32,
    /// The state words after the call.
    pub state: [u32; 4],
}

impl fmt::Display for Md5Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d] = self.state;
        write!(f, "ret={} state={a:08x} {b:08x} {c:08x} {d:08x}", self.ret)
    }
}

/// Runs the MD5 kernel `func`, compiled for `target`, on each case: in-process through the JIT
/// on the host, else linked with [`MD5_HARNESS`] and run under qemu.
pub fn run_md5_cases(
    func: &Function,
    target: Target,
    cases: &[Md5Case],
) -> Result<Vec<Md5Outcome>, EmulateError> {
    if target.is_host() {
        run_md5_cases_jit(func, cases)
    } else {
        run_md5_cases_linked(func, target, cases)
    }
}

/// [`run_md5_cases`] through an object file and the C harness, also on the host.
pub fn run_md5_cases_linked(
    func: &Function,
    target: Target,
    cases: &[Md5Case],
) -> Result<Vec<Md5Outcome>, EmulateError> {
    // Check the tools first, so a missing emulator is reported before any compilation.
    toolchain_status(target)?;
    for (i, case) in cases.iter().enumerate() {
        case.check(i)?;
    }
    let object = emit_object(func, target)?;
    let mut input = String::new();
    for case in cases {
        let [a, b, c, d] = case.state;
        let _ = write!(
            input,
            "{a} {b} {c} {d} {} {} {} ",
            case.len, case.ofs, case.limit
        );
        if case.buf.is_empty() {
            input.push('-');
        }
        for byte in &case.buf {
            let _ = write!(input, "{byte:02x}");
        }
        input.push('\n');
    }
    let output = run_harness(&object, &MD5_HARNESS, &input)?;
    parse_md5_output(&output, target, cases.len())
}

fn parse_md5_output(
    output: &str,
    target: Target,
    expected_lines: usize,
) -> Result<Vec<Md5Outcome>, EmulateError> {
    let bad = |line: usize, text: &str| EmulateError::Output {
        target,
        harness: MD5_HARNESS.name.to_string(),
        line,
        text: text.to_string(),
    };
    let mut outcomes = Vec::with_capacity(expected_lines);
    for (i, text) in output.lines().enumerate() {
        let fields: Vec<&str> = text.split_whitespace().collect();
        let [ret, a, b, c, d] = fields[..] else {
            return Err(bad(i + 1, text));
        };
        let ret: i32 = ret.parse().map_err(|_| bad(i + 1, text))?;
        let mut state = [0u32; 4];
        for (slot, field) in state.iter_mut().zip([a, b, c, d]) {
            *slot = field.parse().map_err(|_| bad(i + 1, text))?;
        }
        outcomes.push(Md5Outcome { ret, state });
    }
    if outcomes.len() != expected_lines {
        return Err(bad(
            0,
            &format!("{} result lines for {expected_lines} cases", outcomes.len()),
        ));
    }
    Ok(outcomes)
}

/// The kernel's host signature.
type Md5Fn = unsafe extern "C" fn(*mut u32, *const u8, i32, i32, i32) -> i32;

fn run_md5_cases_jit(func: &Function, cases: &[Md5Case]) -> Result<Vec<Md5Outcome>, EmulateError> {
    for (i, case) in cases.iter().enumerate() {
        case.check(i)?;
    }
    let expected = schedlab_kernels::md5::signature();
    if func.signature.params != expected.params || func.signature.returns != expected.returns {
        return Err(JitError::Signature {
            expected: expected.to_string(),
            found: func.signature.to_string(),
        }
        .into());
    }
    let jit = JitFunction::compile(func)?;
    // SAFETY: the signature was checked above; the host calling convention of the JIT's ISA
    // is the C convention on schedlab's hosts.
    let kernel: Md5Fn = unsafe { std::mem::transmute::<*const u8, Md5Fn>(jit.code_ptr()) };
    Ok(cases
        .iter()
        .map(|case| {
            let mut state = case.state;
            // SAFETY: `state` holds four words and `buf` at least `len` bytes (checked); the
            // kernel bounds-checks every read against `len`.
            let ret = unsafe {
                kernel(
                    state.as_mut_ptr(),
                    case.buf.as_ptr(),
                    case.len,
                    case.ofs,
                    case.limit,
                )
            };
            Md5Outcome { ret, state }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_tools_name_the_debian_packages() {
        let err = MissingTool {
            target: Target::S390x,
            missing: vec![
                MissingProgram {
                    program: "s390x-linux-gnu-gcc".into(),
                    package: "gcc-s390x-linux-gnu".into(),
                },
                MissingProgram {
                    program: "qemu-s390x".into(),
                    package: "qemu-user".into(),
                },
            ],
        };
        let text = err.to_string();
        assert!(
            text.contains("apt-get install -y gcc-s390x-linux-gnu qemu-user"),
            "{text}"
        );
        assert_eq!(
            cross_programs(Target::X86_64)[0].1,
            "gcc-x86-64-linux-gnu",
            "Debian spells the x86_64 cross compiler package with dashes"
        );
    }

    #[test]
    fn output_lines_are_checked() {
        let ok = parse_md5_output("64 1 2 3 4\n", Target::Aarch64, 1);
        assert_eq!(
            ok.ok(),
            Some(vec![Md5Outcome {
                ret: 64,
                state: [1, 2, 3, 4]
            }])
        );
        assert!(parse_md5_output("64 1 2 3\n", Target::Aarch64, 1).is_err());
        assert!(parse_md5_output("", Target::Aarch64, 1).is_err());
    }
}
