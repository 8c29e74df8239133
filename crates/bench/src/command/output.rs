//! Formatting the bench's results: aligned text, Markdown and JSON. Only formats; every figure
//! is computed before it gets here.

use super::Format;
use super::callgrind::StaticRow;
use super::compile_time::CompileTime;
use super::impls::Kind;
use serde_json::{Value, json};

/// Everything one timing run produced.
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// How and where it was measured.
    pub meta: Meta,
    /// Message sizes, in column order.
    pub sizes: Vec<usize>,
    /// One row per implementation.
    pub rows: Vec<Row<Cell>>,
}

/// Run settings and machine facts (shared by the MD5 and BigInteger benches).
#[derive(Clone, Debug)]
pub struct Meta {
    /// `/proc/cpuinfo` model name.
    pub cpu: Option<String>,
    /// 1-minute load average before and after the run.
    pub load_start: Option<f64>,
    /// See `load_start`.
    pub load_end: Option<f64>,
    /// Effective core clock from the add-chain probe (median over repetitions).
    pub clock_ghz: Option<f64>,
    /// Repetitions and time budgets.
    pub budgets: ReportedBudgets,
    /// Compilations per configuration behind the compile-time medians.
    pub compile_runs: usize,
    /// MD5 only: median compile time of the library's default in a fresh process (µs).
    pub first_compile_us: Option<f64>,
    /// `java.version` of the JVM rows.
    pub java_version: Option<String>,
    /// Whether `--quick` budgets were used.
    pub quick: bool,
    /// The settings of the `schedlab/default` row (the `Md5` library's configuration).
    pub default_config: String,
}

/// A run's repetitions and time budgets as the reports state them (shared by every bench).
#[derive(Clone, Copy, Debug)]
pub struct ReportedBudgets {
    /// Repetitions.
    pub reps: u32,
    /// Time budget of one in-process sample.
    pub sample_ms: f64,
    /// JVM warm-up per process.
    pub jvm_warmup_ms: f64,
    /// JVM time budget per size (and mode).
    pub jvm_sample_ms: f64,
}

/// One implementation's results, one cell per size (shared by the MD5 and BigInteger benches).
#[derive(Clone, Debug)]
pub struct Row<C> {
    /// Implementation name.
    pub name: String,
    /// Where its code comes from.
    pub kind: Kind,
    /// How it was measured, if not in-process.
    pub note: Option<String>,
    /// Why there are no figures.
    pub absent: Option<String>,
    /// A repetition that failed while others succeeded.
    pub warning: Option<String>,
    /// JIT compile time (schedlab rows).
    pub compile: Option<CompileTime>,
    /// One cell per size.
    pub cells: Vec<C>,
}

/// One implementation at one size.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Message size in bytes.
    pub size: usize,
    /// Median decimal MB/s.
    pub mb_per_s: Option<f64>,
    /// Median over repetitions of MB/s ÷ OpenSSL's MB/s in the same repetition.
    pub ratio_to_openssl: Option<f64>,
    /// 64 bytes at the median rate, in cycles of the effective clock.
    pub cycles_per_block: Option<f64>,
    /// Every repetition's MB/s.
    pub samples: Vec<f64>,
}

/// `64 B`, `1 KiB`, `1 MiB`, or bytes.
pub fn size_label(size: usize) -> String {
    if size >= 1 << 20 && size.is_multiple_of(1 << 20) {
        format!("{} MiB", size >> 20)
    } else if size >= 1 << 10 && size.is_multiple_of(1 << 10) {
        format!("{} KiB", size >> 10)
    } else {
        format!("{size} B")
    }
}

/// Formats a timing run.
pub fn render(report: &BenchReport, format: Format) -> String {
    match format {
        Format::Json => json_text(&report_json(report)),
        Format::Table | Format::Markdown => {
            let (headers, body) = throughput_table(report);
            let mut out = table(&headers, &body, format);
            out.push('\n');
            let notes = notes(report);
            for line in notes {
                match format {
                    Format::Markdown => out.push_str(&format!("- {line}\n")),
                    _ => out.push_str(&format!("{line}\n")),
                }
            }
            out
        }
    }
}

