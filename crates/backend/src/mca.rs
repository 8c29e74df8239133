//! Static cost of the hot loop with LLVM's `llvm-mca`: cycles per loop iteration (for the MD5
//! kernel, one 64-byte block) on named CPU models.
//!
//! **Disassembly.** The exact code bytes are wrapped in an ELF object ([`crate::object`]) and
//! decoded by `llvm-objdump -d`. `llvm-mc --disassemble` decodes the same bytes but prints no
//! addresses, and its `--show-encoding` re-encodes instructions (x86 branch and immediate
//! forms can change length), so offsets and branch targets could not be trusted.
//!
//! **Which instructions.** The hot loop is the largest natural loop of the disassembled
//! control-flow graph: for each back edge (a branch to an address at or before itself) the
//! blocks that reach the branch without passing the loop header, in address order. Blocks
//! that leave the loop — the out-of-line bounds-check failures, the exit with its epilogue —
//! are not part of it, so the prologue, epilogue and cold paths do not dilute the figure.
//! Without a loop the whole function up to the first trap after its first return is costed
//! (what is cut is padding and trap stubs).
//!
//! **Costing.** llvm-mca treats the body as straight-line code repeated [`ITERATIONS`] times
//! (branches are issued but never mispredicted); the figure is `Total Cycles / Iterations`.
//!
//! **CPU models** (LLVM 14): x86_64 `znver3`, `skylake`; AArch64 `thunderx2t99` (the ThunderX2
//! of the original measurements), `cortex-a72`; s390x `z15`; riscv64 `sifive-u74`. Current
//! cores come from LLVM 19's `llvm-mca-19` (Debian `llvm-19`): x86_64 `znver4`,
//! `sapphirerapids`; AArch64 `neoverse-n1`, `neoverse-v2` (LLVM 14's `neoverse-n1` is its
//! Cortex-A57 model, so N1 is only offered from LLVM 19).

use crate::compile::Compiled;
use crate::emulate::find_program;
use crate::object::{ObjectError, object_from_compiled};
use crate::target::Target;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

/// How many times llvm-mca repeats the loop body.
pub const ITERATIONS: u32 = 100;

/// Why llvm-mca could not cost a function.
#[derive(Debug, thiserror::Error)]
pub enum McaError {
    /// An LLVM tool is not installed.
    #[error(
        "`{program}` not found on PATH (tried {tried}); install the Debian package \
         `{package}` (apt-get install -y {package})"
    )]
    MissingTool {
        /// The tool's base name.
        program: String,
        /// The names tried.
        tried: String,
        /// The Debian package providing it.
        package: &'static str,
    },
    /// The CPU is not one schedlab offers for the target.
    #[error("unknown CPU `{cpu}` for {target}; valid: {}", valid.join(", "))]
    UnknownCpu {
        /// The CPU asked for.
        cpu: String,
        /// The target.
        target: Target,
        /// The CPUs offered.
        valid: Vec<&'static str>,
    },
    /// Writing the object failed.
    #[error(transparent)]
    Object(#[from] ObjectError),
    /// Temporary files or a child process could not be handled.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A tool exited unsuccessfully.
    #[error("`{program}` failed ({status}):\n{stderr}")]
    Tool {
        /// The command.
        program: String,
        /// Its exit status.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// The disassembly or the cost report was not understood.
    #[error("cannot read {what}: {detail}")]
    Parse {
        /// Which output.
        what: &'static str,
        /// What was wrong.
        detail: String,
    },
}

/// The CPU models offered for `target`, in report order (LLVM 14's first, then LLVM 19's).
pub fn mca_cpus(target: Target) -> &'static [&'static str] {
    match target {
        Target::X86_64 => &["znver3", "skylake", "znver4", "sapphirerapids"],
        Target::Aarch64 => &["thunderx2t99", "cortex-a72", "neoverse-n1", "neoverse-v2"],
        Target::S390x => &["z15"],
        Target::Riscv64 => &["sifive-u74"],
    }
}

/// The LLVM major version whose llvm-mca costs `cpu`: 19 for the current cores LLVM 14 lacks
/// (or models wrongly), else 14 (any installed llvm-mca, plain name first).
pub fn mca_llvm_major(cpu: &str) -> u32 {
    match cpu {
        "znver4" | "sapphirerapids" | "neoverse-n1" | "neoverse-v2" => 19,
        _ => 14,
    }
}

