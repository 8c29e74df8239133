//! `schedlab bench` (being built).

use crate::CliError;

/// Arguments of `schedlab bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {}

/// Runs `schedlab bench`.
pub fn run(_args: BenchArgs) -> Result<(), CliError> {
    Err(CliError::failure("`bench` is not built yet"))
}
