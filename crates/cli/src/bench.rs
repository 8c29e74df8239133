//! `schedlab bench`: its arguments, translated into [`schedlab_bench::command::BenchArgs`]; the
//! measuring and the rendering of its results live in `crates/bench`.

use crate::CliError;
use schedlab_bench::command;
use std::path::PathBuf;

/// Arguments of `schedlab bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// The kernel to time: a dedicated bench (md5, md5-mb, md5-streams, sha256, muladd,
    /// square-to-len), or any other kernel list `report` takes (built-in or registered names,
    /// `.clif` files or directories, `file.clif:function`), timed on its own cases per
    /// `--strategy` with stock Cranelift beside.
    #[arg(long, default_value = "md5", value_parser = command::parse_bench_kernel, value_name = "KERNEL")]
    kernel: command::KernelChoice,
    /// Sizes, comma-separated. md5: message bytes with an optional k (KiB) or m (MiB) suffix
    /// [default: 64,1k,16k,1m]; square-to-len, muladd: `seed` (the JDK review's 1075-bit
    /// operand) or operand bits, a multiple of 32 [default: seed,256,1024,2048,4096,8192].
    #[arg(long, value_name = "SIZES")]
    size: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = command::Format::Table)]
    format: command::Format,
    /// Also draw MB/s per implementation and size into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Repetitions; medians are over repetitions [default: 7, or 2 with --quick].
    #[arg(long, value_name = "N")]
    reps: Option<u32>,
    /// Skip the HotSpot rows (they take a JVM start-up and warm-up per repetition).
    #[arg(long)]
    no_java: bool,
    /// Short budgets and few repetitions: checks the machinery, not for numbers.
    #[arg(long)]
    quick: bool,
    /// Only these rows (comma-separated names; OpenSSL is always timed as the reference).
    #[arg(long = "impl", value_name = "NAMES")]
    impls: Option<String>,
    /// md5: also time `schedlab/<NAME>` for each of these scheduling strategies (comma-separated;
    /// registered ones included): the `Md5` library's default configuration scheduled with it.
    /// Kept beside the rows `--impl` selects.
    #[arg(long, value_name = "NAMES")]
    strategy: Option<String>,
    /// Report deterministic figures instead: callgrind instructions and llvm-mca cycles per block.
    #[arg(long)]
    callgrind: bool,
    /// Instead: measured cycles per hot-loop iteration of every strategy's MD5, SHA-256, mulAdd
    /// and squareToLen, and of six ordinary loops (`tests/clif/loops`), beside each static
    /// model's figure (schedlab's bound, llvm-mca) and its relative error.
    #[arg(long)]
    validate_model: bool,
    /// Internal: hash one message with one implementation (the callgrind child).
    #[arg(long, hide = true, value_name = "IMPL")]
    worker: Option<String>,
    /// Internal: message length in 64-byte blocks for --worker.
    #[arg(long, hide = true, default_value_t = 1)]
    blocks: u64,
    /// Internal: time one SHA-256 implementation in this process (the OpenSSL-masked child).
    #[arg(long, hide = true, value_name = "IMPL")]
    sha256_worker: Option<String>,
    /// Internal: the --sha256-worker's sizes, warm-up and budget.
    #[arg(hide = true, requires = "sha256_worker")]
    worker_input: Vec<String>,
}

impl From<BenchArgs> for command::BenchArgs {
    fn from(args: BenchArgs) -> Self {
        Self {
            kernel: args.kernel,
            size: args.size,
            format: args.format,
            plot: args.plot,
            reps: args.reps,
            no_java: args.no_java,
            quick: args.quick,
            impls: args.impls,
            strategy: args.strategy,
            callgrind: args.callgrind,
            validate_model: args.validate_model,
            worker: args.worker,
            blocks: args.blocks,
            sha256_worker: args.sha256_worker,
            worker_input: args.worker_input,
        }
    }
}

/// Runs `schedlab bench`.
pub fn run(args: BenchArgs) -> Result<(), CliError> {
    command::run(args.into())
}

pub use command::compile_probe;
