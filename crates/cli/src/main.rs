//! The `schedlab` command (see the library's [`schedlab::run_cli`]).

fn main() -> std::process::ExitCode {
    schedlab::run_cli(std::env::args_os())
}
