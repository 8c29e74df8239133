//! ELF objects holding one compiled function, for linking with a C harness (see
//! [`crate::emulate`]) and for disassemblers (`schedlab_cost::mca`).
//!
//! The object is built from the exact bytes of a [`Compiled`] through cranelift-object's
//! `define_function_bytes`, so the code a harness executes or llvm-mca costs is byte for byte
//! the code the statistics were counted on.

use crate::compile::{CompileError, Compiled, compile};
use crate::target::{OptLevel, Target};
use cranelift_codegen::ir::{Function, UserFuncName};
use cranelift_module::{Linkage, Module};
use cranelift_object::object::write::Symbol;
use cranelift_object::object::{SymbolFlags, SymbolKind, SymbolScope};
use cranelift_object::{ObjectBuilder, ObjectModule};

/// Why an object file could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// Compiling the function failed.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// The ISA for the object could not be built.
    #[error("cannot build the {target} ISA: {message}")]
    Isa {
        /// The target.
        target: Target,
        /// Cranelift's message.
        message: String,
    },
    /// The code refers to other symbols; schedlab's objects hold one self-contained function.
    #[error("`{symbol}` has {count} relocation(s); only self-contained functions can be emitted")]
    Relocations {
        /// The function's symbol.
        symbol: String,
        /// How many relocations the code needs.
        count: usize,
    },
    /// cranelift-object failed.
    #[error("object emission for `{symbol}` failed: {message}")]
    Object {
        /// The function's symbol.
        symbol: String,
        /// The library's message.
        message: String,
    },
}

/// An ELF relocatable object defining one global function.
#[derive(Clone, Debug)]
pub struct ObjectFile {
    /// The target the code is for.
    pub target: Target,
    /// The exported symbol (the function's name).
    pub symbol: String,
    /// The ELF file's bytes.
    pub bytes: Vec<u8>,
}

impl ObjectFile {
    /// Emits `module`, whose code is for `target` and exported as `symbol`; `Err` carries
    /// cranelift-object's message.
    pub(crate) fn emit(
        module: ObjectModule,
        target: Target,
        symbol: String,
    ) -> Result<Self, String> {
        let bytes = module.finish().emit().map_err(|e| e.to_string())?;
        Ok(Self {
            target,
            symbol,
            bytes,
        })
    }
}

/// The linker symbol for `func`: its test-case name without CLIF's `%`, or `u<ns>_<index>`.
pub fn symbol_name(func: &Function) -> String {
    match &func.name {
        UserFuncName::Testcase(name) => name.to_string().trim_start_matches('%').to_string(),
        UserFuncName::User(name) => format!("u{}_{}", name.namespace, name.index),
    }
}

/// Compiles `func` for `target` ([`crate::compile()`]) and wraps the code in an object.
pub fn emit_object(func: &Function, target: Target) -> Result<ObjectFile, ObjectError> {
    let compiled = compile(func, target)?;
    object_from_compiled(&compiled)
}

/// Wraps already compiled code in an object whose symbol is the function's name.
pub fn object_from_compiled(compiled: &Compiled) -> Result<ObjectFile, ObjectError> {
    object_of(compiled, false)
}

/// [`object_from_compiled`] for a disassembler only: code that refers to other symbols (calls,
/// libcalls, function addresses) is accepted and its relocation fields are left as the
/// placeholders the compiled bytes hold, so a call decodes with a meaningless target (the next
/// instruction on x86_64, the call itself on AArch64) that control-flow analysis never
/// follows. Never link or run such an object.
pub fn object_for_disassembly(compiled: &Compiled) -> Result<ObjectFile, ObjectError> {
    object_of(compiled, true)
}

fn object_of(compiled: &Compiled, unresolved_ok: bool) -> Result<ObjectFile, ObjectError> {
    let symbol = symbol_name(&compiled.func);
    if !compiled.relocs.is_empty() && !unresolved_ok {
        return Err(ObjectError::Relocations {
            symbol,
            count: compiled.relocs.len(),
        });
    }
    let file_name = format!("{symbol}.o");
    object_with_functions(
        compiled.target,
        symbol.clone(),
        file_name,
        Layout {
            per_function_section: false,
            dispatch_symbols: unresolved_ok,
        },
        &[(symbol, compiled)],
    )
}

/// How [`object_with_functions`] lays functions out.
#[derive(Clone, Copy)]
struct Layout {
    /// Each function in a section of its own.
    per_function_section: bool,
    /// A local symbol at each target of a jump table's dispatch ([`DISPATCH_SYMBOL_PREFIX`]).
    dispatch_symbols: bool,
}

