//! What the register allocator did to a compiled function: spill stores, reloads, frame size,
//! instruction count, code size and the callee-saved registers the prologue saves.
//!
//! Cranelift exposes no allocator statistics, so they are counted from the post-regalloc VCode
//! listing (`Context::set_disasm(true)`), where every allocator move to or from the stack is an
//! ordinary load or store on a spill slot. How a spill slot is spelled differs per backend:
//!
//! | target  | spill-slot operand                | prologue/epilogue saves, not counted     |
//! |---------|-----------------------------------|------------------------------------------|
//! | x86_64  | `<offset:1>+0x10(%rsp)`           | `movq %rbx, 0xb0(%rsp)` (no `<offset:…>`)|
//! | aarch64 | `[sp]`, `[sp, #16]` (`str`/`ldr`) | `stp … [sp, #-16]!`, `ldp … [sp], #16`    |
//! | s390x   | `16(%r15)` (`stg`/`lg`, …)        | `stmg`/`lmg`, FPR saves before `block0`, restores before `br %r14` |
//! | riscv64 | `8(slot)` (`sd`/`ld`, …)          | `sd s1,168(sp)` (`sp`, not `slot`)        |
//!
//! Only the body is scanned: the prologue is everything before the first block label and each
//! epilogue is the run of restores and stack adjustments right before a return. Accesses to
//! explicit stack slots (`stack_store`/`stack_load`) live in the same area below the spill
//! slots and are not counted; `lea`-style address computations are not accesses.
//!
//! `tests/stats_crosscheck.rs` checks these counts against the allocator's own list of
//! spill/reload moves (regalloc2's verbose log) on spill-heavy functions.

use crate::compile::Compiled;
use crate::target::Target;
use cranelift_codegen::ir::Function;

/// Allocator and size figures of one compiled function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodeStats {
    /// Stores of a register to a spill slot.
    pub spills: usize,
    /// Loads from a spill slot into a register.
    pub reloads: usize,
    /// Bytes the prologue moves the stack pointer by (saves, spill area, frame record; on
    /// x86_64 the return address pushed by `call` is not included).
    pub frame_bytes: u32,
    /// Machine instructions in the VCode listing: each `a ; b` branch pair counts two,
    /// zero-size pseudo-instructions none. Branches the `MachBuffer` later folds away and
    /// multi-instruction pseudo-ops (riscv64 `select`) count as listed.
    pub insts: usize,
    /// Size of the machine code in bytes.
    pub code_bytes: usize,
    /// Callee-saved registers the prologue saves because the allocator used them, in save
    /// order; the frame registers every frame saves (x86_64 `rbp`, AArch64 `fp`/`lr`, s390x
    /// `r14`/`r15`, riscv64 `ra`/`fp`) are not listed.
    pub callee_saved: Vec<String>,
}

/// Whether a counted access stores to or loads from a spill slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpillKind {
    /// Register → spill slot.
    Spill,
    /// Spill slot → register.
    Reload,
}

/// One counted spill or reload: its 0-based line in the VCode listing and the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpillSite {
    /// Line index in [`Compiled::vcode`].
    pub line: usize,
    /// Store or load.
    pub kind: SpillKind,
    /// The instruction as listed.
    pub text: String,
}

/// Counts the statistics of `compiled` from its VCode listing and code bytes.
pub fn code_stats(compiled: &Compiled) -> CodeStats {
    let slot_area = explicit_slot_bytes(&compiled.func);
    let mut stats = vcode_stats_with_slots(&compiled.vcode, compiled.target, slot_area);
    stats.code_bytes = compiled.code.len();
    stats
}

/// The statistics readable from a VCode listing alone (`code_bytes` is left 0); assumes the
/// function has no explicit stack slots.
pub fn vcode_stats(vcode: &str, target: Target) -> CodeStats {
    vcode_stats_with_slots(vcode, target, 0)
}

/// Every spill and reload counted in `compiled`, for listings and failure messages.
pub fn spill_sites(compiled: &Compiled) -> Vec<SpillSite> {
    let slot_area = explicit_slot_bytes(&compiled.func);
    Listing::parse(&compiled.vcode, compiled.target).spill_sites(slot_area)
}

