//! `.wasm` modules as kernels: one kernel per defined function and bounds-check mode, its IR
//! from Wasmtime's translator ([`schedlab_wasm`]), compiled with the flags Wasmtime uses.
//!
//! A `--kernel` item names a module as `FILE.wasm` (both modes), `FILE.wasm:MODE` (`guard` or
//! `explicit`) or `FILE.wasm:MODE:FUNCTION` (one function, by its name-section name or
//! `func<index>`). Each mode becomes a [`ClifFile`] without run lines whose ISAs carry
//! Wasmtime's flags (at `opt_level=none` for schedlab's pipeline, at `speed` for the
//! stock-Cranelift baseline), so `report`, `dump` and `--baseline` treat its functions like a
//! `.clif` file's.

use crate::CliError;
use crate::clif::ClifFile;
use crate::kernel::{ContentKey, Kernel};
use cranelift_codegen::ir::{Function, Opcode};
use rayon::prelude::*;
use schedlab_backend::Target;
use schedlab_backend::target::OptLevel;
use schedlab_passes::bce::heap::HeapFacts;
use schedlab_wasm::{BoundsChecks, Translation, TranslationCache};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// A `--kernel` item naming a module: its path, the modes and optionally one function.
#[derive(Debug, PartialEq)]
pub struct WasmSpec<'a> {
    /// The module's path.
    pub path: &'a str,
    /// The bounds-check modes asked for.
    pub modes: Vec<BoundsChecks>,
    /// One function's name, or all.
    pub function: Option<&'a str>,
}

/// Reads `FILE.wasm[:MODE[:FUNCTION]]`; `None` when `spec` names no `.wasm` file, an error for
/// an unknown mode.
pub fn parse_spec(spec: &str) -> Option<Result<WasmSpec<'_>, CliError>> {
    let end = spec.find(".wasm").map(|i| i + ".wasm".len())?;
    let (path, rest) = spec.split_at(end);
    if !(rest.is_empty() || rest.starts_with(':')) {
        return None;
    }
    let mut parts = rest.get(1..).unwrap_or("").splitn(2, ':');
    let modes = match parts.next().filter(|m| !m.is_empty()) {
        None => BoundsChecks::ALL.to_vec(),
        Some(mode) => match mode.parse() {
            Ok(m) => vec![m],
            Err(e) => return Some(Err(CliError::usage(format!("{spec}: {e}")))),
        },
    };
    Some(Ok(WasmSpec {
        path,
        modes,
        function: parts.next().filter(|f| !f.is_empty()),
    }))
}

/// Whether `k` is a function of a `.wasm` module (its source brings its own stock flags).
pub fn is_wasm_kernel(k: &Kernel) -> bool {
    k.clif.as_ref().is_some_and(|(f, _)| !f.stock.is_empty())
}

/// Whether `path` names a WebAssembly module (by its extension).
pub fn is_wasm(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "wasm")
}

/// The kernels of the module at `path`, called `name` in reports: every defined function (or
/// the one `function` names) in each of `modes`. An unreadable, malformed or unsupported
/// module is a usage error naming the file and the reason.
pub fn kernels(
    path: &Path,
    name: &str,
    modes: &[BoundsChecks],
    function: Option<&str>,
) -> Result<Vec<Kernel>, CliError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
    // The modes are translated in parallel: a translation is one thread's work for seconds
    // (Wasmtime's own compile and its IR written out), and each mode's is independent. The
    // cache (`SCHEDLAB_CACHE`) keeps each translation for the runs after the first.
    let cache = TranslationCache::from_env();
    let translations: Vec<Result<Translation, CliError>> = modes
        .par_iter()
        .map(|&mode| {
            crate::guard::catch(|| schedlab_wasm::translate_cached(&bytes, mode, &cache))
                .map_err(|panic| format!("Wasmtime's translator {panic}"))
                .and_then(|r| r.map_err(|e| e.to_string()))
                .map_err(|reason| CliError::usage(format!("{name}: {reason}")))
        })
        .collect();
    let mut out = Vec::new();
    for translation in translations {
        out.extend(mode_kernels(name, translation?, function)?);
    }
    Ok(out)
}

