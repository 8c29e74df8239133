//! The SHA-256 rows `schedlab bench --kernel sha256` times: schedlab's `sha256` kernel
//! JIT-compiled per scheduling strategy, OpenSSL's `SHA256()` and the `sha2` crate in process,
//! and out-of-process rows — OpenSSL with its SHA extensions masked (`OPENSSL_ia32cap` is read
//! once at library initialisation, so the mask needs a fresh process), `sha2` built with its
//! portable backend (`--cfg sha2_backend="soft"` is a build-time switch, so it is a separate
//! binary: `crates/bench/sha2-soft/`) and HotSpot with and without `UseSHA256Intrinsics`.
//!
//! Every out-of-process row speaks one line protocol ([`parse_child`]): its child is given
//! `<size,size,...> <warm-up ms> <budget ms per size>` and prints one `DIGESTBENCH-INFO` line
//! (what the child saw: the backend, the mask, the VM flag) and one `DIGESTBENCH` line per
//! size with its MB/s and the digest of the bench buffer, which the caller checks.

use crate::jvm::{
    JavaProgram, digest_child_args, digest_child_timeout, digest_sample, find_on_path,
    successful_output,
};
use crate::md5::Kind;
use crate::measure::{calibrate, time_loop};
use digest::Digest;
use schedlab_backend::pipeline::{PipelineConfig, StageOptions, run_ir_stages_with};
use schedlab_backend::stats::code_stats;
use schedlab_backend::{JitFunction, JitOptions, Target};
use schedlab_cost::loop_cost;
use schedlab_kernels::digest::split_padded;
use schedlab_kernels::sha256::{
    INITIAL_STATE, SCHEDULE_WORDS, Schedule, compress_multi_block_with,
};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The kernel's machine-level type: `(state, buf, len, ofs, limit, w) -> offset | status`.
type KernelFn = unsafe extern "C" fn(*mut u32, *const u8, i32, i32, i32, *mut u32) -> i32;

/// Name of the in-process OpenSSL row (SHA extensions as the CPU has them).
pub const OPENSSL: &str = "openssl";
/// Name of the OpenSSL row with the SHA extensions masked (a child process).
pub const OPENSSL_MASKED: &str = "openssl/no-sha-ext";
/// Name of the `sha2` row with its default (runtime-dispatched) backend.
pub const SHA2: &str = "sha2";
/// Name of the `sha2` row built with its portable backend (a child process).
pub const SHA2_SOFT: &str = "sha2/soft";
/// HotSpot with its SHA-256 intrinsic.
pub const HOTSPOT_INTRINSIC: &str = "hotspot/intrinsic";
/// HotSpot without it (C2-compiled `SHA2.implCompress0`).
pub const HOTSPOT_NO_INTRINSIC: &str = "hotspot/no-intrinsic";
/// Row name of schedlab's hand-written SHA-NI reference loop (`schedlab reference`), run
/// natively where the CPU has the SHA extensions: its measured speed checks llvm-mca's figure.
pub const REFERENCE_SHA_NI: &str = "reference/sha256-ni";

/// `OPENSSL_ia32cap` for the masked row: the first word (CPUID.1) as detected, the second
/// (CPUID.7 EBX) with bit 29, SHA, cleared (OpenSSL 3.0 `crypto/cpuid.c`: `~` clears the bits
/// given, a leading `:` keeps the detected first word).
pub const OPENSSL_MASK: &str = ":~0x20000000";

/// schedlab's `sha256` kernel compiled with one pipeline configuration, with the figures of
/// that compilation.
pub struct Sha256Kernel {
    entry: KernelFn,
    _jit: JitFunction,
    /// Allocator figures of the whole function (check-free loop and checked fallback).
    pub spills: usize,
    /// See `spills`.
    pub reloads: usize,
    /// Spill stores and reloads per hot-loop iteration (one 64-byte block), if the hot loop
    /// could be read (it needs llvm-objdump), else why not.
    pub loop_spills: Result<(usize, usize), String>,
}

impl Sha256Kernel {
    /// JIT-compiles the kernel with `config` for the host (both loops in one function, as the
    /// `Sha256` library compiles it).
    pub fn compile(config: &PipelineConfig) -> Result<Self, String> {
        Self::compile_kernel(config, Schedule::Argument)
    }

