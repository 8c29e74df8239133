//! Strategies registered at run time: refused names, lookup by name, and a strategy's own
//! pick reason in the statistics.

use schedlab_passes::sched::{
    self, MachineModel, Pick, ReadySet, Reason, SchedError, SchedView, ScheduleOptions, Strategy,
    StrategyEntry,
};

/// The last ready node in source order, for a reason of its own.
struct LastReady;

const LAST_READY: Reason = Reason::Custom("last-ready");

impl Strategy for LastReady {
    fn pick(&mut self, ready: &ReadySet, _view: &SchedView<'_>) -> Pick {
        let last = *ready.nodes().last().expect("the ready set is never empty");
        Pick::new(last, LAST_READY)
    }
}

fn entry(name: &'static str) -> StrategyEntry {
    StrategyEntry {
        name,
        summary: "the last ready node first",
        make: |_| Box::new(LastReady),
    }
}

#[test]
fn a_registered_strategy_is_listed_and_scheduled_by_name() {
    let name = "test-last-ready";
    assert!(matches!(
        sched::strategy(name),
        Err(SchedError::UnknownStrategy { .. })
    ));
    sched::register(entry(name)).expect("a new name registers");
    let names = sched::strategy_names();
    let builtins: Vec<&str> = sched::STRATEGIES.iter().map(|e| e.name).collect();
    assert_eq!(
        names[..builtins.len()],
        builtins[..],
        "the built-ins come first"
    );
    assert!(names[builtins.len()..].contains(&name), "{names:?}");
    assert_eq!(sched::strategy(name).map(|e| e.name).ok(), Some(name));

    let mut func = schedlab_kernels::md5::compress_multi_block();
    let opts = ScheduleOptions {
        verify: true,
        ..ScheduleOptions::default()
    };
    let stats = sched::schedule_with_options(&mut func, name, &MachineModel::zen3(), &opts)
        .expect("schedules legally");
    assert_eq!(stats.strategy, name);
    assert!(stats.pick_reasons.get(&LAST_READY).is_some_and(|&n| n > 0));
    assert!(stats.to_string().contains(" last-ready="), "{stats}");
}

#[test]
fn taken_and_malformed_names_are_refused() {
    for taken in ["source", "remat-loads"] {
        let err = sched::register(entry(taken)).expect_err("a built-in name is taken");
        assert!(matches!(&err, SchedError::DuplicateStrategy { name } if name == taken));
        assert!(err.to_string().contains("already registered"), "{err}");
    }
    sched::register(entry("test-twice")).expect("first time");
    assert!(matches!(
        sched::register(entry("test-twice")),
        Err(SchedError::DuplicateStrategy { .. })
    ));
    for bad in ["", "a,b", "a b", "all"] {
        let err = sched::register(entry(bad)).expect_err("refused");
        assert!(
            matches!(err, SchedError::InvalidStrategyName { .. }),
            "{bad:?}: {err}"
        );
    }
    assert_eq!(
        sched::strategy_names()
            .iter()
            .filter(|n| **n == "test-twice")
            .count(),
        1
    );
}

#[test]
fn entries_compare_by_name_and_factory() {
    let a = entry("test-eq");
    assert_eq!(a, entry("test-eq"));
    assert_ne!(a, entry("test-other"));
    let source = sched::strategy("source").expect("built-in");
    assert_ne!(
        a,
        StrategyEntry {
            make: source.make,
            ..a
        }
    );
    assert_eq!(Reason::Custom("x").name(), "x");
    assert_eq!(Reason::Custom("x").to_string(), "x");
}
