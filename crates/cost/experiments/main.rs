//! The cost model's experiments, in one test binary: `#[ignore]`d tests that time hand-written
//! loops or print the model beside its sources, run by hand on the hardware they name, and the
//! checks that keep the probe files of `probes/` well formed (these run with every test). What
//! each experiment measures, the probe files it reads and the one command that runs them are in
//! `README.md` beside this file.

#[cfg(target_arch = "x86_64")]
mod asm_clock;
mod bigint_loop_asm;
mod carry_chain_asm;
mod placement_bigint;
mod port_throughput_asm;
mod sim_kernels;
mod store_forward_asm;
mod window_asm;
mod zen4_order_asm;
mod zen4_spill_asm;
