//! The BigInteger workloads: `BigInteger.squareToLen` and `mulAdd` as schedlab JIT-compiles
//! them, `num-bigint`, and HotSpot with and without its intrinsics.

pub mod jvm;
pub mod rows;

/// The BigInteger kernels `bench` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BigKernel {
    /// `BigInteger.squareToLen(x, len, z)`.
    SquareToLen,
    /// `BigInteger.mulAdd(out, in, 0, len, k)`.
    MulAdd,
}

impl BigKernel {
    /// The `--kernel` name.
    pub fn name(self) -> &'static str {
        match self {
            BigKernel::SquareToLen => "square-to-len",
            BigKernel::MulAdd => "muladd",
        }
    }

    /// The harness modes timed per JVM process; the first is the like-for-like row.
    pub fn jvm_modes(self) -> &'static [&'static str] {
        match self {
            BigKernel::SquareToLen => &["square-to-len", "multiply"],
            BigKernel::MulAdd => &["mul-add"],
        }
    }

    /// Multiply-accumulate steps of one call on `n` ints: `implSquareToLen` runs `mulAdd` over
    /// n(n−1)/2 words plus n diagonal squares; `mulAdd` n words.
    pub fn steps(self, n: usize) -> f64 {
        match self {
            BigKernel::SquareToLen => (n * (n - 1) / 2 + n) as f64,
            BigKernel::MulAdd => n as f64,
        }
    }
}
