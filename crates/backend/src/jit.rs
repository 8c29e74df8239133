//! The host JIT: a function compiled through [`crate::compile()`]'s settings into executable
//! memory that lives for the rest of the process.

use crate::code_cache::{CachedCode, CodeCache, patched, word_sites};
use crate::compile::{Compiled, compile_in_context};
use crate::target::{IsaChoice, OptLevel, Target};
use cranelift_codegen::Context;
use cranelift_codegen::ir::Function;
use cranelift_codegen::ir::Signature;
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, ModuleError};
use std::cell::RefCell;
use std::sync::OnceLock;

/// Why a function could not be JIT-compiled.
#[derive(Debug, thiserror::Error)]
pub enum JitError {
    /// This process runs on an architecture schedlab has no target for.
    #[error("the host architecture is not one of schedlab's targets")]
    UnsupportedHost,
    /// The ISA or the code generator failed.
    #[error(transparent)]
    Compile(#[from] crate::compile::CompileError),
    /// cranelift-module failed to declare, define or finalise the function.
    #[error("JIT module: {0}")]
    Module(String),
    /// The function's signature is not the one the caller expects.
    #[error("signature mismatch: expected {expected}, found {found}")]
    Signature {
        /// What the caller needs.
        expected: String,
        /// What the function has.
        found: String,
    },
}

impl From<ModuleError> for JitError {
    fn from(e: ModuleError) -> Self {
        JitError::Module(e.to_string())
    }
}

/// Executable machine code for one function, kept alive for the whole process.
///
/// The code memory is deliberately never freed: callers keep plain function pointers into it
/// (the `Md5` library compiles once per process and shares the pointer between threads).
pub struct JitFunction {
    code: *const u8,
    compiled: Compiled,
}

// SAFETY: the code pointer refers to immutable, executable memory that is never unmapped
// (the owning JITModule is leaked), so sharing it between threads is sound.
unsafe impl Send for JitFunction {}
// SAFETY: as above; `JitFunction` offers only shared, read-only access.
unsafe impl Sync for JitFunction {}

/// How [`JitFunction::compile_with`] compiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JitOptions {
    /// Run Cranelift's verifier inside code generation (off when the caller's pipeline has
    /// just verified the function, as [`crate::pipeline::run_ir_stages_with`] does).
    pub verify: bool,
    /// Keep Cranelift's VCode listing in [`JitFunction::compiled`] (costs time; reports use it).
    pub listing: bool,
}

impl Default for JitOptions {
    /// Verifier on, listing kept: the safe choice for a function of unknown origin.
    fn default() -> Self {
        Self {
            verify: true,
            listing: true,
        }
    }
}

/// The host ISA with `opt_level=none`, built once per process and verifier setting (a JIT keeps
/// its ISA; building it detects CPU features).
fn host_isa(verify: bool) -> Result<OwnedTargetIsa, JitError> {
    host_isa_at(OptLevel::None, verify)
}

/// [`host_isa`] at `opt` (`Speed`: stock Cranelift, for the `cranelift-speed` baseline).
fn host_isa_at(opt: OptLevel, verify: bool) -> Result<OwnedTargetIsa, JitError> {
    static ISAS: [OnceLock<Result<OwnedTargetIsa, String>>; 4] = [const { OnceLock::new() }; 4];
    let target = Target::host().ok_or(JitError::UnsupportedHost)?;
    let index = usize::from(verify) + 2 * usize::from(opt == OptLevel::Speed);
    ISAS[index]
        .get_or_init(|| target.isa_with(opt, verify, IsaChoice::Native))
        .clone()
        .map_err(|message| crate::compile::CompileError::Isa { target, message }.into())
}

thread_local! {
    /// This thread's Cranelift context, kept between JIT compilations for its buffers.
    static CONTEXT: RefCell<Context> = RefCell::new(Context::new());
}

/// Runs `compile` in this thread's reused Cranelift context (a fresh one while it is in use);
/// fails only while the thread is being torn down.
fn with_context<T>(compile: impl FnOnce(&mut Context) -> T) -> Result<T, JitError> {
    CONTEXT
        .try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut ctx) => compile(&mut ctx),
            Err(_) => compile(&mut Context::new()),
        })
        .map_err(|_| JitError::Module("the thread's Cranelift context is gone".into()))
}

impl JitFunction {
    /// Compiles `func` for the host with `opt_level=none` and makes it executable
    /// ([`JitOptions::default`]: verifier on, listing kept).
    pub fn compile(func: &Function) -> Result<Self, JitError> {
        Self::compile_with(func.clone(), &JitOptions::default())
    }

    /// [`JitFunction::compile`] with explicit options, consuming the function.
    pub fn compile_with(func: Function, options: &JitOptions) -> Result<Self, JitError> {
        Self::compile_on(func, options, host_isa(options.verify)?)
    }

    /// Compiles `func` as stock Cranelift would, `opt_level=speed` (its e-graph optimiser and
    /// elaboration decide the order), for the host: the `cranelift-speed` baseline of
    /// `schedlab bench`, run on the kernel as built, without any schedlab pass.
    pub fn compile_speed(func: Function, options: &JitOptions) -> Result<Self, JitError> {
        Self::compile_on(func, options, host_isa_at(OptLevel::Speed, options.verify)?)
    }

