//! Per-core latency tables for the recurrence bound: a handful of integer classes and six
//! floating-point ones ([`FpModel`]), each figure with its source.
//!
//! Sources, cited by key beside each figure:
//! - **[AF-IT]** Agner Fog, *Instruction tables* (agner.org/optimize/instruction_tables.pdf):
//!   measured latencies per microarchitecture.
//! - **[AF-MA]** Agner Fog, *The microarchitecture of Intel, AMD and VIA CPUs*
//!   (agner.org/optimize/microarchitecture.pdf): move elimination, LEA forms, store forwarding.
//! - **[AF-Z2]** Agner Fog, "Surprising new feature in AMD Ryzen 3000" (agner.org/forum,
//!   viewtopic.php?f=1&t=41): Zen 2 mirrors 32/64-bit memory operands addressed by a pointer
//!   (plus optional index) so that a reload of a just-stored value has (almost) no latency.
//! - **[TD-FW]** Travis Downs, uarch-bench store-forwarding study (gist
//!   travisdowns/bc9af3a0aaca5399824cf182f85b9e9c): back-to-back write→read of one address,
//!   4.43 cycles on Skylake, 1.00 on Zen 2, 0.58 on Ice Lake.
//! - **[AMD-SOG]** AMD *Software Optimization Guide* for family 19h (Zen 3/4, pub. 56665) and
//!   1Ah (Zen 5, pub. 58455): 4-cycle integer load-to-use, zero-cycle register moves (§2.9.4
//!   "Zero Cycle Move"), 6-wide dispatch (Zen 3/4), 8-wide (Zen 5), 4 / 6 integer ALUs.
//! - **[LLVM-Z3]** LLVM commit 7059b28 "\[X86\] AMD Zen 3: 32/64-bit GPR register moves are
//!   zero-cycle" (verified there with llvm-exegesis).
//! - **[INT-OPT]** Intel *64 and IA-32 Architectures Optimization Reference Manual*: Skylake
//!   4-wide allocation, 4 integer ALU ports; Golden Cove 6-wide, 5 integer ALU ports;
//!   5-cycle L1 load-to-use for complex addressing.
//! - **[INT-UNL]** Intel *Optimization Reference Manual* §2.3.2.4 (Sandy Bridge: "loads
//!   combined with computational operations and all stores, when used with indexed
//!   addressing, are ... fragmented into two micro-ops through a process called
//!   un-lamination") and its Haswell "Unlamination" section; measured to hold for indexed
//!   stores on Haswell and Skylake by P. Cordes (Stack Overflow question 26046634, "Micro
//!   fusion and addressing modes"). AMD cores dispatch such a store as one macro-op.
//! - **[EXP-UNL]** Golden Cove does not take two allocation slots for the indexed store
//!   `movl %r, (%base,%index,4)` of the BigInteger loops: three timings on this project's
//!   Emerald Rapids host run *under* the 6-wide allocation bound that two slots would set —
//!   the hand-written loop V17 of `crates/cost/experiments/bigint_loop_asm.rs` (13 instructions +
//!   that store: 2.22 cycles per iteration against 14/6 = 2.33; `cargo test --release --workspace
//!   --test experiments bigint_loop_asm::mul_add_loop_variants -- --ignored --nocapture`),
//!   the JIT's 13-instruction `mulAdd` loop (2.25, notes/validation-sapphirerapids.md) and
//!   squareToLen's same loop fitted at n ≥ 128 (2.17–2.21, the same file's squareToLen rows,
//!   `scripts/regen-notes validation`). No vendor document was found that
//!   says so; a floor must not exceed what the core was measured to do, so the entry follows
//!   the measurements.
//! - **[EXP-MOVOP]** On this project's Intel host with AMX (Golden Cove lineage;
//!   `LOOPS_FILE=$PWD/crates/cost/experiments/probes/glc_alloc_probes.txt cargo test --release --workspace
//!   --test experiments zen4_order_asm::loops_file -- --ignored --nocapture`, measured
//!   medians kept in `glc_alloc_probes.measured.tsv`):
//!   12 instructions + `dec`/`jnz` run at 2.17 cycles (13 slots ÷ 6) except when a register
//!   `movq`/`movl` is directly followed by a one-uop ALU operation that reads and writes the
//!   move's destination (`add`/`sub`/`and`/`xor` with a register or immediate, `shr` by an
//!   immediate, `neg`, `inc`): then 2.00, one slot for the pair; five such pairs and the loop
//!   counter take 1.20 cycles (six ALU uops on five ALU ports). Not fused: a `nop` between
//!   them, another destination, `imul`, `cmp` (no write), `movslq` as the move. No vendor
//!   document was found that says so; the figures are the measurements. The mulAdd loop of
//!   the JIT (`movq %r8, %r9; subq %rbx, %r9` before its `test`/`jge`) measures 2.03–2.10
//!   cycles per word on that host, under the 13 ÷ 6 = 2.17 that one slot each would set.
//!   Only small loops gain: two pairs in a 13-entry loop save two slots (1.84 cycles), four
//!   in a 25-entry loop about five (3.50 against 4.34), but ten in a 121-entry loop at most
//!   one to seven (19.0–20.0 against 20.2, noisy) and none measurably at 600 entries or more
//!   (the `fused xN`/`plain xN` blocks). The model applies the fusion
//!   to loops that fit Golden Cove's uop queue, 72 entries per thread when both threads of a
//!   core are active ([INT-OPT], Golden Cove: 144 entries, 72 per thread), as they are on this
//!   shared host; between 25 and 121 entries it was not measured.
//! - **[EXP-LAT]** The same host, the same command with
//!   `LOOPS_FILE=$PWD/crates/cost/experiments/probes/glc_latency_probes.txt` (chains of 12; medians in
//!   `glc_latency_probes.measured.tsv`): `lea d(%b,%i)` (three components, 32- or 64-bit) 1 cycle a link, but a
//!   scaled `lea (%b,%i,2)` 2; `add`, `rorx`, `andn`, `bswap` 1.
//! - **[ARM-SOG]** Arm *Software Optimization Guides*: Cortex-A72 (UAN0016), Neoverse N1
//!   (PJDOC-466751330-9707), Neoverse V2 (PJDOC-466751330-593177): ALU 1 cycle, ALU with
//!   shifted operand 2, `MUL` 3 (W) / 4–5 (X), load-to-use 4, decode width 3 / 4 / 6.
//! - **[LLVM-SKL]**, **[LLVM-ZN3]**, **[LLVM-ZN4]**, **[LLVM-SPR]**: LLVM's scheduling models
//!   `X86SchedSkylakeClient.td`, `X86ScheduleZnver3.td`, `X86ScheduleZnver4.td`,
//!   `X86SchedSapphireRapids.td`, read per instruction with `llvm-mca -mcpu=<core>
//!   -instruction-tables` (LLVM 14 for `skylake`/`znver3`, `llvm-mca-19` for the others): the
//!   floating-point latencies beside [AF-IT]'s (notes/figures.md lists the instructions read).
//! - **[LLVM-Z15]** LLVM `llvm/lib/Target/SystemZ/SystemZScheduleZ15.td` (IBM-maintained;
//!   figures cited, no code taken): `IssueWidth = 6`; two `FXa` and two `FXb` fixed-point
//!   units; `LSULatency` 4 added to loads; `AR`/`XR`/`NR`/`AFI`/`SRLK`/`RISBG`/`LGR`/`LRVR`
//!   1 cycle; `MSGR` 7, `MSGRKC` 8, `MLGR` 8, `DLGR`/`DSGR` 30; `RLL` `WLat2LSU` (2 + 4).
//! - **[GCC-Z15]** GCC `gcc/config/s390/8561.md` (z15 pipeline description, IBM-contributed):
//!   puts `rll`/`rllg` in the same latency class as `ar`, `xr`, `sllg` (its `z15_0`), two
//!   classes below `l`/`lg` (`z15_2`); `msgr` 6, `mlgr` 11, `dlgr`/`dsgr` 20 in its units.
//!   Both put integer arithmetic, logic, shifts and register moves on the two `FXa` units
//!   only (compares, stores and branches on `FXb`): the resource bound divides the loop's
//!   other ALU operations by 2.
//! - **[IBM-Z15]** WikiChip, "IBM Introduces Next-Gen Z Mainframe: The z15" (fuse.wikichip.org,
//!   news/2659, page 2, from IBM's Hot Chips material): a 6-way decoder in two groups of three,
//!   up to six instructions (two groups) sent to rename per cycle; IBM's z13s Technical Guide
//!   §3.4.12 gives the same six-per-cycle decode for the z13 generation. LLVM's
//!   `IssueWidth = 6` agrees. No published store-to-load forwarding latency.
//!
//! Where a source gives a range the figure taken is the *lower* end: the recurrence bound is
//! meant to be a floor that a real core cannot beat, so an optimistic latency keeps it valid.
//! Figures marked "approx." are extrapolated from a sibling core and say from which.

