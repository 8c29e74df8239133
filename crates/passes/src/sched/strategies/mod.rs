//! The strategies, one per file. Each file ends with its registry entry (`ENTRY`).

pub mod balanced;
pub mod hoist_loads;
pub mod latency_pressure;
pub mod list_latency;
#[cfg(feature = "optimal")]
pub mod optimal;
pub mod pressure;
pub mod pressure_remat;
pub mod remat_loads;
pub mod shuffle;
pub mod sink_loads;
pub mod source;