    /// [`Sha256Kernel::compile`] of the variant that keeps `W` in `schedule` (`Private`: the
    /// `sha256-local` kernel, whose sixth argument the calling convention lets it ignore).
    pub fn compile_kernel(config: &PipelineConfig, schedule: Schedule) -> Result<Self, String> {
        let target = Target::host().ok_or("the host architecture has no schedlab backend")?;
        let mut func = compress_multi_block_with(schedule);
        run_ir_stages_with(&mut func, target, config, &StageOptions::jit(None))
            .map_err(|e| e.to_string())?;
        let options = JitOptions {
            verify: false,
            listing: true,
        };
        let jit = JitFunction::compile_with(func, &options).map_err(|e| e.to_string())?;
        let stats = code_stats(jit.compiled());
        let loop_spills = loop_cost(jit.compiled())
            .map(|c| (c.spills.spills, c.spills.reloads))
            .map_err(|e| e.to_string());
        // SAFETY: the JIT compiled a function with exactly `KernelFn`'s signature in the
        // host's default (C) calling convention; the code lives as long as the process.
        let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(jit.code_ptr()) };
        Ok(Self {
            entry,
            _jit: jit,
            spills: stats.spills,
            reloads: stats.reloads,
            loop_spills,
        })
    }

    /// The machine code the JIT compiled (the very bytes [`Sha256Kernel::digest`] runs), for
    /// static cost models.
    pub fn compiled(&self) -> &schedlab_backend::Compiled {
        self._jit.compiled()
    }

    /// Compresses the whole 64-byte blocks of `blocks` into `state`.
    fn compress(&self, state: &mut [u32; 8], w: &mut [u32; SCHEDULE_WORDS], blocks: &[u8]) {
        const CHUNK: usize = (i32::MAX as usize / 64 - 1) * 64;
        for chunk in blocks.chunks(CHUNK) {
            let len = (chunk.len() / 64 * 64) as i32;
            if len == 0 {
                continue;
            }
            // SAFETY: `state` is eight writable words, `w` 64 writable words; the kernel reads
            // at most `len` bytes of `chunk` because every read is bounds-checked against it.
            let end = unsafe {
                (self.entry)(
                    state.as_mut_ptr(),
                    chunk.as_ptr(),
                    len,
                    0,
                    len - 64,
                    w.as_mut_ptr(),
                )
            };
            debug_assert_eq!(end, len, "the sha256 kernel stopped early");
        }
    }

    /// One-shot SHA-256 of `data` (including padding).
    pub fn digest(&self, data: &[u8]) -> [u8; 32] {
        let mut state = INITIAL_STATE;
        let mut w = [0u32; SCHEDULE_WORDS];
        let (whole, last, padded) = split_padded(data, u64::to_be_bytes);
        self.compress(&mut state, &mut w, whole);
        self.compress(&mut state, &mut w, &last[..padded]);
        schedlab_kernels::sha256::digest_bytes(&state)
    }
}

/// How an in-process row is called.
pub enum Imp {
    /// schedlab's kernel with one configuration.
    Schedlab(Box<Sha256Kernel>),
    /// OpenSSL's one-shot `SHA256()`.
    OpenSsl,
    /// `sha2::Sha256` (runtime dispatch: SHA extensions where the CPU has them).
    Sha2,
    /// schedlab's SHA-NI reference loop (x86_64 with SHA extensions only).
    ReferenceShaNi,
}

/// One in-process row.
pub struct Row {
    /// Row name.
    pub name: String,
    /// Where its code comes from.
    pub kind: Kind,
    /// The scheduling strategy (schedlab rows).
    pub strategy: Option<String>,
    /// How it is called.
    pub imp: Imp,
}

impl Row {
    /// One-shot SHA-256 of `data`.
    pub fn digest(&self, data: &[u8]) -> [u8; 32] {
        match &self.imp {
            Imp::Schedlab(kernel) => kernel.digest(data),
            Imp::OpenSsl => openssl_digest(data),
            Imp::Sha2 => sha2_digest(data),
            Imp::ReferenceShaNi => reference_sha_ni_digest(data),
        }
    }