use schedlab_backend::target::Target;

/// What an instruction's result costs, by class (see [`super::OpClass`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoreModel {
    /// Name, as llvm-mca spells the corresponding `-mcpu` where one exists.
    pub name: &'static str,
    /// Target the core implements.
    pub target: Target,
    /// Simple integer ALU operation (add, logic, shift/rotate by immediate, `mov` immediate).
    pub alu: f64,
    /// ALU operation with a shifted or extended register operand (AArch64), or x86's
    /// three-component `lea`.
    pub alu_complex: f64,
    /// x86 `lea` with a scaled index (`lea (%b,%i,2)`); other targets have no such form and
    /// carry `alu_complex` here.
    pub lea_scaled: f64,
    /// Register-to-register move: 0 where the core eliminates it at rename.
    pub reg_move: f64,
    /// Integer multiply (32 or 64-bit product).
    pub mul: f64,
    /// High half of a 64×64-bit product (`mulq`'s `rdx`, `umulh`).
    pub mul_high: f64,
    /// Integer division (a floor: real dividers take longer and vary with the operands).
    pub div: f64,
    /// L1 hit load-to-use latency (from the address register to the loaded value).
    pub load: f64,
    /// From a store's data being ready to a later load of the same stack slot delivering it
    /// (store-to-load forwarding, or memory renaming where the core has it).
    pub store_forward: f64,
    /// Instructions the core issues (allocates/dispatches) per cycle.
    pub issue_width: f64,
    /// Integer ALU operations the core executes per cycle.
    pub alu_ports: f64,
    /// Whether `reg_move` is 0 because of move elimination.
    pub eliminates_moves: bool,
    /// Whether a store with an indexed address (`base + index`) takes two issue slots: Skylake
    /// decodes it as one micro-fused uop but *un-laminates* it into store-address and
    /// store-data before allocation ([INT-UNL]); Golden Cove was measured not to ([EXP-UNL]).
    pub unlaminates_indexed_stores: bool,
    /// Loops of at most this many fused-domain uops run from the core's uop queue, where a
    /// register move and the next instruction, a one-uop ALU operation that reads and writes
    /// the move's destination, take one allocation slot together ([EXP-MOVOP]); 0: no fusion.
    pub move_fusion_queue: usize,
    /// Floating-point latencies and pipes (scalar and vector alike).
    pub fp: FpModel,
}

