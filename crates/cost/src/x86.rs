//! What an x86_64 instruction (llvm-objdump's AT&T syntax) reads, writes and costs.
//!
//! Operands are `source…, destination`. General registers are named by their 64-bit
//! register (`%eax`, `%ax`, `%al` are all `rax`): a 32-bit write zero-extends, so it fully
//! defines the register; an 8/16-bit write merges and so also reads it.

use super::ports::UopClass;
use super::{Address, Effects, Loc, MemRef, OpClass};

const SP: u16 = 4;

/// Register number of an AT&T register operand (`%eax` → 0), `None` if not a register.
fn reg(op: &str) -> Option<(u16, u8)> {
    let name = op.strip_prefix('%')?;
    const GPR: [[&str; 4]; 16] = [
        ["rax", "eax", "ax", "al"],
        ["rcx", "ecx", "cx", "cl"],
        ["rdx", "edx", "dx", "dl"],
        ["rbx", "ebx", "bx", "bl"],
        ["rsp", "esp", "sp", "spl"],
        ["rbp", "ebp", "bp", "bpl"],
        ["rsi", "esi", "si", "sil"],
        ["rdi", "edi", "di", "dil"],
        ["r8", "r8d", "r8w", "r8b"],
        ["r9", "r9d", "r9w", "r9b"],
        ["r10", "r10d", "r10w", "r10b"],
        ["r11", "r11d", "r11w", "r11b"],
        ["r12", "r12d", "r12w", "r12b"],
        ["r13", "r13d", "r13w", "r13b"],
        ["r14", "r14d", "r14w", "r14b"],
        ["r15", "r15d", "r15w", "r15b"],
    ];
    const BYTES: [u8; 4] = [8, 4, 2, 1];
    for (n, names) in GPR.iter().enumerate() {
        if let Some(w) = names.iter().position(|&x| x == name) {
            return Some((n as u16, BYTES[w]));
        }
    }
    match name {
        "ah" => return Some((0, 1)),
        "ch" => return Some((1, 1)),
        "dh" => return Some((2, 1)),
        "bh" => return Some((3, 1)),
        _ => {}
    }
    let vec = name
        .strip_prefix("xmm")
        .or_else(|| name.strip_prefix("ymm"))
        .or_else(|| name.strip_prefix("zmm"))?;
    vec.parse::<u16>().ok().map(|n| (32 + n, 16))
}

/// A memory operand `disp(base,index,scale)`: its address registers and, when the base is
/// `%rsp` without an index, the stack offset.
fn mem(op: &str) -> Option<(Vec<Loc>, MemRef)> {
    let OperandParts { base, index, disp } = operand_parts(op)?;
    let mut regs: Vec<Loc> = Vec::new();
    regs.extend(base.map(Loc::Reg));
    regs.extend(index.map(|(r, _)| Loc::Reg(r)));
    let stack = match (base, index, disp) {
        (Some(SP), None, Some(off)) => MemRef::Stack(off),
        _ => MemRef::Other,
    };
    Some((regs, stack))
}

/// The address of a memory operand as written ([`Address`]); `None` when the displacement is
/// not a number.
fn address(op: &str) -> Option<Address> {
    let OperandParts { base, index, disp } = operand_parts(op)?;
    Some(Address {
        base,
        index,
        disp: disp?,
    })
}

/// The parts of a memory operand `disp(base,index,scale)`.
struct OperandParts {
    /// Base register.
    base: Option<u16>,
    /// Index register and scale.
    index: Option<(u16, u8)>,
    /// Displacement: 0 when absent, `None` when not a number.
    disp: Option<i64>,
}

/// The parts of the memory operand `op`, `None` if it is not one.
fn operand_parts(op: &str) -> Option<OperandParts> {
    let open = op.find('(')?;
    let inner = op[open + 1..].strip_suffix(')')?;
    let disp = &op[..open];
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    let base = parts.first().and_then(|b| reg(b)).map(|r| r.0);
    let scale = parts.get(2).and_then(|s| s.parse::<u8>().ok()).unwrap_or(1);
    let index = parts.get(1).and_then(|i| reg(i)).map(|r| (r.0, scale));
    let disp = if disp.is_empty() {
        Some(0)
    } else {
        super::parse_imm(disp)
    };
    Some(OperandParts { base, index, disp })
}

