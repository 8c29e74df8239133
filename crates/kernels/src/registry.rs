//! The kernel table: one line per kernel. `report`, `check`, `dump` and `list` iterate it, the
//! executor runs its cases and the generic tests drive every entry on every target, so adding a
//! kernel is its own file plus one line in [`KERNELS`].
//!
//! A kernel is a Cranelift function with Java semantics plus what it takes to judge its
//! machine code: cases ([`Case`]: scalars and arrays, each array against a guard page when
//! executed) and a Rust model of the Java code that says what each case must do ([`Effect`]).

use crate::case::{Case, Effect};
use cranelift_codegen::ir::Function;

/// What `check` asks a kernel for: how many random cases and from which seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaseOptions {
    /// Seed of the random (and random-content hostile) cases.
    pub seed: u64,
    /// How many random cases to add to the test vectors and hostile cases.
    pub random: usize,
}

impl Default for CaseOptions {
    fn default() -> Self {
        Self {
            seed: 1321,
            random: 24,
        }
    }
}

/// A kernel schedlab can build, report, check and time.
pub trait Kernel: Sync {
    /// The name `--kernel` selects it by (lower-case, `-` separated).
    fn name(&self) -> &'static str;

    /// One line for `schedlab list` and help texts.
    fn summary(&self) -> &'static str;

    /// Other names that select it, and names of the groups it belongs to (`md5-mb` selects
    /// both lane widths).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// The function as the JVM front end would hand it over: every array access checked.
    fn build(&self) -> Function;

    /// Test vectors, `options.random` random cases and hostile ones (offsets, lengths and
    /// limits that must make the Java code fail cleanly).
    fn cases(&self, options: &CaseOptions) -> Vec<Case>;

    /// What the Java code does on `case`: the returned values and every array afterwards.
    /// An error says why the case is malformed (a case from [`Kernel::cases`] never is).
    fn expected(&self, case: &Case) -> Result<Effect, String>;

    /// Whether the function uses SIMD vectors (a target without vector lowering cannot
    /// compile it).
    fn needs_simd(&self) -> bool {
        false
    }
}

/// Every built-in kernel, in report order.
pub static KERNELS: &[&dyn Kernel] = &[
    &crate::md5::KERNEL,
    &crate::md5_mb::KERNEL_X4,
    &crate::md5_mb::KERNEL_X8,
    &crate::bigint::entry::MUL_ADD,
    &crate::bigint::entry::SQUARE_TO_LEN,
];

/// The kernels `spec` selects: an exact name, or an alias/group name (every kernel carrying
/// it). Empty when nothing matches.
pub fn select(spec: &str) -> Vec<&'static dyn Kernel> {
    if let Some(k) = KERNELS.iter().find(|k| k.name() == spec) {
        return vec![*k];
    }
    KERNELS
        .iter()
        .filter(|k| k.aliases().contains(&spec))
        .copied()
        .collect()
}

/// The names of every kernel, in report order.
pub fn names() -> Vec<&'static str> {
    KERNELS.iter().map(|k| k.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_never_shadow_an_alias() {
        let names = names();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(name), "{name} registered twice");
            assert!(
                KERNELS.iter().all(|k| !k.aliases().contains(name)),
                "{name} is also an alias"
            );
        }
    }

    #[test]
    fn select_finds_names_and_groups() {
        assert_eq!(select("md5").len(), 1);
        assert!(select("md5-mb").len() >= 2);
        assert!(select("no-such-kernel").is_empty());
    }

    #[test]
    fn every_kernel_verifies_and_its_cases_have_answers() {
        let options = CaseOptions {
            seed: 7,
            random: 3,
        };
        for kernel in KERNELS {
            let func = kernel.build();
            let flags = cranelift_codegen::settings::Flags::new(
                cranelift_codegen::settings::builder(),
            );
            cranelift_codegen::verify_function(&func, &flags)
                .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
            let cases = kernel.cases(&options);
            assert!(cases.len() > options.random, "{}", kernel.name());
            for case in &cases {
                assert_eq!(
                    case.args.len(),
                    func.signature.params.len(),
                    "{} {}",
                    kernel.name(),
                    case.label
                );
                let effect = kernel
                    .expected(case)
                    .unwrap_or_else(|e| panic!("{} {}: {e}", kernel.name(), case.label));
                assert_eq!(effect.arrays.len(), case.all_arrays().count());
            }
        }
    }
}
