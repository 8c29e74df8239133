//! What an s390x instruction (llvm-objdump syntax, decoded as z15) reads, writes and costs.
//!
//! Operands are `R1, R2[, R3]`: the first is the destination except for stores, compares
//! and branches. Two-operand arithmetic (`ar`, `agr`, `afi`, `a`, `nilf`, …) also reads its
//! first operand; the three-operand forms (`ark`, `agrk`, `ahik`, `rll`, `srlk`, …), the
//! load/move/extend family (`lgr`, `llgfr`, `lrvr`, `lghi`, …) and loads do not. Memory
//! operands are `D(B)` or `D(X,B)` (index first, then base); a load or store whose only
//! address register is `%r15` (the stack pointer) addresses a stack slot. The shift and
//! rotate amount `D(B)` of `rll`, `sllg`, … is an address *computation*, not an access: its
//! base register is a data input. Even/odd register pairs: `mlgr`/`mlg`/`mgrk` write both
//! halves of the 128-bit product, `dlgr`/`dsgr` read and write the pair. The condition code
//! is [`Loc::Flags`]: set by arithmetic, logic, compares and `lt*`, read by conditional
//! branches, `loc*`/`sel*` and the carry forms `alc*`/`slb*`.

use super::{Effects, Loc, MemRef, OpClass};

/// `%r15`, the stack pointer of the s390x ELF ABI.
const SP: u16 = 15;

/// Register number of an operand: `%r0`–`%r15` → 0–15, `%f0`–`%f15` and `%v0`–`%v31` → 32–63
/// (the FPRs are the leftmost halves of the first 16 vector registers), access registers
/// `%a0`–`%a15` → 64–79; `None` for immediates, addresses and anything else.
fn reg(op: &str) -> Option<u16> {
    let name = op.trim().strip_prefix('%')?;
    let (class, num) = name.split_at_checked(1)?;
    let n: u16 = num.parse().ok()?;
    match class {
        "r" if n < 16 => Some(n),
        "f" if n < 16 => Some(32 + n),
        "v" if n < 32 => Some(32 + n),
        "a" if n < 16 => Some(64 + n),
        _ => None,
    }
}

/// `D(B)`, `D(X,B)` or `D(L,B)` split into its displacement text and the registers inside the
/// parentheses (index first); `None` unless the operand has that shape.
fn address(op: &str) -> Option<(&str, Vec<Option<u16>>)> {
    let open = op.find('(')?;
    let inner = op[open + 1..].strip_suffix(')')?;
    let regs = inner.split(',').map(reg).collect();
    Some((&op[..open], regs))
}

/// Whether `op` is a memory operand (`D(B)`, `D(X,B)`).
fn is_mem(op: &str) -> bool {
    address(op).is_some()
}

/// A memory operand's address registers and which memory it names.
fn mem(op: &str) -> (Vec<Loc>, MemRef) {
    let Some((disp, regs)) = address(op) else {
        // PC-relative (`lgrl %r1, 0x1234`): a constant address, not the stack.
        return (Vec::new(), MemRef::Other);
    };
    let present: Vec<u16> = regs.iter().flatten().copied().collect();
    // `D(B)`: the base is the only register; `D(X,B)` with X = 0 prints as `D(0,B)`… or as
    // `D(B)`; any index other than none/0 makes it a non-stack access.
    let base = regs.last().copied().flatten();
    let index = if regs.len() >= 2 { regs[0] } else { None };
    let at = if base == Some(SP) && index.is_none() && present.len() == 1 {
        let off = if disp.is_empty() {
            Some(0)
        } else {
            super::parse_imm(disp)
        };
        off.map_or(MemRef::Other, MemRef::Stack)
    } else {
        MemRef::Other
    };
    (present.into_iter().map(Loc::Reg).collect(), at)
}

/// The shift/rotate family, whose last operand `D(B)` is an amount, not an address.
fn is_shift(m: &str) -> bool {
    matches!(
        m,
        "rll"
            | "rllg"
            | "sll"
            | "sllg"
            | "sllk"
            | "srl"
            | "srlg"
            | "srlk"
            | "sra"
            | "srag"
            | "srak"
            | "sla"
            | "slag"
            | "slak"
            | "sldl"
            | "srdl"
            | "slda"
            | "srda"
    )
}