/// The llvm-mca that costs `cpu` ([`mca_llvm_major`]).
pub fn mca_tool_for(cpu: &str) -> Result<PathBuf, McaError> {
    match mca_llvm_major(cpu) {
        19 => find_program("llvm-mca-19").ok_or_else(|| McaError::MissingTool {
            program: "llvm-mca".to_string(),
            tried: "`llvm-mca-19`".to_string(),
            package: "llvm-19",
        }),
        _ => llvm_tool("llvm-mca"),
    }
}

/// One decoded instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisasmInst {
    /// Offset from the function's start.
    pub addr: u64,
    /// Assembly text as llvm-objdump prints it (comments removed).
    pub text: String,
}

/// The instructions llvm-mca costs and where they came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HotLoop {
    /// Whether a loop was found (else: the function up to its first trap after a return).
    pub is_loop: bool,
    /// Offset of the loop header (or 0).
    pub header: u64,
    /// The instructions, in address order.
    pub insts: Vec<DisasmInst>,
}

/// A loop costed on one CPU model.
#[derive(Clone, Debug, PartialEq)]
pub struct McaReport {
    /// The CPU model.
    pub cpu: String,
    /// Cycles per loop iteration (`Total Cycles / Iterations`).
    pub cycles_per_iteration: f64,
    /// Instructions per cycle llvm-mca reports.
    pub ipc: f64,
    /// Instructions in the costed body.
    pub body_insts: usize,
}

/// Cycles per iteration of `compiled`'s hot loop on `cpu` (see the module docs).
pub fn mca_cycles(compiled: &Compiled, cpu: &str) -> Result<f64, McaError> {
    Ok(mca_report(compiled, cpu)?.cycles_per_iteration)
}

/// [`mca_cycles`] with the body size and IPC.
pub fn mca_report(compiled: &Compiled, cpu: &str) -> Result<McaReport, McaError> {
    let target = compiled.target;
    if !mca_cpus(target).contains(&cpu) {
        return Err(McaError::UnknownCpu {
            cpu: cpu.to_string(),
            target,
            valid: mca_cpus(target).to_vec(),
        });
    }
    let mca = mca_tool_for(cpu)?;
    let body = hot_loop(compiled)?;
    let source = mca_source(target, &body);
    let dir = tempdir()?;
    let input = dir.path().join("loop.s");
    std::fs::write(&input, &source).map_err(io_err("writing the llvm-mca input"))?;
    let output = Command::new(&mca)
        .arg(format!("-mtriple={}", llvm_triple(target)))
        .arg(format!("-mcpu={cpu}"))
        .arg(format!("-iterations={ITERATIONS}"))
        .arg(&input)
        .output()
        .map_err(io_err(format!("starting {}", mca.display())))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(McaError::Tool {
            program: mca.display().to_string(),
            status: output.status.to_string(),
            stderr: stderr.into_owned(),
        });
    }
    // llvm-mca reports assembler errors and an unknown -mcpu but may still exit 0 and cost
    // what it did parse; neither may pass silently.
    if stderr.contains("error:") || stderr.contains("is not a recognized processor") {
        return Err(McaError::Tool {
            program: mca.display().to_string(),
            status: "unknown CPU".to_string(),
            stderr: stderr.into_owned(),
        });
    }
    let (cycles, ipc) = parse_mca(&stdout)?;
    Ok(McaReport {
        cpu: cpu.to_string(),
        cycles_per_iteration: cycles,
        ipc,
        body_insts: body.insts.len(),
    })
}

