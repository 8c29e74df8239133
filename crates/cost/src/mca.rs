//! Static cost of the hot loop with LLVM's `llvm-mca`: cycles per loop iteration (for the MD5
//! kernel, one 64-byte block) on named CPU models.
//!
//! **Disassembly.** The exact code bytes are wrapped in an ELF object ([`schedlab_backend::object`]) and
//! decoded by `llvm-objdump -d`. `llvm-mc --disassemble` decodes the same bytes but prints no
//! addresses, and its `--show-encoding` re-encodes instructions (x86 branch and immediate
//! forms can change length), so offsets and branch targets could not be trusted.
//!
//! **Which instructions.** Only code reachable from the entry is kept (the constant pool after
//! the code and riscv64's inline constants are data). The hot loop is an innermost natural
//! loop of the disassembled control-flow graph: the deepest one, and of equally deep ones the
//! one with the fewest exits — bounds-check elimination's check-free copy rather than its
//! checked fallback, `squareToLen`'s `mulAdd` loop inside its loop over `i` (`mca/cfg.rs` gives the
//! full rule). Its blocks are taken in address order; blocks that leave the loop — the
//! out-of-line bounds-check failures, the exit with its epilogue — are not part of it, so the
//! prologue, epilogue and cold paths do not dilute the figure. Without a loop the whole
//! function up to the first trap after its first return is costed (what is cut is padding and
//! trap stubs).
//!
//! **Costing.** llvm-mca treats the body as straight-line code repeated [`ITERATIONS`] times
//! (branches are issued but never mispredicted); the figure is `Total Cycles / Iterations`.
//!
//! **CPU models** (LLVM 14): x86_64 `znver3`, `skylake`; AArch64 `thunderx2t99` (the ThunderX2
//! of the original measurements), `cortex-a72`; s390x `z15`. Current cores come from LLVM
//! 19's `llvm-mca-19` (Debian `llvm-19`): x86_64 `znver4`, `sapphirerapids`; AArch64
//! `neoverse-n1`, `neoverse-v2` (LLVM 14's `neoverse-n1` is its Cortex-A57 model, so N1 is
//! only offered from LLVM 19); and riscv64 `sifive-u74`, because LLVM 14's SiFive7 model
//! lacks the ALU-to-ALU bypass (`SiFive7AnyToGPRBypass`, which the scheduler's model follows):
//! there a chain of dependent `add`s costs 3 cycles each, in LLVM 19 1.

use schedlab_backend::compile::Compiled;
use schedlab_backend::emulate::find_program;
use schedlab_backend::object::{ObjectError, object_for_disassembly};
use schedlab_backend::target::Target;
use std::path::PathBuf;
use std::process::Command;

mod cfg;

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
    /// The hot code makes calls: not costed (a call costs what its callee does, which the
    /// code does not show; the loops between calls are preferred, see [`hot_loop`]).
    #[error(
        "not modelled: the hot {} makes {calls} call(s), and a call costs what its callee does",
        if *is_loop { "loop" } else { "code (no loop without calls)" }
    )]
    Calls {
        /// Call instructions in the hot code.
        calls: usize,
        /// Whether the hot code is a loop.
        is_loop: bool,
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
        "znver4" | "sapphirerapids" | "neoverse-n1" | "neoverse-v2" | "sifive-u74" => 19,
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

/// One instruction as the control-flow analysis reads it: its offset and its text.
pub(crate) trait Listed {
    /// Offset from the function's start.
    fn addr(&self) -> u64;
    /// Assembly text, comments removed.
    fn text(&self) -> &str;
}

impl Listed for DisasmInst {
    fn addr(&self) -> u64 {
        self.addr
    }
    fn text(&self) -> &str {
        &self.text
    }
}

/// A [`DisasmInst`] whose text is borrowed from its [`Listing`].
#[derive(Clone, Copy, Debug)]
struct ListedInst<'a> {
    addr: u64,
    text: &'a str,
}

impl Listed for ListedInst<'_> {
    fn addr(&self) -> u64 {
        self.addr
    }
    fn text(&self) -> &str {
        self.text
    }
}

impl ListedInst<'_> {
    fn to_owned_inst(self) -> DisasmInst {
        DisasmInst {
            addr: self.addr,
            text: self.text.to_string(),
        }
    }
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
    /// Calls among them ([`is_call`]): the hot code is not costed when it makes any, since a
    /// call's cost is its callee's, which the code does not show.
    pub calls: usize,
}

impl HotLoop {
    /// A loop of `lines` (assembly text, one instruction each, 4 bytes apart, header at 0): a
    /// hand-written body for the static models, as if extracted from compiled code.
    pub fn from_lines<S: AsRef<str>>(lines: &[S]) -> HotLoop {
        HotLoop {
            is_loop: true,
            header: 0,
            calls: 0,
            insts: lines
                .iter()
                .enumerate()
                .map(|(i, t)| DisasmInst {
                    addr: 4 * i as u64,
                    text: t.as_ref().to_string(),
                })
                .collect(),
        }
    }
}

/// Whether `text` (llvm-objdump's syntax for `target`) calls a function: x86_64 `call`,
/// AArch64 `bl`/`blr`, s390x `brasl`/`basr`, riscv64 `jal`/`jalr` linking `ra`.
pub fn is_call(target: Target, text: &str) -> bool {
    let mnemonic = text.split_whitespace().next().unwrap_or("");
    match target {
        Target::X86_64 => mnemonic.starts_with("call"),
        Target::Aarch64 => matches!(mnemonic, "bl" | "blr"),
        Target::S390x => mnemonic.starts_with("bras") || mnemonic.starts_with("bas"),
        Target::Riscv64 => {
            matches!(mnemonic, "jal" | "jalr")
                && (text.contains(" ra,") || text.split_whitespace().nth(1) == Some("ra"))
        }
    }
}