    /// Wall time of `iterations` one-shot hashes of `data` (monomorphised per implementation).
    pub fn time(&self, data: &[u8], iterations: u64) -> Duration {
        match &self.imp {
            Imp::Schedlab(kernel) => time_loop(|| kernel.digest(black_box(data)), iterations),
            Imp::OpenSsl => time_loop(|| openssl_digest(black_box(data)), iterations),
            Imp::Sha2 => time_loop(|| sha2_digest(black_box(data)), iterations),
            Imp::ReferenceShaNi => {
                time_loop(|| reference_sha_ni_digest(black_box(data)), iterations)
            }
        }
    }
}

/// The schedlab row name of `strategy`.
pub fn schedlab_row_name(strategy: &str) -> String {
    format!("schedlab/{strategy}")
}

/// The row of `strategy` compiled with store-to-load forwarding off, i.e. `W` kept in memory
/// as the Java source has it: beside the default row it shows, in the same run, what the
/// forwarding pass is worth.
pub fn w_in_memory_row_name(strategy: &str) -> String {
    format!("schedlab/{strategy}/w-in-memory")
}

/// The strategies timed by default: every registered one but `shuffle` (it exists to test
/// correctness), the pipeline's default first.
pub fn default_strategies() -> Vec<String> {
    let default = PipelineConfig::default().strategy;
    let mut names = vec![default.clone()];
    names.extend(
        schedlab_passes::sched::strategy_names()
            .into_iter()
            .filter(|s| *s != "shuffle" && *s != default)
            .map(str::to_string),
    );
    names
}

/// Compiles one schedlab row per strategy (the pipeline's default configuration with that
/// strategy), then adds OpenSSL and `sha2` if `wanted` accepts them.
pub fn rows(strategies: &[String], wanted: impl Fn(&str) -> bool) -> Result<Vec<Row>, String> {
    openssl_sys::init();
    let mut rows = Vec::new();
    for strategy in strategies {
        let name = schedlab_row_name(strategy);
        if !wanted(&name) {
            continue;
        }
        let config = PipelineConfig::with_strategy(strategy);
        let kernel = Sha256Kernel::compile(&config).map_err(|e| format!("{name}: {e}"))?;
        rows.push(Row {
            name,
            kind: Kind::Schedlab,
            strategy: Some(strategy.clone()),
            imp: Imp::Schedlab(Box::new(kernel)),
        });
    }
    // The first strategy (the default) once more with `W` in memory, unless that is already
    // the default configuration. Its `strategy` is `None`: it is a configuration, not a strategy.
    if let Some(first) = strategies.first() {
        let name = w_in_memory_row_name(first);
        let config = PipelineConfig {
            forward_stores: false,
            ..PipelineConfig::with_strategy(first)
        };
        if wanted(&name) && config != PipelineConfig::with_strategy(first) {
            let kernel = Sha256Kernel::compile(&config).map_err(|e| format!("{name}: {e}"))?;
            rows.push(Row {
                name,
                kind: Kind::Schedlab,
                strategy: None,
                imp: Imp::Schedlab(Box::new(kernel)),
            });
        }
    }
    let mut fixed = vec![
        (OPENSSL, Kind::HandWritten, Imp::OpenSsl),
        (SHA2, Kind::PureRust, Imp::Sha2),
    ];
    if reference_sha_ni_available() {
        fixed.push((REFERENCE_SHA_NI, Kind::HandWritten, Imp::ReferenceShaNi));
    }
    for (name, kind, imp) in fixed {
        if wanted(name) {
            rows.push(Row {
                name: name.into(),
                kind,
                strategy: None,
                imp,
            });
        }
    }
    Ok(rows)
}

/// Whether this host can run the SHA-NI reference row.
pub fn reference_sha_ni_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        schedlab_cost::reference::native::sha256_ni_available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// One-shot SHA-256 of `data` by the SHA-NI reference loop: the whole blocks straight from
/// `data`, the padded tail from a stack buffer (as [`Sha256Kernel::digest`] does). Only
/// called where [`reference_sha_ni_available`]; elsewhere it returns zeros, which the digest
/// check rejects.
pub fn reference_sha_ni_digest(data: &[u8]) -> [u8; 32] {
    #[cfg(target_arch = "x86_64")]
    {
        use schedlab_cost::reference::native::sha256_ni_compress;
        let mut state = schedlab_kernels::sha256::INITIAL_STATE;
        let (whole, last, padded) = split_padded(data, u64::to_be_bytes);
        let ok = sha256_ni_compress(&mut state, whole).is_ok()
            && sha256_ni_compress(&mut state, &last[..padded]).is_ok();
        if ok {
            return schedlab_kernels::sha256::digest_bytes(&state);
        }
    }
    let _ = data;
    [0; 32]
}