/// What a floating-point (or SIMD) instruction's result costs, by class
/// ([`super::OpClass::FpAdd`] …), and how many pipes execute floating-point arithmetic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FpModel {
    /// Add, subtract, minimum, maximum.
    pub add: f64,
    /// Multiply.
    pub mul: f64,
    /// Fused multiply-add, from the multiplied operands to the result.
    pub fma: f64,
    /// Divide and square root (the lower end: dividers vary with the operands).
    pub div: f64,
    /// Conversions between integer and floating point, between widths, and rounding.
    pub cvt: f64,
    /// Logic, shuffles, blends, negation/absolute value, compares, register-file transfers.
    pub misc: f64,
    /// Pipes that execute floating-point arithmetic (the resource bound divides the loop's
    /// floating-point operations by it; on x86 cores the port layout refines it).
    pub ports: f64,
}

/// Zen 3's and Zen 4's floating-point latencies, the same on both: [LLVM-ZN3] (LLVM 14) and
/// [LLVM-ZN4] (`llvm-mca-19 -mcpu=znver4 -instruction-tables`): VADDSD/VMULSD 3 (adds on
/// FP2/FP3, multiplies on FP0/FP1), VFMADD*SD 4, VDIVSD 13, VCVTSS2SD 3, logic 1 on any of
/// FP0-3; [AF-IT] Zen 3 alike, Zen 4: ADDSD/MULSD 3, FMA 4, DIVSD 13-15 (lower end).
const ZEN_FP: FpModel = FpModel {
    add: 3.0,
    mul: 3.0,
    fma: 4.0,
    div: 13.0,
    cvt: 3.0,
    misc: 1.0,
    ports: 4.0,
};