    fn compile_on(
        func: Function,
        options: &JitOptions,
        isa: OwnedTargetIsa,
    ) -> Result<Self, JitError> {
        let target = Target::host().ok_or(JitError::UnsupportedHost)?;
        // Compile once, keep the statistics, and hand the same bytes to the module; functions
        // with relocations go through the module's own compile with the same ISA settings.
        let name = func.name.to_string();
        let signature = func.signature.clone();
        let compiled = with_context(|ctx| {
            compile_in_context(ctx, func, target, isa.as_ref(), options.listing)
        })??;
        let code = if compiled.relocs.is_empty() {
            executable(isa, &name, signature, ModuleInput::Bytes(&compiled.code))?
        } else {
            executable(isa, &name, signature, ModuleInput::Function(&compiled.func))?
        };
        Ok(Self { code, compiled })
    }

    /// Compiles `func` after `stages` as [`JitFunction::compile_with`] does (`opt_level=none`,
    /// no verifier, no listing), keeping the machine code in `cache` under `recipe` (which
    /// must name everything `stages` and `func` depend on; see [`crate::code_cache`]); a later
    /// process of the same executable on the same ISA loads it instead of running `stages`
    /// and the code generator. `words` are the process-specific 64-bit values the code
    /// embeds (addresses): code in which one does not occur exactly once is not kept. Only an
    /// x86_64 host keeps code (the sites are x86_64 immediates; see [`crate::code_cache`]).
    /// Returns the entry point and whether it came from the cache.
    pub fn compile_cached<E: From<JitError>>(
        cache: &CodeCache,
        recipe: &str,
        words: &[u64],
        mut func: Function,
        stages: impl FnOnce(&mut Function) -> Result<(), E>,
    ) -> Result<(JitCode, bool), E> {
        let isa = host_isa(false)?;
        let name = func.name.to_string();
        let key = (cfg!(target_arch = "x86_64") && cache.dir().is_some())
            .then(|| CodeCache::key(recipe, &isa_text(isa.as_ref())))
            .flatten();
        let loaded = key.as_ref().and_then(|key| cache.load(key));
        if let Some(entry) = loaded
            && let Some(code) = patched(entry.code, &entry.sites, words)
        {
            let entry = executable(
                isa,
                &name,
                func.signature.clone(),
                ModuleInput::Bytes(&code),
            )?;
            return Ok((JitCode { entry }, true));
        }
        stages(&mut func)?;
        let options = JitOptions {
            verify: false,
            listing: false,
        };
        let jit = Self::compile_with(func, &options)?;
        if let Some(key) = key
            && jit.compiled.relocs.is_empty()
            && let Some(sites) = word_sites(&jit.compiled.code, words)
        {
            let entry = CachedCode {
                code: jit.compiled.code.clone(),
                sites,
            };
            // The cache only saves time: a directory that cannot be written changes nothing.
            let _ = cache.store(&key, &entry);
        }
        Ok((JitCode { entry: jit.code }, false))
    }

    /// The entry point. Transmute it to the function's `extern "C"`-compatible type.
    pub fn code_ptr(&self) -> *const u8 {
        self.code
    }

    /// The compilation result behind the executable code (machine code, VCode listing).
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }
}

/// The entry point of code made by [`JitFunction::compile_cached`]: executable memory that
/// lives for the rest of the process.
#[derive(Clone, Copy, Debug)]
pub struct JitCode {
    entry: *const u8,
}

// SAFETY: as for `JitFunction`: the pointer refers to immutable executable memory that is
// never unmapped.
unsafe impl Send for JitCode {}
// SAFETY: as above.
unsafe impl Sync for JitCode {}

impl JitCode {
    /// The entry point. Transmute it to the function's `extern "C"`-compatible type.
    pub fn code_ptr(&self) -> *const u8 {
        self.entry
    }
}

/// What the JIT module makes executable: finished bytes, or a function it compiles itself
/// (one with relocations, which the module resolves).
enum ModuleInput<'a> {
    Bytes(&'a [u8]),
    Function(&'a Function),
}

/// `input` as the exported function `name` of a fresh JIT module on `isa`, made executable;
/// the module is kept for the rest of the process (see [`JitFunction`]).
fn executable(
    isa: OwnedTargetIsa,
    name: &str,
    mut signature: Signature,
    input: ModuleInput<'_>,
) -> Result<*const u8, JitError> {
    let alignment = u64::from(isa.function_alignment().preferred);
    let mut module = JITModule::new(JITBuilder::with_isa(
        isa,
        cranelift_module::default_libcall_names(),
    ));
    signature.call_conv = module.isa().default_call_conv();
    let id = module.declare_function(name, Linkage::Export, &signature)?;
    match input {
        ModuleInput::Bytes(bytes) => module.define_function_bytes(id, alignment, bytes, &[])?,
        ModuleInput::Function(func) => {
            // The function as compiled (legalised), compiled again by the module.
            let mut exec_func = func.clone();
            exec_func.signature = signature;
            let mut ctx = cranelift_codegen::Context::for_function(exec_func);
            module.define_function(id, &mut ctx)?;
        }
    }
    module.finalize_definitions()?;
    let code = module.get_finalized_function(id);
    std::mem::forget(module);
    Ok(code)
}

/// Everything about `isa` its code depends on: the triple and every shared and ISA-specific
/// flag (the host's detected features among them).
fn isa_text(isa: &dyn TargetIsa) -> String {
    let mut text = format!("{}\n{}", isa.triple(), isa.flags());
    for value in isa.isa_flags() {
        text.push_str(&format!("\n{value}"));
    }
    text
}
