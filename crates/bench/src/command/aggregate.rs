//! What the many-message benches (`md5-mb`, `md5-streams`) share: timing their rows against
//! OpenSSL's single-stream `MD5()`, the aggregate rates, and the table's and JSON's OpenSSL
//! parts.

use super::Budgets;
use super::impls::openssl_digest;
use crate::CliError;
use schedlab_bench::measure::time_loop;
use schedlab_bench::{Samples, Workload};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::Duration;

/// The rows as the measurement loop sees them, then OpenSSL, × message size.
pub(super) struct RowsThenOpenssl<'a, R> {
    /// The rows before OpenSSL's.
    pub rows: &'a [R],
    /// One message per size.
    pub buffers: &'a [Vec<u8>],
    /// Times `iterations` calls of a row on a message.
    pub time_row: fn(&R, &[u8], u64) -> Duration,
}

impl<R> Workload for RowsThenOpenssl<'_, R> {
    fn rows(&self) -> usize {
        self.rows.len() + 1
    }

    fn sizes(&self) -> usize {
        self.buffers.len()
    }

    fn time(&mut self, row: usize, size: usize, iterations: u64) -> Duration {
        let data = self.buffers[size].as_slice();
        match self.rows.get(row) {
            Some(r) => (self.time_row)(r, data, iterations),
            None => time_loop(|| openssl_digest(black_box(data)), iterations),
        }
    }
}

/// Per row, then OpenSSL (last), and per size: the median aggregate MB/s; per row and size the
/// median ratio to OpenSSL's MB/s in the same repetition.
pub(super) struct Rates {
    /// `[row][size]`, OpenSSL's row last.
    pub mbs: Vec<Vec<Option<f64>>>,
    /// `[row][size]`, the rows alone.
    pub ratios: Vec<Vec<Option<f64>>>,
}

/// Times `work` (its rows, then OpenSSL) and the rates of rows that hash `messages[row]`
/// messages of each of `sizes` per call (OpenSSL one).
pub(super) fn measure(
    work: &mut impl Workload,
    budgets: &Budgets,
    sizes: &[usize],
    messages: &[usize],
) -> (Samples, Rates) {
    let samples = schedlab_bench::run(
        work,
        &budgets.measurement(),
        0,
        &indicatif::ProgressBar::hidden(),
        |_, _| {},
    );
    let openssl_row = messages.len();
    let mbs = (0..=openssl_row)
        .map(|r| {
            let count = messages.get(r).copied().unwrap_or(1);
            (0..sizes.len())
                .map(|si| samples.median_of(r, si, |t| (count * sizes[si]) as f64 / t / 1e6))
                .collect()
        })
        .collect();
    let ratios = messages
        .iter()
        .enumerate()
        .map(|(r, &count)| {
            (0..sizes.len())
                .map(|si| {
                    samples
                        .speedup(r, openssl_row, si)
                        .map(|x| x * count as f64)
                })
                .collect()
        })
        .collect();
    (samples, Rates { mbs, ratios })
}

/// The table's size headers: `SIZE B/{per}` per size, each right-aligned in `width` after a
/// blank.
pub(super) fn size_headers(sizes: &[usize], per: &str, width: usize) -> String {
    sizes
        .iter()
        .map(|size| format!(" {:>width$}", format!("{size} B/{per}")))
        .collect()
}

/// A table row's cells: `MB/s (ratio x)` per size (`-` where either is missing), each
/// right-aligned in `width` after a blank.
pub(super) fn rate_cells(mbs: &[Option<f64>], ratios: &[Option<f64>], width: usize) -> String {
    mbs.iter()
        .zip(ratios)
        .map(|(mb_per_s, ratio)| {
            let cell = match (mb_per_s, ratio) {
                (Some(m), Some(q)) => format!("{m:.0} ({q:.2}x)"),
                _ => "-".into(),
            };
            format!(" {cell:>width$}")
        })
        .collect()
}

/// OpenSSL's table cells: its MB/s and the ratio 1 per size.
pub(super) fn openssl_cells(mbs: &[Option<f64>], width: usize) -> String {
    rate_cells(mbs, &vec![Some(1.0); mbs.len()], width)
}

/// The JSON rows: per row and size, rows outer, the row's own fields (`fields(row)`: its
/// name under `impl`, its messages per call under `count_key`, …) with the size, the MB/s and
/// the ratio to OpenSSL; then OpenSSL's rows.
pub(super) fn json_rows(
    sizes: &[usize],
    rates: &Rates,
    count_key: &str,
    fields: impl Fn(usize) -> Value,
) -> Vec<Value> {
    let mut out = Vec::new();
    for (r, ratios) in rates.ratios.iter().enumerate() {
        for (si, &size) in sizes.iter().enumerate() {
            let mut row = fields(r);
            row["size"] = json!(size);
            row["mb_per_s"] = json!(rates.mbs[r][si]);
            row["ratio_to_openssl"] = json!(ratios[si]);
            out.push(row);
        }
    }
    out.extend(openssl_json(
        sizes,
        &rates.mbs[rates.ratios.len()],
        count_key,
    ));
    out
}

/// OpenSSL's JSON rows: one message per call (`count_key`: 1), its MB/s and the ratio 1.
fn openssl_json(sizes: &[usize], mbs: &[Option<f64>], count_key: &str) -> Vec<Value> {
    sizes
        .iter()
        .zip(mbs)
        .map(|(&size, mb_per_s)| {
            json!({
                "impl": "openssl",
                count_key: 1,
                "size": size,
                "mb_per_s": mb_per_s,
                "ratio_to_openssl": 1.0,
            })
        })
        .collect()
}

/// Prints `doc` as pretty JSON.
pub(super) fn print_json(doc: &Value) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(doc).map_err(|e| CliError::failure(e.to_string()))?;
    println!("{text}");
    Ok(())
}
