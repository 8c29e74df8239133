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
        out.push(if has_index_register(text) {
            UopClass::IndexedStoreData
        } else {
            UopClass::StoreData
        });
    }
    out
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
        let spr = super::super::models::core_model(crate::Target::X86_64, "sapphirerapids")
            .expect("the model");
        assert_eq!(super::super::latency(spr, OpClass::LeaScaled), 2.0);
        assert_eq!(super::super::latency(spr, OpClass::AluComplex), 1.0);
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
        assert_eq!(uops("vpfoo %ymm1, %ymm2"), vec![Alu]);
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
