//! The strategy table: one line per built-in strategy. The CLI, the tests and the benches all
//! go through it, so adding a strategy is one file in `strategies/` plus one line here.
//!
//! A program outside this workspace adds its own with [`register`]: registered strategies come
//! after the built-ins in [`entries`], so every path that selects a strategy by name (the
//! pipeline, `--strategy NAME`, `--strategy all`) sees them.

use super::strategies;
use super::strategy::Strategy;
use super::{SchedError, ScheduleOptions};
use std::hash::{Hash, Hasher};
use std::sync::{PoisonError, RwLock};

/// A registered strategy.
#[derive(Clone, Copy)]
pub struct StrategyEntry {
    /// The name it is selected by.
    pub name: &'static str,
    /// One line for `--help` and reports.
    pub summary: &'static str,
    /// Creates a fresh instance.
    pub make: fn(&ScheduleOptions) -> Box<dyn Strategy>,
}

impl std::fmt::Debug for StrategyEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StrategyEntry")
            .field("name", &self.name)
            .field("summary", &self.summary)
            .finish()
    }
}

/// Two entries are equal when they have the same name and the same factory function (the
/// summary is prose and does not matter).
impl PartialEq for StrategyEntry {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && std::ptr::fn_addr_eq(self.make, other.make)
    }
}

impl Eq for StrategyEntry {}

impl Hash for StrategyEntry {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        (self.make as usize).hash(state);
    }
}

/// Every built-in strategy, in report order.
pub static STRATEGIES: &[StrategyEntry] = &[
    strategies::source::ENTRY,
    strategies::hoist_loads::ENTRY,
    strategies::sink_loads::ENTRY,
    strategies::remat_loads::ENTRY,
    strategies::list_latency::ENTRY,
    strategies::pressure::ENTRY,
    strategies::pressure_remat::ENTRY,
    strategies::latency_pressure::ENTRY,
    strategies::balanced::ENTRY,
    strategies::shuffle::ENTRY,
    #[cfg(feature = "optimal")]
    strategies::optimal::ENTRY,
];

/// Strategies added at run time by [`register`], in registration order.
static REGISTERED: RwLock<Vec<StrategyEntry>> = RwLock::new(Vec::new());

/// Adds `entry` to the registry for the rest of the process, after the built-ins and any
/// strategy registered before it.
///
/// Refused: an empty name, a name with a comma or whitespace (command lines take
/// comma-separated lists), `all` (it selects every strategy), and a name already taken by a
/// built-in or registered strategy.
pub fn register(entry: StrategyEntry) -> Result<(), SchedError> {
    let refuse = |reason: &'static str| {
        Err(SchedError::InvalidStrategyName {
            name: entry.name.to_string(),
            reason,
        })
    };
    if entry.name.is_empty() {
        return refuse("the name is empty");
    }
    if entry.name.contains(|c: char| c == ',' || c.is_whitespace()) {
        return refuse("a name has no commas or whitespace");
    }
    if entry.name == "all" {
        return refuse("`all` selects every strategy");
    }
    // One write lock for the check and the insertion: two threads registering the same name
    // cannot both succeed.
    let mut registered = REGISTERED.write().unwrap_or_else(PoisonError::into_inner);
    let taken = STRATEGIES
        .iter()
        .chain(registered.iter())
        .any(|e| e.name == entry.name);
    if taken {
        return Err(SchedError::DuplicateStrategy {
            name: entry.name.to_string(),
        });
    }
    registered.push(entry);
    Ok(())
}

/// Every strategy: the built-ins in report order, then the registered ones in registration
/// order.
pub fn entries() -> Vec<StrategyEntry> {
    let registered = REGISTERED.read().unwrap_or_else(PoisonError::into_inner);
    STRATEGIES
        .iter()
        .chain(registered.iter())
        .copied()
        .collect()
}
