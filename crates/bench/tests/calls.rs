//! The executor's timing of any function: calls judged first, then timed per configuration.

use cranelift_codegen::data_value::DataValue;
use schedlab_backend::Target;
use schedlab_backend::exec::{Call, Outcome, Unit};
use schedlab_backend::target::OptLevel;
use schedlab_bench::calls::{CallBudgets, Config, Probe, measure};
use std::time::Duration;

/// `fn(n) -> n`: a loop of `n` dependent adds, returning the count.
const COUNTING_LOOP: &str = "
function %counting_loop(i64) -> i64 system_v {
block0(v0: i64):
    v1 = iconst.i64 0
    jump block1(v1, v0)

block1(v2: i64, v3: i64):
    v4 = iconst.i64 0
    v5 = icmp eq v3, v4
    v6 = iconst.i64 1
    v7 = iadd v2, v6
    v8 = iconst.i64 -1
    v9 = iadd v3, v8
    brif v5, block2(v2), block1(v7, v9)

block2(v10: i64):
    return v10
}";

#[test]
fn times_a_loop_and_scales_with_its_trip_count() {
    let target = Target::host().expect("the host is a schedlab target");
    let unit = Unit {
        label: "loop".into(),
        functions: cranelift_reader::parse_functions(COUNTING_LOOP).expect("parses"),
    };
    let config = |name: &str, opt| Config {
        name: name.into(),
        isa: target.isa(opt).expect("host ISA"),
        unit: unit.clone(),
    };
    let configs = [
        config("none", OptLevel::None),
        config("speed", OptLevel::Speed),
    ];
    let probe = |n: i64| Probe {
        label: format!("n={n}"),
        call: Call::scalars(0, 0, &[DataValue::I64(n)]),
    };
    let probes = [probe(1_000), probe(100_000)];
    let want = [1_000i64, 100_000];
    let judge = |p: usize, o: &Outcome| match o {
        Outcome::Returned(e) if e.returns == [DataValue::I64(want[p])] => None,
        other => Some(format!("{other}")),
    };
    let budgets = CallBudgets {
        reps: 3,
        sample: Duration::from_millis(5),
    };
    let times = measure(target, &configs, &probes, &judge, budgets, || {}).expect("runs");
    for c in 0..configs.len() {
        assert_eq!(times.errors[c], [None, None], "config {c}");
        let short = times.samples.median(c, 0).expect("timed");
        let long = times.samples.median(c, 1).expect("timed");
        // 100× the iterations: far more than 10× the time on any machine (the loop is a
        // dependent chain; the call's overhead is a few nanoseconds).
        assert!(long > 10.0 * short, "config {c}: {long} vs {short}");
    }
    let wrong = |_: usize, _: &Outcome| Some("always wrong".to_string());
    let judged =
        measure(target, &configs[..1], &probes[..1], &wrong, budgets, || {}).expect("runs");
    assert_eq!(judged.errors[0][0].as_deref(), Some("always wrong"));
    assert!(judged.samples.median(0, 0).is_none());
}
