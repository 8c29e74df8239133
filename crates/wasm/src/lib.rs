//! WebAssembly modules as a kernel source, beside `.clif` files and the built-in kernels.
//!
//! Every function a module defines is translated to Cranelift IR by Wasmtime's own translator
//! (Wasmtime 48.0.8, built on the Cranelift schedlab pins), so the IR is what Wasmtime hands
//! its Cranelift — memory accesses, `vmctx` loads, calls to builtins and all — and
//! [`isa`] builds the ISA with the flags Wasmtime compiles it with, for the stock-Cranelift
//! baseline and for schedlab's pipeline alike.
//!
//! Wasmtime writes each function's IR after its own compile (`Config::emit_clif`); [`translate`]
//! has Wasmtime compile at `opt_level=none`, so the text is the translated IR after Cranelift's
//! legalisation only (no e-graph, no other rewrite), collects the texts from a private
//! temporary directory and parses them with cranelift-reader. A function whose text does not
//! parse keeps its reason ([`WasmFunction::func`]); the others are unaffected.
//! [`translate_cached`] keeps the texts between runs ([`TranslationCache`]).
//!
//! Two bounds-check modes ([`BoundsChecks`]): Wasmtime's default on 64-bit hosts (a 4 GiB
//! reservation plus guard pages: a 32-bit memory needs no check) and explicit checks
//! (`signals_based_traps(false)`, no reservation, no guard: a compare and a trap before every
//! load and store, the Java situation of schedlab's own kernels).
#![deny(missing_docs)]

mod body;
mod cache;
mod census;
mod names;
pub mod soundness;

use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use schedlab_backend::target::{IsaChoice, OptLevel, Target};
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

pub use body::body_digest;
pub use cache::{CACHE_VARIABLE, TranslationCache, WASMTIME_VERSION};
pub use census::{HeapChecks, heap_checks};
pub use names::{function_names, smallest_memory_minimum};

/// How linear-memory accesses are bounds-checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BoundsChecks {
    /// Wasmtime's default on 64-bit hosts: a 4 GiB reservation and guard pages, so a 32-bit
    /// memory's accesses carry no explicit check.
    GuardPages,
    /// `signals_based_traps(false)` with no reservation or guard: every load and store is
    /// preceded by an explicit compare and trap.
    Explicit,
}

impl BoundsChecks {
    /// Both modes, in report order.
    pub const ALL: [BoundsChecks; 2] = [BoundsChecks::GuardPages, BoundsChecks::Explicit];

    /// The mode's name in kernel names and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            BoundsChecks::GuardPages => "guard",
            BoundsChecks::Explicit => "explicit",
        }
    }
}

impl FromStr for BoundsChecks {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "guard" => Ok(BoundsChecks::GuardPages),
            "explicit" => Ok(BoundsChecks::Explicit),
            other => Err(format!(
                "unknown bounds-check mode `{other}`; valid modes: guard, explicit"
            )),
        }
    }
}

