//! The one compile step every path shares, and the optional optimise stage before it.

use crate::target::{IsaChoice, OptLevel, Target};
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::{Context, FinalizedMachExceptionHandler, FinalizedMachReloc};

/// Why compilation failed.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The ISA could not be built.
    #[error("cannot build the {target} ISA: {message}")]
    Isa {
        /// The target.
        target: Target,
        /// Cranelift's message.
        message: String,
    },
    /// Cranelift rejected the function (verifier or lowering error).
    #[error("Cranelift failed on {target}: {message}")]
    Codegen {
        /// The target.
        target: Target,
        /// Cranelift's message, with the verifier's annotated function where it has one.
        message: String,
    },
}

/// Machine code of one function with what the reports read from it.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The target it was compiled for.
    pub target: Target,
    /// The function after lowering preparations (what was actually emitted).
    pub func: Function,
    /// Raw machine code.
    pub code: Vec<u8>,
    /// Cranelift's VCode listing after register allocation (`Context::set_disasm`).
    pub vcode: String,
    /// Relocations the code needs (none for schedlab's kernels).
    pub relocs: Vec<FinalizedMachReloc>,
    /// The call sites that have exception handlers (`try_call`s with at least one handler), in
    /// code order: what a throw needs to find its handler in this function's frame.
    pub exception_sites: Vec<ExceptionSite>,
    /// Every control-flow edge between the emitted blocks, as (offset of the source block's
    /// start, offset of the target), jump tables' targets included (Cranelift's
    /// `machine_code_cfg_info`, each edge given its real source block:
    /// [`crate::block_edges`]; empty when an ISA was built without it).
    pub block_edges: Vec<(u32, u32)>,
    /// Starts of the emitted blocks whose edges are not known (Cranelift did not record them,
    /// or the listing could not tell whose they were): a jump table's dispatch in one of them
    /// has unknown targets.
    pub blocks_without_known_edges: Vec<u32>,
}

/// One `try_call` of compiled code with its handlers (Cranelift's `FinalizedMachCallSite`,
/// owned). Offsets are from the start of the function's code.
#[derive(Clone, Debug, PartialEq)]
pub struct ExceptionSite {
    /// Offset of the call's return address.
    pub ret_addr: u32,
    /// Bytes from the frame pointer down to the stack pointer at the call, when the backend
    /// states it (the handler's stack pointer is the frame pointer minus this).
    pub frame_offset: Option<u32>,
    /// The handlers in the order they are tried: tags, then the catch-all if any.
    pub handlers: Vec<FinalizedMachExceptionHandler>,
}

/// Runs Cranelift's e-graph optimiser on `func` for `target` (the explicit optimise stage).
///
/// After this stage pure instructions sit where the e-graph's elaboration placed them; a
/// scheduling pass may then reorder them, and [`compile`] keeps that order.
pub fn optimize(func: &mut Function, target: Target) -> Result<(), CompileError> {
    let isa = target
        .isa(OptLevel::Speed)
        .map_err(|message| CompileError::Isa { target, message })?;
    let mut ctx = Context::for_function(std::mem::replace(func, Function::new()));
    let result = ctx.optimize(isa.as_ref(), &mut ControlPlane::default());
    *func = ctx.func;
    result.map_err(|e| CompileError::Codegen {
        target,
        message: e.to_string(),
    })
}

/// Compiles `func` for `target` with `opt_level=none`, keeping the IR's instruction order, at
/// the target's named feature level ([`IsaChoice::Level`]).
pub fn compile(func: &Function, target: Target) -> Result<Compiled, CompileError> {
    compile_for(func, target, IsaChoice::Level)
}

/// [`compile`] with the ISA features `choice` names.
pub fn compile_for(
    func: &Function,
    target: Target,
    choice: IsaChoice,
) -> Result<Compiled, CompileError> {
    compile_at(func, target, OptLevel::None, choice)
}

/// Compiles `func` as stock Cranelift would: `opt_level=speed` (its e-graph optimiser and
/// elaboration, then code generation), no schedlab pass — the `cranelift-speed` baseline.
pub fn compile_speed(
    func: &Function,
    target: Target,
    choice: IsaChoice,
) -> Result<Compiled, CompileError> {
    compile_at(func, target, OptLevel::Speed, choice)
}

/// Compiles `func` with the target's ISA at `opt` with the features `choice` names, keeping
/// the VCode listing.
fn compile_at(
    func: &Function,
    target: Target,
    opt: OptLevel,
    choice: IsaChoice,
) -> Result<Compiled, CompileError> {
    let isa = target
        .isa_with(opt, true, choice)
        .map_err(|message| CompileError::Isa { target, message })?;
    compile_with_isa(func.clone(), target, isa.as_ref(), true)
}

/// [`compile`] with an ISA the caller already built (the JIT's); `listing` keeps the VCode
/// listing in [`Compiled::vcode`] (empty otherwise).
pub fn compile_with_isa(
    func: Function,
    target: Target,
    isa: &dyn TargetIsa,
    listing: bool,
) -> Result<Compiled, CompileError> {
    compile_in_context(&mut Context::new(), func, target, isa, listing)
}

/// [`compile_with_isa`] in a caller's Cranelift [`Context`], which keeps its buffers (the
/// register allocator's above all) for the next compilation: a JIT that compiles more than one
/// function reuses one context. The machine code is the same as with a fresh context.
pub fn compile_in_context(
    ctx: &mut Context,
    mut func: Function,
    target: Target,
    isa: &dyn TargetIsa,
    listing: bool,
) -> Result<Compiled, CompileError> {
    // A convention as written stays (`tail` keeps `return_call`); `fast`, cranelift-reader's
    // default for a function that writes none, becomes the target's default, as Cranelift's
    // runner parses files with the host's default convention.
    if func.signature.call_conv == CallConv::Fast {
        func.signature.call_conv = isa.default_call_conv();
    }
    ctx.clear();
    ctx.func = func;
    ctx.set_disasm(listing);
    let compiled = ctx
        .compile(isa, &mut ControlPlane::default())
        .map_err(|e| CompileError::Codegen {
            target,
            message: cranelift_codegen::print_errors::pretty_error(e.func, e.inner),
        })?;
    let code = compiled.code_buffer().to_vec();
    let vcode = compiled.vcode.clone().unwrap_or_default();
    let relocs = compiled.buffer.relocs().to_vec();
    let edges = crate::block_edges::attribute(&vcode, &compiled.bb_starts, &compiled.bb_edges);
    let exception_sites = compiled
        .buffer
        .call_sites()
        .filter(|site| !site.exception_handlers.is_empty())
        .map(|site| ExceptionSite {
            ret_addr: site.ret_addr,
            frame_offset: site.frame_offset,
            handlers: site.exception_handlers.to_vec(),
        })
        .collect();
    Ok(Compiled {
        target,
        func: std::mem::replace(&mut ctx.func, Function::new()),
        code,
        vcode,
        relocs,
        exception_sites,
        block_edges: edges.edges,
        blocks_without_known_edges: edges.unknown,
    })
}
