//! Execution-port layouts of the x86 cores with a latency table, for the **port-group bound**:
//! a loop whose uops can only run on a few ports cannot go faster than those ports drain them.
//!
//! Each uop of an instruction falls into a [`UopClass`]; a core's [`PortLayout`] gives each
//! class the set of ports that can execute it. For any set `P` of ports, every uop whose
//! allowed ports all lie in `P` must run on `P`, so one iteration needs at least
//! `uops(⊆ P) / |P|` cycles; the bound is the maximum over all `P` ([`port_bound`]). That
//! covers single classes (shifts on ports 0 and 6: `shifts / 2`), unions sharing ports (shifts ∪
//! branches ∪ flag consumers on 0 and 6) and all integer ALU work (every ALU port). By the
//! max-flow/min-cut duality of assigning uops to ports it is also the exact throughput limit of
//! the port assignment alone (issue width, latencies and the front end aside).
//!
//! Sources, cited by key beside each layout:
//! - **[INT-OPT]** Intel *64 and IA-32 Architectures Optimization Reference Manual*: the
//!   Skylake client table of dispatch ports (port 0: ALU, shift, branch 2; port 1: ALU, fast
//!   LEA, slow integer ops incl. `imul`; port 5: ALU, fast LEA; port 6: ALU, shift, branch 1;
//!   ports 2/3 load + store address, 7 store address, 4 store data) and the Golden Cove table
//!   (integer ALU on ports 0, 1, 5, 6, 10; shifts and branches on 0 and 6; multiply on 1;
//!   loads on 2, 3, 11; store address 7, 8; store data 4, 9).
//! - **[AF-IT]** Agner Fog, *Instruction tables*: per-instruction ports on Skylake
//!   (`ROR`/`RORX`/`SHR`/`SHRX` p06; `ADC`/`SBB r,r`, `CMOVcc`, `SETcc` p06; `IMUL r,r` p1;
//!   `MUL r64`/`MULX` two uops p1 + p5; `LEA` two components p15, three components p1; `ANDN`
//!   p15; `POPCNT`/`LZCNT`/`TZCNT` p1).
//! - **[LLVM-SKL]**, **[LLVM-SPR]**, **[LLVM-ZN3]**, **[LLVM-ZN4]**: LLVM's scheduling models
//!   `X86SchedSkylakeClient.td`, `X86SchedSapphireRapids.td`, `X86ScheduleZnver3.td`,
//!   `X86ScheduleZnver4.td`, as printed per instruction by `llvm-mca -instruction-tables`
//!   (LLVM 14 for `znver3`, LLVM 19 for the others): on Zen 3/4 shifts and rotates (also
//!   `RORX`/`SHRX`) on ALU1/ALU2, `IMUL`/`MULX` on ALU1, `CMOVcc`/`SETcc` on ALU0/ALU3,
//!   branches on ALU0 or the branch unit BRU1, three AGUs, two store pipes.
//! - **[AMD-SOG]** AMD *Software Optimization Guide* for family 19h (pub. 56665): four integer
//!   ALUs, three AGUs, up to three loads and two stores per cycle.
//! - **[BR-P6]** Intel's optimization manual names port 6 the primary branch unit and port 0
//!   the second; on the Skylake family the port-0 unit runs only predicted-not-taken
//!   conditional branches, so a predicted-taken branch (a loop's back edge) executes on port 6
//!   (P. Cordes, answer to Stack Overflow question 50984007, "What exactly happens when a
//!   Skylake CPU mispredicts a branch?").
//! - **[EXP-P6]** `LOOPS_FILE=$PWD/crates/cost/experiments/probes/glc_port_probes.txt cargo test
//!   --release --workspace --test experiments zen4_order_asm::loops_file -- --ignored --nocapture`
//!   on this project's Intel host with AMX (medians in `glc_port_probes.measured.tsv`): `n`
//!   add chains and the loop's fused
//!   `dec`/`jnz` run at 1.003 / 1.009 / 1.316 / 1.375 / 1.642 cycles for n = 2…6; the
//!   simulation with the back edge on port 6 gives 1.000 / 1.000 / 1.143–1.161 / 1.286–1.376 /
//!   1.455–1.540, with it on ports 0 and 6 1.000–1.179 / 1.237–1.455 / 1.364–1.562 / … (with and
//!   without whole-group allocation: `simulated_with` over the same file).
//!
//! - **\[EXP\]** `cargo test --release --workspace --test experiments port_throughput_asm:: --
//!   --ignored --nocapture` on this project's Emerald Rapids host (Golden Cove family), ratios to
//!   a dependent `add` chain: independent `add` and 32-bit `lea` (two or three components)
//!   ≈ 4.5 per cycle with the loop's branch (5 ALU ports), `rorx` 12 per 6.5 cycles with the
//!   fused loop branch (ports 0 and 6 only), `andn` ≈ 3 per cycle (LLVM's p1/p5/p10), a
//!   dependent three-component `lea` 1 cycle. It checks the tables; no figure is taken from it.
//!
//! - **[EXP-ZST]** `cargo test --release --workspace --test experiments bigint_loop_asm::mul_add_loop_variants_zen --
//!   --ignored --nocapture` on this project's Zen 4 host (EPYC,
//!   family 25 model 17): 8 `movl $1, r`
//!   plus `dec`/`jnz` run at 2.25 cycles per iteration (9 uops on 4 ALUs); one integer store
//!   added makes it 2.50, two 2.75, a load 2.25. Each integer store takes an ALU issue slot
//!   for its data (its address goes to an AGU). Measured on Zen 4 only. Those stores were
//!   indexed (`(%r12,%rcx,4)`); [EXP-Z4Q] separates the two forms.
//! - **[EXP-Z4Q]** `LOOPS_FILE=$PWD/crates/cost/experiments/probes/zen4_probes.txt cargo test --release --workspace
//!   --test experiments zen4_order_asm::loops_file -- --ignored --nocapture` on the same
//!   Zen 4 host (quiet runs, best of 7):
//!   n independent `add`s + fused `dec`/`jnz` run at exactly (n + 1)/4 cycles (the fused pair
//!   takes an ALU slot); 8 `add`s + `dec`/`jnz` + one indexed store 2.503, + one base+displacement
//!   store 2.253 (no ALU slot); a lone `jcc` and a fused `test`/`cmp`+`jcc` take no ALU slot
//!   (`sub` + `test`/`jge` 2.503 where the fused `sub`/`jge` alone is 2.253 with 8 `add`s).
//! - **[EXP-ZFS]** `LOOPS_FILE=$PWD/crates/cost/experiments/probes/zen4_store_probes.txt cargo test
//!   --release --workspace --test experiments zen4_order_asm::loops_file -- --ignored --nocapture` on
//!   the same Zen 4 host (best of 7, three runs, load average ≈ 12, the quiet run's figures):
//!   8 stores of an xmm register (`vmovsd`, `movdqu`, base+displacement or indexed, to distinct
//!   or to one 64-byte line) take 8.00 cycles an iteration: one float store a cycle, as
//!   LLVM's `Zn4FPSt` has it. Not modelled, for want of the addresses: 8 integer stores take
//!   8.00 cycles to distinct lines but 4.00 to one line (two a cycle only within a line), 4
//!   float + 4 integer stores to distinct lines 8.00; 12 128-bit loads into xmm registers
//!   6.00 (two a cycle, LLVM's `Zn4FP45`), 12 of them + 4 integer loads 6.5–7.9.
//!
//! Where the sources differ or are unsure the *larger* port set is taken, so the bound stays a
//! floor: Golden Cove's `LEA` is given every ALU port (LLVM 19 models it on port 1 only, which
//! \[EXP\] refutes for the 32-bit forms Cranelift emits),
//! every `ADC`/`CMOVcc` one uop, a predicted-taken branch both branch ports (Intel executes taken
//! branches on port 6 only, [BR-P6]: the schedule simulation, which is not a floor, gives the
//! loop's back edge [`UopClass::TakenBranch`] there, the bound does not), AMD's `ADC` any ALU
//! (LLVM models it occupying all four).