fn throughput_table(report: &BenchReport) -> (Vec<String>, Vec<Vec<String>>) {
    let largest = report.sizes.iter().copied().max();
    let mut headers = vec!["impl".to_string(), "kind".to_string()];
    headers.extend(report.sizes.iter().map(|&s| size_label(s)));
    if let Some(l) = largest {
        headers.push(format!("cyc/block @{}", size_label(l)));
    }
    headers.push("compile ms".into());
    let body = report
        .rows
        .iter()
        .map(|row| {
            let mut line = row_line(row, |cell| {
                cell.mb_per_s.map(|m| match cell.ratio_to_openssl {
                    Some(r) => format!("{m:.1} ({r:.3}×)"),
                    None => format!("{m:.1}"),
                })
            });
            if largest.is_some() {
                let largest_cell = row.cells.iter().max_by_key(|c| c.size);
                let cycles = largest_cell.and_then(|c| c.cycles_per_block);
                line.push(cycles_cell(row, cycles, 0));
            }
            line.push(compile_ms(row.compile.as_ref()));
            line
        })
        .collect();
    (headers, body)
}

/// A table line's name, kind and one cell per size: `figure` of the cell, or `absent` when the
/// row is absent or the cell has no figure.
pub fn row_line<C>(row: &Row<C>, figure: impl Fn(&C) -> Option<String>) -> Vec<String> {
    let mut line = vec![row.name.clone(), row.kind.as_str().to_string()];
    for cell in &row.cells {
        let shown = figure(cell).filter(|_| row.absent.is_none());
        line.push(shown.unwrap_or_else(|| "absent".into()));
    }
    line
}

/// A row's cycles figure with `decimals` digits, or `—` when the row is absent or the figure
/// missing.
pub fn cycles_cell<C>(row: &Row<C>, cycles: Option<f64>, decimals: usize) -> String {
    cycles
        .filter(|_| row.absent.is_none())
        .map_or("—".into(), |c| format!("{c:.decimals$}"))
}

/// A row's compile time in milliseconds, or `—`.
pub fn compile_ms(compile: Option<&CompileTime>) -> String {
    compile.map_or("—".into(), |c| format!("{:.2}", c.total_us / 1e3))
}

/// What a note says after its method when the budgets were `--quick`'s.
pub fn quick_note(quick: bool) -> &'static str {
    if quick {
        " --quick budgets: not for quoting."
    } else {
        ""
    }
}

fn notes(report: &BenchReport) -> Vec<String> {
    let m = &report.meta;
    let mut lines = vec![format!(
        "MB/s (decimal), median of {} repetitions of {:.0} ms per sample, one thread, one-shot \
         hash including padding; (×) = median over repetitions of the row's MB/s ÷ OpenSSL's \
         in the same repetition.{}",
        m.budgets.reps,
        m.budgets.sample_ms,
        quick_note(m.quick)
    )];
    lines.push(format!(
        "schedlab/default = the Md5 library's configuration ({}); every other schedlab/* row \
         changes one setting of it (a strategy, a bce level, a switch).",
        m.default_config
    ));
    if report.rows.iter().any(|r| r.kind == Kind::StockCranelift) {
        lines.push(
            "cranelift-speed = the kernel as built (every check kept), JIT-compiled by stock \
             Cranelift at opt_level=speed (its e-graph, its verifier), no schedlab pass."
                .into(),
        );
    }
    match m.clock_ghz {
        Some(ghz) => lines.push(format!(
            "cyc/block = 64 B ÷ median MB/s × {ghz:.2} GHz, the effective clock measured in \
             this run by a chain of dependent register adds (not /proc/cpuinfo's nominal clock)."
        )),
        None => lines.push("cyc/block: no clock probe on this host.".into()),
    }
    if let Some(c) = report.rows.iter().find_map(|r| r.compile.as_ref()) {
        lines.push(format!(
            "compile ms = median of {} JIT compilations of the MD5 kernel as the Md5 library \
             does them (the checked slow path compiled on the first call that needs it): IR \
             build + pipeline IR stages (no verifier run for registered strategies) + Cranelift codegen and \
             executable memory (e.g. {}: {:.0} + {:.0} + {:.0} µs){}.",
            m.compile_runs,
            c.name,
            c.build_us,
            c.passes_us,
            c.codegen_us,
            c.eager_total_us.map_or(String::new(), |e| format!(
                "; compiling the slow path eagerly as well: {:.2} ms",
                e / 1e3
            ))
        ));
    }
    if let Some(first) = m.first_compile_us {
        lines.push(format!(
            "first compile = the library's default compiled once in a new process (ISA built, \
             code and data caches cold), median of {} processes: {:.2} ms — what a program \
             pays before its first hash.",
            m.compile_runs,
            first / 1e3
        ));
    }
    lines.extend(row_notes(&report.rows));
    lines.extend(jvm_note(&report.rows, m, ""));
    lines.push(machine_line(m));
    lines
}

