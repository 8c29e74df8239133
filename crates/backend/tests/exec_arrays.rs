//! The executor with Java arrays: every array flush against a guard page, on every target
//! (natively on the host, under qemu elsewhere), in the target's byte order, with aliasing,
//! writes coming back, and traps that do not lose the calls after them. One `execute` per
//! target (a qemu run costs seconds).

mod common;

use common::runnable;
use cranelift_codegen::data_value::DataValue;
use schedlab_backend::Target;
use schedlab_backend::exec::{Call, ExecError, Outcome, Unit, execute, isa::isa_with_flags};
use schedlab_kernels::case::{Arg, ArrayArg, Placement, PointerSlot};

const FUNCTIONS: &str = "
function %load(i64, i32) -> i32 {
block0(v0: i64, v1: i32):
    v2 = sextend.i64 v1
    v10 = iconst.i64 2
    v3 = ishl v2, v10
    v4 = iadd v0, v3
    v5 = load.i32 v4
    return v5
}

function %store(i64, i32, i32) {
block0(v0: i64, v1: i32, v2: i32):
    v3 = sextend.i64 v1
    v10 = iconst.i64 2
    v4 = ishl v3, v10
    v5 = iadd v0, v4
    store v2, v5
    return
}

function %load_byte(i64, i32) -> i32 {
block0(v0: i64, v1: i32):
    v2 = sextend.i64 v1
    v3 = iadd v0, v2
    v4 = uload8.i32 v3
    return v4
}

function %store_byte(i64, i32, i32) {
block0(v0: i64, v1: i32, v2: i32):
    v3 = sextend.i64 v1
    v4 = iadd v0, v3
    istore8 v2, v4
    return
}

function %deref_load(i64, i32) -> i32 {
block0(v0: i64, v1: i32):
    v2 = load.i64 v0
    v3 = sextend.i64 v1
    v10 = iconst.i64 2
    v4 = ishl v3, v10
    v5 = iadd v2, v4
    v6 = load.i32 v5
    return v6
}

function %deref_store(i64, i32, i32) {
block0(v0: i64, v1: i32, v2: i32):
    v3 = load.i64 v0
    v4 = sextend.i64 v1
    v10 = iconst.i64 2
    v5 = ishl v4, v10
    v6 = iadd v3, v5
    store v2, v6
    return
}

function %store_b_load_a(i64, i64, i32) -> i32 {
block0(v0: i64, v1: i64, v2: i32):
    store v2, v1
    v3 = load.i32 v0
    return v3
}
";

const LOAD: usize = 0;
const STORE: usize = 1;
const LOAD_BYTE: usize = 2;
const STORE_BYTE: usize = 3;
const DEREF_LOAD: usize = 4;
const DEREF_STORE: usize = 5;
const STORE_B_LOAD_A: usize = 6;

const INTS: [i32; 5] = [10, 0x0102_0304, -7, i32::MIN, 0x7fee_dd01];
const BYTES: [u8; 5] = [1, 2, 3, 4, 0xf5];

fn ints() -> Arg {
    Arg::Array(ArrayArg::ints(&INTS))
}

fn bytes() -> Arg {
    Arg::Array(ArrayArg::bytes(BYTES.to_vec()))
}

fn i32v(v: i32) -> Arg {
    Arg::Value(DataValue::I32(v))
}

fn call(function: usize, placement: Placement, args: Vec<Arg>) -> Call {
    Call {
        unit: 0,
        function,
        args,
        memory: vec![],
        placement,
    }
}

/// The marker in a descriptor table's second word (left alone by the callee).
const MARKER: u64 = 0x0102_0304_0506_0708;

/// A table of two longs whose first holds the address of array 1, [`INTS`], which is passed
/// to no parameter.
fn through_table(function: usize, placement: Placement, rest: Vec<Arg>) -> Call {
    let table = ArrayArg {
        elem_bytes: 8,
        bytes: [0xeeu64, MARKER]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect(),
        pointers: vec![PointerSlot {
            offset: 0,
            array: 1,
        }],
    };
    let mut args = vec![Arg::Array(table)];
    args.extend(rest);
    Call {
        unit: 0,
        function,
        args,
        memory: vec![ArrayArg::ints(&INTS)],
        placement,
    }
}

