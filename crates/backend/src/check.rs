//! Judging a kernel's machine code: every case of its registry entry runs through the one
//! executor ([`crate::exec`]), with its arrays flush against the guard page at their end and
//! then at their start, and is compared with what the entry's Rust model of the Java code
//! says ([`Kernel::expected`]). `schedlab check` and the generic kernel tests both use this.

use crate::exec::{self, Call, ExecError, Outcome, Unit};
use crate::target::{OptLevel, Target};
use cranelift_codegen::ir::Function;
use schedlab_kernels::case::{Case, Effect, Placement};
use schedlab_kernels::registry::Kernel;

/// One case in one placement, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseVerdict {
    /// The case's label and placement (`random 3 len=70 [end]`).
    pub label: String,
    /// `None` when the call did what the Java code does; else the first difference.
    pub mismatch: Option<String>,
}

/// Runs `cases` on `func` (the kernel after whatever IR stages the caller ran) compiled for
/// `target` at its named ISA level: every case with [`Placement::End`], then every case with
/// [`Placement::Start`]. One verdict per case and placement, in that order.
pub fn run_kernel_cases(
    kernel: &dyn Kernel,
    func: Function,
    target: Target,
    cases: &[Case],
) -> Result<Vec<CaseVerdict>, ExecError> {
    let isa = target.isa(OptLevel::None).map_err(ExecError::Host)?;
    let units = [Unit {
        label: kernel.name().to_string(),
        functions: vec![func],
    }];
    let runs: Vec<(&Case, Placement)> = Placement::ALL
        .iter()
        .flat_map(|&p| cases.iter().map(move |c| (c, p)))
        .collect();
    let calls: Vec<Call> = runs
        .iter()
        .map(|&(case, placement)| Call::of_case(0, 0, case, placement))
        .collect();
    let outcomes = exec::execute(target, &isa, &units, &calls)?;
    Ok(runs
        .iter()
        .zip(outcomes)
        .map(|(&(case, placement), got)| CaseVerdict {
            label: format!("{} [{}]", case.label, placement.name()),
            mismatch: match kernel.expected(case) {
                Ok(want) => judge(&want, &got),
                Err(e) => Some(format!("malformed case: {e}")),
            },
        })
        .collect())
}

/// Compares what a call did with what the Java code does: `None` when they agree, else the
/// first difference (an array by index and byte offset, not in full).
pub fn judge(want: &Effect, got: &Outcome) -> Option<String> {
    match got {
        Outcome::Returned(effect) if effect == want => None,
        Outcome::Returned(effect) if effect.returns != want.returns => Some(format!(
            "returned {:?}, expected {:?}",
            effect.returns, want.returns
        )),
        Outcome::Returned(effect) => Some(first_array_difference(&want.arrays, &effect.arrays)),
        other => Some(format!("{other}, expected a return of {:?}", want.returns)),
    }
}

fn first_array_difference(want: &[Vec<u8>], got: &[Vec<u8>]) -> String {
    if want.len() != got.len() {
        return format!("{} arrays back, expected {}", got.len(), want.len());
    }
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        if w.len() != g.len() {
            return format!("array {i}: {} bytes back, expected {}", g.len(), w.len());
        }
        if let Some(at) = w.iter().zip(g).position(|(a, b)| a != b) {
            let end = (at + 8).min(w.len());
            return format!(
                "array {i} differs at byte {at}: {:02x?}, expected {:02x?}",
                &g[at..end],
                &w[at..end]
            );
        }
    }
    "the same effect, yet not equal".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::data_value::DataValue;

    fn effect(ret: i32, array: Vec<u8>) -> Effect {
        Effect {
            returns: vec![DataValue::I32(ret)],
            arrays: vec![array],
        }
    }

    #[test]
    fn judge_names_the_first_difference() {
        let want = effect(1, vec![1, 2, 3]);
        assert_eq!(judge(&want, &Outcome::Returned(want.clone())), None);
        let wrong_ret = judge(&want, &Outcome::Returned(effect(2, vec![1, 2, 3])));
        assert!(wrong_ret.is_some_and(|m| m.contains("returned")));
        let wrong_byte = judge(&want, &Outcome::Returned(effect(1, vec![1, 9, 3])));
        assert!(wrong_byte.is_some_and(|m| m.contains("array 0 differs at byte 1")));
        let trap = judge(&want, &Outcome::Trapped("SIGSEGV".into()));
        assert!(trap.is_some_and(|m| m.contains("SIGSEGV")));
    }
}