/// Checks every row's digest of the bench buffer of every size against `sha2`'s.
pub fn check_digests(rows: &[Row], sizes: &[usize]) -> Result<(), String> {
    for &size in sizes {
        let buf = crate::md5::buffer(size);
        let reference = sha2_digest(&buf);
        for row in rows {
            let got = row.digest(&buf);
            if got != reference {
                return Err(format!(
                    "{} hashed {size} bytes to {}, sha2 to {}",
                    row.name,
                    crate::md5::hex(&got),
                    crate::md5::hex(&reference)
                ));
            }
        }
    }
    Ok(())
}

/// `sha2`'s one-shot digest.
#[inline]
pub fn sha2_digest(data: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(data).into()
}

/// OpenSSL's one-shot `SHA256()`.
#[inline]
pub fn openssl_digest(data: &[u8]) -> [u8; 32] {
    crate::openssl::one_shot(crate::openssl::SHA256, data)
}

/// The child side of the protocol for an in-process implementation: calibrates each size to
/// `budget` (which warms up), times one sample, and returns the protocol's lines.
pub fn worker_output(
    row: &Row,
    info: &str,
    sizes: &[usize],
    budget: Duration,
) -> Result<String, String> {
    let mut out = format!("DIGESTBENCH-INFO {info}\n");
    for &size in sizes {
        let buf = crate::md5::buffer(size);
        let n = calibrate(|n| row.time(&buf, n), budget);
        let t = row.time(&buf, n);
        let mb_per_s = (size as f64 * n as f64) / t.as_secs_f64().max(1e-12) / 1e6;
        out.push_str(&format!(
            "DIGESTBENCH size={size} hashes={n} nanos={} mb_per_s={mb_per_s} digest={}\n",
            t.as_nanos(),
            crate::md5::hex(&row.digest(&buf))
        ));
    }
    Ok(out)
}

/// The first digest in `run` that differs from `sha2`'s of the bench buffer of its size, as an
/// error naming the row (a wrong hash fails the bench).
pub fn check_child_digests(name: &str, run: &ChildRun) -> Result<(), String> {
    for s in &run.samples {
        let want = crate::md5::hex(&sha2_digest(&crate::md5::buffer(s.size)));
        if s.digest != want {
            return Err(format!(
                "{name} hashed {} bytes to {}, sha2 to {want}",
                s.size, s.digest
            ));
        }
    }
    Ok(())
}

/// One size's result from a child process.
#[derive(Clone, Debug, PartialEq)]
pub struct ChildSample {
    /// Message size in bytes.
    pub size: usize,
    /// Decimal MB/s over the child's budget.
    pub mb_per_s: f64,
    /// Hex SHA-256 of the bench buffer.
    pub digest: String,
}

/// What one child process reported.
#[derive(Clone, Debug, PartialEq)]
pub struct ChildRun {
    /// The `DIGESTBENCH-INFO` fields.
    pub info: BTreeMap<String, String>,
    /// One sample per size.
    pub samples: Vec<ChildSample>,
}

/// Parses a child's `DIGESTBENCH-INFO` and `DIGESTBENCH` lines.
pub fn parse_child(stdout: &str) -> Result<ChildRun, String> {
    let mut run = ChildRun {
        info: BTreeMap::new(),
        samples: Vec::new(),
    };
    let mut saw_info = false;
    for line in stdout.lines() {
        let mut words = line.split_whitespace();
        let tag = words.next();
        let fields: BTreeMap<&str, &str> = words.filter_map(|w| w.split_once('=')).collect();
        match tag {
            Some("DIGESTBENCH-INFO") => {
                saw_info = true;
                run.info = fields
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
            }
            Some("DIGESTBENCH") => {
                let sample = digest_sample(line)
                    .filter(|s| s.mb_per_s > 0.0)
                    .ok_or_else(|| format!("malformed line `{line}`"))?;
                run.samples.push(ChildSample {
                    size: sample.size,
                    mb_per_s: sample.mb_per_s,
                    digest: sample.digest,
                });
            }
            _ => {}
        }
    }
    if !saw_info || run.samples.is_empty() {
        return Err(format!(
            "the child printed no results (output: `{}`)",
            stdout.trim()
        ));
    }
    Ok(run)
}