/// Reads `Iterations`, `Total Cycles` and `IPC` from llvm-mca's summary view.
fn parse_mca(stdout: &str) -> Result<(f64, f64), McaError> {
    let field = |name: &str| -> Option<f64> {
        stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .and_then(|rest| rest.trim_start_matches(':').trim().parse::<f64>().ok())
    };
    let bad = |detail: &str| McaError::Parse {
        what: "llvm-mca's summary",
        detail: format!(
            "{detail} in:\n{}",
            stdout.lines().take(12).collect::<Vec<_>>().join("\n")
        ),
    };
    let iterations = field("Iterations").ok_or_else(|| bad("no `Iterations:`"))?;
    let total = field("Total Cycles").ok_or_else(|| bad("no `Total Cycles:`"))?;
    let ipc = field("IPC").ok_or_else(|| bad("no `IPC:`"))?;
    if iterations <= 0.0 || total <= 0.0 {
        return Err(bad("non-positive figures"));
    }
    Ok((total / iterations, ipc))
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> McaError {
    let what = what.into();
    move |source| McaError::Io { what, source }
}

fn tempdir() -> Result<tempfile::TempDir, McaError> {
    tempfile::Builder::new()
        .prefix("schedlab-mca-")
        .tempdir()
        .map_err(io_err("creating a temporary directory"))
}

/// Finds an LLVM tool by its plain name or a versioned Debian name.
pub fn llvm_tool(program: &str) -> Result<PathBuf, McaError> {
    std::iter::once(program.to_string())
        .chain((14..=19).rev().map(|v| format!("{program}-{v}")))
        .find_map(|name| find_program(&name))
        .ok_or_else(|| McaError::MissingTool {
            program: program.to_string(),
            tried: format!("`{program}`, `{program}-19` … `{program}-14`"),
            package: "llvm-14",
        })
}

fn llvm_triple(target: Target) -> &'static str {
    match target {
        Target::X86_64 => "x86_64-unknown-linux-gnu",
        Target::Aarch64 => "aarch64-unknown-linux-gnu",
        Target::S390x => "s390x-unknown-linux-gnu",
        Target::Riscv64 => "riscv64-unknown-linux-gnu",
    }
}

/// Decoder options matching the ISA settings Cranelift compiled for.
fn decoder_args(target: Target) -> &'static [&'static str] {
    match target {
        Target::X86_64 | Target::Aarch64 => &[],
        Target::S390x => &["--mcpu=z13"],
        Target::Riscv64 => &["--mattr=+m,+a,+f,+d,+c"],
    }
}

