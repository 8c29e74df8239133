//! The schedule simulation (`cost/src/sim.rs`) on the code `bench --validate-model` times: MD5 as
//! the report compiles it, SHA-256 and the BigInteger kernels as the bench JIT-compiles them
//! (host features), every strategy, beside schedlab's bound. Prints only (the measured side is
//! `notes/validation.md`); `cargo test --workspace --test experiments sim_kernels:: -- --ignored
//! --nocapture`. `SIM_AGAINST=$PWD/notes/validation-znver4.md` (any host kind's table) scores
//! every column against that table's measured cycles, so a model change can be judged against
//! the last measurement of a core this machine is not (the code must be the same: the
//! kernels are compiled with this host's features). Needs llvm-objdump (Debian `llvm-14`):
//! skips with a message without it, fails under `SCHEDLAB_REQUIRE_TOOLS=1`.

use schedlab_backend::Target;
use schedlab_backend::jit::{JitFunction, JitOptions};
use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions, run_ir_stages_with};
use schedlab_backend::tools::test_can_use;
use schedlab_cost::mca::{HotLoop, hot_loop, llvm_tool};
use schedlab_cost::models::core_models;
use schedlab_cost::sim::SimOptions;
use schedlab_cost::{bound_of, simulated_with};
use std::collections::{BTreeMap, HashMap};

/// Measured cycles per (kernel, strategy) from the first table of a `notes/validation*.md`
/// file (the one with a `measured` column).
fn measured_rows(text: &str) -> HashMap<(String, String), f64> {
    let mut rows = HashMap::new();
    let mut measured_column = None;
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if !line.starts_with('|') {
            if measured_column.is_some() && !rows.is_empty() {
                break;
            }
            continue;
        }
        if let Some(k) = cells.iter().position(|c| *c == "measured") {
            measured_column = Some(k);
            continue;
        }
        let Some(k) = measured_column else { continue };
        if let (Some(kernel), Some(strategy), Some(Ok(value))) = (
            cells.get(1),
            cells.get(2),
            cells.get(k).map(|c| c.parse::<f64>()),
        ) {
            rows.insert((kernel.to_string(), strategy.to_string()), value);
        }
    }
    rows
}

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
    // Measured cycles per (kernel, strategy) from a validation table, to score each column.
    let against = std::env::var("SIM_AGAINST")
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            measured_rows(&text)
        })
        .unwrap_or_default();
    let mut scores: BTreeMap<(&str, &str), Vec<(String, f64)>> = BTreeMap::new();
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
                    let mut o = SimOptions::cited(m.name);
                    f(&mut o);
                    sim(o)
                };
                // The cited options with the one named rule switched.
                macro_rules! flipped {
                    ($rule:ident) => {
                        with(|o| o.$rule = !o.$rule)
                    };
                }
                let columns: [(&str, f64); 15] = [
                    ("cited", sim(SimOptions::cited(m.name))),
                    ("none", sim(SimOptions::NONE)),
                    ("all", sim(SimOptions::ALL)),
                    ("bind", flipped!(bind_ports_at_allocation)),
                    ("wb", flipped!(writeback_conflicts)),
                    ("delay", flipped!(issue_dispatch_delay)),
                    ("split", flipped!(split_schedulers)),
                    ("slots", flipped!(issue_slot_rule)),
                    ("late", flipped!(late_operand_penalty)),
                    ("imm", flipped!(immediate_add_elimination)),
                    ("group", flipped!(whole_group_allocation)),
                    ("pair", flipped!(paired_stores)),
                    ("regs", flipped!(register_file)),
                    (
                        "uica",
                        with(|o| {
                            o.issue_slot_rule = true;
                            o.late_operand_penalty = true;
                            o.whole_group_allocation = true;
                        }),
                    ),
                    ("bound", b.bound()),
                ];
                let text: Vec<String> = columns
                    .iter()
                    .map(|(label, value)| format!("{label} {value:8.2}"))
                    .collect();
                println!(
                    "{kernel:13} {strategy:16} {:15} insts {:4} | {}",
                    m.name,
                    body.insts.len(),
                    text.join(" | ")
                );
                if let Some(measured) = against.get(&(kernel.to_string(), strategy.to_string())) {
                    for (label, value) in columns {
                        scores
                            .entry((m.name, label))
                            .or_default()
                            .push((format!("{kernel}/{strategy}"), value / measured - 1.0));
                    }
                }
            }
        }
    }
    for ((cpu, label), rows) in &scores {
        let within = rows.iter().filter(|(_, e)| e.abs() <= 0.05).count();
        let mean = rows.iter().map(|(_, e)| e.abs()).sum::<f64>() / rows.len() as f64;
        let misses: Vec<String> = rows
            .iter()
            .filter(|(_, e)| e.abs() > 0.05)
            .map(|(row, e)| format!("{row} {:+.1} %", 100.0 * e))
            .collect();
        println!(
            "against measured: {cpu:15} {label:6} {within:2} of {} within ±5 %, mean |error| {:.2} %{}{}",
            rows.len(),
            100.0 * mean,
            if misses.is_empty() { "" } else { "; misses: " },
            misses.join(", ")
        );
    }
}

