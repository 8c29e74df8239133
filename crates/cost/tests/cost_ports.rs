//! The port-group bound (`cost/src/ports.rs`) on the built-in kernels' x86_64 hot loops: it is
//! computed for every x86 core, never exceeds the reported bound, and on SHA-256 — about 670
//! shifts and rotates per block on Intel's two shift ports — it is at least that count / 2.
//! `cargo test --workspace --test cost_ports -- --nocapture` prints every term.
//!
//! The hot loop is disassembled with llvm-objdump (Debian `llvm-14`): without it these tests
//! skip with a message, or fail under `SCHEDLAB_REQUIRE_TOOLS=1` (CI).

use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_backend::tools::test_can_use;
use schedlab_backend::{Compiled, Target};
use schedlab_cost::mca::{hot_loop, llvm_tool};
use schedlab_cost::{LoopCost, loop_cost};

fn objdump_available() -> bool {
    test_can_use(llvm_tool("llvm-objdump"))
}

fn compiled(func: cranelift_codegen::ir::Function, strategy: &str) -> Compiled {
    let target = Target::X86_64;
    let config = PipelineConfig::with_strategy(strategy);
    pipeline::run_with(func, target, &config, &StageOptions::report_lazy(target))
        .unwrap_or_else(|e| panic!("{strategy}: {e}"))
        .compiled
}

fn cost(c: &Compiled) -> LoopCost {
    loop_cost(c).unwrap_or_else(|e| panic!("{e}"))
}

fn print(kernel: &str, strategy: &str, c: &LoopCost) {
    for b in &c.bounds {
        println!(
            "{kernel:8} {strategy:16} {:15} recurrence {:7.2} resource {:7.2} ports {:7.2} on {}",
            b.cpu,
            b.recurrence,
            b.resource,
            b.ports,
            b.port_group.join("+")
        );
    }
}

#[test]
fn every_x86_core_gets_a_port_bound_within_the_reported_bound() {
    if !objdump_available() {
        return;
    }
    let kernels = [
        ("md5", schedlab_kernels::md5::compress_multi_block()),
        ("sha256", schedlab_kernels::sha256::compress_multi_block()),
    ];
    for (name, func) in kernels {
        for strategy in ["source", "balanced"] {
            let c = cost(&compiled(func.clone(), strategy));
            print(name, strategy, &c);
            assert_eq!(c.bounds.len(), 4, "{name} {strategy}");
            for b in &c.bounds {
                assert!(b.ports > 0.0, "{name} {strategy} {b:?}");
                assert!(!b.port_group.is_empty(), "{name} {strategy} {b:?}");
                assert!(b.ports <= b.resource + 1e-9, "{name} {strategy} {b:?}");
                assert!(b.resource <= b.bound() + 1e-9, "{name} {strategy} {b:?}");
            }
        }
    }
}

#[test]
fn sha256_is_held_by_intel_shift_ports_at_least_shifts_over_two() {
    if !objdump_available() {
        return;
    }
    let c = compiled(schedlab_kernels::sha256::compress_multi_block(), "balanced");
    let body = hot_loop(&c).unwrap_or_else(|e| panic!("{e}"));
    let shifts = body
        .insts
        .iter()
        .filter(|i| {
            let m = i.text.split_whitespace().next().unwrap_or("");
            ["ror", "rol", "shr", "shl", "sar"]
                .iter()
                .any(|s| m.starts_with(s))
        })
        .count();
    assert!(
        shifts >= 64 * 6,
        "SHA-256 has 6 rotates per round: {shifts}"
    );
    let cost = cost(&c);
    for cpu in ["skylake", "sapphirerapids"] {
        let b = cost
            .bounds
            .iter()
            .find(|b| b.cpu == cpu)
            .unwrap_or_else(|| panic!("{cpu} modelled"));
        assert!(
            b.ports >= shifts as f64 / 2.0 - 1e-9,
            "{cpu}: {shifts} shifts, {b:?}"
        );
    }
}