/// One kernel per function of one mode's translation.
fn mode_kernels(
    name: &str,
    translation: Translation,
    function: Option<&str>,
) -> Result<Vec<Kernel>, CliError> {
    let mode = translation.mode;
    let file = Arc::new(ClifFile {
        name: format!("{name}:{}", mode.name()),
        targets: isas(mode, OptLevel::None),
        more_targets: Vec::new(),
        stock: isas(mode, OptLevel::Speed),
        foreign_targets: Vec::new(),
        functions: Vec::new(),
        run_lines: Vec::new(),
        from_directory: true,
        interpret_only: false,
        heap_facts: schedlab_passes::bce::heap::HeapFacts {
            min_bound: translation.min_memory_bytes,
        },
    });
    let mut seen: HashMap<String, usize> = HashMap::new();
    for f in &translation.functions {
        *seen.entry(f.display_name()).or_default() += 1;
    }
    let total = translation.functions.len();
    let mut kernels = Vec::new();
    for f in translation.functions {
        let display = f.display_name();
        if let Some(wanted) = function
            && wanted != display
            && wanted != format!("func{}", f.index)
        {
            continue;
        }
        // A name the name section gives twice is told apart by the index.
        let unique = if seen.get(&display).copied().unwrap_or(0) > 1 {
            format!("{display}#{}", f.index)
        } else {
            display
        };
        let (func, load_error, content) = match f.func {
            Ok(func) => {
                let content = ContentKey {
                    body_digest: f.body_digest,
                    mode,
                    heap_facts: if may_trap(&func) {
                        file.heap_facts
                    } else {
                        HeapFacts::default()
                    },
                };
                (func, None, Some(content))
            }
            Err(e) => (Function::new(), Some(e), None),
        };
        kernels.push(Kernel {
            name: format!("{}:{unique}", file.name),
            builtin: None,
            func,
            clif: Some((Arc::clone(&file), kernels.len())),
            load_error,
            content,
        });
    }
    if let Some(wanted) = function
        && kernels.is_empty()
    {
        return Err(CliError::usage(format!(
            "{name}: no defined function is called `{wanted}` ({total} defined; names come \
             from the name section, `func<index>` otherwise)"
        )));
    }
    Ok(kernels)
}

/// Whether `func` has a trap instruction (conditional or not). The heap facts are read only
/// for heap checks, each a branch to a block that ends in a trap, and no stage before the one
/// reading them makes a trap where there was none: without one they cannot change its code.
fn may_trap(func: &Function) -> bool {
    func.layout.blocks().any(|block| {
        func.layout.block_insts(block).any(|inst| {
            matches!(
                func.dfg.insts[inst].opcode(),
                Opcode::Trap | Opcode::Trapz | Opcode::Trapnz
            )
        })
    })
}

/// Every target's ISA with Wasmtime's flags for `mode` at `opt`.
fn isas(
    mode: BoundsChecks,
    opt: OptLevel,
) -> Vec<(
    Target,
    Result<cranelift_codegen::isa::OwnedTargetIsa, String>,
)> {
    Target::ALL
        .iter()
        .map(|&t| (t, schedlab_wasm::isa(t, mode, opt)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_functions_with_a_trap_may_read_the_heap_facts() {
        let function = |body: &str| {
            let text =
                format!("function %f(i64) -> i64 {{\nblock0(v0: i64):\n{body}    return v0\n}}\n");
            cranelift_reader::parse_functions(&text)
                .expect("parses")
                .remove(0)
        };
        assert!(!may_trap(&function("")));
        assert!(may_trap(&function("    trapnz v0, heap_oob\n")));
        assert!(may_trap(&function("    trapz v0, user1\n")));
    }

    #[test]
    fn specs_name_a_file_its_modes_and_a_function() {
        let spec = |s| parse_spec(s).map(|r| r.map_err(|e| e.message));
        assert!(spec("md5").is_none());
        assert!(spec("x.wasmfile").is_none());
        let all = spec("a/x.wasm");
        assert_eq!(
            all,
            Some(Ok(WasmSpec {
                path: "a/x.wasm",
                modes: BoundsChecks::ALL.to_vec(),
                function: None
            }))
        );
        let one = spec("x.wasm:explicit:core::fmt::write");
        assert_eq!(
            one,
            Some(Ok(WasmSpec {
                path: "x.wasm",
                modes: vec![BoundsChecks::Explicit],
                function: Some("core::fmt::write")
            }))
        );
        let bad = spec("x.wasm:fast");
        assert!(
            matches!(&bad, Some(Err(m)) if m.contains("guard, explicit")),
            "{bad:?}"
        );
    }
}
