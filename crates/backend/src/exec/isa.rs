//! ISAs for functions that come with their own settings (a `.clif` file's `set` and `target`
//! lines): the file's flags on top of schedlab's fixed code-generation settings.
//!
//! schedlab always emits with `opt_level=none` (so the scheduler's order reaches the machine
//! code), non-PIC code and non-colocated libcalls (so the JIT and static linking both work);
//! a file's values for those three are overridden. Every other shared flag the file sets
//! (e.g. `enable_llvm_abi_extensions`) is kept. A file's `target` line gives the ISA flags
//! (e.g. `has_avx`); a file without one gets the target's default ISA (the host's detected
//! features, or the baseline schedlab uses for a foreign target). `enable_multi_ret_implicit_sret`
//! is on, so a function with more results than return registers compiles.

use crate::target::Target;
use cranelift_codegen::isa::{self, OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings::{self, Configurable, Flags};

/// Shared flags schedlab fixes whatever a file says.
const FIXED: [(&str, &str); 3] = [
    ("opt_level", "none"),
    ("is_pic", "false"),
    ("use_colocated_libcalls", "false"),
];

/// The schedlab target a file's ISA is for, if it is one of the four.
pub fn target_of(isa: &dyn TargetIsa) -> Option<Target> {
    target_of_architecture(&isa.triple().architecture)
}

/// The schedlab target a `target` line's triple (e.g. `x86_64`, `pulley64`) names, if it is
/// one of the four; `None` also for a triple that does not parse.
pub fn target_of_triple(triple: &str) -> Option<Target> {
    let triple: target_lexicon::Triple = triple.parse().ok()?;
    target_of_architecture(&triple.architecture)
}

fn target_of_architecture(architecture: &target_lexicon::Architecture) -> Option<Target> {
    use target_lexicon::Architecture as A;
    match architecture {
        A::X86_64 => Some(Target::X86_64),
        A::Aarch64(_) => Some(Target::Aarch64),
        A::S390x => Some(Target::S390x),
        // `riscv64` in a file, `riscv64gc` in schedlab's triple.
        A::Riscv64(_) => Some(Target::Riscv64),
        _ => None,
    }
}

/// Builds the ISA for `target` with the shared flags `flags` (only those that differ from
/// Cranelift's defaults are applied) and, when given, the ISA flags of `file_isa`.
pub fn isa_with_flags(
    target: Target,
    flags: &Flags,
    file_isa: Option<&dyn TargetIsa>,
) -> Result<OwnedTargetIsa, String> {
    let mut shared = settings::builder();
    // More results than return registers go through a hidden return area instead of failing.
    shared
        .enable("enable_multi_ret_implicit_sret")
        .map_err(|e| format!("enable_multi_ret_implicit_sret: {e}"))?;
    let defaults = Flags::new(settings::builder());
    for (value, default) in flags.iter().zip(defaults.iter()) {
        let text = value.value_string();
        if text != default.value_string() && !FIXED.iter().any(|(n, _)| *n == value.name) {
            shared
                .set(value.name, &text)
                .map_err(|e| format!("setting {}={text}: {e}", value.name))?;
        }
    }
    for (name, text) in FIXED {
        shared
            .set(name, text)
            .map_err(|e| format!("setting {name}={text}: {e}"))?;
    }
    let shared = Flags::new(shared);
    match file_isa {
        Some(file_isa) => {
            let mut builder = isa::lookup(file_isa.triple().clone()).map_err(|e| e.to_string())?;
            for value in file_isa.isa_flags() {
                let text = value.value_string();
                builder
                    .set(value.name, &text)
                    .map_err(|e| format!("{target}: setting {}={text}: {e}", value.name))?;
            }
            builder.finish(shared).map_err(|e| format!("{target}: {e}"))
        }
        None => target
            .isa_builder(crate::target::IsaChoice::Level)?
            .finish(shared)
            .map_err(|e| e.to_string()),
    }
}

/// The ISA flags `isa` turns on that the emulator does not implement (qemu-user 7.2, the
/// Debian 12 package, with [`crate::emulate::emulated_cpu`]'s model): code built with them
/// may use instructions qemu reports as illegal. On s390x the z17 (arch15) facilities; on
/// riscv64 the extensions qemu 7.2 has no model of, and vector lengths above 128 bits. Empty
/// for the host's architecture (it runs natively).
pub fn flags_the_emulator_lacks(isa: &dyn TargetIsa) -> Vec<&'static str> {
    let unsupported: &[&str] = match target_of(isa) {
        Some(Target::S390x) => &["has_mie4", "has_vxrs_ext3"],
        Some(Target::Riscv64) => &[
            "has_zfa",
            "has_zfhmin",
            "has_zfh",
            "has_zvfh",
            "has_zcb",
            "has_zicond",
            "has_zvbb",
        ],
        _ => &[],
    };
    if target_of(isa).is_none() || target_of(isa) == Target::host() {
        return Vec::new();
    }
    let too_long_vectors = |name: &str| {
        name.strip_prefix("has_zvl")
            .and_then(|n| n.strip_suffix('b'))
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|bits| bits > 128)
    };
    isa.isa_flags()
        .iter()
        .filter(|v| v.as_bool() == Some(true))
        .filter(|v| unsupported.contains(&v.name) || too_long_vectors(v.name))
        .map(|v| v.name)
        .collect()
}

/// The ISA flags `isa` turns on that this host's processor lacks (as `cranelift-native`
/// detects it), when `isa` is for the host's architecture: code built with them may use
/// instructions the host cannot execute. Cranelift's own runner skips such a `target` line
/// (`test_run.rs`, `is_isa_compatible`); AArch64's `sign_return_address` is never missing (its
/// instructions are hints on cores without pointer authentication).
pub fn flags_the_host_lacks(isa: &dyn TargetIsa) -> Vec<&'static str> {
    let target = target_of(isa);
    if target.is_none() || target != Target::host() {
        return Vec::new();
    }
    let Ok(host) = Target::host()
        .ok_or_else(String::new)
        .and_then(|t| t.isa_builder(crate::target::IsaChoice::Native))
        .and_then(|b| {
            b.finish(Flags::new(settings::builder()))
                .map_err(|e| e.to_string())
        })
    else {
        return Vec::new();
    };
    let host_flags = host.isa_flags();
    let on_host = |name: &str| {
        host_flags
            .iter()
            .find(|v| v.name == name)
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    };
    isa.isa_flags()
        .iter()
        .filter(|v| v.as_bool() == Some(true))
        .filter(|v| !(v.name == "sign_return_address" && target == Some(Target::Aarch64)))
        .filter(|v| !on_host(v.name))
        .map(|v| v.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_lacks_no_flag_of_its_own_isa_and_every_flag_of_another_architecture_is_ignored() {
        let Some(host) = Target::host() else { return };
        let isa_of = |target: Target, choice| {
            target.isa_builder(choice).and_then(|b| {
                b.finish(Flags::new(settings::builder()))
                    .map_err(|e| e.to_string())
            })
        };
        let native = isa_of(host, crate::target::IsaChoice::Native).expect("the host's ISA");
        assert_eq!(flags_the_host_lacks(native.as_ref()), Vec::<&str>::new());
        for other in Target::ALL.into_iter().filter(|t| *t != host) {
            let isa = isa_of(other, crate::target::IsaChoice::Level).expect("a foreign ISA");
            assert!(flags_the_host_lacks(isa.as_ref()).is_empty(), "{other}");
        }
    }
}