/// The execution resource an x86 uop needs, as far as the port layouts distinguish them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UopClass {
    /// Simple integer operation (add, logic, `not`, `mov` immediate, extensions).
    Alu,
    /// Shift or rotate, including BMI2's `rorx`/`shrx`/`shlx`/`sarx`.
    Shift,
    /// `lea` with one or two address components.
    Lea,
    /// `lea` with three components or a scaled index.
    LeaComplex,
    /// Integer multiply (the low half; `imul r, r`).
    Mul,
    /// The extra uop of a widening multiply (`mul r64`'s or `mulx`'s high half).
    MulHigh,
    /// BMI1's `andn`, which Intel cores run on fewer ports than plain logic.
    AndNot,
    /// Slow integer operations: `popcnt`, `lzcnt`, `tzcnt`, `bsf`, `bsr`, division.
    SlowInt,
    /// Consumers of the carry/condition flags: `adc`, `sbb`, `adcx`, `adox`, `cmovcc`, `setcc`.
    FlagsConsumer,
    /// A branch (or a compare fused with it).
    Branch,
    /// A load (address generation and the load pipe).
    Load,
    /// A store's address part.
    StoreAddress,
    /// A store's data part.
    StoreData,
    /// The data part of a store whose address has an index register (`(%rdi,%rcx,4)`); on
    /// layouts that do not list it, a [`UopClass::StoreData`].
    IndexedStoreData,
    /// The data part of a store of a vector/float register (`movsd %xmm1, (%rax)`, `movdqu`):
    /// on Zen 3/4 it leaves through the floating-point unit's one store-data pipe; on layouts
    /// that do not list it, a [`UopClass::StoreData`].
    FpStoreData,
    /// A branch fused with an arithmetic instruction that also writes a register (`dec`/`jnz`,
    /// `sub`/`jge`; not `test`/`cmp`, which write only the flags); on layouts that do not list
    /// it, a [`UopClass::Branch`].
    ArithBranch,
    /// The branch that closes the loop, predicted taken every iteration; on layouts that do
    /// not list it, a [`UopClass::Branch`].
    TakenBranch,
    /// [`UopClass::TakenBranch`] fused with an arithmetic instruction that writes a register;
    /// on layouts that do not list it, a [`UopClass::ArithBranch`].
    TakenArithBranch,
    /// Floating-point add, subtract, minimum, maximum.
    FpAdd,
    /// Floating-point multiply or fused multiply-add.
    FpMul,
    /// Floating-point divide or square root.
    FpDiv,
    /// Conversions between integer and floating point or between widths, rounding.
    FpCvt,
    /// Vector logic, shuffles, blends, compares, transfers between register files.
    FpMisc,
}