/// Whether the instruction sets the condition code (see the module docs).
fn sets_cc(m: &str) -> bool {
    if is_shift(m) {
        return m.starts_with("sra") || m.starts_with("sla") || m == "slda" || m == "srda";
    }
    if m.starts_with("st") || m.starts_with("sel") || m == "sar" || m == "sfpc" {
        return false;
    }
    if matches!(m, "msc" | "msgc" | "msrkc" | "msgrkc" | "popcnt" | "flogr") {
        return true;
    }
    if m.starts_with('m') || m.starts_with('d') {
        return false;
    }
    let first = m.chars().next().unwrap_or(' ');
    match first {
        'a' | 's' | 'n' | 'o' | 'x' | 'c' | 't' => true,
        'r' => matches!(m, "risbg" | "rnsbg" | "rosbg" | "rxsbg"),
        'l' => ["lt", "lc", "lp", "ln"].iter().any(|p| m.starts_with(p)) && m != "lcbb",
        _ => false,
    }
}

/// Whether the instruction reads the condition code.
fn reads_cc(m: &str) -> bool {
    m.starts_with("alc")
        || m.starts_with("slb")
        || m.starts_with("loc")
        || m.starts_with("stoc")
        || m.starts_with("sel")
        || m == "ipm"
}

/// Latency class of the computation.
fn class_of(m: &str) -> OpClass {
    match m {
        "mlgr" | "mlg" | "mlr" | "ml" | "mgrk" | "mg" | "mr" | "m" | "mfy" => OpClass::MulHigh,
        "dlgr" | "dlg" | "dlr" | "dl" | "dsgr" | "dsg" | "dsgfr" | "dsgf" | "dr" | "d" => {
            OpClass::Div
        }
        "lr" | "lgr" => OpClass::Move,
        _ if m.starts_with("ms") || matches!(m, "mhi" | "mghi" | "mh" | "mhy" | "mgh") => {
            OpClass::Mul
        }
        _ => OpClass::Alu,
    }
}

/// Instructions that write an even/odd register pair (`R1`, `R1 + 1`).
fn writes_pair(m: &str) -> bool {
    matches!(m, "flogr" | "sldl" | "srdl" | "slda" | "srda") || {
        let c = class_of(m);
        c == OpClass::MulHigh || c == OpClass::Div
    }
}

/// Decodes a branch (`j*`, `br*`, `bc*`, compare-and-branch, calls), `None` if not one.
fn branch(m: &str, ops: &[&str]) -> Option<Effects> {
    let compare_and_branch = m.len() >= 4
        && m.starts_with('c')
        && !m.starts_with("cs")
        && (m.contains("rj") || m.contains("ij") || m.contains("rb") || m.contains("ib"));
    let plain = m.starts_with('j')
        || matches!(
            m,
            "br" | "brc" | "brcl" | "bc" | "bcr" | "b" | "nop" | "nopr" | "bi" | "bic"
        )
        || m.starts_with("bras")
        || m.starts_with("bas")
        || (m.starts_with('b') && m.ends_with('r') && m.len() <= 5 && !m.starts_with("brct"));
    if !(compare_and_branch || plain) {
        return None;
    }
    let mut fx = Effects::new(OpClass::Branch);
    let conditional = (m.starts_with('j') && !matches!(m, "j" | "jg" | "jnop" | "jgnop"))
        || matches!(m, "brc" | "brcl" | "bc" | "bcr")
        || (m.starts_with('b') && !compare_and_branch && !m.starts_with("bras") && {
            // `ber`, `bner`, `bhr` …: conditional branch to a register.
            !matches!(m, "br" | "b" | "bi" | "basr" | "bas") && m.ends_with('r')
        });
    if conditional && !compare_and_branch {
        fx.reads.push(Loc::Flags);
    }
    let links = m.starts_with("bras") || m.starts_with("bas");
    for (i, op) in ops.iter().enumerate() {
        match reg(op) {
            Some(r) if links && i == 0 => fx.writes.push(Loc::Reg(r)),
            Some(r) => fx.reads.push(Loc::Reg(r)),
            None => {
                if let Some((_, regs)) = address(op) {
                    fx.reads.extend(regs.into_iter().flatten().map(Loc::Reg));
                }
            }
        }
    }
    Some(fx)
}