/// Why a module could not be translated.
#[derive(Debug, thiserror::Error)]
pub enum WasmError {
    /// Wasmtime rejected the module: malformed, or using a proposal it does not support here.
    #[error("not a WebAssembly module schedlab can translate: {0}")]
    Module(String),
    /// The temporary directory for Wasmtime's IR text could not be used.
    #[error("cannot use a temporary directory for the translated IR: {0}")]
    Io(#[from] std::io::Error),
}

/// One function a module defines.
#[derive(Clone, Debug)]
pub struct WasmFunction {
    /// Its index in the module's function index space (imports first).
    pub index: u32,
    /// Its name from the module's name section, if there is one.
    pub name: Option<String>,
    /// Its Cranelift IR as Wasmtime translated it, or why the text could not be read back.
    pub func: Result<Function, String>,
    /// SHA-256 of its IR text without what only names things in this module
    /// ([`body_digest`]): functions of modules with the same heap facts, translated in the
    /// same mode, whose digests are equal are the same IR to every pass and to code generation.
    pub body_digest: [u8; 32],
}

impl WasmFunction {
    /// The name reports use: the name section's, else `func<index>`.
    pub fn display_name(&self) -> String {
        match &self.name {
            Some(name) => name.clone(),
            None => format!("func{}", self.index),
        }
    }
}

/// Every defined function of a module in one bounds-check mode.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The bounds-check mode.
    pub mode: BoundsChecks,
    /// The defined functions, by index.
    pub functions: Vec<WasmFunction>,
    /// Wall time of Wasmtime's translation of the whole module (with its own `opt_level=none`
    /// compile, which `Engine::precompile_module` cannot skip), or of reading it from the cache.
    pub wasmtime_time: Duration,
    /// Wall time spent reading the IR text back.
    pub parse_time: Duration,
    /// The smallest declared minimum of the module's memories in bytes
    /// ([`smallest_memory_minimum`]): what bounds-check elimination may assume of every
    /// memory's length.
    pub min_memory_bytes: u64,
    /// Whether the IR text came from a [`TranslationCache`] instead of Wasmtime.
    pub from_cache: bool,
}

/// The target triple Wasmtime translates for: x86_64 at schedlab's named feature level, the
/// same IR on every host (the translation does not depend on the host's CPU).
const TRANSLATION_TRIPLE: &str = "x86_64-unknown-linux-gnu";

/// Translates every function `bytes` (a binary module) defines, in `mode`, with no cache.
pub fn translate(bytes: &[u8], mode: BoundsChecks) -> Result<Translation, WasmError> {
    translate_cached(bytes, mode, &TranslationCache::off())
}

/// [`translate`], reading the functions' IR text from `cache` when it holds this module's
/// translation in `mode`, else running Wasmtime and keeping its text there. A cache that
/// cannot be written costs nothing but the saving.
pub fn translate_cached(
    bytes: &[u8],
    mode: BoundsChecks,
    cache: &TranslationCache,
) -> Result<Translation, WasmError> {
    let names = names::function_names(bytes).map_err(WasmError::Module)?;
    let min_memory_bytes = names::smallest_memory_minimum(bytes).map_err(WasmError::Module)?;
    let started = Instant::now();
    let key = match cache.dir() {
        Some(_) => Some(TranslationCache::key(
            bytes,
            &configuration_text(&config(mode, Path::new("/ir"))?),
        )),
        None => None,
    };
    let cached = key.as_deref().and_then(|key| cache.load(key));
    let from_cache = cached.is_some();
    let texts = match cached {
        Some(texts) => texts,
        None => {
            let texts = wasmtime_texts(bytes, mode)?;
            if let Some(key) = &key {
                // The cache only saves time: a directory that cannot be written changes
                // nothing else.
                let _ = cache.store(key, &texts);
            }
            texts
        }
    };
    let wasmtime_time = started.elapsed();
    let started = Instant::now();
    let mut functions: Vec<WasmFunction> = texts
        .into_iter()
        .map(|(index, text)| WasmFunction {
            index,
            name: names.get(&index).cloned(),
            func: parse_function(&text),
            body_digest: body_digest(&text),
        })
        .collect();
    functions.sort_by_key(|f| f.index);
    Ok(Translation {
        mode,
        functions,
        wasmtime_time,
        parse_time: started.elapsed(),
        min_memory_bytes,
        from_cache,
    })
}

/// Every setting of `config` as text, the same for equal configurations: the lines of its
/// pretty `Debug` text, sorted (Wasmtime keeps the compiler's flags in hash maps, whose
/// order differs between processes).
fn configuration_text(config: &wasmtime::Config) -> String {
    let text = format!("{config:#?}");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines.join("\n")
}

