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
use schedlab_backend::Target;
use schedlab_cost::{
    CostError, LoopCost, loop_cost, loop_cost_simulated, loop_costs, loop_costs_simulated,
};
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
    /// Whether the hot code is a loop (else straight-line code).
    pub hot_code_is_loop: Option<bool>,
    /// What the report leads with per modelled core, cycles per iteration: the simulation
    /// where the core has one ([`schedlab_cost::LoopCost::lead`]), else the bound.
    pub model: BTreeMap<String, f64>,
    /// `max(recurrence, resource)` per modelled core, cycles per iteration.
    pub bound: BTreeMap<String, f64>,
}

/// Rounds to one decimal, as the report prints cycles.
pub fn tenth(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// The own-model figures of each of `compiled`, in order, with its problems (llvm-objdump
/// missing, an instruction the model cannot read: each collected once, the figures then
/// empty). The functions are disassembled together ([`loop_costs_simulated`]: one llvm-objdump
/// process per target for each of rayon's threads, not one per function). Should a part panic,
/// its functions are costed one by one and a panic is the problem of its own row.
///
/// The schedule simulation runs only when `simulate` is set: its figures reach a row only
/// beside llvm-mca's ([`fill`]), and without them the row's figure is the bound.
pub fn row_costs(compiled: &[&Compiled], simulate: bool) -> Vec<(RowCost, Vec<String>)> {
    use rayon::prelude::*;
    let per_thread = compiled.len().div_ceil(rayon::current_num_threads()).max(1);
    compiled
        .par_chunks(per_thread)
        .flat_map_iter(|part| {
            let costs_of = |part: &[&Compiled]| {
                if simulate {
                    loop_costs_simulated(part)
                } else {
                    loop_costs(part)
                }
            };
            let costs: Vec<Result<LoopCost, String>> = match crate::guard::catch(|| costs_of(part))
            {
                Ok(costs) => costs
                    .into_iter()
                    .map(|c| c.map_err(|e| cost_message(&e)))
                    .collect(),
                Err(_) => part
                    .iter()
                    .map(|c| {
                        crate::guard::catch(|| {
                            if simulate {
                                loop_cost_simulated(c)
                            } else {
                                loop_cost(c)
                            }
                        })
                        .and_then(|c| c.map_err(|e| cost_message(&e)))
                    })
                    .collect(),
            };
            part.iter()
                .zip(costs)
                .map(|(c, cost)| {
                    let mut problems = Vec::new();
                    let cost = row_cost_of(c.target, cost, &mut problems);
                    (cost, problems)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Fills `row`'s own-model columns from `cost` (with llvm-mca figures in the row, also the
/// model's figures beside them and which of them fall below schedlab's bound).
pub fn fill(row: &mut Row, cost: RowCost) {
    if let Some(mca) = &row.mca {
        row.mca_below_bound = Some(below_bound(&cost, mca));
        row.model = Some(cost.model.clone());
        row.model_bound = Some(cost.bound.clone());
    }
    row.loop_spills = cost.loop_spills;
    row.loop_reloads = cost.loop_reloads;
    row.recurrence_bound = cost.recurrence_bound;
    row.hot_code_is_loop = cost.hot_code_is_loop;
}

fn cost_message(e: &CostError) -> String {
    match e {
        CostError::Loop(inner) => format!("hot loop: {inner}"),
        other => other.to_string(),
    }
}

fn row_cost_of(
    target: Target,
    cost: Result<LoopCost, String>,
    problems: &mut Vec<String>,
) -> RowCost {
    match cost {
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
                hot_code_is_loop: Some(cost.is_loop),
                model,
                bound,
            }
        }
        Err(msg) => {
            let msg = format!("{target}: {msg}");
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
