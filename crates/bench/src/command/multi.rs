//! `schedlab bench --kernel md5-mb`: the multi-buffer kernel's aggregate throughput against
//! OpenSSL's single-stream `MD5()`, timed in the same repetition.
//!
//! A row is one lane count (4: one `i32x4` group, 8: two interleaved groups) × one scheduling
//! strategy; a sample hashes `lanes` messages of the row's size through the library's lane
//! scheduler (`MultiCompressor::digest_many`, padding included) and counts all their bytes.
//! OpenSSL hashes one message of that size per call. Each repetition times every row and
//! OpenSSL once per size, in an order rotated per repetition; reported are the median MB/s
//! and the median of each repetition's ratio to OpenSSL's sample of the same repetition.

use super::aggregate::{self, RowsThenOpenssl};
use super::impls::{buffer, hex, openssl_digest};
use super::{BenchArgs, Budgets, Format, parse_sizes};
use crate::CliError;
use schedlab_backend::pipeline::PipelineConfig;
use schedlab_bench::measure::time_loop;
use schedlab_digests::{MultiCompressor, lane_config};
use serde_json::json;
use std::hint::black_box;
use std::time::Instant;

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
    let mut work = RowsThenOpenssl {
        rows: &rows,
        buffers: &buffers,
        time_row: |row: &MultiRow, data, iterations| {
            let messages = vec![data; row.lanes];
            time_loop(|| row.kernel.digest_many(black_box(&messages)), iterations)
        },
    };
    let lanes: Vec<usize> = rows.iter().map(|row| row.lanes).collect();
    let (_, rates) = aggregate::measure(&mut work, &budgets, &sizes, &lanes);
    let reps = budgets.reps;
    let machine = super::cpu_model().unwrap_or_else(|| "unknown CPU".into());
    match args.format {
        Format::Json => {
            let out = aggregate::json_rows(&sizes, &rates, "lanes", |r| {
                let row = &rows[r];
                json!({
                    "impl": row.name,
                    "lanes": row.lanes,
                    "strategy": row.strategy,
                    "compile_ms": row.compile_ms,
                })
            });
            aggregate::print_json(&json!({
                "kernel": "md5-mb",
                "machine": machine,
                "repetitions": reps,
                "rows": out,
            }))?;
        }
        Format::Table | Format::Markdown => {
            println!(
                "md5-mb aggregate MB/s (ratio to OpenSSL MD5() single-stream, same repetition); \
                 {machine}; {reps} repetitions"
            );
            let sizes_header = aggregate::size_headers(&sizes, "lane", 22);
            println!("{:<30} {:>10}{sizes_header}", "impl", "compile");
            for (r, row) in rows.iter().enumerate() {
                let cells = aggregate::rate_cells(&rates.mbs[r], &rates.ratios[r], 22);
                println!("{:<30} {:>7.1} ms{cells}", row.name, row.compile_ms);
            }
            let cells = aggregate::openssl_cells(&rates.mbs[rows.len()], 22);
            println!("{:<30} {:>10}{cells}", "openssl (1 stream)", "");
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
