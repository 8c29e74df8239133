//! What an AArch64 instruction (llvm-objdump syntax) reads, writes and costs.
//!
//! The first operand is the destination except for stores, compares and branches; `wN` and
//! `xN` name the same register (a `w` write zeroes the upper half, so it fully defines it);
//! `wzr`/`xzr` are constants, `sp` is register 31.

use super::{Effects, Loc, MemRef, OpClass};

const SP: u16 = 31;

/// Register number of an operand (`w3`/`x3` → 3, `sp` → 31); `None` for the zero register,
/// immediates and anything else.
fn reg(op: &str) -> Option<u16> {
    // A vector register's arrangement (`v0.2d`, `v1.s[1]`) names the same register.
    let op = op.trim();
    let op = op.split_once('.').map_or(op, |(r, _)| r);
    match op {
        "sp" | "wsp" => return Some(SP),
        "fp" => return Some(29),
        "lr" => return Some(30),
        _ => {}
    }
    let (class, num) = op.split_at_checked(1)?;
    let n: u16 = num.parse().ok()?;
    match class {
        "w" | "x" if n < 31 => Some(n),
        "b" | "h" | "s" | "d" | "q" | "v" if n < 32 => Some(64 + n),
        _ => None,
    }
}

/// `[base, #imm]`, `[base, index, lsl #2]`, `[base], #imm` (post-index), `[base, #imm]!`.
fn mem(op: &str) -> Option<(Vec<Loc>, MemRef, Option<u16>)> {
    let start = op.find('[')?;
    let end = start + op[start..].find(']')?;
    let inner = &op[start + 1..end];
    let writeback = op.ends_with('!') || op[end + 1..].trim_start().starts_with(',');
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    let base = parts.first().and_then(|b| reg(b));
    let index = parts.get(1).and_then(|i| reg(i));
    let mut regs = Vec::new();
    regs.extend(base.map(Loc::Reg));
    regs.extend(index.map(Loc::Reg));
    let at = if base == Some(SP) && index.is_none() && !writeback {
        let off = parts.get(1).map_or(Some(0), |d| super::parse_imm(d));
        off.map_or(MemRef::Other, MemRef::Stack)
    } else {
        MemRef::Other
    };
    Some((regs, at, writeback.then_some(base).flatten()))
}

