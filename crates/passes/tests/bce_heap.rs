//! Wasmtime's explicit heap checks (`bce::heap`): a check goes only when a dominating check on
//! the same index and the same bound proves it, and every removal keeps the function's result
//! — a value, or the `heap_oob` trap — on every boundary input, run in Cranelift's
//! interpreter before and after. The functions are written here in the shape Wasmtime 48
//! translates a 32-bit memory access to without signals-based traps (its trap blocks call
//! builtins before `trap`; here they trap at once so that the interpreter can run them). The
//! "vmctx" and the linear memory are stack slots: a load the pass wrongly unguards reads
//! outside the 64-byte heap slot, which the interpreter reports as an error, not a trap.
#![allow(missing_docs)]

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::Function;
use cranelift_interpreter::step::ControlFlow;
use schedlab_passes::bce::{self, BceLevel, heap::HeapFacts};

mod common;
use common::{interpreter, parse};

/// One access of `size` bytes at `addr + offset` (`addr` an i32 value), checked in one of the
/// three shapes; `n` numbers its values and blocks. A load adds the value read into `v9`'s
/// chain; a store writes the running sum.
#[derive(Clone, Copy)]
struct Access {
    addr: &'static str,
    offset: u32,
    size: u32,
    shape: Shape,
    store: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// `icmp ugt idx, (isub bound, k)` — Wasmtime's `k <= minimum` case.
    Sub,
    /// `icmp ugt (iadd idx, k), bound` — its general case.
    Add,
    /// `icmp uge idx, bound` — its one-byte case (`k = 1`).
    Byte,
}

/// Something between two accesses.
#[derive(Clone, Copy, PartialEq)]
enum Between {
    Nothing,
    /// A store to the bound's alias region (as `memory.grow` would change it).
    StoreToBound,
    /// A store to the heap's region.
    StoreToHeap,
}

/// `function %f(i64 bound, i32 p, i32 q) -> i32`: stores `bound` at "vmctx"+64, then performs
/// `accesses` in one straight line of checked blocks and returns the running sum.
fn straight_line(accesses: &[Access], between: Between) -> String {
    let mut s = String::from(
        "function %f(i64, i32, i32) -> i32 {\n    ss0 = explicit_slot 72\n    \
         ss1 = explicit_slot 64\n    region0 = 603979784 \"VMMemoryDefinition+0x8\"\n    \
         region1 = 134217728 \"PublicMemory\"\n\n\
         block0(v0: i64, v1: i32, v2: i32):\n    v3 = stack_addr.i64 ss0\n    \
         store notrap aligned region0 v0, v3+64\n    v4 = stack_addr.i64 ss1\n    \
         v9 = iconst.i32 0\n    jump block1(v9)\n",
    );
    let n = accesses.len();
    for (i, a) in accesses.iter().enumerate() {
        let b = 1 + 3 * i;
        let v = 100 + 20 * i;
        let addr = if a.addr == "p" { "v1" } else { "v2" };
        s.push_str(&format!("\nblock{b}(v{}: i32):\n", v + 19));
        if i > 0 && between != Between::Nothing {
            let region = if between == Between::StoreToBound {
                "region0 v0, v3+64"
            } else {
                "region1 v{0}, v4+60"
            };
            s.push_str(&format!(
                "    store notrap aligned {}\n",
                region.replace("{0}", &(v + 19).to_string())
            ));
        }
        let k = u64::from(a.offset) + u64::from(a.size);
        s.push_str(&format!(
            "    v{v} = uextend.i64 {addr}\n    v{} = load.i64 notrap aligned region0 v3+64\n",
            v + 1
        ));
        match a.shape {
            Shape::Sub => s.push_str(&format!(
                "    v{} = iconst.i64 {k}\n    v{} = isub v{}, v{}\n    v{} = icmp ugt v{v}, v{}\n",
                v + 2,
                v + 3,
                v + 1,
                v + 2,
                v + 4,
                v + 3
            )),
            Shape::Add => s.push_str(&format!(
                "    v{} = iconst.i64 {k}\n    v{} = iadd v{v}, v{}\n    v{} = icmp ugt v{}, v{}\n",
                v + 2,
                v + 3,
                v + 2,
                v + 4,
                v + 3,
                v + 1
            )),
            Shape::Byte => s.push_str(&format!("    v{} = icmp uge v{v}, v{}\n", v + 4, v + 1)),
        }
        s.push_str(&format!(
            "    v{} = iconst.i8 0\n    v{} = icmp ne v{}, v{}\n    brif v{}, block{}, block{}\n",
            v + 5,
            v + 6,
            v + 4,
            v + 5,
            v + 6,
            b + 1,
            b + 2
        ));
        s.push_str(&format!("\nblock{} cold:\n    trap heap_oob\n", b + 1));
        let ty = match a.size {
            1 => "uload8.i32",
            2 => "uload16.i32",
            _ => "load.i32",
        };
        let next = if i + 1 == n {
            "block999".to_string()
        } else {
            format!("block{}", b + 3)
        };
        s.push_str(&format!(
            "\nblock{}:\n    v{} = iadd v4, v{v}\n",
            b + 2,
            v + 7
        ));
        if a.store {
            let op = match a.size {
                1 => "istore8",
                2 => "istore16",
                _ => "store",
            };
            s.push_str(&format!(
                "    {op} little region1 v{}, v{}+{}\n    jump {next}(v{})\n",
                v + 19,
                v + 7,
                a.offset,
                v + 19
            ));
        } else {
            s.push_str(&format!(
                "    v{} = {ty} little region1 v{}+{}\n    v{} = iadd v{}, v{}\n    jump {next}(v{})\n",
                v + 8,
                v + 7,
                a.offset,
                v + 9,
                v + 19,
                v + 8,
                v + 9
            ));
        }
    }
    s.push_str("\nblock999(v998: i32):\n    return v998\n}\n");
    s
}

