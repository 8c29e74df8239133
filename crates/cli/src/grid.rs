//! Tables of cells as the reports print them: left-aligned columns, Markdown or CSV.

use schedlab_bench::text_table::{column_widths, join_cells};
use std::fmt::Write as _;

/// `lines` (the header first) as left-aligned columns two blanks apart, or as a Markdown
/// table; every line ends in a line break.
pub fn left_aligned(lines: &[Vec<String>], markdown: bool) -> String {
    let Some((header, body)) = lines.split_first() else {
        return String::new();
    };
    let widths = column_widths(header, body);
    let mut out = String::new();
    for (n, l) in lines.iter().enumerate() {
        let cells: Vec<String> = l
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", join_cells(&cells, markdown));
        if markdown && n == 0 {
            let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
            let _ = writeln!(out, "{}", join_cells(&rule, true));
        }
    }
    out
}

/// `lines` as CSV, one record a line, each field quoted when it must be.
pub fn csv(lines: &[Vec<String>]) -> String {
    let mut out = String::new();
    for l in lines {
        let fields: Vec<String> = l.iter().map(|c| csv_field(c)).collect();
        let _ = writeln!(out, "{}", fields.join(","));
    }
    out
}

/// `s` as one CSV field: quoted when it holds a comma, a quote or a line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
