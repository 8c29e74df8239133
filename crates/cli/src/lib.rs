//! `schedlab`: compile Java-semantics kernels through Cranelift with pluggable scheduling
//! strategies, and report spills, code, static cost and speed against hand-written code.
//!
//! The library is the command line itself ([`run_cli`]), so that a program outside this
//! workspace can run `report`, `check` and `bench` with strategies it registers.

mod bench;
mod check;
mod dump;
mod grid;
mod list;
mod reference;
mod report;
mod report_baseline;
mod report_cdf;
mod report_corpus;
mod report_cost;
mod report_optimum;
mod report_plot;
mod report_pressure;
mod report_problems;
mod report_real;
mod report_stream;
mod report_summary;
mod switch;

use schedlab_sources::{check_clif, check_wasm, clif, compile, guard, kernel, wasm_source};

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Command-line interface.
#[derive(Parser, Debug)]
#[command(name = "schedlab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Spills, code size and (with --mca) static cycles per strategy × target.
    Report(report::ReportArgs),
    /// Run each target's machine code on test vectors and random inputs against the reference.
    Check(check::CheckArgs),
    /// Print one pipeline stage (CLIF after build/bce/sched, or the machine code listing).
    Dump(dump::DumpArgs),
    /// Time schedlab's kernels against md-5/OpenSSL/num-bigint and the JVM in one run.
    Bench(bench::BenchArgs),
    /// List the kernels, scheduling strategies (with registered ones), targets and CPU models.
    List(list::ListArgs),
    /// Cost hand-written crypto-extension loops (what an intrinsic needs per block) with
    /// llvm-mca beside schedlab's compiled kernel on the same cores.
    Reference(reference::ReferenceArgs),
    /// Compile the `Md5` library's default configuration once in this process and print the
    /// phase timings as JSON (`bench` runs it in fresh processes for the first-compile figure).
    #[command(hide = true)]
    CompileProbe,
}

pub use schedlab_sources::CliError;

/// Runs the command line `args` (the first item is the program name, as in
/// [`std::env::args_os`]) and returns the process's exit code. `clap` prints help and usage
/// errors itself and exits.
///
/// This is what the `schedlab` binary does; a program that registers its own scheduling
/// strategy ([`schedlab_passes::sched::register`]) calls it to get a report, check or bench row
/// for that strategy next to the built-in ones.
pub fn run_cli<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    restore_default_sigpipe();
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        Command::Report(args) => report::run(args),
        Command::Check(args) => check::run(args),
        Command::Dump(args) => dump::run(args),
        Command::Bench(args) => bench::run(args),
        Command::List(args) => list::run(args),
        Command::Reference(args) => reference::run(args),
        Command::CompileProbe => bench::compile_probe(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("schedlab: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

/// What an example program that registers a kernel or a strategy does: with arguments it is
/// `schedlab` ([`run_cli`]); without, it runs each of `demo` (command lines without the
/// program name, words separated by spaces), echoing each, and fails if any did. `program`
/// names it in its error line.
pub fn run_cli_or_demo(program: &str, demo: &[String]) -> ExitCode {
    if std::env::args_os().len() > 1 {
        return run_cli(std::env::args_os());
    }
    let mut failed = Vec::new();
    for line in demo {
        println!("$ schedlab {line}");
        let code = run_cli(std::iter::once("schedlab").chain(line.split(' ')));
        if code != ExitCode::SUCCESS {
            failed.push(line.split(' ').next().unwrap_or_default().to_string());
        }
        println!();
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("{program}: failed: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

/// Lets a closed pipe end the process quietly, as it ends any Unix filter (`schedlab dump |
/// head`): Rust ignores `SIGPIPE`, which turns the closed pipe into a panic in `println!`.
fn restore_default_sigpipe() {
    // SAFETY: setting a signal's disposition to the default has no memory effects; it is done
    // before any thread of this program writes to standard output.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