/// The compile-time figures of the rows that have them, as JSON objects.
pub fn compile_json<C>(rows: &[Row<C>]) -> Vec<Value> {
    rows.iter()
        .filter_map(|r| r.compile.as_ref())
        .map(|c| {
            let mut v = json!({
                "impl": c.name,
                "median_us": c.total_us,
                "build_us": c.build_us,
                "passes_us": c.passes_us,
                "codegen_us": c.codegen_us,
                "samples_us": c.samples_us,
            });
            if let Some(eager) = c.eager_total_us {
                v["eager_slow_path_median_us"] = json!(eager);
            }
            v
        })
        .collect()
}

/// Each row's measurement note, absence and failed repetitions, one line each.
pub fn row_notes<C>(rows: &[Row<C>]) -> Vec<String> {
    rows.iter()
        .flat_map(|row| {
            note_lines(
                &row.name,
                row.note.as_deref(),
                row.absent.as_deref(),
                row.warning.as_deref(),
            )
        })
        .collect()
}

/// Row `name`'s measurement note, absence and failed repetitions, one line each (none for
/// what it lacks).
pub fn note_lines(
    name: &str,
    note: Option<&str>,
    absent: Option<&str>,
    warning: Option<&str>,
) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(note) = note {
        lines.push(format!("{name}: {note}."));
    }
    if let Some(absent) = absent {
        lines.push(format!("{name}: absent — {absent}."));
    }
    if let Some(w) = warning {
        lines.push(format!("{name}: some repetitions failed — {w}."));
    }
    lines
}

/// The JVM rows' time budgets and Java version, when a JVM row has figures; `per_size` says
/// more about what a size's budget covers.
pub fn jvm_note<C>(rows: &[Row<C>], m: &Meta, per_size: &str) -> Option<String> {
    rows.iter()
        .any(|r| r.kind == Kind::Jvm && r.absent.is_none())
        .then(|| {
            format!(
                "JVM: {} ms warm-up per process, {} ms per size{per_size}; java.version {}.",
                m.budgets.jvm_warmup_ms,
                m.budgets.jvm_sample_ms,
                m.java_version.as_deref().unwrap_or("unknown")
            )
        })
}

/// The JSON document of a timing run: `meta` ([`meta_json`] of `m` and `more_meta`), one row
/// per row and cell ([`rows_json`]) and the compile times.
pub fn document<C>(
    rows: &[Row<C>],
    cell: impl Fn(&C, bool) -> Value,
    m: &Meta,
    more_meta: Vec<(&str, Value)>,
) -> Value {
    let mut meta = meta_json(m);
    meta.extend(more_meta.into_iter().map(|(k, v)| (k.to_string(), v)));
    json!({
        "meta": meta,
        "rows": rows_json(rows, cell),
        "compile": compile_json(rows),
    })
}

