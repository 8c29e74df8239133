//! External programs schedlab uses (cross compilers, qemu, llvm-mca, the JVM, valgrind), how
//! they are found, and the switch that makes a missing one fatal for tests.
//!
//! `scripts/probe-tools` installs every one of them; a test that needs one asks
//! [`test_can_use`], which skips the test with a message on a developer's machine and fails it,
//! naming the Debian package, when `SCHEDLAB_REQUIRE_TOOLS=1` (as `.ci/run` sets).

use std::path::{Path, PathBuf};

/// The environment variable that makes a missing tool fail a test instead of skipping it.
pub const REQUIRE_TOOLS_VAR: &str = "SCHEDLAB_REQUIRE_TOOLS";

/// The older, emulator-only form of [`REQUIRE_TOOLS_VAR`], still honoured.
pub const REQUIRE_EMULATORS_VAR: &str = "SCHEDLAB_REQUIRE_EMULATORS";

/// A program that is not usable here, with the Debian package that provides it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingProgram {
    /// The program (or file, e.g. a C library) that is missing.
    pub program: String,
    /// The Debian package that provides it.
    pub package: String,
}

impl std::fmt::Display for MissingProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` not found (install the Debian package: apt-get install -y {}; \
             scripts/probe-tools installs everything the tests use)",
            self.program, self.package
        )
    }
}

/// Finds `program` on `PATH`.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

/// Finds `program` on `PATH`, or says which Debian package provides it.
pub fn require_program(program: &str, package: &str) -> Result<PathBuf, MissingProgram> {
    find_program(program).ok_or_else(|| MissingProgram {
        program: program.to_string(),
        package: package.to_string(),
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Whether missing tools must fail tests (`SCHEDLAB_REQUIRE_TOOLS=1` or
/// `SCHEDLAB_REQUIRE_EMULATORS=1`).
pub fn tools_required() -> bool {
    [REQUIRE_TOOLS_VAR, REQUIRE_EMULATORS_VAR]
        .iter()
        .any(|var| std::env::var(var).as_deref() == Ok("1"))
}

/// For tests: whether a tool the test needs is usable. `Ok` → `true`. `Err(why)` → prints
/// `skipping: why` and returns `false`, or, when [`tools_required`], panics with `why` (which
/// should name the Debian package).
pub fn test_can_use<T, E: std::fmt::Display>(probe: Result<T, E>) -> bool {
    match probe {
        Ok(_) => true,
        Err(why) if tools_required() => {
            panic!("{REQUIRE_TOOLS_VAR}=1 (as in CI) but a tool is missing: {why}")
        }
        Err(why) => {
            eprintln!("skipping: {why}");
            false
        }
    }
}

/// A fresh temporary directory for files that live for one external program's run: in
/// `/dev/shm` when `TMPDIR` is not set and the machine has one, else in the temporary
/// directory. The programs schedlab runs (Wasmtime's IR output, llvm-objdump's listing) write
/// a system call per line or fragment, and a RAM filesystem serves each for less.
pub fn scratch_dir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    let ram = Path::new("/dev/shm");
    if std::env::var_os("TMPDIR").is_none()
        && ram.is_dir()
        && let Ok(dir) = tempfile::Builder::new().prefix(prefix).tempdir_in(ram)
    {
        return Ok(dir);
    }
    tempfile::Builder::new().prefix(prefix).tempdir()
}
