//! Per-target machine models: operation latencies, issue width and the number of registers
//! Cranelift's allocator may hand out.
//!
//! The latencies are those of the CPUs the project costs, taken from LLVM's scheduling models
//! (which in turn cite the vendors' optimisation guides):
//!
//! * **x86_64 — AMD Zen 3**, `llvm/lib/Target/X86/X86ScheduleZnver3.td`: `IssueWidth = 6`,
//!   `LoadLatency = 4` ("4-cycle load-to-use integer load latency", AMD SOG 19h §2.12),
//!   `StoreLatency = 1`, `WriteALU`/`WriteShift`/`WriteRotate`/`WritePOPCNT`/`WriteCMOV` 1,
//!   `WriteIMul32`/`WriteIMul64` 3, `WriteIMulH` 4, `WriteDiv32` 13, `WriteDiv64` 17,
//!   `WriteTZCNT` 2. Agner Fog's Zen 3 tables agree for the integer subset.
//! * **AArch64 — Marvell/Cavium ThunderX2** (the machine of the AArch64 MD5 review),
//!   `llvm/lib/Target/AArch64/AArch64SchedThunderX2T99.td`: `IssueWidth = 4`,
//!   `LoadLatency = 4`, `WriteI`/`WriteIS` 1, `WriteIM32`/`WriteIM64` (MADD) 5, `UMULH` 4,
//!   `WriteID32` 39, `WriteID64` 23 (the model's worst cases), `EXTR` (ROR) 1.
//! * **s390x — IBM z13** (Cranelift's s390x baseline), `llvm/lib/Target/SystemZ/SystemZScheduleZ13.td`:
//!   `IssueWidth = 6`, `LSULatency` 4, `AR`/`NR`/`SLL` 1, `RLL` 2, `MSR` 6, `MSGR` 8, `DR` 20,
//!   `DSGR` 30.
//! * **riscv64 — SiFive U74 (SiFive7)**, `llvm/lib/Target/RISCV/RISCVSchedSiFive7.td`:
//!   `IssueWidth = 2`, `LoadLatency = 3`, `WriteIMul` 3, `WriteIDiv32` 34, `WriteIDiv` 66;
//!   integer ALU ops are 3 cycles in the model but `SiFive7AnyToGPRBypass` advances their
//!   readers by 2, so the ALU-to-ALU latency used here is 1.
//!
//! Only the SiFive U74 is an in-order core (`SiFive7Model`: `MicroOpBufferSize = 0`); the
//! Zen 3, ThunderX2 and z13 models have reorder buffers (`MicroOpBufferSize` 256, 180, 60).
//!
//! Allocatable integer registers are counted from Cranelift 0.135's register environments
//! (`isa/*/abi.rs`): x86_64 14 (16 minus `rsp`, `rbp`), AArch64 26 (x0–x15, x19–x28 and x21
//! without a pinned register; x16/x17 are spill temporaries, x18 is the platform register),
//! s390x 13 (r2–r14; r0, r1 and r15 are reserved) and riscv64 25 (x5–x7, x9–x29 minus x8).

use cranelift_codegen::ir::{Function, Inst, Opcode};

/// Latencies in cycles of the operation classes the scheduler distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Latencies {
    /// Simple integer ALU operations: add, logic, compare, select, extend, constants.
    pub alu: u32,
    /// Shifts by a register or immediate amount.
    pub shift: u32,
    /// Rotates.
    pub rotate: u32,
    /// Population count and leading/trailing zero counts.
    pub bitcount: u32,
    /// 32-bit multiply.
    pub mul32: u32,
    /// 64-bit multiply and high-half multiplies.
    pub mul64: u32,
    /// 32-bit divide and remainder.
    pub div32: u32,
    /// 64-bit divide and remainder.
    pub div64: u32,
    /// Load-to-use latency of an L1 hit.
    pub load: u32,
    /// Store (address and data accepted).
    pub store: u32,
    /// Branches, calls and everything else not listed.
    pub other: u32,
}

/// What the scheduler knows about one target CPU.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MachineModel {
    /// Target name as the backend spells it (`x86_64`, `aarch64`, `s390x`, `riscv64`).
    pub target: &'static str,
    /// The CPU whose numbers these are.
    pub cpu: &'static str,
    /// Where the numbers come from.
    pub source: &'static str,
    /// Instructions issued per cycle.
    pub issue_width: u32,
    /// Integer registers Cranelift's allocator can use in this function's body.
    pub allocatable_gprs: usize,
    /// The core issues in program order (LLVM's `MicroOpBufferSize = 0`): no reorder buffer
    /// hides a latency the schedule leaves exposed, so the order itself must cover it.
    pub in_order: bool,
    /// Operation latencies.
    pub latencies: Latencies,
}

