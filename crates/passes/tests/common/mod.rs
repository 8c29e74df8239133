//! Test support shared by the passes' test binaries: parsing CLIF text, running the verifier,
//! counting opcodes.
#![allow(dead_code)] // each test binary uses its own part

use cranelift_codegen::ir::Function;
use cranelift_codegen::settings;

/// The first function of `text`; panics, showing the text, when it does not parse.
pub fn parse(text: &str) -> Function {
    cranelift_reader::parse_functions(text)
        .unwrap_or_else(|e| panic!("parse: {e}\n{text}"))
        .remove(0)
}

/// Panics, showing the function, when Cranelift's verifier rejects it.
pub fn verify(func: &Function) {
    let flags = settings::Flags::new(settings::builder());
    cranelift_codegen::verify_function(func, &flags)
        .unwrap_or_else(|e| panic!("verifier: {e}\n{}", func.display()));
}

/// How many instructions of a function have an opcode.
#[allow(unused_imports)] // as `dead_code` above: not every test binary counts
pub use schedlab_kernels::ir_checks::count;
