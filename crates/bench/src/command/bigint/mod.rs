//! `schedlab bench --kernel square-to-len | muladd`: `BigInteger.squareToLen` / `mulAdd` as
//! schedlab JIT-compiles them (per pipeline configuration) against `num-bigint` and HotSpot
//! with its `SquareToLen`/`MulAdd` intrinsics on and off, mirroring the seed's
//! `TestSquareToLen` (the review's 1075-bit operand, and 256..8192-bit operands).
//!
//! Same method as the MD5 bench: every in-process row is checked against the Rust
//! transcription of the Java code (itself checked against `num-bigint`), warmed up and
//! calibrated; each repetition times every row once per size in a rotated order, then runs one
//! JVM process per variant (whose results must hash to the same `BigInteger.hashCode`).
//! Reported: median ns per call, and the median over repetitions of each speed ratio
//! (reference ns ÷ row ns in the same repetition) to the JVM with intrinsics, without, and
//! `num-bigint`.

use crate::bigint::{BigKernel, jvm as java, rows as impls};
mod output;

use super::impls::Kind;
use super::{BenchArgs, BenchKernel, Budgets, KernelChoice};
use crate::CliError;
use impls::{Expected, NUM_BIGINT, Operand, Work};
use output::{BigCell, BigReport, BigRow};

/// The reference rows ratios are taken against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    /// HotSpot with both intrinsics.
    JvmIntrinsic,
    /// HotSpot without them (C2).
    JvmNoIntrinsic,
    /// `num-bigint`.
    NumBigint,
}

impl Reference {
    /// All references, in column order.
    pub const ALL: [Reference; 3] = [
        Reference::JvmIntrinsic,
        Reference::JvmNoIntrinsic,
        Reference::NumBigint,
    ];

    /// The reference's row name.
    pub fn row(self) -> &'static str {
        match self {
            Reference::JvmIntrinsic => java::VARIANTS[0].name,
            Reference::JvmNoIntrinsic => java::VARIANTS[1].name,
            Reference::NumBigint => NUM_BIGINT,
        }
    }
}

const SIZE_HELP: &str = "valid sizes: `seed` (the review's 1075-bit operand) or operand bits, \
                         a multiple of 32 from 32 to 131072 (optional k suffix = ×1024), \
                         comma-separated, e.g. seed,256,1024,2048,4096,8192";

/// Parses `seed,256,1k,…` into operands.
fn parse_sizes(text: &str) -> Result<Vec<Operand>, CliError> {
    let mut sizes: Vec<Operand> = Vec::new();
    for part in text.split(',').map(str::trim) {
        let lower = part.to_ascii_lowercase();
        let op = if lower == "seed" {
            Operand::new("seed", None)
        } else {
            let (digits, unit) = match lower.strip_suffix('k') {
                Some(d) => (d, 1024),
                None => (lower.as_str(), 1),
            };
            let bits = digits
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_mul(unit))
                .filter(|&b| b > 0 && b % 32 == 0 && b <= 131_072)
                .ok_or_else(|| CliError::usage(format!("bad --size `{part}`; {SIZE_HELP}")))?;
            Operand::new(&bits.to_string(), Some(bits))
        };
        if sizes.iter().all(|s| s.label != op.label) {
            sizes.push(op);
        }
    }
    Ok(sizes)
}

/// Parses `--impl` against this kernel's rows.
fn parse_impl_filter(
    text: Option<&str>,
    kernel: BigKernel,
) -> Result<Option<Vec<String>>, CliError> {
    let Some(text) = text else { return Ok(None) };
    let mut valid = impls::names();
    for v in &java::VARIANTS {
        for mode in kernel.jvm_modes() {
            valid.push(v.row_name(mode, kernel.jvm_modes()[0]));
        }
    }
    let names: Vec<String> = text.split(',').map(|s| s.trim().to_string()).collect();
    for n in &names {
        if !valid.contains(n) {
            return Err(CliError::usage(format!(
                "unknown implementation `{n}` for --kernel {}; valid: {}",
                kernel.name(),
                valid.join(", ")
            )));
        }
    }
    Ok(Some(names))
}

/// One JVM row: a variant's mode.
struct JvmRow {
    variant: usize,
    mode: &'static str,
    name: String,
}