fn vcode_stats_with_slots(vcode: &str, target: Target, slot_area: i64) -> CodeStats {
    let listing = Listing::parse(vcode, target);
    let (mut spills, mut reloads) = (0, 0);
    for kind in listing.spill_kinds(slot_area) {
        match kind {
            SpillKind::Spill => spills += 1,
            SpillKind::Reload => reloads += 1,
        }
    }
    CodeStats {
        spills,
        reloads,
        frame_bytes: listing.frame_bytes(),
        insts: listing.insts(),
        code_bytes: 0,
        callee_saved: listing.callee_saved(),
    }
}

/// Bytes of the explicit stack slots, laid out as Cranelift's ABI code does (each slot at
/// its alignment, the running size rounded to 8 bytes); spill slots come after them.
pub fn explicit_slot_bytes(func: &Function) -> i64 {
    let mut size: i64 = 0;
    for (_, data) in func.sized_stack_slots.iter() {
        let align = 1i64 << data.align_shift.min(12);
        size = (size + align - 1) & !(align - 1);
        size += i64::from(data.size);
        size = (size + 7) & !7;
    }
    size
}

/// Which part of the function a listing line belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    Prologue,
    Body,
    Epilogue,
}

/// A VCode listing split into lines tagged prologue/body/epilogue.
struct Listing<'a> {
    target: Target,
    lines: Vec<(Region, &'a str)>,
}

impl<'a> Listing<'a> {
    fn parse(vcode: &'a str, target: Target) -> Self {
        let mut lines: Vec<(Region, &str)> = Vec::new();
        let mut region = Region::Prologue;
        for line in vcode.lines() {
            let line = line.trim();
            if is_label(line) {
                region = Region::Body;
            }
            lines.push((region, line));
        }
        let mut listing = Listing { target, lines };
        let saved = listing.saved_registers();
        // Mark each epilogue: walking back from a return over restores and SP adjustments.
        for i in 0..listing.lines.len() {
            let (region, line) = listing.lines[i];
            if region != Region::Body || !is_return(target, line) {
                continue;
            }
            listing.lines[i].0 = Region::Epilogue;
            let mut j = i;
            while j > 0 {
                j -= 1;
                let (r, l) = listing.lines[j];
                if r != Region::Body || is_label(l) {
                    break;
                }
                if l.starts_with("unwind ") || is_epilogue_line(target, l, &saved) {
                    listing.lines[j].0 = Region::Epilogue;
                } else {
                    break;
                }
            }
        }
        listing
    }

