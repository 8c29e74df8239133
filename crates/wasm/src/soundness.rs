//! Soundness of schedlab's pipeline on real functions, three ways:
//!
//! 1. **Verifier**: the whole pipeline with Cranelift's verifier after every stage.
//! 2. **Legality**: the strategy's schedule of the function as given (after the e-graph when
//!    asked) against schedlab's own checker ([`sched::check_schedule`], run by the scheduler
//!    after its rematerialisation: same instructions per block, every dependence kept).
//! 3. **Execution**: a function that needs nothing but its arguments — no memory, no calls,
//!    no symbol or stack addresses (so no `vmctx` use) — runs under cranelift-interpreter before and after
//!    the pipeline on random arguments; results (bit for bit) and traps must agree.

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{Function, Opcode, Type, types};
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterError, InterpreterState};
use cranelift_interpreter::step::ControlFlow;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_backend::target::{IsaChoice, Target};
use schedlab_passes::sched;

/// The parameter and result types random calls cover.
const SCALARS: [Type; 7] = [
    types::I8,
    types::I16,
    types::I32,
    types::I64,
    types::I128,
    types::F32,
    types::F64,
];

/// Interpreter steps one call may take before the case is left out (a long loop).
const FUEL: u64 = 200_000;

/// What the three checks found for one function × strategy × target.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionCheck {
    /// The pipeline with the verifier after every stage: `Err` names the stage.
    pub verifier: Result<(), String>,
    /// The schedule against the legality checker.
    pub legality: Result<(), String>,
    /// `None` when the function needs more than its arguments; else how many random calls
    /// agreed (calls out of fuel are not counted), or the first disagreement.
    pub execution: Option<Result<usize, String>>,
}

impl FunctionCheck {
    /// Whether every check that ran passed.
    pub fn passed(&self) -> bool {
        self.verifier.is_ok() && self.legality.is_ok() && !matches!(self.execution, Some(Err(_)))
    }
}

/// The stage options of a check that a strategy keeps the function sound: the verifier after
/// every stage and on the result, no text or statistics, the slow path inline, the named ISA
/// level; bounds-check elimination assumes `heap_facts`.
pub fn verifying_options(heap_facts: schedlab_passes::bce::heap::HeapFacts) -> StageOptions {
    StageOptions {
        record_text: false,
        verify_stages: true,
        verify_result: true,
        slow_path: None,
        statistics: false,
        isa: IsaChoice::Level,
        heap_facts,
    }
}

/// Runs the three checks on `func` with `strategy` (the e-graph first when `optimize`) for
/// `target`, with `calls` random calls seeded by `seed`; BCE assumes `heap_facts` (the
/// module's memory minimum, [`crate::Translation::min_memory_bytes`]).
pub fn check_function(
    func: &Function,
    target: Target,
    strategy: &str,
    optimize: bool,
    calls: usize,
    seed: u64,
    heap_facts: schedlab_passes::bce::heap::HeapFacts,
) -> FunctionCheck {
    let config = PipelineConfig {
        optimize,
        ..PipelineConfig::with_strategy(strategy)
    };
    let options = verifying_options(heap_facts);
    let mut after = func.clone();
    let verifier = pipeline::run_ir_stages_with(&mut after, target, &config, &options)
        .map(|_| ())
        .map_err(|e| e.to_string());
    let legality = legal_schedule(func, target, &config);
    let execution = (verifier.is_ok() && needs_only_arguments(func))
        .then(|| agree_on_random_calls(func, &after, calls, seed));
    FunctionCheck {
        verifier,
        legality,
        execution,
    }
}