/// Why the hot code was not costed: it calls other functions.
pub fn calls_error(body: &HotLoop) -> Option<McaError> {
    (body.calls > 0).then_some(McaError::Calls {
        calls: body.calls,
        is_loop: body.is_loop,
    })
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
    let body = hot_loop(compiled)?;
    if let Some(e) = calls_error(&body) {
        return Err(e);
    }
    let source = mca_source(target, &body);
    let (cycles, ipc) = mca_cost_source(target, cpu, None, &source)?;
    Ok(McaReport {
        cpu: cpu.to_string(),
        cycles_per_iteration: cycles,
        ipc,
        body_insts: body.insts.len(),
    })
}

/// Costs an assembly loop body `source` (llvm-mca syntax for `target`, one iteration, ending
/// in its back edge) on `cpu`: cycles per iteration and IPC over [`ITERATIONS`] iterations.
/// `mattr` adds ISA features the CPU model leaves optional (llvm-mca's `-mattr`, e.g. `+sha2`).
/// Any assembler error or unknown CPU is an error, never a partial figure.
pub fn mca_cost_source(
    target: Target,
    cpu: &str,
    mattr: Option<&str>,
    source: &str,
) -> Result<(f64, f64), McaError> {
    let mca = mca_tool_for(cpu)?;
    let dir = tempdir()?;
    let input = dir.path().join("loop.s");
    std::fs::write(&input, source).map_err(io_err("writing the llvm-mca input"))?;
    let output = Command::new(&mca)
        .arg(format!("-mtriple={}", llvm_triple(target)))
        .arg(format!("-mcpu={cpu}"))
        .arg(format!("-iterations={ITERATIONS}"))
        .args(mattr.map(|m| format!("-mattr={m}")))
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
    parse_mca(&stdout)
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

/// A scratch directory for an object and its listing or report (in RAM where the machine has
/// it: llvm-objdump writes its listing a line per system call).
fn tempdir() -> Result<tempfile::TempDir, McaError> {
    schedlab_backend::tools::scratch_dir("schedlab-mca-")
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

/// Decoder options matching the ISA settings Cranelift compiled for. s390x decodes as z15
/// (the CPU llvm-mca costs): at its z13 baseline Cranelift 0.135 still emits z14's three-operand
/// multiply `msgrkc` (opcode `b9ed`, its `ALUOp::Mul64` with distinct registers, e.g. in
/// `squareToLen`), which a z13 decoder prints as `<unknown>`.
fn decoder_args(target: Target) -> &'static [&'static str] {
    match target {
        Target::X86_64 | Target::Aarch64 => &[],
        Target::S390x => &["--mcpu=z15"],
        Target::Riscv64 => &["--mattr=+m,+a,+f,+d,+c"],
    }
}

/// Disassembles `compiled`'s code with llvm-objdump.
pub fn disassemble(compiled: &Compiled) -> Result<Vec<DisasmInst>, McaError> {
    let objdump = llvm_tool("llvm-objdump")?;
    let object = object_for_disassembly(compiled)?;
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
    instructions_of(
        compiled.target,
        &String::from_utf8_lossy(&output.stdout),
        JumpTargets::of_compiled(compiled),
    )
}

/// The reachable instructions of one function's llvm-objdump listing.
fn instructions_of(
    target: Target,
    listing: &str,
    jumps: JumpTargets<'_>,
) -> Result<Vec<DisasmInst>, McaError> {
    let listing = Listing::parse(target, listing);
    Ok(listed_reachable_code(target, &listing, jumps)?
        .0
        .into_iter()
        .map(ListedInst::to_owned_inst)
        .collect())
}

/// [`reachable_code_and_flows`] of a parsed listing, the texts still borrowed from it.
fn listed_reachable_code<'l>(
    target: Target,
    listing: &'l Listing,
    jumps: JumpTargets<'_>,
) -> Result<(Vec<ListedInst<'l>>, Vec<Flow>), McaError> {
    let insts = listing.insts();
    if insts.is_empty() {
        return Err(McaError::Parse {
            what: "llvm-objdump's listing",
            detail: "no instructions".to_string(),
        });
    }
    reachable_code_and_flows(target, insts, jumps)
}

/// [`hot_loop_of`] the reachable instructions of one function's llvm-objdump listing, with
/// the error [`calls_error`] gives when the hot code makes calls: the instructions are copied
/// out of the listing only for a hot loop that can be costed.
fn costable_hot_loop_of(
    target: Target,
    listing: &str,
    jumps: JumpTargets<'_>,
) -> Result<HotLoop, McaError> {
    let listing = Listing::parse(target, listing);
    let (insts, flows) = listed_reachable_code(target, &listing, jumps)?;
    let code = hot_code(target, &insts, flows, jumps);
    if code.calls > 0 {
        return Err(McaError::Calls {
            calls: code.calls,
            is_loop: code.is_loop,
        });
    }
    Ok(code.hot_loop(&insts, |i| i.to_owned_inst()))
}

/// [`hot_loop_of`] each function of `compiled` after [`disassemble_all`], in order, except that
/// a hot code making calls is returned as the error [`calls_error`] gives (the only use the
/// cost model has for it), and that the listing's instructions are not copied for it.
pub(crate) fn costable_hot_loops(compiled: &[&Compiled]) -> Vec<Result<HotLoop, McaError>> {
    let of_insts = |c: &Compiled, insts: Vec<DisasmInst>| {
        let body = find_hot_loop(c.target, insts, JumpTargets::of_compiled(c));
        match calls_error(&body) {
            Some(e) => Err(e),
            None => Ok(body),
        }
    };
    per_target_batches(compiled, |target, batch| {
        per_listing(target, batch, |listing, c| {
            costable_hot_loop_of(target, listing, JumpTargets::of_compiled(c))
        })
    })
    .into_iter()
    .zip(compiled)
    .map(|(result, c)| match result {
        Batched::Done(result) => result,
        Batched::Alone => disassemble(c).and_then(|insts| of_insts(c, insts)),
    })
    .collect()
}

