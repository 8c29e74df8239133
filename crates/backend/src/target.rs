//! The four targets schedlab compiles for, and the ISA settings each is compiled with.

use cranelift_codegen::isa::{self, OwnedTargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use std::fmt;
use std::str::FromStr;
use target_lexicon::Triple;

/// A compilation target (all Linux, 64-bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// x86_64: the host here; code runs natively through the JIT.
    X86_64,
    /// AArch64 (ARMv8.0 baseline); runs under `qemu-aarch64`.
    Aarch64,
    /// IBM z/Architecture, big-endian; runs under `qemu-s390x`.
    S390x,
    /// RISC-V RV64GC; runs under `qemu-riscv64`.
    Riscv64,
}

/// An unknown target name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown target `{0}`; valid targets: x86_64, aarch64, s390x, riscv64")]
pub struct TargetError(pub String);

/// The optimisation level an ISA is built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptLevel {
    /// No e-graph: instruction order in the IR reaches the machine code. Used for emission.
    None,
    /// Cranelift's e-graph optimiser; used only by the explicit optimise stage.
    Speed,
}

/// Which CPU features an ISA is built with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IsaChoice {
    /// A named, fixed level, the same on every machine: x86_64 `x86-64-v3`, AArch64 ARMv8.0,
    /// s390x z13, riscv64 RV64GC. Reports, `dump` and `check` use it unless told otherwise, so
    /// that their rows do not depend on the host.
    #[default]
    Level,
    /// The host's detected features when the target is the host (what the JIT and the `Md5`
    /// library run); the named level for other targets.
    Native,
}

impl IsaChoice {
    /// The name on the command line (`--isa level|native`).
    pub fn name(self) -> &'static str {
        match self {
            IsaChoice::Level => "level",
            IsaChoice::Native => "native",
        }
    }
}

impl Target {
    /// Every target, in report order.
    pub const ALL: [Target; 4] = [
        Target::X86_64,
        Target::Aarch64,
        Target::S390x,
        Target::Riscv64,
    ];

    /// The short name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Target::X86_64 => "x86_64",
            Target::Aarch64 => "aarch64",
            Target::S390x => "s390x",
            Target::Riscv64 => "riscv64",
        }
    }

    /// The Linux target triple.
    pub fn triple(self) -> Triple {
        let text = match self {
            Target::X86_64 => "x86_64-unknown-linux-gnu",
            Target::Aarch64 => "aarch64-unknown-linux-gnu",
            Target::S390x => "s390x-unknown-linux-gnu",
            Target::Riscv64 => "riscv64gc-unknown-linux-gnu",
        };
        Triple::from_str(text).expect("built-in triples parse")
    }

    /// The target this process runs on, if it is one of the four.
    pub fn host() -> Option<Target> {
        Target::ALL
            .into_iter()
            .find(|t| t.triple().architecture == Triple::host().architecture)
    }

    /// Whether code for this target runs natively in this process.
    pub fn is_host(self) -> bool {
        Target::host() == Some(self)
    }

    /// Whether the target stores multi-byte values big-endian (s390x).
    pub fn is_big_endian(self) -> bool {
        self == Target::S390x
    }

    /// Builds the ISA at the named feature level ([`IsaChoice::Level`]): x86_64 `x86-64-v3`,
    /// AArch64 the ARMv8.0 baseline, s390x Cranelift's z13 baseline and riscv64 RV64GC,
    /// whatever the host.
    pub fn isa(self, opt: OptLevel) -> Result<OwnedTargetIsa, String> {
        self.isa_with(opt, true, IsaChoice::Level)
    }

    /// Builds the ISA with the features `choice` names, Cranelift's verifier inside code
    /// generation on or off (the JIT turns it off because its pipeline has verified the
    /// function it hands over). With [`IsaChoice::Native`] on the host, CPU features are
    /// detected: the JIT's code.
    pub fn isa_with(
        self,
        opt: OptLevel,
        verifier: bool,
        choice: IsaChoice,
    ) -> Result<OwnedTargetIsa, String> {
        let mut shared = settings::builder();
        let opt_text = match opt {
            OptLevel::None => "none",
            OptLevel::Speed => "speed",
        };
        shared
            .set("opt_level", opt_text)
            .map_err(|e| e.to_string())?;
        shared
            .set("enable_verifier", if verifier { "true" } else { "false" })
            .map_err(|e| e.to_string())?;
        // The JIT needs absolute, non-PIC code with long-range libcalls; use the same
        // settings everywhere so the host's report row is the JIT's code.
        shared.set("is_pic", "false").map_err(|e| e.to_string())?;
        shared
            .set("use_colocated_libcalls", "false")
            .map_err(|e| e.to_string())?;
        // The emitted blocks' edges (`Compiled::block_edges`): the cost model's control-flow
        // graph takes a jump table's targets from them. Metadata only: the code is the same.
        shared
            .set("machine_code_cfg_info", "true")
            .map_err(|e| e.to_string())?;
        let flags = settings::Flags::new(shared);
        self.isa_builder(choice)?
            .finish(flags)
            .map_err(|e| e.to_string())
    }

    /// The ISA builder with the features `choice` names (see [`Target::isa_with`]).
    pub fn isa_builder(self, choice: IsaChoice) -> Result<isa::Builder, String> {
        let builder = if self.is_host() && choice == IsaChoice::Native {
            cranelift_native::builder()?
        } else {
            let mut b = isa::lookup(self.triple()).map_err(|e| e.to_string())?;
            let preset = match self {
                Target::X86_64 => Some(("x86-64-v3", "")),
                Target::Riscv64 => Some(("has_c", "")),
                Target::Aarch64 | Target::S390x => None,
            };
            if let Some((name, value)) = preset {
                let r = if value.is_empty() {
                    b.enable(name)
                } else {
                    b.set(name, value)
                };
                r.map_err(|e| format!("{}: {name}: {e}", self.name()))?;
            }
            b
        };
        Ok(builder)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Target {
    type Err = TargetError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "x86_64" | "x86-64" | "x64" => Ok(Target::X86_64),
            "aarch64" | "arm64" => Ok(Target::Aarch64),
            "s390x" => Ok(Target::S390x),
            "riscv64" | "riscv64gc" => Ok(Target::Riscv64),
            other => Err(TargetError(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_builds_an_isa_at_both_levels() {
        for t in Target::ALL {
            for opt in [OptLevel::None, OptLevel::Speed] {
                let isa = t.isa(opt).unwrap_or_else(|e| panic!("{t}: {e}"));
                assert_eq!(isa.triple().architecture, t.triple().architecture);
            }
        }
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for t in Target::ALL {
            assert_eq!(t.name().parse::<Target>(), Ok(t));
        }
        let err = "mips".parse::<Target>().unwrap_err().to_string();
        assert!(err.contains("mips") && err.contains("riscv64"), "{err}");
    }
}