/// Decodes one instruction's effects.
pub(super) fn effects(text: &str) -> Effects {
    let (m, raw_ops) = super::split_operands(text);
    // Address operands were split at their inner commas by the generic splitter only if
    // the brackets were unbalanced; rejoin `[`…`]` groups (and a post-index immediate).
    let ops = join_brackets(&raw_ops);
    let mut fx = Effects::new(OpClass::Alu);
    let is_branch = m == "b"
        || m.starts_with("b.")
        || matches!(
            m,
            "cbz" | "cbnz" | "tbz" | "tbnz" | "br" | "blr" | "bl" | "ret"
        );
    if is_branch || m == "nop" || m == "udf" || m == "brk" {
        fx.class = OpClass::Branch;
        if m.starts_with("b.") {
            fx.reads.push(Loc::Flags);
        }
        for op in &ops {
            fx.reads.extend(reg(op).map(Loc::Reg));
        }
        return fx;
    }
    let reads_flags = matches!(
        m,
        "csel"
            | "csinc"
            | "csinv"
            | "csneg"
            | "cset"
            | "csetm"
            | "cinc"
            | "cinv"
            | "cneg"
            | "adc"
            | "adcs"
            | "sbc"
            | "sbcs"
            | "ngc"
            | "ngcs"
            | "ccmp"
            | "ccmn"
            | "fcsel"
            | "fccmp"
            | "fccmpe"
    );
    if reads_flags {
        fx.reads.push(Loc::Flags);
    }
    let writes_flags = matches!(
        m,
        "adds"
            | "subs"
            | "ands"
            | "bics"
            | "negs"
            | "adcs"
            | "sbcs"
            | "ngcs"
            | "cmp"
            | "cmn"
            | "tst"
            | "ccmp"
            | "ccmn"
            | "fcmp"
            | "fcmpe"
            | "fccmp"
            | "fccmpe"
    );
    if writes_flags {
        fx.writes.push(Loc::Flags);
    }
    let is_store = m.starts_with("st");
    let is_load = m.starts_with("ld");
    let mem_op = ops.iter().position(|o| o.starts_with('['));
    if is_store || is_load {
        fx.class = OpClass::MemOnly;
        let Some(at_index) = mem_op else {
            fx.class = OpClass::Other;
            return fx;
        };
        let Some((regs, at, writeback)) = mem(&ops[at_index..].join(", ")) else {
            fx.class = OpClass::Other;
            return fx;
        };
        fx.addr_reads.extend(regs);
        if let Some(b) = writeback {
            fx.writes.push(Loc::Reg(b));
        }
        let data = &ops[..at_index];
        if is_store {
            // `stp`/`str`: data registers are read; exclusive stores' status register is written.
            let skip = usize::from(m.starts_with("stx") || m.starts_with("stlx"));
            for (i, d) in data.iter().enumerate() {
                if let Some(r) = reg(d) {
                    if i < skip {
                        fx.writes.push(Loc::Reg(r));
                    } else {
                        fx.reads.push(Loc::Reg(r));
                    }
                }
            }
            fx.store = Some(at);
        } else {
            for d in data {
                fx.writes.extend(reg(d).map(Loc::Reg));
            }
            fx.load = Some(at);
        }
        return fx;
    }
    let no_dest = matches!(
        m,
        "cmp" | "cmn" | "tst" | "ccmp" | "ccmn" | "fcmp" | "fcmpe" | "fccmp" | "fccmpe"
    );
    let shifted = ops.len() >= 4
        && ops.last().is_some_and(|o| {
            ["lsl", "lsr", "asr", "ror", "sxt", "uxt"]
                .iter()
                .any(|s| o.starts_with(s))
        })
        && !matches!(m, "mov" | "movk" | "movz" | "movn");
    fx.class = match m {
        "mul" | "madd" | "msub" | "mneg" | "smull" | "umull" | "smaddl" | "umaddl" => OpClass::Mul,
        "umulh" | "smulh" => OpClass::MulHigh,
        "udiv" | "sdiv" => OpClass::Div,
        "mov" if ops.len() == 2 && reg(&ops[1]).is_some() && !ops[0].contains("sp") => {
            OpClass::Move
        }
        _ if shifted => OpClass::AluComplex,
        _ => fp_class(m).unwrap_or(OpClass::Alu),
    };
    if m == "mov" && ops.get(1).is_some_and(|o| o == "wzr" || o == "xzr") {
        fx.class = OpClass::ZeroIdiom;
    }
    let (dest, sources) = if no_dest {
        (None, &ops[..])
    } else {
        match ops.split_first() {
            Some((d, rest)) => (Some(d.as_str()), rest),
            None => (None, &ops[..]),
        }
    };
    for s in sources {
        fx.reads.extend(reg(s).map(Loc::Reg));
    }
    if let Some(d) = dest.and_then(reg) {
        let accumulates = matches!(m, "fmla" | "fmls");
        if m == "movk"
            || m.starts_with("bfi")
            || m.starts_with("bfxil")
            || m == "bfm"
            || accumulates
        {
            fx.reads.push(Loc::Reg(d));
        }
        fx.writes.push(Loc::Reg(d));
    }
    fx
}

/// The floating-point class of a mnemonic (`fadd`, `fmadd`, `scvtf`, …), `None` for others.
/// `fmadd`'s addend is an ordinary source (the first operand is only written); `fmla`
/// accumulates into its destination.
fn fp_class(m: &str) -> Option<OpClass> {
    Some(match m {
        "fadd" | "fsub" | "fabd" | "faddp" | "fmin" | "fmax" | "fminnm" | "fmaxnm" => {
            OpClass::FpAdd
        }
        "fmul" | "fnmul" | "fmulx" => OpClass::FpMul,
        "fmadd" | "fmsub" | "fnmadd" | "fnmsub" | "fmla" | "fmls" => OpClass::FpFma,
        "fdiv" | "fsqrt" => OpClass::FpDiv,
        "scvtf" | "ucvtf" => OpClass::FpCvt,
        _ if m.starts_with("fcvt") || m.starts_with("frint") => OpClass::FpCvt,
        "fmov" | "fneg" | "fabs" | "fcsel" | "fcmp" | "fcmpe" | "fccmp" | "fccmpe" => {
            OpClass::FpMisc
        }
        _ => return None,
    })
}

