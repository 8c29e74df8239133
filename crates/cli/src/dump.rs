//! `schedlab dump`: prints one pipeline stage of one kernel for one target.

use crate::CliError;
use crate::kernel;
use schedlab_backend::pipeline::{self, PipelineConfig};
use schedlab_passes::rewrite::ConstantPlacement;

/// Arguments of `schedlab dump`.
#[derive(clap::Args, Debug)]
pub struct DumpArgs {
    /// Kernel(s), comma-separated: a registered name (`schedlab list`: md5, md5-mb-x4, sha256,
    /// …), a .clif file, one function of it (`file.clif:%f`) or a directory of them.
    #[arg(long, default_value = "md5")]
    kernel: String,
    /// Scheduling strategy.
    #[arg(long, default_value = pipeline::DEFAULT_STRATEGY)]
    strategy: String,
    /// Target (x86_64, aarch64, s390x, riscv64).
    #[arg(long, default_value = "x86_64")]
    target: String,
    /// Stage: clif (as built), bce, forward, rewrite, sched (what codegen receives), asm (VCode after
    /// register allocation).
    #[arg(long, value_enum, default_value_t = Stage::Sched)]
    stage: Stage,
    #[command(flatten)]
    stages: crate::switch::StageArgs,
    #[command(flatten)]
    code: crate::switch::CodeArgs,
    #[command(flatten)]
    rewrite: crate::switch::RewriteArgs,
    /// Run Cranelift's e-graph optimiser as an explicit stage before scheduling.
    #[arg(long)]
    optimize: bool,
    /// Where reassociation puts a tree's constant: early (off the dependence chain) or late
    /// (last; on x86_64 a three-component `lea` on the chain).
    #[arg(long, value_enum, default_value_t = Constants::Early)]
    constants: Constants,
}

/// `--constants` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Constants {
    /// With the earliest-ready operand.
    Early,
    /// After every other operand.
    Late,
}

/// Pipeline stages `dump` can print.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The kernel as built.
    Clif,
    /// After bounds-check elimination.
    Bce,
    /// After store-to-load forwarding (`--forward-stores`; the BCE text when off).
    Forward,
    /// After the critical-path rewrites.
    Rewrite,
    /// After scheduling.
    Sched,
    /// Machine code (VCode listing after register allocation).
    Asm,
}

/// Runs `schedlab dump`.
pub fn run(args: DumpArgs) -> Result<(), CliError> {
    let strategies = kernel::strategies(Some(&args.strategy))?;
    let targets = kernel::targets(Some(&args.target))?;
    let (Some(strategy), Some(&target)) = (strategies.first(), targets.first()) else {
        return Err(CliError::usage("dump takes one strategy and one target"));
    };
    let config = args.rewrite.apply(PipelineConfig {
        bce: args.stages.bce,
        forward_stores: args.stages.forward_stores.enabled(),
        hoist: args.stages.hoist.enabled(),
        optimize: args.optimize,
        constants: match args.constants {
            Constants::Early => ConstantPlacement::Early,
            Constants::Late => ConstantPlacement::Late,
        },
        ..PipelineConfig::with_strategy(strategy)
    });
    for k in kernel::resolve_list(&args.kernel)? {
        if k.targets(&[target])?.is_empty() {
            continue;
        }
        let options = crate::compile::with_heap_facts(
            &k,
            args.code.slow_path.stage_options_isa(target, args.code.isa),
        );
        let a = crate::compile::compile_kernel(&k, target, &config, &options)
            .map_err(|e| CliError::failure(format!("{}: {e}", k.name)))?;
        let text = match args.stage {
            Stage::Clif => &a.stages.clif,
            Stage::Bce => &a.stages.bce,
            Stage::Forward => &a.stages.forward,
            Stage::Rewrite => &a.stages.rewrite,
            Stage::Sched => &a.stages.sched,
            Stage::Asm => &a.compiled.vcode,
        };
        println!("{}", text.trim_end());
    }
    Ok(())
}
