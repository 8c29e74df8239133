//! schedlab's own static figures for `schedlab report` rows: hot-loop spills and reloads, the
//! recurrence/resource bound per modelled core, and which llvm-mca figures fall below it.
//!
//! What `--mca` leads with (decision and reason: `notes/design.md`, "Static cycle
//! estimates", "What `--mca` leads with"): schedlab's model — on the x86_64 cores
//! its schedule simulation (`cost::sim`, never under the bound), elsewhere the bound
//! `max(recurrence, resource)` — which keeps the spill → reload dependence llvm-mca drops;
//! llvm-mca's figures follow it, marked `*` where they are below the same core's bound
//! (impossible on that core).

use crate::report::Row;
use schedlab_backend::Compiled;
use schedlab_backend::cost::{CostError, loop_cost_simulated};
use std::collections::BTreeMap;

/// The own-model part of a report row.
#[derive(Clone, Debug, Default)]
pub struct RowCost {
    /// Spill stores per hot-loop iteration.
    pub loop_spills: Option<usize>,
    /// Reloads per hot-loop iteration.
    pub loop_reloads: Option<usize>,
    /// The lowest of the per-core bounds: no modelled core runs an iteration faster.
    pub recurrence_bound: Option<f64>,
    /// What the report leads with per modelled core, cycles per iteration: the simulation
    /// where the core has one ([`schedlab_backend::cost::LoopCost::lead`]), else the bound.
    pub model: BTreeMap<String, f64>,
    /// `max(recurrence, resource)` per modelled core, cycles per iteration.
    pub bound: BTreeMap<String, f64>,
}

/// Rounds to one decimal, as the report prints cycles.
pub fn tenth(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// The own-model figures of `compiled`; a problem (llvm-objdump missing, an instruction the model
/// cannot read) is collected once and the figures stay empty.
pub fn row_cost(compiled: &Compiled, problems: &mut Vec<String>) -> RowCost {
    match loop_cost_simulated(compiled) {
        Ok(cost) => {
            let bound: BTreeMap<String, f64> = cost
                .bounds
                .iter()
                .map(|b| (b.cpu.to_string(), tenth(b.bound())))
                .collect();
            let model: BTreeMap<String, f64> = cost
                .bounds
                .iter()
                .filter_map(|b| Some((b.cpu.to_string(), tenth(cost.lead(b.cpu)?))))
                .collect();
            let recurrence_bound = bound.values().copied().reduce(f64::min);
            RowCost {
                loop_spills: Some(cost.spills.spills),
                loop_reloads: Some(cost.spills.reloads),
                recurrence_bound,
                model,
                bound,
            }
        }
        Err(e) => {
            let msg = match &e {
                CostError::Loop(inner) => format!("hot loop: {inner}"),
                other => other.to_string(),
            };
            let msg = format!("{}: {msg}", compiled.target);
            if !problems.contains(&msg) {
                problems.push(msg);
            }
            RowCost::default()
        }
    }
}

/// The CPUs whose llvm-mca figure is below schedlab's bound for the same core (or, for a core
/// schedlab has no table for, below the row's bound).
pub fn below_bound(cost: &RowCost, mca: &BTreeMap<String, f64>) -> Vec<String> {
    mca.iter()
        .filter(|(cpu, figure)| {
            let bound = cost.bound.get(*cpu).copied().or(cost.recurrence_bound);
            bound.is_some_and(|b| **figure + 1e-9 < b)
        })
        .map(|(cpu, _)| cpu.clone())
        .collect()
}

/// Printed under a table where some llvm-mca figure is marked.
pub const FOOTNOTE: &str = "* llvm-mca figure below schedlab's bound for that core (the loop's \
     longest dependence cycle, spill slots included, or its issue slots over the core's width). \
     llvm-mca assumes loads never alias earlier stores, so a spill -> reload leaves its \
     dependence chain. The figure before the parentheses (schedlab's model: on x86_64 cores its \
     schedule simulation, never under the bound; elsewhere the bound) is what the report leads \
     with.";

/// `cpu model (mca llvm-mca[*])` per core, over the cores either side has; where the model is
/// the simulation and differs from the bound, `cpu model (bound b, mca llvm-mca[*])`.
pub fn mca_cell(row: &Row, mca: &BTreeMap<String, f64>) -> String {
    let empty = BTreeMap::new();
    let model = row.model.as_ref().unwrap_or(&empty);
    let bounds = row.model_bound.as_ref().unwrap_or(&empty);
    let below = row.mca_below_bound.as_deref().unwrap_or(&[]);
    let mut cpus: Vec<&String> = model.keys().chain(mca.keys()).collect();
    cpus.sort();
    cpus.dedup();
    if cpus.is_empty() {
        return "n/a".to_string();
    }
    cpus.into_iter()
        .map(|cpu| {
            let own = model
                .get(cpu)
                .map_or("-".to_string(), |v| format!("{v:.1}"));
            let theirs = mca.get(cpu).map_or("-".to_string(), |v| {
                let mark = if below.contains(cpu) { "*" } else { "" };
                format!("{v:.1}{mark}")
            });
            let bound = match (bounds.get(cpu), model.get(cpu)) {
                (Some(b), Some(m)) if (b - m).abs() > 0.05 => format!("bound {b:.1}, "),
                _ => String::new(),
            };
            format!("{cpu} {own} ({bound}mca {theirs})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_under_their_core_bound_are_flagged() {
        let cost = RowCost {
            recurrence_bound: Some(280.0),
            bound: BTreeMap::from([
                ("znver3".to_string(), 290.0),
                ("skylake".to_string(), 330.0),
            ]),
            ..RowCost::default()
        };
        let mca = BTreeMap::from([
            ("znver3".to_string(), 236.6),
            ("skylake".to_string(), 330.0),
            ("z15".to_string(), 279.9),
        ]);
        assert_eq!(below_bound(&cost, &mca), vec!["z15", "znver3"]);
    }
}
