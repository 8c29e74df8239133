//! The strategy table: one line per strategy. The CLI, the tests and the benches all go
//! through it, so adding a strategy is one file in `strategies/` plus one line here.

use super::ScheduleOptions;
use super::strategies;
use super::strategy::Strategy;

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

/// Every strategy, in report order.
pub static STRATEGIES: &[StrategyEntry] = &[
    strategies::source::ENTRY,
    strategies::hoist_loads::ENTRY,
    strategies::sink_loads::ENTRY,
    strategies::remat_loads::ENTRY,
    strategies::list_latency::ENTRY,
    strategies::pressure::ENTRY,
    strategies::pressure_remat::ENTRY,
    strategies::latency_pressure::ENTRY,
    strategies::shuffle::ENTRY,
];
