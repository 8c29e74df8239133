//! Timing the in-process MD5 rows, on the bench crate's primitives
//! ([`crate::measure`]).

use super::impls::{Imp, RustImpl, md5_crate_digest, openssl_digest, schedlab_digest};
use crate::measure::time_loop;
use std::hint::black_box;
use std::time::Duration;

pub use crate::measure::{alu_probe_cycles, effective_clock_ghz, median};

/// Hashes `data` `hashes` times with `imp` and returns the elapsed time.
///
/// The loop is monomorphised per implementation, so no indirect call sits in the timed path.
pub fn time_hashes(imp: &RustImpl, data: &[u8], hashes: u64) -> Duration {
    match imp.imp {
        Imp::Schedlab(engine) => time_loop(|| schedlab_digest(&engine, black_box(data)), hashes),
        Imp::Md5Crate => time_loop(|| md5_crate_digest(black_box(data)), hashes),
        Imp::OpenSsl => time_loop(|| openssl_digest(black_box(data)), hashes),
        Imp::Stock(stock) => time_loop(|| stock.digest(black_box(data)), hashes),
    }
}

/// How many hashes of `data` take about `budget`, found by doubling (this doubles as warm-up).
pub fn calibrate(imp: &RustImpl, data: &[u8], budget: Duration) -> u64 {
    crate::measure::calibrate(|n| time_hashes(imp, data, n), budget)
}
