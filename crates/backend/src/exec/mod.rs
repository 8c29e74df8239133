//! One executor for Cranelift functions of any signature, on every target.
//!
//! The caller describes what to run generically — groups of functions ([`Unit`]s, e.g. one
//! `.clif` file after one scheduling strategy) and [`Call`]s whose arguments are scalars or
//! Java arrays ([`Arg`], the call model of [`schedlab_kernels::case`]) — and gets one
//! [`Outcome`] per call: the results and every array's contents after the call, the trap (a
//! signal) or the reason it did not run. Nothing here knows a kernel.
//!
//! Every array gets its own mapping per call, flush against a `PROT_NONE` guard page
//! ([`Placement::End`]: the data ends where the guard page begins, so `a[length]` traps;
//! [`Placement::Start`]: it begins right after one, so `a[-1]` traps; the other side is
//! guarded too, and an empty array points between two guard pages). Arrays cross to the
//! target in its byte order and come back in canonical (little-endian) order.
//!
//! How a call of any signature is made: for every called function a *trampoline* is generated
//! as Cranelift IR (`fn(buf: ptr)`: load each argument from a 16-byte slot of `buf`, call,
//! store each result into the following slots; every access little-endian, so the buffer's
//! bytes are the same on every target; an array's slot holds its pointer). The trampolines
//! are compiled for the same ISA and linked with the functions:
//!
//! - on the host into a JIT module, called in a forked child per batch of calls (a trap kills
//!   the child, never this process; the parent re-forks after the trapping call);
//! - elsewhere into one object file per target, linked with one generated C file (a table of
//!   trampolines, a hex reader/writer, guarded arrays and `sigsetjmp` around every call) by
//!   the cross `gcc` and run under `qemu-<arch>` through [`crate::emulate::run_harness_source`].
//!
//! Calls between the unit's functions go through ordinary relocations: `%name` references
//! in the IR are renamed to the module's function ids before code generation.

mod guarded;
mod harness;
pub mod isa;
mod link;
mod native;
#[cfg(target_arch = "x86_64")]
mod throw;
mod trampoline;

pub use guarded::{GuardedRegion, map_anonymous, page_size};
pub use link::panic_message;

use crate::emulate::EmulateError;
use crate::target::Target;
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{Function, Type};
use cranelift_codegen::isa::OwnedTargetIsa;
use schedlab_kernels::case::{Arg, ArrayArg, Case, Effect, Placement};
use std::fmt;
use std::time::Duration;

/// Bytes per argument or result slot in a trampoline's buffer (the widest value: i128, or a
/// 128-bit vector).
pub const SLOT_BYTES: usize = 16;

/// How long one call may run before it is stopped and reported as a timeout.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The name of the hostcall Cranelift's runner (cranelift-filetests' `function_runner.rs`)
/// gives `try_call` code to throw with:
/// `%__cranelift_throw(entry_fp, exit_fp, exit_pc, tag: i32, payload1, payload2)` walks the
/// frames from `exit_fp` up to `entry_fp` and resumes at the first handler of `tag` (or a
/// catch-all), the payloads in the `tail` convention's exception registers. A function of a
/// [`Unit`] that calls it (or takes its address) and defines no function of that name gets the
/// executor's entry where [`provides_throw_entry`] holds.
pub const THROW_ENTRY: &str = "__cranelift_throw";

/// Whether code for `target` run by this executor can call [`THROW_ENTRY`]: native code on an
/// x86_64 host. Code run under qemu (the C harness) cannot; a call to it is
/// [`Outcome::NotRun`] there, as any call of a name the unit does not define.
pub fn provides_throw_entry(target: Target) -> bool {
    cfg!(target_arch = "x86_64") && target.is_host()
}

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
    /// The arguments, one per parameter: a scalar of the parameter's type, or an array (or
    /// the same array again) for a parameter of the target's pointer type.
    pub args: Vec<Arg>,
    /// Arrays passed to no parameter, reachable only through pointer slots of other arrays
    /// ([`Case::memory`]).
    pub memory: Vec<ArrayArg>,
    /// Where the call's arrays sit relative to their guard pages.
    pub placement: Placement,
}

impl Call {
    /// A call with scalar arguments only.
    pub fn scalars(unit: usize, function: usize, args: &[DataValue]) -> Self {
        Call {
            unit,
            function,
            args: args.iter().cloned().map(Arg::Value).collect(),
            memory: Vec::new(),
            placement: Placement::End,
        }
    }

