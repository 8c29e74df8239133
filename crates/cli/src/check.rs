//! `schedlab check` (being built).

use crate::CliError;

/// Arguments of `schedlab check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {}

/// Runs `schedlab check`.
pub fn run(_args: CheckArgs) -> Result<(), CliError> {
    Err(CliError::failure("`check` is not built yet"))
}
