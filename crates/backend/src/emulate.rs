//! The foreign half of execution: the tools a target needs (Debian's cross compiler, its C
//! library, `qemu-<arch>`), found or named with their packages, and one run of an object file
//! linked with a generated C harness (`<arch>-linux-gnu-gcc -static -O1`) under
//! `qemu-<arch>`, called explicitly (no binfmt needed). What the harness does is
//! [`crate::exec`]'s business: it is the same for every kernel.

use crate::compile::CompileError;
use crate::jit::JitError;
use crate::object::{ObjectError, ObjectFile};
use crate::target::Target;
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

/// The `-cpu` option qemu gets for `target`: riscv64 runs with the vector extension (128-bit
/// registers) and the bit-manipulation extensions Cranelift can use, which qemu 7.2's default
/// `rv64` lacks; elsewhere qemu's default model. What it still cannot run is
/// [`crate::exec::isa::flags_the_emulator_lacks`].
pub fn emulated_cpu(target: Target) -> Vec<&'static str> {
    match target {
        Target::Riscv64 => vec![
            "-cpu",
            "rv64,v=true,vlen=128,elen=64,vext_spec=v1.0,zba=true,zbb=true,zbc=true,zbs=true,\
             zbkb=true",
        ],
        _ => Vec::new(),
    }
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

/// Links `object` with a C harness built at run time (the executor's generated C file,
/// [`crate::exec`]) by the target's cross `gcc`, feeds it `input` on stdin under the target's
/// emulator (natively on the host) and returns its stdout; `name` is used for messages and the
/// temporary file.
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
            c.args(emulated_cpu(target)).arg(&exe);
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

/// A thread that reads `pipe` (if any) to its end and returns what it read.
fn read_to_end_in_thread(
    mut pipe: Option<impl Read + Send + 'static>,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(p) = pipe.as_mut() {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
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
    let reader = read_to_end_in_thread(child.stdout.take());
    let err_reader = read_to_end_in_thread(child.stderr.take());
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
}
