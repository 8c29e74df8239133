//! The spill/reload counter of `stats.rs` (which reads the VCode listing) against an
//! independent count: the register allocator's own list of moves between registers and spill
//! slots, from regalloc2's verbose log (`regalloc_verbose_logs`, one `move p3i -> stack5` line
//! per edit it inserted), on the MD5 kernel and on functions built to spill.

mod common;

use cranelift_codegen::ir::{
    AbiParam, Function, InstBuilder, MemFlagsData, Signature, UserFuncName, Value, types,
};
use cranelift_codegen::isa::{self, CallConv, OwnedTargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use schedlab_backend::compile::compile_with_isa;
use schedlab_backend::stats::{code_stats, spill_sites};
use schedlab_backend::{Target, compile};
use std::cell::RefCell;
use std::sync::Once;

thread_local! {
    static REGALLOC_LOG: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Collects regalloc2's `info!` records on the thread that compiles.
struct Capture;

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.target().starts_with("regalloc2") && m.level() <= log::Level::Info
    }
    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            REGALLOC_LOG.with(|l| l.borrow_mut().push(record.args().to_string()));
        }
    }
    fn flush(&self) {}
}

static CAPTURE: Capture = Capture;
static INIT: Once = Once::new();

/// The ISA `Target::isa(OptLevel::None)` builds, plus regalloc2's verbose log.
fn verbose_isa(target: Target) -> OwnedTargetIsa {
    let mut shared = settings::builder();
    for (name, value) in [
        ("opt_level", "none"),
        ("enable_verifier", "true"),
        ("is_pic", "false"),
        ("use_colocated_libcalls", "false"),
        ("regalloc_verbose_logs", "true"),
    ] {
        shared.set(name, value).expect("known setting");
    }
    let flags = settings::Flags::new(shared);
    // The named level on every target, host included (`IsaChoice::Level`).
    let builder = {
        let mut b = isa::lookup(target.triple()).expect("ISA compiled in");
        match target {
            Target::X86_64 => b.enable("x86-64-v3").expect("preset"),
            Target::Riscv64 => b.enable("has_c").expect("flag"),
            Target::Aarch64 | Target::S390x => {}
        }
        b
    };
    builder.finish(flags).expect("ISA builds")
}

/// (spills, reloads) from the allocator's edit list.
fn allocator_moves(func: &Function, target: Target) -> (usize, usize, String) {
    INIT.call_once(|| {
        log::set_logger(&CAPTURE).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Info);
    });
    REGALLOC_LOG.with(|l| l.borrow_mut().clear());
    let isa = verbose_isa(target);
    let compiled = compile_with_isa(func.clone(), target, isa.as_ref(), true).expect("compiles");
    // The verbose ISA must produce exactly the code the normal path produces.
    let normal = compile(func, target).expect("compiles");
    assert_eq!(
        compiled.vcode, normal.vcode,
        "{target}: verbose logging changed the code"
    );
    let log = REGALLOC_LOG.with(|l| l.borrow_mut().split_off(0));
    assert!(
        log.iter().any(|l| l.contains("REGALLOC RESULTS")),
        "{target}: regalloc2 logged nothing; is the logger installed?"
    );
    let (mut spills, mut reloads) = (0, 0);
    let mut moves = String::new();
    for line in &log {
        let Some((_, mv)) = line.split_once(": move ") else {
            continue;
        };
        let Some((from, to)) = mv.split_once(" -> ") else {
            continue;
        };
        match (from.starts_with("stack"), to.starts_with("stack")) {
            (false, true) => spills += 1,
            (true, false) => reloads += 1,
            _ => continue,
        }
        moves.push_str(line);
        moves.push('\n');
    }
    (spills, reloads, moves)
}

fn check(func: &Function, target: Target, expect_spills: bool) -> (usize, usize) {
    let (spills, reloads, moves) = allocator_moves(func, target);
    let compiled = compile(func, target).expect("compiles");
    let stats = code_stats(&compiled);
    let sites: Vec<String> = spill_sites(&compiled)
        .iter()
        .map(|s| format!("  {:>4}: {:?} {}", s.line, s.kind, s.text))
        .collect();
    assert_eq!(
        (stats.spills, stats.reloads),
        (spills, reloads),
        "{target} {}: VCode count (left) differs from regalloc2's moves (right)\n\
         counted sites:\n{}\nallocator moves:\n{moves}",
        func.name,
        sites.join("\n")
    );
    if expect_spills {
        assert!(
            spills > 0 && reloads > 0,
            "{target} {}: expected spills",
            func.name
        );
    }
    (spills, reloads)
}

fn new_func(name: &str, params: &[types::Type], ret: types::Type) -> Function {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
    sig.returns.push(AbiParam::new(ret));
    Function::with_name_signature(UserFuncName::testcase(name), sig)
}

/// `n` values loaded at once and combined in reverse order, so all are live together.
fn all_live(n: i32, ty: types::Type) -> Function {
    one_block(
        &format!("all_live_{n}_{ty}"),
        &[types::I64],
        ty,
        |b, params| {
            let ptr = params[0];
            let size = ty.bytes() as i32;
            let vals: Vec<Value> = (0..n)
                .map(|i| b.ins().load(ty, MemFlagsData::trusted(), ptr, i * size))
                .collect();
            // A chain that needs every value after all were loaded.
            let mut acc = vals[n as usize - 1];
            for (i, &v) in vals.iter().rev().enumerate().skip(1) {
                acc = if ty.is_float() {
                    if i % 2 == 0 {
                        b.ins().fadd(acc, v)
                    } else {
                        b.ins().fmul(acc, v)
                    }
                } else if i % 2 == 0 {
                    b.ins().iadd(acc, v)
                } else {
                    b.ins().bxor(acc, v)
                };
            }
            acc
        },
    )
}

