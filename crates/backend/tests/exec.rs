//! The generic executor: any signature, calls between functions, traps, on every target.

mod common;

use common::runnable;
use cranelift_codegen::data_value::DataValue;
use schedlab_backend::Target;
use schedlab_backend::exec::{Call, Outcome, Unit, execute, isa::isa_with_flags};
use schedlab_kernels::case::Effect;

/// What a call that returned `returns` and had no arrays did.
fn returned(returns: Vec<DataValue>) -> Outcome {
    Outcome::Returned(Effect {
        returns,
        arrays: vec![],
    })
}

const FUNCTIONS: &str = "
function %mul_add(i64, i32, i8) -> i64, i32 {
block0(v0: i64, v1: i32, v2: i8):
    v3 = sextend.i64 v2
    v4 = imul v0, v3
    v5 = iadd v1, v1
    return v4, v5
}

function %checked(i32) -> i32 {
    fn0 = %mul_add(i64, i32, i8) -> i64, i32
block0(v0: i32):
    trapz v0, user1
    v1 = iconst.i64 3
    v2 = iconst.i8 -2
    v3, v4 = call fn0(v1, v0, v2)
    v5 = ireduce.i32 v3
    v6 = iadd v4, v5
    return v6
}
";

#[test]
fn calls_of_any_signature_return_their_results_and_traps_are_reported_on_every_target() {
    let functions = cranelift_reader::parse_functions(FUNCTIONS).expect("parses");
    let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
    for target in Target::ALL {
        if !runnable(target) {
            continue;
        }
        let isa = isa_with_flags(target, &flags, None).expect("isa");
        let units = [Unit {
            label: "as written".into(),
            functions: functions.clone(),
        }];
        let call = |function, args: Vec<DataValue>| Call::scalars(0, function, &args);
        let calls = [
            call(
                0,
                vec![DataValue::I64(7), DataValue::I32(-4), DataValue::I8(-3)],
            ),
            call(1, vec![DataValue::I32(0)]),
            call(1, vec![DataValue::I32(5)]),
        ];
        let outcomes = execute(target, &isa, &units, &calls).expect("executes");
        assert_eq!(
            outcomes[0],
            returned(vec![DataValue::I64(-21), DataValue::I32(-8)]),
            "{target}"
        );
        assert!(
            matches!(&outcomes[1], Outcome::Trapped(s) if s.starts_with("SIG")),
            "{target}: {:?}",
            outcomes[1]
        );
        // After the trap the next call runs: 2*5 + 3*(-2) = 4.
        assert_eq!(outcomes[2], returned(vec![DataValue::I32(4)]), "{target}");
    }
}

#[test]
fn a_call_with_the_wrong_argument_types_is_refused() {
    let functions = cranelift_reader::parse_functions(FUNCTIONS).expect("parses");
    let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
    let target = Target::Aarch64;
    let isa = isa_with_flags(target, &flags, None).expect("isa");
    let units = [Unit {
        label: "x".into(),
        functions,
    }];
    let calls = [Call::scalars(0, 1, &[DataValue::I64(1)])];
    let err = execute(target, &isa, &units, &calls)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("takes (i32)") && err.contains("(i64)"),
        "{err}"
    );
}

/// `%catch(tag)`: throws `tag` with payloads 42 and 100 through Cranelift's runner's entry
/// from a callee; tag 1 is caught (100 - 42), any other tag is not.
const THROWING: &str = "
function %throw(i64, i32) tail {
    fn0 = %__cranelift_throw(i64, i64, i64, i32, i64, i64)
block0(v0: i64, v1: i32):
    v2 = get_frame_pointer.i64
    v3 = load.i64 v2
    v4 = get_return_address.i64
    v5 = iconst.i64 42
    v6 = iconst.i64 100
    call fn0(v0, v3, v4, v1, v5, v6)
    return
}

function %catch_tag1(i64, i32) -> i64 tail {
    sig0 = (i64, i32) tail
    fn0 = %throw(i64, i32) tail
block0(v0: i64, v1: i32):
    try_call fn0(v0, v1), sig0, block1(), [ tag1: block2(exn0, exn1) ]
block1:
    v2 = iconst.i64 -1
    return v2
block2(v3: i64, v4: i64):
    v5 = isub v4, v3
    return v5
}

function %catch(i32) -> i64 {
    fn0 = %catch_tag1(i64, i32) -> i64 tail
block0(v0: i32):
    v1 = get_frame_pointer.i64
    v2 = call fn0(v1, v0)
    return v2
}
";

#[test]
fn the_throw_entry_resumes_at_the_handler_and_an_uncaught_throw_fails_only_its_call() {
    let target = Target::X86_64;
    if !schedlab_backend::exec::provides_throw_entry(target) {
        eprintln!("skipping: the executor provides the throw entry on an x86_64 host only");
        return;
    }
    let functions = cranelift_reader::parse_functions(THROWING).expect("parses");
    let mut builder = cranelift_codegen::settings::builder();
    use cranelift_codegen::settings::Configurable;
    builder
        .set("preserve_frame_pointers", "true")
        .expect("flag");
    let flags = cranelift_codegen::settings::Flags::new(builder);
    let isa = isa_with_flags(target, &flags, None).expect("isa");
    let units = [Unit {
        label: "as written".into(),
        functions,
    }];
    let calls: Vec<Call> = [1, 2, 1]
        .into_iter()
        .map(|tag| Call::scalars(0, 2, &[DataValue::I32(tag)]))
        .collect();
    let outcomes = execute(target, &isa, &units, &calls).expect("executes");
    assert_eq!(outcomes[0], returned(vec![DataValue::I64(58)]));
    assert!(
        matches!(&outcomes[1], Outcome::NotRun(why)
            if why.starts_with("uncaught exception: the throw of tag 2")),
        "{:?}",
        outcomes[1]
    );
    // The uncaught throw ended only its child: the next call runs and catches.
    assert_eq!(outcomes[2], returned(vec![DataValue::I64(58)]));
}