/// Reads `R1 + 1` / writes the pair of a pair instruction whose first operand is `r1`.
fn pair_effects(fx: &mut Effects, m: &str, r1: u16) {
    let odd = Loc::Reg(r1 | 1);
    // `dsgr`/`dsgfr`/`dsg`/`dsgf` divide the odd register alone; the others the pair.
    let is_div = class_of(m) == OpClass::Div && !m.starts_with("ds");
    let is_shift_pair = matches!(m, "sldl" | "srdl" | "slda" | "srda");
    if m != "flogr" && m != "mgrk" {
        // The multiplicand / dividend / shifted value lives in the odd register (and, for
        // divisions and double shifts, also the even one).
        let mut inputs = vec![odd];
        if is_div || is_shift_pair {
            inputs.push(Loc::Reg(r1));
        }
        for input in inputs {
            if !fx.reads.contains(&input) {
                fx.reads.push(input);
            }
        }
    }
    fx.writes.push(Loc::Reg(r1));
    fx.writes.push(odd);
}

/// The floating-point class of a binary-floating-point or vector-float mnemonic (`adbr`,
/// `wfmadb`, `cdgbr`, …), `None` for others.
fn fp_class(m: &str) -> Option<OpClass> {
    const ADD: &[&str] = &[
        "adbr", "aebr", "sdbr", "sebr", "adb", "aeb", "sdb", "seb", "wfadb", "wfasb", "wfsdb",
        "wfssb", "vfadb", "vfasb", "vfsdb", "vfssb", "wfmindb", "wfmaxdb",
    ];
    const MUL: &[&str] = &[
        "mdbr", "meebr", "mdb", "meeb", "wfmdb", "wfmsb", "vfmdb", "vfmsb",
    ];
    const FMA: &[&str] = &[
        "madbr", "maebr", "msdbr", "msebr", "madb", "maeb", "msdb", "mseb", "wfmadb", "wfmasb",
        "wfmsdb", "wfmssb", "vfmadb", "vfmasb", "vfmsdb", "vfmssb",
    ];
    const DIV: &[&str] = &[
        "ddbr", "debr", "ddb", "deb", "sqdbr", "sqebr", "sqdb", "sqeb", "wfddb", "wfdsb", "wfsqdb",
        "wfsqsb", "vfddb", "vfsqdb",
    ];
    const MISC: &[&str] = &[
        "ldgr", "lgdr", "ldr", "ler", "lzdr", "lzer", "lcdbr", "lpdbr", "lndbr", "lcebr", "lpebr",
        "lnebr", "ltdbr", "ltebr", "cdbr", "cebr", "kdbr", "kebr", "wfcdb", "wfcsb", "wfkdb",
        "wfksb", "wflcdb", "wflpdb", "wflndb", "cpsdr", "lcdfr", "lpdfr", "lndfr",
    ];
    let conversion = (m.starts_with('c') && (m.contains("br") && m.len() >= 5))
        && !matches!(m, "cdbr" | "cebr" | "cxbr")
        && ["cd", "ce", "cg", "cf", "cl"]
            .iter()
            .any(|p| m.starts_with(p))
        && (m.contains("db") || m.contains("eb") || m.contains("gb") || m.contains("fb"));
    Some(if ADD.contains(&m) {
        OpClass::FpAdd
    } else if MUL.contains(&m) {
        OpClass::FpMul
    } else if FMA.contains(&m) {
        OpClass::FpFma
    } else if DIV.contains(&m) {
        OpClass::FpDiv
    } else if MISC.contains(&m) {
        OpClass::FpMisc
    } else if conversion
        || matches!(
            m,
            "ledbr" | "ledbra" | "ldebr" | "ldeb" | "wledb" | "wldeb" | "wflrd"
        )
        || m.starts_with("fidb")
        || m.starts_with("fieb")
        || m.starts_with("wfid")
    {
        OpClass::FpCvt
    } else {
        return None;
    })
}

