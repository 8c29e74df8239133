//! One executor for Cranelift functions of any signature, on every target.
//!
//! The caller describes what to run generically — groups of functions ([`Unit`]s, e.g. one
//! `.clif` file after one scheduling strategy) and [`Call`]s with [`DataValue`] arguments — and
//! gets one [`Outcome`] per call: the results, the trap (a signal) or the reason it did not run.
//! Nothing here knows a kernel.
//!
//! How a call of any signature is made: for every called function a *trampoline* is generated
//! as Cranelift IR (`fn(buf: ptr)`: load each argument from a 16-byte slot of `buf`, call,
//! store each result into the following slots; every access little-endian, so the buffer's
//! bytes are the same on every target). The trampolines are compiled for the same ISA and
//! linked with the functions:
//!
//! - on the host into a JIT module, called in a forked child per batch of calls (a trap kills
//!   the child, never this process; the parent re-forks after the trapping call);
//! - elsewhere into one object file per target, linked with one generated C file (a table of
//!   trampolines, a hex reader/writer and `sigsetjmp` around every call) by the cross `gcc`
//!   and run under `qemu-<arch>` through [`crate::emulate::run_harness_source`].
//!
//! Calls between the unit's functions go through ordinary relocations: `%name` references
//! in the IR are renamed to the module's function ids before code generation.

mod harness;
pub mod isa;
mod link;
mod native;
mod trampoline;

pub use link::panic_message;

use crate::emulate::EmulateError;
use crate::target::Target;
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{Function, Type};
use cranelift_codegen::isa::OwnedTargetIsa;
use std::fmt;
use std::time::Duration;

/// Bytes per argument or result slot in a trampoline's buffer (the widest value: i128, or a
/// 128-bit vector).
pub const SLOT_BYTES: usize = 16;

/// How long one call may run before it is stopped and reported as a timeout.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// A group of functions compiled and linked together (they may call each other by name).
#[derive(Clone, Debug)]
pub struct Unit {
    /// A label for messages (e.g. the strategy the functions went through).
    pub label: String,
    /// The functions, after whatever IR stages the caller ran.
    pub functions: Vec<Function>,
}

/// One call to execute.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// Index into the units given to [`execute`].
    pub unit: usize,
    /// Index of the function in its unit.
    pub function: usize,
    /// The arguments, one per parameter, of the parameter's type.
    pub args: Vec<DataValue>,
}

/// What one call did.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The function returned these values.
    Returned(Vec<DataValue>),
    /// The function trapped: the signal's name (`SIGILL`, `SIGSEGV`, …) or `timeout`.
    Trapped(String),
    /// The call could not be made (its unit failed to compile or link, the harness failed).
    NotRun(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Returned(values) => {
                let text: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                write!(f, "[{}]", text.join(", "))
            }
            Outcome::Trapped(signal) => write!(f, "trap ({signal})"),
            Outcome::NotRun(why) => write!(f, "not run: {why}"),
        }
    }
}

/// Why nothing could be executed at all (per-call problems are [`Outcome::NotRun`]).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A call names a unit or function that does not exist, or its arguments do not fit.
    #[error("call {index}: {message}")]
    BadCall {
        /// Position of the call.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// The ISA is not the target's architecture.
    #[error("the ISA is for {found}, not {target}")]
    WrongIsa {
        /// The target asked for.
        target: Target,
        /// The ISA's triple.
        found: String,
    },
    /// Building or running the harness failed (missing tools, link errors, I/O).
    #[error(transparent)]
    Emulate(#[from] EmulateError),
    /// Running calls on the host failed (fork, shared memory, JIT module).
    #[error("host execution: {0}")]
    Host(String),
}

/// Whether values of type `ty` can be passed through a trampoline slot.
pub fn slot_supports(ty: Type) -> bool {
    let bytes = ty.bytes() as usize;
    (ty.is_int() || ty.is_float() || ty.is_vector()) && bytes > 0 && bytes <= SLOT_BYTES
}

/// Executes `calls` on `target`: each unit's functions and the trampolines are compiled with
/// `isa`, the host runs them through the JIT (in a child process), other targets through one
/// generated C harness under qemu. One outcome per call, in order.
pub fn execute(
    target: Target,
    isa: &OwnedTargetIsa,
    units: &[Unit],
    calls: &[Call],
) -> Result<Vec<Outcome>, ExecError> {
    if isa::target_of(isa.as_ref()) != Some(target) {
        return Err(ExecError::WrongIsa {
            target,
            found: isa.triple().to_string(),
        });
    }
    validate_calls(units, calls)?;
    let linked = link::compile_units(target, isa, units, calls);
    let buffers: Vec<Vec<u8>> = calls.iter().map(encode_args).collect();
    let mut outcomes: Vec<Option<Outcome>> = calls
        .iter()
        .map(|c| linked.call_error(c).map(|e| Outcome::NotRun(e.clone())))
        .collect();
    let runnable: Vec<usize> = (0..calls.len())
        .filter(|&i| outcomes[i].is_none())
        .collect();
    if !runnable.is_empty() {
        let requests: Vec<(usize, Vec<u8>)> = runnable
            .iter()
            .map(|&i| (linked.trampoline_of(&calls[i]), buffers[i].clone()))
            .collect();
        let raw = if target.is_host() {
            native::run(isa, &linked, &requests)?
        } else {
            harness::run(target, isa, &linked, &requests)?
        };
        for (&i, result) in runnable.iter().zip(raw) {
            outcomes[i] = Some(match result {
                RawOutcome::Returned(bytes) => decode_results(units, &calls[i], &bytes),
                RawOutcome::Trapped(signal) => Outcome::Trapped(signal),
                RawOutcome::NotRun(why) => Outcome::NotRun(why),
            });
        }
    }
    Ok(outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(|| Outcome::NotRun("internal: no outcome".into())))
        .collect())
}