/// The interpreter's outcome: a returned value, a trap, or an error (a wild access).
fn run(func: &Function, args: &[DataValue]) -> String {
    match interpreter(func, None).call_by_name("%f", args) {
        Ok(ControlFlow::Return(values)) => format!("return {values:?}"),
        Ok(ControlFlow::Trap(trap)) => format!("trap {trap:?}"),
        Ok(other) => format!("other {other:?}"),
        Err(e) => format!("error {e}"),
    }
}

/// Runs BCE with `facts`; returns the function after and the heap checks removed.
fn eliminate(text: &str, facts: HeapFacts) -> (Function, Function, usize) {
    let before = parse(text);
    let mut after = before.clone();
    let stats = bce::run(
        &mut after,
        bce::BceOptions {
            heap_facts: facts,
            ..BceLevel::Predicate.into()
        },
    )
    .expect("bce");
    assert_eq!(
        bce::heap::all_heap_checks(&before).len(),
        stats.heap_checks_before,
        "{text}"
    );
    (before, after, stats.heap_checks_removed)
}

/// Every bound from 0 to 12 and 64, every address near them and near `u32::MAX`: the outcome
/// before and after must agree. (A wrapping check with `bound < k` lets a wild access through
/// in the function as given, which the interpreter reports as an error: the pass must keep
/// even that outcome, and does, since such a check proves nothing.)
fn agree_on_boundaries(before: &Function, after: &Function, min_bound: u64, text: &str) {
    let (mut traps, mut returns) = (0, 0);
    for bound in (0..=12u64).chain([64]).filter(|&b| b >= min_bound) {
        for p in [
            0u32,
            1,
            2,
            3,
            4,
            5,
            6,
            7,
            8,
            9,
            11,
            12,
            60,
            63,
            64,
            u32::MAX - 3,
            u32::MAX,
        ] {
            for q in [0u32, 4, 61] {
                let args = [
                    DataValue::I64(bound as i64),
                    DataValue::I32(p as i32),
                    DataValue::I32(q as i32),
                ];
                let want = run(before, &args);
                let got = run(after, &args);
                assert_eq!(want, got, "bound {bound}, p {p}, q {q}\n{after}");
                traps += usize::from(want.starts_with("trap"));
                returns += usize::from(want.starts_with("return"));
            }
        }
    }
    assert!(
        traps > 0 && returns > 0,
        "{traps} traps, {returns} returns: the test proves nothing\n{text}"
    );
}