/// Effects of a floating-point instruction in register form: compares read both operands and
/// set the condition code; two-operand arithmetic (`adbr R1, R2`) and the multiply-adds
/// (`madbr R1, R3, R2`: R1 += R3 × R2) read R1; the vector forms (`wfadb V1, V2, V3`,
/// `wfmadb V1, V2, V3, V4`), conversions and loads (`ldgr`, `lcdbr`) only write it.
fn fp_register_effects(m: &str, ops: &[&str], class: OpClass) -> Effects {
    let mut fx = Effects::new(class);
    let compare = matches!(
        m,
        "cdbr" | "cebr" | "kdbr" | "kebr" | "wfcdb" | "wfcsb" | "wfkdb" | "wfksb"
    );
    if compare || sets_fp_cc(m) {
        fx.writes.push(Loc::Flags);
    }
    if compare {
        for op in ops {
            fx.reads.extend(reg(op).map(Loc::Reg));
        }
        return fx;
    }
    let Some((first, rest)) = ops.split_first() else {
        fx.class = OpClass::Other;
        return fx;
    };
    let two_operand = m.ends_with("br")
        && matches!(
            class,
            OpClass::FpAdd | OpClass::FpMul | OpClass::FpFma | OpClass::FpDiv
        )
        && !m.starts_with("sq");
    if let Some(r1) = reg(first) {
        if two_operand {
            fx.reads.push(Loc::Reg(r1));
        }
        fx.writes.push(Loc::Reg(r1));
    }
    for op in rest {
        fx.reads.extend(reg(op).map(Loc::Reg));
    }
    fx
}

/// Binary-floating-point register operations that set the condition code (`adbr`, `sdbr`,
/// `ltdbr`, `lcdbr`, … and the conversions to integer).
fn sets_fp_cc(m: &str) -> bool {
    matches!(
        m,
        "adbr" | "aebr" | "sdbr" | "sebr" | "ltdbr" | "ltebr" | "lcdbr" | "lpdbr" | "lndbr"
    ) || (m.starts_with("cg") || m.starts_with("cf") || m.starts_with("cl")) && m.ends_with("br")
}

/// Decodes one instruction's effects.
pub(super) fn effects(text: &str) -> Effects {
    let (m, ops) = super::split_operands(text);
    match fp_class(m) {
        Some(class) if !ops.iter().any(|o| is_mem(o)) => fp_register_effects(m, &ops, class),
        Some(class) => {
            // `adb %f0, 8(%r15)` and friends: the integer decoder reads R1 op= memory.
            let mut fx = integer_effects(m, &ops);
            if fx.class != OpClass::MemOnly {
                fx.class = class;
            }
            fx
        }
        None => integer_effects(m, &ops),
    }
}

