//! Where schedlab's functions come from, behind one interface ([`kernel::Kernel`],
//! resolved from a `--kernel` argument by [`kernel::resolve`]): a kernel of the built-in
//! registry (IR builder, Rust model, cases), a function of a `.clif` file (its run lines are its
//! cases; [`clif`], checked by [`check_clif`]) or of a `.wasm` module (translated by Wasmtime's
//! own translator; [`wasm_source`], checked by [`check_wasm`]); [`compile`] runs the pipeline
//! on any of them.

pub mod check_clif;
pub mod check_wasm;
pub mod clif;
pub mod compile;
pub mod guard;
pub mod kernel;
pub mod twins;
pub mod wasm_source;

/// An error a command reports as one message and an exit code (2 = bad input, 1 = failure).
#[derive(Debug)]
pub struct CliError {
    /// What to print after `schedlab: `.
    pub message: String,
    /// Process exit code.
    pub code: u8,
}

impl CliError {
    /// Bad user input (unknown name, malformed file): exit 2.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: 2,
        }
    }

    /// A failure while doing the work (a mismatch, a tool that failed): exit 1.
    pub fn failure(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: 1,
        }
    }
}
