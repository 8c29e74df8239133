//! `compile_kernel_configs_timed` runs the stages before the schedule once and compiles each
//! distinct scheduled function once; every configuration must still get what compiling it
//! alone gives: the same scheduled IR, statistics, machine code and code figures.

use schedlab_backend::Target;
use schedlab_backend::pipeline::{PipelineConfig, StageOptions};
use schedlab_sources::compile::{compile_kernel_configs_timed, compile_kernel_timed};
use schedlab_sources::kernel::{resolve_list, strategies};

/// Built-in kernels with loops and checks, a `.clif` file with calls and a `.wasm` module's
/// functions in explicit-check mode, where most strategies agree on small functions.
const KERNELS: &str = "int-sum,muladd,md5,../cli/tests/clif/call_chain.clif,\
                       ../wasm/tests/fixtures/small.wasm:explicit";

#[test]
fn each_configuration_gets_what_compiling_it_alone_gives() {
    let kernels = resolve_list(KERNELS).unwrap_or_else(|e| panic!("{}", e.message));
    let names: Vec<String> = strategies(None)
        .expect("every strategy")
        .into_iter()
        .filter(|s| s != "optimal")
        .collect();
    let configs: Vec<PipelineConfig> = [false, true]
        .into_iter()
        .flat_map(|optimize| {
            names.iter().map(move |s| PipelineConfig {
                optimize,
                ..PipelineConfig::with_strategy(s)
            })
        })
        .collect();
    let options = StageOptions::REPORT;
    let mut shared = 0;
    for k in &kernels {
        for target in k.targets(&[Target::X86_64, Target::Aarch64]).unwrap() {
            let runs = compile_kernel_configs_timed(k, target, &configs, &options);
            assert_eq!(runs.len(), configs.len());
            for (config, run) in configs.iter().zip(&runs) {
                let what = format!("{} / {} / {target}", k.name, config.strategy);
                let run = run.as_ref().unwrap_or_else(|e| panic!("{what}: {e}"));
                let (alone, _) = compile_kernel_timed(k, target, config, &options)
                    .unwrap_or_else(|e| panic!("{what} alone: {e}"));
                let got = &run.artifact;
                assert_eq!(got.stages.sched, alone.stages.sched, "{what}: scheduled IR");
                assert_eq!(
                    got.stages.rewrite, alone.stages.rewrite,
                    "{what}: IR before"
                );
                assert_eq!(
                    got.compiled.code, alone.compiled.code,
                    "{what}: machine code"
                );
                assert_eq!(got.compiled.vcode, alone.compiled.vcode, "{what}: VCode");
                assert_eq!(got.code, alone.code, "{what}: code figures");
                assert_eq!(
                    format!("{:?}", got.ir.schedule),
                    format!("{:?}", alone.ir.schedule),
                    "{what}: schedule statistics"
                );
                assert_eq!(
                    format!("{:?}", got.ir.bce),
                    format!("{:?}", alone.ir.bce),
                    "{what}: BCE statistics"
                );
                if let Some(earlier) = run.same_code_as {
                    shared += 1;
                    let earlier = runs[earlier].as_ref().expect("a compiled run");
                    assert!(earlier.same_code_as.is_none(), "{what}: points at a copy");
                    assert_eq!(earlier.artifact.stages.sched, got.stages.sched, "{what}");
                }
            }
        }
    }
    assert!(shared > 0, "no configuration took an earlier one's code");
}
