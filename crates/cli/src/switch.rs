//! The command-line switches that `report`, `check` and `dump` share: which strategies on
//! which targets, `on`/`off`
//! for a stage (`--forward-stores on|off`, `--hoist on|off`), the bounds-check level, and how the code is
//! generated (`--slow-path`, `--isa`), and the rewrites' (`--no-rewrites`, `--keep-conditions`).

use crate::kernel::{IsaMode, SlowPathMode};
use schedlab_backend::pipeline::{DEFAULT_FORWARD_STORES, DEFAULT_HOIST, PipelineConfig};
use schedlab_passes::bce::{BceError, BceLevel};

/// Which strategies on which targets.
#[derive(clap::Args, Debug)]
pub struct SelectionArgs {
    /// Scheduling strategies, comma-separated, or `all`.
    #[arg(long)]
    pub strategy: Option<String>,
    /// Targets, comma-separated (x86_64, aarch64, s390x, riscv64), or `all`.
    #[arg(long)]
    pub target: Option<String>,
}

/// The IR stages' switches.
#[derive(clap::Args, Debug)]
pub struct StageArgs {
    /// Bounds-check elimination: off, merge (one check per block) or predicate (none in the
    /// hot loop, with a checked fallback loop).
    #[arg(long, default_value = "predicate", value_parser = parse_bce)]
    pub bce: BceLevel,
    /// Store-to-load forwarding and dead scratch-store elimination after bounds-check
    /// elimination (keeps SHA-256's `W` in SSA values): on or off.
    #[arg(long, value_enum, default_value_t = Switch::default_forward_stores())]
    pub forward_stores: Switch,
    /// Loop-invariant loads hoisted, identical values shared, boolean tests simplified and
    /// unsigned division by constants multiplied after forwarding (what Cranelift's e-graph
    /// does to loops, without it): on or off.
    #[arg(long, value_enum, default_value_t = Switch::default_hoist())]
    pub hoist: Switch,
}

/// The critical-path rewrites' switches.
#[derive(clap::Args, Debug)]
pub struct RewriteArgs {
    /// Skip the critical-path rewrites (masked merge, reassociation).
    #[arg(long)]
    pub no_rewrites: bool,
    /// Leave the preheader's conjunction of range tests as built by the rewrites (the `Md5`
    /// library's lane kernels: `lane_config`).
    #[arg(long)]
    pub keep_conditions: bool,
}

impl RewriteArgs {
    /// `config` with these switches.
    pub fn apply(&self, config: PipelineConfig) -> PipelineConfig {
        PipelineConfig {
            rewrites: !self.no_rewrites,
            keep_conditions: self.keep_conditions,
            ..config
        }
    }
}

/// How the machine code is generated.
#[derive(clap::Args, Debug)]
pub struct CodeArgs {
    /// The checked slow path of predicated loops: `eager` compiles it in the same function,
    /// `lazy` outlines it to a call as the `Md5` library's JIT does (the call's address is a
    /// placeholder: the code is for measuring, not running).
    #[arg(long, value_enum, default_value_t = SlowPathMode::Eager)]
    pub slow_path: SlowPathMode,
    /// CPU features of the compiled code: `level` (x86_64: `x86-64-v3`, the same rows on every
    /// machine) or `native` (the host's detected features, as the `Md5` library's JIT uses).
    #[arg(long, value_enum, default_value_t = IsaMode::Level)]
    pub isa: IsaMode,
}

fn parse_bce(s: &str) -> Result<BceLevel, String> {
    s.parse().map_err(|e: BceError| e.to_string())
}

/// A pipeline stage turned on or off.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// Run the stage.
    On,
    /// Skip the stage.
    Off,
}

impl Switch {
    /// Whether the stage runs.
    pub fn enabled(self) -> bool {
        self == Switch::On
    }

    /// The pipeline's default for store-to-load forwarding.
    pub fn default_forward_stores() -> Self {
        if DEFAULT_FORWARD_STORES {
            Switch::On
        } else {
            Switch::Off
        }
    }

    /// The pipeline's default for hoisting loop-invariant loads.
    pub fn default_hoist() -> Self {
        if DEFAULT_HOIST {
            Switch::On
        } else {
            Switch::Off
        }
    }
}
