//! SHA-256 rows of `schedlab bench --validate-model`: each strategy's `sha256` kernel as the
//! bench JIT-compiles it (both loops in one function, as the `Sha256` library compiles it),
//! one 64-byte block per iteration of its check-free loop.
//!
//! **Measured** as MD5 is: a repetition's sample is the fastest of [`SINGLE_HASHES`] single
//! one-shot hashes of a 1 MiB message (16 385 blocks with the padding block; the per-hash
//! overhead — padding, the state copy-out — is well under 1 %), converted to cycles with the
//! effective clock probed right before the row; the median over repetitions is reported.
//! **Static**: the very code timed (host features), costed by every model.

use super::super::Budgets;
use super::{BLOCKS, MESSAGE, SINGLE_HASHES, ValidationRow, clocked_samples, fastest_cycles};
use crate::CliError;
use crate::sha256::{Sha256Kernel, sha2_digest};
use schedlab_backend::pipeline::PipelineConfig;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// What SHA-256's hot-loop iteration is.
pub const SHA256_ITERATION: &str = "one 64-byte block of SHA-256's check-free loop";

/// Minimum warm-up per strategy before the timed hashes (the clock ramps up under load).
const WARM_UP: Duration = Duration::from_millis(50);

/// Compiles, checks and times each strategy's SHA-256; returns its rows and the clock probes.
pub fn rows(
    strategies: &[&str],
    budgets: Budgets,
    contention: &mut super::Contention,
) -> Result<(Vec<ValidationRow>, Vec<f64>), CliError> {
    let data = super::super::impls::buffer(MESSAGE);
    let reference = sha2_digest(&data);
    let mut kernels = Vec::new();
    for s in strategies {
        let kernel = Sha256Kernel::compile(&PipelineConfig::with_strategy(s))
            .map_err(|e| CliError::failure(format!("cannot compile sha256 {s}: {e}")))?;
        if kernel.digest(&data) != reference {
            return Err(CliError::failure(format!(
                "sha256 {s} computed a wrong digest of {MESSAGE} bytes"
            )));
        }
        kernels.push(kernel);
    }
    for k in &kernels {
        let start = Instant::now();
        while start.elapsed() < WARM_UP {
            black_box(k.digest(black_box(&data)));
        }
    }
    let (samples, clocks) = clocked_samples(kernels.len(), &budgets, contention, |i, ghz| {
        fastest_cycles(SINGLE_HASHES, BLOCKS, ghz, || {
            black_box(kernels[i].digest(black_box(&data)));
            Ok(())
        })
    })?;
    let kernel = ("sha256", SHA256_ITERATION);
    let rows = ValidationRow::timed(
        strategies
            .iter()
            .zip(&kernels)
            .map(|(s, k)| (kernel, *s, k.compiled())),
        &samples,
    );
    Ok((rows, clocks))
}
