//! Test support shared by the passes' test binaries: parsing CLIF text, running the verifier,
//! counting opcodes, interpreting a function.
#![allow(dead_code)] // each test binary uses its own part

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::Function;
use cranelift_codegen::settings;
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterError, InterpreterState};
use cranelift_interpreter::step::ControlFlow;

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

/// An interpreter that knows `func` (by its name) and, with `fuel`, stops after that many
/// instructions.
pub fn interpreter(func: &Function, fuel: Option<u64>) -> Interpreter<'_> {
    let mut env = FunctionStore::default();
    env.add(func.name.to_string(), func);
    Interpreter::new(InterpreterState::default().with_function_store(env)).with_fuel(fuel)
}

/// The one value `%f` of `func` returns on `args`, or `None` when it needs more than `fuel`
/// instructions; panics on a trap, an interpreter error or another return.
pub fn call_f<T>(func: &Function, args: &[DataValue], fuel: Option<u64>) -> Option<T>
where
    DataValue: TryInto<T>,
{
    match interpreter(func, fuel).call_by_name("%f", args) {
        Ok(ControlFlow::Return(values)) => match values.as_slice() {
            [v] => Some(
                v.clone()
                    .try_into()
                    .unwrap_or_else(|_| panic!("unexpected return {values:?}")),
            ),
            other => panic!("unexpected return {other:?}"),
        },
        Err(InterpreterError::FuelExhausted) => None,
        other => panic!("interpreter: {other:?}"),
    }
}

/// How many instructions of a function have an opcode.
#[allow(unused_imports)] // as `dead_code` above: not every test binary counts
pub use schedlab_kernels::ir_checks::count;
