//! `pressure-remat`: `pressure` after load rematerialisation — each use of a never-written
//! load gets its own copy, which the pressure cascade then places where it costs least.

use super::pressure::Pressure;
use crate::sched::registry::StrategyEntry;

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "pressure-remat",
    summary: "`pressure` combined with load rematerialisation",
    make: |_| Box::new(Pressure { remat: true }),
};
