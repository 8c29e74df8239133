//! The ordinary loops of `--validate-model`: the `.clif` files of `crates/cli/tests/clif/loops`
//! (a float multiply-add chain, float and integer Horner, a dot product, bitwise CRC-32, a 4×4
//! matrix times vectors), code the models were not tuned on.
//!
//! **Measured.** Each file's function as written (its own order, `opt_level=none`), JIT-compiled
//! for the host and first checked against its `; run:` lines (a loop that computes a wrong value
//! is an error, never a row). One call runs [`OrdinaryLoop::iterations`] iterations of the
//! innermost loop (plus a 256-iteration fill loop for the files with an array, under 0.5 % of
//! them); a repetition's sample is the fastest of [`SINGLE_CALLS`] calls (≈0.1–1 ms each),
//! converted to cycles with the effective clock probed right before the row, as the kernels'
//! samples are; the median over repetitions is reported.
//!
//! **Static**: the very code timed, costed by every model ([`super::static_figures`]).

use super::super::Budgets;
use super::{ValidationRow, clocked_samples, fastest_cycles, quiet::Contention};
use crate::CliError;
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{Type, types};
use schedlab_backend::JitFunction;
use schedlab_sources::clif::{self, Expect};
use std::hint::black_box;

/// Calls per repetition and row; the fastest counts.
const SINGLE_CALLS: usize = 25;

/// Passes over the 256-element arrays of the array loops per timed call.
const PASSES: i64 = 2_000;

/// One ordinary loop: its file, what one iteration is, and the timed call.
pub struct OrdinaryLoop {
    /// The row's kernel name (the file's stem).
    pub name: &'static str,
    /// The file's text.
    text: &'static str,
    /// What one innermost iteration is.
    pub iteration: &'static str,
    /// The arguments of a timed call.
    args: fn() -> Vec<DataValue>,
    /// Innermost iterations in a timed call.
    pub iterations: f64,
}

/// The six loops, in the order of the table.
pub const LOOPS: [OrdinaryLoop; 6] = [
    OrdinaryLoop {
        name: "fmul_add",
        text: include_str!("../../../../cli/tests/clif/loops/fmul_add.clif"),
        iteration: "acc = acc * x + 1.0 (f64)",
        args: || vec![DataValue::F64(0.5.into()), DataValue::I64(500_000)],
        iterations: 500_000.0,
    },
    OrdinaryLoop {
        name: "horner_f64",
        text: include_str!("../../../../cli/tests/clif/loops/horner_f64.clif"),
        iteration: "p = p * x + c[i] (f64, c loaded)",
        args: || vec![DataValue::F64(0.999.into()), DataValue::I64(PASSES)],
        iterations: 256.0 * PASSES as f64,
    },
    OrdinaryLoop {
        name: "horner_i64",
        text: include_str!("../../../../cli/tests/clif/loops/horner_i64.clif"),
        iteration: "p = p * x + c[i] (i64, c loaded)",
        args: || vec![DataValue::I64(3), DataValue::I64(PASSES)],
        iterations: 256.0 * PASSES as f64,
    },
    OrdinaryLoop {
        name: "dot_f64",
        text: include_str!("../../../../cli/tests/clif/loops/dot_f64.clif"),
        iteration: "s += a[i] * b[i] (f64, two loads)",
        args: || vec![DataValue::I64(PASSES)],
        iterations: 256.0 * PASSES as f64,
    },
    OrdinaryLoop {
        name: "crc32",
        text: include_str!("../../../../cli/tests/clif/loops/crc32.clif"),
        iteration: "one byte of bitwise CRC-32 (8 shift/xor steps)",
        args: || vec![DataValue::I64(PASSES / 8)],
        iterations: 256.0 * (PASSES / 8) as f64,
    },
    OrdinaryLoop {
        name: "mat4_vec",
        text: include_str!("../../../../cli/tests/clif/loops/mat4_vec.clif"),
        iteration: "y[i] = M x[i] (4×4 f64, 4 loads, 4 stores)",
        args: || vec![DataValue::I64(PASSES)],
        iterations: 256.0 * PASSES as f64,
    },
];

/// Whether `kernel` names one of the ordinary loops.
pub fn is_ordinary_loop(kernel: &str) -> bool {
    LOOPS.iter().any(|l| l.name == kernel)
}

/// A loop JIT-compiled for the host, checked against its run lines.
struct LoopCode {
    jit: JitFunction,
    params: Vec<Type>,
    ret: Type,
}

