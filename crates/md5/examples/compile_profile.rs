//! Compiles the MD5 kernel N times exactly as the `Md5` library does (default configuration,
//! checked slow path on first need), for a deterministic profile of compile time:
//!
//! ```sh
//! cargo build --release -p schedlab-md5 --example compile_profile
//! valgrind --tool=callgrind --callgrind-out-file=cg.out \
//!     target/release/examples/compile_profile 20
//! callgrind_annotate --inclusive=yes cg.out | head -60
//! ```
//!
//! The argument is the number of compilations (default 20); a second argument names another
//! registered strategy. It prints the median phase times, which under callgrind mean nothing.

use schedlab_backend::pipeline::PipelineConfig;
use schedlab_md5::{Compressor, SlowPath};

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = match args.next().map(|a| a.parse()) {
        None => 20,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("compile_profile: the number of compilations is not a number: {e}");
            std::process::exit(2);
        }
    };
    let config = match args.next() {
        Some(strategy) => PipelineConfig::with_strategy(&strategy),
        None => PipelineConfig::default(),
    };
    let mut totals = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        match Compressor::compile_timed(&config, SlowPath::Lazy) {
            Ok((_, timings)) => totals.push((timings.total_us(), timings)),
            Err(e) => {
                eprintln!("compile_profile: {e}");
                std::process::exit(1);
            }
        }
    }
    totals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (total, t) = totals[totals.len() / 2];
    println!(
        "{} compilations of md5 ({}): median total {total:.0} us = build {:.0} + passes {:.0} + codegen {:.0}",
        totals.len(),
        config.strategy,
        t.build_us,
        t.passes_us,
        t.codegen_us
    );
}
