//! The in-process rows of the BigInteger benches: schedlab's JIT-compiled kernel per pipeline
//! configuration and `num-bigint`, with the operands both sides (and the JVM) use and the
//! expected results every row is checked against before it is timed.

use super::BigKernel;
use crate::md5::{CRANELIFT_SPEED, Kind, NamedConfig};
use crate::measure::time_loop;
use num_bigint::BigUint;
use schedlab_backend::Target;
use schedlab_backend::pipeline::{PipelineConfig, run_ir_stages};
use schedlab_backend::{JitFunction, JitOptions};
use schedlab_kernels::bigint::reference;
use std::hint::black_box;
use std::time::Duration;

/// The operand of TestSquareToLen (the JDK-8185976 review, seed 003): 1075 bits, 34 ints.
pub const SEED_OPERAND: &str = concat!(
    "348939809235573590863505149820825039200022983118773208599936",
    "739559418380102146884307139175604920787313701663155983793121475492609222",
    "378029211020760922327218480828933663005773596942372680852064103011811651",
    "644018048833823482390819947896524207635857984552089977996313113154016668",
    "718795349783157384006672542605760392289645528307",
);

/// The multiplier of the mul-add bench (`BigIntegerBench.MUL_ADD_K`): negative as an `int`,
/// so `k & LONG_MASK` matters.
pub const MUL_ADD_K: i32 = 0x9e37_79b9_u32 as i32;

/// Name of the `num-bigint` row.
pub const NUM_BIGINT: &str = "num-bigint";

/// One operand size: a big-endian `int[]` magnitude, as `BigInteger.mag`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    /// `seed` or the bit count as given.
    pub label: String,
    /// The magnitude, most significant int first (no leading zero int).
    pub mag: Vec<i32>,
}

impl Operand {
    /// `seed`: the review's operand; `bits` (a multiple of 32): `bits / 32` ints, the seed's
    /// magnitude words repeated from its most significant one (as `BigIntegerBench`).
    pub fn new(label: &str, bits: Option<usize>) -> Self {
        let seed = seed_magnitude();
        let mag = match bits {
            None => seed,
            Some(bits) => (0..bits / 32).map(|i| seed[i % seed.len()]).collect(),
        };
        Self {
            label: label.to_string(),
            mag,
        }
    }

    /// The operand's bit length (`BigInteger.bitLength`).
    pub fn bits(&self) -> u64 {
        to_biguint(&self.mag).bits()
    }
}

fn seed_magnitude() -> Vec<i32> {
    // The constant is a valid decimal literal; an empty magnitude would only shrink the rows.
    let value = BigUint::parse_bytes(SEED_OPERAND.as_bytes(), 10).unwrap_or_default();
    from_biguint(&value)
}

/// A big-endian `int[]` magnitude as a `BigUint`.
pub fn to_biguint(mag: &[i32]) -> BigUint {
    let little: Vec<u32> = mag.iter().rev().map(|&w| w as u32).collect();
    BigUint::from_slice(&little)
}

/// A `BigUint` as a big-endian `int[]` magnitude without leading zeros.
pub fn from_biguint(v: &BigUint) -> Vec<i32> {
    v.iter_u32_digits().rev().map(|w| w as i32).collect()
}

/// Java's `BigInteger.hashCode` of a positive magnitude, as `Integer.toHexString` prints it.
pub fn java_digest(mag: &[i32]) -> String {
    let h = mag
        .iter()
        .skip_while(|&&w| w == 0)
        .fold(0i32, |h, &w| h.wrapping_mul(31).wrapping_add(w));
    format!("{:x}", h as u32)
}

/// What one operand must give: the Rust transcription's result, checked against `num-bigint`.
#[derive(Clone, Debug)]
pub struct Expected {
    /// `square-to-len`: `z`; `muladd`: `out` (`out[0]` untouched, zero).
    pub written: Vec<i32>,
    /// `muladd`: the returned carry; `square-to-len`: 0.
    pub ret: i64,
    /// The result's value as a magnitude (`muladd`: the carry above `out[1..]`).
    pub value: Vec<i32>,
    /// Java's hash of `value`, what the JVM harness prints.
    pub digest: String,
}