/// Disassembles many compiled functions with one llvm-objdump process per target among them,
/// in `compiled`'s order: the same instructions, addresses and errors as [`disassemble`] on
/// each, without a process per function ([`disassemble_batch`]). When a target's batch cannot
/// be built or decoded as a whole (a tool missing or failing), each of its functions falls back
/// to [`disassemble`], which names its own error.
pub fn disassemble_all(compiled: &[&Compiled]) -> Vec<Result<Vec<DisasmInst>, McaError>> {
    per_target_batches(compiled, disassemble_batch)
        .into_iter()
        .zip(compiled)
        .map(|(result, c)| match result {
            Batched::Done(result) => result,
            Batched::Alone => disassemble(c),
        })
        .collect()
}

/// A function's result from its target's batch, or, the batch having failed, the sign to
/// handle it alone.
enum Batched<T> {
    Done(Result<T, McaError>),
    Alone,
}

/// `per_batch` on the functions of `compiled` for each target among them (in target name
/// order), its results put back in `compiled`'s order; a batch's error makes its functions
/// [`Batched::Alone`].
fn per_target_batches<T>(
    compiled: &[&Compiled],
    per_batch: impl Fn(Target, &[&Compiled]) -> Result<Vec<Result<T, McaError>>, McaError>,
) -> Vec<Batched<T>> {
    let mut out: Vec<Option<Batched<T>>> = compiled.iter().map(|_| None).collect();
    let mut targets: Vec<Target> = compiled.iter().map(|c| c.target).collect();
    targets.sort_by_key(|t| t.name());
    targets.dedup();
    for target in targets {
        let members: Vec<usize> = (0..compiled.len())
            .filter(|&i| compiled[i].target == target)
            .collect();
        let batch: Vec<&Compiled> = members.iter().map(|&i| compiled[i]).collect();
        match per_batch(target, &batch) {
            Ok(results) => {
                for (&i, result) in members.iter().zip(results) {
                    out[i] = Some(Batched::Done(result));
                }
            }
            Err(_) => {
                for &i in &members {
                    out[i] = Some(Batched::Alone);
                }
            }
        }
    }
    out.into_iter()
        .map(|r| r.expect("every function belongs to its target's batch"))
        .collect()
}

/// [`disassemble`] of every function of `batch` (all compiled for `target`) with one
/// llvm-objdump process: each function is its own section of one object
/// ([`schedlab_backend::object::object_for_batch_disassembly`]), and llvm-objdump numbers a relocatable
/// object's sections from 0 each, so every listing's offsets and branch targets are those of
/// the function alone. The outer error is the batch's (the object, the tool, a listing that
/// does not split into one section per function); the inner ones are each function's.
pub fn disassemble_batch(
    target: Target,
    batch: &[&Compiled],
) -> Result<Vec<Result<Vec<DisasmInst>, McaError>>, McaError> {
    per_listing(target, batch, |listing, c| {
        instructions_of(target, listing, JumpTargets::of_compiled(c))
    })
}

/// `of_listing` on each function of `batch` with its slice of the batch's listing, in order;
/// the outer error is the batch's, as in [`disassemble_batch`].
fn per_listing<T>(
    target: Target,
    batch: &[&Compiled],
    of_listing: impl Fn(&str, &Compiled) -> Result<T, McaError>,
) -> Result<Vec<Result<T, McaError>>, McaError> {
    let text = batch_listing(target, batch)?;
    let listings = split_batch_listing(&text, batch.len())?;
    Ok(listings
        .iter()
        .zip(batch)
        .map(|(listing, c)| of_listing(listing, c))
        .collect())
}