/// Each defined function's index and IR text as Wasmtime writes it for `bytes` in `mode`.
fn wasmtime_texts(bytes: &[u8], mode: BoundsChecks) -> Result<Vec<(u32, String)>, WasmError> {
    let dir = ir_directory()?;
    let config = config(mode, dir.path())?;
    let engine = wasmtime::Engine::new(&config).map_err(|e| WasmError::Module(format!("{e:#}")))?;
    engine
        .precompile_module(&without_custom_sections(bytes))
        .map_err(|e| WasmError::Module(format!("{e:#}")))?;
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(dir.path())? {
        let path = entry?.path();
        if let Some(index) = function_index(&path) {
            texts.push((index, std::fs::read_to_string(&path)?));
        }
    }
    Ok(texts)
}

/// Where Wasmtime writes the IR files: a fresh scratch directory
/// ([`schedlab_backend::tools::scratch_dir`]; the files live for one translation, and
/// Wasmtime writes them unbuffered, a system call per formatted fragment: a RAM filesystem
/// takes about a fifth less system time for them).
fn ir_directory() -> std::io::Result<tempfile::TempDir> {
    schedlab_backend::tools::scratch_dir("schedlab-wasm")
}

/// `wasm[0]--function[<index>].clif` (Wasmtime's symbol with `:` made `-`) → `<index>`;
/// `None` for the trampolines Wasmtime writes beside the functions.
fn function_index(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    name.strip_prefix("wasm[0]--function[")?
        .strip_suffix("].clif")?
        .parse()
        .ok()
}

/// `bytes` without its custom sections. Wasmtime names its IR files after the name section's
/// names, which may hold characters a file name cannot (`/`); the names are read separately
/// ([`function_names`]), and no custom section changes the code. A truncated section header
/// is left for Wasmtime to report.
fn without_custom_sections(bytes: &[u8]) -> Vec<u8> {
    const HEADER: usize = 8;
    if bytes.len() < HEADER {
        return bytes.to_vec();
    }
    let mut out = bytes[..HEADER].to_vec();
    let mut at = HEADER;
    while at < bytes.len() {
        let id = bytes[at];
        let Some((size, len)) = leb128_u32(&bytes[at + 1..]) else {
            break;
        };
        let end = at + 1 + len + size as usize;
        if end > bytes.len() {
            break;
        }
        if id != 0 {
            out.extend_from_slice(&bytes[at..end]);
        }
        at = end;
    }
    if at < bytes.len() {
        out.extend_from_slice(&bytes[at..]);
    }
    out
}

/// An unsigned LEB128 `u32` and its length in bytes.
fn leb128_u32(bytes: &[u8]) -> Option<(u32, usize)> {
    let mut value: u64 = 0;
    for (i, &b) in bytes.iter().take(5).enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return u32::try_from(value).ok().map(|v| (v, i + 1));
        }
    }
    None
}

fn parse_function(text: &str) -> Result<Function, String> {
    let parsed = std::panic::catch_unwind(|| cranelift_reader::parse_functions(text))
        .map_err(|_| "cranelift-reader panicked on Wasmtime's IR text".to_string())?;
    let mut functions = parsed.map_err(|e| format!("cranelift-reader: {e}"))?;
    match functions.len() {
        1 => Ok(functions.remove(0)),
        n => Err(format!(
            "expected one function in Wasmtime's IR text, found {n}"
        )),
    }
}

/// Wasmtime's configuration for `mode`, writing IR text into `clif_dir`.
fn config(mode: BoundsChecks, clif_dir: &Path) -> Result<wasmtime::Config, WasmError> {
    let mut config = wasmtime::Config::new();
    config
        .target(TRANSLATION_TRIPLE)
        .map_err(|e| WasmError::Module(format!("{e:#}")))?;
    // Only the translation is wanted: Wasmtime's own compile after it is as cheap as it goes.
    config.cranelift_opt_level(wasmtime::OptLevel::None);
    config.emit_clif(clif_dir);
    // SAFETY: these flags change only the code Wasmtime generates, which is never run: the
    // serialized module is dropped. x86-64-v3 is schedlab's named level for x86_64.
    unsafe {
        config.cranelift_flag_enable("x86-64-v3");
    }
    if mode == BoundsChecks::Explicit {
        config
            .signals_based_traps(false)
            .memory_reservation(0)
            .memory_guard_size(0)
            .memory_reservation_for_growth(0);
        // SAFETY: Wasmtime requires both off without signals-based traps (its spectre
        // mitigation faults on address zero); the code is never run.
        unsafe {
            config.cranelift_flag_set("enable_heap_access_spectre_mitigation", "false");
            config.cranelift_flag_set("enable_table_access_spectre_mitigation", "false");
        }
    }
    Ok(config)
}