/// The result of `kernel` on `op`, from the Rust transcription of the Java code, cross-checked
/// against `num-bigint`.
pub fn expected(kernel: BigKernel, op: &Operand) -> Result<Expected, String> {
    let n = java_int(op.mag.len())?;
    let big = to_biguint(&op.mag);
    let (written, ret, value, by_num) = match kernel {
        BigKernel::SquareToLen => {
            let mut z = vec![0; 2 * op.mag.len()];
            reference::square_to_len(&op.mag, n, &mut z, 2 * n)
                .map_err(|e| format!("the reference squareToLen failed: {e:?}"))?;
            let value = to_biguint(&z);
            (z, 0, value, &big * &big)
        }
        BigKernel::MulAdd => {
            let mut out = vec![0; op.mag.len() + 1];
            let carry = reference::mul_add(&mut out, &op.mag, 0, n, MUL_ADD_K)
                .map_err(|e| format!("the reference mulAdd failed: {e:?}"))?;
            let mut with_carry = out.clone();
            with_carry[0] = carry as i32;
            (
                out,
                i64::from(carry),
                to_biguint(&with_carry),
                &big * (MUL_ADD_K as u32),
            )
        }
    };
    if value != by_num {
        return Err(format!(
            "the Rust transcription and num-bigint disagree at size {}",
            op.label
        ));
    }
    let value = from_biguint(&value);
    Ok(Expected {
        digest: java_digest(&value),
        written,
        ret,
        value,
    })
}

fn java_int(n: usize) -> Result<i32, String> {
    i32::try_from(n).map_err(|_| format!("{n} ints is longer than a Java array"))
}

type MulAddFn = unsafe extern "C" fn(*mut i32, i32, *const i32, i32, i32, i32, i32) -> i64;
type SquareFn = unsafe extern "C" fn(*const i32, i32, i32, *mut i32, i32, i32) -> i32;

/// How a row is called.
#[derive(Clone, Copy, Debug)]
enum Call {
    Square(SquareFn),
    MulAdd(MulAddFn),
    NumSquare,
    NumMulAdd,
}

/// One in-process row.
pub struct BigImpl {
    /// Row name.
    pub name: String,
    /// Where its code comes from.
    pub kind: Kind,
    call: Call,
    /// Keeps the JIT's code alive with the row (schedlab rows).
    _jit: Option<JitFunction>,
}

/// The buffers one size is timed with; their lengths are fixed at construction, so every call
/// passes a pointer with the length of its allocation.
pub struct Work {
    x: Vec<i32>,
    /// `z` (2·len ints) or `out` (len + 1 ints).
    buf: Vec<i32>,
    big: BigUint,
}

impl Work {
    /// Buffers for `kernel` on `op`.
    pub fn new(kernel: BigKernel, op: &Operand) -> Result<Self, String> {
        java_int(2 * op.mag.len() + 1)?;
        let buf_len = match kernel {
            BigKernel::SquareToLen => 2 * op.mag.len(),
            BigKernel::MulAdd => op.mag.len() + 1,
        };
        Ok(Self {
            x: op.mag.clone(),
            buf: vec![0; buf_len],
            big: to_biguint(&op.mag),
        })
    }
}