/// The table after a call: the pointer slot reads as zero.
fn table_after() -> Vec<u8> {
    [0u64, MARKER]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

/// What a check expects of one call.
enum Expect {
    /// The call returns these results and leaves its arrays so.
    Returns(Vec<DataValue>, Vec<Vec<u8>>),
    /// The call traps with SIGSEGV or SIGBUS (an access to a guard page).
    Faults,
}

fn ints_bytes(words: &[i32]) -> Vec<u8> {
    ArrayArg::ints(words).bytes
}

/// Every check: a label, the call, what it must do.
fn checks() -> Vec<(&'static str, Call, Expect)> {
    use Expect::{Faults, Returns};
    use Placement::{End, Start};
    let i32r = |v: i32| vec![DataValue::I32(v)];
    let unchanged = vec![ints_bytes(&INTS)];
    let mut written = INTS;
    written[4] = 0x1122_3344;
    let mut written_bytes = BYTES.to_vec();
    written_bytes[4] = 0x99;
    let mut aliased = INTS;
    aliased[0] = 77;
    let last = INTS.len() as i32;
    vec![
        (
            "end: a[0]",
            call(LOAD, End, vec![ints(), i32v(0)]),
            Returns(i32r(10), unchanged.clone()),
        ),
        (
            "end: a[1] in canonical order",
            call(LOAD, End, vec![ints(), i32v(1)]),
            Returns(i32r(0x0102_0304), unchanged.clone()),
        ),
        (
            "end: a[len-1]",
            call(LOAD, End, vec![ints(), i32v(last - 1)]),
            Returns(i32r(0x7fee_dd01), unchanged.clone()),
        ),
        (
            "end: a[len] traps",
            call(LOAD, End, vec![ints(), i32v(last)]),
            Faults,
        ),
        (
            "start: a[len-1] after a trap",
            call(LOAD, Start, vec![ints(), i32v(last - 1)]),
            Returns(i32r(0x7fee_dd01), unchanged.clone()),
        ),
        (
            "start: a[-1] traps",
            call(LOAD, Start, vec![ints(), i32v(-1)]),
            Faults,
        ),
        (
            "start: a[0]",
            call(LOAD, Start, vec![ints(), i32v(0)]),
            Returns(i32r(10), unchanged.clone()),
        ),
        (
            "end: a[3]",
            call(LOAD, End, vec![ints(), i32v(3)]),
            Returns(i32r(i32::MIN), unchanged.clone()),
        ),
        (
            "end: a[4] = v comes back",
            call(STORE, End, vec![ints(), i32v(4), i32v(0x1122_3344)]),
            Returns(vec![], vec![ints_bytes(&written)]),
        ),
        (
            "start: a[4] = v comes back",
            call(STORE, Start, vec![ints(), i32v(4), i32v(0x1122_3344)]),
            Returns(vec![], vec![ints_bytes(&written)]),
        ),
        (
            "end: a[len] = v traps",
            call(STORE, End, vec![ints(), i32v(last), i32v(1)]),
            Faults,
        ),
        (
            "same array: b[0] = 77, then a[0]",
            call(
                STORE_B_LOAD_A,
                End,
                vec![ints(), Arg::SameArray(0), i32v(77)],
            ),
            Returns(i32r(77), vec![ints_bytes(&aliased)]),
        ),
        (
            "distinct arrays: b[0] = 77, then a[0]",
            call(
                STORE_B_LOAD_A,
                Start,
                vec![ints(), Arg::Array(ArrayArg::ints(&[5])), i32v(77)],
            ),
            Returns(i32r(10), vec![ints_bytes(&INTS), ints_bytes(&[77])]),
        ),
        (
            "memory array through a pointer slot: m[1]",
            through_table(DEREF_LOAD, End, vec![i32v(1)]),
            Returns(i32r(0x0102_0304), vec![table_after(), ints_bytes(&INTS)]),
        ),
        (
            "memory array through a pointer slot: m[len] traps",
            through_table(DEREF_LOAD, End, vec![i32v(last)]),
            Faults,
        ),
        (
            "memory array through a pointer slot: start: m[-1] traps",
            through_table(DEREF_LOAD, Start, vec![i32v(-1)]),
            Faults,
        ),
        (
            "memory array through a pointer slot: m[4] = v comes back",
            through_table(DEREF_STORE, Start, vec![i32v(4), i32v(0x1122_3344)]),
            Returns(vec![], vec![table_after(), ints_bytes(&written)]),
        ),
        (
            "odd byte[]: end: b[4]",
            call(LOAD_BYTE, End, vec![bytes(), i32v(4)]),
            Returns(i32r(0xf5), vec![BYTES.to_vec()]),
        ),
        (
            "odd byte[]: end: b[5] traps",
            call(LOAD_BYTE, End, vec![bytes(), i32v(5)]),
            Faults,
        ),
        (
            "odd byte[]: start: b[0]",
            call(LOAD_BYTE, Start, vec![bytes(), i32v(0)]),
            Returns(i32r(1), vec![BYTES.to_vec()]),
        ),
        (
            "odd byte[]: start: b[-1] traps",
            call(LOAD_BYTE, Start, vec![bytes(), i32v(-1)]),
            Faults,
        ),
        (
            "odd byte[]: end: b[4] = v comes back",
            call(STORE_BYTE, End, vec![bytes(), i32v(4), i32v(0x99)]),
            Returns(vec![], vec![written_bytes]),
        ),
        (
            "empty: end: a[0] traps",
            call(LOAD, End, vec![Arg::Array(ArrayArg::ints(&[])), i32v(0)]),
            Faults,
        ),
        (
            "empty: start: a[-1] traps",
            call(LOAD, Start, vec![Arg::Array(ArrayArg::ints(&[])), i32v(-1)]),
            Faults,
        ),
        (
            "empty: start: a[0] traps",
            call(LOAD, Start, vec![Arg::Array(ArrayArg::ints(&[])), i32v(0)]),
            Faults,
        ),
        (
            "after the traps: end: a[2]",
            call(LOAD, End, vec![ints(), i32v(2)]),
            Returns(i32r(-7), unchanged),
        ),
    ]
}

fn units() -> Vec<Unit> {
    vec![Unit {
        label: "as written".into(),
        functions: cranelift_reader::parse_functions(FUNCTIONS).expect("parses"),
    }]
}

fn flags() -> cranelift_codegen::settings::Flags {
    cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder())
}