impl LoopCode {
    fn new(l: &OrdinaryLoop) -> Result<Self, CliError> {
        let file = clif::parse_source(l.text, format!("{}.clif", l.name))?;
        let func = file
            .functions
            .first()
            .ok_or_else(|| CliError::failure(format!("{}.clif: no function", l.name)))?;
        let params: Vec<Type> = func.signature.params.iter().map(|p| p.value_type).collect();
        let ret = match func.signature.returns.as_slice() {
            [r] => r.value_type,
            _ => {
                return Err(CliError::failure(format!(
                    "{}.clif: one result expected",
                    l.name
                )));
            }
        };
        let jit = JitFunction::compile(func)
            .map_err(|e| CliError::failure(format!("cannot compile {}.clif: {e}", l.name)))?;
        let compiled = Self { jit, params, ret };
        for line in &file.run_lines {
            let spec = line
                .spec
                .as_ref()
                .map_err(|e| CliError::failure(format!("{}.clif:{}: {e}", l.name, line.line)))?;
            let Expect::Equal(want) = &spec.expect else {
                continue;
            };
            let got = compiled.call(&spec.args)?;
            if want.len() != 1 || !want[0].bitwise_eq(&got) {
                return Err(CliError::failure(format!(
                    "{}.clif:{}: `{}` computed {got}",
                    l.name, line.line, line.text
                )));
            }
        }
        // The timed arguments too (a wrong signature would read garbage, not fail).
        compiled.call(&(l.args)())?;
        Ok(compiled)
    }

    /// Calls the code with `args` (the shapes of the loop files: `(i64)`, `(i64, i64)` or
    /// `(f64, i64)` to `i32`, `i64` or `f64`).
    fn call(&self, args: &[DataValue]) -> Result<DataValue, CliError> {
        let code = self.jit.code_ptr();
        let int = |v: &DataValue| match v {
            DataValue::I64(x) => Some(*x),
            _ => None,
        };
        let float = |v: &DataValue| match v {
            DataValue::F64(x) => Some(f64::from_bits(x.bits())),
            _ => None,
        };
        let unsupported = || {
            CliError::failure(format!(
                "a loop of signature {:?} -> {} called with {args:?}: not a shape the bench calls",
                self.params, self.ret
            ))
        };
        macro_rules! call {
            (($($p:ty),*) -> $r:ty, $($a:expr),*) => {{
                // SAFETY: the code was compiled for this host with its default (System V)
                // calling convention from a signature whose parameter and result types are
                // exactly these (checked by the match arm that reaches this call).
                let f: extern "C" fn($($p),*) -> $r = unsafe { std::mem::transmute(code) };
                black_box(f($(black_box($a)),*))
            }};
        }
        let (i64t, f64t, i32t) = (types::I64, types::F64, types::I32);
        Ok(match (self.params.as_slice(), args, self.ret) {
            ([p], [a], r) if *p == i64t => {
                let a = int(a).ok_or_else(unsupported)?;
                match r {
                    r if r == i32t => DataValue::I32(call!((i64) -> i32, a)),
                    r if r == i64t => DataValue::I64(call!((i64) -> i64, a)),
                    r if r == f64t => DataValue::F64(call!((i64) -> f64, a).into()),
                    _ => return Err(unsupported()),
                }
            }
            ([p, q], [a, b], r) if *p == f64t && *q == i64t && r == f64t => {
                let (a, b) = (
                    float(a).ok_or_else(unsupported)?,
                    int(b).ok_or_else(unsupported)?,
                );
                DataValue::F64(call!((f64, i64) -> f64, a, b).into())
            }
            ([p, q], [a, b], r) if *p == i64t && *q == i64t && r == i64t => {
                let (a, b) = (
                    int(a).ok_or_else(unsupported)?,
                    int(b).ok_or_else(unsupported)?,
                );
                DataValue::I64(call!((i64, i64) -> i64, a, b))
            }
            _ => return Err(unsupported()),
        })
    }
}

/// Compiles, checks and times every loop; returns its rows and the clock probes taken.
pub fn rows(
    budgets: Budgets,
    contention: &mut Contention,
) -> Result<(Vec<ValidationRow>, Vec<f64>), CliError> {
    let compiled: Vec<LoopCode> = LOOPS.iter().map(LoopCode::new).collect::<Result<_, _>>()?;
    let args: Vec<Vec<DataValue>> = LOOPS.iter().map(|l| (l.args)()).collect();
    // Warm-up: a few calls each (the clock ramps up over the first tens of milliseconds).
    for (c, a) in compiled.iter().zip(&args) {
        for _ in 0..5 {
            c.call(a)?;
        }
    }
    let (samples, clocks) = clocked_samples(LOOPS.len(), &budgets, contention, |i, ghz| {
        fastest_cycles(SINGLE_CALLS, LOOPS[i].iterations, ghz, || {
            compiled[i].call(&args[i]).map(drop)
        })
    })?;
    let rows = ValidationRow::timed(
        LOOPS
            .iter()
            .zip(&compiled)
            .map(|(l, c)| ((l.name, l.iteration), AS_WRITTEN, c.jit.compiled())),
        &samples,
    );
    Ok((rows, clocks))
}

/// The strategy column of a loop's row: the file's own order, no schedlab stage.
pub const AS_WRITTEN: &str = "as written";

/// The table's line about the loops' measurement.
pub fn method_line() -> String {
    format!(
        "- ordinary loops ({}): the `.clif` files of crates/cli/tests/clif/loops as written, one \
         iteration of the innermost loop; measured = the fastest of {SINGLE_CALLS} calls \
         (500 000 iterations for fmul_add, 256 × {PASSES} for the array loops, 256 × {} for \
         crc32) per repetition ÷ iterations; each call's result checked against the file's run \
         lines first.",
        LOOPS.map(|l| l.name).join(", "),
        PASSES / 8
    )
}
