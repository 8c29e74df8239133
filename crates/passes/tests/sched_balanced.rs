//! `balanced` follows the machine model and the block: on an out-of-order core it schedules a
//! block exactly like `remat-loads` with early induction steps
//! (`RematLoads::with_early_updates`) while that order's working set fits the register budget
//! and exactly like `latency-pressure` when it does not (spills unavoidable); on an in-order
//! core always like `latency-pressure`. The kernels are schedlab's MD5 and SHA-256 loops as
//! built (before bounds-check elimination and strength reduction, so their working sets are
//! larger than the pipeline's: the rule is tested with budgets around them;
//! `crates/backend/tests/balanced_choice.rs` checks the pipeline's hot loops on the real
//! models).

use cranelift_codegen::ir::{Block, Function};
use schedlab_kernels::{md5, sha256};
use schedlab_passes::sched::strategies::balanced::{BalancedChoice, block_choices};
use schedlab_passes::sched::strategies::remat_loads::RematLoads;
use schedlab_passes::sched::{self, MachineModel, ScheduleOptions};

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

/// `balanced`'s order for blocks that fit: `remat-loads` with early induction steps.
fn remat_early(build: fn() -> Function, model: &MachineModel) -> Function {
    let mut func = build();
    sched::schedule_with_strategy(
        &mut func,
        "remat-loads",
        &mut RematLoads::with_early_updates(),
        model,
        &ScheduleOptions::default(),
    )
    .unwrap_or_else(|e| panic!("remat-loads (early steps) on {}: {e}", model.cpu));
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
            let remat = remat_early(build, &model);
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
                let remat = block_text(&remat_early(build, &model), block);
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

/// The early-step rule on a counted loop: the counter step goes first (its parameter has no
/// other use), the pointer step right after the load that last reads the old pointer; plain
/// `remat-loads` leaves both in source order after the sum.
#[test]
fn induction_steps_go_as_early_as_they_cost_no_register() {
    let clif = "function %steps(i64, i32) -> i64 system_v {
    block0(v0: i64, v1: i32):
        v2 = iconst.i64 0
        jump block1(v0, v1, v2)
    block1(v4: i64, v5: i32, v6: i64):
        v7 = uload32 notrap v4
        v8 = iadd v6, v7
        v9 = iconst.i64 -4
        v10 = iadd v4, v9
        v11 = iconst.i32 -1
        v12 = iadd v5, v11
        brif v12, block1(v10, v12, v8), block2(v8)
    block2(v13: i64):
        return v13
    }";
    let func = cranelift_reader::parse_functions(clif).expect("valid CLIF")[0].clone();
    let order = |strategy: &mut RematLoads| -> Vec<String> {
        let mut f = func.clone();
        sched::schedule_with_strategy(
            &mut f,
            "remat-loads",
            strategy,
            &MachineModel::zen3(),
            &ScheduleOptions::default(),
        )
        .expect("schedules");
        let block = f.layout.blocks().nth(1).expect("the loop block");
        f.layout
            .block_insts(block)
            .map(|i| f.dfg.display_inst(i).to_string())
            .filter(|t| !t.contains("iconst"))
            .map(|t| t.split(' ').next().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(
        order(&mut RematLoads::with_early_updates()),
        ["v12", "v7", "v10", "v8", "brif.i32"]
    );
    assert_eq!(
        order(&mut RematLoads::default()),
        ["v7", "v8", "v10", "v12", "brif.i32"]
    );
}