/// x86_64, AArch64 and s390x cores with a latency table, in report order per target.
pub const MODELS: &[CoreModel] = &[
    // Intel Skylake.
    CoreModel {
        name: "skylake",
        target: Target::X86_64,
        alu: 1.0,           // [AF-IT] Skylake: ADD/AND/XOR/ROL/RORX r,r 1
        alu_complex: 3.0,   // [AF-MA] §11.x: LEA with three operands 3 cycles (SNB..SKL)
        lea_scaled: 3.0,    // approx.: as the slow form (not measured apart)
        reg_move: 0.0,      // [AF-MA] Skylake: register moves eliminated at rename (mostly)
        mul: 3.0,           // [AF-IT] IMUL r32/r64 3
        mul_high: 4.0,      // [AF-IT] MUL r64 3-4 (rdx) — lower end +1 for the high half
        div: 26.0,          // [AF-IT] DIV r32 26
        load: 4.0,          // [INT-OPT] 4 (simple addressing) .. 5 (complex): lower end
        store_forward: 4.4, // [TD-FW] 4.43 measured; [AF-MA] 4-5
        issue_width: 4.0,   // [INT-OPT] 4 fused uops/cycle
        alu_ports: 4.0,     // [INT-OPT] ports 0, 1, 5, 6
        eliminates_moves: true,
        unlaminates_indexed_stores: true, // [INT-UNL]
        move_fusion_queue: 0,
        // [LLVM-SKL] (`llvm-mca -mcpu=skylake -instruction-tables`, LLVM 14): VADDSD/VMULSD/
        // VFMADD*SD 4 on p01, VDIVSD 14, VCVTSI2SD/VCVTSS2SD 5, logic/shuffles 1; [AF-IT]
        // Skylake: ADDSD/MULSD/FMA 4, DIVSD 13-14 (lower end taken).
        fp: FpModel {
            add: 4.0,
            mul: 4.0,
            fma: 4.0,
            div: 13.0,
            cvt: 5.0,
            misc: 1.0,
            ports: 2.0,
        },
    },
    // AMD Zen 3.
    CoreModel {
        name: "znver3",
        target: Target::X86_64,
        alu: 1.0,           // [AF-IT] Zen 3: simple integer ops 1
        alu_complex: 2.0,   // [AF-IT] Zen 3: LEA with 3 operands or scale 2
        lea_scaled: 2.0,    // [AF-IT] Zen 3: LEA with scale 2
        reg_move: 0.0,      // [AMD-SOG] §2.9.4, [LLVM-Z3]
        mul: 3.0,           // [AF-IT] IMUL 3
        mul_high: 3.0,      // [AF-IT] MUL r64 3
        div: 10.0,          // [AF-IT] DIV r32 10-
        load: 4.0,          // [AMD-SOG] 4-cycle load-to-use
        store_forward: 1.0, // approx.: [AF-Z2]/[TD-FW] memory mirroring measured on Zen 2 (1.0)
        issue_width: 6.0,   // [AMD-SOG] 6 macro-ops dispatched per cycle
        alu_ports: 4.0,     // [AMD-SOG] 4 integer ALUs
        eliminates_moves: true,
        unlaminates_indexed_stores: false, // [AMD-SOG]: one macro-op
        move_fusion_queue: 0,
        fp: ZEN_FP,
    },
    // AMD Zen 4 (LLVM 19's znver4); also the closest table for Zen 5.
    CoreModel {
        name: "znver4",
        target: Target::X86_64,
        alu: 1.0,           // [AF-IT] Zen 4: simple integer ops 1
        alu_complex: 2.0,   // [AF-IT] Zen 4: LEA with 3 operands or scale 2
        lea_scaled: 2.0,    // [AF-IT] Zen 4: LEA with scale 2
        reg_move: 0.0,      // [AMD-SOG] §2.9.4 (unchanged in 19h model 10h+)
        mul: 3.0,           // [AF-IT] IMUL 3
        mul_high: 3.0,      // [AF-IT] MUL r64 3
        div: 10.0,          // [AF-IT] DIV r32 10-
        load: 4.0,          // [AMD-SOG] 4-cycle load-to-use
        store_forward: 1.0, // approx.: memory mirroring as on Zen 2 ([AF-Z2], [TD-FW])
        issue_width: 6.0,   // [AMD-SOG] 6 macro-ops per cycle
        alu_ports: 4.0,     // [AMD-SOG] 4 integer ALUs
        eliminates_moves: true,
        unlaminates_indexed_stores: false, // [AMD-SOG]: one macro-op
        move_fusion_queue: 0,
        fp: ZEN_FP,
    },
    // Intel Sapphire Rapids (Golden Cove cores).
    CoreModel {
        name: "sapphirerapids",
        target: Target::X86_64,
        alu: 1.0,           // [AF-IT] Golden Cove: simple integer ops 1
        alu_complex: 1.0,   // approx.: [AF-MA] Alder Lake P-core executes 3-operand LEA in 1
        lea_scaled: 2.0,    // [EXP-LAT] Golden Cove: `lea (%b,%i,2)` chain 2 a link
        reg_move: 0.0,      // [AF-MA] Golden Cove: move elimination (re-enabled after ICL)
        mul: 3.0,           // [AF-IT] IMUL 3
        mul_high: 4.0,      // [AF-IT] MUL r64 3-4
        div: 12.0,          // [AF-IT] DIV r32 12-
        load: 5.0,          // [INT-OPT] Golden Cove 5-cycle load-to-use
        store_forward: 0.6, // approx.: [TD-FW] Ice Lake 0.58 (memory renaming, same lineage)
        issue_width: 6.0,   // [INT-OPT] 6-wide allocation
        alu_ports: 5.0,     // [INT-OPT] 5 integer ALU ports
        eliminates_moves: true,
        unlaminates_indexed_stores: false, // [EXP-UNL] (Skylake's [INT-UNL] does not hold here)
        move_fusion_queue: 72,             // [EXP-MOVOP]; [INT-OPT] 72-entry uop queue per thread
        // [LLVM-SPR] (LLVM 19): VADDSD 3 on p15, VMULSD/VFMADD*SD 4 on p01, VDIVSD 14 on p0,
        // VCVTSS2SD 5, logic 1 on p015; [AF-IT] Golden Cove: DIVSD 13-15 (lower end).
        fp: FpModel {
            add: 3.0,
            mul: 4.0,
            fma: 4.0,
            div: 13.0,
            cvt: 5.0,
            misc: 1.0,
            ports: 3.0,
        },
    },
    // Arm Cortex-A72.
    CoreModel {
        name: "cortex-a72",
        target: Target::Aarch64,
        alu: 1.0,           // [ARM-SOG] A72: ALU basic 1
        alu_complex: 2.0,   // [ARM-SOG] A72: ALU shifted/extended register 2
        lea_scaled: 2.0,    // no scaled `lea` on this target
        reg_move: 1.0,      // [ARM-SOG] A72: MOV is an ALU op (no elimination)
        mul: 3.0,           // [ARM-SOG] A72: MUL W 3
        mul_high: 6.0,      // [ARM-SOG] A72: UMULH 6
        div: 4.0,           // [ARM-SOG] A72: UDIV W 4-12 (lower end)
        load: 4.0,          // [ARM-SOG] A72: load 4
        store_forward: 4.0, // approx.: no published figure; taken = load-to-use
        issue_width: 3.0,   // [ARM-SOG] A72: 3-wide decode
        alu_ports: 2.0,     // [ARM-SOG] A72: 2 integer ALU pipes (I0/I1)
        eliminates_moves: false,
        unlaminates_indexed_stores: false,
        move_fusion_queue: 0,
        // [ARM-SOG] A72: FADD/FMUL 4, FMADD 7 (3 when only the addend is forwarded from another
        // FMADD), two FP pipes F0/F1; FDIV and conversions approx.: the lower ends of the Arm
        // cores here (N1/V2 [ARM-SOG]); LLVM 14 costs the A72 with its Cortex-A57 model
        // (FADD/FMUL 5, FMADD 9, FDIV 32), so llvm-mca reads A72 float chains ~25 % slower.
        fp: FpModel {
            add: 4.0,
            mul: 4.0,
            fma: 7.0,
            div: 6.0,
            cvt: 3.0,
            misc: 2.0,
            ports: 2.0,
        },
    },
    // Cavium ThunderX2 (the original measurements' AArch64 core).
    CoreModel {
        name: "thunderx2t99",
        target: Target::Aarch64,
        alu: 1.0,           // LLVM AArch64SchedThunderX2T99.td: ALU 1
        alu_complex: 2.0,   // LLVM AArch64SchedThunderX2T99.td: shifted-operand ALU 2
        lea_scaled: 2.0,    // no scaled `lea` on this target
        reg_move: 1.0,      // same file: MOV is an ALU op
        mul: 4.0,           // same file: MUL 4
        mul_high: 5.0,      // same file: UMULH 5
        div: 12.0,          // same file: DIV 12- (lower end)
        load: 4.0,          // same file: load 4
        store_forward: 4.0, // approx.: taken = load-to-use
        issue_width: 4.0,   // same file: IssueWidth 4
        alu_ports: 3.0,     // same file: 3 integer ALU pipes
        eliminates_moves: false,
        unlaminates_indexed_stores: false,
        move_fusion_queue: 0,
        // LLVM AArch64SchedThunderX2T99.td (llvm-mca -mcpu=thunderx2t99 -instruction-tables,
        // LLVM 14): FADD/FMUL/FMADD 6, FDIV D 23 (S 16: lower end), SCVTF/FCVT 7, FMOV/FCSEL 4,
        // two FP pipes.
        fp: FpModel {
            add: 6.0,
            mul: 6.0,
            fma: 6.0,
            div: 16.0,
            cvt: 7.0,
            misc: 4.0,
            ports: 2.0,
        },
    },
    // Arm Neoverse N1.
    CoreModel {
        name: "neoverse-n1",
        target: Target::Aarch64,
        alu: 1.0,           // [ARM-SOG] N1: ALU basic 1
        alu_complex: 2.0,   // [ARM-SOG] N1: ALU shifted register 2
        lea_scaled: 2.0,    // no scaled `lea` on this target
        reg_move: 1.0,      // [ARM-SOG] N1: MOV is an ALU op (no elimination documented)
        mul: 2.0,           // [ARM-SOG] N1: MUL W 2
        mul_high: 4.0,      // [ARM-SOG] N1: UMULH 4
        div: 5.0,           // [ARM-SOG] N1: UDIV W 5-12 (lower end)
        load: 4.0,          // [ARM-SOG] N1: load 4
        store_forward: 4.0, // approx.: taken = load-to-use
        issue_width: 4.0,   // [ARM-SOG] N1: 4-wide decode
        alu_ports: 3.0,     // [ARM-SOG] N1: 3 integer pipes
        eliminates_moves: false,
        unlaminates_indexed_stores: false,
        move_fusion_queue: 0,
        // [ARM-SOG] N1: FADD 2, FMUL 3, FMADD 4, FDIV D 7-15 (lower end), FCVT 3, FMOV/FNEG/
        // FCSEL 2, two FP pipes V0/V1 (LLVM 19's neoverse-n1 agrees).
        fp: FpModel {
            add: 2.0,
            mul: 3.0,
            fma: 4.0,
            div: 7.0,
            cvt: 3.0,
            misc: 2.0,
            ports: 2.0,
        },
    },
    // Arm Neoverse V2.
    CoreModel {
        name: "neoverse-v2",
        target: Target::Aarch64,
        alu: 1.0,           // [ARM-SOG] V2: ALU basic 1
        alu_complex: 1.0,   // [ARM-SOG] V2: shifted register 1 (LSL #0-4) .. 2: lower end
        lea_scaled: 1.0,    // no scaled `lea` on this target
        reg_move: 0.0,      // [ARM-SOG] V2: register MOVs handled at rename (zero latency)
        mul: 2.0,           // [ARM-SOG] V2: MUL 2
        mul_high: 3.0,      // [ARM-SOG] V2: UMULH 3
        div: 5.0,           // [ARM-SOG] V2: UDIV 5-12 (lower end)
        load: 4.0,          // [ARM-SOG] V2: load 4
        store_forward: 4.0, // approx.: taken = load-to-use
        issue_width: 8.0, // [ARM-SOG] V2: 6-wide decode, 8 MOPs/cycle from the MOP cache: upper end as floor
        alu_ports: 6.0,   // [ARM-SOG] V2: 6 integer ALUs (4 simple + 2 complex)
        eliminates_moves: true,
        unlaminates_indexed_stores: false,
        move_fusion_queue: 0,
        // [ARM-SOG] V2: FADD 2, FMUL 3, FMADD 4, FDIV D 5-13 (lower end), FCVT/SCVTF 3, FMOV/
        // FNEG/FCSEL 2, four FP pipes V0-V3 (LLVM 19's neoverse-v2 agrees but FDIV 15).
        fp: FpModel {
            add: 2.0,
            mul: 3.0,
            fma: 4.0,
            div: 5.0,
            cvt: 3.0,
            misc: 2.0,
            ports: 4.0,
        },
    },
    // IBM z15 (the CPU llvm-mca costs s390x on; see `crate::mca`).
    CoreModel {
        name: "z15",
        target: Target::S390x,
        alu: 1.0, // [LLVM-Z15] AR/XRK/AFI/SRLK 1; RLL 6 there, [GCC-Z15] as AR: lower end
        alu_complex: 1.0, // [LLVM-Z15] LA/LAY with index 1 (no slower ALU form in the kernels)
        lea_scaled: 1.0, // no scaled `lea` on this target
        reg_move: 1.0, // [LLVM-Z15] LR/LGR 1 on FXa: no move elimination modelled
        mul: 6.0, // [GCC-Z15] msgr 6 .. [LLVM-Z15] MSGR 7, MSGRKC 8: lower end
        mul_high: 8.0, // [LLVM-Z15] MLGR 8 .. [GCC-Z15] 11: lower end
        div: 20.0, // [GCC-Z15] dlgr 20 .. [LLVM-Z15] DLGR 30: lower end
        load: 4.0, // [LLVM-Z15] LSULatency 4
        store_forward: 4.0, // approx.: no published figure ([IBM-Z15]); taken = load-to-use
        issue_width: 6.0, // [IBM-Z15] two groups of three per cycle; [LLVM-Z15] IssueWidth 6
        alu_ports: 2.0, // [LLVM-Z15], [GCC-Z15]: arithmetic, logic, shifts, moves on 2 FXa
        eliminates_moves: false,
        unlaminates_indexed_stores: false,
        move_fusion_queue: 0,
        // [LLVM-Z15] (llvm-mca -mcpu=z15 -instruction-tables): ADBR/WFADB/MDBR/WFMDB/MADBR/WFMADB
        // 6, DDBR/WFDDB/SQDBR 30, CDGBR 7, LGDR/CDBR 3, LDR/LDGR/LCDBR 1..3 (lower end 1), two
        // vector/float units.
        fp: FpModel {
            add: 6.0,
            mul: 6.0,
            fma: 6.0,
            div: 30.0,
            cvt: 7.0,
            misc: 1.0,
            ports: 2.0,
        },
    },
];

/// The core models with a latency table for `target` (empty for riscv64).
pub fn core_models(target: Target) -> impl Iterator<Item = &'static CoreModel> {
    MODELS.iter().filter(move |m| m.target == target)
}

/// The model named `name` for `target`.
pub fn core_model(target: Target, name: &str) -> Option<&'static CoreModel> {
    core_models(target).find(|m| m.name == name)
}
