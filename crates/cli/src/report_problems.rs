//! What a report could not work out, told once: a corpus run meets the same reason (a hot loop
//! that calls, an instruction the model cannot read) in hundreds of functions, so the report
//! ends with one line of counts per reason instead of one line per function; `--problems`
//! lists every distinct message.

use std::collections::BTreeMap;

/// Problems met while making rows: each distinct message, and rows per reason.
#[derive(Default)]
pub struct Problems {
    /// Distinct messages, in the order first met.
    messages: Vec<String>,
    seen: std::collections::HashSet<String>,
    /// Rows per reason ([`reason`] of the message).
    counts: BTreeMap<String, usize>,
}

impl Problems {
    /// Notes the problems one row met (each reason counted once per row).
    pub fn add_row(&mut self, found: Vec<String>) {
        let mut reasons: Vec<String> = found.iter().map(|m| reason(m)).collect();
        reasons.sort();
        reasons.dedup();
        for r in reasons {
            *self.counts.entry(r).or_default() += 1;
        }
        for m in found {
            if self.seen.insert(m.clone()) {
                self.messages.push(m);
            }
        }
    }

    /// The lines to print on stderr: every message when `each`, or when there are at most
    /// three; otherwise one line with the rows per reason.
    pub fn lines(&self, each: bool) -> Vec<String> {
        if each || self.messages.len() <= 3 {
            return self
                .messages
                .iter()
                .map(|m| format!("schedlab: {m}"))
                .collect();
        }
        let rows: usize = self.counts.values().sum();
        let parts: Vec<String> = self
            .counts
            .iter()
            .map(|(r, n)| format!("{n} × {r}"))
            .collect();
        vec![format!(
            "schedlab: {} distinct problems in {rows} row figures: {} (`--problems` lists each)",
            self.messages.len(),
            parts.join("; ")
        )]
    }
}

/// A message with its per-function particulars dropped: every word that starts with a digit
/// (a count, an offset such as `0x2c3`) becomes `N` and what follows a `` ` `` quote (an
/// instruction's text) is cut, so one cause gives one reason (`x86_64` stays a word).
pub fn reason(message: &str) -> String {
    let cut = message.find('`').map_or(message, |i| &message[..i]);
    let words: Vec<String> = cut
        .split_whitespace()
        .map(|w| {
            if w.starts_with(|c: char| c.is_ascii_digit()) {
                let number = w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
                format!("N{}", &w[number.len()..])
            } else {
                w.to_string()
            }
        })
        .collect();
    words.join(" ").trim_end_matches([':', ' ']).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cause_is_one_reason() {
        assert_eq!(
            reason("own model: x86_64: hot loop: the hot loop makes 3 calls"),
            "own model: x86_64: hot loop: the hot loop makes N calls"
        );
        assert_eq!(
            reason("own model: aarch64: cannot read `ldr q0, [x1]`"),
            "own model: aarch64: cannot read"
        );
        assert_eq!(
            reason("own model: x86_64: undecodable bytes at offset 0x2c3, reachable"),
            "own model: x86_64: undecodable bytes at offset N, reachable"
        );
        let mut p = Problems::default();
        for n in 1..=5 {
            p.add_row(vec![format!("own model: x86_64: hot loop makes {n} calls")]);
        }
        p.add_row(vec!["llvm-mca: not installed".to_string()]);
        let lines = p.lines(false);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("5 × own model: x86_64: hot loop makes N calls"));
        assert!(lines[0].contains("1 × llvm-mca: not installed"));
        assert_eq!(p.lines(true).len(), 6);
    }
}
