//! `schedlab dump` (being built).

use crate::CliError;

/// Arguments of `schedlab dump`.
#[derive(clap::Args, Debug)]
pub struct DumpArgs {}

/// Runs `schedlab dump`.
pub fn run(_args: DumpArgs) -> Result<(), CliError> {
    Err(CliError::failure("`dump` is not built yet"))
}