fn is_mem(op: &str) -> bool {
    op.ends_with(')') && op.contains('(')
}

/// Decodes one instruction's effects.
pub(super) fn effects(text: &str) -> Effects {
    let (mnemonic, ops) = super::split_operands(text);
    let mut fx = Effects::new(OpClass::Alu);
    let m = mnemonic;
    // Control flow and no-ops.
    if m.starts_with('j') || m == "nop" || m.starts_with("nop") || m == "ud2" {
        fx.class = OpClass::Branch;
        if m.starts_with('j') && m != "jmp" && m != "jmpq" {
            fx.reads.push(Loc::Flags);
        }
        for op in &ops {
            if let Some((r, _)) = reg(op.trim_start_matches('*')) {
                fx.reads.push(Loc::Reg(r));
            }
        }
        return fx;
    }
    if let Some(fx) = vector_effects(m, &ops) {
        return fx;
    }
    let reads_flags = (m.starts_with("cmov") || m.starts_with("set"))
        || matches!(
            m,
            "adcl" | "adcq" | "sbbl" | "sbbq" | "adcxl" | "adcxq" | "adoxl" | "adoxq"
        );
    if reads_flags {
        fx.reads.push(Loc::Flags);
    }
    let base = base_mnemonic(m);
    let no_flags = m.starts_with("mov")
        || m.starts_with("lea")
        || m.starts_with("cmov")
        || m.starts_with("set")
        || matches!(
            base,
            "not" | "rorx" | "shrx" | "shlx" | "sarx" | "bswap" | "cltq" | "cqto" | "cltd" | "xchg"
        );
    if !no_flags {
        fx.writes.push(Loc::Flags);
    }
    // Implicit-operand forms.
    match m {
        "cltq" => {
            fx.reads.push(Loc::Reg(0));
            fx.writes.push(Loc::Reg(0));
            return fx;
        }
        "cqto" | "cltd" => {
            fx.reads.push(Loc::Reg(0));
            fx.writes.push(Loc::Reg(2));
            return fx;
        }
        _ => {}
    }
    if matches!(base, "mul" | "imul" | "div" | "idiv") && ops.len() == 1 {
        fx.class = if base.ends_with("div") {
            OpClass::Div
        } else {
            OpClass::MulHigh
        };
        fx.reads.push(Loc::Reg(0));
        if base.ends_with("div") {
            fx.reads.push(Loc::Reg(2));
        }
        add_source(&mut fx, ops[0]);
        fx.writes.push(Loc::Reg(0));
        fx.writes.push(Loc::Reg(2));
        return fx;
    }
    if ops.is_empty() {
        fx.class = OpClass::Other;
        return fx;
    }
    let compare = matches!(base, "cmp" | "test" | "bt");
    let (dest, sources) = if compare {
        (None, &ops[..])
    } else {
        let (last, rest) = ops.split_last().map_or(("", &ops[..0]), |(l, r)| (*l, r));
        (Some(last), rest)
    };
    // Which instructions do not read their destination.
    let pure_write = m.starts_with("mov")
        || m.starts_with("lea")
        || m.starts_with("set")
        || matches!(
            base,
            "rorx"
                | "andn"
                | "shrx"
                | "shlx"
                | "sarx"
                | "popcnt"
                | "lzcnt"
                | "tzcnt"
                | "bsf"
                | "bsr"
                | "pop"
        )
        || (base == "imul" && ops.len() == 3);
    let zero_idiom = matches!(base, "xor" | "sub")
        && ops.len() == 2
        && ops[0] == ops[1]
        && reg(ops[0]).is_some();
    // Class.
    fx.class = if zero_idiom {
        OpClass::ZeroIdiom
    } else if m.starts_with("lea") {
        lea_class(ops[0])
    } else if base == "imul" || base == "mul" {
        OpClass::Mul
    } else if base.ends_with("div") {
        OpClass::Div
    } else if m.starts_with("mov")
        && ops.len() == 2
        && reg(ops[0]).is_some_and(|r| r.1 >= 4)
        && reg(ops[1]).is_some_and(|r| r.1 >= 4)
        && !m.starts_with("movs")
        && !m.starts_with("movz")
    {
        OpClass::Move
    } else if m.starts_with("mov") && (ops.iter().any(|o| is_mem(o))) {
        OpClass::MemOnly
    } else {
        OpClass::Alu
    };
    if zero_idiom {
        if let Some((r, _)) = reg(ops[1]) {
            fx.writes.push(Loc::Reg(r));
        }
        return fx;
    }
    if m.starts_with("lea") {
        if let Some((regs, _)) = mem(ops[0]) {
            fx.reads.extend(regs);
        }
        if let Some((r, _)) = ops.get(1).and_then(|d| reg(d)) {
            fx.writes.push(Loc::Reg(r));
        }
        return fx;
    }
    for s in sources {
        add_source(&mut fx, s);
    }
    if let Some(d) = dest {
        if let Some((r, width)) = reg(d) {
            if !pure_write || (width < 4 && !m.starts_with("movz") && !m.starts_with("movs")) {
                fx.reads.push(Loc::Reg(r));
            }
            fx.writes.push(Loc::Reg(r));
        } else if let Some((regs, at)) = mem(d) {
            fx.addr_reads.extend(regs);
            if !pure_write {
                fx.load = Some(at);
            }
            fx.store = Some(at);
            fx.store_address = address(d);
        }
    }
    fx
}