#[test]
fn arrays_against_guard_pages_on_every_target() {
    let checks = checks();
    let calls: Vec<Call> = checks.iter().map(|(_, c, _)| c.clone()).collect();
    let units = units();
    for target in Target::ALL {
        if !runnable(target) {
            continue;
        }
        let isa = isa_with_flags(target, &flags(), None).expect("isa");
        let outcomes = execute(target, &isa, &units, &calls).expect("executes");
        assert_eq!(outcomes.len(), checks.len(), "{target}");
        for ((label, _, expect), outcome) in checks.iter().zip(&outcomes) {
            match (expect, outcome) {
                (Expect::Returns(returns, arrays), Outcome::Returned(effect)) => {
                    assert_eq!(&effect.returns, returns, "{target}: {label}");
                    assert_eq!(&effect.arrays, arrays, "{target}: {label}");
                }
                (Expect::Faults, Outcome::Trapped(signal))
                    if signal == "SIGSEGV" || signal == "SIGBUS" => {}
                (_, other) => panic!("{target}: {label}: {other}"),
            }
        }
    }
}

fn refusal(args: Vec<Arg>, function: usize) -> String {
    let target = Target::Aarch64;
    let isa = isa_with_flags(target, &flags(), None).expect("isa");
    let calls = [call(function, Placement::End, args)];
    match execute(target, &isa, &units(), &calls) {
        Err(e @ ExecError::BadCall { .. }) => e.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn an_array_for_a_non_pointer_parameter_is_refused() {
    let err = refusal(vec![ints(), ints()], LOAD);
    assert!(
        err.contains("takes (i64, i32)") && err.contains("i64 (array)"),
        "{err}"
    );
}

#[test]
fn a_scalar_for_a_pointer_parameter_is_refused() {
    let err = refusal(vec![i32v(1), i32v(0)], LOAD);
    assert!(err.contains("takes (i64, i32)"), "{err}");
}

#[test]
fn same_array_must_name_an_earlier_array_argument() {
    let err = refusal(vec![Arg::SameArray(1), ints(), i32v(0)], STORE_B_LOAD_A);
    assert!(err.contains("not an earlier array argument"), "{err}");
    let err = refusal(vec![ints(), Arg::SameArray(1), i32v(0)], STORE_B_LOAD_A);
    assert!(err.contains("not an earlier array argument"), "{err}");
}

#[test]
fn arrays_of_partial_elements_are_refused() {
    let ragged = ArrayArg {
        elem_bytes: 4,
        bytes: vec![1, 2, 3],
        pointers: vec![],
    };
    let err = refusal(vec![Arg::Array(ragged), i32v(0)], LOAD);
    assert!(err.contains("whole number"), "{err}");
}

#[test]
fn pointer_slots_must_fit_and_name_an_array() {
    for (offset, array) in [(4, 0), (8, 0), (0, 2)] {
        let table = ArrayArg {
            elem_bytes: 8,
            bytes: vec![0; 8],
            pointers: vec![PointerSlot { offset, array }],
        };
        let err = refusal(vec![Arg::Array(table), i32v(0)], DEREF_LOAD);
        assert!(err.contains("pointer slot"), "{err}");
    }
}

#[test]
fn too_many_arrays_are_refused() {
    let mut c = call(LOAD, Placement::End, vec![ints(), i32v(0)]);
    c.memory = vec![ArrayArg::bytes(vec![1]); schedlab_backend::exec::MAX_ARRAYS];
    let target = Target::Aarch64;
    let isa = isa_with_flags(target, &flags(), None).expect("isa");
    let err = execute(target, &isa, &units(), &[c])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("at most"), "{err}");
}
