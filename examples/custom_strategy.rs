//! A scheduling strategy defined outside schedlab's crates, registered at run time and then
//! reported, checked and benchmarked next to the built-in ones through `schedlab::run_cli`.
//!
//! ```sh
//! cargo run --release --example custom_strategy              # report, check and bench it
//! cargo run --release --example custom_strategy -- list      # or any schedlab command line
//! ```
//!
//! The strategy, `tallest-capped`: every load of never-written memory is copied to each use
//! (as `remat-loads` does); then the ready node with the longest latency path to the block's
//! end goes first, a load only when nothing else is as tall (so loads trail their need), and
//! while the live values fill the register budget the node that frees the most goes first.

use schedlab_passes::sched::{self, Pick, ReadySet, Reason, SchedView, Strategy, StrategyEntry};
use std::cmp::Reverse;
use std::process::ExitCode;

/// Picked for being on the longest path (its own reason, shown by this text in statistics).
const TALLEST: Reason = Reason::Custom("tallest");
/// Picked to keep the live values within the register budget.
const CAPPED: Reason = Reason::Custom("register-cap");

/// Critical path first under a register cap.
struct TallestCapped;

impl Strategy for TallestCapped {
    fn remat_loads(&self) -> bool {
        true
    }

    fn pick(&mut self, ready: &ReadySet, view: &SchedView<'_>) -> Pick {
        let full = view.live() + 1 >= view.register_limit();
        let picked = if full {
            ready
                .min_by_key(|n| view.pressure_delta(n))
                .map(|n| (n, CAPPED))
        } else {
            let key = |n| (Reverse(view.dag.height(n)), view.dag.is_load(n));
            ready.min_by_key(key).map(|n| (n, TALLEST))
        };
        let (node, reason) = picked.expect("the driver never offers an empty ready set");
        Pick::new(node, reason)
    }
}

/// The registry entry (the test `crates/cli/tests/custom_strategy.rs` registers it too).
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "tallest-capped",
    summary: "example: remat loads, longest path first, loads last among equals, register cap",
    make: |_| Box::new(TallestCapped),
};

/// The command lines the example runs when given none.
pub fn demo() -> Vec<String> {
    let name = ENTRY.name;
    vec![
        format!("report --kernel md5 --strategy remat-loads,{name} --target all --mca"),
        format!("check --kernel md5 --strategy {name} --target all --quiet"),
        format!("bench --strategy {name} --impl schedlab/default,md-5 --quick --no-java --size 1m"),
    ]
}

fn main() -> ExitCode {
    if let Err(e) = sched::register(ENTRY) {
        eprintln!("custom_strategy: {e}");
        return ExitCode::FAILURE;
    }
    // With arguments this program is `schedlab` plus what it registered.
    schedlab::run_cli_or_demo("custom_strategy", &demo())
}