/// Whether `op` names an SSE/AVX register.
fn is_vector_reg(op: &str) -> bool {
    reg(op).is_some_and(|(r, _)| r >= 32)
}

/// The floating-point class of an SSE/AVX mnemonic without its `v` prefix (`addsd`, `mulps`,
/// `fmadd231sd`, `cvtsi2sd`, …); `None` for moves, whose class depends on the operands.
fn vector_class(base: &str) -> Option<OpClass> {
    let fp_suffix = ["ss", "sd", "ps", "pd"].iter().any(|s| base.ends_with(s));
    let stem = |prefix: &str| base.starts_with(prefix) && fp_suffix;
    Some(
        if ["fmadd", "fmsub", "fnmadd", "fnmsub"]
            .iter()
            .any(|p| base.starts_with(p))
        {
            OpClass::FpFma
        } else if base.starts_with("cvt") || base.starts_with("round") {
            OpClass::FpCvt
        } else if base.starts_with("mov") || base.starts_with("lddqu") {
            return None;
        } else if stem("add") || stem("sub") || stem("min") || stem("max") {
            OpClass::FpAdd
        } else if stem("mul") {
            OpClass::FpMul
        } else if stem("div") || stem("sqrt") {
            OpClass::FpDiv
        } else {
            OpClass::FpMisc
        },
    )
}

