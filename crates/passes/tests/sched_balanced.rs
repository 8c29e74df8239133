//! `balanced` follows the machine model and the block: on an out-of-order core it schedules a
//! block exactly like `remat-loads` while that order's working set fits the register budget
//! and exactly like `latency-pressure` when it does not (spills unavoidable); on an in-order
//! core always like `latency-pressure`. The kernels are schedlab's MD5 and SHA-256 loops as
//! built (before bounds-check elimination and strength reduction, so their working sets are
//! larger than the pipeline's: the rule is tested with budgets around them;
//! `crates/backend/tests/balanced_choice.rs` checks the pipeline's hot loops on the real
//! models).

use cranelift_codegen::ir::{Block, Function};
use schedlab_kernels::{md5, sha256};
use schedlab_passes::sched::strategies::balanced::{BalancedChoice, block_choices};
use schedlab_passes::sched::{self, MachineModel};

/// A kernel's name and builder.
type KernelBuilder = (&'static str, fn() -> Function);

const KERNELS: [KernelBuilder; 2] = [
    ("md5", md5::compress_multi_block),
    ("sha256", sha256::compress_multi_block),
];

fn models() -> [MachineModel; 4] {
    [
        MachineModel::zen3(),
        MachineModel::thunderx2(),
        MachineModel::z13(),
        MachineModel::sifive_u74(),
    ]
}

fn scheduled(build: fn() -> Function, strategy: &str, model: &MachineModel) -> Function {
    let mut func = build();
    sched::schedule(&mut func, strategy, model)
        .unwrap_or_else(|e| panic!("{strategy} on {}: {e}", model.cpu));
    func
}

/// The block's instructions as text (all three strategies rematerialise the same loads, so
/// the same instructions carry the same value numbers).
fn block_text(func: &Function, block: Block) -> Vec<String> {
    func.layout
        .block_insts(block)
        .map(|inst| func.dfg.display_inst(inst).to_string())
        .collect()
}

fn choices(
    name: &str,
    build: fn() -> Function,
    model: &MachineModel,
) -> Vec<(Block, BalancedChoice)> {
    block_choices(&build(), model).unwrap_or_else(|e| panic!("{name} on {}: {e}", model.cpu))
}

/// The block with the largest working set (the hot loop) and that working set.
fn hottest(choices: &[(Block, BalancedChoice)]) -> (Block, usize) {
    choices
        .iter()
        .filter_map(|&(block, choice)| match choice {
            BalancedChoice::Fits { working_set }
            | BalancedChoice::SpillsUnavoidable { working_set } => Some((block, working_set)),
            BalancedChoice::InOrder => None,
        })
        .max_by_key(|&(_, w)| w)
        .expect("an out-of-order model decides by working set")
}

#[test]
fn every_block_follows_its_choice() {
    for (name, build) in KERNELS {
        for model in models() {
            let balanced = scheduled(build, "balanced", &model);
            let remat = scheduled(build, "remat-loads", &model);
            let latency = scheduled(build, "latency-pressure", &model);
            for (block, choice) in choices(name, build, &model) {
                let (expected, strategy) = if choice.uses_latency_pressure() {
                    (&latency, "latency-pressure")
                } else {
                    (&remat, "remat-loads")
                };
                assert!(
                    block_text(&balanced, block) == block_text(expected, block),
                    "{name} on {}: {block} ({choice:?}) differs from `{strategy}`",
                    model.cpu
                );
            }
        }
    }
}

#[test]
fn every_block_on_the_in_order_model_takes_latency_pressure() {
    for (name, build) in KERNELS {
        let model = MachineModel::sifive_u74();
        assert!(
            choices(name, build, &model)
                .iter()
                .all(|&(_, c)| c == BalancedChoice::InOrder),
            "{name}: a block on the in-order model did not take latency-pressure"
        );
    }
}

/// The rule itself, independent of the kernel: the same hot block flips from `remat-loads`'
/// order to `latency-pressure`'s when the budget drops one register below its working set.
#[test]
fn a_block_over_budget_takes_latency_pressure_and_one_within_takes_remat_loads() {
    for (name, build) in KERNELS {
        for base in [MachineModel::zen3(), MachineModel::thunderx2()] {
            let (block, working_set) = hottest(&choices(name, build, &base));
            for (budget, over) in [(working_set, false), (working_set - 1, true)] {
                let model = MachineModel {
                    allocatable_gprs: budget,
                    ..base.clone()
                };
                let choice = choices(name, build, &model)
                    .into_iter()
                    .find(|&(b, _)| b == block)
                    .map(|(_, c)| c)
                    .expect("the hot block is scheduled");
                assert_eq!(
                    choice.uses_latency_pressure(),
                    over,
                    "{name} on {} with {budget} registers: {choice:?}",
                    base.cpu
                );
                let balanced = block_text(&scheduled(build, "balanced", &model), block);
                let remat = block_text(&scheduled(build, "remat-loads", &model), block);
                let latency = block_text(&scheduled(build, "latency-pressure", &model), block);
                assert!(
                    remat != latency,
                    "{name} on {}: the two orders agree in {block}, so this test cannot tell \
                     which one `balanced` chose",
                    base.cpu
                );
                let (expected, strategy) = if over {
                    (latency, "latency-pressure")
                } else {
                    (remat, "remat-loads")
                };
                assert!(
                    balanced == expected,
                    "{name} on {} with {budget} registers: {block} is not `{strategy}`'s order",
                    base.cpu
                );
            }
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
