//! The `schedlab bench` command behind its arguments (the command line parses them into
//! [`BenchArgs`]): schedlab's MD5 per configuration against `md-5`, OpenSSL's hand-written
//! `MD5()` and HotSpot (with and without its intrinsic), timed in one run on one thread.
//!
//! Method: every row is warmed up and calibrated to a fixed per-sample time budget; then each
//! repetition times every in-process row once per size, in an order rotated per repetition
//! (drift and order effects fall on every row alike), and runs one JVM process per HotSpot
//! variant between repetitions. Reported: the median MB/s over repetitions, and the median of
//! each repetition's ratio to OpenSSL's sample from the same repetition.
//! `--callgrind` instead reports deterministic figures (instructions and llvm-mca cycles per
//! block).
//!
//! `--kernel square-to-len` / `--kernel muladd` time the BigInteger kernels the same way
//! (see [`bigint`]).

mod aggregate;
mod any;
mod bigint;
mod callgrind;
pub use crate::md5 as impls;
use crate::{compile_time, jvm as java};
mod measure;
mod multi;
mod output;
pub mod plot;
mod sha256;
mod streams;
mod validate;

use crate::CliError;
use impls::{Kind, OPENSSL, RustImpl};
use output::{BenchReport, Cell, Meta, ReportedBudgets, Row};
use std::path::PathBuf;
use std::time::Duration;

/// What a `schedlab bench` run was asked for, as plain values (the command line parses them
/// into this; see each field for its meaning).
#[derive(Debug)]
pub struct BenchArgs {
    /// The kernel to time: a dedicated bench (md5, md5-mb, md5-streams, sha256, muladd,
    /// square-to-len), or any other kernel list `report` takes (built-in or registered names,
    /// `.clif` files or directories, `file.clif:function`), timed on its own cases per
    /// `--strategy` with stock Cranelift beside.
    pub kernel: KernelChoice,
    /// Sizes, comma-separated. md5: message bytes with an optional k (KiB) or m (MiB) suffix
    /// [default: 64,1k,16k,1m]; square-to-len, muladd: `seed` (the JDK review's 1075-bit
    /// operand) or operand bits, a multiple of 32 [default: seed,256,1024,2048,4096,8192].
    pub size: Option<String>,
    /// Output format.
    pub format: Format,
    /// Also draw MB/s per implementation and size into this SVG file.
    pub plot: Option<PathBuf>,
    /// Repetitions; medians are over repetitions [default: 7, or 2 with --quick].
    pub reps: Option<u32>,
    /// Skip the HotSpot rows (they take a JVM start-up and warm-up per repetition).
    pub no_java: bool,
    /// Short budgets and few repetitions: checks the machinery, not for numbers.
    pub quick: bool,
    /// Only these rows (comma-separated names; OpenSSL is always timed as the reference).
    pub impls: Option<String>,
    /// md5: also time `schedlab/<NAME>` for each of these scheduling strategies (comma-separated;
    /// registered ones included): the `Md5` library's default configuration scheduled with it.
    /// Kept beside the rows `--impl` selects.
    pub strategy: Option<String>,
    /// Report deterministic figures instead: callgrind instructions and llvm-mca cycles per block.
    pub callgrind: bool,
    /// Instead: measured cycles per hot-loop iteration of every strategy's MD5, SHA-256, mulAdd
    /// and squareToLen, and of six ordinary loops (`tests/clif/loops`), beside each static
    /// model's figure (schedlab's bound, llvm-mca) and its relative error.
    pub validate_model: bool,
    /// Internal: hash one message with one implementation (the callgrind child).
    pub worker: Option<String>,
    /// Internal: message length in 64-byte blocks for --worker.
    pub blocks: u64,
    /// Internal: time one SHA-256 implementation in this process (the OpenSSL-masked child).
    pub sha256_worker: Option<String>,
    /// Internal: the --sha256-worker's sizes, warm-up and budget.
    pub worker_input: Vec<String>,
}