/// Disassembles `compiled`'s code with llvm-objdump.
pub fn disassemble(compiled: &Compiled) -> Result<Vec<DisasmInst>, McaError> {
    let objdump = llvm_tool("llvm-objdump")?;
    let object = object_from_compiled(compiled)?;
    let dir = tempdir()?;
    let path = dir.path().join(format!("{}.o", object.symbol));
    std::fs::write(&path, &object.bytes).map_err(io_err("writing the object file"))?;
    let output = Command::new(&objdump)
        .args(["-d", "--no-show-raw-insn"])
        .args(decoder_args(compiled.target))
        .arg(&path)
        .output()
        .map_err(io_err(format!("starting {}", objdump.display())))?;
    if !output.status.success() {
        return Err(McaError::Tool {
            program: objdump.display().to_string(),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    let insts = parse_objdump(compiled.target, &String::from_utf8_lossy(&output.stdout));
    if insts.is_empty() {
        return Err(McaError::Parse {
            what: "llvm-objdump's listing",
            detail: "no instructions".to_string(),
        });
    }
    if let Some(bad) = insts.iter().find(|i| i.text.contains("<unknown>")) {
        return Err(McaError::Parse {
            what: "llvm-objdump's listing",
            detail: format!("undecodable bytes at offset {:#x}", bad.addr),
        });
    }
    Ok(insts)
}

/// Parses `   4c:  \tmovq\t%rsp, %rbp` lines, dropping symbol and trailing comments (`#` starts
/// a comment except on AArch64, where it marks immediates and `//` does).
fn parse_objdump(target: Target, text: &str) -> Vec<DisasmInst> {
    let comments: &[&str] = match target {
        Target::Aarch64 => &[" <", "\t<", " //", "\t//"],
        Target::X86_64 | Target::S390x | Target::Riscv64 => &[" <", "\t<", " #", "\t#"],
    };
    text.lines()
        .filter_map(|line| {
            let (addr, rest) = line.split_once(':')?;
            let addr = u64::from_str_radix(addr.trim(), 16).ok()?;
            if !line.starts_with(' ') {
                return None;
            }
            let mut text = rest.trim().to_string();
            for comment in comments {
                if let Some(at) = text.find(comment) {
                    text.truncate(at);
                }
            }
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            (!text.is_empty()).then_some(DisasmInst { addr, text })
        })
        .collect()
}

/// How an instruction transfers control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Next,
    Jump(u64),
    CondJump(u64),
    Return,
    Trap,
}

fn flow(target: Target, inst: &DisasmInst) -> Flow {
    let text = inst.text.as_str();
    let mnemonic = text.split_whitespace().next().unwrap_or("");
    let last = text.rsplit([' ', ',']).next().unwrap_or("");
    let address = last
        .strip_prefix("0x")
        .and_then(|h| u64::from_str_radix(h, 16).ok());
    let is_return = match target {
        Target::X86_64 => matches!(mnemonic, "ret" | "retq"),
        Target::Aarch64 | Target::Riscv64 => mnemonic == "ret",
        Target::S390x => text == "br %r14",
    };
    if is_return {
        return Flow::Return;
    }
    if matches!(
        mnemonic,
        "ud2" | "udf" | "brk" | "unimp" | "c.unimp" | "ebreak"
    ) {
        return Flow::Trap;
    }
    let Some(address) = address else {
        return Flow::Next;
    };
    let (is_branch, unconditional) = match target {
        Target::X86_64 => (mnemonic.starts_with('j'), mnemonic == "jmp"),
        Target::Aarch64 => (
            mnemonic == "b"
                || mnemonic.starts_with("b.")
                || matches!(mnemonic, "cbz" | "cbnz" | "tbz" | "tbnz"),
            mnemonic == "b",
        ),
        Target::S390x => (
            mnemonic.starts_with('j') || mnemonic.starts_with("br") || mnemonic.contains("rj"),
            matches!(mnemonic, "j" | "jg"),
        ),
        Target::Riscv64 => (
            mnemonic.starts_with('b') || mnemonic == "j" || text.starts_with("jal zero,"),
            mnemonic == "j" || text.starts_with("jal zero,"),
        ),
    };
    match (is_branch, unconditional) {
        (false, _) => Flow::Next,
        (true, true) => Flow::Jump(address),
        (true, false) => Flow::CondJump(address),
    }
}

/// Finds the instructions to cost: the largest natural loop, else the straight-line function.
pub fn hot_loop(compiled: &Compiled) -> Result<HotLoop, McaError> {
    let insts = disassemble(compiled)?;
    Ok(find_hot_loop(compiled.target, insts))
}

/// riscv64's long jump `auipc rX, hi; jr lo(rX)`: the `jr` jumps to `auipc + (hi << 12) + lo`.
fn far_jump_target(prev: &DisasmInst, jump: &DisasmInst) -> Option<u64> {
    let operand = jump
        .text
        .strip_prefix("jr ")
        .or_else(|| jump.text.strip_prefix("jalr zero, "))?;
    let (lo, reg) = operand.trim().strip_suffix(')')?.split_once('(')?;
    let (hi_reg, hi) = prev.text.strip_prefix("auipc ")?.split_once(", ")?;
    if hi_reg != reg {
        return None;
    }
    let hi: i64 = hi.trim().parse().ok()?;
    let hi = if hi >= 0x80000 { hi - 0x100000 } else { hi };
    let lo: i64 = if lo.is_empty() { 0 } else { lo.parse().ok()? };
    let target = i64::try_from(prev.addr).ok()? + (hi << 12) + lo;
    u64::try_from(target).ok()
}

fn find_hot_loop(target: Target, insts: Vec<DisasmInst>) -> HotLoop {
    let mut flows: Vec<Flow> = insts.iter().map(|i| flow(target, i)).collect();
    if target == Target::Riscv64 {
        for i in 1..insts.len() {
            if let Some(t) = far_jump_target(&insts[i - 1], &insts[i]) {
                flows[i] = Flow::Jump(t);
            }
        }
    }
    // Basic blocks: leaders are the entry, branch targets and instructions after a transfer.
    let mut leaders: BTreeSet<u64> = BTreeSet::new();
    leaders.insert(insts[0].addr);
    for (i, f) in flows.iter().enumerate() {
        if let Flow::Jump(t) | Flow::CondJump(t) = f {
            leaders.insert(*t);
        }
        if *f != Flow::Next
            && let Some(next) = insts.get(i + 1)
        {
            leaders.insert(next.addr);
        }
    }
    // Block i covers instruction indices ranges[i].
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for (i, inst) in insts.iter().enumerate() {
        if leaders.contains(&inst.addr) || i == 0 {
            ranges.push((i, i + 1));
        } else if let Some(last) = ranges.last_mut() {
            last.1 = i + 1;
        }
    }
    let block_at: BTreeMap<u64, usize> = ranges
        .iter()
        .enumerate()
        .map(|(b, &(s, _))| (insts[s].addr, b))
        .collect();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); ranges.len()];
    for (b, &(_, end)) in ranges.iter().enumerate() {
        let fallthrough = (b + 1 < ranges.len()).then_some(b + 1);
        match flows[end - 1] {
            Flow::Next => succs[b].extend(fallthrough),
            Flow::Jump(t) => succs[b].extend(block_at.get(&t)),
            Flow::CondJump(t) => {
                succs[b].extend(block_at.get(&t));
                succs[b].extend(fallthrough);
            }
            Flow::Return | Flow::Trap => {}
        }
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); ranges.len()];
    for (b, ss) in succs.iter().enumerate() {
        for &s in ss {
            preds[s].push(b);
        }
    }
    // Natural loop of each back edge src -> header (header at or before src).
    let mut best: Option<(usize, BTreeSet<usize>)> = None;
    for (src, ss) in succs.iter().enumerate() {
        for &header in ss.iter().filter(|&&h| h <= src) {
            let mut body: BTreeSet<usize> = BTreeSet::from([header, src]);
            let mut work = vec![src];
            while let Some(b) = work.pop() {
                if b == header {
                    continue;
                }
                for &p in &preds[b] {
                    if body.insert(p) {
                        work.push(p);
                    }
                }
            }
            let size: usize = body.iter().map(|&b| ranges[b].1 - ranges[b].0).sum();
            let best_size = best.as_ref().map_or(0, |(_, bb)| {
                bb.iter().map(|&b| ranges[b].1 - ranges[b].0).sum()
            });
            if size > best_size {
                best = Some((header, body));
            }
        }
    }
    match best {
        Some((header, body)) => HotLoop {
            is_loop: true,
            header: insts[ranges[header].0].addr,
            insts: body
                .iter()
                .flat_map(|&b| insts[ranges[b].0..ranges[b].1].iter().cloned())
                .collect(),
        },
        None => {
            let first_ret = flows.iter().position(|f| *f == Flow::Return);
            let end = first_ret
                .and_then(|r| {
                    flows[r..]
                        .iter()
                        .position(|f| *f == Flow::Trap)
                        .map(|t| r + t)
                })
                .unwrap_or(insts.len());
            HotLoop {
                is_loop: false,
                header: 0,
                insts: insts[..end].to_vec(),
            }
        }
    }
}