/// One JSON row per row and cell: the row's name, kind, note, absence and warning, and the
/// cell's own fields (`cell(cell, present)`, `present` when the row has figures).
pub fn rows_json<C>(rows: &[Row<C>], cell: impl Fn(&C, bool) -> Value) -> Vec<Value> {
    let mut out = Vec::new();
    for row in rows {
        for c in &row.cells {
            let mut v = cell(c, row.absent.is_none());
            v["impl"] = json!(row.name);
            v["kind"] = json!(row.kind.as_str());
            v["note"] = json!(row.note);
            v["absent"] = json!(row.absent);
            v["warning"] = json!(row.warning);
            out.push(v);
        }
    }
    out
}

/// The CPU and the load average around the run.
pub fn machine_line(m: &Meta) -> String {
    format!(
        "machine: {}; load average {} before, {} after.",
        m.cpu.as_deref().unwrap_or("unknown CPU"),
        opt(m.load_start, 2),
        opt(m.load_end, 2)
    )
}

/// `x` with `digits` decimals, or `unknown`.
pub fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("unknown".into(), |v| format!("{v:.digits$}"))
}

/// The JSON document of a timing run.
pub fn report_json(report: &BenchReport) -> Value {
    let m = &report.meta;
    let cell = |c: &Cell, present: bool| {
        json!({
            "size": c.size,
            "mb_per_s": c.mb_per_s.filter(|_| present),
            "ratio_to_openssl": c.ratio_to_openssl.filter(|_| present),
            "cycles_per_block": c.cycles_per_block.filter(|_| present),
            "samples": c.samples,
        })
    };
    let more_meta = vec![
        (
            "clock_method",
            json!("dependent add-reg-reg chain, median over repetitions"),
        ),
        ("first_compile_fresh_process_us", json!(m.first_compile_us)),
        ("mb", json!("decimal (1e6 bytes)")),
        (
            "ratio",
            json!("median over repetitions of row / openssl in the same repetition"),
        ),
    ];
    let mut doc = document(&report.rows, cell, m, more_meta);
    doc["sizes"] = json!(report.sizes);
    doc
}

/// The run's settings and machine as JSON, the keys every bench's `meta` shares.
pub fn meta_json(m: &Meta) -> serde_json::Map<String, Value> {
    let Value::Object(meta) = json!({
        "cpu": m.cpu,
        "load_average_start": m.load_start,
        "load_average_end": m.load_end,
        "effective_clock_ghz": m.clock_ghz,
        "reps": m.budgets.reps,
        "sample_ms": m.budgets.sample_ms,
        "jvm_warmup_ms": m.budgets.jvm_warmup_ms,
        "jvm_sample_ms": m.budgets.jvm_sample_ms,
        "compile_runs": m.compile_runs,
        "java_version": m.java_version,
        "quick": m.quick,
        "schedlab_default_config": m.default_config,
    }) else {
        unreachable!("a JSON object literal")
    };
    meta
}