/// What `schedlab bench` times.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchKernel {
    /// One-shot MD5 against OpenSSL, `md-5` and HotSpot's MD5 intrinsic.
    Md5,
    /// `BigInteger.squareToLen` against `num-bigint` and HotSpot's SquareToLen/MulAdd
    /// intrinsics.
    SquareToLen,
    /// `BigInteger.mulAdd` against `num-bigint` and HotSpot's MulAdd intrinsic.
    #[value(name = "muladd")]
    MulAdd,
    /// Multi-buffer MD5 (4 or 8 lanes, aggregate) against OpenSSL's single-stream `MD5()`.
    #[value(name = "md5-mb")]
    Md5Mb,
    /// MD5 streams at once through the library's lane engine (1, 4, 8, 16, 64 streams),
    /// aggregate, against OpenSSL's single-stream `MD5()`.
    #[value(name = "md5-streams")]
    Md5Streams,
    /// SHA-256 per scheduling strategy against OpenSSL (with and without SHA extensions),
    /// `sha2` (default and portable backend) and HotSpot's SHA-256 intrinsic.
    Sha256,
}

/// What `--kernel` selected.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelChoice {
    /// A bench with its own workload and reference rows.
    Dedicated(BenchKernel),
    /// Any other kernels, timed on their own cases ([`any`]).
    Any(String),
}

impl PartialEq<BenchKernel> for KernelChoice {
    fn eq(&self, other: &BenchKernel) -> bool {
        matches!(self, KernelChoice::Dedicated(k) if k == other)
    }
}

/// Parses `--kernel`: a dedicated bench by name, anything else as a kernel list for [`any`].
pub fn parse_bench_kernel(text: &str) -> Result<KernelChoice, String> {
    use clap::ValueEnum;
    Ok(match BenchKernel::from_str(text, false) {
        Ok(k) => KernelChoice::Dedicated(k),
        Err(_) => KernelChoice::Any(text.to_string()),
    })
}

/// How results are printed.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned plain text.
    Table,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One JSON document.
    Json,
}

/// Time budgets of one run.
#[derive(Clone, Copy, Debug)]
struct Budgets {
    reps: u32,
    /// Per in-process sample.
    sample: Duration,
    /// JVM warm-up before its timed loops.
    jvm_warmup: Duration,
    /// Per size in a JVM process.
    jvm_sample: Duration,
    /// Compilations per configuration for the compile-time figure.
    compile_runs: usize,
}

impl Budgets {
    /// The run's [`Meta`]: these budgets, the machine (CPU, load average now, after the run),
    /// and what the run found.
    fn meta(
        &self,
        quick: bool,
        load_start: Option<f64>,
        clock_ghz: Option<f64>,
        first_compile_us: Option<f64>,
        java_version: Option<String>,
        default_config: String,
    ) -> Meta {
        Meta {
            cpu: cpu_model(),
            load_start,
            load_end: load_average(),
            clock_ghz,
            budgets: self.reported(),
            compile_runs: self.compile_runs,
            first_compile_us,
            java_version,
            quick,
            default_config,
        }
    }

    /// These budgets as the reports state them.
    fn reported(&self) -> ReportedBudgets {
        ReportedBudgets {
            reps: self.reps,
            sample_ms: self.sample.as_secs_f64() * 1e3,
            jvm_warmup_ms: self.jvm_warmup.as_secs_f64() * 1e3,
            jvm_sample_ms: self.jvm_sample.as_secs_f64() * 1e3,
        }
    }

    /// The JVM harness (none with `--no-java` or no JVM variant to run, saying so) and the
    /// progress bar: `cells` in-process rows × sizes to calibrate, then per repetition those
    /// and one JVM run per variant.
    fn jvm_and_progress<H>(
        &self,
        no_java: bool,
        variants: usize,
        cells: usize,
        prepare: impl FnOnce() -> Result<H, String>,
    ) -> (Result<H, String>, indicatif::ProgressBar) {
        let jvm = if no_java || variants == 0 {
            Err("skipped (--no-java)".to_string())
        } else {
            prepare()
        };
        let jvm_runs = if jvm.is_ok() { variants } else { 0 };
        let steps = cells + self.reps as usize * (cells + jvm_runs);
        (jvm, progress_bar(steps as u64, "bench"))
    }

