//! Solved blocks, keyed by [`BlockProblem::key`]: a process-wide memo, the committed table of
//! the built-in kernels' blocks (`known.tsv`, compiled in; left out when
//! `SCHEDLAB_OPTIMUM_FRESH=1`) and, when `SCHEDLAB_OPTIMUM_CACHE` names a file, that file (read
//! at start, appended to after every solve).
//!
//! Nothing read from a table is trusted: an entry is used only if its orders are legal orders
//! of the problem and re-evaluating them gives the figures the entry states (a stale or
//! corrupt line is ignored and the block solved again). The statuses and bounds are the
//! solver's proofs at the time of writing; `scripts/regen-notes optimal` rewrites the table.
//!
//! Line format (tab-separated): key (16 hex digits), free nodes, then for the pressure and the
//! length problems each: value (`-` for none), bound, status, seconds, satisfiability
//! questions asked, order
//! (comma-separated free-node indices).

use super::{BlockOptimum, BlockProblem, Bounded, Status};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The committed table of the built-in kernels' blocks.
pub const KNOWN: &str = include_str!("known.tsv");

/// The environment variable naming a cache file to read and append to.
pub const CACHE_ENV: &str = "SCHEDLAB_OPTIMUM_CACHE";

/// The environment variable that, set to `1`, leaves the committed table out (to regenerate
/// it: every block solved afresh).
pub const FRESH_ENV: &str = "SCHEDLAB_OPTIMUM_FRESH";

fn memo() -> &'static Mutex<HashMap<u64, BlockOptimum>> {
    static MEMO: OnceLock<Mutex<HashMap<u64, BlockOptimum>>> = OnceLock::new();
    MEMO.get_or_init(|| {
        let mut map = HashMap::new();
        let mut load = |text: &str| {
            for line in text.lines() {
                if let Some((key, optimum)) = parse_line(line) {
                    map.insert(key, optimum);
                }
            }
        };
        if std::env::var(FRESH_ENV).as_deref() != Ok("1") {
            load(KNOWN);
        }
        if let Some(text) =
            std::env::var_os(CACHE_ENV).and_then(|p| std::fs::read_to_string(p).ok())
        {
            load(&text);
        }
        Mutex::new(map)
    })
}

/// The cached optimum of `problem`, if an entry exists and checks out.
pub fn lookup(problem: &BlockProblem) -> Option<BlockOptimum> {
    let key = problem.key();
    let entry = memo()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
        .cloned()?;
    checks_out(problem, &entry).then_some(entry)
}

/// Remembers `optimum` for the rest of the process and, when [`CACHE_ENV`] names a file,
/// appends it there (failing to write only loses the saving).
pub fn store(problem: &BlockProblem, optimum: &BlockOptimum) {
    let key = problem.key();
    memo()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, optimum.clone());
    if let Some(path) = std::env::var_os(CACHE_ENV)
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = file.write_all(format_line(key, optimum).as_bytes());
    }
}

/// Whether an entry's orders are legal for `problem` and reach the figures it states.
fn checks_out(problem: &BlockProblem, entry: &BlockOptimum) -> bool {
    if entry.nodes != problem.len() {
        return false;
    }
    let pressure_ok = problem.is_legal(&entry.pressure.order)
        && entry.pressure.value == Some(problem.pressure_of(&entry.pressure.order))
        && entry.pressure.bound <= problem.pressure_of(&entry.pressure.order);
    let length_ok = match entry.length.value {
        Some(v) => {
            problem.is_legal(&entry.length.order)
                && problem.length_of(&entry.length.order) == v
                && problem.within_budget(problem.pressure_of(&entry.length.order))
                && entry.length.bound <= v
        }
        None => matches!(entry.length.status, Status::Infeasible | Status::Unknown),
    };
    pressure_ok && length_ok
}

/// One table line for `optimum` (with its trailing newline).
pub fn format_line(key: u64, optimum: &BlockOptimum) -> String {
    let mut line = format!("{key:016x}\t{}", optimum.nodes);
    for b in [&optimum.pressure, &optimum.length] {
        let value = b.value.map_or("-".to_string(), |v| v.to_string());
        let order: Vec<String> = b.order.iter().map(u32::to_string).collect();
        let _ = write!(
            line,
            "\t{value}\t{}\t{}\t{:.3}\t{}\t{}",
            b.bound,
            b.status,
            b.seconds,
            b.steps,
            order.join(",")
        );
    }
    line.push('\n');
    line
}

/// Parses one table line; `None` for a malformed one.
pub fn parse_line(line: &str) -> Option<(u64, BlockOptimum)> {
    let fields: Vec<&str> = line.split('\t').collect();
    if fields.len() != 14 {
        return None;
    }
    let key = u64::from_str_radix(fields[0], 16).ok()?;
    let nodes = fields[1].parse().ok()?;
    let bounded = |f: &[&str]| -> Option<Bounded> {
        let value = match f[0] {
            "-" => None,
            v => Some(v.parse().ok()?),
        };
        let order = if f[5].is_empty() {
            Vec::new()
        } else {
            f[5].split(',')
                .map(|x| x.parse().ok())
                .collect::<Option<Vec<u32>>>()?
        };
        Some(Bounded {
            value,
            bound: f[1].parse().ok()?,
            status: Status::from_name(f[2])?,
            seconds: f[3].parse().ok()?,
            order,
            steps: f[4].parse().ok()?,
        })
    };
    Some((
        key,
        BlockOptimum {
            nodes,
            pressure: bounded(&fields[2..8])?,
            length: bounded(&fields[8..14])?,
        },
    ))
}
