//! The library's eight-lane kernel, compiled with its own configuration ([`lane_config`]) for
//! AArch64 and x86_64 at the fixed ISA level: the register allocator's spills and reloads stay
//! within issue 35's goals (none on AArch64; at most a quarter of the 75 / 187 the kernel had on
//! x86_64 before the word area). Both depend on `lane_config` keeping the preheader's range
//! tests as a chain (`keep_conditions`): reassociated, they leave 9 / 18 and 28 / 48. The counts
//! are Cranelift's, the same on every host, so the test runs where CI runs the workspace
//! natively (x86_64) and not again under qemu.
#![cfg(target_arch = "x86_64")]

use schedlab_backend::Target;
use schedlab_backend::pipeline::{PipelineConfig, StageOptions, run_with};
use schedlab_backend::stats::{code_stats, spill_sites};
use schedlab_digests::lane_config;
use schedlab_kernels::md5_mb;

/// Spills and reloads of the x8 kernel as the library configures it, compiled for `target`
/// with the slow path outlined (the function the JIT compiles), and the spill sites listed.
fn x8_spills(target: Target) -> (usize, usize, String) {
    let artifact = run_with(
        md5_mb::compress_lanes(2),
        target,
        &lane_config(&PipelineConfig::default()),
        &StageOptions::report_lazy(target),
    )
    .unwrap_or_else(|e| panic!("md5-mb-x8 for {target:?}: {e}"));
    let stats = code_stats(&artifact.compiled);
    let sites = format!("{:#?}", spill_sites(&artifact.compiled));
    (stats.spills, stats.reloads, sites)
}

#[test]
fn aarch64_lane_kernel_has_no_spill() {
    let (spills, reloads, sites) = x8_spills(Target::Aarch64);
    assert_eq!((spills, reloads), (0, 0), "{sites}");
}

#[test]
fn x86_64_lane_kernel_spills_at_most_a_quarter_of_before() {
    let (spills, reloads, sites) = x8_spills(Target::X86_64);
    // A quarter of 75 / 187, rounded up.
    assert!(
        spills <= 19 && reloads <= 47,
        "{spills} spills / {reloads} reloads (goal at most 19 / 47): {sites}"
    );
}
