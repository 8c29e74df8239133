//! schedlab's static figures on code they were not tuned on, each checked against the machine
//! code it describes: floating-point loops (costed from each core's float latencies, not as
//! integer ALU work), straight-line code (costed back to back, as llvm-mca costs it), and
//! functions that make calls (the loops between the calls are costed; a loop that calls is
//! not modelled).
//!
//! The loops are the `.clif` files of `crates/cli/tests/clif/loops` (also run by `check` on
//! every target, and measured against these figures by `schedlab bench --validate-model`). Disassembly needs llvm-objdump and the llvm-mca comparisons llvm-mca 14 and
//! 19 (Debian `llvm-14`, `llvm-19`): without them these tests skip with a message, or fail
//! under `SCHEDLAB_REQUIRE_TOOLS=1` (CI).

use cranelift_codegen::ir::Function;
use schedlab_backend::tools::test_can_use;
use schedlab_backend::{Compiled, Target, compile};
use schedlab_cost::mca::{
    McaError, hot_loop, llvm_tool, mca_cost_source, mca_cpus, mca_cycles, mca_source, mca_tool_for,
};
use schedlab_cost::models::core_models;
use schedlab_cost::{CostError, LoopBound, loop_cost};
use std::path::PathBuf;

fn tools_available() -> bool {
    let found = llvm_tool("llvm-objdump")
        .and_then(|_| mca_tool_for("znver3"))
        .and_then(|_| mca_tool_for("znver4"));
    test_can_use(found)
}

fn loop_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../cli/tests/clif/loops")
        .join(name)
}

/// The functions of a `.clif` file (its `test`/`target`/`set` lines ignored).
fn functions(text: &str) -> Vec<Function> {
    let test = cranelift_reader::parse_test(text, cranelift_reader::ParseOptions::default())
        .expect("the file parses");
    test.functions.into_iter().map(|(f, _)| f).collect()
}

fn first_function(file: &str) -> Function {
    let text = std::fs::read_to_string(loop_file(file)).expect("read the loop file");
    functions(&text).remove(0)
}

fn compiled(func: &Function, target: Target) -> Compiled {
    compile(func, target).unwrap_or_else(|e| panic!("{target}: {e}"))
}

/// Whether the hot loop's machine code holds an instruction whose mnemonic is in `mnemonics`.
fn hot_loop_has(c: &Compiled, mnemonics: &[&str]) -> bool {
    let body = hot_loop(c).unwrap_or_else(|e| panic!("{}: {e}", c.target));
    body.insts.iter().any(|i| {
        let m = i.text.split_whitespace().next().unwrap_or("");
        mnemonics.contains(&m)
    })
}

/// The float multiply and add of each target, as the disassembler spells them.
fn float_mul_add(target: Target) -> &'static [&'static str] {
    match target {
        Target::X86_64 => &["mulsd", "addsd", "vmulsd", "vaddsd", "vfmadd213sd"],
        Target::Aarch64 => &["fmul", "fadd", "fmadd"],
        Target::S390x => &["mdbr", "adbr", "wfmdb", "wfadb", "madbr", "wfmadb"],
        Target::Riscv64 => &["fmul.d", "fadd.d"],
    }
}

/// `acc = acc * x + 1.0` on AArch64 and s390x, Horner's float loop on x86_64 (where Cranelift
/// folds the constant of `acc * x + 1.0` into `addsd 31(%rip), %xmm0` and llvm-mca puts that
/// load's latency on the chain: 10.03 cycles on znver3/4, measured 6.01 on Zen 4 against
/// schedlab's 6.00 — notes/figures.md; the x86 bound of that loop is checked to be the chain).
/// Asserts that `b`'s bound is within 15 % of llvm-mca's `mca` cycles; `note` ends the message.
fn assert_near_mca(b: &LoopBound, mca: f64, note: &str) {
    assert!(
        (b.bound() - mca).abs() <= 0.15 * mca,
        "{}: bound {} against llvm-mca {mca}{note}",
        b.cpu,
        b.bound()
    );
}

