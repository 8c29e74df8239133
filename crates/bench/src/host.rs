//! What a report says about the machine it was measured on.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// `/proc/loadavg`'s 1-minute figure, if readable.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `/proc/cpuinfo`'s model name, if readable.
pub fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// A progress bar on stderr (indicatif draws nothing when stderr is not a terminal).
pub fn progress_bar(len: u64, prefix: &'static str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}")
    {
        bar.set_style(style);
    }
    bar.set_prefix(prefix);
    bar
}