/// llvm-objdump's listing of the batch object of `batch` (see [`disassemble_batch`]).
fn batch_listing(target: Target, batch: &[&Compiled]) -> Result<String, McaError> {
    let objdump = llvm_tool("llvm-objdump")?;
    let object = schedlab_backend::object::object_for_batch_disassembly(target, batch)?;
    let dir = tempdir()?;
    let path = dir.path().join("batch.o");
    std::fs::write(&path, &object.bytes).map_err(io_err("writing the object file"))?;
    // The listing of a batch runs to megabytes: written to a file and read at once, it costs
    // a few system calls instead of a pipe's poll and read per page.
    let listing_path = dir.path().join("batch.txt");
    let listing = std::fs::File::create(&listing_path).map_err(io_err("creating the listing"))?;
    let output = Command::new(&objdump)
        .args(["-d", "--no-show-raw-insn"])
        .args(decoder_args(target))
        .arg(&path)
        .stdout(listing)
        .output()
        .map_err(io_err(format!("starting {}", objdump.display())))?;
    if !output.status.success() {
        return Err(McaError::Tool {
            program: objdump.display().to_string(),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    let bytes = std::fs::read(&listing_path).map_err(io_err("reading the listing"))?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// [`split_sections`] of a batch's listing, or the batch's error.
fn split_batch_listing(text: &str, count: usize) -> Result<Vec<&str>, McaError> {
    split_sections(text, count).ok_or_else(|| McaError::Parse {
        what: "llvm-objdump's listing of a batch",
        detail: format!(
            "not one section `.text.{}<i>` per function for {} functions; it begins:\n{}",
            schedlab_backend::object::BATCH_SYMBOL_PREFIX,
            count,
            text.lines().take(12).collect::<Vec<_>>().join("\n")
        ),
    })
}

/// Splits llvm-objdump's listing of a batch object into one listing per function, in index
/// order. cranelift-object names every function's section alike (`.text.subsection`), so a
/// function is told by its symbol's line (`0000000000000000 <f3>:`) at the head of its section;
/// `None` unless every function has exactly one section to itself.
fn split_sections(text: &str, count: usize) -> Option<Vec<&str>> {
    // Each function's listing: the lines after its symbol's line up to the next section.
    let mut listings: Vec<Option<(usize, usize)>> = vec![None; count];
    // The function of the current section, once its symbol's line has been read.
    let mut current: Option<usize> = None;
    let mut in_section = false;
    let mut at = 0;
    for raw in text.split_inclusive('\n') {
        let line_start = at;
        at += raw.len();
        // As `str::lines` reads it.
        let line = match raw.strip_suffix('\n') {
            Some(line) => line.strip_suffix('\r').unwrap_or(line),
            None => raw,
        };
        if line.starts_with("Disassembly of section ") {
            in_section = true;
            current = None;
        } else if let Some(symbol) = line
            .as_bytes()
            .first()
            // A symbol's line starts with its address (`from_str_radix` takes a leading `+`).
            .filter(|c| c.is_ascii_hexdigit() || **c == b'+')
            .and_then(|_| line.split_once(" <"))
            .and_then(|(addr, rest)| {
                u64::from_str_radix(addr, 16).ok()?;
                rest.strip_suffix(">:")
            })
            // A jump table's target inside the function, not a function.
            .filter(|symbol| !symbol.starts_with(schedlab_backend::object::DISPATCH_SYMBOL_PREFIX))
        {
            if !in_section || current.is_some() {
                return None;
            }
            let index: usize = symbol
                .strip_prefix(schedlab_backend::object::BATCH_SYMBOL_PREFIX)?
                .parse()
                .ok()?;
            let slot = listings.get_mut(index)?;
            if slot.is_some() {
                return None;
            }
            *slot = Some((at, at));
            current = Some(index);
        } else if let Some((_, end)) = current.and_then(|i| listings[i].as_mut()) {
            debug_assert_eq!(*end, line_start, "a section's lines are contiguous");
            *end = at;
        }
    }
    listings
        .into_iter()
        .map(|span| span.map(|(start, end)| &text[start..end]))
        .collect()
}

/// The instructions control can reach from the function's entry, in address order. What is
/// cut is data: Cranelift's constant pool after the code (x86_64, AArch64) and the constants
/// riscv64 places inline behind a jump, which llvm-objdump (14 and 19 alike) prints as
/// `<unknown>` or as whatever instructions the bytes happen to spell. Undecodable bytes that
/// control *can* reach, or a branch into the middle of a decoded instruction, are errors.
/// With the instructions, how each transfers control ([`flows_of`]).
fn reachable_code_and_flows<I: Listed + Clone>(
    target: Target,
    insts: Vec<I>,
    jumps: JumpTargets<'_>,
) -> Result<(Vec<I>, Vec<Flow>), McaError> {
    let bad = |detail: String| McaError::Parse {
        what: "llvm-objdump's listing",
        detail,
    };
    let flows = flows_of(target, &insts);
    let graph = cfg::Cfg::build(&insts, &flows, jumps);
    if let Some(at) = graph.branch_into_undecoded(&insts, &flows) {
        return Err(bad(format!(
            "a reachable branch at offset {at:#x} targets no instruction start"
        )));
    }
    if let Some(at) = graph.dispatch_with_unknown_targets(&insts, &flows, jumps) {
        return Err(bad(format!(
            "the jump table's dispatch at offset {at:#x} is in a block whose edges the code \
             generator did not record or could not be attributed (cold blocks moved after it): \
             its targets are unknown"
        )));
    }
    if let Some(to) = graph.jump_into_undecoded(&insts, &flows, jumps) {
        return Err(bad(format!(
            "a jump table's target at offset {to:#x} is no instruction start (the table \
             before it was decoded as instructions)"
        )));
    }
    let mut kept = Vec::with_capacity(insts.len());
    let mut kept_flows = Vec::with_capacity(insts.len());
    for (b, &(start, end)) in graph.ranges.iter().enumerate() {
        if !graph.reachable[b] {
            continue;
        }
        for (inst, flow) in insts[start..end].iter().zip(&flows[start..end]) {
            if is_undecodable(inst.text()) {
                return Err(bad(format!(
                    "undecodable bytes at offset {:#x}, reachable from the entry",
                    inst.addr()
                )));
            }
            kept.push(inst.clone());
            kept_flows.push(*flow);
        }
    }
    // An instruction's flow is its own text's, except riscv64's long jump, which reads the
    // instruction before it: that one may have been cut.
    if target == Target::Riscv64 {
        kept_flows = flows_of(target, &kept);
    }
    Ok((kept, kept_flows))
}

/// [`reachable_code_and_flows`] without the flows.
#[cfg(test)]
fn reachable_code<I: Listed + Clone>(target: Target, insts: Vec<I>) -> Result<Vec<I>, McaError> {
    Ok(reachable_code_and_flows(target, insts, JumpTargets::NONE)?.0)
}

/// llvm-objdump's mark for bytes it cannot decode.
fn is_undecodable(text: &str) -> bool {
    text.contains("<unknown>")
}

/// Parses `   4c:  \tmovq\t%rsp, %rbp` lines, dropping symbol and trailing comments (`#` starts
/// a comment except on AArch64, where it marks immediates and `//` does).
#[cfg(test)]
fn parse_objdump(target: Target, text: &str) -> Vec<DisasmInst> {
    Listing::parse(target, text)
        .insts()
        .into_iter()
        .map(ListedInst::to_owned_inst)
        .collect()
}

/// Where the comment of an instruction's `text` begins (its length without one): the first
/// ` <` or `\t<` (a symbol), else ` #` or `\t#` (AArch64: ` //` or `\t//`). Cutting at each
/// marker in turn ends the text at the same place, the earliest: a marker is a blank followed
/// by no blank, so none can begin before another's start and reach past it.
fn comment_start(target: Target, text: &str) -> usize {
    let bytes = text.as_bytes();
    (0..bytes.len())
        .find(|&i| {
            matches!(bytes[i], b' ' | b'\t')
                && match (target, &bytes[i + 1..]) {
                    (_, [b'<', ..]) => true,
                    (Target::Aarch64, [b'/', b'/', ..]) => true,
                    (Target::Aarch64, _) => false,
                    (Target::X86_64 | Target::S390x | Target::Riscv64, rest) => {
                        rest.first() == Some(&b'#')
                    }
                }
        })
        .unwrap_or(bytes.len())
}

/// One function's instructions as [`parse_objdump`] reads them, their texts in one buffer.
struct Listing {
    /// The instructions' texts, one after the other.
    texts: String,
    /// Per instruction: its offset and where its text lies in `texts`.
    insts: Vec<(u64, std::ops::Range<usize>)>,
}

impl Listing {
    /// [`parse_objdump`] of `text`.
    fn parse(target: Target, text: &str) -> Listing {
        let mut listing = Listing {
            texts: String::with_capacity(text.len() / 2),
            insts: Vec::new(),
        };
        for line in text.lines() {
            if !line.starts_with(' ') {
                continue;
            }
            let Some((addr, rest)) = line.split_once(':') else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
                continue;
            };
            let rest = rest.trim();
            let end = comment_start(target, rest);
            let start = listing.texts.len();
            for (k, word) in rest[..end].split_whitespace().enumerate() {
                if k > 0 {
                    listing.texts.push(' ');
                }
                listing.texts.push_str(word);
            }
            if listing.texts.len() > start {
                listing.insts.push((addr, start..listing.texts.len()));
            }
        }
        listing
    }

    /// The instructions, their texts borrowed.
    fn insts(&self) -> Vec<ListedInst<'_>> {
        self.insts
            .iter()
            .map(|(addr, text)| ListedInst {
                addr: *addr,
                text: &self.texts[text.clone()],
            })
            .collect()
    }
}

/// Where `inst` branches or jumps to, if it does (the address it names).
pub(crate) fn branch_target(target: Target, inst: &DisasmInst) -> Option<u64> {
    match flow(target, &inst.text) {
        Flow::Jump(address) | Flow::CondJump(address) => Some(address),
        Flow::Next | Flow::Indirect | Flow::Return | Flow::Trap => None,
    }
}

/// How an instruction transfers control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Next,
    Jump(u64),
    CondJump(u64),
    /// A jump through a register (a jump table's dispatch): its targets are the compiled
    /// function's ([`JumpTargets`]); it never falls through (what follows may be the table).
    Indirect,
    Return,
    Trap,
}

/// The targets of a function's indirect jumps, from the code generator's own block edges
/// ([`schedlab_backend::Compiled::block_edges`]: source block start, target): llvm-objdump's
/// listing names no target for `jmp *%rcx` or `br x3`, and the jump table after x86_64's and
/// AArch64's dispatch is data, not code. Blocks whose edges are not known
/// ([`schedlab_backend::Compiled::blocks_without_known_edges`]) give no targets, and
/// [`JumpTargets::unknown_at`] says so.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JumpTargets<'a> {
    edges: &'a [(u32, u32)],
    unknown: &'a [u32],
}