impl BigImpl {
    /// One call of the row on `w`; returns the kernel's return value (`num-bigint`: 0).
    #[inline(always)]
    fn call(call: Call, w: &mut Work) -> i64 {
        let n = w.x.len() as i32;
        let m = w.buf.len() as i32;
        match call {
            // SAFETY: `x` holds `n` ints and `buf` holds `m` ints (fixed by `Work::new`, which
            // also keeps both below i32::MAX); the kernel checks every access against those
            // lengths and returns a status instead of leaving them.
            Call::Square(f) => {
                i64::from(unsafe { f(w.x.as_ptr(), n, n, w.buf.as_mut_ptr(), m, m) })
            }
            // SAFETY: as above, `out` = `buf` (`m` ints), `in` = `x` (`n` ints).
            Call::MulAdd(f) => unsafe {
                f(w.buf.as_mut_ptr(), m, w.x.as_ptr(), n, 0, n, MUL_ADD_K)
            },
            Call::NumSquare => {
                black_box(&w.big * &w.big);
                0
            }
            Call::NumMulAdd => {
                black_box(&w.big * (MUL_ADD_K as u32));
                0
            }
        }
    }

    /// Checks the row's result on a fresh `Work` against `want`.
    pub fn check(&self, kernel: BigKernel, op: &Operand, want: &Expected) -> Result<(), String> {
        let mismatch = |what: &str| {
            format!(
                "{} computed a wrong {what} at size {} ({} ints)",
                self.name,
                op.label,
                op.mag.len()
            )
        };
        let mut w = Work::new(kernel, op)?;
        match self.call {
            Call::Square(_) | Call::MulAdd(_) => {
                let ret = Self::call(self.call, &mut w);
                if ret != want.ret {
                    return Err(format!(
                        "{} (returned {ret}, want {})",
                        mismatch("result"),
                        want.ret
                    ));
                }
                if w.buf != want.written {
                    return Err(mismatch("array"));
                }
            }
            Call::NumSquare | Call::NumMulAdd => {
                let got = match kernel {
                    BigKernel::SquareToLen => &w.big * &w.big,
                    BigKernel::MulAdd => &w.big * (MUL_ADD_K as u32),
                };
                if from_biguint(&got) != want.value {
                    return Err(mismatch("value"));
                }
            }
        }
        Ok(())
    }

    /// Calls the row `calls` times on `w` and returns the elapsed time.
    ///
    /// The loop is monomorphised per kind of call, so no indirect dispatch sits in the timed
    /// path beyond the JIT code's own call.
    pub fn time(&self, w: &mut Work, calls: u64) -> Duration {
        match self.call {
            Call::Square(f) => time_loop(|| Self::call(Call::Square(f), black_box(&mut *w)), calls),
            Call::MulAdd(f) => time_loop(|| Self::call(Call::MulAdd(f), black_box(&mut *w)), calls),
            Call::NumSquare => time_loop(|| Self::call(Call::NumSquare, black_box(&mut *w)), calls),
            Call::NumMulAdd => time_loop(|| Self::call(Call::NumMulAdd, black_box(&mut *w)), calls),
        }
    }
}

/// The kernel's IR.
pub fn build(kernel: BigKernel) -> cranelift_codegen::ir::Function {
    match kernel {
        BigKernel::SquareToLen => schedlab_kernels::bigint::square_to_len(),
        BigKernel::MulAdd => schedlab_kernels::bigint::mul_add(),
    }
}

/// The schedlab configurations: the pipeline's default, then it with one setting changed.
pub fn configurations() -> Vec<NamedConfig> {
    crate::md5::configurations_around(PipelineConfig::default())
}

/// Every in-process row name, in report order.
pub fn names() -> Vec<String> {
    let mut names: Vec<String> = configurations().into_iter().map(|c| c.name).collect();
    names.push(CRANELIFT_SPEED.to_string());
    names.push(NUM_BIGINT.to_string());
    names
}

/// The function type of `kernel`'s entry point at `code`.
///
/// # Safety
/// `code` must be the JIT-compiled `kernel` (signatures in the module docs of
/// `schedlab_kernels::bigint`, host C calling convention), alive for as long as it is called.
unsafe fn entry(kernel: BigKernel, code: *const u8) -> Call {
    // SAFETY: the caller's contract; these function types spell out the kernels' signatures.
    unsafe {
        match kernel {
            BigKernel::SquareToLen => {
                Call::Square(std::mem::transmute::<*const u8, SquareFn>(code))
            }
            BigKernel::MulAdd => Call::MulAdd(std::mem::transmute::<*const u8, MulAddFn>(code)),
        }
    }
}

