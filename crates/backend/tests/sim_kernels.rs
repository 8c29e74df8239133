//! The schedule simulation (`cost/sim.rs`) on the code `bench --validate-model` times: MD5 as
//! the report compiles it, SHA-256 and the BigInteger kernels as the bench JIT-compiles them
//! (host features), every strategy, beside schedlab's bound. Prints only (the measured side is
//! `notes/validation.md`); `cargo test -p schedlab-backend --test sim_kernels -- --ignored
//! --nocapture`. Needs llvm-objdump (Debian `llvm-14`): skips with a message without it, fails
//! under `SCHEDLAB_REQUIRE_TOOLS=1`.

use schedlab_backend::Target;
use schedlab_backend::cost::models::core_models;
use schedlab_backend::cost::sim::SimOptions;
use schedlab_backend::cost::{bound_of, simulated_with};
use schedlab_backend::jit::{JitFunction, JitOptions};
use schedlab_backend::mca::{HotLoop, hot_loop, llvm_tool};
use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions, run_ir_stages_with};
use schedlab_backend::tools::test_can_use;

fn host_loop(
    mut func: cranelift_codegen::ir::Function,
    strategy: &str,
    options: &StageOptions,
) -> HotLoop {
    let target = Target::host().expect("an x86_64 host");
    run_ir_stages_with(
        &mut func,
        target,
        &PipelineConfig::with_strategy(strategy),
        options,
    )
    .unwrap_or_else(|e| panic!("{strategy}: {e}"));
    let jit = JitFunction::compile_with(
        func,
        &JitOptions {
            verify: false,
            listing: true,
        },
    )
    .unwrap_or_else(|e| panic!("{strategy}: {e}"));
    hot_loop(jit.compiled()).unwrap_or_else(|e| panic!("{strategy}: {e}"))
}

/// As `bench --validate-model` compiles the BigInteger kernels.
fn bigint_loop(mut func: cranelift_codegen::ir::Function, strategy: &str) -> HotLoop {
    let target = Target::host().expect("an x86_64 host");
    pipeline::run_ir_stages(&mut func, target, &PipelineConfig::with_strategy(strategy))
        .unwrap_or_else(|e| panic!("{strategy}: {e}"));
    let jit = JitFunction::compile(&func).unwrap_or_else(|e| panic!("{strategy}: {e}"));
    hot_loop(jit.compiled()).unwrap_or_else(|e| panic!("{strategy}: {e}"))
}

#[test]
#[ignore = "prints the simulation of every validated kernel and strategy"]
fn simulation_of_the_validated_kernels() {
    if !test_can_use(llvm_tool("llvm-objdump")) || Target::host() != Some(Target::X86_64) {
        return;
    }
    let filter = std::env::var("SIM_KERNELS").unwrap_or_default();
    let strategies = schedlab_passes::sched::strategy_names();
    for kernel in ["md5", "sha256", "muladd", "square-to-len"] {
        if !filter.is_empty() && !filter.split(',').any(|k| k == kernel) {
            continue;
        }
        let only = std::env::var("SIM_STRATEGIES").unwrap_or_default();
        for strategy in strategies
            .iter()
            .filter(|s| **s != "shuffle")
            .filter(|s| only.is_empty() || only.split(',').any(|o| o == **s))
        {
            let body = match kernel {
                "md5" => {
                    let target = Target::X86_64;
                    let c = pipeline::run_with(
                        schedlab_kernels::md5::compress_multi_block(),
                        target,
                        &PipelineConfig::with_strategy(strategy),
                        &StageOptions::report_lazy(target),
                    )
                    .unwrap_or_else(|e| panic!("{e}"))
                    .compiled;
                    hot_loop(&c).unwrap_or_else(|e| panic!("{e}"))
                }
                "sha256" => host_loop(
                    schedlab_kernels::sha256::compress_multi_block_with(
                        schedlab_kernels::sha256::Schedule::Argument,
                    ),
                    strategy,
                    &StageOptions::jit(None),
                ),
                "muladd" => bigint_loop(schedlab_kernels::bigint::mul_add(), strategy),
                _ => bigint_loop(schedlab_kernels::bigint::square_to_len(), strategy),
            };
            if std::env::var_os("SIM_PRINT_LOOP").is_some() {
                for inst in &body.insts {
                    println!("    {:#x}: {}", inst.addr, inst.text);
                }
            }
            let cpus = std::env::var("SIM_CPUS").unwrap_or_else(|_| "sapphirerapids".into());
            for m in core_models(Target::X86_64).filter(|m| cpus.split(',').any(|c| c == m.name)) {
                let b = bound_of(Target::X86_64, &body, m).unwrap_or_else(|e| panic!("{e}"));
                let sim =
                    |o: SimOptions| simulated_with(Target::X86_64, &body, m, o).unwrap_or(f64::NAN);
                let with = |f: fn(&mut SimOptions)| {
                    let mut o = SimOptions::CITED;
                    f(&mut o);
                    sim(o)
                };
                println!(
                    "{kernel:13} {strategy:16} {:15} insts {:4} bound {:8.2} | cited {:8.2} | none {:8.2} | all {:8.2} | cited with/without: bind {:8.2} wb {:8.2} delay {:8.2} split {:8.2} slots {:8.2} late {:8.2} imm {:8.2} | uica {:8.2}",
                    m.name,
                    body.insts.len(),
                    b.bound(),
                    sim(SimOptions::CITED),
                    sim(SimOptions::NONE),
                    sim(SimOptions::ALL),
                    with(|o| o.bind_ports_at_allocation = !o.bind_ports_at_allocation),
                    with(|o| o.writeback_conflicts = !o.writeback_conflicts),
                    with(|o| o.issue_dispatch_delay = !o.issue_dispatch_delay),
                    with(|o| o.split_schedulers = !o.split_schedulers),
                    with(|o| o.issue_slot_rule = !o.issue_slot_rule),
                    with(|o| o.late_operand_penalty = !o.late_operand_penalty),
                    with(|o| o.immediate_add_elimination = !o.immediate_add_elimination),
                    with(|o| {
                        o.issue_slot_rule = !o.issue_slot_rule;
                        o.late_operand_penalty = !o.late_operand_penalty;
                    }),
                );
            }
        }
    }
}