/// Assembly text for llvm-mca: branch targets become one local label, so the text assembles
/// whatever the original addresses were.
fn mca_source(target: Target, body: &HotLoop) -> String {
    const LABEL: &str = ".Lschedlab_target";
    let mut out = format!("{LABEL}:\n");
    for inst in &body.insts {
        let direct = inst
            .text
            .rsplit([' ', ','])
            .next()
            .is_some_and(|op| op.starts_with("0x"));
        let text = match flow(target, inst) {
            Flow::Jump(_) | Flow::CondJump(_) if direct => {
                let cut = inst.text.rfind([' ', ',']).map_or(0, |i| i + 1);
                format!("{}{LABEL}", &inst.text[..cut])
            }
            // riscv64's long jump `jr lo(rX)`: llvm-mca would cost a register jump as a call.
            _ if target == Target::Riscv64
                && (inst.text.starts_with("jr ") || inst.text.starts_with("jalr zero,")) =>
            {
                format!("j {LABEL}")
            }
            _ => inst.text.clone(),
        };
        out.push_str(&text);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(addr: u64, text: &str) -> DisasmInst {
        DisasmInst {
            addr,
            text: text.to_string(),
        }
    }

    #[test]
    fn objdump_lines_lose_addresses_and_symbol_comments() {
        let text = "\nfoo.o:\tfile format elf64-x86-64\n\n0000000000000000 <%f>:\n       \
                    0:      \tpushq\t%rbp\n      77:      \tjle\t0xe0 <%f+0xe0>\n";
        assert_eq!(
            parse_objdump(Target::X86_64, text),
            vec![inst(0, "pushq %rbp"), inst(0x77, "jle 0xe0")]
        );
    }

    #[test]
    fn aarch64_immediates_survive_comment_stripping() {
        let text = "      5c:      \tldur\tx4, [sp, #8]\n      60:      \tb.le\t0x9c <%f+0x9c>\n";
        assert_eq!(
            parse_objdump(Target::Aarch64, text),
            vec![inst(0x5c, "ldur x4, [sp, #8]"), inst(0x60, "b.le 0x9c")]
        );
    }

    #[test]
    fn the_loop_excludes_exit_and_cold_blocks() {
        // entry; header: cond exit; exit: ret; body: cond cold; latch: jmp header; cold: ret
        let insts = vec![
            inst(0, "pushq %rbp"),
            inst(1, "cmpl %eax, %ecx"),
            inst(2, "jle 0x10"),
            inst(4, "popq %rbp"),
            inst(5, "retq"),
            inst(0x10, "addl %eax, %ebx"),
            inst(0x12, "jb 0x20"),
            inst(0x14, "addl %ebx, %eax"),
            inst(0x16, "jmp 0x1"),
            inst(0x20, "retq"),
            inst(0x21, "ud2"),
        ];
        let l = find_hot_loop(Target::X86_64, insts);
        assert!(l.is_loop);
        assert_eq!(l.header, 1);
        let addrs: Vec<u64> = l.insts.iter().map(|i| i.addr).collect();
        assert_eq!(addrs, vec![1, 2, 0x10, 0x12, 0x14, 0x16]);
        let src = mca_source(Target::X86_64, &l);
        assert!(src.contains("jle .Lschedlab_target\n"), "{src}");
        assert!(src.contains("jmp .Lschedlab_target\n"), "{src}");
    }

    #[test]
    fn straight_line_code_is_cut_at_the_first_trap_after_the_return() {
        let insts = vec![
            inst(0, "add x0, x0, x1"),
            inst(4, "ret"),
            inst(8, "udf #0xc11f"),
            inst(12, "udf #0xc11f"),
        ];
        let l = find_hot_loop(Target::Aarch64, insts);
        assert!(!l.is_loop);
        assert_eq!(l.insts.len(), 2);
    }

    #[test]
    fn riscv64_long_jumps_are_back_edges() {
        let insts = vec![
            inst(0x40, "addi a0, a0, 1"),
            inst(0x44, "bltu a0, t0, 0x1438"),
            inst(0x48, "addw a1, a1, a0"),
            inst(0x142c, "auipc t6, 1048575"),
            inst(0x1430, "jr -1000(t6)"),
            inst(0x1438, "ret"),
        ];
        let l = find_hot_loop(Target::Riscv64, insts);
        assert!(l.is_loop);
        assert_eq!(l.header, 0x44);
        assert_eq!(l.insts.len(), 4);
        assert!(mca_source(Target::Riscv64, &l).ends_with("j .Lschedlab_target\n"));
    }

    #[test]
    fn summary_is_parsed_and_unknown_cpus_are_refused() {
        let out = "Iterations:        100\nInstructions:      78000\nTotal Cycles:      \
                   20150\nTotal uOps:        79000\n\nDispatch Width:    6\nuOps Per Cycle:    \
                   3.92\nIPC:               3.87\n";
        let (cycles, ipc) = parse_mca(out).expect("parses");
        assert!((cycles - 201.5).abs() < 1e-9 && (ipc - 3.87).abs() < 1e-9);
        assert!(parse_mca("garbage").is_err());
        // LLVM 14's neoverse-n1 is a Cortex-A57 model: N1 is costed by LLVM 19 only.
        assert_eq!(mca_llvm_major("neoverse-n1"), 19);
        assert_eq!(mca_llvm_major("cortex-a72"), 14);
    }
}
