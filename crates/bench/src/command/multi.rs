//! `schedlab bench --kernel md5-mb`: the multi-buffer kernel's aggregate throughput against
//! OpenSSL's single-stream `MD5()`, timed in the same repetition.
//!
//! A row is one lane count (4: one `i32x4` group, 8: two interleaved groups) × one scheduling
//! strategy; a sample hashes `lanes` messages of the row's size through the library's lane
//! scheduler (`MultiCompressor::digest_many`, padding included) and counts all their bytes.
//! OpenSSL hashes one message of that size per call. Each repetition times every row and
//! OpenSSL once per size, in an order rotated per repetition; reported are the median MB/s
//! and the median of each repetition's ratio to OpenSSL's sample of the same repetition.

use super::impls::{buffer, hex, openssl_digest};
use super::{BenchArgs, Budgets, Format, parse_sizes};
use crate::CliError;
use schedlab_backend::pipeline::PipelineConfig;
use schedlab_bench::measure::time_loop;
use schedlab_md5::{MultiCompressor, lane_config};
use serde_json::json;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The strategies timed by default (`--impl` selects rows by name).
const STRATEGIES: [&str; 4] = ["source", "remat-loads", "pressure", "list-latency"];

/// One compiled row.
struct MultiRow {
    name: String,
    lanes: usize,
    strategy: String,
    kernel: MultiCompressor,
    /// Wall time of the compile (IR build, passes, code generation), in milliseconds.
    compile_ms: f64,
}

/// Runs the multi-buffer bench.
pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    openssl_sys::init();
    let sizes = parse_sizes(args.size.as_deref().unwrap_or("4k,1m"))?;
    let budgets = Budgets::new(args.quick, args.reps)?;
    let wanted: Option<Vec<String>> = args
        .impls
        .as_deref()
        .map(|s| crate::kernel::split_list(s).map(str::to_string).collect());
    let mut rows = Vec::new();
    for groups in [1, 2] {
        for strategy in STRATEGIES {
            let lanes = 4 * groups;
            let name = format!("schedlab-mb/x{lanes}/{strategy}");
            if wanted.as_ref().is_some_and(|w| !w.contains(&name)) {
                continue;
            }
            let started = Instant::now();
            let kernel = MultiCompressor::compile(
                &lane_config(&PipelineConfig::with_strategy(strategy)),
                groups,
            )
            .map_err(|e| CliError::failure(format!("cannot compile {name}: {e}")))?;
            rows.push(MultiRow {
                name,
                lanes,
                strategy: strategy.to_string(),
                kernel,
                compile_ms: started.elapsed().as_secs_f64() * 1e3,
            });
        }
    }
    if rows.is_empty() {
        return Err(CliError::usage("no md5-mb row selected"));
    }
    check_digests(&rows, &sizes)?;

    // Rows: every compiled kernel, then OpenSSL; samples are seconds per call.
    let buffers: Vec<Vec<u8>> = sizes.iter().map(|&size| buffer(size)).collect();
    let mut work = MultiWork {
        rows: &rows,
        buffers: &buffers,
    };
    let samples = schedlab_bench::run(
        &mut work,
        &budgets.measurement(),
        0,
        &indicatif::ProgressBar::hidden(),
        |_, _| {},
    );
    let openssl_row = rows.len();
    let reps = budgets.reps;
    // [row][size] → median MB/s (all lanes' bytes) and ratio to OpenSSL's MB/s.
    let mbs: Vec<Vec<Option<f64>>> = (0..=rows.len())
        .map(|r| {
            let lanes = rows.get(r).map_or(1, |row| row.lanes);
            (0..sizes.len())
                .map(|si| samples.median_of(r, si, |t| mb_per_s_of(lanes * sizes[si], t)))
                .collect()
        })
        .collect();
    let ratios: Vec<Vec<Option<f64>>> = rows
        .iter()
        .enumerate()
        .map(|(r, row)| {
            (0..sizes.len())
                .map(|si| {
                    samples
                        .speedup(r, openssl_row, si)
                        .map(|x| x * row.lanes as f64)
                })
                .collect()
        })
        .collect();
    let machine = super::cpu_model().unwrap_or_else(|| "unknown CPU".into());
    match args.format {
        Format::Json => {
            let mut out = Vec::new();
            for (r, row) in rows.iter().enumerate() {
                for (si, &size) in sizes.iter().enumerate() {
                    out.push(json!({
                        "impl": row.name,
                        "lanes": row.lanes,
                        "strategy": row.strategy,
                        "size": size,
                        "mb_per_s": mbs[r][si],
                        "ratio_to_openssl": ratios[r][si],
                        "compile_ms": row.compile_ms,
                    }));
                }
            }
            for (si, &size) in sizes.iter().enumerate() {
                out.push(json!({
                    "impl": "openssl",
                    "lanes": 1,
                    "size": size,
                    "mb_per_s": mbs[openssl_row][si],
                    "ratio_to_openssl": 1.0,
                }));
            }
            let doc = json!({
                "kernel": "md5-mb",
                "machine": machine,
                "repetitions": reps,
                "rows": out,
            });
            println!(
                "{}",
                serde_json::to_string_pretty(&doc).map_err(|e| CliError::failure(e.to_string()))?
            );
        }
        Format::Table | Format::Markdown => {
            println!(
                "md5-mb aggregate MB/s (ratio to OpenSSL MD5() single-stream, same repetition); \
                 {machine}; {reps} repetitions"
            );
            let mut header = format!("{:<30} {:>10}", "impl", "compile");
            for &size in &sizes {
                header.push_str(&format!(" {:>22}", format!("{} B/lane", size)));
            }
            println!("{header}");
            for (r, row) in rows.iter().enumerate() {
                let mut line = format!("{:<30} {:>7.1} ms", row.name, row.compile_ms);
                for si in 0..sizes.len() {
                    let cell = match (mbs[r][si], ratios[r][si]) {
                        (Some(m), Some(q)) => format!("{m:.0} ({q:.2}x)"),
                        _ => "-".into(),
                    };
                    line.push_str(&format!(" {cell:>22}"));
                }
                println!("{line}");
            }
            let mut line = format!("{:<30} {:>10}", "openssl (1 stream)", "");
            for mb_per_s in &mbs[openssl_row] {
                let cell = mb_per_s.map_or("-".into(), |m| format!("{m:.0} (1.00x)"));
                line.push_str(&format!(" {cell:>22}"));
            }
            println!("{line}");
        }
    }
    Ok(())
}

