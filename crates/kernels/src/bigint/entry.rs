//! The registry entries of the two BigInteger kernels (`muladd`, `square-to-len`), entered
//! through the Java wrappers' argument checks as the JVM compares them.

use super::cases::{
    BigIntOutcome, MulAddCase, SquareToLenCase, hostile_mul_add_cases, hostile_square_cases,
    random_mul_add_cases, random_square_cases,
};
use super::{Entry, mul_add, square_to_len};
use crate::case::{Arg, ArrayArg, Case, Effect};
use crate::registry::{CaseOptions, Kernel, KernelInfo};
use cranelift_codegen::data_value::DataValue;

/// `muladd`: `BigInteger.mulAdd` (`implMulAddCheck` + `implMulAdd`).
pub static MUL_ADD: MulAddKernel = MulAddKernel;
/// `square-to-len`: `BigInteger.squareToLen`'s checks + `implSquareToLen`.
pub static SQUARE_TO_LEN: SquareToLenKernel = SquareToLenKernel;

/// See [`MUL_ADD`].
#[derive(Clone, Copy, Debug)]
pub struct MulAddKernel;

/// See [`SQUARE_TO_LEN`].
#[derive(Clone, Copy, Debug)]
pub struct SquareToLenKernel;

fn length(words: &[i32]) -> Arg {
    Arg::Value(DataValue::I32(
        i32::try_from(words.len()).unwrap_or(i32::MAX),
    ))
}

fn ints(case: &Case, index: usize) -> Result<Vec<i32>, String> {
    Ok(ArrayArg::to_words(&case.array(index)?.bytes)
        .into_iter()
        .map(|w| w as i32)
        .collect())
}

fn effect(outcome: BigIntOutcome, ret: DataValue, other: Option<&[i32]>) -> Effect {
    let mut arrays = Vec::new();
    arrays.push(ArrayArg::ints(&outcome.written).bytes);
    if let Some(other) = other {
        arrays.push(ArrayArg::ints(other).bytes);
    }
    Effect {
        returns: vec![ret],
        arrays,
    }
}

/// The random calls then the hostile ones as cases, labelled `random {i} …` and `hostile {i} …`
/// with what `random_sizes` and `hostile_sizes` say of each call.
fn labelled_cases<C>(
    random: &[C],
    hostile: &[C],
    random_sizes: impl Fn(&C) -> String,
    hostile_sizes: impl Fn(&C) -> String,
    case: fn(String, &C) -> Case,
) -> Vec<Case> {
    let random = random
        .iter()
        .enumerate()
        .map(|(i, c)| case(format!("random {i} {}", random_sizes(c)), c));
    let hostile = hostile
        .iter()
        .enumerate()
        .map(|(i, c)| case(format!("hostile {i} {}", hostile_sizes(c)), c));
    random.chain(hostile).collect()
}

impl MulAddKernel {
    /// The call `mul_add(out, out.length, in, in.length, offset, len, k)`.
    pub fn case(label: String, c: &MulAddCase) -> Case {
        let input = c.input.as_deref().unwrap_or(&c.out);
        let in_arg = match &c.input {
            Some(v) => Arg::Array(ArrayArg::ints(v)),
            None => Arg::SameArray(0),
        };
        Case::new(
            label,
            vec![
                Arg::Array(ArrayArg::ints(&c.out)),
                length(&c.out),
                in_arg,
                length(input),
                Arg::Value(DataValue::I32(c.offset)),
                Arg::Value(DataValue::I32(c.len)),
                Arg::Value(DataValue::I32(c.k)),
            ],
        )
    }
}

impl Kernel for MulAddKernel {
    fn info(&self) -> KernelInfo {
        KernelInfo {
            name: "muladd",
            summary: "BigInteger.mulAdd: out[offset..] += in[..len] * k, its checks and carry chain",
            aliases: &["mul-add", "bigint"],
            build: mul_add,
        }
    }

    fn cases(&self, options: &CaseOptions) -> Vec<Case> {
        labelled_cases(
            &random_mul_add_cases(options.seed, 1..=options.random.max(1)),
            &hostile_mul_add_cases(options.seed),
            |c| format!("len={} offset={}", c.len, c.offset),
            |c| format!("offset={} len={}", c.offset, c.len),
            Self::case,
        )
    }

    fn expected(&self, case: &Case) -> Result<Effect, String> {
        let out = ints(case, 0)?;
        let same = matches!(case.args.get(2), Some(Arg::SameArray(0)));
        let input = if same { None } else { Some(ints(case, 2)?) };
        let call = MulAddCase {
            out,
            input: input.clone(),
            offset: case.int(4)?,
            len: case.int(5)?,
            k: case.int(6)?,
        };
        let outcome = call.expected(Entry::Wrapper);
        let ret = DataValue::I64(outcome.ret);
        Ok(effect(outcome, ret, input.as_deref()))
    }
}

impl SquareToLenKernel {
    /// The call `square_to_len(x, x.length, len, z, z.length, zlen)`.
    pub fn case(label: String, c: &SquareToLenCase) -> Case {
        // `z` comes after `x` in the signature, so `x == z` is passed as `z` twice: `x` is
        // the array, `z` refers back to it.
        let (x_arg, x_len, z_arg) = match &c.x {
            Some(x) => (
                Arg::Array(ArrayArg::ints(x)),
                length(x),
                Arg::Array(ArrayArg::ints(&c.z)),
            ),
            None => (
                Arg::Array(ArrayArg::ints(&c.z)),
                length(&c.z),
                Arg::SameArray(0),
            ),
        };
        Case::new(
            label,
            vec![
                x_arg,
                x_len,
                Arg::Value(DataValue::I32(c.len)),
                z_arg,
                length(&c.z),
                Arg::Value(DataValue::I32(c.zlen)),
            ],
        )
    }
}

impl Kernel for SquareToLenKernel {
    fn info(&self) -> KernelInfo {
        KernelInfo {
            name: "square-to-len",
            summary: "BigInteger.squareToLen: the squares loop, mulAdd rows, the left shift and addOne",
            aliases: &["squaretolen", "bigint"],
            build: square_to_len,
        }
    }

    fn cases(&self, options: &CaseOptions) -> Vec<Case> {
        let sizes = |c: &SquareToLenCase| format!("len={} zlen={}", c.len, c.zlen);
        labelled_cases(
            &random_square_cases(options.seed, 1..=options.random.max(1)),
            &hostile_square_cases(options.seed),
            sizes,
            sizes,
            Self::case,
        )
    }

    fn expected(&self, case: &Case) -> Result<Effect, String> {
        let same = matches!(case.args.get(3), Some(Arg::SameArray(0)));
        let first = ints(case, 0)?;
        let (x, z) = if same {
            (None, first)
        } else {
            (Some(first), ints(case, 3)?)
        };
        let call = SquareToLenCase {
            x: x.clone(),
            len: case.int(2)?,
            z,
            zlen: case.int(5)?,
        };
        let outcome = call.expected(Entry::Wrapper);
        let ret = DataValue::I32(outcome.ret as i32);
        // Arrays in argument order: `x` (when separate) before `z`.
        let mut effect = effect(outcome, ret, None);
        if let Some(x) = x {
            effect.arrays.insert(0, ArrayArg::ints(&x).bytes);
        }
        Ok(effect)
    }
}
