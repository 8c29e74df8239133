//! The HotSpot rows: `benches/java/DigestBench.java` (embedded in the binary; the one Java
//! harness of every `MessageDigest` bench, MD5 and SHA-256) is compiled with `javac` into a
//! temporary directory once, then each measurement is its own `java` process, run between the
//! Rust side's repetitions.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// The harness source, the same file that lives in `benches/java/`.
pub const DIGEST_BENCH_JAVA: &str = include_str!("../../../benches/java/DigestBench.java");

/// The VM flag whose value proves which MD5 variant ran.
const MD5_FLAG: &str = "UseMD5Intrinsics";

/// One JVM configuration.
#[derive(Clone, Copy, Debug)]
pub struct JvmVariant {
    /// Row name.
    pub name: &'static str,
    /// Extra `java` options (`-XX:` flags selecting the intrinsics).
    pub flags: &'static [&'static str],
    /// What the intrinsic flags (`UseMD5Intrinsics`, `UseSquareToLenIntrinsic`, …) must read
    /// inside the VM.
    pub intrinsic: bool,
}

impl JvmVariant {
    /// The row name of `mode` (`primary`: the variant's own name; a harness that times one
    /// mode names its rows by the variant alone).
    pub fn row_name(&self, mode: &str, primary: &str) -> String {
        if mode == primary {
            self.name.to_string()
        } else {
            format!("{}/{mode}", self.name)
        }
    }
}

/// HotSpot with and without its MD5 intrinsic (without: C2-compiled `implCompress0`).
pub const VARIANTS: [JvmVariant; 2] = [
    JvmVariant {
        name: "hotspot/intrinsic",
        flags: &["-XX:+UnlockDiagnosticVMOptions", "-XX:+UseMD5Intrinsics"],
        intrinsic: true,
    },
    JvmVariant {
        name: "hotspot/no-intrinsic",
        flags: &["-XX:+UnlockDiagnosticVMOptions", "-XX:-UseMD5Intrinsics"],
        intrinsic: false,
    },
];

/// A ready-to-run MD5 harness.
pub struct Harness {
    program: JavaProgram,
}

/// A single-file Java program written to a temporary directory and compiled once.
pub struct JavaProgram {
    java: PathBuf,
    /// `-cp DIR Class` when `javac` compiled it, else the source file for `java File.java`.
    launch: Vec<String>,
    _dir: tempfile::TempDir,
}

/// One size's result from one JVM process.
#[derive(Clone, Debug, PartialEq)]
pub struct JvmSample {
    /// Message size in bytes.
    pub size: usize,
    /// Decimal MB/s over the JVM's time budget.
    pub mb_per_s: f64,
    /// Hex MD5 of the buffer, to check the JVM hashed the same bytes.
    pub digest: String,
}

/// What one JVM process reported.
#[derive(Clone, Debug, PartialEq)]
pub struct JvmRun {
    /// `java.version`.
    pub java_version: String,
    /// `UseMD5Intrinsics` as the VM saw it (`unknown` if the VM would not say).
    pub intrinsic_flag: String,
    /// One sample per size.
    pub samples: Vec<JvmSample>,
}

/// Finds an executable `name` on `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

impl JavaProgram {
    /// Writes `source` as `class`.java and compiles it; `Err` says why it cannot run.
    pub fn prepare(class: &str, source_text: &str) -> Result<Self, String> {
        let java = find_on_path("java").ok_or("`java` not found on PATH")?;
        let dir = tempfile::Builder::new()
            .prefix("schedlab-bench-java")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        let source = dir.path().join(format!("{class}.java"));
        std::fs::write(&source, source_text)
            .map_err(|e| format!("cannot write {}: {e}", source.display()))?;
        let launch = match find_on_path("javac") {
            Some(javac) => {
                successful_output(
                    Command::new(&javac).arg("-d").arg(dir.path()).arg(&source),
                    &javac,
                    |status| format!("javac failed ({status})"),
                )?;
                vec!["-cp".into(), dir.path().display().to_string(), class.into()]
            }
            // JDK 11+ runs a single-file program directly.
            None => vec![source.display().to_string()],
        };
        Ok(Self {
            java,
            launch,
            _dir: dir,
        })
    }

    /// Runs one process, `java <flags> <class> <args>`, killed after `timeout`; returns its
    /// stdout if it exited with status 0. `name` names the run in errors.
    pub fn run(
        &self,
        name: &str,
        flags: &[&str],
        args: &[String],
        timeout: Duration,
    ) -> Result<String, String> {
        let mut child = Command::new(&self.java)
            .args(flags)
            .args(&self.launch)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.java.display()))?;
        let stdout = read_in_background(child.stdout.take());
        let stderr = read_in_background(child.stderr.take());
        let deadline = Instant::now() + timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() > deadline => {
                    // Best effort: the process may have exited just now.
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("{name} timed out"));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(format!("waiting for java: {e}")),
            }
        };
        let stdout = stdout.join().unwrap_or_default();
        let stderr = stderr.join().unwrap_or_default();
        if !status.success() {
            // A harness that checks its results says which one failed on stdout.
            let failed: Vec<&str> = stdout.lines().filter(|l| l.contains("FAILED")).collect();
            return Err(format!(
                "java {} exited with {status}: {}",
                flags.join(" "),
                [stderr.trim(), &failed.join("; ")].join(" ").trim()
            ));
        }
        Ok(stdout)
    }
}