/// Every row's digests equal OpenSSL's, for every size.
fn check_digests(rows: &[MultiRow], sizes: &[usize]) -> Result<(), CliError> {
    for &size in sizes {
        let data = buffer(size);
        let want = hex(&openssl_digest(&data));
        for row in rows {
            let messages = vec![data.as_slice(); row.lanes];
            for got in row.kernel.digest_many(&messages) {
                if hex(&got) != want {
                    return Err(CliError::failure(format!(
                        "{} hashes {size} bytes to {}, OpenSSL to {want}",
                        row.name,
                        hex(&got)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The rows as the measurement loop sees them: every kernel, then OpenSSL, × message size.
struct MultiWork<'a> {
    rows: &'a [MultiRow],
    buffers: &'a [Vec<u8>],
}

impl schedlab_bench::Workload for MultiWork<'_> {
    fn rows(&self) -> usize {
        self.rows.len() + 1
    }

    fn sizes(&self) -> usize {
        self.buffers.len()
    }

    fn time(&mut self, row: usize, size: usize, iterations: u64) -> Duration {
        let data = self.buffers[size].as_slice();
        match self.rows.get(row) {
            Some(kernel_row) => {
                let messages = vec![data; kernel_row.lanes];
                time_loop(
                    || kernel_row.kernel.digest_many(black_box(&messages)),
                    iterations,
                )
            }
            None => time_loop(|| openssl_digest(black_box(data)), iterations),
        }
    }
}

/// Decimal MB/s of `bytes` per call at `seconds` per call.
fn mb_per_s_of(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e6
}