fn access(addr: &'static str, offset: u32, size: u32, shape: Shape, store: bool) -> Access {
    Access {
        addr,
        offset,
        size,
        shape,
        store,
    }
}

/// Removed, removed with the memory minimum, and what must stay.
#[test]
fn a_dominated_check_goes_only_when_the_dominating_one_proves_it() {
    use Shape::*;
    let none = HeapFacts::default();
    let min8 = HeapFacts { min_bound: 8 };
    // (accesses, between, facts, checks removed)
    let cases: Vec<(Vec<Access>, Between, HeapFacts, usize)> = vec![
        // `a[p] += 1`: the store's check is the load's.
        (
            vec![access("p", 0, 4, Sub, false), access("p", 0, 4, Sub, true)],
            Between::Nothing,
            none,
            1,
        ),
        // ... also across a store to the heap (another alias region than the bound's).
        (
            vec![access("p", 0, 4, Sub, false), access("p", 0, 4, Sub, true)],
            Between::StoreToHeap,
            none,
            1,
        ),
        // A store to the bound's region (what `memory.grow` does) keeps the second check.
        (
            vec![access("p", 0, 4, Sub, false), access("p", 0, 4, Sub, true)],
            Between::StoreToBound,
            none,
            0,
        ),
        // Another index: stays.
        (
            vec![access("p", 0, 4, Sub, false), access("q", 0, 4, Sub, false)],
            Between::Nothing,
            none,
            0,
        ),
        // A larger offset later: stays (`p + 8 > bound` is not excluded by `p + 4 <= bound`).
        (
            vec![access("p", 0, 4, Sub, false), access("p", 4, 4, Sub, false)],
            Between::Nothing,
            none,
            0,
        ),
        // A smaller offset later, wrapping shape, minimum unknown: `bound - 8` may have
        // wrapped (bound < 8), so the first check proved nothing: stays.
        (
            vec![access("p", 4, 4, Sub, false), access("p", 0, 4, Sub, false)],
            Between::Nothing,
            none,
            0,
        ),
        // ... with the module's minimum 8 bytes (so bound >= 8): goes.
        (
            vec![access("p", 4, 4, Sub, false), access("p", 0, 4, Sub, false)],
            Between::Nothing,
            min8,
            1,
        ),
        // The exact shape proves smaller offsets and bytes without any minimum.
        (
            vec![
                access("p", 4, 4, Add, false),
                access("p", 0, 2, Sub, false),
                access("p", 0, 1, Byte, false),
                access("p", 2, 1, Sub, true),
            ],
            Between::Nothing,
            none,
            3,
        ),
        // A byte check proves only byte checks at the same address.
        (
            vec![
                access("p", 0, 1, Byte, false),
                access("p", 0, 2, Sub, false),
            ],
            Between::Nothing,
            none,
            0,
        ),
    ];
    for (i, (accesses, between, facts, removed)) in cases.into_iter().enumerate() {
        let text = straight_line(&accesses, between);
        let (before, after, got) = eliminate(&text, facts);
        assert_eq!(got, removed, "case {i}: checks removed\n{text}\n{after}");
        assert_eq!(
            bce::heap::all_heap_checks(&after).len(),
            accesses.len() - removed,
            "case {i}"
        );
        agree_on_boundaries(&before, &after, facts.min_bound, &text);
    }
}