#[test]
fn float_loops_are_bound_by_their_float_chain_within_15_percent_of_llvm_mca() {
    if !tools_available() {
        return;
    }
    let fmul_add = first_function("fmul_add.clif");
    let horner = first_function("horner_f64.clif");
    let x86 = compiled(&fmul_add, Target::X86_64);
    for b in &loop_cost(&x86).expect("costed").bounds {
        let m = core_models(Target::X86_64)
            .find(|m| m.name == b.cpu)
            .expect("the model");
        assert!((b.bound() - (m.fp.mul + m.fp.add)).abs() < 1e-9, "{b:?}");
    }
    let mut off = Vec::new();
    for target in [Target::X86_64, Target::Aarch64, Target::S390x] {
        let func = if target == Target::X86_64 {
            &horner
        } else {
            &fmul_add
        };
        let c = compiled(func, target);
        assert!(
            hot_loop_has(&c, float_mul_add(target)),
            "{target}: no float multiply/add in the hot loop: {:?}",
            hot_loop(&c).map(|b| b.insts)
        );
        let cost = loop_cost(&c).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(cost.is_loop, "{target}: no loop");
        for b in &cost.bounds {
            let m = core_models(target)
                .find(|m| m.name == b.cpu)
                .expect("the model");
            // The chain is the multiply and the add (or one fused multiply-add) at least.
            let chain = (m.fp.mul + m.fp.add).min(m.fp.fma);
            assert!(b.bound() + 1e-9 >= chain, "{target} {}: {b:?}", b.cpu);
            if !mca_cpus(target).contains(&b.cpu) {
                continue;
            }
            let mca = mca_cycles(&c, b.cpu).unwrap_or_else(|e| panic!("{}: {e}", b.cpu));
            let error = (b.bound() - mca) / mca;
            eprintln!(
                "{target} {}: schedlab {:.2}, llvm-mca {mca:.2} ({:+.1} %)",
                b.cpu,
                b.bound(),
                100.0 * error
            );
            let allowed = if b.cpu == "cortex-a72" {
                // LLVM costs the A72 with its Cortex-A57 model (FADD/FMUL 5), Arm's guide
                // gives 4 ([ARM-SOG] in models.rs): the two may differ by the 25 % of that.
                0.25
            } else {
                0.15
            };
            if error.abs() > allowed {
                off.push(format!("{target} {}: {:+.1} %", b.cpu, 100.0 * error));
            }
        }
    }
    assert!(off.is_empty(), "{off:?}");
}

