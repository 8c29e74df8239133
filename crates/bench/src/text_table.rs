//! Pieces of the plain-text and Markdown tables the reports print.

/// Per column, the widest cell in characters, the header's included.
pub fn column_widths(header: &[impl AsRef<str>], body: &[Vec<String>]) -> Vec<usize> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.as_ref().chars().count()).collect();
    for r in body {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    widths
}

/// One table line of padded cells: `| a | b |` in Markdown, else the cells two blanks apart
/// without trailing blanks.
pub fn join_cells(padded: &[String], markdown: bool) -> String {
    if markdown {
        format!("| {} |", padded.join(" | "))
    } else {
        padded.join("  ").trim_end().to_string()
    }
}