impl UopClass {
    /// The class a layout uses for `self` when it does not list it.
    fn fallback(self) -> Option<UopClass> {
        match self {
            UopClass::IndexedStoreData | UopClass::FpStoreData => Some(UopClass::StoreData),
            UopClass::ArithBranch => Some(UopClass::Branch),
            UopClass::TakenBranch => Some(UopClass::Branch),
            UopClass::TakenArithBranch => Some(UopClass::ArithBranch),
            _ => None,
        }
    }

    /// The class of `self` when it is the loop's predicted-taken branch.
    pub fn taken(self) -> UopClass {
        match self {
            UopClass::Branch => UopClass::TakenBranch,
            UopClass::ArithBranch => UopClass::TakenArithBranch,
            other => other,
        }
    }
}

/// Which ports a class may use, as a bit set over [`PortLayout::ports`].
pub type PortMask = u32;

/// One core's execution ports and the ports of each uop class.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortLayout {
    /// The core model's name (as in [`super::models::CoreModel::name`]).
    pub core: &'static str,
    /// Port names, bit `i` of a [`PortMask`] is `ports[i]`.
    pub ports: &'static [&'static str],
    /// The ports of each class; a class missing here constrains nothing.
    pub classes: &'static [(UopClass, PortMask)],
}

impl PortLayout {
    /// The ports `class` may use (0: not modelled on this core); a class the layout does not
    /// list takes its fallback's ports ([`UopClass::IndexedStoreData`], [`UopClass::ArithBranch`]).
    pub fn mask(&self, class: UopClass) -> PortMask {
        match self.classes.iter().find(|(c, _)| *c == class) {
            Some(&(_, m)) => m,
            None => class.fallback().map_or(0, |f| self.mask(f)),
        }
    }

    /// The names of the ports in `mask`.
    pub fn names(&self, mask: PortMask) -> Vec<&'static str> {
        self.ports
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect()
    }
}

/// Bit set of ports by their index.
const fn ports(indices: &[u32]) -> PortMask {
    let mut mask = 0;
    let mut i = 0;
    while i < indices.len() {
        mask |= 1 << indices[i];
        i += 1;
    }
    mask
}