impl Harness {
    /// Writes and compiles the harness; `Err` says why the JVM rows are absent.
    pub fn prepare() -> Result<Self, String> {
        JavaProgram::prepare("DigestBench", DIGEST_BENCH_JAVA).map(|program| Self { program })
    }

    /// Runs one JVM process of `variant` over `sizes`.
    pub fn run(
        &self,
        variant: &JvmVariant,
        sizes: &[usize],
        warmup: Duration,
        budget: Duration,
    ) -> Result<JvmRun, String> {
        let mut args = vec!["MD5".to_string(), MD5_FLAG.to_string()];
        args.extend(digest_child_args(sizes, warmup, budget));
        let timeout = digest_child_timeout(sizes, warmup, budget);
        let stdout = self
            .program
            .run(variant.name, variant.flags, &args, timeout)?;
        let run = parse(&stdout, MD5_FLAG)?;
        if run.intrinsic_flag != "unknown" && run.intrinsic_flag != variant.intrinsic.to_string() {
            return Err(format!(
                "{}: the VM reports UseMD5Intrinsics={} (wanted {})",
                variant.name, run.intrinsic_flag, variant.intrinsic
            ));
        }
        Ok(run)
    }
}

/// Runs `command` (which starts `program`) to its end. `Err` says that `program` could not be
/// started, or `failed(status)` followed by its trimmed stderr when it exits unsuccessfully.
pub fn successful_output(
    command: &mut Command,
    program: &Path,
    failed: impl FnOnce(ExitStatus) -> String,
) -> Result<Output, String> {
    let out = command
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{}: {}",
            failed(out.status),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out)
}

/// The arguments a digest child takes after its algorithm and flag: `sizes` comma-separated,
/// then `warmup` and `budget` in milliseconds.
pub fn digest_child_args(sizes: &[usize], warmup: Duration, budget: Duration) -> [String; 3] {
    let size_list = sizes
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",");
    [
        size_list,
        warmup.as_millis().to_string(),
        budget.as_millis().to_string(),
    ]
}

/// How long a digest child measuring `sizes` may take: the warm-up, `budget` per size and a
/// minute for the VM to start and stop.
pub fn digest_child_timeout(sizes: &[usize], warmup: Duration, budget: Duration) -> Duration {
    warmup + budget * u32::try_from(sizes.len()).unwrap_or(u32::MAX) + Duration::from_secs(60)
}

fn read_in_background<R: Read + Send + 'static>(
    pipe: Option<R>,
) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            // A read error leaves what was read so far; parsing then reports what is missing.
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}

/// Parses the harness's `DIGESTBENCH-INFO` and `DIGESTBENCH` lines; `flag` is the VM flag the
/// info line reports.
pub fn parse(stdout: &str, flag: &str) -> Result<JvmRun, String> {
    let mut run = JvmRun {
        java_version: String::new(),
        intrinsic_flag: "unknown".into(),
        samples: Vec::new(),
    };
    let mut saw_vm = false;
    for line in stdout.lines() {
        let field = |key: &str| harness_field(line, key);
        match line.split_whitespace().next() {
            Some("DIGESTBENCH-INFO") => {
                saw_vm = true;
                run.java_version = field("java.version").unwrap_or_default();
                run.intrinsic_flag = field(flag).unwrap_or_else(|| "unknown".into());
            }
            Some("DIGESTBENCH") => {
                let sample = digest_sample(line)
                    .ok_or_else(|| format!("malformed harness line `{line}`"))?;
                run.samples.push(sample);
            }
            _ => {}
        }
    }
    if !saw_vm || run.samples.is_empty() {
        return Err(no_results(stdout));
    }
    Ok(run)
}

/// The figures of a `DIGESTBENCH size=… mb_per_s=… digest=…` line (the protocol of the Java
/// harness and of `bench`'s child processes); `None` where one is missing, or the size or a
/// finite rate does not parse.
pub fn digest_sample(line: &str) -> Option<JvmSample> {
    let field = |key: &str| harness_field(line, key);
    Some(JvmSample {
        size: field("size")?.parse().ok()?,
        mb_per_s: field("mb_per_s")?
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())?,
        digest: field("digest")?,
    })
}

/// The value of `key=value` among the words after a harness line's tag.
pub fn harness_field(line: &str, key: &str) -> Option<String> {
    line.split_whitespace()
        .skip(1)
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .map(str::to_string)
}

/// The error of a harness run that printed no results, quoting its output.
pub fn no_results(stdout: &str) -> String {
    format!(
        "the Java harness printed no results (output: `{}`)",
        stdout.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_harness_output() {
        let out = "DIGESTBENCH-INFO java.version=17.0.15 UseMD5Intrinsics=true\n\
                   DIGESTBENCH size=64 hashes=10 nanos=100 mb_per_s=338.5 digest=bc00\n\
                   noise\n";
        let run = parse(out, MD5_FLAG).expect("parses");
        assert_eq!(run.java_version, "17.0.15");
        assert_eq!(run.intrinsic_flag, "true");
        assert_eq!(
            run.samples,
            vec![JvmSample {
                size: 64,
                mb_per_s: 338.5,
                digest: "bc00".into()
            }]
        );
    }

    #[test]
    fn rejects_missing_or_malformed_lines() {
        assert!(parse("", MD5_FLAG).is_err());
        let bad = "DIGESTBENCH-INFO java.version=17\nDIGESTBENCH size=x mb_per_s=1 digest=a";
        assert!(parse(bad, MD5_FLAG).is_err());
    }
}