/// Compiles the configurations `wanted` accepts for the host and adds `num-bigint`.
pub fn rows(
    kernel: BigKernel,
    configs: &[NamedConfig],
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<BigImpl>, String> {
    let target = Target::host().ok_or("the host architecture has no schedlab backend")?;
    let mut rows = Vec::new();
    for named in configs {
        if !wanted(&named.name) {
            continue;
        }
        let mut func = build(kernel);
        run_ir_stages(&mut func, target, &named.config)
            .map_err(|e| format!("cannot compile {}: {e}", named.name))?;
        let jit = JitFunction::compile(&func)
            .map_err(|e| format!("cannot compile {}: {e}", named.name))?;
        // SAFETY: `jit` is `kernel` compiled for the host and lives in the row.
        let call = unsafe { entry(kernel, jit.code_ptr()) };
        rows.push(BigImpl {
            name: named.name.clone(),
            kind: Kind::Schedlab,
            call,
            _jit: Some(jit),
        });
    }
    if wanted(CRANELIFT_SPEED) {
        let options = JitOptions {
            verify: true,
            listing: false,
        };
        let jit = JitFunction::compile_speed(build(kernel), &options)
            .map_err(|e| format!("cannot compile {CRANELIFT_SPEED}: {e}"))?;
        rows.push(BigImpl {
            name: CRANELIFT_SPEED.into(),
            kind: Kind::StockCranelift,
            // SAFETY: `jit` is `kernel` compiled for the host and lives in the row.
            call: unsafe { entry(kernel, jit.code_ptr()) },
            _jit: Some(jit),
        });
    }
    if wanted(NUM_BIGINT) {
        rows.push(BigImpl {
            name: NUM_BIGINT.into(),
            kind: Kind::PureRust,
            call: match kernel {
                BigKernel::SquareToLen => Call::NumSquare,
                BigKernel::MulAdd => Call::NumMulAdd,
            },
            _jit: None,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_operand_is_34_ints_of_1075_bits() {
        let seed = Operand::new("seed", None);
        assert_eq!(seed.mag.len(), 34);
        assert_eq!(seed.bits(), 1075);
        let op = Operand::new("1024", Some(1024));
        assert_eq!(op.mag[..], seed.mag[..32]);
        assert_eq!(
            Operand::new("2048", Some(2048)).mag[32..34],
            seed.mag[32..34]
        );
    }

    #[test]
    fn stock_cranelift_rows_compute_the_java_results() {
        if Target::host().is_none() {
            eprintln!("skipped: the host has no schedlab backend");
            return;
        }
        for kernel in [BigKernel::SquareToLen, BigKernel::MulAdd] {
            let rows = rows(kernel, &[], |n| n == CRANELIFT_SPEED).expect("compiles");
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].kind, Kind::StockCranelift);
            for (label, bits) in [("seed", None), ("256", Some(256))] {
                let op = Operand::new(label, bits);
                let want = expected(kernel, &op).expect("reference");
                rows[0].check(kernel, &op, &want).expect("stock row agrees");
            }
        }
    }

    #[test]
    fn digests_match_the_jvm() {
        // Printed by BigIntegerBench for these operands (JDK 17).
        for (label, bits, square, mul_add) in [
            ("seed", None, "841015d7", "adf3a08f"),
            ("256", Some(256), "f2252392", "98f887a1"),
        ] {
            let op = Operand::new(label, bits);
            let s = expected(BigKernel::SquareToLen, &op).expect("square");
            assert_eq!(s.digest, square, "{label}");
            let m = expected(BigKernel::MulAdd, &op).expect("mul-add");
            assert_eq!(m.digest, mul_add, "{label}");
        }
    }
}
