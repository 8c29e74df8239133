//! The `schedlab` command (see the library's [`schedlab::run_cli`]).

/// A corpus report allocates and frees small objects at a high rate on every thread (IR,
/// schedules, listings): with glibc's allocator, `malloc`, `free` and their consolidation
/// were a sixth of its CPU time. mimalloc's thread-local free lists take that down
/// (`notes/real-programs.md`, "Where a report row's time goes").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    schedlab::run_cli(std::env::args_os())
}