/// [`effects`] of everything but floating-point operations.
fn integer_effects(m: &str, ops: &[&str]) -> Effects {
    let ops = ops.to_vec();
    if let Some(fx) = branch(m, &ops) {
        return fx;
    }
    let mut fx = Effects::new(class_of(m));
    if reads_cc(m) {
        fx.reads.push(Loc::Flags);
    }
    if sets_cc(m) {
        fx.writes.push(Loc::Flags);
    }
    let Some((first, rest)) = ops.split_first() else {
        fx.class = OpClass::Other;
        return fx;
    };
    let r1 = reg(first);
    // Branch on count: decrements R1 and branches.
    if m.starts_with("brct") {
        fx.reads.extend(r1.map(Loc::Reg));
        fx.writes.extend(r1.map(Loc::Reg));
        return fx;
    }
    // Shifts and rotates: `op R1, R3, D2(B2)` or `op R1, D2(B2)` (reads R1).
    if is_shift(m) {
        let amount = ops.last().copied().unwrap_or("");
        if let Some((_, regs)) = address(amount) {
            fx.reads.extend(regs.into_iter().flatten().map(Loc::Reg));
        }
        let sources = if ops.len() >= 3 {
            &ops[1..2]
        } else {
            &ops[..1]
        };
        for s in sources {
            fx.reads.extend(reg(s).map(Loc::Reg));
        }
        match r1 {
            Some(r) if writes_pair(m) => pair_effects(&mut fx, m, r),
            Some(r) => fx.writes.push(Loc::Reg(r)),
            None => fx.class = OpClass::Other,
        }
        return fx;
    }
    // Store multiple / load multiple: `stmg R1, R3, D(B)` (prologue/epilogue code).
    if matches!(m, "stm" | "stmg" | "stmy" | "lm" | "lmg" | "lmy") {
        let (addr, _) = mem(ops.last().copied().unwrap_or(""));
        fx.addr_reads = addr;
        let (lo, hi) = (
            r1.unwrap_or(0),
            ops.get(1).and_then(|o| reg(o)).unwrap_or(0),
        );
        let range = if lo <= hi && hi < 16 {
            (lo..=hi).collect::<Vec<_>>()
        } else {
            (lo..16).chain(0..=hi.min(15)).collect()
        };
        fx.class = OpClass::MemOnly;
        if m.starts_with("st") {
            fx.reads.extend(range.into_iter().map(Loc::Reg));
            fx.store = Some(MemRef::Other);
        } else {
            fx.writes.extend(range.into_iter().map(Loc::Reg));
            fx.load = Some(MemRef::Other);
        }
        return fx;
    }
    let is_store = m.starts_with("st");
    // Load address: `la R1, D(X,B)` computes, never accesses.
    if matches!(m, "la" | "lay" | "larl") {
        fx.class = OpClass::Alu;
        if let Some(op) = rest.first() {
            fx.reads.extend(mem(op).0);
        }
        fx.writes.extend(r1.map(Loc::Reg));
        return fx;
    }
    let mem_op = rest.iter().position(|o| is_mem(o));
    let relative_load = !is_store
        && m.ends_with("rl")
        && !m.starts_with("larl")
        && (m.starts_with('l') || m.starts_with("c"));
    if is_store {
        fx.class = OpClass::MemOnly;
        fx.reads.extend(r1.map(Loc::Reg));
        let (addr, at) = match mem_op {
            Some(i) => mem(rest[i]),
            None => (Vec::new(), MemRef::Other),
        };
        fx.addr_reads = addr;
        fx.store = Some(at);
        return fx;
    }
    if let Some(i) = mem_op {
        let (addr, at) = mem(rest[i]);
        fx.addr_reads = addr;
        fx.load = Some(at);
        let is_plain_load = m.starts_with('l') && !m.starts_with("loc");
        let is_compare = m.starts_with('c');
        if is_plain_load {
            // `l`, `lg`, `llgf`, `lrv`, `lt`, …: the value is the loaded word.
            fx.class = if fx.writes.contains(&Loc::Flags) {
                OpClass::Alu
            } else {
                OpClass::MemOnly
            };
        } else {
            // `a R1, D(X,B)` and friends: R1 op= memory (also `loc`, inserts `ic`).
            if !writes_pair(m) {
                fx.reads.extend(r1.map(Loc::Reg));
            }
        }
        match r1 {
            Some(r) if writes_pair(m) => pair_effects(&mut fx, m, r),
            Some(r) if !is_compare => fx.writes.push(Loc::Reg(r)),
            _ => {}
        }
        return fx;
    }
    if relative_load {
        fx.class = OpClass::MemOnly;
        fx.load = Some(MemRef::Other);
        if !m.starts_with('c') {
            fx.writes.extend(r1.map(Loc::Reg));
        } else {
            fx.reads.extend(r1.map(Loc::Reg));
        }
        return fx;
    }
    // Register and immediate forms.
    let three_operand =
        m.ends_with("rk") || m.ends_with("rkc") || m.ends_with("ik") || m.starts_with("sel");
    let is_compare = m.starts_with('c') || m.starts_with("tm");
    // `l…r` moves/extends/byte-reverses/negates and `l…i…` immediates define R1 only;
    // `loc…` keeps R1 when the condition is false; `ii…` inserts into part of R1.
    let defines_only = m.starts_with('l') && !m.starts_with("loc");
    let mut reads_r1 = !(three_operand || defines_only || is_compare || writes_pair(m));
    if m.starts_with("risb") {
        // The zero flag (bit 0x80 of the fourth operand) clears the unselected bits.
        let zeroes = ops
            .get(3)
            .and_then(|o| super::parse_imm(o))
            .is_some_and(|v| v & 0x80 != 0);
        reads_r1 = !zeroes;
    }
    if matches!(m, "rnsbg" | "rosbg" | "rxsbg") {
        reads_r1 = true;
    }
    if is_compare {
        for op in &ops {
            fx.reads.extend(reg(op).map(Loc::Reg));
        }
        return fx;
    }
    let Some(r1) = r1 else {
        fx.class = OpClass::Other;
        for op in rest {
            fx.reads.extend(reg(op).map(Loc::Reg));
        }
        return fx;
    };
    if reads_r1 {
        fx.reads.push(Loc::Reg(r1));
    }
    for op in rest {
        fx.reads.extend(reg(op).map(Loc::Reg));
    }
    if writes_pair(m) {
        pair_effects(&mut fx, m, r1);
    } else {
        fx.writes.push(Loc::Reg(r1));
    }
    fx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_forms() {
        let f = |n: u16| Loc::Reg(32 + n);
        // Two-operand BFP arithmetic reads R1; the vector forms do not.
        let add = effects("adbr %f0, %f2");
        assert_eq!(
            (add.class, add.reads.clone()),
            (OpClass::FpAdd, vec![f(0), f(2)])
        );
        assert!(add.writes.contains(&f(0)) && add.writes.contains(&Loc::Flags));
        let vadd = effects("wfadb %f0, %f2, %f4");
        assert_eq!(
            (vadd.class, vadd.reads.clone()),
            (OpClass::FpAdd, vec![f(2), f(4)])
        );
        let fma = effects("madbr %f0, %f2, %f4");
        assert_eq!(
            (fma.class, fma.reads.clone()),
            (OpClass::FpFma, vec![f(0), f(2), f(4)])
        );
        assert_eq!(
            effects("wfmadb %f0, %f2, %f4, %f6").reads,
            vec![f(2), f(4), f(6)]
        );
        assert_eq!(effects("mdbr %f0, %f2").class, OpClass::FpMul);
        assert_eq!(effects("ddbr %f0, %f2").class, OpClass::FpDiv);
        // Conversions are not compares: they write R1.
        let cvt = effects("cdgbr %f0, %r1");
        assert_eq!(
            (cvt.class, cvt.reads.clone()),
            (OpClass::FpCvt, vec![Loc::Reg(1)])
        );
        assert_eq!(cvt.writes, vec![f(0)]);
        let to_int = effects("cgdbr %r1, 5, %f0");
        assert!(to_int.writes.contains(&Loc::Reg(1)));
        let cmp = effects("cdbr %f0, %f2");
        assert_eq!(
            (cmp.class, cmp.writes.clone()),
            (OpClass::FpMisc, vec![Loc::Flags])
        );
        // Memory forms: R1 op= memory.
        let mem = effects("adb %f0, 8(%r15)");
        assert_eq!(
            (mem.class, mem.load),
            (OpClass::FpAdd, Some(MemRef::Stack(8)))
        );
        assert_eq!(effects("ld %f0, 8(%r15)").class, OpClass::MemOnly);
    }

    #[test]
    fn two_and_three_operand_arithmetic() {
        let two = effects("ar %r3, %r5");
        assert_eq!(two.reads, vec![Loc::Reg(3), Loc::Reg(5)]);
        assert_eq!(two.writes, vec![Loc::Flags, Loc::Reg(3)]);
        let three = effects("ark %r3, %r4, %r12");
        assert_eq!(three.reads, vec![Loc::Reg(4), Loc::Reg(12)]);
        assert!(three.writes.contains(&Loc::Reg(3)));
        let imm = effects("afi %r5, -680876936");
        assert_eq!(imm.reads, vec![Loc::Reg(5)]);
        let ahik = effects("aghik %r6, %r3, 0");
        assert_eq!(ahik.reads, vec![Loc::Reg(3)]);
        let mov = effects("lgr %r4, %r12");
        assert_eq!(
            (mov.class, mov.reads.clone()),
            (OpClass::Move, vec![Loc::Reg(12)])
        );
        assert!(
            mov.writes == vec![Loc::Reg(4)],
            "a move leaves the CC: {mov:?}"
        );
        let ext = effects("llgfr %r5, %r5");
        assert_eq!(ext.reads, vec![Loc::Reg(5)]);
        assert_eq!(ext.writes, vec![Loc::Reg(5)]);
        assert!(effects("lghi %r2, 0").reads.is_empty());
        assert_eq!(effects("iilf %r2, 7").reads, vec![Loc::Reg(2)]);
    }

    #[test]
    fn rotates_and_shifts_read_their_source_not_memory() {
        let rll = effects("rll %r3, %r4, 7");
        assert_eq!(rll.reads, vec![Loc::Reg(4)]);
        assert_eq!(rll.writes, vec![Loc::Reg(3)]);
        assert!(rll.load.is_none() && rll.addr_reads.is_empty());
        let by_reg = effects("sllg %r6, %r6, 0(%r9)");
        assert_eq!(by_reg.reads, vec![Loc::Reg(9), Loc::Reg(6)]);
        assert!(by_reg.load.is_none());
        let two = effects("srl %r2, 3");
        assert_eq!(two.reads, vec![Loc::Reg(2)]);
        assert!(effects("srag %r1, %r2, 63").writes.contains(&Loc::Flags));
        assert!(!effects("srlk %r1, %r2, 8").writes.contains(&Loc::Flags));
    }

    #[test]
    fn stack_slots_loads_and_stores() {
        let st = effects("stg %r7, 184(%r15)");
        assert_eq!(st.store, Some(MemRef::Stack(184)));
        assert_eq!(st.reads, vec![Loc::Reg(7)]);
        assert_eq!(st.addr_reads, vec![Loc::Reg(15)]);
        assert!(st.writes.is_empty());
        let lg = effects("lg %r2, 184(%r15)");
        assert_eq!(
            (lg.class, lg.load),
            (OpClass::MemOnly, Some(MemRef::Stack(184)))
        );
        assert_eq!(lg.writes, vec![Loc::Reg(2)]);
        let indexed = effects("l %r6, 0(%r6,%r2)");
        assert_eq!(indexed.load, Some(MemRef::Other));
        assert_eq!(indexed.addr_reads, vec![Loc::Reg(6), Loc::Reg(2)]);
        let not_sp = effects("l %r6, 8(%r2,%r15)");
        assert_eq!(not_sp.load, Some(MemRef::Other));
        let lrv = effects("lrv %r4, 0(%r6)");
        assert_eq!(
            (lrv.class, lrv.load),
            (OpClass::MemOnly, Some(MemRef::Other))
        );
        assert_eq!(lrv.writes, vec![Loc::Reg(4)]);
        let op = effects("a %r3, 12(%r2)");
        assert_eq!(op.reads, vec![Loc::Reg(3)]);
        assert_eq!(op.writes, vec![Loc::Flags, Loc::Reg(3)]);
        assert_eq!(op.load, Some(MemRef::Other));
        assert_eq!(
            effects("la %r1, 8(%r2,%r3)").reads,
            vec![Loc::Reg(2), Loc::Reg(3)]
        );
        assert!(effects("la %r1, 8(%r2,%r3)").load.is_none());
    }

    #[test]
    fn multiplies_use_register_pairs() {
        let mlgr = effects("mlgr %r2, %r9");
        assert_eq!(mlgr.class, OpClass::MulHigh);
        assert_eq!(mlgr.reads, vec![Loc::Reg(9), Loc::Reg(3)]);
        assert_eq!(mlgr.writes, vec![Loc::Reg(2), Loc::Reg(3)]);
        let msgr = effects("msgr %r5, %r13");
        assert_eq!(msgr.class, OpClass::Mul);
        assert_eq!(msgr.reads, vec![Loc::Reg(5), Loc::Reg(13)]);
        assert!(!msgr.writes.contains(&Loc::Flags));
        let msgrkc = effects("msgrkc %r9, %r2, %r12");
        assert_eq!(msgrkc.reads, vec![Loc::Reg(2), Loc::Reg(12)]);
        let dlgr = effects("dlgr %r0, %r4");
        assert_eq!(dlgr.class, OpClass::Div);
        assert!(dlgr.reads.contains(&Loc::Reg(0)) && dlgr.reads.contains(&Loc::Reg(1)));
    }

    #[test]
    fn condition_code_flows_from_compare_to_branch() {
        let c = effects("cghi %r5, 0");
        assert_eq!(c.writes, vec![Loc::Flags]);
        assert_eq!(c.reads, vec![Loc::Reg(5)]);
        let j = effects("jghe 0x1c0");
        assert_eq!(
            (j.class, j.reads.clone()),
            (OpClass::Branch, vec![Loc::Flags])
        );
        assert!(effects("jg 0x1c0").reads.is_empty());
        assert_eq!(effects("br %r14").reads, vec![Loc::Reg(14)]);
        let cb = effects("cgrjhe %r2, %r3, 0x40");
        assert_eq!(cb.class, OpClass::Branch);
        assert_eq!(cb.reads, vec![Loc::Reg(2), Loc::Reg(3)]);
        let loc = effects("locgrhe %r2, %r3");
        assert_eq!(loc.reads, vec![Loc::Flags, Loc::Reg(2), Loc::Reg(3)]);
        assert!(effects("alcgr %r1, %r2").reads.contains(&Loc::Flags));
        assert!(effects("xilf %r4, 4294967295").writes.contains(&Loc::Flags));
    }
}
