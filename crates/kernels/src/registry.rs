//! The kernel table: one line per kernel. `report`, `check`, `dump` and `list` iterate it, the
//! executor runs its cases and the generic tests drive every entry on every target, so adding a
//! kernel is its own file plus one line in [`KERNELS`].
//!
//! A kernel is a Cranelift function with Java semantics plus what it takes to judge its
//! machine code: cases ([`Case`]: scalars and arrays, each array against a guard page when
//! executed) and a Rust model of the Java code that says what each case must do ([`Effect`]).

use crate::case::{Case, Effect};
use cranelift_codegen::ir::Function;
use std::sync::RwLock;

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

/// What names a kernel and builds its function: the data behind [`Kernel::name`],
/// [`Kernel::summary`], [`Kernel::aliases`] and [`Kernel::build`].
#[derive(Clone, Copy, Debug)]
pub struct KernelInfo {
    /// The name `--kernel` selects it by (lower-case, `-` separated).
    pub name: &'static str,
    /// One line for `schedlab list` and help texts.
    pub summary: &'static str,
    /// Other names that select it, and names of the groups it belongs to (`md5-mb` selects
    /// both lane widths).
    pub aliases: &'static [&'static str],
    /// Builds the function as the JVM front end would hand it over: every array access checked.
    pub build: fn() -> Function,
}

/// A kernel schedlab can build, report, check and time.
pub trait Kernel: Sync {
    /// Its names, summary and builder.
    fn info(&self) -> KernelInfo;

    /// The name `--kernel` selects it by (lower-case, `-` separated).
    fn name(&self) -> &'static str {
        self.info().name
    }

    /// One line for `schedlab list` and help texts.
    fn summary(&self) -> &'static str {
        self.info().summary
    }

    /// Other names that select it, and names of the groups it belongs to (`md5-mb` selects
    /// both lane widths).
    fn aliases(&self) -> &'static [&'static str] {
        self.info().aliases
    }

    /// The function as the JVM front end would hand it over: every array access checked.
    fn build(&self) -> Function {
        (self.info().build)()
    }

    /// Test vectors, `options.random` random cases and hostile ones (offsets, lengths and
    /// limits that must make the Java code fail cleanly).
    fn cases(&self, options: &CaseOptions) -> Vec<Case>;

    /// What the Java code does on `case`: the returned values and every array afterwards.
    /// An error says why the case is malformed (a case from [`Kernel::cases`] never is).
    fn expected(&self, case: &Case) -> Result<Effect, String>;

    /// The cases `bench` times when the kernel has no workload of its own: by default the
    /// test vectors and hostile cases ([`Kernel::cases`] without random ones). A kernel whose
    /// real inputs are larger overrides this with representative sizes.
    fn bench_cases(&self) -> Vec<Case> {
        self.cases(&CaseOptions {
            random: 0,
            ..CaseOptions::default()
        })
    }

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
    &crate::md5_mb::KERNEL_X12,
    &crate::md5_mb::KERNEL_X16,
    &crate::md5_mb::KERNEL_X8S1,
    &crate::md5_mb::KERNEL_X8S2,
    &crate::md5_mb::KERNEL_X12S1,
    &crate::md5_mb::KERNEL_X12S2,
    &crate::bigint::entry::MUL_ADD,
    &crate::bigint::entry::SQUARE_TO_LEN,
    &crate::int_sum::KERNEL,
    &crate::sha256::KERNEL,
    &crate::sha256_local::KERNEL,
];

/// Kernels registered at run time ([`register`]), after the built-ins.
static REGISTERED: RwLock<Vec<&'static dyn Kernel>> = RwLock::new(Vec::new());

/// Why [`register`] refused a kernel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// The name is empty or not made of lower-case letters, digits, `-` and `_`.
    #[error("kernel name `{0}` must be non-empty lower-case letters, digits, `-` or `_`")]
    BadName(String),
    /// A kernel (or an alias) already has the name.
    #[error("a kernel named `{0}` is already registered")]
    Taken(String),
}

/// Adds a kernel from outside this crate, so that every command that takes `--kernel` (report,
/// check, dump, list) and the generic tests see it after the built-ins.
pub fn register(kernel: &'static dyn Kernel) -> Result<(), RegisterError> {
    let name = kernel.name();
    let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_';
    if name.is_empty() || !name.chars().all(valid) {
        return Err(RegisterError::BadName(name.to_string()));
    }
    let mut registered = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    let taken = KERNELS
        .iter()
        .chain(registered.iter())
        .any(|k| k.name() == name || k.aliases().contains(&name));
    if taken {
        return Err(RegisterError::Taken(name.to_string()));
    }
    registered.push(kernel);
    Ok(())
}

/// Every kernel: the built-ins in report order, then the registered ones.
pub fn all() -> Vec<&'static dyn Kernel> {
    let registered = REGISTERED.read().unwrap_or_else(|e| e.into_inner());
    KERNELS
        .iter()
        .copied()
        .chain(registered.iter().copied())
        .collect()
}

/// The kernels `spec` selects: an exact name, or an alias/group name (every kernel carrying
/// it). Empty when nothing matches.
pub fn select(spec: &str) -> Vec<&'static dyn Kernel> {
    let all = all();
    if let Some(k) = all.iter().find(|k| k.name() == spec) {
        return vec![*k];
    }
    all.into_iter()
        .filter(|k| k.aliases().contains(&spec))
        .collect()
}

/// The names of every kernel, in report order.
pub fn names() -> Vec<&'static str> {
    all().into_iter().map(|k| k.name()).collect()
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
    fn register_refuses_taken_and_bad_names() {
        assert_eq!(
            register(&crate::md5::KERNEL),
            Err(RegisterError::Taken("md5".into()))
        );
        struct Named(&'static str);
        impl Kernel for Named {
            fn info(&self) -> KernelInfo {
                KernelInfo {
                    name: self.0,
                    summary: "test",
                    aliases: &[],
                    build: crate::md5::compress_multi_block,
                }
            }
            fn cases(&self, _: &CaseOptions) -> Vec<Case> {
                Vec::new()
            }
            fn expected(&self, _: &Case) -> Result<Effect, String> {
                Err("none".into())
            }
        }
        static BAD: Named = Named("Bad Name");
        static GROUP: Named = Named("md5-mb");
        static FRESH: Named = Named("registry-test-fresh");
        assert!(matches!(register(&BAD), Err(RegisterError::BadName(_))));
        assert!(matches!(register(&GROUP), Err(RegisterError::Taken(_))));
        assert_eq!(register(&FRESH), Ok(()));
        assert_eq!(select("registry-test-fresh").len(), 1);
        assert!(names().contains(&"registry-test-fresh"));
        assert!(matches!(register(&FRESH), Err(RegisterError::Taken(_))));
    }

    #[test]
    fn select_finds_names_and_groups() {
        assert_eq!(select("md5").len(), 1);
        assert!(select("md5-mb").len() >= 2);
        assert!(select("no-such-kernel").is_empty());
    }

    #[test]
    fn every_kernel_verifies_and_its_cases_have_answers() {
        let options = CaseOptions { seed: 7, random: 3 };
        for kernel in KERNELS {
            let func = kernel.build();
            let flags =
                cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
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
