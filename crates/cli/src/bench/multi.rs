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
use super::measure::{mb_per_s, median};
use super::{BenchArgs, Budgets, Format, parse_sizes, rotated};
use crate::CliError;
use schedlab_backend::pipeline::PipelineConfig;
use schedlab_md5::MultiCompressor;
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
            let kernel = MultiCompressor::compile(&PipelineConfig::with_strategy(strategy), groups)
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

    let reps = budgets.reps as usize;
    // [row][size] → per repetition MB/s; OpenSSL per size and repetition.
    let mut mbs = vec![vec![Vec::new(); sizes.len()]; rows.len()];
    let mut ratios = vec![vec![Vec::new(); sizes.len()]; rows.len()];
    let mut openssl = vec![Vec::new(); sizes.len()];
    let counts = calibrate_all(&rows, &sizes, budgets.sample);
    for rep in 0..reps {
        for (si, &size) in sizes.iter().enumerate() {
            let data = buffer(size);
            let n_rows = rows.len() + 1;
            let mut this_rep = vec![0.0; n_rows];
            for k in 0..n_rows {
                let r = rotated(k, rep, n_rows);
                this_rep[r] = if r == rows.len() {
                    time_openssl(&data, counts.1[si])
                } else {
                    time_row(&rows[r], &data, counts.0[r][si])
                };
            }
            let reference = this_rep[rows.len()];
            openssl[si].push(reference);
            for r in 0..rows.len() {
                mbs[r][si].push(this_rep[r]);
                ratios[r][si].push(this_rep[r] / reference);
            }
        }
    }
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
                        "mb_per_s": median(&mbs[r][si]),
                        "ratio_to_openssl": median(&ratios[r][si]),
                        "compile_ms": row.compile_ms,
                    }));
                }
            }
            for (si, &size) in sizes.iter().enumerate() {
                out.push(json!({
                    "impl": "openssl",
                    "lanes": 1,
                    "size": size,
                    "mb_per_s": median(&openssl[si]),
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
                    let cell = match (median(&mbs[r][si]), median(&ratios[r][si])) {
                        (Some(m), Some(q)) => format!("{m:.0} ({q:.2}x)"),
                        _ => "-".into(),
                    };
                    line.push_str(&format!(" {cell:>22}"));
                }
                println!("{line}");
            }
            let mut line = format!("{:<30} {:>10}", "openssl (1 stream)", "");
            for samples in &openssl {
                let cell = median(samples).map_or("-".into(), |m| format!("{m:.0} (1.00x)"));
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

/// Calls per sample for each row and size, and for OpenSSL per size (doubling; warms up).
#[allow(clippy::type_complexity)]
fn calibrate_all(
    rows: &[MultiRow],
    sizes: &[usize],
    budget: Duration,
) -> (Vec<Vec<u64>>, Vec<u64>) {
    let calls = |f: &dyn Fn(u64) -> Duration| {
        let mut n = 1u64;
        loop {
            let t = f(n);
            if t >= budget / 8 || n >= 1 << 40 {
                return ((budget.as_secs_f64() / (t.as_secs_f64() / n as f64).max(1e-12)) as u64)
                    .max(1);
            }
            n *= 2;
        }
    };
    let per_row = rows
        .iter()
        .map(|row| {
            sizes
                .iter()
                .map(|&size| {
                    let data = buffer(size);
                    calls(&|n| elapsed_row(row, &data, n))
                })
                .collect()
        })
        .collect();
    let per_size = sizes
        .iter()
        .map(|&size| {
            let data = buffer(size);
            calls(&|n| elapsed_openssl(&data, n))
        })
        .collect();
    (per_row, per_size)
}

fn elapsed_row(row: &MultiRow, data: &[u8], calls: u64) -> Duration {
    let messages = vec![data; row.lanes];
    let start = Instant::now();
    for _ in 0..calls {
        black_box(row.kernel.digest_many(black_box(&messages)));
    }
    start.elapsed()
}

fn elapsed_openssl(data: &[u8], calls: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..calls {
        black_box(openssl_digest(black_box(data)));
    }
    start.elapsed()
}

fn time_row(row: &MultiRow, data: &[u8], calls: u64) -> f64 {
    let t = elapsed_row(row, data, calls);
    mb_per_s((data.len() * row.lanes) as u64 * calls, t)
}

fn time_openssl(data: &[u8], calls: u64) -> f64 {
    mb_per_s(data.len() as u64 * calls, elapsed_openssl(data, calls))
}