impl<'a> JumpTargets<'a> {
    /// No edges known: an indirect jump leads nowhere the graph can see.
    pub const NONE: JumpTargets<'static> = JumpTargets {
        edges: &[],
        unknown: &[],
    };

    /// The edges `compiled` records.
    pub fn of_compiled(compiled: &'a Compiled) -> Self {
        Self {
            edges: &compiled.block_edges,
            unknown: &compiled.blocks_without_known_edges,
        }
    }

    /// Edges given directly, every block's known.
    #[cfg(test)]
    pub fn from_edges(edges: &'a [(u32, u32)]) -> Self {
        Self {
            edges,
            unknown: &[],
        }
    }

    /// The start of the block holding `addr` among the blocks with edges or unknown ones,
    /// and whether its edges are unknown.
    fn block_of(self, addr: u64) -> Option<(u64, bool)> {
        let known = self.edges.iter().map(|&(from, _)| (u64::from(from), false));
        let unknown = self.unknown.iter().map(|&s| (u64::from(s), true));
        known
            .chain(unknown)
            .filter(|&(start, _)| start <= addr)
            .max_by_key(|&(start, _)| start)
    }

    /// Whether the indirect jump at `addr` is in a block whose edges are not known.
    pub fn unknown_at(self, addr: u64) -> bool {
        self.block_of(addr).is_some_and(|(_, unknown)| unknown)
    }

    /// The targets of an indirect jump at `addr`: every edge of the block it ends (the edges
    /// whose source is the last block start at or before it); none where that block's edges
    /// are unknown.
    pub fn of(self, addr: u64) -> impl Iterator<Item = u64> + 'a {
        let source = self
            .block_of(addr)
            .and_then(|(start, unknown)| (!unknown).then_some(start));
        self.edges
            .iter()
            .filter(move |&&(from, _)| Some(u64::from(from)) == source)
            .map(|&(_, to)| u64::from(to))
    }
}