/// Formats the deterministic figures of `--callgrind`.
pub fn render_static(rows: &[StaticRow], mca_columns: &[String], format: Format) -> String {
    if format == Format::Json {
        let rows: Vec<Value> = rows
            .iter()
            .map(|r| {
                let mca: serde_json::Map<String, Value> = r
                    .mca
                    .iter()
                    .map(|(k, v)| {
                        let v = match v {
                            Ok(c) => json!(c),
                            Err(e) => json!({ "absent": e }),
                        };
                        (k.clone(), v)
                    })
                    .collect();
                json!({
                    "impl": r.name,
                    "kind": r.kind.as_str(),
                    "instructions_per_block": r.instructions_per_block,
                    "instructions_64b_message": r.instructions_64b_message,
                    "mca_cycles_per_block": if r.mca.is_empty() { Value::Null } else { mca.into() },
                })
            })
            .collect();
        return json_text(&json!({
            "method": "valgrind --tool=callgrind, collection only inside the hash call; \
                       instructions_per_block = difference of a 1025-block and a 1-block \
                       message / 1024; llvm-mca: cycles per iteration of the hot loop",
            "rows": rows,
        }));
    }
    let mut headers = vec![
        "impl".to_string(),
        "kind".into(),
        "instr/block".into(),
        "instr (64 B msg)".into(),
    ];
    headers.extend(mca_columns.iter().map(|c| format!("mca {c}")));
    let mut absent_notes = Vec::new();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut line = vec![
                r.name.clone(),
                r.kind.as_str().into(),
                format!("{:.1}", r.instructions_per_block),
                r.instructions_64b_message.to_string(),
            ];
            for col in mca_columns {
                line.push(match r.mca.iter().find(|(k, _)| k == col) {
                    Some((_, Ok(c))) => format!("{c:.1}"),
                    Some((_, Err(e))) => {
                        absent_notes.push(format!("{} mca {col}: absent — {e}", r.name));
                        "absent".into()
                    }
                    None => "—".into(),
                });
            }
            line
        })
        .collect();
    let mut out = table(&headers, &body, format);
    out.push('\n');
    let mut notes = vec![
        "instr/block: callgrind instructions of a 1025-block minus a 1-block one-shot hash, \
         ÷ 1024 (collection only inside the hash call); instr (64 B msg): the 1-block hash \
         (two compressions with padding)."
            .to_string(),
        "mca: llvm-mca cycles per iteration of the kernel's hot loop (one 64-byte block), \
         schedlab rows only."
            .to_string(),
    ];
    absent_notes.dedup();
    notes.extend(absent_notes);
    for n in notes {
        if format == Format::Markdown {
            out.push_str("- ");
        }
        out.push_str(&n);
        out.push('\n');
    }
    out
}

pub fn json_text(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into());
    s.push('\n');
    s
}

/// An aligned plain-text or Markdown table (the first two columns left-aligned).
pub fn table(headers: &[String], body: &[Vec<String>], format: Format) -> String {
    let cols = headers.len();
    let width = |i: usize| {
        std::iter::once(&headers[i])
            .chain(body.iter().filter_map(|r| r.get(i)))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..cols).map(width).collect();
    // Names and kinds left-aligned, figures right-aligned.
    let pad = |i: usize, s: &str| {
        let fill = " ".repeat(widths[i].saturating_sub(s.chars().count()));
        if i < 2 {
            format!("{s}{fill}")
        } else {
            format!("{fill}{s}")
        }
    };
    let line = |cells: &[String]| {
        let cells: Vec<String> = (0..cols)
            .map(|i| pad(i, cells.get(i).map_or("", String::as_str)))
            .collect();
        match format {
            Format::Markdown => format!("| {} |\n", cells.join(" | ")),
            _ => format!("{}\n", cells.join("  ").trim_end()),
        }
    };
    let mut out = line(headers);
    match format {
        Format::Markdown => {
            let rule: Vec<String> = (0..cols)
                .map(|i| {
                    let dashes = "-".repeat(widths[i].max(3));
                    if i < 2 {
                        dashes
                    } else {
                        format!("{}:", &dashes[1..])
                    }
                })
                .collect();
            out.push_str(&format!("| {} |\n", rule.join(" | ")));
        }
        _ => {
            let total = widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
            out.push_str(&format!("{}\n", "-".repeat(total)));
        }
    }
    for row in body {
        out.push_str(&line(row));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_labels() {
        assert_eq!(size_label(64), "64 B");
        assert_eq!(size_label(1024), "1 KiB");
        assert_eq!(size_label(16384), "16 KiB");
        assert_eq!(size_label(1 << 20), "1 MiB");
        assert_eq!(size_label(1000), "1000 B");
    }

    #[test]
    fn markdown_table_has_a_rule_and_aligned_figures() {
        let t = table(
            &["impl".into(), "kind".into(), "64 B".into()],
            &[vec!["openssl".into(), "hand-written".into(), "1.0".into()]],
            Format::Markdown,
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].ends_with(":|") || lines[1].ends_with(": |"), "{t}");
    }
}
