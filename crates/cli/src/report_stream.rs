//! A corpus run past one machine's memory and one machine: report rows as JSON lines, streamed
//! in job order chunk by chunk; `--shard K/N` to split the kernels deterministically; and the
//! summary against stock computed from the merged JSON lines (`--summary-from`).

use crate::CliError;
use crate::report::{Format, Row};
use crate::report_corpus::{Metric, largest_losses, losses_table, table, versus_stock};
use schedlab_backend::pipeline::DEFAULT_STRATEGY;
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// Jobs computed in parallel before their rows are printed: enough to keep every core busy
/// and to disassemble many functions per llvm-objdump process (one per target and thread in
/// each chunk), few enough that a 100,000-function run holds only this many rows and their
/// code at a time (≈ 0.9 GB peak on the corpus; notes/real-programs.md, "Chunks of 8,192").
pub const CHUNK: usize = 8192;

/// How many of the default's largest losses the summary lists.
const LOSSES: usize = 12;

/// `--shard K/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based index.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl Shard {
    /// Every `count`-th kernel from the `index`-th (kernel order is deterministic: files
    /// sorted, functions by index), so shards are disjoint and together the whole corpus.
    pub fn select<T>(self, kernels: Vec<T>) -> Vec<T> {
        kernels
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % self.count == self.index - 1)
            .map(|(_, k)| k)
            .collect()
    }
}

/// Parses `K/N` with 1 ≤ K ≤ N.
pub fn parse_shard(s: &str) -> Result<Shard, String> {
    let invalid = || format!("`{s}`: expected K/N with 1 ≤ K ≤ N, e.g. 3/8");
    let (k, n) = s.split_once('/').ok_or_else(invalid)?;
    let (index, count): (usize, usize) = (
        k.trim().parse().map_err(|_| invalid())?,
        n.trim().parse().map_err(|_| invalid())?,
    );
    if index == 0 || index > count {
        return Err(invalid());
    }
    Ok(Shard { index, count })
}

/// Prints one row as a JSON line.
pub fn print_line(row: &Row) -> Result<(), CliError> {
    let line = serde_json::to_string(row).map_err(|e| CliError::failure(format!("JSON: {e}")))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").map_err(|e| CliError::failure(format!("stdout: {e}")))
}

/// Reads the rows of JSON-lines files; a line that is not a row is a usage error naming the
/// file and line.
pub fn read_rows(files: &[PathBuf]) -> Result<Vec<Row>, CliError> {
    let mut rows = Vec::new();
    for path in files {
        let file = std::fs::File::open(path)
            .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
        for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line =
                line.map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
            if line.trim().is_empty() {
                continue;
            }
            let row: Row = serde_json::from_str(&line).map_err(|e| {
                CliError::usage(format!(
                    "{}:{}: not a report row (`report --format jsonl` writes them): {e}",
                    path.display(),
                    n + 1
                ))
            })?;
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return Err(CliError::usage("--summary-from: the files hold no rows"));
    }
    Ok(rows)
}

/// The summary against stock: JSON on stdout for `json`, one CSV table for `csv`, else a table
/// (Markdown for `markdown`); after streamed JSON lines it goes to stderr so stdout stays JSON
/// lines.
pub fn print_summary(rows: &[Row], metric: Metric, format: Format) -> Result<(), CliError> {
    let summary = versus_stock(rows, metric);
    let losses = largest_losses(rows, DEFAULT_STRATEGY, metric, LOSSES);
    match format {
        Format::Json => {
            let text = serde_json::to_string_pretty(&serde_json::json!({
                "summary": summary,
                "default_largest_losses": losses,
            }))
            .map_err(|e| CliError::failure(format!("JSON: {e}")))?;
            println!("{text}");
        }
        Format::Jsonl => eprintln!("{}", table(&summary, false)),
        // One CSV table: the summary alone.
        Format::Csv => println!("{}", crate::report_corpus::csv(&summary)),
        other => {
            println!("{}", table(&summary, other == Format::Markdown));
            if !losses.is_empty() {
                println!(
                    "\nThe {} functions where the default (`{DEFAULT_STRATEGY}`) loses most to stock:\n",
                    losses.len()
                );
                println!("{}", losses_table(&losses, metric));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_disjoint_and_cover_everything() {
        let all: Vec<usize> = (0..10).collect();
        let mut seen = Vec::new();
        for k in 1..=3 {
            let shard = parse_shard(&format!("{k}/3")).expect("valid");
            seen.extend(shard.select(all.clone()));
        }
        seen.sort_unstable();
        assert_eq!(seen, all);
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
