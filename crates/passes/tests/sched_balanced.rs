//! `balanced` follows the machine model: on an out-of-order core it schedules exactly like
//! `remat-loads`, on an in-order core exactly like `latency-pressure` — and the two differ,
//! so the choice is visible. The kernels are schedlab's MD5 and SHA-256 loops.

use cranelift_codegen::ir::Function;
use schedlab_kernels::{md5, sha256};
use schedlab_passes::sched::{self, MachineModel};

/// A kernel's name and builder.
type KernelBuilder = (&'static str, fn() -> Function);

fn scheduled(
    build: fn() -> cranelift_codegen::ir::Function,
    strategy: &str,
    model: &MachineModel,
) -> String {
    let mut func = build();
    sched::schedule(&mut func, strategy, model)
        .unwrap_or_else(|e| panic!("{strategy} on {}: {e}", model.cpu));
    func.display().to_string()
}

#[test]
fn balanced_is_remat_loads_out_of_order_and_latency_pressure_in_order() {
    let kernels: [KernelBuilder; 2] = [
        ("md5", md5::compress_multi_block),
        ("sha256", sha256::compress_multi_block),
    ];
    for (name, build) in kernels {
        for model in [
            MachineModel::zen3(),
            MachineModel::thunderx2(),
            MachineModel::z13(),
            MachineModel::sifive_u74(),
        ] {
            let balanced = scheduled(build, "balanced", &model);
            let (expected, other) = if model.in_order {
                ("latency-pressure", "remat-loads")
            } else {
                ("remat-loads", "latency-pressure")
            };
            assert!(
                balanced == scheduled(build, expected, &model),
                "{name} on {}: `balanced` differs from `{expected}`",
                model.cpu
            );
            assert!(
                balanced != scheduled(build, other, &model),
                "{name} on {}: `{expected}` and `{other}` give the same order, so this test \
                 cannot tell which one `balanced` chose",
                model.cpu
            );
        }
    }
}

#[test]
fn only_the_sifive_u74_model_is_in_order() {
    let in_order: Vec<&str> = sched::MachineModel::target_names()
        .into_iter()
        .filter_map(MachineModel::for_target)
        .filter(|m| m.in_order)
        .map(|m| m.target)
        .collect();
    assert_eq!(in_order, ["riscv64"]);
}