/// `acc = acc * x + 1.0` on x86_64, where Cranelift folds the constant into the add
/// (`addsd c(%rip), %xmm0`): llvm-mca puts that load's latency on the carried chain, and the
/// hardware does not (the load's address does not depend on the chain; measured 6.0 cycles on
/// Zen 4, `bench --validate-model`). Fed the same loop with the constant in a register, as
/// the hardware effectively runs it, llvm-mca agrees with schedlab's bound within 15 % on every
/// x86 core; as emitted it stays above. Prints both (notes/figures.md, "The float loop").
#[test]
fn x86_float_loop_with_the_constant_in_a_register_costs_as_schedlab_bounds_it() {
    if !tools_available() {
        return;
    }
    let c = compiled(&first_function("fmul_add.clif"), Target::X86_64);
    let body = hot_loop(&c).expect("a hot loop");
    let emitted = mca_source(Target::X86_64, &body);
    let folded: Vec<&str> = emitted.lines().filter(|l| l.contains("(%rip)")).collect();
    assert_eq!(folded.len(), 1, "one folded constant load:\n{emitted}");
    // `addsd 0x1f(%rip), %xmm0` → `addsd %xmm15, %xmm0` (xmm15 is not used by the loop).
    assert!(!emitted.contains("%xmm15"), "{emitted}");
    let hoisted: String = emitted
        .lines()
        .map(|l| {
            if l.contains("(%rip)") {
                let (mnemonic, operands) = l.split_once(char::is_whitespace).expect("operands");
                let (_, rest) = operands.split_once(',').expect("two operands");
                format!("{mnemonic} %xmm15,{rest}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    eprintln!("as emitted:\n{emitted}\nconstant in a register:\n{hoisted}");
    let cost = loop_cost(&c).expect("costed");
    for b in &cost.bounds {
        let as_emitted = mca_cycles(&c, b.cpu).unwrap_or_else(|e| panic!("{}: {e}", b.cpu));
        let (in_register, _) = mca_cost_source(Target::X86_64, b.cpu, None, &hoisted)
            .unwrap_or_else(|e| panic!("{}: {e}", b.cpu));
        eprintln!(
            "{}: schedlab {:.2}, llvm-mca as emitted {as_emitted:.2}, constant in a register \
             {in_register:.2}",
            b.cpu,
            b.bound()
        );
        assert_near_mca(b, in_register, " (constant in a register)");
        assert!(as_emitted + 1e-9 >= in_register, "{}", b.cpu);
    }
}

#[test]
fn straight_line_code_is_costed_back_to_back_as_llvm_mca_costs_it() {
    if !tools_available() {
        return;
    }
    // No loop: two independent float chains from the arguments.
    let text = "function %poly(f64, f64) -> f64 {
block0(v0: f64, v1: f64):
    v2 = fmul v0, v0
    v3 = fmul v2, v0
    v4 = fmul v1, v1
    v5 = fadd v3, v4
    v6 = fdiv v5, v1
    return v6
}";
    let func = functions(text).remove(0);
    let c = compiled(&func, Target::X86_64);
    let cost = loop_cost(&c).expect("costed");
    assert!(!cost.is_loop);
    for b in &cost.bounds {
        // One run's latency (mul, mul, add, div on the critical path) is kept apart; the
        // bound is that of runs back to back (the result register is the next run's first
        // argument, as llvm-mca reads the same code), which llvm-mca's figure compares to.
        let latency = b
            .one_run_latency
            .expect("straight-line code has a one-run latency");
        assert!(latency > 0.0, "{}: {b:?}", b.cpu);
        let mca = mca_cycles(&c, b.cpu).unwrap_or_else(|e| panic!("{}: {e}", b.cpu));
        eprintln!(
            "x86_64 {}: schedlab {:.2} back to back ({latency:.1} one run), llvm-mca {mca:.2}",
            b.cpu,
            b.bound()
        );
        assert_near_mca(b, mca, "");
    }
}

const CALLS: &str = "function %callee(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 1
    v2 = iadd v0, v1
    return v2
}

function %sum_after_call(i64) -> i64 {
    fn0 = %callee(i64) -> i64
block0(v0: i64):
    v1 = call fn0(v0)
    v2 = iconst.i64 0
    brif v1, block1(v1, v2), block2(v2)

block1(v3: i64, v4: i64):
    v5 = imul v4, v3
    v6 = iadd v5, v3
    v10 = iconst.i64 -1
    v7 = iadd v3, v10
    brif v7, block1(v7, v6), block2(v6)

block2(v8: i64):
    v9 = call fn0(v8)
    return v9
}

function %call_in_loop(i64) -> i64 {
    fn0 = %callee(i64) -> i64
block0(v0: i64):
    brif v0, block1(v0), block2(v0)

block1(v1: i64):
    v2 = call fn0(v1)
    v5 = iconst.i64 -2
    v3 = iadd v2, v5
    brif v3, block1(v3), block2(v3)

block2(v4: i64):
    return v4
}";

#[test]
fn the_loop_between_calls_is_costed_and_a_loop_that_calls_is_not_modelled() {
    if !tools_available() {
        return;
    }
    let funcs = functions(CALLS);
    for target in [Target::X86_64, Target::Aarch64, Target::S390x] {
        // Calls before and after the loop: the loop is costed (a multiply, and an add unless
        // the target fuses them into one multiply-add, on the carried chain).
        let c = compiled(&funcs[1], target);
        assert!(!c.relocs.is_empty(), "{target}: the calls need relocations");
        let cost = loop_cost(&c).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(cost.is_loop, "{target}");
        for (b, m) in cost.bounds.iter().zip(core_models(target)) {
            assert!(b.recurrence + 1e-9 >= m.mul, "{target}: {b:?}");
        }
        let mca = mca_cycles(&c, mca_cpus(target)[0]);
        assert!(mca.is_ok(), "{target}: {mca:?}");
        // The only loop calls: not modelled, said so, by both models.
        let c = compiled(&funcs[2], target);
        match loop_cost(&c) {
            Err(CostError::Loop(McaError::Calls { calls, is_loop })) => {
                assert!(calls >= 1 && is_loop, "{target}")
            }
            other => panic!("{target}: {other:?}"),
        }
        let e = mca_cycles(&c, mca_cpus(target)[0]).expect_err("not modelled");
        assert!(e.to_string().contains("not modelled"), "{target}: {e}");
    }
}

/// `csr` and frame bytes of code compiled without unwind information (`.clif` files'
/// default, `unwind_info=false`) equal what Cranelift's own unwind records say of the same
/// function compiled with them, on every target: a register-pressure kernel, a 5,800-byte
/// frame (beyond AArch64's immediate: `movz x16` + `sub sp, sp, x16`) and the ordinary loops.
#[test]
fn callee_saved_registers_and_frames_read_from_the_prologue_match_the_unwind_records() {
    use cranelift_codegen::settings::{self, Configurable};
    use schedlab_backend::compile::compile_with_isa;
    use schedlab_backend::exec::isa::isa_with_flags;
    use schedlab_backend::stats::code_stats;
    let pressure = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../cli/tests/clif/pressure_many_values.clif"),
    )
    .expect("read");
    let big = "function %big(i64) -> i64 {
    ss0 = explicit_slot 5800
block0(v0: i64):
    v1 = stack_addr.i64 ss0
    store v0, v1
    v2 = load.i64 v1
    return v2
}";
    let mut funcs = functions(&pressure);
    funcs.extend(functions(big));
    for file in ["mat4_vec.clif", "crc32.clif", "horner_f64.clif"] {
        funcs.push(first_function(file));
    }
    let flags = |unwind: bool| {
        let mut b = settings::builder();
        b.set("unwind_info", if unwind { "true" } else { "false" })
            .expect("flag");
        settings::Flags::new(b)
    };
    let mut saw_saves = 0;
    for target in Target::ALL {
        let with = isa_with_flags(target, &flags(true), None).expect("isa");
        let without = isa_with_flags(target, &flags(false), None).expect("isa");
        for f in &funcs {
            let a = code_stats(
                &compile_with_isa(f.clone(), target, with.as_ref(), true).expect("compiles"),
            );
            let b = code_stats(
                &compile_with_isa(f.clone(), target, without.as_ref(), true).expect("compiles"),
            );
            assert_eq!(a.callee_saved, b.callee_saved, "{target} {}", f.name);
            assert_eq!(a.frame_bytes, b.frame_bytes, "{target} {}", f.name);
            assert_eq!(
                (a.spills, a.reloads),
                (b.spills, b.reloads),
                "{target} {}",
                f.name
            );
            saw_saves += usize::from(!b.callee_saved.is_empty());
            if f.name.to_string() == "%big" {
                assert!(b.frame_bytes >= 5800, "{target}: {}", b.frame_bytes);
            }
        }
    }
    assert!(saw_saves >= 4, "{saw_saves}");
}

/// The hot loop's spills and reloads never exceed the whole function's, on every target, for
/// the ordinary loops and a function without a loop (whose prologue saves registers).
#[test]
fn hot_code_spills_never_exceed_the_functions() {
    if !tools_available() {
        return;
    }
    use schedlab_backend::stats::code_stats;
    use schedlab_cost::loop_spills;
    let pressure = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../cli/tests/clif/pressure_many_values.clif"),
    )
    .expect("read");
    let mut funcs = functions(&pressure);
    for file in [
        "mat4_vec.clif",
        "crc32.clif",
        "dot_f64.clif",
        "fmul_add.clif",
    ] {
        funcs.push(first_function(file));
    }
    for target in Target::ALL {
        for f in &funcs {
            let c = compiled(f, target);
            let whole = code_stats(&c);
            let hot = loop_spills(&c).unwrap_or_else(|e| panic!("{target} {}: {e}", f.name));
            assert!(
                hot.spills <= whole.spills && hot.reloads <= whole.reloads,
                "{target} {}: hot {hot:?}, function {}/{}",
                f.name,
                whole.spills,
                whole.reloads
            );
        }
    }
}