/// Golden Cove's renamer and the BigInteger loop's pointer chain, on this host (an experiment:
/// prints, asserts nothing timed; notes/design.md, Findings, Golden Cove [GLC-ADD]). Five
/// dependent adds per iteration as `addq $1` (eliminated at rename), `addl $1` and `addq
/// %reg` (executed); then `mulAdd`'s loop as the JIT emits it (`addq $-4, %r8`) and with the
/// pointer step as `subq %r12, %r8` (same uops, executed), beside the simulation of both.
/// Cycles against `asm_clock`'s probe timed in the same run; the fastest of 15 rounds.
#[test]
#[ignore = "an experiment: times hand-written loops and prints"]
#[cfg(target_arch = "x86_64")]
fn immediate_adds_at_rename_on_the_host() {
    use schedlab_cost::mca::HotLoop;
    use schedlab_cost::models::core_model;
    use std::arch::asm;
    use std::time::Instant;

    const STEPS: u64 = 10_000_000;
    const WORDS: usize = 1024;
    const PASSES: usize = 200;
    fn chain(kind: usize) -> f64 {
        let start = Instant::now();
        let (mut x, mut n) = (0u64, STEPS);
        // SAFETY: register-only loops; `n` counts down to zero.
        unsafe {
            match kind {
                0 => asm!("2:", "addq $1, {x}", "addq $1, {x}", "addq $1, {x}", "addq $1, {x}",
                    "addq $1, {x}", "decq {n}", "jnz 2b", x = inout(reg) x, n = inout(reg) n,
                    options(att_syntax, nomem, nostack)),
                1 => asm!("2:", "addl $1, {x:e}", "addl $1, {x:e}", "addl $1, {x:e}",
                    "addl $1, {x:e}", "addl $1, {x:e}", "decq {n}", "jnz 2b", x = inout(reg) x,
                    n = inout(reg) n, options(att_syntax, nomem, nostack)),
                _ => asm!("2:", "addq {one}, {x}", "addq {one}, {x}", "addq {one}, {x}",
                    "addq {one}, {x}", "addq {one}, {x}", "decq {n}", "jnz 2b",
                    x = inout(reg) x, n = inout(reg) n, one = in(reg) 1u64,
                    options(att_syntax, nomem, nostack)),
            }
        }
        std::hint::black_box((x, n));
        start.elapsed().as_secs_f64() / STEPS as f64
    }
    fn mul_add(input: &[u32], out: &mut [u32], executed_step: bool) -> f64 {
        let start = Instant::now();
        for _ in 0..PASSES {
            let last = (WORDS - 1) as u64;
            // The JIT's loop with the pointer step `$step` (and its `$operand`s).
            macro_rules! jit_loop {
                ($step:literal $(; $($operand:tt)+)?) => {
                    asm!("2:", "movl (%r8), %r10d", "imulq %rax, %r10",
                        "movl (%rdi,%rdx,4), %r11d", "addq %r11, %r10", "addq %r10, %rcx",
                        "movl %ecx, (%rdi,%rdx,4)", "addl $-1, %esi", "shrq $32, %rcx",
                        $step, "movslq %esi, %rdx", "movq %r8, %r10",
                        "subq %r9, %r10", "testq %r10, %r10", "jge 2b",
                        inout("r8") input.as_ptr().add(WORDS - 1) => _, in("r9") input.as_ptr(),
                        $($($operand)+)?
                        inout("rdx") last => _, inout("rsi") last => _,
                        inout("rcx") 0u64 => _, in("rax") 0x9e37_79b9u64,
                        in("rdi") out.as_mut_ptr(), out("r10") _, out("r11") _,
                        options(att_syntax, nostack))
                };
            }
            // SAFETY: reads input[0..WORDS] and writes out[0..WORDS] (both WORDS long), from
            // the last word down, as the JIT's loop does.
            unsafe {
                if executed_step {
                    jit_loop!("subq %r12, %r8"; in("r12") 4u64,);
                } else {
                    jit_loop!("addq $-4, %r8");
                }
            }
        }
        start.elapsed().as_secs_f64() / (PASSES * WORDS) as f64
    }
    let input: Vec<u32> = (0..WORDS as u32)
        .map(|i| i.wrapping_mul(0x9e37_79b9) | 1)
        .collect();
    let mut out = vec![0u32; WORDS];
    let mut best = [f64::INFINITY; 5];
    for _ in 0..15 {
        let cycle = crate::asm_clock::cycle_time();
        let figures = [
            chain(0) / cycle,
            chain(1) / cycle,
            chain(2) / cycle,
            mul_add(&input, &mut out, false) / cycle,
            mul_add(&input, &mut out, true) / cycle,
        ];
        for (b, f) in best.iter_mut().zip(figures) {
            *b = b.min(f);
        }
    }
    println!(
        "cycles per iteration, 5 dependent adds: addq $1 {:.2}, addl $1 {:.2}, addq %reg {:.2}",
        best[0], best[1], best[2]
    );
    let shape = |step: &str| -> HotLoop {
        let lines = [
            "movl (%r8), %r10d",
            "imulq %rax, %r10",
            "movl (%rdi,%rdx,4), %r11d",
            "addq %r11, %r10",
            "addq %r10, %rcx",
            "movl %ecx, (%rdi,%rdx,4)",
            "addl $4294967295, %esi",
            "shrq $32, %rcx",
            step,
            "movslq %esi, %rdx",
            "movq %r8, %r10",
            "subq %r9, %r10",
            "testq %r10, %r10",
            "jge 0x0",
        ];
        HotLoop::from_lines(&lines)
    };
    let m = core_model(Target::X86_64, "sapphirerapids").expect("model");
    for (name, step, measured) in [
        ("addq $-4, %r8", "addq $-4, %r8", best[3]),
        ("subq %r12, %r8", "subq %r12, %r8", best[4]),
    ] {
        let body = shape(step);
        let sim = |o: SimOptions| simulated_with(Target::X86_64, &body, m, o).unwrap_or(f64::NAN);
        println!(
            "mulAdd loop with {name:15}: measured {measured:.3} cycles/word | simulated: cited {:.3}, all {:.3}, free ports {:.3}",
            sim(SimOptions::CITED),
            sim(SimOptions::ALL),
            sim(SimOptions {
                bind_ports_at_allocation: false,
                ..SimOptions::CITED
            }),
        );
    }
}