fn flow(target: Target, text: &str) -> Flow {
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
    if is_undecodable(text) {
        return Flow::Trap;
    }
    // s390x calls (`brasl %r14, …`) return to the next instruction.
    if target == Target::S390x && mnemonic.starts_with("bras") {
        return Flow::Next;
    }
    if matches!(
        mnemonic,
        "ud2" | "udf" | "brk" | "unimp" | "c.unimp" | "ebreak"
    ) {
        return Flow::Trap;
    }
    let indirect = match target {
        Target::X86_64 => {
            mnemonic.starts_with("jmp") && text[mnemonic.len()..].trim_start().starts_with('*')
        }
        Target::Aarch64 | Target::S390x => mnemonic == "br",
        Target::Riscv64 => mnemonic == "jr" || text.starts_with("jalr zero,"),
    };
    if indirect {
        return Flow::Indirect;
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

/// Finds the instructions to cost: the hot loop (see the module docs), else the straight-line
/// function.
pub fn hot_loop(compiled: &Compiled) -> Result<HotLoop, McaError> {
    let insts = disassemble(compiled)?;
    Ok(find_hot_loop(
        compiled.target,
        insts,
        JumpTargets::of_compiled(compiled),
    ))
}

/// [`hot_loop`] of an already disassembled function ([`disassemble`], [`disassemble_all`]).
/// Indirect jumps lead nowhere here: [`hot_loop`] knows their targets.
pub fn hot_loop_of(target: Target, insts: Vec<DisasmInst>) -> HotLoop {
    find_hot_loop(target, insts, JumpTargets::NONE)
}

/// riscv64's long jump `auipc rX, hi; jr lo(rX)`: the `jr` jumps to `auipc + (hi << 12) + lo`.
fn far_jump_target(prev: &impl Listed, jump: &impl Listed) -> Option<u64> {
    let operand = jump
        .text()
        .strip_prefix("jr ")
        .or_else(|| jump.text().strip_prefix("jalr zero, "))?;
    let (lo, reg) = operand.trim().strip_suffix(')')?.split_once('(')?;
    let (hi_reg, hi) = prev.text().strip_prefix("auipc ")?.split_once(", ")?;
    if hi_reg != reg {
        return None;
    }
    let hi: i64 = hi.trim().parse().ok()?;
    let hi = if hi >= 0x80000 { hi - 0x100000 } else { hi };
    let lo: i64 = if lo.is_empty() { 0 } else { lo.parse().ok()? };
    let target = i64::try_from(prev.addr()).ok()? + (hi << 12) + lo;
    u64::try_from(target).ok()
}

/// How each instruction transfers control, riscv64's `auipc` + `jr` long jumps resolved.
fn flows_of<I: Listed>(target: Target, insts: &[I]) -> Vec<Flow> {
    let mut flows: Vec<Flow> = insts.iter().map(|i| flow(target, i.text())).collect();
    if target == Target::Riscv64 {
        for i in 1..insts.len() {
            if let Some(t) = far_jump_target(&insts[i - 1], &insts[i]) {
                flows[i] = Flow::Jump(t);
            }
        }
    }
    flows
}

/// Which instructions of a function are its hot code ([`find_hot_loop`]), as index ranges
/// into its instructions, and the calls among them.
struct HotCode {
    is_loop: bool,
    header: u64,
    calls: usize,
    /// Instruction index ranges `[start, end)`, in address order.
    ranges: Vec<(usize, usize)>,
}

impl HotCode {
    /// The [`HotLoop`] of these instructions of `insts`, each made a [`DisasmInst`] by `own`.
    fn hot_loop<I>(&self, insts: &[I], own: impl Fn(&I) -> DisasmInst) -> HotLoop {
        HotLoop {
            is_loop: self.is_loop,
            header: self.header,
            calls: self.calls,
            insts: self
                .ranges
                .iter()
                .flat_map(|&(start, end)| insts[start..end].iter().map(&own))
                .collect(),
        }
    }
}

/// The hot code of an already disassembled function ([`find_hot_loop`]).
/// `flows` are `insts`' ([`flows_of`]).
fn hot_code<I: Listed>(
    target: Target,
    insts: &[I],
    flows: Vec<Flow>,
    jumps: JumpTargets<'_>,
) -> HotCode {
    let graph = cfg::Cfg::build(insts, &flows, jumps);
    let calls_in = |body: &[I]| body.iter().filter(|i| is_call(target, i.text())).count();
    let block_calls: Vec<usize> = graph
        .ranges
        .iter()
        .map(|&(start, end)| calls_in(&insts[start..end]))
        .collect();
    match cfg::choose_loop(&graph, &block_calls) {
        Some(chosen) => HotCode {
            is_loop: true,
            header: insts[graph.ranges[chosen.header].0].addr(),
            calls: chosen.body.iter().map(|&b| block_calls[b]).sum(),
            ranges: chosen.body.iter().map(|&b| graph.ranges[b]).collect(),
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
            HotCode {
                is_loop: false,
                header: 0,
                calls: calls_in(&insts[..end]),
                ranges: vec![(0, end)],
            }
        }
    }
}

/// The hot loop of an already disassembled function ([`cfg::choose_loop`]), else the
/// straight-line function up to its first trap after its first return.
fn find_hot_loop(target: Target, insts: Vec<DisasmInst>, jumps: JumpTargets<'_>) -> HotLoop {
    let flows = flows_of(target, &insts);
    hot_code(target, &insts, flows, jumps).hot_loop(&insts, DisasmInst::clone)
}

/// Assembly text for llvm-mca: branch targets become one local label, so the text assembles
/// whatever the original addresses were.
pub fn mca_source(target: Target, body: &HotLoop) -> String {
    const LABEL: &str = ".Lschedlab_target";
    let mut out = format!("{LABEL}:\n");
    for inst in &body.insts {
        let direct = inst
            .text
            .rsplit([' ', ','])
            .next()
            .is_some_and(|op| op.starts_with("0x"));
        let text = match flow(target, &inst.text) {
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
    fn a_batch_listing_splits_only_when_every_function_has_one_section() {
        let text = "\nbatch.o:\tfile format elf64-x86-64\n\n\
            Disassembly of section .text.subsection:\n\n0000000000000000 <f1>:\n       0: \tretq\n\n\
            Disassembly of section .text.subsection:\n\n0000000000000000 <f0>:\n       0: \tnop\n";
        let parts = split_sections(text, 2).expect("two sections");
        assert_eq!(
            parse_objdump(Target::X86_64, parts[0]),
            vec![inst(0, "nop")]
        );
        assert_eq!(
            parse_objdump(Target::X86_64, parts[1]),
            vec![inst(0, "retq")]
        );
        assert_eq!(
            split_sections(text, 3),
            None,
            "a function without a section"
        );
        assert_eq!(split_sections(text, 1), None, "a section of no function");
        let twice = format!("{text}Disassembly of section .text.subsection:\n0 <f0>:\n");
        assert_eq!(split_sections(&twice, 2), None, "a function twice");
        let shared = text.replace(
            "Disassembly of section .text.subsection:\n\n0000000000000000 <f0>",
            "0000000000000000 <f0>",
        );
        assert_eq!(
            split_sections(&shared, 2),
            None,
            "two functions in one section"
        );
        let foreign = text.replace("<f1>", "<main>");
        assert_eq!(split_sections(&foreign, 2), None, "another symbol");
        // A jump table's target inside a function is a line of the function's listing.
        let target = text.replace(
            "       0: \tretq\n",
            "       0: \tjmpq *%rcx\n\n0000000000000008 <dispatch.f1.8>:\n       8: \tretq\n",
        );
        let parts = split_sections(&target, 2).expect("the dispatch symbol splits nothing");
        assert_eq!(
            parse_objdump(Target::X86_64, parts[1]),
            vec![inst(0, "jmpq *%rcx"), inst(8, "retq")]
        );
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
        let l = find_hot_loop(Target::X86_64, insts, JumpTargets::NONE);
        assert!(l.is_loop);
        assert_eq!(l.header, 1);
        let addrs: Vec<u64> = l.insts.iter().map(|i| i.addr).collect();
        assert_eq!(addrs, vec![1, 2, 0x10, 0x12, 0x14, 0x16]);
        let src = mca_source(Target::X86_64, &l);
        assert!(src.contains("jle .Lschedlab_target\n"), "{src}");
        assert!(src.contains("jmp .Lschedlab_target\n"), "{src}");
    }

    /// Addresses of the chosen loop's instructions.
    fn chosen(target: Target, insts: Vec<DisasmInst>) -> (u64, Vec<u64>) {
        let l = find_hot_loop(target, insts, JumpTargets::NONE);
        assert!(l.is_loop);
        (l.header, l.insts.iter().map(|i| i.addr).collect())
    }

    /// `mulAdd` after bounds-check elimination (x86_64, shortened): the checked fallback loop
    /// at 0x10 (two bounds checks branching to the out-of-bounds return at 0x40, larger) and
    /// the predicated loop at 0x50 (its loop test the only exit).
    fn mul_add_shape() -> Vec<DisasmInst> {
        vec![
            inst(0x0, "testb %r14b, %bl"),
            inst(0x3, "jne 0x50"),
            inst(0x10, "testl %r10d, %r10d"),
            inst(0x13, "jl 0x60"),
            inst(0x15, "cmpq %r11, %rbx"),
            inst(0x18, "jae 0x40"),
            inst(0x1a, "movl (%rdx,%rbx,4), %ebx"),
            inst(0x1d, "imulq %rcx, %rbx"),
            inst(0x21, "cmpq %rax, %r13"),
            inst(0x24, "jae 0x40"),
            inst(0x26, "movl (%rdi,%r12,4), %r12d"),
            inst(0x2a, "addq %rbx, %r9"),
            inst(0x2d, "addq %r12, %r9"),
            inst(0x30, "movl %r9d, (%rdi,%r8,4)"),
            inst(0x34, "shrq $32, %r9"),
            inst(0x38, "addl $-1, %r10d"),
            inst(0x3b, "jmp 0x10"),
            inst(0x40, "movq $-2147483648, %rax"),
            inst(0x47, "retq"),
            inst(0x50, "testq %rdx, %rdx"),
            inst(0x53, "jl 0x60"),
            inst(0x55, "movl (%r8), %edx"),
            inst(0x58, "imulq %rcx, %rdx"),
            inst(0x5a, "addq %rdx, %r9"),
            inst(0x5c, "shrq $32, %r9"),
            inst(0x5e, "jmp 0x50"),
            inst(0x60, "movl %r9d, %eax"),
            inst(0x62, "retq"),
        ]
    }

    #[test]
    fn the_check_free_twin_is_chosen_over_the_larger_checked_loop() {
        let (header, addrs) = chosen(Target::X86_64, mul_add_shape());
        assert_eq!(header, 0x50);
        // 7 instructions against the checked loop's 15: the old rule (the largest natural
        // loop) took the checked one.
        assert_eq!(addrs, vec![0x50, 0x53, 0x55, 0x58, 0x5a, 0x5c, 0x5e]);
    }

    /// `squareToLen` (AArch64, shortened): a squares loop (0x10, depth 1, large), the outer
    /// loop over `i` (0x40..0x9c) holding a checked `mulAdd` loop (0x44), its predicated twin
    /// (0x60) and `addOne`'s loop (0x80), then a shift loop (0xa0, depth 1).
    fn square_to_len_shape() -> Vec<DisasmInst> {
        let mut v = vec![inst(0x0, "cmp w1, w2"), inst(0x4, "b.ne 0xc4")];
        // Squares loop: 10 instructions.
        v.extend((0..9).map(|k| inst(0x10 + 4 * k, "umulh x3, x4, x4")));
        v.push(inst(0x34, "b.lt 0x10"));
        v.extend([
            inst(0x40, "cmp w5, #0"),
            inst(0x44, "b.le 0xa0"),
            // checked mulAdd loop
            inst(0x48, "cmp x6, x7"),
            inst(0x4c, "b.hs 0xc0"),
            inst(0x50, "madd x8, x9, x10, x8"),
            inst(0x54, "cmp x11, x7"),
            inst(0x58, "b.hs 0xc0"),
            inst(0x5c, "b.ge 0x48"),
            // predicated mulAdd loop
            inst(0x60, "ldr w9, [x12], #-4"),
            inst(0x64, "madd x8, x9, x10, x8"),
            inst(0x68, "lsr x8, x8, #32"),
            inst(0x6c, "subs w13, w13, #1"),
            inst(0x70, "b.ge 0x60"),
            // addOne loop
            inst(0x80, "ldr w14, [x15]"),
            inst(0x84, "cmp x16, x7"),
            inst(0x88, "b.hs 0xc0"),
            inst(0x8c, "adds w14, w14, #1"),
            inst(0x90, "b.eq 0x80"),
            inst(0x94, "sub w5, w5, #1"),
            inst(0x98, "b 0x40"),
            // shift loop
            inst(0xa0, "extr w17, w18, w17, #31"),
            inst(0xa4, "subs w19, w19, #1"),
            inst(0xa8, "b.ne 0xa0"),
            inst(0xac, "ret"),
            inst(0xc0, "mov w0, #-2147483648"),
            inst(0xc4, "ret"),
        ]);
        v
    }

    #[test]
    fn the_innermost_predicated_loop_of_the_deepest_nest_is_chosen() {
        let (header, addrs) = chosen(Target::Aarch64, square_to_len_shape());
        assert_eq!(header, 0x60);
        assert_eq!(addrs, vec![0x60, 0x64, 0x68, 0x6c, 0x70]);
        let flows = flows_of(Target::Aarch64, &square_to_len_shape());
        let loops = cfg::natural_loops(&cfg::Cfg::build(
            &square_to_len_shape(),
            &flows,
            JumpTargets::NONE,
        ));
        let outer = loops.iter().find(|l| l.depth == 1 && !l.innermost);
        assert!(outer.is_some_and(|l| l.size > 10), "{loops:?}");
        assert_eq!(
            loops.iter().filter(|l| l.depth == 2).count(),
            3,
            "{loops:?}"
        );
    }

    #[test]
    fn unreachable_data_is_cut_and_reachable_garbage_refused() {
        // x86_64: the constant pool after the last return; riscv64: a constant behind a jump.
        let pool = vec![
            inst(0x0, "addl %ecx, %eax"),
            inst(0x2, "retq"),
            inst(0x8, "addb %al, (%rax)"),
            inst(0xa, "<unknown>"),
        ];
        let kept = reachable_code(Target::X86_64, pool).expect("data is cut");
        assert_eq!(kept.len(), 2);
        let island = vec![
            inst(0x0, "addi a0, a0, 1"),
            inst(0x4, "j 0x10"),
            inst(0x6, "unimp"),
            inst(0x8, "<unknown>"),
            inst(0x10, "bnez a0, 0x0"),
            inst(0x14, "ret"),
        ];
        let kept = reachable_code(Target::Riscv64, island).expect("the island is cut");
        let addrs: Vec<u64> = kept.iter().map(|i| i.addr).collect();
        assert_eq!(addrs, vec![0x0, 0x4, 0x10, 0x14]);
        let reached = vec![inst(0x0, "addl %ecx, %eax"), inst(0x2, "<unknown>")];
        assert!(reachable_code(Target::X86_64, reached).is_err());
        let into_middle = vec![
            inst(0x0, "jne 0x3"),
            inst(0x2, "addl %ecx, %eax"),
            inst(0x5, "retq"),
        ];
        assert!(reachable_code(Target::X86_64, into_middle).is_err());
    }

    #[test]
    fn straight_line_code_is_cut_at_the_first_trap_after_the_return() {
        let insts = vec![
            inst(0, "add x0, x0, x1"),
            inst(4, "ret"),
            inst(8, "udf #0xc11f"),
            inst(12, "udf #0xc11f"),
        ];
        let l = find_hot_loop(Target::Aarch64, insts, JumpTargets::NONE);
        assert!(!l.is_loop);
        assert_eq!(l.insts.len(), 2);
    }

    #[test]
    fn an_indirect_jump_leads_to_its_blocks_targets_and_not_into_its_table() {
        // 0x0: entry; 0x4: the dispatch block ending in `jmpq *%rcx` at 0x8, its table at 0xa
        // (bytes llvm-objdump cannot decode); 0x10 and 0x18: cases jumping back to 0x4;
        // 0x20: the exit.
        let insts = vec![
            inst(0x0, "movl %esi, %eax"),
            inst(0x4, "leaq 6(%rip), %rcx"),
            inst(0x8, "jmpq *%rcx"),
            inst(0xa, "<unknown>"),
            inst(0x10, "addl $1, %eax"),
            inst(0x13, "jmp 0x4"),
            inst(0x18, "addl %eax, %eax"),
            inst(0x1a, "jmp 0x4"),
            inst(0x20, "retq"),
        ];
        assert_eq!(flow(Target::X86_64, "jmpq *%rcx"), Flow::Indirect);
        assert_eq!(flow(Target::Aarch64, "br x3"), Flow::Indirect);
        assert_eq!(flow(Target::X86_64, "jmp 0x4"), Flow::Jump(0x4));
        // The code generator's edges: block 0x4 goes to its three targets.
        let edges = [
            (0x0, 0x4),
            (0x4, 0x10),
            (0x4, 0x18),
            (0x4, 0x20),
            (0x10, 0x4),
            (0x18, 0x4),
        ];
        let jumps = JumpTargets::from_edges(&edges);
        assert_eq!(jumps.of(0x8).collect::<Vec<_>>(), vec![0x10, 0x18, 0x20]);
        let kept = reachable_code_and_flows(Target::X86_64, insts.clone(), jumps)
            .unwrap_or_else(|e| panic!("{e}"))
            .0;
        assert!(kept.iter().all(|i| i.addr != 0xa), "the table is data");
        let l = find_hot_loop(Target::X86_64, kept, jumps);
        assert!(l.is_loop);
        assert_eq!(l.header, 0x4);
        // Without the edges nothing follows the dispatch: no loop, and still no table read.
        let alone = reachable_code(Target::X86_64, insts).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(alone.last().map(|i| i.addr), Some(0x8));
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
        let l = find_hot_loop(Target::Riscv64, insts, JumpTargets::NONE);
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
        assert_eq!(mca_llvm_major("sifive-u74"), 19);
    }
}