// Skylake: p0 p1 p2 p3 p4 p5 p6 p7 (bits 0..7 = port numbers).
const SKL_ALU: PortMask = ports(&[0, 1, 5, 6]);
const SKL_P06: PortMask = ports(&[0, 6]);

// Golden Cove: p0 p1 p2 p3 p4 p5 p6 p7 p8 p9 p10 p11 (bits = port numbers).
const GLC_ALU: PortMask = ports(&[0, 1, 5, 6, 10]);
const GLC_P06: PortMask = ports(&[0, 6]);

// Zen 3/4: ALU0..3 (bits 0..3), BRU1 (4), AGU0..2 (5..7), store pipes ST0/ST1 (8, 9),
// floating-point pipes FP0..FP3 (10..13), the floating-point store-data pipe FPSt (14).
/// Zen 3/4's four integer ALU pipes (each with its own scheduler queue).
pub const ZEN_ALU: PortMask = ports(&[0, 1, 2, 3]);
const ZEN_AGU: PortMask = ports(&[5, 6, 7]);
const ZEN_PORTS: &[&str] = &[
    "ALU0", "ALU1", "ALU2", "ALU3", "BRU1", "AGU0", "AGU1", "AGU2", "ST0", "ST1", "FP0", "FP1",
    "FP2", "FP3", "FPSt",
];
/// A Zen 3/4 class table: the integer classes given, then the floating-point classes the two
/// cores share.
macro_rules! zen_classes {
    ($($integer:expr,)*) => {
        &[
            $($integer,)*
            // The store of a float/vector register: its data on the FP unit's one store-data
            // pipe ([LLVM-ZN3]/[LLVM-ZN4]: `Zn3FPSt`/`Zn4FPSt`, one per `vmovsd`/`movdqu`
            // store; [EXP-ZFS]).
            (UopClass::FpStoreData, ports(&[14])),
            // [LLVM-ZN3]/[LLVM-ZN4], `-instruction-tables`: VMULSD and VFMADD*SD on FP0/FP1,
            // VADDSD on FP2/FP3, VDIVSD/VSQRTSD on FP1, VCVTSI2SD on FP2/FP3, logic on any of
            // FP0-3; [AMD-SOG] four FP pipes, two multiply, two add.
            (UopClass::FpMul, ports(&[10, 11])),
            (UopClass::FpAdd, ports(&[12, 13])),
            (UopClass::FpDiv, ports(&[11])),
            (UopClass::FpCvt, ports(&[12, 13])),
            (UopClass::FpMisc, ports(&[10, 11, 12, 13])),
        ]
    };
}

const ZEN_CLASSES: &[(UopClass, PortMask)] = zen_classes![
    (UopClass::Alu, ZEN_ALU),              // [AMD-SOG] 4 integer ALUs
    (UopClass::Shift, ports(&[1, 2])),     // [LLVM-ZN3]/[LLVM-ZN4] ALU1, ALU2
    (UopClass::Lea, ZEN_ALU | ZEN_AGU),    // [LLVM-ZN4] 2-component LEA on the AGUs (floor: either)
    (UopClass::LeaComplex, ZEN_ALU),       // [LLVM-ZN4] 3-component LEA on the ALUs
    (UopClass::Mul, ports(&[1])),          // [LLVM-ZN3]/[LLVM-ZN4] IMUL/MULX on ALU1
    (UopClass::MulHigh, ZEN_ALU),          // [AF-IT] Zen 3 MUL r64 / MULX: reciprocal throughput 1
    (UopClass::AndNot, ZEN_ALU),           // [LLVM-ZN3]/[LLVM-ZN4] any ALU
    (UopClass::SlowInt, ZEN_ALU),          // floor: any ALU
    (UopClass::FlagsConsumer, ZEN_ALU),    // floor: CMOV/SETcc on ALU0/3 [LLVM-ZN4], ADC on all
    (UopClass::Branch, ports(&[0, 4])),    // [LLVM-ZN3]/[LLVM-ZN4] ALU0 or BRU1
    (UopClass::Load, ZEN_AGU),             // [AMD-SOG] 3 AGUs, 3 loads per cycle
    (UopClass::StoreAddress, ZEN_AGU),     // [AMD-SOG] stores use an AGU too
    (UopClass::StoreData, ports(&[8, 9])), // [AMD-SOG] 2 stores per cycle
];

