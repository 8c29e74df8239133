//! Criterion benches of the in-process rows of `schedlab bench`: schedlab per pipeline
//! configuration, `md-5` and OpenSSL's `MD5()`, one-shot hashes of 64 B … 1 MiB; and the JIT
//! compile time of the library's configuration (`compile/lazy`: the fast loop only, as the
//! library compiles; `compile/eager`: with the checked slow path).
//!
//! `cargo bench -p schedlab-bench --bench md5` (add a filter such as `openssl` or `1MiB` to narrow).
//! The row list is `schedlab bench`'s own (`schedlab_bench::md5`), so new configurations
//! appear here too. `schedlab bench` remains the report of record: it interleaves the rows
//! within each repetition, adds the JVM rows and gives ratios measured in the same run.
#![allow(missing_docs)]

use schedlab_bench::md5 as impls;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

const SIZES: [(usize, &str); 4] = [
    (64, "64B"),
    (1024, "1KiB"),
    (16 * 1024, "16KiB"),
    (1024 * 1024, "1MiB"),
];

fn md5(c: &mut Criterion) {
    let rows = match impls::rust_impls_matching(|_| true) {
        Ok(rows) => rows,
        Err(e) => {
            eprintln!("benches/md5: {e}");
            return;
        }
    };
    for (size, label) in SIZES {
        let data = impls::buffer(size);
        let mut group = c.benchmark_group(format!("md5/{label}"));
        group.throughput(Throughput::Bytes(size as u64));
        for row in &rows {
            group.bench_with_input(BenchmarkId::from_parameter(&row.name), &data, |b, d| {
                b.iter(|| row.digest(black_box(d)))
            });
        }
        group.finish();
    }
}

fn compile(c: &mut Criterion) {
    let config = schedlab_backend::pipeline::PipelineConfig::default();
    let mut group = c.benchmark_group("compile");
    for (name, slow) in [
        ("lazy", schedlab_digests::SlowPath::Lazy),
        ("eager", schedlab_digests::SlowPath::Eager),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| schedlab_digests::Compressor::compile_timed(black_box(&config), slow))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = md5, compile
}
criterion_main!(benches);