/// Runs the BigInteger bench for `args.kernel`.
pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    let kernel = match args.kernel {
        KernelChoice::Dedicated(BenchKernel::SquareToLen) => BigKernel::SquareToLen,
        KernelChoice::Dedicated(BenchKernel::MulAdd) => BigKernel::MulAdd,
        _ => {
            return Err(CliError::failure(
                "the MD5 and SHA-256 benches are not BigInteger ones",
            ));
        }
    };
    if args.callgrind {
        return Err(CliError::usage(
            "--callgrind counts MD5 only; use it without --kernel or with --kernel md5",
        ));
    }
    let sizes = parse_sizes(
        args.size
            .as_deref()
            .unwrap_or("seed,256,1024,2048,4096,8192"),
    )?;
    let wanted = parse_impl_filter(args.impls.as_deref(), kernel)?;
    let budgets = Budgets::new(args.quick, args.reps)?;
    // num-bigint is always timed: it is the reference that needs no JVM.
    let keep = |name: &str| {
        name == NUM_BIGINT || wanted.as_ref().is_none_or(|w| w.iter().any(|x| x == name))
    };
    let configs: Vec<_> = impls::configurations()
        .into_iter()
        .filter(|c| keep(&c.name))
        .collect();
    let rows = impls::rows(kernel, &configs, keep).map_err(CliError::failure)?;
    let expected: Vec<Expected> = sizes
        .iter()
        .map(|op| impls::expected(kernel, op))
        .collect::<Result<_, _>>()
        .map_err(CliError::failure)?;
    for (op, want) in sizes.iter().zip(&expected) {
        for row in &rows {
            row.check(kernel, op, want).map_err(CliError::failure)?;
        }
    }

    let primary = kernel.jvm_modes()[0];
    let jvm_rows: Vec<JvmRow> = java::VARIANTS
        .iter()
        .enumerate()
        .flat_map(|(vi, v)| {
            kernel.jvm_modes().iter().map(move |&mode| JvmRow {
                variant: vi,
                mode,
                name: v.row_name(mode, primary),
            })
        })
        .filter(|r| keep(&r.name))
        .collect();
    // A variant runs if any of its rows is wanted, with only the wanted modes.
    let variant_modes: Vec<Vec<&str>> = (0..java::VARIANTS.len())
        .map(|vi| {
            jvm_rows
                .iter()
                .filter(|r| r.variant == vi)
                .map(|r| r.mode)
                .collect()
        })
        .collect();
    let run_variants: Vec<usize> = (0..java::VARIANTS.len())
        .filter(|&vi| !variant_modes[vi].is_empty())
        .collect();

    let load_start = super::load_average();
    let compile = super::compile_time::measure(
        &configs,
        budgets.compile_runs,
        match kernel {
            BigKernel::SquareToLen => schedlab_kernels::bigint::square_to_len,
            BigKernel::MulAdd => schedlab_kernels::bigint::mul_add,
        },
    )
    .map_err(CliError::failure)?;
    let (jvm, progress) = budgets.jvm_and_progress(
        args.no_java,
        run_variants.len(),
        sizes.len() * rows.len(),
        java::Harness::prepare,
    );

    let mut operands: Vec<Work> = sizes
        .iter()
        .map(|op| Work::new(kernel, op))
        .collect::<Result<_, _>>()
        .map_err(CliError::failure)?;
    let mut work = crate::Grid {
        rows: rows.len(),
        sizes: operands.len(),
        time: |row: usize, size: usize, n: u64| rows[row].time(&mut operands[size], n),
    };
    // Rows: the in-process rows, then the JVM rows (external, recorded between repetitions;
    // a repetition whose JVM run failed keeps NaN). Samples are seconds per call.
    let mut jvm_errors: Vec<Option<String>> = vec![None; java::VARIANTS.len()];
    let mut java_version = None;
    let mut wrong_result = None;
    let samples = crate::run(
        &mut work,
        &budgets.measurement(),
        jvm_rows.len(),
        &progress,
        |rep, external| {
            let Ok(harness) = &jvm else { return };
            let name = |vi: usize| java::VARIANTS[vi].name;
            crate::run_external_rows(
                rep,
                &run_variants,
                &progress,
                name,
                &mut jvm_errors,
                |vi, note| {
                    let variant = &java::VARIANTS[vi];
                    let labels: Vec<String> = sizes.iter().map(|s| s.label.clone()).collect();
                    let run = harness.run(
                        variant,
                        &labels,
                        &variant_modes[vi],
                        budgets.jvm_warmup,
                        budgets.jvm_sample,
                    )?;
                    java_version.get_or_insert(run.java_version.clone());
                    for (mode, reason) in &run.skipped {
                        note.get_or_insert(format!("mode {mode} skipped: {reason}"));
                    }
                    for s in &run.samples {
                        let Some(si) = sizes.iter().position(|x| x.label == s.size) else {
                            continue;
                        };
                        let Some(jr) = jvm_rows
                            .iter()
                            .position(|r| r.variant == vi && r.mode == s.mode)
                        else {
                            continue;
                        };
                        if s.digest != expected[si].digest {
                            wrong_result.get_or_insert(format!(
                                "{} ({}) gave a result hashing to {} at size {}, schedlab's \
                             reference to {}",
                                variant.name, s.mode, s.digest, s.size, expected[si].digest
                            ));
                        }
                        external.record(jr, si, s.ns_per_op * 1e-9);
                    }
                    Ok(())
                },
            );
        },
    );
    progress.finish_and_clear();
    if let Some(message) = wrong_result {
        return Err(CliError::failure(message));
    }

    let mut names: Vec<(String, Kind)> = rows.iter().map(|r| (r.name.clone(), r.kind)).collect();
    names.extend(jvm_rows.iter().map(|r| (r.name.clone(), Kind::Jvm)));
    let reference_row = |r: Reference| names.iter().position(|(n, _)| n == r.row());
    let clock_ghz = samples.clock_ghz();
    let mut report_rows = Vec::new();
    for (ri, (name, kind)) in names.iter().enumerate() {
        let jvm_row = ri.checked_sub(rows.len()).map(|j| &jvm_rows[j]);
        let (note, absent, warning) = match jvm_row {
            None => (None, None, None),
            Some(jr) => {
                let variant = &java::VARIANTS[jr.variant];
                let note = format!(
                    "measured in a separate JVM process per repetition ({} mode of \
                     BigIntegerBench.java): java {}",
                    jr.mode,
                    java::java_options(variant).join(" ")
                );
                let all_failed = (0..sizes.len()).all(|si| samples.finite(ri, si).is_empty());
                let absent = match &jvm {
                    Err(reason) => Some(reason.clone()),
                    Ok(_) if all_failed => Some(jvm_errors[jr.variant].clone().unwrap_or_default()),
                    Ok(_) => None,
                };
                let warning = jvm_errors[jr.variant].clone().filter(|_| absent.is_none());
                (absent.is_none().then_some(note), absent, warning)
            }
        };
        let cells = sizes
            .iter()
            .enumerate()
            .map(|(si, op)| {
                let ratios = Reference::ALL.map(|r| samples.speedup(ri, reference_row(r)?, si));
                let ns_per_op = samples.median_of(ri, si, |seconds| seconds * 1e9);
                BigCell {
                    label: op.label.clone(),
                    ints: op.mag.len(),
                    bits: op.bits(),
                    ns_per_op,
                    ratios,
                    cycles_per_step: ns_per_op
                        .zip(clock_ghz)
                        .map(|(ns, ghz)| ns * ghz / kernel.steps(op.mag.len())),
                    samples: samples
                        .finite(ri, si)
                        .into_iter()
                        .map(|seconds| seconds * 1e9)
                        .collect(),
                }
            })
            .collect();
        report_rows.push(BigRow {
            name: name.clone(),
            kind: *kind,
            note,
            absent,
            warning,
            compile: compile.iter().find(|c| &c.name == name).cloned(),
            cells,
        });
    }
    let report = BigReport {
        kernel: kernel.name(),
        meta: budgets.meta(
            args.quick,
            load_start,
            clock_ghz,
            None,
            java_version,
            super::impls::describe(&schedlab_backend::pipeline::PipelineConfig::default()),
        ),
        rows: report_rows,
    };
    if let Some(path) = &args.plot {
        output::plot(path, &report)
            .map_err(|e| CliError::failure(format!("cannot draw {}: {e}", path.display())))?;
    }
    print!("{}", output::render(&report, args.format));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_seed_and_bits() {
        let labels = |t: &str| {
            parse_sizes(t).ok().map(|v| {
                v.into_iter()
                    .map(|o| (o.label, o.mag.len()))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            labels("seed, 256,1k,seed"),
            Some(vec![
                ("seed".to_string(), 34),
                ("256".to_string(), 8),
                ("1024".to_string(), 32)
            ])
        );
        for bad in ["", "0", "33", "1m", "x", "262144"] {
            let err = parse_sizes(bad).err().map(|e| (e.code, e.message));
            assert!(
                matches!(&err, Some((2, m)) if m.contains("valid sizes")),
                "{bad}: {err:?}"
            );
        }
    }

    #[test]
    fn impl_filter_knows_the_jvm_mode_rows() {
        let ok = parse_impl_filter(
            Some("hotspot/intrinsic,hotspot/no-intrinsic/multiply,num-bigint"),
            BigKernel::SquareToLen,
        );
        assert!(ok.is_ok());
        let err = parse_impl_filter(Some("hotspot/intrinsic/multiply"), BigKernel::MulAdd)
            .err()
            .map(|e| (e.code, e.message));
        assert!(
            matches!(&err, Some((2, m)) if m.contains("num-bigint")),
            "{err:?}"
        );
    }
}