// Zen 4: as Zen 3, except for what [EXP-Z4Q] measured: an indexed store's data takes one of
// the four ALU pipes (a base+displacement store's does not), a fused `dec`/`sub`+`jcc` takes an
// ALU slot, and a lone `jcc` or a fused `test`/`cmp`+`jcc` takes none.
const ZEN4_CLASSES: &[(UopClass, PortMask)] = zen_classes![
    (UopClass::Alu, ZEN_ALU),              // [AMD-SOG] 4 integer ALUs
    (UopClass::Shift, ports(&[1, 2])),     // [LLVM-ZN4] ALU1, ALU2
    (UopClass::Lea, ZEN_ALU | ZEN_AGU),    // [LLVM-ZN4] (floor: either)
    (UopClass::LeaComplex, ZEN_ALU),       // [LLVM-ZN4] 3-component LEA on the ALUs
    (UopClass::Mul, ports(&[1])),          // [LLVM-ZN4] IMUL/MULX on ALU1
    (UopClass::MulHigh, ZEN_ALU),          // as Zen 3 ([AF-IT])
    (UopClass::AndNot, ZEN_ALU),           // [LLVM-ZN4] any ALU
    (UopClass::SlowInt, ZEN_ALU),          // floor: any ALU
    (UopClass::FlagsConsumer, ZEN_ALU),    // floor, as Zen 3
    (UopClass::Branch, ports(&[4])),       // [EXP-Z4Q] no ALU slot (LLVM-ZN4: ALU0 or BRU1)
    (UopClass::ArithBranch, ZEN_ALU),      // [EXP-Z4Q] one ALU slot: n adds + dec/jnz = (n+1)/4
    (UopClass::Load, ZEN_AGU),             // [AMD-SOG] 3 AGUs
    (UopClass::StoreAddress, ZEN_AGU),     // [AMD-SOG] stores use an AGU too
    (UopClass::StoreData, ports(&[8, 9])), // [EXP-Z4Q] base+displacement: no ALU slot
    (UopClass::IndexedStoreData, ZEN_ALU), // [EXP-ZST], [EXP-Z4Q] an ALU slot per indexed store
];

