//! Golden spill counts of the default pipeline: for every kernel × target, the spill stores and
//! reloads the register allocator inserts into the default configuration's code (both loops,
//! and for MD5 also the function the `Md5` library's JIT compiles, slow path outlined), at the
//! named ISA level. Static figures: they depend on the passes and on Cranelift, not on the
//! machine. `tests/golden/default_spills.txt` holds them; a change prints the whole table and
//! is re-blessed, after a look at why, with
//!
//! ```text
//! SCHEDLAB_BLESS=1 cargo test -p schedlab-backend --test spills_golden
//! ```
#![allow(missing_docs)]

use cranelift_codegen::ir::Function;
use schedlab_backend::Target;
use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_kernels::{bigint, md5};
use std::fmt::Write as _;
use std::path::PathBuf;

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/default_spills.txt")
}

fn blessing() -> bool {
    std::env::var_os("SCHEDLAB_BLESS").is_some_and(|v| v != "0" && !v.is_empty())
}

/// A kernel's name and builder.
type KernelBuilder = (&'static str, fn() -> Function);

/// One line per kernel × slow-path mode × target: `kernel mode target spills reloads`.
fn table() -> String {
    let kernels: [KernelBuilder; 3] = [
        ("md5", md5::compress_multi_block),
        ("muladd", bigint::mul_add),
        ("square-to-len", bigint::square_to_len),
    ];
    let config = PipelineConfig::default();
    let mut out = format!(
        "# default strategy `{}`; kernel slow-path target spills reloads\n",
        config.strategy
    );
    for (name, build) in kernels {
        let modes: &[&str] = if name == "md5" {
            &["eager", "lazy"]
        } else {
            &["eager"]
        };
        for &mode in modes {
            for target in Target::ALL {
                let options = if mode == "lazy" {
                    StageOptions::report_lazy(target)
                } else {
                    StageOptions::REPORT
                };
                let a = pipeline::run_with(build(), target, &config, &options)
                    .unwrap_or_else(|e| panic!("{name} {mode} {target}: {e}"));
                writeln!(
                    out,
                    "{name} {mode} {target} {} {}",
                    a.code.spills, a.code.reloads
                )
                .expect("write to a String");
            }
        }
    }
    out
}

#[test]
fn default_spill_counts_are_pinned() {
    let actual = table();
    let path = golden_path();
    if blessing() {
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("create golden dir");
        std::fs::write(&path, &actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}\nrun with SCHEDLAB_BLESS=1 to create it",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "default spill counts changed (re-bless with SCHEDLAB_BLESS=1 once explained)\n\
         expected:\n{expected}\nactual:\n{actual}"
    );
}