impl MachineModel {
    /// The model for a target name (`x86_64`, `aarch64`, `s390x`, `riscv64`; the usual aliases
    /// `x86-64`, `x64`, `arm64`, `riscv64gc` are accepted).
    pub fn for_target(target_name: &str) -> Option<MachineModel> {
        match target_name {
            "x86_64" | "x86-64" | "x64" => Some(Self::zen3()),
            "aarch64" | "arm64" => Some(Self::thunderx2()),
            "s390x" => Some(Self::z13()),
            "riscv64" | "riscv64gc" => Some(Self::sifive_u74()),
            _ => None,
        }
    }

    /// The target names [`MachineModel::for_target`] knows.
    pub fn target_names() -> [&'static str; 4] {
        ["x86_64", "aarch64", "s390x", "riscv64"]
    }

    /// AMD Zen 3 (x86_64).
    pub fn zen3() -> MachineModel {
        MachineModel {
            target: "x86_64",
            cpu: "AMD Zen 3",
            source: "LLVM X86ScheduleZnver3.td (AMD SOG 19h)",
            issue_width: 6,
            allocatable_gprs: 14,
            in_order: false,
            latencies: Latencies {
                alu: 1,
                shift: 1,
                rotate: 1,
                bitcount: 1,
                mul32: 3,
                mul64: 3,
                div32: 13,
                div64: 17,
                load: 4,
                store: 1,
                other: 1,
            },
        }
    }

    /// Marvell ThunderX2 (AArch64).
    pub fn thunderx2() -> MachineModel {
        MachineModel {
            target: "aarch64",
            cpu: "Marvell ThunderX2 (T99)",
            source: "LLVM AArch64SchedThunderX2T99.td",
            issue_width: 4,
            allocatable_gprs: 26,
            in_order: false,
            latencies: Latencies {
                alu: 1,
                shift: 1,
                rotate: 1,
                bitcount: 1,
                mul32: 5,
                mul64: 5,
                div32: 39,
                div64: 23,
                load: 4,
                store: 1,
                other: 1,
            },
        }
    }

    /// IBM z13 (s390x).
    pub fn z13() -> MachineModel {
        MachineModel {
            target: "s390x",
            cpu: "IBM z13",
            source: "LLVM SystemZScheduleZ13.td",
            issue_width: 6,
            allocatable_gprs: 13,
            in_order: false,
            latencies: Latencies {
                alu: 1,
                shift: 1,
                rotate: 2,
                bitcount: 3,
                mul32: 6,
                mul64: 8,
                div32: 20,
                div64: 30,
                load: 4,
                store: 1,
                other: 1,
            },
        }
    }

    /// SiFive U74 (riscv64).
    pub fn sifive_u74() -> MachineModel {
        MachineModel {
            target: "riscv64",
            cpu: "SiFive U74 (SiFive7)",
            source: "LLVM RISCVSchedSiFive7.td",
            issue_width: 2,
            allocatable_gprs: 25,
            in_order: true,
            latencies: Latencies {
                alu: 1,
                shift: 1,
                rotate: 1,
                bitcount: 3,
                mul32: 3,
                mul64: 3,
                div32: 34,
                div64: 66,
                load: 3,
                store: 1,
                other: 1,
            },
        }
    }

    /// Whether the target's integer instructions take a memory operand (`add reg, [mem]` on
    /// x86_64, `A r, d(x,b)` on s390x), so that a load used once can fold into its user.
    pub fn memory_operands(&self) -> bool {
        matches!(self.target, "x86_64" | "s390x")
    }

    /// Latency of `inst` in cycles: how long after it issues its results can be used.
    pub fn latency(&self, func: &Function, inst: Inst) -> u32 {
        let l = &self.latencies;
        let opcode = func.dfg.insts[inst].opcode();
        let wide = || {
            func.dfg
                .inst_results(inst)
                .first()
                .is_some_and(|&v| func.dfg.value_type(v).bits() > 32)
        };
        match opcode {
            _ if opcode.can_load() => l.load,
            _ if opcode.can_store() => l.store,
            Opcode::Imul => {
                if wide() {
                    l.mul64
                } else {
                    l.mul32
                }
            }
            Opcode::Umulhi | Opcode::Smulhi => l.mul64,
            Opcode::Udiv | Opcode::Sdiv | Opcode::Urem | Opcode::Srem => {
                if wide() {
                    l.div64
                } else {
                    l.div32
                }
            }
            Opcode::Ishl | Opcode::Ushr | Opcode::Sshr => l.shift,
            Opcode::Rotl | Opcode::Rotr => l.rotate,
            Opcode::Popcnt | Opcode::Clz | Opcode::Ctz | Opcode::Cls => l.bitcount,
            _ if opcode.is_branch() || opcode.is_call() || opcode.is_terminator() => l.other,
            _ => l.alu,
        }
    }
}