/// The port layouts, one per x86 core of [`super::models::MODELS`].
pub const LAYOUTS: &[PortLayout] = &[
    PortLayout {
        core: "skylake",
        ports: &["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"],
        classes: &[
            (UopClass::Alu, SKL_ALU),                    // [INT-OPT] p0156
            (UopClass::Shift, SKL_P06),                  // [INT-OPT], [AF-IT] p06
            (UopClass::Lea, ports(&[1, 5])),             // [INT-OPT] fast LEA p15
            (UopClass::LeaComplex, ports(&[1])),         // [AF-IT] 3-component LEA p1
            (UopClass::Mul, ports(&[1])),                // [INT-OPT], [AF-IT] IMUL p1
            (UopClass::MulHigh, ports(&[5])),            // [AF-IT] MUL r64 / MULX: p1 + p5
            (UopClass::AndNot, ports(&[1, 5])),          // [AF-IT], [LLVM-SKL] ANDN p15
            (UopClass::SlowInt, ports(&[1])),            // [INT-OPT] slow int p1
            (UopClass::FlagsConsumer, SKL_P06),          // [AF-IT] ADC/SBB/CMOV/SETcc p06
            (UopClass::Branch, SKL_P06),                 // [INT-OPT] branch units p6, p0
            (UopClass::Load, ports(&[2, 3])),            // [INT-OPT] loads p23
            (UopClass::StoreAddress, ports(&[2, 3, 7])), // [INT-OPT] STA p237
            (UopClass::StoreData, ports(&[4])),          // [INT-OPT] STD p4
            (UopClass::FpAdd, ports(&[0, 1])),           // [LLVM-SKL] VADDSD p01
            (UopClass::FpMul, ports(&[0, 1])),           // [LLVM-SKL] VMULSD, VFMADD p01
            (UopClass::FpDiv, ports(&[0])),              // [LLVM-SKL] VDIVSD p0
            (UopClass::FpCvt, ports(&[0, 1])),           // [LLVM-SKL] VCVT* p01 (+ p5)
            (UopClass::FpMisc, ports(&[0, 1, 5])),       // [LLVM-SKL] logic p015
        ],
    },
    PortLayout {
        core: "znver3",
        ports: ZEN_PORTS,
        classes: ZEN_CLASSES,
    },
    PortLayout {
        core: "znver4",
        ports: ZEN_PORTS,
        classes: ZEN4_CLASSES,
    },
    PortLayout {
        core: "sapphirerapids",
        ports: &[
            "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10", "p11",
        ],
        classes: &[
            (UopClass::Alu, GLC_ALU),                  // [INT-OPT] p0 1 5 6 10
            (UopClass::Shift, GLC_P06),                // [INT-OPT], [LLVM-SPR] p06
            (UopClass::Lea, GLC_ALU),                  // [INT-OPT] LEA on every ALU port
            (UopClass::LeaComplex, GLC_ALU),           // [EXP] every ALU port (LLVM-SPR: p1)
            (UopClass::Mul, ports(&[1])),              // [INT-OPT], [LLVM-SPR] p1
            (UopClass::MulHigh, ports(&[5])),          // [LLVM-SPR] MULX p1 + p5
            (UopClass::AndNot, ports(&[1, 5, 10])),    // [LLVM-SPR] ANDN p1 5 10; [EXP] 3 per cycle
            (UopClass::SlowInt, ports(&[1])),          // [LLVM-SPR] p1
            (UopClass::FlagsConsumer, GLC_P06),        // [LLVM-SPR] ADC/CMOV/SETcc p06
            (UopClass::Branch, GLC_P06),               // [INT-OPT] branch units p0, p6
            (UopClass::TakenBranch, ports(&[6])),      // [BR-P6]; [EXP-P6]
            (UopClass::TakenArithBranch, ports(&[6])), // [BR-P6]; [EXP-P6]
            (UopClass::Load, ports(&[2, 3, 11])),      // [INT-OPT] 3 load ports
            (UopClass::StoreAddress, ports(&[7, 8])),  // [INT-OPT] STA p78
            (UopClass::StoreData, ports(&[4, 9])),     // [INT-OPT] STD p49
            (UopClass::FpAdd, ports(&[1, 5])),         // [LLVM-SPR] VADDSD p15
            (UopClass::FpMul, ports(&[0, 1])),         // [LLVM-SPR] VMULSD, VFMADD p01
            (UopClass::FpDiv, ports(&[0])),            // [LLVM-SPR] VDIVSD p0
            (UopClass::FpCvt, ports(&[0, 1, 5])),      // [LLVM-SPR] VCVT* p01 + p5: floor
            (UopClass::FpMisc, ports(&[0, 1, 5])),     // [LLVM-SPR] logic p015
        ],
    },
];

/// The port layout of the core model named `core`, if it has one (x86 cores only).
pub fn port_layout(core: &str) -> Option<&'static PortLayout> {
    LAYOUTS.iter().find(|l| l.core == core)
}

/// The port-group bound of one iteration: cycles, and the port set that attains it.
#[derive(Clone, Debug, PartialEq)]
pub struct PortBound {
    /// Cycles per iteration.
    pub cycles: f64,
    /// The binding port set (empty when there are no uops).
    pub ports: Vec<&'static str>,
    /// Uops confined to that set.
    pub uops: usize,
}