    fn instructions(&self) -> impl Iterator<Item = (usize, Region, &'a str)> + '_ {
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, (_, l))| !l.is_empty() && !is_label(l) && !l.starts_with("unwind "))
            .map(|(i, &(r, l))| (i, r, l))
    }

    fn insts(&self) -> usize {
        self.instructions()
            .filter(|(_, _, l)| !is_zero_size(l))
            .map(|(_, _, l)| {
                let pair = l.split(';').filter(|p| !p.trim().is_empty()).count();
                // riscv64's conditional branch lists both targets on one line.
                if l.contains("not_taken(") {
                    2
                } else {
                    pair.max(1)
                }
            })
            .sum()
    }

    fn spill_sites(&self, slot_area: i64) -> Vec<SpillSite> {
        self.body_instructions()
            .filter_map(|(i, l)| {
                classify(self.target, l, slot_area).map(|kind| SpillSite {
                    line: i,
                    kind,
                    text: l.to_string(),
                })
            })
            .collect()
    }

    /// The kind of each of [`Listing::spill_sites`], without their texts.
    fn spill_kinds(&self, slot_area: i64) -> impl Iterator<Item = SpillKind> + '_ {
        self.body_instructions()
            .filter_map(move |(_, l)| classify(self.target, l, slot_area))
    }

    /// The body's instructions with their line indices.
    fn body_instructions(&self) -> impl Iterator<Item = (usize, &'a str)> + '_ {
        self.instructions()
            .filter(|&(_, r, _)| r == Region::Body)
            .map(|(i, _, l)| (i, l))
    }

    fn prologue(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.lines
            .iter()
            .take_while(|(r, _)| *r == Region::Prologue)
            .map(|&(_, l)| l)
    }

    /// `(class, hw_enc)` of each register the prologue's unwind records say it saved.
    fn saved_pregs(&self) -> Vec<(char, u32)> {
        self.prologue()
            .filter(|l| l.starts_with("unwind SaveReg"))
            .filter_map(|l| {
                let reg = l.split("reg: p").nth(1)?;
                let digits: String = reg.chars().take_while(char::is_ascii_digit).collect();
                let class = reg[digits.len()..].chars().next()?;
                Some((class, digits.parse().ok()?))
            })
            .collect()
    }

    /// Names (as the listing spells them) of every register saved, frame registers included.
    fn saved_registers(&self) -> Vec<String> {
        let pregs = self.saved_pregs();
        if pregs.is_empty() {
            return self.stored_in_prologue();
        }
        pregs
            .into_iter()
            .map(|(c, n)| reg_name(self.target, c, n))
            .collect()
    }

    fn callee_saved(&self) -> Vec<String> {
        let pregs = self.saved_pregs();
        if pregs.is_empty() {
            // Compiled without unwind information (`set unwind_info=false`, the default of
            // `.clif` files): the prologue's own stores say what it saves.
            return self
                .stored_in_prologue()
                .into_iter()
                .filter(|r| !is_frame_register_name(self.target, r))
                .collect();
        }
        pregs
            .into_iter()
            .filter(|&(c, n)| !is_frame_register(self.target, c, n))
            .map(|(c, n)| reg_name(self.target, c, n))
            .collect()
    }

    /// Registers the prologue stores to the stack (pushes, stores and store-pairs relative to
    /// the stack pointer, s390x `stmg` ranges), in order, frame registers included.
    fn stored_in_prologue(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for line in self.prologue() {
            let (mnemonic, ops) = operands(line);
            let Some((&last, data)) = ops.split_last() else {
                continue;
            };
            let stores_data = match self.target {
                Target::X86_64 => {
                    mnemonic.starts_with("mov")
                        && last.ends_with("(%rsp)")
                        && !last.contains("<offset:")
                }
                Target::Aarch64 => {
                    matches!(mnemonic, "str" | "stp" | "stur") && last.starts_with("[sp")
                }
                Target::S390x => mnemonic.starts_with("st") && last.ends_with("(%r15)"),
                Target::Riscv64 => {
                    matches!(mnemonic, "sd" | "fsd" | "sw" | "fsw") && last.ends_with("(sp)")
                }
            };
            let regs: Vec<String> = match self.target {
                Target::X86_64 if mnemonic.starts_with("push") => vec![last.to_string()],
                Target::S390x if matches!(mnemonic, "stmg" | "stm") && ops.len() == 3 => {
                    // `stmg` stores the whole range from the lowest register saved, and
                    // Cranelift's unwind records list each of them (r14/r15: the frame).
                    let num = |r: &str| r.strip_prefix("%r").and_then(|n| n.parse::<u32>().ok());
                    match (num(ops[0]), num(ops[1])) {
                        (Some(a), Some(b)) if a <= b => (a..=b).map(|n| format!("%r{n}")).collect(),
                        _ => Vec::new(),
                    }
                }
                _ if stores_data => data.iter().map(|r| r.to_string()).collect(),
                _ => Vec::new(),
            };
            for r in regs {
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        out
    }

    fn frame_bytes(&self) -> u32 {
        let mut bytes: u64 = 0;
        let mut unknown_adjust = false;
        let mut unwind_alloc: u64 = 0;
        // AArch64 frames beyond an immediate's reach: `movz x16, #n` (`movk` for the upper
        // halves) and then `sub sp, sp, x16, UXTX`.
        let mut scratch: Option<u64> = None;
        let mut register_adjust: u64 = 0;
        // riscv64's: `lui t6, hi`, `addi t6, t6, lo`, `add sp, sp, t6` (t6 negative).
        let mut riscv_scratch: Option<i64> = None;
        for line in self.prologue() {
            if self.target == Target::Riscv64 {
                let (mnemonic, ops) = operands(line);
                let imm = |i: usize| ops.get(i).and_then(|o| parse_imm(o));
                match (mnemonic, ops.first()) {
                    ("lui", Some(&"t6")) => riscv_scratch = imm(1).map(|v| v << 12),
                    ("addi", Some(&"t6")) if ops.get(1) == Some(&"t6") => {
                        riscv_scratch = riscv_scratch.zip(imm(2)).map(|(a, b)| a + b);
                    }
                    ("add", Some(&"sp")) if ops.get(2) == Some(&"t6") => {
                        if let Some(v) = riscv_scratch.filter(|v| *v < 0) {
                            register_adjust += v.unsigned_abs();
                            continue;
                        }
                    }
                    _ => {}
                }
            }
            if self.target == Target::Aarch64 {
                let (mnemonic, ops) = operands(line);
                if ops.first() == Some(&"x16") {
                    let imm = ops
                        .get(1)
                        .and_then(|o| parse_imm(o))
                        .and_then(|v| u64::try_from(v).ok());
                    let shift = ops
                        .get(2)
                        .and_then(|o| o.strip_prefix("lsl #"))
                        .and_then(|n| n.parse::<u32>().ok())
                        .unwrap_or(0);
                    match (mnemonic, imm) {
                        ("movz", Some(v)) => scratch = Some(v << shift),
                        ("movk", Some(v)) => {
                            let mask = !(0xffffu64 << shift);
                            scratch = scratch.map(|old| (old & mask) | (v << shift));
                        }
                        _ => {}
                    }
                }
                if mnemonic == "sub"
                    && ops.first() == Some(&"sp")
                    && ops.get(2) == Some(&"x16")
                    && let Some(v) = scratch
                {
                    register_adjust += v;
                    continue;
                }
            }
            if let Some(size) = line
                .strip_prefix("unwind StackAlloc { size: ")
                .and_then(|r| r.trim_end_matches(" }").trim().parse::<u64>().ok())
            {
                unwind_alloc += size;
                continue;
            }
            match sp_decrement(self.target, line) {
                SpAdjust::Bytes(n) => bytes += n,
                SpAdjust::Unknown => unknown_adjust = true,
                SpAdjust::None => {}
            }
        }
        bytes += register_adjust;
        if unknown_adjust {
            // A register-operand adjustment (large frames): the unwind record has the size.
            bytes += unwind_alloc;
        }
        u32::try_from(bytes).unwrap_or(u32::MAX)
    }
}

fn is_label(line: &str) -> bool {
    line.ends_with(':') && line.starts_with("block") && !line.contains(' ')
}

fn is_zero_size(line: &str) -> bool {
    let mnemonic = line.split_whitespace().next().unwrap_or("");
    matches!(mnemonic, "uninit" | "dummy_use")
}

fn is_return(target: Target, line: &str) -> bool {
    match target {
        Target::X86_64 => line.starts_with("retq") || line == "ret",
        Target::Aarch64 | Target::Riscv64 => line == "ret" || line.starts_with("ret "),
        Target::S390x => line == "br %r14",
    }
}

/// Splits `mnemonic operands` (after any `;` comment) into the mnemonic and the top-level
/// comma-separated operands.
fn operands(line: &str) -> (&str, Vec<&str>) {
    split_operands(line.split(';').next().unwrap_or(""), false)
}

/// Splits `mnemonic operands` into the mnemonic and its top-level comma-separated operands:
/// commas inside `(…)`, `[…]` and, when `braces` is set, `{…}` do not split.
pub fn split_operands(text: &str, braces: bool) -> (&str, Vec<&str>) {
    let text = text.trim();
    let (mnemonic, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let mut ops = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '{' if braces => depth += 1,
            '}' if braces => depth -= 1,
            ',' if depth == 0 => {
                ops.push(rest[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !rest.trim().is_empty() {
        ops.push(rest[start..].trim());
    }
    (mnemonic, ops)
}

/// Parses a decimal or `0x` hexadecimal immediate, with optional sign and `#`/`$` prefix.
pub fn parse_imm(text: &str) -> Option<i64> {
    let t = text.trim().trim_start_matches(['#', '$']);
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let v = match t.strip_prefix("0x") {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None => t.parse::<i64>().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// The spill-slot offset of an operand if it addresses a spill slot on `target`.
fn slot_offset(target: Target, op: &str) -> Option<i64> {
    match target {
        Target::X86_64 => {
            let rest = op.strip_prefix("<offset:1>+")?;
            let disp = rest.strip_suffix("(%rsp)")?;
            if disp.is_empty() {
                Some(0)
            } else {
                parse_imm(disp)
            }
        }
        Target::Aarch64 => {
            let inner = op.strip_prefix("[sp")?.strip_suffix(']')?;
            if inner.is_empty() {
                return Some(0);
            }
            parse_imm(inner.strip_prefix(',')?.trim())
        }
        Target::S390x => {
            let disp = op.strip_suffix("(%r15)")?;
            parse_imm(disp)
        }
        Target::Riscv64 => {
            let disp = op.strip_suffix("(slot)")?;
            parse_imm(disp)
        }
    }
}

/// Whether a body instruction is a spill store or a reload (or neither).
fn classify(target: Target, line: &str, slot_area: i64) -> Option<SpillKind> {
    // Every slot operand [`slot_offset`] reads contains this text: a line without it is
    // neither, and is not split.
    let slot_text = match target {
        Target::X86_64 => "<offset:1>+",
        Target::Aarch64 => "[sp",
        Target::S390x => "(%r15)",
        Target::Riscv64 => "(slot)",
    };
    if !contains_text(line, slot_text) {
        return None;
    }
    let (mnemonic, ops) = operands(line);
    let slot_at = |i: usize| {
        ops.get(i)
            .and_then(|op| slot_offset(target, op))
            .filter(|&off| off >= slot_area)
            .is_some()
    };
    match target {
        Target::X86_64 => {
            if mnemonic.starts_with("lea") || ops.is_empty() {
                return None;
            }
            let last = ops.len() - 1;
            if slot_at(last) {
                Some(SpillKind::Spill)
            } else if (0..last).any(slot_at) {
                Some(SpillKind::Reload)
            } else {
                None
            }
        }
        Target::Aarch64 => {
            if !slot_at(1) || ops.len() != 2 {
                return None;
            }
            if mnemonic.starts_with("str") || mnemonic.starts_with("stur") {
                Some(SpillKind::Spill)
            } else if mnemonic.starts_with("ldr") || mnemonic.starts_with("ldur") {
                Some(SpillKind::Reload)
            } else {
                None
            }
        }
        Target::S390x => {
            if ops.len() != 2 || !slot_at(1) || mnemonic.starts_with("stm") {
                return None;
            }
            if mnemonic.starts_with("st") || mnemonic.starts_with("vst") {
                Some(SpillKind::Spill)
            } else if (mnemonic.starts_with('l') || mnemonic.starts_with("vl"))
                && !matches!(mnemonic, "la" | "lay" | "larl" | "lmg" | "lm" | "lmy")
            {
                Some(SpillKind::Reload)
            } else {
                None
            }
        }
        Target::Riscv64 => {
            if ops.len() != 2 || !slot_at(1) {
                return None;
            }
            if mnemonic.starts_with('s') || mnemonic.starts_with("fs") || mnemonic.starts_with("vs")
            {
                Some(SpillKind::Spill)
            } else if mnemonic.starts_with('l')
                || mnemonic.starts_with("fl")
                || mnemonic.starts_with("vl")
            {
                Some(SpillKind::Reload)
            } else {
                None
            }
        }
    }
}

/// Whether `text` occurs in `line`: a scan for its first byte, cheaper than `str::contains`'s
/// searcher on lines this short.
fn contains_text(line: &str, text: &str) -> bool {
    let (line, text) = (line.as_bytes(), text.as_bytes());
    let Some(&first) = text.first() else {
        return true;
    };
    line.iter()
        .enumerate()
        .any(|(i, &b)| b == first && line[i..].starts_with(text))
}

/// Whether `line`, found right before a return, restores saved registers or pops the frame.
fn is_epilogue_line(target: Target, line: &str, saved: &[String]) -> bool {
    let (mnemonic, ops) = operands(line);
    let restores_saved = |sp_base: &str| {
        ops.len() == 2 && ops[1].contains(sp_base) && saved.iter().any(|r| r == ops[0])
    };
    match target {
        Target::X86_64 => {
            mnemonic.starts_with("pop")
                || (ops.last() == Some(&"%rsp") && !line.contains("<offset:"))
                || (ops.len() == 2
                    && ops[0].ends_with("(%rsp)")
                    && !ops[0].contains("<offset:")
                    && saved.iter().any(|r| r == ops[1]))
        }
        Target::Aarch64 => {
            line.contains("[sp], #")
                || (ops.first() == Some(&"sp") && matches!(mnemonic, "add" | "mov"))
                || restores_saved("[sp")
        }
        Target::S390x => {
            mnemonic.starts_with("lm")
                || (ops.first() == Some(&"%r15")
                    && matches!(mnemonic, "aghi" | "agfi" | "lay" | "la"))
                || restores_saved("(%r15)")
        }
        Target::Riscv64 => {
            (ops.first() == Some(&"sp") && mnemonic.starts_with("add"))
                || restores_saved("(sp)")
                || (ops.len() == 2 && matches!(ops[0], "ra" | "fp") && ops[1].ends_with("(sp)"))
        }
    }
}

enum SpAdjust {
    None,
    Bytes(u64),
    Unknown,
}

/// How far a prologue instruction moves the stack pointer down.
fn sp_decrement(target: Target, line: &str) -> SpAdjust {
    let (mnemonic, ops) = operands(line);
    let neg = |v: Option<i64>| match v {
        Some(v) if v < 0 => SpAdjust::Bytes(v.unsigned_abs()),
        Some(_) => SpAdjust::None,
        None => SpAdjust::Unknown,
    };
    match target {
        Target::X86_64 => {
            if mnemonic.starts_with("push") {
                SpAdjust::Bytes(8)
            } else if mnemonic.starts_with("sub") && ops.last() == Some(&"%rsp") {
                match ops.first().and_then(|o| parse_imm(o)) {
                    Some(v) => SpAdjust::Bytes(v.unsigned_abs()),
                    None => SpAdjust::Unknown,
                }
            } else {
                SpAdjust::None
            }
        }
        Target::Aarch64 => {
            if line.ends_with("]!") {
                let addr = ops.last().copied().unwrap_or("");
                neg(addr
                    .trim_end_matches("]!")
                    .split(", ")
                    .nth(1)
                    .and_then(parse_imm))
            } else if mnemonic == "sub" && ops.first() == Some(&"sp") {
                let imm = ops.get(2).and_then(|o| parse_imm(o));
                let shift = if ops.get(3) == Some(&"LSL #12") {
                    12
                } else {
                    0
                };
                match imm {
                    Some(v) => SpAdjust::Bytes(v.unsigned_abs() << shift),
                    None => SpAdjust::Unknown,
                }
            } else {
                SpAdjust::None
            }
        }
        Target::S390x => {
            if ops.first() != Some(&"%r15") {
                return SpAdjust::None;
            }
            match mnemonic {
                "aghi" | "agfi" => neg(ops.get(1).and_then(|o| parse_imm(o))),
                "lay" | "la" => neg(ops
                    .get(1)
                    .and_then(|o| o.strip_suffix("(%r15)"))
                    .and_then(parse_imm)),
                "sgr" | "agr" | "slgfi" => SpAdjust::Unknown,
                _ => SpAdjust::None,
            }
        }
        Target::Riscv64 => {
            if ops.first() != Some(&"sp") || ops.get(1) != Some(&"sp") {
                return SpAdjust::None;
            }
            match mnemonic {
                "addi" => neg(ops.get(2).and_then(|o| parse_imm(o))),
                "add" | "sub" => SpAdjust::Unknown,
                _ => SpAdjust::None,
            }
        }
    }
}

/// [`is_frame_register`] by the listing's name of the register.
fn is_frame_register_name(target: Target, name: &str) -> bool {
    match target {
        Target::X86_64 => name == "%rbp",
        Target::Aarch64 => matches!(name, "fp" | "lr" | "x29" | "x30"),
        Target::S390x => matches!(name, "%r14" | "%r15"),
        Target::Riscv64 => matches!(name, "ra" | "fp" | "s0"),
    }
}

/// Whether a saved register belongs to the frame record rather than to the allocator.
fn is_frame_register(target: Target, class: char, hw: u32) -> bool {
    class == 'i'
        && match target {
            Target::X86_64 => hw == 5,
            Target::Aarch64 => hw == 29 || hw == 30,
            Target::S390x => hw == 14 || hw == 15,
            Target::Riscv64 => hw == 1 || hw == 8,
        }
}

/// The listing's name for regalloc2's physical register `p<hw><class>`.
fn reg_name(target: Target, class: char, hw: u32) -> String {
    const X86: [&str; 16] = [
        "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12",
        "r13", "r14", "r15",
    ];
    const RV: [&str; 32] = [
        "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "fp", "s1", "a0", "a1", "a2", "a3", "a4",
        "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
        "t5", "t6",
    ];
    match (target, class) {
        (Target::X86_64, 'i') => X86
            .get(hw as usize)
            .map_or_else(|| format!("%r?{hw}"), |n| format!("%{n}")),
        (Target::X86_64, _) => format!("%xmm{hw}"),
        (Target::Aarch64, 'i') => match hw {
            29 => "fp".to_string(),
            30 => "lr".to_string(),
            _ => format!("x{hw}"),
        },
        (Target::Aarch64, _) => format!("d{hw}"),
        (Target::S390x, 'i') => format!("%r{hw}"),
        (Target::S390x, _) => format!("%f{hw}"),
        (Target::Riscv64, 'i') => RV
            .get(hw as usize)
            .map_or_else(|| format!("x{hw}"), |n| n.to_string()),
        (Target::Riscv64, _) => match hw {
            8 | 9 => format!("fs{}", hw - 8),
            18..=27 => format!("fs{}", hw - 16),
            _ => format!("f{hw}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_found_wherever_it_starts() {
        for (line, found) in [
            ("movq %rax, <offset:1>+8(%rsp)", true),
            ("<offset:1>+8(%rsp)", true),
            ("movq <offset:1>+", true),
            ("movq <offset:1>", false),
            ("movq <<offset:1>+0(%rsp), %rax", true),
            ("", false),
        ] {
            assert_eq!(contains_text(line, "<offset:1>+"), found, "{line}");
            assert_eq!(line.contains("<offset:1>+"), found, "{line}");
        }
    }

    #[test]
    fn x86_64_counts_offset_operands_only() {
        let vcode = "  pushq %rbp\n  unwind PushFrameRegs { offset_upward_to_caller_sp: 16 }\n  \
                     movq %rsp, %rbp\n  subq $0xe0, %rsp\n  movq %rbx, 0xb0(%rsp)\n  \
                     unwind SaveReg { clobber_offset: 0, reg: p3i }\nblock0:\n  \
                     movq %r8, <offset:1>+8(%rsp)\n  movq <offset:1>+(%rsp), %rdi\n  \
                     leaq <offset:1>+8(%rsp), %rax\n  jle     label3; j label2\n  \
                     movq 0xb0(%rsp), %rbx\n  addq $0xe0, %rsp\n  movq %rbp, %rsp\n  popq %rbp\n  retq\n";
        let s = vcode_stats(vcode, Target::X86_64);
        assert_eq!((s.spills, s.reloads), (1, 1));
        assert_eq!(s.frame_bytes, 8 + 0xe0);
        assert_eq!(s.callee_saved, vec!["%rbx".to_string()]);
        // 4 prologue + store, load, lea, 2 branches, 5 epilogue
        assert_eq!(s.insts, 4 + 3 + 2 + 5);
    }

    #[test]
    fn without_unwind_records_the_prologue_stores_say_what_is_saved() {
        // `set unwind_info=false` (the default of `.clif` files): no `unwind` lines.
        let x86 = "  pushq %rbp\n  movq %rsp, %rbp\n  subq $0x40, %rsp\n  movq %rbx, 0x10(%rsp)\n  \
                   movq %r12, 0x18(%rsp)\nblock0:\n  movq %rdi, <offset:1>+(%rsp)\n  \
                   movq 0x10(%rsp), %rbx\n  addq $0x40, %rsp\n  movq %rbp, %rsp\n  popq %rbp\n  retq\n";
        let s = vcode_stats(x86, Target::X86_64);
        assert_eq!(s.callee_saved, vec!["%rbx", "%r12"]);
        assert_eq!((s.frame_bytes, s.spills), (8 + 0x40, 1));
        let arm = "  stp fp, lr, [sp, #-16]!\n  mov fp, sp\n  stp x19, x20, [sp, #-16]!\n  \
                   movz x16, #5808\n  sub sp, sp, x16, UXTX\nblock0:\n  str x0, [sp]\n  \
                   movz x16, #5808\n  add sp, sp, x16, UXTX\n  ldp x19, x20, [sp], #16\n  \
                   ldp fp, lr, [sp], #16\n  ret\n";
        let s = vcode_stats(arm, Target::Aarch64);
        assert_eq!(s.callee_saved, vec!["x19", "x20"]);
        assert_eq!(s.frame_bytes, 16 + 16 + 5808);
        // A frame needing `movk` for its upper half.
        let arm = "  stp fp, lr, [sp, #-16]!\n  movz x16, #0x1000\n  movk x16, #0x1, lsl #16\n  \
                   sub sp, sp, x16, UXTX\nblock0:\n  ret\n";
        assert_eq!(vcode_stats(arm, Target::Aarch64).frame_bytes, 16 + 0x1_1000);
        // s390x stores the range from the lowest saved register (the frame's r14/r15 apart).
        let z = "  stmg %r11, %r15, 88(%r15)\n  aghi %r15, -160\nblock0:\n  lgr %r11, %r2\n  \
                 agr %r2, %r11\n  lmg %r11, %r15, 248(%r15)\n  br %r14\n";
        assert_eq!(
            vcode_stats(z, Target::S390x).callee_saved,
            vec!["%r11", "%r12", "%r13"]
        );
        let rv = "  addi sp,sp,-16\n  sd ra,8(sp)\n  sd fp,0(sp)\n  mv fp,sp\n  addi sp,sp,-16\n  \
                  sd s1,8(sp)\nblock0:\n  mv s1,a0\n  ld s1,8(sp)\n  addi sp,sp,16\n  ld ra,8(sp)\n  \
                  ld fp,0(sp)\n  addi sp,sp,16\n  ret\n";
        assert_eq!(vcode_stats(rv, Target::Riscv64).callee_saved, vec!["s1"]);
        let rv = "  addi sp,sp,-16\n  sd ra,8(sp)\n  sd fp,0(sp)\n  mv fp,sp\n  lui t6,-1\n  \
                  addi t6,t6,-1712\n  add sp,sp,t6\nblock0:\n  ret\n";
        assert_eq!(vcode_stats(rv, Target::Riscv64).frame_bytes, 16 + 5808);
    }

    #[test]
    fn aarch64_ignores_writeback_saves_and_restores() {
        let vcode = "  stp fp, lr, [sp, #-16]!\n  mov fp, sp\n  str x19, [sp, #-16]!\n  \
                     unwind SaveReg { clobber_offset: 0, reg: p19i }\n  sub sp, sp, #48\n\
                     block0:\n  str x4, [sp]\n  ldr x8, [sp, #8]\n  ldr w5, [x0, #4]\n  \
                     add sp, sp, #48\n  ldr x19, [sp], #16\n  ldp fp, lr, [sp], #16\n  ret\n";
        let s = vcode_stats(vcode, Target::Aarch64);
        assert_eq!((s.spills, s.reloads), (1, 1));
        assert_eq!(s.frame_bytes, 16 + 16 + 48);
        assert_eq!(s.callee_saved, vec!["x19".to_string()]);
    }

    #[test]
    fn s390x_epilogue_fpr_restores_are_not_reloads() {
        let vcode = "  stmg %r6, %r15, 48(%r15)\n  unwind SaveReg { clobber_offset: 48, reg: p6i }\n  \
                     unwind SaveReg { clobber_offset: 112, reg: p14i }\n  \
                     unwind SaveReg { clobber_offset: 120, reg: p15i }\n  aghi %r15, -168\n  \
                     std %f8, 160(%r15)\n  unwind SaveReg { clobber_offset: 0, reg: p8f }\n\
                     block0:\n  stg %r6, 8(%r15)\n  lg %r11, 8(%r15)\n  l %r8, 0(%r2)\n  \
                     ld %f8, 160(%r15)\n  lmg %r6, %r15, 216(%r15)\n  br %r14\n";
        let s = vcode_stats(vcode, Target::S390x);
        assert_eq!((s.spills, s.reloads), (1, 1));
        assert_eq!(s.frame_bytes, 168);
        assert_eq!(s.callee_saved, vec!["%r6".to_string(), "%f8".to_string()]);
    }

    #[test]
    fn riscv64_counts_slot_operands_and_both_branch_targets() {
        let vcode = "  addi sp,sp,-16\n  sd ra,8(sp)\n  sd fp,0(sp)\n  mv fp,sp\n  \
                     addi sp,sp,-32\n  sd s1,24(sp)\n  unwind SaveReg { clobber_offset: 8, reg: p9i }\n\
                     block0:\n  sd a4,0(slot)\n  ld a6,8(slot)\n  \
                     ble a0,a2,taken(label3),not_taken(label2)\nblock2:\n  ld s1,24(sp)\n  \
                     addi sp,sp,32\n  ld ra,8(sp)\n  ld fp,0(sp)\n  addi sp,sp,16\n  ret\n";
        let s = vcode_stats(vcode, Target::Riscv64);
        assert_eq!((s.spills, s.reloads), (1, 1));
        assert_eq!(s.frame_bytes, 48);
        assert_eq!(s.callee_saved, vec!["s1".to_string()]);
        assert_eq!(s.insts, 6 + 2 + 2 + 6);
    }
}