    /// The measurement loop's share: repetitions and the in-process sample.
    fn measurement(&self) -> crate::Budgets {
        crate::Budgets {
            reps: self.reps as usize,
            sample: self.sample,
        }
    }

    fn new(quick: bool, reps: Option<u32>) -> Result<Self, CliError> {
        let mut b = if quick {
            Budgets {
                reps: 2,
                sample: Duration::from_millis(5),
                jvm_warmup: Duration::from_millis(300),
                jvm_sample: Duration::from_millis(20),
                compile_runs: 2,
            }
        } else {
            Budgets {
                reps: 7,
                sample: Duration::from_millis(100),
                jvm_warmup: Duration::from_millis(2500),
                jvm_sample: Duration::from_millis(200),
                compile_runs: 9,
            }
        };
        if let Some(r) = reps {
            if r == 0 {
                return Err(CliError::usage("--reps must be at least 1"));
            }
            b.reps = r;
        }
        Ok(b)
    }
}

/// Runs `schedlab bench`.
/// Runs the hidden `schedlab compile-probe`: one compile of the library's default
/// configuration in this process, phase timings as JSON on stdout.
pub fn compile_probe() -> Result<(), CliError> {
    println!("{}", compile_time::probe().map_err(CliError::failure)?);
    Ok(())
}

