//! `schedlab report` (being built).

use crate::CliError;

/// Arguments of `schedlab report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {}

/// Runs `schedlab report`.
pub fn run(_args: ReportArgs) -> Result<(), CliError> {
    Err(CliError::failure("`report` is not built yet"))
}