/// A loop reading `a[i]` and writing `a[i]` (one check each per iteration, as Wasmtime
/// translates `a[i] += x`): the store's check goes, the load's stays; a bound reloaded after a
/// call-free loop body is the same bound.
#[test]
fn a_loop_keeps_one_check_per_access_pair() {
    let text = "function %f(i64, i32, i32) -> i32 {
    ss0 = explicit_slot 72
    ss1 = explicit_slot 64
    region0 = 603979784 \"VMMemoryDefinition+0x8\"
    region1 = 134217728 \"PublicMemory\"

block0(v0: i64, v1: i32, v2: i32):
    v3 = stack_addr.i64 ss0
    store notrap aligned region0 v0, v3+64
    v4 = stack_addr.i64 ss1
    v5 = iconst.i32 0
    jump block1(v5, v5)

block1(v10: i32, v11: i32):
    v12 = icmp ult v10, v2
    brif v12, block2, block9(v11)

block2:
    v20 = uextend.i64 v10
    v21 = load.i64 notrap aligned region0 v3+64
    v22 = iconst.i64 1
    v23 = isub v21, v22
    v24 = icmp ugt v20, v23
    v25 = iconst.i8 0
    v26 = icmp ne v24, v25
    brif v26, block3, block4

block3 cold:
    trap heap_oob

block4:
    v30 = iadd v4, v20
    v31 = uload8.i32 little region1 v30
    v32 = iadd v11, v31
    v34 = iconst.i32 1
    v33 = iadd v31, v34
    v40 = uextend.i64 v10
    v41 = load.i64 notrap aligned region0 v3+64
    v42 = iconst.i64 1
    v43 = isub v41, v42
    v44 = icmp ugt v40, v43
    v45 = iconst.i8 0
    v46 = icmp ne v44, v45
    brif v46, block5, block6

block5 cold:
    trap heap_oob

block6:
    v50 = iadd v4, v40
    istore8 little region1 v33, v50
    v52 = iconst.i32 1
    v51 = iadd v10, v52
    jump block1(v51, v32)

block9(v90: i32):
    return v90
}
";
    let (before, after, removed) = eliminate(text, HeapFacts::default());
    assert_eq!(removed, 1, "{after}");
    assert_eq!(bce::heap::all_heap_checks(&after).len(), 1);
    agree_on_boundaries(&before, &after, 0, text);
}

/// Wasmtime's own text of one access (its trap block calls the `trap` and `raise` builtins):
/// recognised as a heap check, and the second of two identical ones goes.
#[test]
fn wasmtimes_text_is_recognised() {
    let check = |n: u32, next: u32| {
        format!(
            "    v{n} = uextend.i64 v2
    v{} = load.i64 notrap aligned region1 v0+64
    v{} = iconst.i64 4
    v{} = isub v{}, v{}
    v{} = icmp ugt v{n}, v{}
    v{} = iconst.i8 0
    v{} = icmp ne v{}, v{}
    brif v{}, block{}, block{next}

block{} cold:
    v{} = iconst.i8 1
    call fn0(v0, v{})
    call fn1(v0)
    trap user1

block{next}:
    v{} = load.i64 notrap aligned can_move region0 v0+56
    v{} = iadd v{}, v{n}
    v{} = load.i32 little region2 v{}
",
            n + 1,
            n + 2,
            n + 3,
            n + 1,
            n + 2,
            n + 4,
            n + 3,
            n + 5,
            n + 6,
            n + 4,
            n + 5,
            n + 6,
            next + 50,
            next + 50,
            n + 7,
            n + 7,
            n + 8,
            n + 9,
            n + 8,
            n + 10,
            n + 9
        )
    };
    let text = format!(
        "function u0:1(i64 vmctx, i64, i32) -> i32 tail {{
    region0 = 603979776 \"VMMemoryDefinition+0x0\"
    region1 = 603979784 \"VMMemoryDefinition+0x8\"
    region2 = 134217728 \"PublicMemory\"
    sig0 = (i64 vmctx, i8) tail
    sig1 = (i64 vmctx) tail
    fn0 = colocated u805306368:40 sig0
    fn1 = colocated u805306368:41 sig1

block0(v0: i64, v1: i64, v2: i32):
    jump block1

block1:
{}{}    v99 = iadd v20, v40
    return v99
}}
",
        check(10, 2),
        check(30, 3)
    );
    let func = parse(&text);
    assert_eq!(bce::heap::all_heap_checks(&func).len(), 2, "{text}");
    let (_, after, removed) = eliminate(&text, HeapFacts::default());
    assert_eq!(removed, 1, "{after}");
}