/// What a runner reports for one call, before the results are decoded.
pub(crate) enum RawOutcome {
    /// The buffer after the call.
    Returned(Vec<u8>),
    /// The signal's name.
    Trapped(String),
    /// Why the call did not run.
    NotRun(String),
}

fn validate_calls(units: &[Unit], calls: &[Call]) -> Result<(), ExecError> {
    for (index, call) in calls.iter().enumerate() {
        let bad = |message: String| ExecError::BadCall { index, message };
        let unit = units
            .get(call.unit)
            .ok_or_else(|| bad(format!("no unit {}", call.unit)))?;
        let func = unit.functions.get(call.function).ok_or_else(|| {
            bad(format!(
                "unit {} has no function {}",
                call.unit, call.function
            ))
        })?;
        let params: Vec<Type> = func.signature.params.iter().map(|p| p.value_type).collect();
        let args: Vec<Type> = call.args.iter().map(DataValue::ty).collect();
        // The reader gives vector values as raw bytes (`i8x16`); any vector of the same size fits.
        let fits = |p: &Type, a: &Type| {
            p == a || (p.is_vector() && a.is_vector() && p.bytes() == a.bytes())
        };
        if params.len() != args.len() || !params.iter().zip(&args).all(|(p, a)| fits(p, a)) {
            return Err(bad(format!(
                "{} takes ({}), the call passes ({})",
                func.name,
                type_list(&params),
                type_list(&args)
            )));
        }
        if func.signature.returns.len() > MAX_RESULTS {
            return Err(bad(format!(
                "{}: more than {MAX_RESULTS} results",
                func.name
            )));
        }
        let returns = func.signature.returns.iter().map(|r| r.value_type);
        if let Some(ty) = params
            .iter()
            .copied()
            .chain(returns)
            .find(|t| !slot_supports(*t))
        {
            return Err(bad(format!(
                "{}: values of type {ty} cannot be passed",
                func.name
            )));
        }
    }
    Ok(())
}

fn type_list(types: &[Type]) -> String {
    types
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The buffer a trampoline reads: one little-endian slot per argument, then one per result.
fn encode_args(call: &Call) -> Vec<u8> {
    // Results are sized by the callee at decode time; reserve the worst case here.
    let slots = call.args.len() + MAX_RESULTS;
    let mut buf = vec![0u8; slots * SLOT_BYTES];
    for (i, arg) in call.args.iter().enumerate() {
        arg.write_to_slice_le(&mut buf[i * SLOT_BYTES..(i + 1) * SLOT_BYTES]);
    }
    buf
}

/// The most results a called function may have.
pub const MAX_RESULTS: usize = 16;

fn decode_results(units: &[Unit], call: &Call, bytes: &[u8]) -> Outcome {
    let func = &units[call.unit].functions[call.function];
    let first = call.args.len();
    let mut values = Vec::new();
    for (j, ret) in func.signature.returns.iter().enumerate() {
        let start = (first + j) * SLOT_BYTES;
        let Some(slot) = bytes.get(start..start + SLOT_BYTES) else {
            return Outcome::NotRun(format!("result buffer too short ({} bytes)", bytes.len()));
        };
        values.push(DataValue::read_from_slice_le(slot, ret.value_type));
    }
    Outcome::Returned(values)
}
