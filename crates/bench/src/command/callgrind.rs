//! Deterministic figures: instructions per 64-byte block under `valgrind --tool=callgrind`,
//! and llvm-mca cycles per block of each schedlab configuration's hot loop.
//!
//! Each implementation runs in a child `schedlab bench --worker NAME --blocks N` under
//! callgrind, with collection switched on only inside [`schedlab_callgrind_region`] (one
//! one-shot hash of an N-block message). Two runs with different N, subtracted, cancel the
//! call, padding and finalisation costs, leaving the cost of one more block.

use super::impls::{self, Kind, NamedConfig, RustImpl};
use crate::CliError;
use schedlab_backend::Target;
use schedlab_cost::mca::{mca_cpus, mca_cycles};
use std::path::Path;
use std::process::Command;

/// Message lengths (in blocks) of the two callgrind runs: one block (also reported as the cost
/// of a 64-byte message) and 1 + [`BLOCK_DIFF`].
const SHORT_BLOCKS: u64 = 1;
/// Extra blocks hashed by the long run.
const BLOCK_DIFF: u64 = 1024;

/// Targets whose llvm-mca figures are reported.
const MCA_TARGETS: [Target; 2] = [Target::X86_64, Target::Aarch64];

/// One row of the deterministic table.
#[derive(Clone, Debug)]
pub struct StaticRow {
    /// Implementation name.
    pub name: String,
    /// Where its code comes from.
    pub kind: Kind,
    /// Instructions per additional 64-byte block.
    pub instructions_per_block: f64,
    /// Instructions of a one-shot hash of a 64-byte message (two compressions with padding).
    pub instructions_64b_message: u64,
    /// llvm-mca cycles per block per `target/cpu` (schedlab rows only); `Err` says why absent.
    pub mca: Vec<(String, Result<f64, String>)>,
}

/// The column names of the llvm-mca figures, `target/cpu`.
pub fn mca_columns() -> Vec<String> {
    MCA_TARGETS
        .iter()
        .flat_map(|t| mca_cpus(*t).iter().map(move |cpu| format!("{t}/{cpu}")))
        .collect()
}

/// The hidden worker: hashes a zeroed `blocks`-block message once with `name`, prints the digest.
pub fn worker(name: &str, blocks: u64) -> Result<(), CliError> {
    let imps = impls::rust_impls_matching(|n| n == name).map_err(CliError::failure)?;
    let imp = imps.first().ok_or_else(|| {
        CliError::usage(format!(
            "unknown implementation `{name}`; valid: {}",
            impls::rust_impl_names().join(", ")
        ))
    })?;
    let len = usize::try_from(blocks.saturating_mul(64))
        .map_err(|_| CliError::usage("--blocks is too large"))?;
    let data = vec![0u8; len];
    let digest = schedlab_callgrind_region(imp, &data);
    println!("{}", impls::hex(&digest));
    Ok(())
}

/// The region callgrind collects in (`--toggle-collect`); an unmangled name to match on.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn schedlab_callgrind_region(imp: &RustImpl, data: &[u8]) -> [u8; 16] {
    std::hint::black_box(imp.digest(std::hint::black_box(data)))
}

/// Runs every implementation in `impls` under callgrind, and llvm-mca on each configuration.
pub fn run(
    impls: &[RustImpl],
    configs: &[NamedConfig],
    progress: &indicatif::ProgressBar,
) -> Result<Vec<StaticRow>, CliError> {
    let valgrind = super::java::find_on_path("valgrind").ok_or_else(|| {
        CliError::failure(
            "valgrind not found on PATH: `--callgrind` needs it (Debian: apt-get install valgrind)",
        )
    })?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failure(format!("cannot locate the schedlab binary: {e}")))?;
    let dir = tempfile::Builder::new()
        .prefix("schedlab-callgrind")
        .tempdir()
        .map_err(|e| CliError::failure(format!("cannot create a temporary directory: {e}")))?;
    let mut rows = Vec::new();
    for imp in impls {
        let short = instructions(&valgrind, &exe, dir.path(), &imp.name, SHORT_BLOCKS)?;
        progress.inc(1);
        let long = instructions(
            &valgrind,
            &exe,
            dir.path(),
            &imp.name,
            SHORT_BLOCKS + BLOCK_DIFF,
        )?;
        progress.inc(1);
        let mca = match configs.iter().find(|c| c.name == imp.name) {
            Some(named) => mca_figures(named),
            None => Vec::new(),
        };
        progress.inc(1);
        rows.push(StaticRow {
            name: imp.name.clone(),
            kind: imp.kind,
            instructions_per_block: (long as f64 - short as f64) / BLOCK_DIFF as f64,
            instructions_64b_message: short,
            mca,
        });
    }
    Ok(rows)
}

/// Instructions callgrind counts inside the region for one worker run.
fn instructions(
    valgrind: &Path,
    exe: &Path,
    dir: &Path,
    name: &str,
    blocks: u64,
) -> Result<u64, CliError> {
    let out_file = dir.join(format!("callgrind.{}.{blocks}", sanitize(name)));
    super::java::successful_output(
        Command::new(valgrind)
            .arg("--tool=callgrind")
            .arg("-q")
            .arg(format!("--callgrind-out-file={}", out_file.display()))
            .arg("--collect-atstart=no")
            .arg("--toggle-collect=schedlab_callgrind_region")
            .arg(exe)
            .args(["bench", "--worker", name, "--blocks", &blocks.to_string()]),
        valgrind,
        |status| format!("callgrind run of {name} ({blocks} blocks) failed ({status})"),
    )
    .map_err(CliError::failure)?;
    let text = std::fs::read_to_string(&out_file)
        .map_err(|e| CliError::failure(format!("cannot read {}: {e}", out_file.display())))?;
    let total = parse_total(&text).ok_or_else(|| {
        CliError::failure(format!(
            "no instruction total in {} (callgrind output format changed?)",
            out_file.display()
        ))
    })?;
    if total == 0 {
        return Err(CliError::failure(format!(
            "callgrind collected nothing for {name}: the region symbol was not found"
        )));
    }
    Ok(total)
}

/// The `totals:` (or older `summary:`) instruction count of a callgrind output file.
fn parse_total(text: &str) -> Option<u64> {
    let find = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
    };
    find("totals:").or_else(|| find("summary:"))
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// llvm-mca cycles per block of `named` on every CPU model of [`MCA_TARGETS`].
fn mca_figures(named: &NamedConfig) -> Vec<(String, Result<f64, String>)> {
    let mut out = Vec::new();
    for target in MCA_TARGETS {
        let func = schedlab_kernels::md5::compress_multi_block();
        let compiled = schedlab_backend::pipeline::run(func, target, &named.config)
            .map(|a| a.compiled)
            .map_err(|e| e.to_string());
        for cpu in mca_cpus(target) {
            let cycles = match &compiled {
                Ok(c) => mca_cycles(c, cpu).map_err(|e| e.to_string()),
                Err(e) => Err(e.clone()),
            };
            out.push((format!("{target}/{cpu}"), cycles));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_totals_or_summary() {
        assert_eq!(parse_total("events: Ir\nsummary: 1234\n"), Some(1234));
        assert_eq!(
            parse_total("events: Ir\ntotals: 99\nsummary: 1\n"),
            Some(99)
        );
        assert_eq!(parse_total("events: Ir\n"), None);
    }
}