/// Effects of an instruction with an SSE/AVX register operand (`None` for any other): the
/// AT&T order (sources, then the destination); VEX forms (`v…`) write their destination
/// without reading it, except the fused multiply-adds, which accumulate into it; legacy SSE
/// forms read it, except full-register moves, loads and writes of a general register. Only
/// compares (`ucomisd`, `comisd`, `ptest`) write the flags.
fn vector_effects(m: &str, ops: &[&str]) -> Option<Effects> {
    if !ops.iter().any(|o| is_vector_reg(o)) {
        return None;
    }
    let vex = m.starts_with('v') && m.len() > 1;
    let base = if vex { &m[1..] } else { m };
    let compare = ["ucomis", "comis", "ptest", "testp"]
        .iter()
        .any(|p| base.starts_with(p));
    let (dest, sources) = if compare {
        (None, ops)
    } else {
        let (last, rest) = ops.split_last()?;
        (Some(*last), rest)
    };
    let any_mem = ops.iter().any(|o| is_mem(o));
    let regs_only = !any_mem && ops.iter().all(|o| reg(o).is_some() || o.starts_with('$'));
    let mut fx = Effects::new(OpClass::FpMisc);
    let class = match vector_class(base) {
        Some(c) => c,
        // Moves: between vector registers (renamed away on cores that eliminate moves), to or
        // from memory, or between register files (a transfer: `vmovq %rax, %xmm0`).
        None if any_mem => OpClass::MemOnly,
        None if regs_only && ops.len() == 2 && ops.iter().all(|o| is_vector_reg(o)) => {
            if matches!(base, "movsd" | "movss") && !vex {
                OpClass::FpMisc // merges the low element into the destination
            } else {
                OpClass::Move
            }
        }
        None => OpClass::FpMisc,
    };
    fx.class = class;
    // `vxorpd %xmm0, %xmm0, %xmm0` / `pxor %xmm1, %xmm1`: a zero idiom.
    let logic_zero = matches!(base, "xorps" | "xorpd" | "pxor")
        && ops.len() >= 2
        && ops.iter().all(|o| *o == ops[0])
        && is_vector_reg(ops[0]);
    if logic_zero {
        fx.class = OpClass::ZeroIdiom;
        if let Some((r, _)) = reg(ops[0]) {
            fx.writes.push(Loc::Reg(r));
        }
        return Some(fx);
    }
    if compare {
        fx.writes.push(Loc::Flags);
    }
    for s in sources {
        add_source(&mut fx, s);
    }
    let Some(d) = dest else {
        return Some(fx);
    };
    if let Some((r, _)) = reg(d) {
        let full_write = base.starts_with("movap")
            || base.starts_with("movup")
            || base.starts_with("movdq")
            || matches!(base, "movq" | "movd")
            || (base.starts_with("mov") && any_mem)
            || r < 32;
        let reads_dest = class == OpClass::FpFma || (!vex && !full_write);
        if reads_dest {
            fx.reads.push(Loc::Reg(r));
        }
        fx.writes.push(Loc::Reg(r));
    } else if let Some((regs, at)) = mem(d) {
        fx.addr_reads.extend(regs);
        fx.store = Some(at);
        fx.store_address = address(d);
        if fx.class == OpClass::FpMisc && base.starts_with("mov") {
            fx.class = OpClass::MemOnly;
        }
    }
    Some(fx)
}

/// The uops of one instruction by execution resource ([`super::ports`]): a load part, the
/// computation, a store's address and data parts. Eliminated moves and zero idioms have none;
/// anything not recognised is one ALU uop (plus its memory parts), never an error.
pub(super) fn uops(text: &str) -> Vec<UopClass> {
    let fx = effects(text);
    let (m, _) = super::split_operands(text);
    let base = base_mnemonic(m);
    let mut out = Vec::new();
    if fx.load.is_some() {
        out.push(UopClass::Load);
    }
    let compute = match fx.class {
        OpClass::Branch if m.starts_with('j') => vec![UopClass::Branch],
        OpClass::Branch | OpClass::Move | OpClass::ZeroIdiom | OpClass::MemOnly => Vec::new(),
        OpClass::AluComplex | OpClass::LeaScaled if m.starts_with("lea") => {
            vec![UopClass::LeaComplex]
        }
        OpClass::Alu if m.starts_with("lea") => vec![UopClass::Lea],
        OpClass::MulHigh => vec![UopClass::Mul, UopClass::MulHigh],
        OpClass::Div => vec![UopClass::SlowInt],
        OpClass::FpAdd => vec![UopClass::FpAdd],
        OpClass::FpMul | OpClass::FpFma => vec![UopClass::FpMul],
        OpClass::FpDiv => vec![UopClass::FpDiv],
        OpClass::FpCvt => vec![UopClass::FpCvt],
        OpClass::FpMisc => vec![UopClass::FpMisc],
        _ if base == "mulx" => vec![UopClass::Mul, UopClass::MulHigh],
        OpClass::Mul => vec![UopClass::Mul],
        _ if is_shift(base) => vec![UopClass::Shift],
        _ if m.starts_with("cmov")
            || m.starts_with("set")
            || matches!(base, "adc" | "sbb" | "adcx" | "adox") =>
        {
            vec![UopClass::FlagsConsumer]
        }
        _ if base == "andn" => vec![UopClass::AndNot],
        _ if matches!(base, "popcnt" | "lzcnt" | "tzcnt" | "bsf" | "bsr") => {
            vec![UopClass::SlowInt]
        }
        _ => vec![UopClass::Alu],
    };
    out.extend(compute);
    if fx.store.is_some() {
        out.push(UopClass::StoreAddress);
        out.push(if stores_vector_register(text) {
            UopClass::FpStoreData
        } else if has_index_register(text) {
            UopClass::IndexedStoreData
        } else {
            UopClass::StoreData
        });
    }
    out
}

