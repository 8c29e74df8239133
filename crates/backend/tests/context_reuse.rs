//! A Cranelift context reused between compilations (the JIT keeps one per thread, issue #15's
//! compile time) must give the same machine code as a fresh context: every registered kernel
//! after the IR stages, on every target, compiled one after another in one context — in two
//! rounds, so each kernel also follows itself and the largest kernel — equals its fresh
//! compilation byte for byte; and the host JIT's code equals a fresh compilation's.
#![allow(missing_docs)]

use cranelift_codegen::Context;
use cranelift_codegen::ir::Function;
use schedlab_backend::compile::{compile_in_context, compile_with_isa};
use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_backend::target::{IsaChoice, OptLevel};
use schedlab_backend::{JitFunction, JitOptions, Target};
use schedlab_kernels::registry;

/// Every registered kernel `target` can compile (riscv64 has no vector lowering), after the
/// JIT's IR stages (slow path compiled in).
fn staged_kernels(target: Target) -> Vec<(&'static str, Function)> {
    registry::all()
        .into_iter()
        .filter(|kernel| !(kernel.needs_simd() && target == Target::Riscv64))
        .map(|kernel| {
            let mut func = kernel.build();
            let options = StageOptions {
                isa: IsaChoice::Level,
                ..StageOptions::jit(None)
            };
            pipeline::run_ir_stages_with(&mut func, target, &PipelineConfig::default(), &options)
                .unwrap_or_else(|e| panic!("{} {target}: {e}", kernel.name()));
            (kernel.name(), func)
        })
        .collect()
}

#[test]
fn a_reused_context_gives_the_same_code_as_a_fresh_one_on_every_target() {
    for target in Target::ALL {
        let isa = target
            .isa_with(OptLevel::None, false, IsaChoice::Level)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let kernels = staged_kernels(target);
        let mut ctx = Context::new();
        for round in 0..2 {
            for (name, func) in &kernels {
                let fresh = compile_with_isa(func.clone(), target, isa.as_ref(), true)
                    .unwrap_or_else(|e| panic!("{name} {target}: {e}"));
                let reused = compile_in_context(&mut ctx, func.clone(), target, isa.as_ref(), true)
                    .unwrap_or_else(|e| panic!("{name} {target}: {e}"));
                assert!(
                    fresh.code == reused.code && fresh.vcode == reused.vcode,
                    "{name} {target} (round {round}): the reused context changes the code"
                );
            }
        }
    }
}

#[test]
fn the_host_jit_compiles_the_same_code_as_a_fresh_context() {
    let Some(target) = Target::host() else {
        eprintln!("skipped: the host is not one of schedlab's targets");
        return;
    };
    let isa = target
        .isa_with(OptLevel::None, false, IsaChoice::Native)
        .unwrap_or_else(|e| panic!("{target}: {e}"));
    let options = JitOptions {
        verify: false,
        listing: false,
    };
    for round in 0..2 {
        for (name, func) in staged_kernels(target) {
            let fresh = compile_with_isa(func.clone(), target, isa.as_ref(), false)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let jit =
                JitFunction::compile_with(func, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                fresh.code == jit.compiled().code,
                "{name} (round {round}): the JIT's reused context changes the code"
            );
        }
    }
}