/// How an out-of-process row is started.
enum Launch {
    /// `program args… <sizes> <warm-up> <budget>` with `env` set.
    Process {
        program: PathBuf,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// The Java harness with these VM flags.
    Jvm(Vec<&'static str>),
}

/// One out-of-process row, ready to run.
pub struct ChildRow {
    /// Row name.
    pub name: &'static str,
    /// Where its code comes from.
    pub kind: Kind,
    /// How it is measured, for the report.
    pub note: String,
    /// The `DIGESTBENCH-INFO` field that must have this value (proof the variant is what its
    /// name says).
    expect: (&'static str, String),
    launch: Launch,
}

use crate::jvm::DIGEST_BENCH_JAVA;

/// The compiled Java harness shared by the HotSpot rows.
pub struct ChildContext {
    java: Result<JavaProgram, String>,
}

impl ChildContext {
    /// Compiles the Java harness unless `java` is false; `Err` inside says why the JVM rows
    /// are absent.
    pub fn prepare(java: bool) -> Self {
        let java = if java {
            JavaProgram::prepare("DigestBench", DIGEST_BENCH_JAVA)
        } else {
            Err("skipped (--no-java)".into())
        };
        Self { java }
    }

    /// Why the JVM rows are absent, if they are.
    pub fn java_error(&self) -> Option<&str> {
        self.java.as_ref().err().map(String::as_str)
    }
}

/// The OpenSSL-masked row: `exe worker_args…` with `OPENSSL_ia32cap` set; the child must be
/// this program's hidden worker for [`OPENSSL`] ([`worker_output`]).
pub fn openssl_masked_row(exe: &Path, worker_args: &[String]) -> ChildRow {
    ChildRow {
        name: OPENSSL_MASKED,
        kind: Kind::HandWritten,
        note: format!(
            "OpenSSL's SHA256() in a child process started with OPENSSL_ia32cap={OPENSSL_MASK} \
             (CPUID.7 EBX bit 29, SHA, cleared)"
        ),
        expect: ("OPENSSL_ia32cap", OPENSSL_MASK.to_string()),
        launch: Launch::Process {
            program: exe.to_path_buf(),
            args: worker_args.to_vec(),
            env: vec![("OPENSSL_ia32cap".into(), OPENSSL_MASK.into())],
        },
    }
}

/// The `sha2` portable-backend row, built by [`build_sha2_soft`].
pub fn sha2_soft_row(program: &Path) -> ChildRow {
    ChildRow {
        name: SHA2_SOFT,
        kind: Kind::PureRust,
        note: "sha2 0.11 built with --cfg sha2_backend=\"soft\" (crates/bench/sha2-soft), \
               run in a child process"
            .into(),
        expect: ("backend", "soft".into()),
        launch: Launch::Process {
            program: program.to_path_buf(),
            args: Vec::new(),
            env: Vec::new(),
        },
    }
}

/// The two HotSpot rows.
pub fn hotspot_rows() -> Vec<ChildRow> {
    [(HOTSPOT_INTRINSIC, true), (HOTSPOT_NO_INTRINSIC, false)]
        .into_iter()
        .map(|(name, on)| {
            let flag = if on {
                "-XX:+UseSHA256Intrinsics"
            } else {
                "-XX:-UseSHA256Intrinsics"
            };
            ChildRow {
                name,
                kind: Kind::Jvm,
                note: format!(
                    "MessageDigest.getInstance(\"SHA-256\") in a separate JVM process per \
                     repetition: java -XX:+UnlockDiagnosticVMOptions {flag}"
                ),
                expect: ("UseSHA256Intrinsics", on.to_string()),
                launch: Launch::Jvm(vec!["-XX:+UnlockDiagnosticVMOptions", flag]),
            }
        })
        .collect()
}

impl ChildRow {
    /// Runs one child over `sizes` and checks that it is the variant it claims to be.
    pub fn run(
        &self,
        context: &ChildContext,
        sizes: &[usize],
        warmup: Duration,
        budget: Duration,
    ) -> Result<ChildRun, String> {
        let tail = digest_child_args(sizes, warmup, budget);
        let stdout = match &self.launch {
            Launch::Jvm(flags) => {
                let java = context.java.as_ref().map_err(Clone::clone)?;
                let timeout = digest_child_timeout(sizes, warmup, budget);
                let mut args = vec!["SHA-256".to_string(), "UseSHA256Intrinsics".to_string()];
                args.extend(tail);
                java.run(self.name, flags, &args, timeout)?
            }
            Launch::Process { program, args, env } => {
                let out = successful_output(
                    Command::new(program)
                        .args(args)
                        .args(&tail)
                        .envs(env.iter().map(|(k, v)| (k, v))),
                    program,
                    |status| format!("{} exited with {status}", program.display()),
                )?;
                String::from_utf8_lossy(&out.stdout).into_owned()
            }
        };
        let run = parse_child(&stdout)?;
        let (key, want) = &self.expect;
        match run.info.get(*key) {
            Some(got) if got == want => Ok(run),
            got => Err(format!(
                "{}: the child reports {key}={} (wanted {want})",
                self.name,
                got.map_or("nothing", String::as_str)
            )),
        }
    }
}

/// The out-of-workspace crate of the `sha2/soft` row.
pub fn sha2_soft_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sha2-soft")
}

/// Builds `crates/bench/sha2-soft` (its own workspace, lock file and target directory) with
/// `--cfg sha2_backend="soft"` and returns the binary. Cargo rebuilds only when something
/// changed. `Err` says why the row is absent.
pub fn build_sha2_soft() -> Result<PathBuf, String> {
    let dir = sha2_soft_dir();
    let manifest = dir.join("Cargo.toml");
    if !manifest.exists() {
        return Err(format!("{} is missing", manifest.display()));
    }
    let cargo = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .or_else(|| find_on_path("cargo"))
        .ok_or("cargo not found on PATH (the sha2/soft row is built by cargo)")?;
    let target = dir.join("target");
    successful_output(
        Command::new(&cargo)
            .args([
                "build",
                "--release",
                "--locked",
                "--quiet",
                "--manifest-path",
            ])
            .arg(&manifest)
            // Cargo reads its configuration from the working directory up: the crate's, not ours.
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", &target)
            .env(
                "CARGO_ENCODED_RUSTFLAGS",
                "--cfg\u{1f}sha2_backend=\"soft\"",
            )
            .env_remove("RUSTFLAGS"),
        &cargo,
        |_| format!("building {} failed", manifest.display()),
    )?;
    Ok(target.join("release").join("sha2-soft-bench"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_hashes_like_sha2_at_every_padding_boundary() {
        if Target::host().is_none() {
            return;
        }
        let kernel = match Sha256Kernel::compile(&PipelineConfig::default()) {
            Ok(k) => k,
            Err(e) => panic!("compile: {e}"),
        };
        for len in [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1000] {
            let buf = crate::md5::buffer(len);
            assert_eq!(kernel.digest(&buf), sha2_digest(&buf), "length {len}");
        }
        assert_eq!(openssl_digest(b"abc"), sha2_digest(b"abc"));
    }

    #[test]
    fn parses_child_output() {
        let out = "DIGESTBENCH-INFO backend=soft\n\
                   DIGESTBENCH size=64 hashes=10 nanos=100 mb_per_s=338.5 digest=bc00\n\
                   noise\n";
        let run = parse_child(out).expect("parses");
        assert_eq!(run.info.get("backend").map(String::as_str), Some("soft"));
        assert_eq!(
            run.samples,
            vec![ChildSample {
                size: 64,
                mb_per_s: 338.5,
                digest: "bc00".into()
            }]
        );
        assert!(
            check_child_digests("x", &run).is_err(),
            "bc00 is no SHA-256"
        );
        let good = format!(
            "DIGESTBENCH-INFO a=b\nDIGESTBENCH size=3 mb_per_s=1 digest={}\n",
            crate::md5::hex(&sha2_digest(&crate::md5::buffer(3)))
        );
        let good = parse_child(&good).expect("parses");
        assert_eq!(check_child_digests("x", &good), Ok(()));
        assert!(parse_child("").is_err());
        assert!(parse_child("DIGESTBENCH-INFO a=b\nDIGESTBENCH size=x").is_err());
    }

    #[test]
    fn default_strategy_comes_first_and_shuffle_is_left_out() {
        let names = default_strategies();
        assert_eq!(names[0], PipelineConfig::default().strategy);
        assert!(!names.iter().any(|n| n == "shuffle"));
    }
}