/// The strategy's schedule of `func` (after the e-graph when configured) checked by the
/// scheduler's own checker against the function it reordered (after its rematerialisation,
/// which copies loads and constants to their uses): the same instructions per block, every
/// dependence kept.
fn legal_schedule(func: &Function, target: Target, config: &PipelineConfig) -> Result<(), String> {
    let mut scheduled = func.clone();
    if config.optimize {
        schedlab_backend::optimize(&mut scheduled, target).map_err(|e| e.to_string())?;
    }
    let options = sched::ScheduleOptions {
        seed: config.seed,
        verify: true,
        ..sched::ScheduleOptions::default()
    };
    sched::schedule_with_options(
        &mut scheduled,
        &config.strategy,
        &config.model_for(target),
        &options,
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// Whether `func` needs nothing but its arguments: no memory access, no call, no symbol or
/// stack address (Wasmtime's `vmctx` is reached only through loads), only scalar parameters
/// and results.
pub fn needs_only_arguments(func: &Function) -> bool {
    let scalar = |t: Type| SCALARS.contains(&t);
    let sig = &func.signature;
    if !sig
        .params
        .iter()
        .chain(&sig.returns)
        .all(|p| scalar(p.value_type))
    {
        return false;
    }
    func.layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .all(|inst| {
            let op = func.dfg.insts[inst].opcode();
            !(op.can_load()
                || op.can_store()
                || op.is_call()
                || matches!(
                    op,
                    Opcode::SymbolValue
                        | Opcode::TlsValue
                        | Opcode::FuncAddr
                        | Opcode::StackAddr
                        | Opcode::DynamicStackAddr
                        | Opcode::GetPinnedReg
                        | Opcode::SetPinnedReg
                        | Opcode::GetFramePointer
                        | Opcode::GetStackPointer
                        | Opcode::GetReturnAddress
                        | Opcode::GetExceptionHandlerAddress
                ))
        })
}

/// Calls `before` and `after` with the same random arguments `calls` times.
fn agree_on_random_calls(
    before: &Function,
    after: &Function,
    calls: usize,
    seed: u64,
) -> Result<usize, String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut agreed = 0;
    for _ in 0..calls {
        let args: Vec<DataValue> = before
            .signature
            .params
            .iter()
            .map(|p| random_value(p.value_type, &mut rng))
            .collect();
        let (Some(expected), Some(got)) = (interpret(before, &args)?, interpret(after, &args)?)
        else {
            continue;
        };
        if expected != got {
            return Err(format!(
                "arguments {args:?}: {expected} before, {got} after the pipeline"
            ));
        }
        agreed += 1;
    }
    Ok(agreed)
}

/// The outcome of one call as text (results bit for bit, or the trap); `None` out of fuel.
fn interpret(func: &Function, args: &[DataValue]) -> Result<Option<String>, String> {
    let mut env = FunctionStore::default();
    env.add(func.name.to_string(), func);
    let state = InterpreterState::default().with_function_store(env);
    match Interpreter::new(state)
        .with_fuel(Some(FUEL))
        .call_by_name(&func.name.to_string(), args)
    {
        Ok(ControlFlow::Return(values)) => Ok(Some(format!(
            "return {:?}",
            values.iter().map(bits).collect::<Vec<_>>()
        ))),
        Ok(ControlFlow::Trap(trap)) => Ok(Some(format!("trap {trap:?}"))),
        Ok(other) => Err(format!("the interpreter stopped with {other:?}")),
        Err(InterpreterError::FuelExhausted) => Ok(None),
        Err(e) => Err(format!("the interpreter failed: {e}")),
    }
}

/// A value's bits, so that NaNs compare by payload.
fn bits(v: &DataValue) -> String {
    match v {
        DataValue::F32(f) => format!("f32:{:#x}", f.bits()),
        DataValue::F64(f) => format!("f64:{:#x}", f.bits()),
        other => format!("{other:?}"),
    }
}

/// A random value of one of [`SCALARS`]; small values and edges as often as wide ones.
fn random_value(ty: Type, rng: &mut StdRng) -> DataValue {
    let wide: u128 = rng.random();
    let raw = match rng.random_range(0..4) {
        0 => wide,
        1 => rng.random_range(0..16),
        2 => u128::MAX - rng.random_range(0..4),
        _ => wide >> rng.random_range(0..128u32),
    };
    match ty {
        types::I8 => DataValue::I8(raw as i8),
        types::I16 => DataValue::I16(raw as i16),
        types::I32 => DataValue::I32(raw as i32),
        types::I64 => DataValue::I64(raw as i64),
        types::I128 => DataValue::I128(raw as i128),
        types::F32 => DataValue::F32(Ieee32::with_bits(raw as u32)),
        types::F64 => DataValue::F64(Ieee64::with_bits(raw as u64)),
        // Not reached: `needs_only_arguments` admits only the types above.
        _ => DataValue::I64(raw as i64),
    }
}