/// Whether a store's data comes from a float/vector register (`%xmm`, `%ymm`, `%zmm`): the
/// only register operands a store with one names besides its address.
fn stores_vector_register(text: &str) -> bool {
    ["%xmm", "%ymm", "%zmm"].iter().any(|r| text.contains(r))
}

/// Whether the instruction's memory operand has an index register (`d(%base,%index,scale)`).
fn has_index_register(text: &str) -> bool {
    text.split('(')
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .any(|inside| inside.contains(','))
}

/// Shifts and rotates, BMI2's flagless forms included.
fn is_shift(base: &str) -> bool {
    matches!(
        base,
        "shl"
            | "shr"
            | "sar"
            | "sal"
            | "rol"
            | "ror"
            | "rcl"
            | "rcr"
            | "rorx"
            | "shrx"
            | "shlx"
            | "sarx"
            | "shld"
            | "shrd"
    )
}

/// The mnemonic without its AT&T size suffix (`addl` → `add`, `mulq` → `mul`), for the
/// integer instructions the model distinguishes; others are returned unchanged.
/// Whether `text` is a two-operand (or one-operand) ALU operation of the kinds measured to
/// allocate in one slot with a register move before it ([EXP-MOVOP] in `models.rs`): `add`,
/// `sub`, `and`, `or`, `xor`, `not`, `neg`, `inc`, `dec`, and `shl`/`shr`/`sar`/`rol`/`ror` by
/// an immediate or by one. Not `adc`/`sbb`/`cmov` (flags read), `rorx` and other VEX forms,
/// `bswap`, shifts by `%cl`, `lea`, `imul` (all measured or presumed not to fuse).
pub(super) fn fuses_after_move(text: &str) -> bool {
    let (m, ops) = super::split_operands(text);
    let base = base_mnemonic(m);
    let plain = matches!(
        base,
        "add" | "sub" | "and" | "or" | "xor" | "not" | "neg" | "inc" | "dec"
    );
    let shift = matches!(base, "shl" | "shr" | "sar" | "rol" | "ror" | "sal")
        && ops.first().is_none_or(|o| o.trim() != "%cl");
    (plain || shift) && ops.len() <= 2 && !ops.iter().any(|o| is_mem(o))
}

fn base_mnemonic(m: &str) -> &str {
    const KNOWN: [&str; 42] = [
        "add", "sub", "adc", "sbb", "and", "or", "xor", "not", "neg", "inc", "dec", "cmp", "test",
        "bt", "shl", "shr", "sar", "rol", "ror", "rcl", "rcr", "mul", "imul", "div", "idiv",
        "rorx", "shrx", "shlx", "sarx", "andn", "popcnt", "lzcnt", "tzcnt", "xchg", "sal", "shld",
        "shrd", "mulx", "adcx", "adox", "bsf", "bsr",
    ];
    if KNOWN.contains(&m) {
        return m;
    }
    match m.strip_suffix(['b', 'w', 'l', 'q']) {
        Some(stem) if KNOWN.contains(&stem) => stem,
        _ => m,
    }
}