/// The ISA for `target` with the flags Wasmtime 48 compiles with — frame pointers kept,
/// inline stack probes, multi-value returns through an implicit pointer, unwind information,
/// Spectre-mitigated heap and table accesses only with guard pages (Wasmtime turns them off
/// without signals-based traps), no verifier inside code generation — at schedlab's named
/// feature level for the target and at `opt`: `Speed` is stock Cranelift as Wasmtime runs it,
/// `None` is what schedlab's pipeline compiles its scheduled IR with.
pub fn isa(target: Target, mode: BoundsChecks, opt: OptLevel) -> Result<OwnedTargetIsa, String> {
    let mut shared = settings::builder();
    let mut set = |name: &str, value: &str| {
        shared
            .set(name, value)
            .map_err(|e| format!("Cranelift flag {name}={value}: {e}"))
    };
    set(
        "opt_level",
        match opt {
            OptLevel::None => "none",
            OptLevel::Speed => "speed",
        },
    )?;
    set("enable_verifier", "false")?;
    set("preserve_frame_pointers", "true")?;
    set("enable_probestack", "true")?;
    set("probestack_strategy", "inline")?;
    set("enable_multi_ret_implicit_sret", "true")?;
    set("unwind_info", "true")?;
    let mitigate = if mode == BoundsChecks::GuardPages {
        "true"
    } else {
        "false"
    };
    set("enable_heap_access_spectre_mitigation", mitigate)?;
    set("enable_table_access_spectre_mitigation", mitigate)?;
    // Metadata only (the emitted blocks' edges, which the cost model reads jump tables from).
    set("machine_code_cfg_info", "true")?;
    let flags = settings::Flags::new(shared);
    target
        .isa_builder(IsaChoice::Level)?
        .finish(flags)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_text_names_the_mode_and_nothing_random() {
        let text = |mode| configuration_text(&config(mode, Path::new("/ir")).unwrap());
        for mode in BoundsChecks::ALL {
            assert_eq!(text(mode), text(mode));
        }
        assert_ne!(text(BoundsChecks::GuardPages), text(BoundsChecks::Explicit));
    }

    #[test]
    fn custom_sections_are_dropped_and_the_rest_kept() {
        let module = [
            &b"\0asm\x01\0\0\0"[..],
            &[0, 5, 4, b'n', b'a', b'm', b'e'],
            &[1, 4, 1, 0x60, 0, 0],
        ]
        .concat();
        assert_eq!(
            without_custom_sections(&module),
            [&b"\0asm\x01\0\0\0"[..], &[1, 4, 1, 0x60, 0, 0]].concat()
        );
        // A truncated section is passed on for Wasmtime to report.
        let truncated = [&b"\0asm\x01\0\0\0"[..], &[1, 9, 1]].concat();
        assert_eq!(without_custom_sections(&truncated), truncated);
        assert_eq!(leb128_u32(&[0xe5, 0x8e, 0x26]), Some((624_485, 3)));
        assert_eq!(leb128_u32(&[0x80, 0x80]), None);
    }

    #[test]
    fn only_function_files_have_an_index() {
        assert_eq!(
            function_index(Path::new("d/wasm[0]--function[12].clif")),
            Some(12)
        );
        assert_eq!(
            function_index(Path::new("wasm[0]--array_to_wasm_trampoline[1].clif")),
            None
        );
    }
}
