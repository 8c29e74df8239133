//! Timing any function schedlab can execute: a registered kernel on its cases, a `.clif`
//! function on its run lines. Rows are configurations (stock Cranelift, each strategy), each
//! its own compiled unit; columns are probes (one call each). Every call is first run once and
//! judged by the caller (a wrong result is an error, never a time), then repeated in the
//! executor's child until one run of repeats fills the sample budget
//! ([`schedlab_backend::exec::time`]). Each repetition times every configuration once, in an
//! order rotated per repetition, so ratios are taken within a repetition ([`Samples::speedup`]).

use crate::{Samples, rotated};
use cranelift_codegen::isa::OwnedTargetIsa;
use schedlab_backend::Target;
use schedlab_backend::exec::{self, Call, ExecError, Outcome, Unit};
use std::time::Duration;

/// One configuration: a unit compiled with its own ISA (stock Cranelift's differs from
/// schedlab's in its optimisation level).
pub struct Config {
    /// The row's name (`cranelift-speed`, a strategy's name).
    pub name: String,
    /// The ISA the unit is compiled with.
    pub isa: OwnedTargetIsa,
    /// The functions after this configuration's IR stages.
    pub unit: Unit,
}

/// One timed call, the same for every configuration (its `unit` is ignored).
#[derive(Clone, Debug)]
pub struct Probe {
    /// The column's name (a case's label, a run line).
    pub label: String,
    /// The call (unit index 0 of each configuration).
    pub call: Call,
}

/// Says whether a probe's outcome is right: `None` when it is, else the mismatch.
pub type Judge<'a> = dyn Fn(usize, &Outcome) -> Option<String> + Sync + 'a;

/// Budgets of a timing run.
#[derive(Clone, Copy, Debug)]
pub struct CallBudgets {
    /// Repetitions; figures are medians over them.
    pub reps: usize,
    /// The least wall time of one run of repeats of one call.
    pub sample: Duration,
}

/// What [`measure`] found.
#[derive(Clone, Debug)]
pub struct CallTimes {
    /// Seconds per call, `[config][probe][rep]` (NaN where a call failed).
    pub samples: Samples,
    /// Per configuration and probe, why it has no time (a wrong result, a trap, a build
    /// error), `None` when timed.
    pub errors: Vec<Vec<Option<String>>>,
}

/// Times every probe under every configuration on the host.
// The repetition indexes the samples and also rotates the configurations' order.
#[allow(clippy::needless_range_loop)]
pub fn measure(
    target: Target,
    configs: &[Config],
    probes: &[Probe],
    judge: &Judge<'_>,
    budgets: CallBudgets,
    mut progress: impl FnMut(),
) -> Result<CallTimes, ExecError> {
    let reps = budgets.reps.max(1);
    let mut seconds = vec![vec![vec![f64::NAN; reps]; probes.len()]; configs.len()];
    let mut errors = vec![vec![None; probes.len()]; configs.len()];
    let calls: Vec<Call> = probes
        .iter()
        .map(|p| Call {
            unit: 0,
            ..p.call.clone()
        })
        .collect();
    for rep in 0..reps {
        for k in 0..configs.len() {
            let c = rotated(k, rep, configs.len());
            let config = &configs[c];
            let timed = exec::time(
                target,
                &config.isa,
                std::slice::from_ref(&config.unit),
                &calls,
                budgets.sample,
            )?;
            for (p, t) in timed.iter().enumerate() {
                match (judge(p, &t.outcome), t.nanos_per_call) {
                    (None, Some(nanos)) => seconds[c][p][rep] = nanos * 1e-9,
                    (None, None) => errors[c][p] = Some(format!("{}: not timed", t.outcome)),
                    (Some(mismatch), _) => errors[c][p] = Some(mismatch),
                }
            }
            progress();
        }
    }
    Ok(CallTimes {
        samples: Samples {
            seconds,
            clocks_ghz: Vec::new(),
        },
        errors,
    })
}