/// Runs `schedlab bench`.
pub fn run(args: BenchArgs) -> Result<(), CliError> {
    if let Some(name) = &args.worker {
        return callgrind::worker(name, args.blocks);
    }
    if args.validate_model {
        return validate::run(&args);
    }
    if let KernelChoice::Any(spec) = &args.kernel {
        return any::run(spec, &args);
    }
    if args.kernel == BenchKernel::Md5Mb {
        return multi::run(&args);
    }
    if args.kernel == BenchKernel::Md5Streams {
        return streams::run(&args);
    }
    if args.kernel == BenchKernel::Sha256 {
        return sha256::run(&args);
    }
    if args.kernel != BenchKernel::Md5 {
        return bigint::run(&args);
    }
    let sizes = parse_sizes(args.size.as_deref().unwrap_or("64,1k,16k,1m"))?;
    let wanted = parse_impl_filter(args.impls.as_deref())?;
    let budgets = Budgets::new(args.quick, args.reps)?;
    let extra_strategies = match &args.strategy {
        Some(names) => schedlab_sources::kernel::strategies(Some(names))?,
        None => Vec::new(),
    };
    let extra: Vec<String> = extra_strategies
        .iter()
        .map(|s| format!("schedlab/{s}"))
        .collect();
    let keep = |name: &str| {
        name == OPENSSL
            || extra.iter().any(|x| x == name)
            || wanted.as_ref().is_none_or(|w| w.iter().any(|x| x == name))
    };
    let mut all_configs = impls::configurations();
    impls::add_strategy_rows(
        &mut all_configs,
        &impls::library_default(),
        &extra_strategies,
    );
    let impls = impls::rust_impls_of(all_configs.clone(), keep).map_err(CliError::failure)?;
    let configs: Vec<_> = all_configs.into_iter().filter(|c| keep(&c.name)).collect();
    check_digests(&impls, &sizes)?;

    if args.callgrind {
        let progress = progress_bar(impls.len() as u64 * 3, "callgrind");
        let rows = callgrind::run(&impls, &configs, &progress)?;
        progress.finish_and_clear();
        print!(
            "{}",
            output::render_static(&rows, &callgrind::mca_columns(), args.format)
        );
        return Ok(());
    }

    let jvm_variants: Vec<_> = java::VARIANTS
        .iter()
        .filter(|v| {
            wanted
                .as_ref()
                .is_none_or(|w| w.iter().any(|x| x == v.name))
        })
        .copied()
        .collect();
    let load_start = load_average();
    let mut compile =
        compile_time::measure_md5(&configs, budgets.compile_runs).map_err(CliError::failure)?;
    if keep(impls::CRANELIFT_SPEED) {
        compile.push(
            compile_time::measure_stock_md5(budgets.compile_runs).map_err(CliError::failure)?,
        );
    }
    let first_compile = compile_time::first_compile_in_fresh_processes(budgets.compile_runs)
        .map_err(CliError::failure)?;
    let (jvm, progress) = budgets.jvm_and_progress(
        args.no_java,
        jvm_variants.len(),
        sizes.len() * impls.len(),
        java::Harness::prepare,
    );

    let buffers: Vec<Vec<u8>> = sizes.iter().map(|&s| impls::buffer(s)).collect();
    let openssl_hex: Vec<String> = buffers
        .iter()
        .map(|b| impls::hex(&impls::openssl_digest(b)))
        .collect();
    // Rows: the in-process implementations, then the JVM variants (external rows, recorded
    // between repetitions; a repetition whose JVM run failed keeps NaN).
    let mut jvm_errors: Vec<Option<String>> = vec![None; jvm_variants.len()];
    let mut java_version = None;
    let mut wrong_digest = None;
    let mut work = crate::Grid {
        rows: impls.len(),
        sizes: buffers.len(),
        time: |row: usize, size: usize, n: u64| {
            measure::time_hashes(&impls[row], &buffers[size], n)
        },
    };
    let samples = crate::run(
        &mut work,
        &budgets.measurement(),
        jvm_variants.len(),
        &progress,
        |rep, external| {
            let Ok(harness) = &jvm else { return };
            let order: Vec<usize> = (0..jvm_variants.len()).collect();
            let name = |vi: usize| jvm_variants[vi].name;
            crate::run_external_rows(rep, &order, &progress, name, &mut jvm_errors, |vi, _| {
                let variant = &jvm_variants[vi];
                let run = harness.run(variant, &sizes, budgets.jvm_warmup, budgets.jvm_sample)?;
                java_version.get_or_insert(run.java_version.clone());
                for s in &run.samples {
                    let Some(si) = sizes.iter().position(|&x| x == s.size) else {
                        continue;
                    };
                    if s.digest != openssl_hex[si] {
                        wrong_digest.get_or_insert(format!(
                            "{} hashed {} bytes to {}, OpenSSL to {}",
                            variant.name, s.size, s.digest, openssl_hex[si]
                        ));
                    }
                    external.record(vi, si, s.size as f64 / (s.mb_per_s * 1e6));
                }
                Ok(())
            });
        },
    );
    progress.finish_and_clear();
    if let Some(message) = wrong_digest {
        return Err(CliError::failure(message));
    }

    let clock_ghz = samples.clock_ghz();
    let openssl_row = impls
        .iter()
        .position(|i| i.name == OPENSSL)
        .ok_or_else(|| CliError::failure("the OpenSSL reference row is missing"))?;
    let mut rows = Vec::new();
    let mut row_names: Vec<(String, Kind, Option<String>, Option<String>)> = impls
        .iter()
        .map(|i| (i.name.clone(), i.kind, None, None))
        .collect();
    for (vi, v) in jvm_variants.iter().enumerate() {
        let absent = match &jvm {
            Err(reason) => Some(reason.clone()),
            Ok(_) => None,
        };
        let note = absent.is_none().then(|| {
            format!(
                "measured in a separate JVM process per repetition: java {}",
                v.flags.join(" ")
            )
        });
        let absent = absent.or_else(|| {
            let all_failed =
                (0..sizes.len()).all(|si| samples.finite(impls.len() + vi, si).is_empty());
            all_failed.then(|| jvm_errors[vi].clone().unwrap_or_default())
        });
        row_names.push((v.name.to_string(), Kind::Jvm, note, absent));
    }
    for (ri, (name, kind, note, absent)) in row_names.into_iter().enumerate() {
        let warning = if ri >= impls.len() {
            jvm_errors[ri - impls.len()]
                .clone()
                .filter(|_| absent.is_none())
        } else {
            None
        };
        let cells = sizes
            .iter()
            .enumerate()
            .map(|(si, &size)| {
                let to_mb_per_s = |seconds: f64| size as f64 / seconds / 1e6;
                let mb_per_s = samples.median_of(ri, si, to_mb_per_s);
                Cell {
                    size,
                    mb_per_s,
                    ratio_to_openssl: samples.speedup(ri, openssl_row, si),
                    cycles_per_block: mb_per_s
                        .zip(clock_ghz)
                        .map(|(mbps, ghz)| 64.0 * ghz * 1e3 / mbps),
                    samples: samples
                        .finite(ri, si)
                        .into_iter()
                        .map(to_mb_per_s)
                        .collect(),
                }
            })
            .collect();
        let compile = compile.iter().find(|c| c.name == name).cloned();
        rows.push(Row {
            name,
            kind,
            note,
            absent,
            warning,
            compile,
            cells,
        });
    }
    let report = BenchReport {
        meta: budgets.meta(
            args.quick,
            load_start,
            clock_ghz,
            Some(first_compile),
            java_version,
            impls::describe(&impls::library_default()),
        ),
        sizes,
        rows,
    };
    if let Some(path) = &args.plot {
        plot::draw(path, &report)
            .map_err(|e| CliError::failure(format!("cannot draw {}: {e}", path.display())))?;
    }
    print!("{}", output::render(&report, args.format));
    Ok(())
}

