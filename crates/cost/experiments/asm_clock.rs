//! The clock probe of the hand-written-loop experiments (`carry_chain_asm`,
//! `store_forward_asm`, `port_throughput_asm`): cycles are counted against a dependent `add`
//! chain timed in the same run, never against the nominal clock.

use std::arch::asm;
use std::time::Instant;

/// Seconds per cycle: the fastest of five 20-million-step dependent `add` chains.
pub fn cycle_time() -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        let mut x: u64 = 1;
        let one: u64 = std::hint::black_box(1);
        for _ in 0..20_000_000u64 {
            // A register operand: Golden Cove executes a 64-bit add of a small immediate in
            // the renamer with no latency, which would leave the chain to the loop branch.
            // SAFETY: a register-only add.
            unsafe {
                asm!("add {x}, {one}", x = inout(reg) x, one = in(reg) one, options(nomem, nostack))
            };
        }
        std::hint::black_box(x);
        best = best.min(start.elapsed().as_secs_f64() / 20e6);
    }
    best
}