/// `max over port sets P of uops(⊆ P) / |P|` for the uops of one iteration on `layout`.
/// Uops of a class the layout does not constrain count nowhere. Ties keep the smaller set.
pub fn port_bound(layout: &PortLayout, uops: impl IntoIterator<Item = UopClass>) -> PortBound {
    let mut per_mask: Vec<(PortMask, usize)> = Vec::new();
    for class in uops {
        let mask = layout.mask(class);
        if mask == 0 {
            continue;
        }
        match per_mask.iter_mut().find(|(m, _)| *m == mask) {
            Some((_, n)) => *n += 1,
            None => per_mask.push((mask, 1)),
        }
    }
    let mut best = PortBound {
        cycles: 0.0,
        ports: Vec::new(),
        uops: 0,
    };
    let mut best_set: PortMask = 0;
    // The maximum is attained at a union of the masks in use; enumerating those unions keeps
    // the search small whatever the number of ports.
    let mut unions: Vec<PortMask> = vec![0];
    for &(mask, _) in &per_mask {
        let grown: Vec<PortMask> = unions.iter().map(|u| u | mask).collect();
        for g in grown {
            if !unions.contains(&g) {
                unions.push(g);
            }
        }
    }
    for set in unions.into_iter().filter(|&s| s != 0) {
        let confined: usize = per_mask
            .iter()
            .filter(|(m, _)| m & !set == 0)
            .map(|(_, n)| n)
            .sum();
        let cycles = confined as f64 / f64::from(set.count_ones());
        let better = cycles > best.cycles + 1e-12
            || ((cycles - best.cycles).abs() <= 1e-12
                && cycles > 0.0
                && set.count_ones() < best_set.count_ones());
        if better {
            best = PortBound {
                cycles,
                ports: Vec::new(),
                uops: confined,
            };
            best_set = set;
        }
    }
    best.ports = layout.names(best_set);
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(core: &str) -> &'static PortLayout {
        port_layout(core).expect("layout exists")
    }

    #[test]
    fn every_x86_model_has_a_layout_and_every_class_a_port() {
        for m in crate::models::core_models(schedlab_backend::target::Target::X86_64) {
            let l = layout(m.name);
            for class in [
                UopClass::Alu,
                UopClass::Shift,
                UopClass::Lea,
                UopClass::LeaComplex,
                UopClass::Mul,
                UopClass::MulHigh,
                UopClass::AndNot,
                UopClass::SlowInt,
                UopClass::FlagsConsumer,
                UopClass::Branch,
                UopClass::Load,
                UopClass::StoreAddress,
                UopClass::StoreData,
            ] {
                let mask = l.mask(class);
                assert_ne!(mask, 0, "{} {class:?}", l.core);
                assert!(mask >> l.ports.len() == 0, "{} {class:?}", l.core);
            }
        }
    }

    #[test]
    fn n_shifts_take_n_over_two_cycles_on_intel_and_zen() {
        for core in ["skylake", "sapphirerapids", "znver3", "znver4"] {
            let b = port_bound(layout(core), std::iter::repeat_n(UopClass::Shift, 10));
            assert!((b.cycles - 5.0).abs() < 1e-9, "{core}: {b:?}");
            assert_eq!(b.ports.len(), 2, "{core}: {b:?}");
        }
    }

    #[test]
    fn unions_of_classes_sharing_ports_bind() {
        // Skylake: 4 shifts + 8 adds: p06 alone 2, all four ALU ports 12/4 = 3.
        let l = layout("skylake");
        let uops =
            std::iter::repeat_n(UopClass::Shift, 4).chain(std::iter::repeat_n(UopClass::Alu, 8));
        let b = port_bound(l, uops);
        assert!((b.cycles - 3.0).abs() < 1e-9, "{b:?}");
        assert_eq!(b.ports, vec!["p0", "p1", "p5", "p6"]);
        // Shifts, flag consumers and branches all on p06: (6 + 3 + 1) / 2 = 5.
        let uops = std::iter::repeat_n(UopClass::Shift, 6)
            .chain(std::iter::repeat_n(UopClass::FlagsConsumer, 3))
            .chain(std::iter::once(UopClass::Branch))
            .chain(std::iter::repeat_n(UopClass::Alu, 2));
        let b = port_bound(l, uops);
        assert!((b.cycles - 5.0).abs() < 1e-9, "{b:?}");
        assert_eq!(b.ports, vec!["p0", "p6"]);
        // Multiplies bind on p1 alone.
        let uops =
            std::iter::repeat_n(UopClass::Mul, 6).chain(std::iter::repeat_n(UopClass::Shift, 6));
        let b = port_bound(l, uops);
        assert!((b.cycles - 6.0).abs() < 1e-9, "{b:?}");
        assert_eq!(b.ports, vec!["p1"]);
    }

    #[test]
    fn stores_and_loads_have_their_own_ports() {
        // Golden Cove: 6 stores on two store-data ports = 3; 6 loads on three ports = 2.
        let l = layout("sapphirerapids");
        let uops = std::iter::repeat_n([UopClass::StoreAddress, UopClass::StoreData], 6)
            .flatten()
            .chain(std::iter::repeat_n(UopClass::Load, 6));
        let b = port_bound(l, uops);
        assert!((b.cycles - 3.0).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn zen4_indexed_stores_and_fused_arithmetic_branches_take_an_alu_slot() {
        // [EXP-Z4Q]: 8 `add`s + fused `dec`/`jnz` = 9 / 4 ALU slots; + one indexed store 10 / 4;
        // + one base+displacement store, a lone `jcc` or a fused `test`/`jcc`: no ALU slot.
        let zen4 = |extra: &[UopClass]| {
            let uops = std::iter::repeat_n(UopClass::Alu, 8)
                .chain([UopClass::ArithBranch])
                .chain(extra.iter().copied());
            port_bound(layout("znver4"), uops).cycles
        };
        assert!((zen4(&[]) - 2.25).abs() < 1e-9);
        let indexed = [UopClass::StoreAddress, UopClass::IndexedStoreData];
        assert!((zen4(&indexed) - 2.5).abs() < 1e-9);
        let plain = [UopClass::StoreAddress, UopClass::StoreData];
        assert!((zen4(&plain) - 2.25).abs() < 1e-9);
        assert!((zen4(&[UopClass::Branch]) - 2.25).abs() < 1e-9);
        // Zen 3 (not measured) keeps LLVM's ports: store data on the store pipes, a branch on
        // ALU0 or BRU1 whatever it is fused with: (8 + 1) / 5.
        let zen3 = std::iter::repeat_n(UopClass::Alu, 8).chain([
            UopClass::ArithBranch,
            UopClass::StoreAddress,
            UopClass::IndexedStoreData,
        ]);
        let zen3 = port_bound(layout("znver3"), zen3);
        assert!((zen3.cycles - 2.0).abs() < 1e-9, "{zen3:?}");
    }

    #[test]
    fn unlisted_classes_take_their_fallbacks_ports() {
        for l in LAYOUTS {
            assert_ne!(l.mask(UopClass::ArithBranch), 0, "{}", l.core);
            if l.core != "znver4" {
                assert_eq!(l.mask(UopClass::ArithBranch), l.mask(UopClass::Branch));
                assert_eq!(
                    l.mask(UopClass::IndexedStoreData),
                    l.mask(UopClass::StoreData)
                );
            }
            if !l.core.starts_with("znver") {
                assert_eq!(l.mask(UopClass::FpStoreData), l.mask(UopClass::StoreData));
            }
            // The loop's taken branch: port 6 on Golden Cove ([BR-P6]), elsewhere the ports of
            // the branch it is (a fused `dec`/`jnz` keeps Zen 4's ALU slot).
            if l.core == "sapphirerapids" {
                let p6 = 1 << 6;
                assert_eq!(l.mask(UopClass::TakenBranch), p6);
                assert_eq!(l.mask(UopClass::TakenArithBranch), p6);
            } else {
                assert_eq!(l.mask(UopClass::TakenBranch), l.mask(UopClass::Branch));
                assert_eq!(
                    l.mask(UopClass::TakenArithBranch),
                    l.mask(UopClass::ArithBranch)
                );
            }
        }
    }

    #[test]
    fn zen_float_stores_leave_through_one_pipe() {
        // [LLVM-ZN3]/[LLVM-ZN4], [EXP-ZFS]: 8 stores of an xmm register take 8 cycles on Zen 3/4
        // (one FP store-data pipe), 8 integer stores 4 (two store pipes); Intel's store-data
        // ports take both alike (Golden Cove: 8 / 2 ports = 4).
        let stores =
            |class: UopClass| std::iter::repeat_n([UopClass::StoreAddress, class], 8).flatten();
        for core in ["znver3", "znver4"] {
            let fp = port_bound(layout(core), stores(UopClass::FpStoreData));
            assert!((fp.cycles - 8.0).abs() < 1e-9, "{core}: {fp:?}");
            assert_eq!(fp.ports, vec!["FPSt"]);
            let int = port_bound(layout(core), stores(UopClass::StoreData));
            assert!((int.cycles - 4.0).abs() < 1e-9, "{core}: {int:?}");
        }
        let glc = port_bound(layout("sapphirerapids"), stores(UopClass::FpStoreData));
        assert!((glc.cycles - 4.0).abs() < 1e-9, "{glc:?}");
    }

    #[test]
    fn no_uops_no_bound() {
        let b = port_bound(layout("znver4"), std::iter::empty());
        assert_eq!(b.cycles, 0.0);
        assert!(b.ports.is_empty());
    }
}