/// Rejoins operands the splitter cut inside `[`…`]`.
fn join_brackets(ops: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for op in ops {
        if open {
            if let Some(last) = out.last_mut() {
                last.push_str(", ");
                last.push_str(op);
            }
        } else {
            out.push((*op).to_string());
        }
        if op.contains('[') && !op.contains(']') {
            open = true;
        }
        if op.contains(']') {
            open = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_operand_alu() {
        let fx = effects("add w8, w9, w10");
        assert_eq!(fx.reads, vec![Loc::Reg(9), Loc::Reg(10)]);
        assert_eq!(fx.writes, vec![Loc::Reg(8)]);
        assert_eq!(effects("ror w8, w8, #25").class, OpClass::Alu);
        assert_eq!(effects("add x8, x9, w10, sxtw").class, OpClass::AluComplex);
        assert_eq!(effects("mov w1, w2").class, OpClass::Move);
    }

    #[test]
    fn stack_slots_loads_and_stores() {
        let s = effects("str w8, [sp, #12]");
        assert_eq!(s.store, Some(MemRef::Stack(12)));
        assert_eq!(s.reads, vec![Loc::Reg(8)]);
        assert!(s.writes.is_empty());
        let l = effects("ldr x3, [sp]");
        assert_eq!(l.load, Some(MemRef::Stack(0)));
        assert_eq!(l.writes, vec![Loc::Reg(3)]);
        let p = effects("ldp w4, w5, [x1, #8]");
        assert_eq!(p.load, Some(MemRef::Other));
        assert_eq!(p.writes, vec![Loc::Reg(4), Loc::Reg(5)]);
        assert_eq!(p.addr_reads, vec![Loc::Reg(1)]);
        let post = effects("ldr w4, [x1], #4");
        assert!(post.writes.contains(&Loc::Reg(1)));
    }

    #[test]
    fn float_forms() {
        let d = |n: u16| Loc::Reg(64 + n);
        let fx = effects("fmadd d0, d1, d2, d3");
        assert_eq!(fx.class, OpClass::FpFma);
        assert_eq!(fx.reads, vec![d(1), d(2), d(3)]);
        assert_eq!(fx.writes, vec![d(0)]);
        assert_eq!(effects("fadd d0, d1, d2").class, OpClass::FpAdd);
        assert_eq!(effects("fmul s0, s1, s2").class, OpClass::FpMul);
        assert_eq!(effects("fdiv d0, d1, d2").class, OpClass::FpDiv);
        assert_eq!(effects("scvtf d0, x1").class, OpClass::FpCvt);
        assert_eq!(effects("fcvtzs x0, d1").class, OpClass::FpCvt);
        let cmp = effects("fcmp d0, d1");
        assert_eq!(
            (cmp.reads.clone(), cmp.writes.clone()),
            (vec![d(0), d(1)], vec![Loc::Flags])
        );
        assert!(effects("fcsel d0, d1, d2, eq").reads.contains(&Loc::Flags));
        assert!(
            effects("fmla v0.2d, v1.2d, v2.2d")
                .reads
                .contains(&Loc::Reg(64))
        );
    }

    #[test]
    fn flags_flow_from_compare_to_branch() {
        let c = effects("cmp x1, x2");
        assert_eq!(c.writes, vec![Loc::Flags]);
        assert_eq!(c.reads, vec![Loc::Reg(1), Loc::Reg(2)]);
        let b = effects("b.lo 0x40");
        assert_eq!(b.reads, vec![Loc::Flags]);
        assert_eq!(effects("csel x1, x2, x3, lt").reads[0], Loc::Flags);
    }
}