/// The local symbols an object for a disassembler has at a jump table's targets are named this
/// prefix, the function's symbol, a dot and the target's offset. A disassembler that sweeps
/// through the table's bytes as if they were instructions starts again at each symbol, so the
/// blocks the table leads to are listed from their first instruction.
pub const DISPATCH_SYMBOL_PREFIX: &str = "dispatch.";

/// The offsets a jump table's dispatch leads to: the targets of every block with more than two
/// successors in `compiled`'s block edges (a conditional branch has two).
fn dispatch_targets(compiled: &Compiled) -> Vec<u32> {
    let mut edges = compiled.block_edges.clone();
    edges.sort_unstable();
    edges.dedup();
    let mut targets: Vec<u32> = edges
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|group| group.len() > 2)
        .flat_map(|group| group.iter().map(|&(_, to)| to))
        .collect();
    targets.sort_unstable();
    targets.dedup();
    targets
}

/// One object for `target` named `symbol` (in errors and in the result) holding each function
/// under its name, at 16-byte alignment, with the target's default calling convention, laid
/// out as `layout` says.
fn object_with_functions(
    target: Target,
    symbol: String,
    file_name: String,
    layout: Layout,
    functions: &[(String, &Compiled)],
) -> Result<ObjectFile, ObjectError> {
    let object_err = |message: String| ObjectError::Object {
        symbol: symbol.clone(),
        message,
    };
    let isa = target
        .isa(OptLevel::None)
        .map_err(|message| ObjectError::Isa { target, message })?;
    let mut builder = ObjectBuilder::new(isa, file_name, cranelift_module::default_libcall_names())
        .map_err(|e| object_err(e.to_string()))?;
    builder.per_function_section(layout.per_function_section);
    let mut module = ObjectModule::new(builder);
    let mut ids = Vec::with_capacity(functions.len());
    for (name, compiled) in functions {
        let mut signature = compiled.func.signature.clone();
        signature.call_conv = module.isa().default_call_conv();
        let id = module
            .declare_function(name, Linkage::Export, &signature)
            .map_err(|e| object_err(e.to_string()))?;
        module
            .define_function_bytes(id, 16, &compiled.code, &[])
            .map_err(|e| object_err(e.to_string()))?;
        ids.push(id);
    }
    let mut product = module.finish();
    if layout.dispatch_symbols {
        for ((name, compiled), &id) in functions.iter().zip(&ids) {
            let function = product.object.symbol(product.function_symbol(id));
            let (section, base) = (function.section, function.value);
            for offset in dispatch_targets(compiled) {
                product.object.add_symbol(Symbol {
                    name: format!("{DISPATCH_SYMBOL_PREFIX}{name}.{offset}").into_bytes(),
                    value: base + u64::from(offset),
                    size: 0,
                    kind: SymbolKind::Text,
                    scope: SymbolScope::Compilation,
                    weak: false,
                    section,
                    flags: SymbolFlags::None,
                });
            }
        }
    }
    let bytes = product.emit().map_err(|e| object_err(e.to_string()))?;
    Ok(ObjectFile {
        target,
        symbol,
        bytes,
    })
}

/// The symbol of the `i`-th function of [`object_for_batch_disassembly`] is this prefix and
/// `i`, in its own section `.text.<symbol>`.
pub const BATCH_SYMBOL_PREFIX: &str = "f";

/// One object holding every function of `batch` (all compiled for `target`), each in its own
/// section (`.text.f0`, `.text.f1`, …) so that a disassembler numbers each from offset 0, as
/// in [`object_for_disassembly`]'s single-function object; for a disassembler only (the same
/// caveats).
pub fn object_for_batch_disassembly(
    target: Target,
    batch: &[&Compiled],
) -> Result<ObjectFile, ObjectError> {
    let symbol = format!("{BATCH_SYMBOL_PREFIX}0..{}", batch.len());
    if let Some((i, compiled)) = batch.iter().enumerate().find(|(_, c)| c.target != target) {
        return Err(ObjectError::Object {
            symbol,
            message: format!(
                "function {i} is compiled for {}, not {target}",
                compiled.target
            ),
        });
    }
    let functions: Vec<(String, &Compiled)> = batch
        .iter()
        .enumerate()
        .map(|(i, &compiled)| (format!("{BATCH_SYMBOL_PREFIX}{i}"), compiled))
        .collect();
    let layout = Layout {
        per_function_section: true,
        dispatch_symbols: true,
    };
    object_with_functions(target, symbol, "batch.o".to_string(), layout, &functions)
}