/// The simulated schedule beside the bound, per kernel and strategy, as the report compiles
/// the kernels for x86_64 (prints; `cargo test --workspace --test experiments
/// sim_kernels::simulated_schedule_beside_the_bound -- --ignored --nocapture`).
#[test]
#[ignore = "an experiment: prints the simulated schedule beside the bound"]
fn simulated_schedule_beside_the_bound() {
    use schedlab_cost::simulated;
    if !test_can_use(llvm_tool("llvm-objdump")) {
        return;
    }
    let compiled = |func: cranelift_codegen::ir::Function, strategy: &str| {
        let target = Target::X86_64;
        let config = PipelineConfig::with_strategy(strategy);
        pipeline::run_with(func, target, &config, &StageOptions::report_lazy(target))
            .unwrap_or_else(|e| panic!("{strategy}: {e}"))
            .compiled
    };
    let kernels = [
        ("md5", schedlab_kernels::md5::compress_multi_block()),
        ("sha256", schedlab_kernels::sha256::compress_multi_block()),
        ("muladd", schedlab_kernels::bigint::mul_add()),
        ("sq2len", schedlab_kernels::bigint::square_to_len()),
    ];
    for (name, func) in kernels {
        for strategy in ["source", "list-latency", "latency-pressure", "balanced"] {
            let c = compiled(func.clone(), strategy);
            let body = hot_loop(&c).unwrap_or_else(|e| panic!("{e}"));
            for m in core_models(Target::X86_64) {
                let b = bound_of(Target::X86_64, &body, m).unwrap_or_else(|e| panic!("{e}"));
                println!(
                    "{name:8} {strategy:16} {:15} bound {:7.1} simulated {:?}",
                    m.name,
                    b.bound(),
                    simulated(Target::X86_64, &body, m)
                );
            }
        }
    }
}
