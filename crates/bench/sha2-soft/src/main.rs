//! Times `sha2::Sha256::digest` (one-shot, padding included) of the bench buffer of each size
//! and prints the protocol of `schedlab_bench::sha256::parse_child`:
//!
//! `sha2-soft-bench <size,size,...> <warm-up ms> <budget ms per size>`
//!
//! The `backend=` field says whether this binary was built with `--cfg sha2_backend="soft"`.

use sha2::{Digest, Sha256};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The bench buffer, identical to `schedlab_bench::md5::buffer`.
fn buffer(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i.wrapping_mul(131) + 7) as u8).collect()
}

fn time(data: &[u8], iterations: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(Sha256::digest(black_box(data)));
    }
    start.elapsed()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [sizes, warmup, budget] => (|| {
            let sizes: Vec<usize> = sizes
                .split(',')
                .map(|s| s.trim().parse().ok())
                .collect::<Option<_>>()?;
            Some((
                sizes,
                warmup.parse::<u64>().ok()?,
                budget.parse::<u64>().ok()?,
            ))
        })(),
        _ => None,
    };
    let Some((sizes, warmup_ms, budget_ms)) = parsed else {
        eprintln!("usage: sha2-soft-bench <size,size,...> <warmup-ms> <budget-ms-per-size>");
        std::process::exit(2);
    };
    let backend = if cfg!(sha2_backend = "soft") {
        "soft"
    } else {
        "default"
    };
    println!("DIGESTBENCH-INFO backend={backend}");
    let buffers: Vec<Vec<u8>> = sizes.iter().map(|&s| buffer(s)).collect();
    let warmup_end = Instant::now() + Duration::from_millis(warmup_ms);
    while Instant::now() < warmup_end {
        for buf in &buffers {
            time(buf, (65536 / buf.len().max(1)).max(1) as u64);
        }
    }
    let budget = Duration::from_millis(budget_ms.max(1));
    for buf in &buffers {
        let batch = (65536 / buf.len().max(1)).max(1) as u64;
        let mut hashes = 0u64;
        let mut elapsed = Duration::ZERO;
        while elapsed < budget {
            elapsed += time(buf, batch);
            hashes += batch;
        }
        let mb_per_s = (hashes as f64 * buf.len() as f64) / elapsed.as_secs_f64() / 1e6;
        println!(
            "DIGESTBENCH size={} hashes={hashes} nanos={} mb_per_s={mb_per_s} digest={}",
            buf.len(),
            elapsed.as_nanos(),
            hex(&Sha256::digest(buf))
        );
    }
}
