//! A pipeline configuration carrying its strategy and machine model directly: an unregistered
//! strategy runs under its own name, and the model override reaches the scheduler.

use schedlab_backend::Target;
use schedlab_backend::pipeline::{self, PipelineConfig};
use schedlab_passes::sched::{
    self, MachineModel, Pick, ReadySet, Reason, SchedError, SchedView, Strategy, StrategyEntry,
};

/// The first ready node, for a reason of its own.
struct FirstReady;

impl Strategy for FirstReady {
    fn pick(&mut self, ready: &ReadySet, _view: &SchedView<'_>) -> Pick {
        let first = ready.first().expect("the ready set is never empty");
        Pick::new(first, Reason::Custom("first-ready"))
    }
}

const UNREGISTERED: StrategyEntry = StrategyEntry {
    name: "test-unregistered-first-ready",
    summary: "the first ready node",
    make: |_| Box::new(FirstReady),
};

#[test]
fn an_unregistered_strategy_entry_schedules_under_its_name() {
    assert!(
        sched::strategy(UNREGISTERED.name).is_err(),
        "not registered"
    );
    let by_name = PipelineConfig::with_strategy(UNREGISTERED.name);
    let err = pipeline::run(
        schedlab_kernels::md5::compress_multi_block(),
        Target::X86_64,
        &by_name,
    )
    .expect_err("an unknown name fails");
    assert!(
        matches!(
            err,
            pipeline::PipelineError::Schedule(SchedError::UnknownStrategy { .. })
        ),
        "{err}"
    );

    let config = PipelineConfig::with_strategy_entry(UNREGISTERED);
    assert_eq!(config.strategy, UNREGISTERED.name);
    assert_ne!(config, by_name, "the entry is part of the configuration");
    for target in Target::ALL {
        let artifact = pipeline::run(
            schedlab_kernels::md5::compress_multi_block(),
            target,
            &config,
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let stats = &artifact.ir.schedule;
        assert_eq!(stats.strategy, UNREGISTERED.name);
        assert!(
            stats
                .pick_reasons
                .contains_key(&Reason::Custom("first-ready")),
            "{target}: {stats}"
        );
    }
}

#[test]
fn the_machine_model_override_reaches_the_scheduler() {
    let riscv = MachineModel::for_target("riscv64").expect("a riscv64 model");
    let default = PipelineConfig::default();
    let overridden = PipelineConfig::default().using_model(riscv.clone());
    assert_eq!(
        default.model_for(Target::X86_64),
        pipeline::machine_model(Target::X86_64)
    );
    assert_eq!(overridden.model_for(Target::X86_64), riscv);
    let run = |config: &PipelineConfig| {
        pipeline::run(
            schedlab_kernels::md5::compress_multi_block(),
            Target::X86_64,
            config,
        )
        .expect("compiles")
        .ir
        .schedule
    };
    assert_eq!(run(&default).target, "x86_64");
    assert_eq!(run(&overridden).target, "riscv64");
}