    /// The call of function `function` of unit `unit` that `case` describes, its arrays
    /// placed so.
    pub fn of_case(unit: usize, function: usize, case: &Case, placement: Placement) -> Self {
        Call {
            unit,
            function,
            args: case.args.clone(),
            memory: case.memory.clone(),
            placement,
        }
    }

    /// The array arguments in argument order, then [`Call::memory`] (the order of
    /// [`Effect::arrays`] and of every [`schedlab_kernels::case::PointerSlot::array`]).
    pub fn all_arrays(&self) -> impl Iterator<Item = &ArrayArg> {
        schedlab_kernels::case::all_arrays(&self.args, &self.memory)
    }
}

/// What one call did.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The function returned: its results and every array argument's contents afterwards.
    Returned(Effect),
    /// The function trapped: the signal's name (`SIGILL`, `SIGSEGV`, …) or `timeout`.
    Trapped(String),
    /// The call could not be made (its unit failed to compile or link, the harness failed).
    NotRun(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Returned(effect) => {
                let text: Vec<String> = effect.returns.iter().map(|v| v.to_string()).collect();
                write!(f, "[{}]", text.join(", "))?;
                for array in &effect.arrays {
                    write!(f, " {}", hex(array))?;
                }
                Ok(())
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
    Ok(run_calls(target, isa, units, calls, None)?
        .into_iter()
        .map(|t| t.outcome)
        .collect())
}

/// One call of [`time`]: what its first run did, and how long one call took.
#[derive(Clone, Debug, PartialEq)]
pub struct Timed {
    /// What the first run did (judge it before trusting the time).
    pub outcome: Outcome,
    /// Nanoseconds per call of the calibrated run of repeats; `None` when the call did not
    /// return.
    pub nanos_per_call: Option<f64>,
}

/// Executes `calls` on the host as [`execute`] does, then times each call that returned: it is
/// repeated in the same child, the count doubling until one run of repeats takes at least
/// `sample` of the child's CPU time (which also warms it up), and that run's CPU time per call
/// is reported (other processes on a shared machine do not count against it). A call that
/// writes its arrays has them restored to its inputs before every repeat (the restore is part
/// of the time). Only the host can be timed.
pub fn time(
    target: Target,
    isa: &OwnedTargetIsa,
    units: &[Unit],
    calls: &[Call],
    sample: Duration,
) -> Result<Vec<Timed>, ExecError> {
    if !target.is_host() {
        return Err(ExecError::Host(format!(
            "{target} code runs under emulation here: only the host's code can be timed"
        )));
    }
    run_calls(target, isa, units, calls, Some(sample))
}

fn run_calls(
    target: Target,
    isa: &OwnedTargetIsa,
    units: &[Unit],
    calls: &[Call],
    sample: Option<Duration>,
) -> Result<Vec<Timed>, ExecError> {
    if isa::target_of(isa.as_ref()) != Some(target) {
        return Err(ExecError::WrongIsa {
            target,
            found: isa.triple().to_string(),
        });
    }
    validate_calls(units, calls, isa.pointer_type())?;
    let linked = link::compile_units(target, isa, units, calls);
    let mut timed: Vec<Option<Timed>> = calls
        .iter()
        .map(|c| {
            linked.call_error(c).map(|e| Timed {
                outcome: Outcome::NotRun(e.clone()),
                nanos_per_call: None,
            })
        })
        .collect();
    let runnable: Vec<usize> = (0..calls.len()).filter(|&i| timed[i].is_none()).collect();
    if !runnable.is_empty() {
        let big_endian = target.is_big_endian();
        let requests: Vec<Request> = runnable
            .iter()
            .map(|&i| Request::new(&calls[i], linked.trampoline_of(&calls[i]), big_endian))
            .collect();
        let raw = if target.is_host() {
            native::run(isa, &linked, &requests, sample)?
        } else {
            harness::run(target, isa, &linked, &requests)?
                .into_iter()
                .map(|r| (r, None))
                .collect()
        };
        for (&i, (result, nanos_per_call)) in runnable.iter().zip(raw) {
            let outcome = match result {
                RawOutcome::Returned { buffer, arrays } => {
                    decode_effect(units, &calls[i], &buffer, &arrays, big_endian)
                }
                RawOutcome::Trapped(signal) => Outcome::Trapped(signal),
                RawOutcome::NotRun(why) => Outcome::NotRun(why),
            };
            timed[i] = Some(Timed {
                outcome,
                nanos_per_call,
            });
        }
    }
    Ok(timed
        .into_iter()
        .map(|t| {
            t.unwrap_or_else(|| Timed {
                outcome: Outcome::NotRun("internal: no outcome".into()),
                nanos_per_call: None,
            })
        })
        .collect())
}

/// One call as a runner sees it: bytes only.
pub(crate) struct Request {
    /// The trampoline to call.
    pub trampoline: usize,
    /// The trampoline's buffer: one little-endian slot per argument (an array's slot is
    /// filled with its pointer by the runner), then room for the results.
    pub buffer: Vec<u8>,
    /// Every array's bytes in the target's order ([`Call::all_arrays`] order).
    pub arrays: Vec<Vec<u8>>,
    /// `(slot, array)`: the buffer slot that receives a pointer to that array.
    pub pointers: Vec<(usize, usize)>,
    /// `(container, offset, array)`: the 8 bytes at `offset` in array `container` receive the
    /// address of `array`, in the target's byte order.
    pub inner_pointers: Vec<(usize, usize, usize)>,
    /// Where the arrays sit relative to their guard pages.
    pub placement: Placement,
}

impl Request {
    fn new(call: &Call, trampoline: usize, big_endian: bool) -> Self {
        // Results are sized by the callee at decode time; reserve the worst case here.
        let slots = call.args.len() + MAX_RESULTS;
        let mut buffer = vec![0u8; slots * SLOT_BYTES];
        let mut arrays = Vec::new();
        let mut pointers = Vec::new();
        // Argument index → array number, for `Arg::SameArray`.
        let mut array_of_arg = vec![None; call.args.len()];
        for (slot, arg) in call.args.iter().enumerate() {
            match arg {
                Arg::Value(value) => {
                    value.write_to_slice_le(&mut buffer[slot * SLOT_BYTES..(slot + 1) * SLOT_BYTES])
                }
                Arg::Array(array) => {
                    array_of_arg[slot] = Some(arrays.len());
                    pointers.push((slot, arrays.len()));
                    arrays.push(array.target_bytes(big_endian));
                }
                Arg::SameArray(earlier) => {
                    // Validated: `earlier` names an earlier `Arg::Array`.
                    if let Some(Some(a)) = array_of_arg.get(*earlier) {
                        pointers.push((slot, *a));
                    }
                }
            }
        }
        arrays.extend(call.memory.iter().map(|a| a.target_bytes(big_endian)));
        let inner_pointers = call
            .all_arrays()
            .enumerate()
            .flat_map(|(container, a)| {
                a.pointers
                    .iter()
                    .map(move |slot| (container, slot.offset, slot.array))
            })
            .collect();
        Request {
            trampoline,
            buffer,
            arrays,
            pointers,
            inner_pointers,
            placement: call.placement,
        }
    }
}

/// What a runner reports for one call, before the results are decoded.
pub(crate) enum RawOutcome {
    /// The call returned.
    Returned {
        /// The trampoline's buffer after the call.
        buffer: Vec<u8>,
        /// Every array's bytes after the call, in the target's order.
        arrays: Vec<Vec<u8>>,
    },
    /// The signal's name.
    Trapped(String),
    /// Why the call did not run.
    NotRun(String),
}

fn validate_calls(units: &[Unit], calls: &[Call], pointer: Type) -> Result<(), ExecError> {
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
        let args: Vec<Type> = call
            .args
            .iter()
            .map(|a| match a {
                Arg::Value(v) => v.ty(),
                Arg::Array(_) | Arg::SameArray(_) => pointer,
            })
            .collect();
        // The reader gives vector values as raw bytes (`i8x16`); any vector of the same size fits.
        let fits = |p: &Type, a: &Type| {
            p == a || (p.is_vector() && a.is_vector() && p.bytes() == a.bytes())
        };
        if params.len() != args.len() || !params.iter().zip(&args).all(|(p, a)| fits(p, a)) {
            return Err(bad(format!(
                "{} takes ({}), the call passes ({})",
                func.name,
                type_list(&params),
                arg_list(&call.args, pointer)
            )));
        }
        for (i, arg) in call.args.iter().enumerate() {
            if let Arg::SameArray(earlier) = arg
                && (*earlier >= i || !matches!(call.args[*earlier], Arg::Array(_)))
            {
                return Err(bad(format!(
                    "argument {i} of {} is the same array as argument {earlier}, which is not \
                     an earlier array argument",
                    func.name
                )));
            }
        }
        let total = call.all_arrays().count();
        if total > MAX_ARRAYS {
            return Err(bad(format!(
                "{}: {total} arrays, at most {MAX_ARRAYS} per call",
                func.name
            )));
        }
        for (k, array) in call.all_arrays().enumerate() {
            validate_array(array, total)
                .map_err(|e| bad(format!("{}: array {k}: {e}", func.name)))?;
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

/// Whether `array` can be laid out: whole elements of a supported size, pointer slots inside
/// it naming one of the call's `total` arrays.
fn validate_array(array: &ArrayArg, total: usize) -> Result<(), String> {
    if !matches!(array.elem_bytes, 1 | 2 | 4 | 8) {
        return Err(format!(
            "elements have 1, 2, 4 or 8 bytes, not {}",
            array.elem_bytes
        ));
    }
    if !array.bytes.len().is_multiple_of(array.elem_bytes) {
        return Err(format!(
            "{} bytes are not a whole number of {}-byte elements",
            array.bytes.len(),
            array.elem_bytes
        ));
    }
    for slot in &array.pointers {
        if !slot.offset.is_multiple_of(POINTER_BYTES)
            || slot.offset.saturating_add(POINTER_BYTES) > array.bytes.len()
        {
            return Err(format!(
                "a pointer slot at byte {} does not fit {} bytes of 8-byte words",
                slot.offset,
                array.bytes.len()
            ));
        }
        if slot.array >= total {
            return Err(format!(
                "a pointer slot names array {}, the call has {total}",
                slot.array
            ));
        }
    }
    Ok(())
}

/// The most arrays one call may have (arguments and memory; `MAX_ARRAYS` in the harness).
pub const MAX_ARRAYS: usize = 64;

/// Bytes of an address stored inside an array (every target schedlab has is 64-bit).
pub const POINTER_BYTES: usize = 8;

fn type_list(types: &[Type]) -> String {
    types
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The arguments as a message shows them: `i32`, `i64 (array)`, `i64 (array 0)`.
fn arg_list(args: &[Arg], pointer: Type) -> String {
    args.iter()
        .map(|a| match a {
            Arg::Value(v) => v.ty().to_string(),
            Arg::Array(_) => format!("{pointer} (array)"),
            Arg::SameArray(i) => format!("{pointer} (array {i})"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The most results a called function may have (Cranelift's own runtests return up to 32
/// values, e.g. every special `f32` constant at once).
pub const MAX_RESULTS: usize = 32;

fn decode_effect(
    units: &[Unit],
    call: &Call,
    buffer: &[u8],
    arrays: &[Vec<u8>],
    big_endian: bool,
) -> Outcome {
    let func = &units[call.unit].functions[call.function];
    let first = call.args.len();
    let mut returns = Vec::new();
    for (j, ret) in func.signature.returns.iter().enumerate() {
        let start = (first + j) * SLOT_BYTES;
        let Some(slot) = buffer.get(start..start + SLOT_BYTES) else {
            return Outcome::NotRun(format!("result buffer too short ({} bytes)", buffer.len()));
        };
        returns.push(DataValue::read_from_slice_le(slot, ret.value_type));
    }
    let sent: Vec<&ArrayArg> = call.all_arrays().collect();
    if sent.len() != arrays.len() {
        return Outcome::NotRun(format!(
            "{} arrays came back for {} sent",
            arrays.len(),
            sent.len()
        ));
    }
    let mut contents = Vec::with_capacity(arrays.len());
    for (k, (array, back)) in sent.iter().zip(arrays).enumerate() {
        if back.len() != array.bytes.len() {
            return Outcome::NotRun(format!(
                "array {k} came back with {} bytes, not {}",
                back.len(),
                array.bytes.len()
            ));
        }
        // Addresses differ per run: pointer slots read as zero.
        let mut back = back.clone();
        for slot in &array.pointers {
            if let Some(word) = back.get_mut(slot.offset..slot.offset + POINTER_BYTES) {
                word.fill(0);
            }
        }
        contents.push(array.canonical_bytes(&back, big_endian));
    }
    Outcome::Returned(Effect {
        returns,
        arrays: contents,
    })
}

/// Bytes as lowercase hex (how outcomes show arrays); long arrays show their first
/// [`SHOWN_BYTES`] bytes and their length.
fn hex(bytes: &[u8]) -> String {
    let shown: String = bytes
        .iter()
        .take(SHOWN_BYTES)
        .map(|b| format!("{b:02x}"))
        .collect();
    if bytes.len() > SHOWN_BYTES {
        format!("{shown}… ({} bytes)", bytes.len())
    } else {
        shown
    }
}

/// How many bytes of an array an [`Outcome`] shows.
const SHOWN_BYTES: usize = 32;