/// Adds a source operand: a register read, or a load with its address registers.
fn add_source(fx: &mut Effects, op: &str) {
    if let Some((r, _)) = reg(op) {
        fx.reads.push(Loc::Reg(r));
    } else if let Some((regs, at)) = mem(op) {
        fx.addr_reads.extend(regs);
        fx.load = Some(at);
    }
}

/// `lea` with a base, an index and a displacement is the slow form on cores that have one
/// ([`super::models`]), with a scaled index its own ([`OpClass::LeaScaled`]); `lea d(%r)`
/// and `lea (%r,%s)` are simple.
fn lea_class(op: &str) -> OpClass {
    let Some(open) = op.find('(') else {
        return OpClass::Alu;
    };
    let disp = !op[..open].is_empty();
    let inner: Vec<&str> = op[open + 1..].trim_end_matches(')').split(',').collect();
    let has_base = inner.first().is_some_and(|b| !b.trim().is_empty());
    let has_index = inner.get(1).is_some_and(|i| !i.trim().is_empty());
    let scaled = inner.get(2).is_some_and(|s| s.trim() != "1");
    let components = usize::from(disp) + usize::from(has_base) + usize::from(has_index);
    if scaled {
        OpClass::LeaScaled
    } else if components >= 3 || op.contains("%rip") {
        OpClass::AluComplex
    } else {
        OpClass::Alu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmw_alu_reads_and_writes_its_destination_and_flags() {
        let fx = effects("addl %ecx, %eax");
        assert_eq!(fx.class, OpClass::Alu);
        assert_eq!(fx.reads, vec![Loc::Reg(1), Loc::Reg(0)]);
        assert_eq!(fx.writes, vec![Loc::Flags, Loc::Reg(0)]);
    }

    #[test]
    fn bmi_forms_do_not_read_the_destination() {
        let fx = effects("rorxl $0x19, %eax, %ecx");
        assert_eq!(fx.reads, vec![Loc::Reg(0)]);
        assert_eq!(fx.writes, vec![Loc::Reg(1)]);
        let fx = effects("andnl %edx, %esi, %edi");
        assert_eq!(fx.reads, vec![Loc::Reg(2), Loc::Reg(6)]);
        assert_eq!(fx.writes, vec![Loc::Flags, Loc::Reg(7)]);
    }

    #[test]
    fn spills_and_reloads_are_stack_accesses() {
        let fx = effects("movl %r8d, 0x10(%rsp)");
        assert_eq!(fx.class, OpClass::MemOnly);
        assert_eq!(fx.store, Some(MemRef::Stack(0x10)));
        assert_eq!(fx.load, None);
        assert_eq!(fx.reads, vec![Loc::Reg(8)]);
        let fx = effects("movq (%rsp), %rdi");
        assert_eq!(fx.load, Some(MemRef::Stack(0)));
        assert_eq!(fx.writes, vec![Loc::Reg(7)]);
        let fx = effects("addl 0x8(%rsp), %eax");
        assert_eq!(fx.load, Some(MemRef::Stack(8)));
        assert_eq!(fx.reads, vec![Loc::Reg(0)]);
        let fx = effects("movl 0x4(%rdi,%rsi), %eax");
        assert_eq!(fx.load, Some(MemRef::Other));
        assert_eq!(fx.addr_reads, vec![Loc::Reg(7), Loc::Reg(6)]);
    }

    #[test]
    fn moves_zero_idioms_and_lea_forms() {
        assert_eq!(effects("movl %eax, %ecx").class, OpClass::Move);
        assert_eq!(effects("movl $0x5, %ecx").class, OpClass::Alu);
        let z = effects("xorl %eax, %eax");
        assert_eq!(z.class, OpClass::ZeroIdiom);
        assert!(z.reads.is_empty());
        assert_eq!(effects("leal (%rax,%rcx), %edx").class, OpClass::Alu);
        assert_eq!(
            effects("leal -0x28955b88(%rax,%rcx), %edx").class,
            OpClass::AluComplex
        );
        let lea = effects("leal 0x7(%rax), %edx");
        assert_eq!(lea.reads, vec![Loc::Reg(0)]);
        assert!(lea.load.is_none());
        // A scaled index is its own class ([EXP-LAT]: 2 cycles on Golden Cove, where the
        // three-component form takes 1), with or without a displacement.
        assert_eq!(
            effects("leal (%rax,%rcx,2), %edx").class,
            OpClass::LeaScaled
        );
        assert_eq!(
            effects("leaq 0x8(%rax,%rcx,4), %rdx").class,
            OpClass::LeaScaled
        );
        assert_eq!(effects("leaq (%rax,%rcx,1), %rdx").class, OpClass::Alu);
        assert_eq!(uops("leal (%rax,%rcx,2), %edx"), vec![UopClass::LeaComplex]);
        let spr = crate::models::core_model(schedlab_backend::Target::X86_64, "sapphirerapids")
            .expect("the model");
        assert_eq!(crate::latency(spr, OpClass::LeaScaled), 2.0);
        assert_eq!(crate::latency(spr, OpClass::AluComplex), 1.0);
    }

    #[test]
    fn uops_split_memory_and_computation() {
        use UopClass::*;
        assert_eq!(uops("rorxl $0x6, %eax, %ecx"), vec![Shift]);
        assert_eq!(uops("shrl $0x3, %ecx"), vec![Shift]);
        assert_eq!(uops("andnl %edx, %esi, %edi"), vec![AndNot]);
        assert_eq!(uops("addl 0x8(%rsp), %eax"), vec![Load, Alu]);
        assert_eq!(
            uops("addl %eax, 0x8(%rdi)"),
            vec![Load, Alu, StoreAddress, StoreData]
        );
        assert_eq!(uops("movl %r8d, 0x10(%rsp)"), vec![StoreAddress, StoreData]);
        assert_eq!(
            uops("movdqu %xmm8, 0x4000(%rsp)"),
            vec![StoreAddress, FpStoreData]
        );
        assert_eq!(
            uops("vmovsd %xmm1, 0x2010(%rax,%r8)"),
            vec![StoreAddress, FpStoreData]
        );
        assert_eq!(
            uops("movl %esi, (%rdi,%rcx,4)"),
            vec![StoreAddress, IndexedStoreData]
        );
        assert_eq!(
            uops("movl %esi, 0x4(,%rcx,4)"),
            vec![StoreAddress, IndexedStoreData]
        );
        assert_eq!(uops("movl 0x10(%rsp), %r8d"), vec![Load]);
        assert_eq!(uops("movl %eax, %ecx"), Vec::<UopClass>::new());
        assert_eq!(uops("xorl %eax, %eax"), Vec::<UopClass>::new());
        assert_eq!(uops("leal 0x7(%rax), %edx"), vec![Lea]);
        assert_eq!(uops("leal -0x28955b88(%rax,%rcx), %edx"), vec![LeaComplex]);
        assert_eq!(uops("imulq %rcx, %rax"), vec![Mul]);
        assert_eq!(uops("mulq %rcx"), vec![Mul, MulHigh]);
        assert_eq!(uops("adcq %rcx, %rax"), vec![FlagsConsumer]);
        assert_eq!(uops("cmovbl %ecx, %eax"), vec![FlagsConsumer]);
        assert_eq!(uops("jb 0x40"), vec![Branch]);
        assert_eq!(uops("nop"), Vec::<UopClass>::new());
        assert_eq!(uops("vpfoo %ymm1, %ymm2"), vec![FpMisc]);
    }

    #[test]
    fn vector_forms_read_what_they_read() {
        let reg = |n: u16| Loc::Reg(32 + n);
        // VEX three-operand: the destination is only written.
        let fx = effects("vmulsd %xmm2, %xmm1, %xmm0");
        assert_eq!(fx.class, OpClass::FpMul);
        assert_eq!(fx.reads, vec![reg(2), reg(1)]);
        assert_eq!(fx.writes, vec![reg(0)]);
        // Legacy SSE and fused multiply-adds accumulate into it.
        assert_eq!(effects("addsd %xmm1, %xmm0").reads, vec![reg(1), reg(0)]);
        let fma = effects("vfmadd231sd %xmm2, %xmm1, %xmm0");
        assert_eq!(fma.class, OpClass::FpFma);
        assert!(fma.reads.contains(&reg(0)));
        assert_eq!(effects("vdivsd %xmm2, %xmm1, %xmm0").class, OpClass::FpDiv);
        assert_eq!(effects("vsqrtsd %xmm2, %xmm1, %xmm0").class, OpClass::FpDiv);
        assert_eq!(
            effects("vcvtsi2sd %rax, %xmm1, %xmm0").class,
            OpClass::FpCvt
        );
        let to_int = effects("vcvttsd2si %xmm0, %rax");
        assert_eq!(
            (to_int.class, to_int.writes.clone()),
            (OpClass::FpCvt, vec![Loc::Reg(0)])
        );
        assert_eq!(effects("vmovapd %xmm1, %xmm0").class, OpClass::Move);
        assert_eq!(
            effects("vxorpd %xmm0, %xmm0, %xmm0").class,
            OpClass::ZeroIdiom
        );
        assert_eq!(effects("vandpd %xmm2, %xmm1, %xmm0").class, OpClass::FpMisc);
        let transfer = effects("vmovq %rax, %xmm0");
        assert_eq!(
            (transfer.class, transfer.reads.clone()),
            (OpClass::FpMisc, vec![Loc::Reg(0)])
        );
        // Only compares write the flags.
        assert_eq!(effects("vucomisd %xmm1, %xmm0").writes, vec![Loc::Flags]);
        assert!(!fx.writes.contains(&Loc::Flags));
        // Loads, reloads and stores of floating-point values.
        let load = effects("vmovsd 0x10(%rsp), %xmm3");
        assert_eq!(
            (load.class, load.load),
            (OpClass::MemOnly, Some(MemRef::Stack(0x10)))
        );
        assert_eq!(load.writes, vec![reg(3)]);
        let store = effects("vmovsd %xmm3, 0x18(%rsp)");
        assert_eq!(
            (store.class, store.store),
            (OpClass::MemOnly, Some(MemRef::Stack(0x18)))
        );
        let folded = effects("vaddsd (%rdi), %xmm1, %xmm0");
        assert_eq!(
            (folded.class, folded.load),
            (OpClass::FpAdd, Some(MemRef::Other))
        );
        use UopClass::*;
        assert_eq!(uops("vaddsd (%rdi), %xmm1, %xmm0"), vec![Load, FpAdd]);
        assert_eq!(uops("vfmadd213sd %xmm2, %xmm1, %xmm0"), vec![FpMul]);
        assert_eq!(uops("vmovapd %xmm1, %xmm0"), Vec::<UopClass>::new());
    }

    #[test]
    fn branches_and_compares() {
        let j = effects("jb 0x40");
        assert_eq!(j.class, OpClass::Branch);
        assert_eq!(j.reads, vec![Loc::Flags]);
        let c = effects("cmpq %rdx, %rsi");
        assert_eq!(c.writes, vec![Loc::Flags]);
        assert_eq!(c.reads, vec![Loc::Reg(2), Loc::Reg(6)]);
        let w = effects("mulq %rcx");
        assert_eq!(w.class, OpClass::MulHigh);
        assert!(w.writes.contains(&Loc::Reg(2)));
        assert_eq!(base_mnemonic("sbbl"), "sbb");
        assert_eq!(base_mnemonic("roll"), "rol");
        assert_eq!(base_mnemonic("subq"), "sub");
        assert_eq!(effects("subl %eax, %eax").class, OpClass::ZeroIdiom);
        assert!(effects("roll $0x7, %eax").reads.contains(&Loc::Reg(0)));
    }
}