/// Every in-process implementation must produce OpenSSL's digest before it is timed.
fn check_digests(impls: &[RustImpl], sizes: &[usize]) -> Result<(), CliError> {
    for &size in sizes {
        let buf = impls::buffer(size);
        let reference = impls::openssl_digest(&buf);
        for imp in impls {
            let got = imp.digest(&buf);
            if got != reference {
                return Err(CliError::failure(format!(
                    "{} hashed {size} bytes to {}, OpenSSL to {}",
                    imp.name,
                    impls::hex(&got),
                    impls::hex(&reference)
                )));
            }
        }
    }
    Ok(())
}

const SIZE_HELP: &str = "valid sizes: a positive byte count with an optional k (KiB) or m (MiB) \
                         suffix, comma-separated, e.g. 64,1k,16k,1m";

/// Parses `64,1k,16k,1m` (k = 1024, m = 1024²).
fn parse_sizes(text: &str) -> Result<Vec<usize>, CliError> {
    let mut sizes = Vec::new();
    for part in text.split(',').map(str::trim) {
        let lower = part.to_ascii_lowercase();
        let (digits, unit) = match lower.strip_suffix('k') {
            Some(d) => (d, 1024),
            None => match lower.strip_suffix('m') {
                Some(d) => (d, 1024 * 1024),
                None => (lower.as_str(), 1),
            },
        };
        let size = digits
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_mul(unit))
            .filter(|&n| n > 0 && n <= i32::MAX as usize)
            .ok_or_else(|| CliError::usage(format!("bad --size `{part}`; {SIZE_HELP}")))?;
        if !sizes.contains(&size) {
            sizes.push(size);
        }
    }
    Ok(sizes)
}

/// Parses `--impl`, rejecting names that are no row.
fn parse_impl_filter(text: Option<&str>) -> Result<Option<Vec<String>>, CliError> {
    let Some(text) = text else { return Ok(None) };
    let mut valid = impls::rust_impl_names();
    valid.extend(java::VARIANTS.iter().map(|v| v.name.to_string()));
    let names: Vec<String> = text.split(',').map(|s| s.trim().to_string()).collect();
    for n in &names {
        if !valid.contains(n) {
            return Err(CliError::usage(format!(
                "unknown implementation `{n}`; valid: {}",
                valid.join(", ")
            )));
        }
    }
    Ok(Some(names))
}

use crate::host::{cpu_model, load_average, progress_bar};
pub(crate) use crate::rotated;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(
            parse_sizes("64,1k,16K,1m").ok(),
            Some(vec![64, 1024, 16384, 1 << 20])
        );
        for bad in ["", "0", "1x", "k", "-1", "3000m"] {
            let err = parse_sizes(bad).err().map(|e| (e.code, e.message));
            assert!(
                matches!(&err, Some((2, m)) if m.contains("valid sizes")),
                "{bad}: {err:?}"
            );
        }
    }
}