/// The function `name(params) -> ret` of one block, whose instructions `body` emits from the
/// parameters; it returns the value `body` returns.
fn one_block(
    name: &str,
    params: &[types::Type],
    ret: types::Type,
    body: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Value,
) -> Function {
    let mut func = new_func(name, params, ret);
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let params = b.block_params(entry).to_vec();
    let result = body(&mut b, &params);
    b.ins().return_(&[result]);
    b.finalize(schedlab_kernels::ir_build::frontend_config());
    func
}

/// `n` accumulators carried around a loop, so the loop body reloads and spills.
fn loop_accumulators(n: usize) -> Function {
    let mut func = new_func(
        &format!("loop_acc_{n}"),
        &[types::I64, types::I32],
        types::I64,
    );
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    let entry = b.create_block();
    let header = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.append_block_param(header, types::I32);
    for _ in 0..n {
        b.append_block_param(header, types::I64);
    }
    b.switch_to_block(entry);
    b.seal_block(entry);
    let [ptr, count] = [b.block_params(entry)[0], b.block_params(entry)[1]];
    let mut args = vec![count.into()];
    for i in 0..n {
        let v = b
            .ins()
            .load(types::I64, MemFlagsData::trusted(), ptr, 8 * i as i32);
        args.push(v.into());
    }
    b.ins().jump(header, &args);

    b.switch_to_block(header);
    let params = b.block_params(header).to_vec();
    let (i, accs) = (params[0], &params[1..]);
    let zero = b.ins().iconst(types::I32, 0);
    let done = b
        .ins()
        .icmp(cranelift_codegen::ir::condcodes::IntCC::Equal, i, zero);
    let body = b.create_block();
    b.ins().brif(done, exit, &[], body, &[]);
    b.switch_to_block(body);
    b.seal_block(body);
    let next_i = b.ins().iadd_imm_s(i, -1);
    let mut next = vec![next_i.into()];
    for (k, &a) in accs.iter().enumerate() {
        let other = accs[(k + 7) % n];
        let x = b.ins().rotl_imm_u(a, (k % 63 + 1) as i64);
        let y = b.ins().iadd(x, other);
        next.push(y.into());
    }
    b.ins().jump(header, &next);
    b.seal_block(header);

    b.switch_to_block(exit);
    b.seal_block(exit);
    let mut acc = accs[0];
    for &a in &accs[1..] {
        acc = b.ins().bxor(acc, a);
    }
    b.ins().return_(&[acc]);
    b.finalize(schedlab_kernels::ir_build::frontend_config());
    func
}

fn small() -> Function {
    one_block(
        "small",
        &[types::I64, types::I64],
        types::I64,
        |b, params| b.ins().iadd(params[0], params[1]),
    )
}

fn functions() -> Vec<(Function, bool)> {
    vec![
        (schedlab_kernels::md5::compress_multi_block(), true),
        (all_live(40, types::I64), true),
        (all_live(36, types::I32), true),
        (all_live(48, types::F64), true),
        (loop_accumulators(40), true),
        (small(), false),
    ]
}

fn counts_match_the_allocator(target: Target) {
    for (f, spills) in functions() {
        check(&f, target, spills);
    }
}

common::test_on_every_target!(counts_match_the_allocator:
    x86_64_counts_match_the_allocator => X86_64,
    aarch64_counts_match_the_allocator => Aarch64,
    s390x_counts_match_the_allocator => S390x,
    riscv64_counts_match_the_allocator => Riscv64,
);

#[test]
fn small_functions_have_no_spills_and_a_plausible_frame() {
    for target in Target::ALL {
        let compiled = compile(&small(), target).expect("compiles");
        let s = code_stats(&compiled);
        assert_eq!((s.spills, s.reloads), (0, 0), "{target}: {s:?}");
        assert!(s.callee_saved.is_empty(), "{target}: {s:?}");
        assert!(s.insts >= 2 && s.insts < 20, "{target}: {s:?}");
        assert_eq!(s.code_bytes, compiled.code.len());
        assert!(s.frame_bytes <= 16, "{target}: {s:?}");
    }
}

#[test]
fn md5_frame_holds_saves_and_spill_slots() {
    let f = schedlab_kernels::md5::compress_multi_block();
    for target in Target::ALL {
        let compiled = compile(&f, target).expect("compiles");
        let s = code_stats(&compiled);
        assert!(!s.callee_saved.is_empty(), "{target}: {s:?}");
        // Every distinct spill slot lies inside the frame.
        assert!(
            s.frame_bytes as usize >= 8 * s.callee_saved.len().min(1) + 8,
            "{target}: {s:?}"
        );
        // Fixed-width AArch64: the listing's count is the code size in words, give or take
        // the branches the MachBuffer folds.
        if target == Target::Aarch64 {
            let words = s.code_bytes / 4;
            assert!(
                s.insts >= words && s.insts <= words + words / 10,
                "{target}: {s:?}"
            );
        }
    }
}
