//! Resolving `--kernel` to Cranelift functions: a built-in name, a `.clif` file or a `.wasm`
//! module ([`crate::wasm_source`]).

use crate::CliError;
use crate::clif::ClifFile;
use cranelift_codegen::ir::Function;
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;

use schedlab_kernels::registry::{self, Kernel as Registered};

/// Every kernel `--kernel` takes by name (the registry's, built-in and registered), with its
/// one-line summary, for `schedlab list`.
pub fn list() -> Vec<(&'static str, &'static str)> {
    registry::all()
        .into_iter()
        .map(|k| (k.name(), k.summary()))
        .collect()
}

/// One kernel to run through the pipeline.
#[derive(Clone)]
pub struct Kernel {
    /// Display name (built-in name, or `file.clif:function`).
    pub name: String,
    /// The registry entry of a built-in kernel (its cases and reference model).
    pub builtin: Option<&'static dyn Registered>,
    /// The function as built (before any pass).
    pub func: Function,
    /// For a `.clif` kernel: its file (targets, ISA flags, run lines) and function index.
    pub clif: Option<(Arc<ClifFile>, usize)>,
    /// Why the function could not be read (a `.wasm` function whose IR text did not parse):
    /// every row of the kernel is then an error row with this reason.
    pub load_error: Option<String>,
    /// Everything its rows depend on besides the strategy and the target, where the source
    /// can tell (a `.wasm` function's): kernels with equal keys get the same rows but for
    /// their names.
    pub content: Option<ContentKey>,
}

/// A `.wasm` function's IR digest ([`schedlab_wasm::WasmFunction::body_digest`]) with its
/// module's bounds-check mode (the translation and the ISA flags) and heap facts (what
/// bounds-check elimination may assume).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ContentKey {
    /// The digest of the IR without the module's names.
    pub body_digest: [u8; 32],
    /// The bounds-check mode it was translated in.
    pub mode: schedlab_wasm::BoundsChecks,
    /// Its module's heap facts.
    pub heap_facts: schedlab_passes::bce::heap::HeapFacts,
}

impl Kernel {
    /// A built-in kernel from the registry.
    pub fn builtin(entry: &'static dyn Registered) -> Self {
        Self {
            name: entry.name().to_string(),
            builtin: Some(entry),
            func: entry.build(),
            clif: None,
            load_error: None,
            content: None,
        }
    }

    /// Why `target` cannot compile this kernel, if it cannot: a SIMD kernel on riscv64.
    pub fn unsupported(&self, target: schedlab_backend::Target) -> Option<String> {
        let simd = self.builtin.is_some_and(|k| k.needs_simd());
        (simd && target == schedlab_backend::Target::Riscv64).then(|| {
            format!(
                "{} needs SIMD: schedlab's riscv64 target is RV64GC, and Cranelift lowers i32x4 \
                 only with the V extension (not enabled for this target); unsupported",
                self.name
            )
        })
    }

    /// The targets this kernel is compiled for: `requested`, intersected with a `.clif`
    /// file's `target` lines (an empty intersection is a usage error naming them).
    pub fn targets(
        &self,
        requested: &[schedlab_backend::Target],
    ) -> Result<Vec<schedlab_backend::Target>, CliError> {
        match &self.clif {
            Some((file, 0)) => file.select_targets(requested),
            Some((file, _)) => Ok(file
                .targets
                .iter()
                .map(|(t, _)| *t)
                .filter(|t| requested.contains(t))
                .collect()),
            None => Ok(requested.to_vec()),
        }
    }
}

/// Resolves a `--kernel` argument: a built-in name or a path to a `.clif` file (every function
/// in it becomes one kernel).
pub fn resolve(spec: &str) -> Result<Vec<Kernel>, CliError> {
    let builtins = registry::select(spec);
    if !builtins.is_empty() {
        return Ok(builtins.into_iter().map(Kernel::builtin).collect());
    }
    if let Some(wasm) = crate::wasm_source::parse_spec(spec).filter(|_| !spec.contains(['*', '?']))
    {
        let wasm = wasm?;
        let name = file_name(wasm.path);
        return crate::wasm_source::kernels(
            Path::new(wasm.path),
            &name,
            &wasm.modes,
            wasm.function,
        );
    }
    match spec {
        pattern if pattern.contains(['*', '?']) => {
            let files = crate::clif::files_matching(pattern)?;
            files_kernels(&files, |file| file.display().to_string())
        }
        path if Path::new(path).is_dir() => {
            let files = crate::clif::files_below(Path::new(path))?;
            files_kernels(&files, |file| {
                file.strip_prefix(path)
                    .map_or_else(|_| file.display().to_string(), |p| p.display().to_string())
            })
        }
        path if path.ends_with(".clif") || Path::new(path).is_file() => {
            clif_kernels(Path::new(path), file_name(path), false)
        }
        other => Err(CliError::usage(format!(
            "unknown kernel `{other}`; valid kernels: {}, a path to a .clif file or a .wasm \
             module (`FILE.wasm[:guard|explicit[:FUNCTION]]`), a directory of them, or a \
             pattern like `dir/*.clif`",
            registry::names().join(", ")
        ))),
    }
}

/// Resolves a comma-separated list of kernels; `file.clif:%f` (or `file.clif:f`) picks one
/// function of a file. Each kernel appears once, in the order given.
pub fn resolve_list(spec: &str) -> Result<Vec<Kernel>, CliError> {
    let mut kernels: Vec<Kernel> = Vec::new();
    for part in split_list(spec) {
        let found = match one_function(part) {
            Some((file, function)) => pick_function(resolve(file)?, file, function)?,
            None => resolve(part)?,
        };
        for k in found {
            if !kernels.iter().any(|seen| seen.name == k.name) {
                kernels.push(k);
            }
        }
    }
    if kernels.is_empty() {
        return Err(CliError::usage(format!(
            "--kernel `{spec}` names no kernel; valid kernels: {}, or .clif files",
            registry::names().join(", ")
        )));
    }
    Ok(kernels)
}

/// Splits `file.clif:function` when `file.clif` is an existing file and `function` is not
/// empty. A `.wasm` module's `:mode[:function]` suffix is the module source's own syntax.
fn one_function(part: &str) -> Option<(&str, &str)> {
    let (file, function) = part.rsplit_once(':')?;
    let path = Path::new(file);
    (!function.is_empty() && path.is_file() && !crate::wasm_source::is_wasm(path))
        .then_some((file, function))
}

/// The kernel of `file` whose function is `function` (with or without its `%`).
fn pick_function(
    kernels: Vec<Kernel>,
    file: &str,
    function: &str,
) -> Result<Vec<Kernel>, CliError> {
    let wanted = function.trim_start_matches('%');
    let names: Vec<String> = kernels.iter().map(|k| k.func.name.to_string()).collect();
    let picked: Vec<Kernel> = kernels
        .into_iter()
        .filter(|k| k.func.name.to_string().trim_start_matches('%') == wanted)
        .collect();
    if picked.is_empty() {
        return Err(CliError::usage(format!(
            "{file} defines no function %{wanted}; it defines {}",
            names.join(", ")
        )));
    }
    Ok(picked)
}

/// The kernels of every file of `files`, in their order, each called as `name` says. The files
/// are read in parallel (a `.wasm` module's translation takes seconds); the first file in
/// order that cannot be read is the error.
fn files_kernels(
    files: &[std::path::PathBuf],
    name: impl Fn(&Path) -> String + Sync,
) -> Result<Vec<Kernel>, CliError> {
    let per_file: Vec<Result<Vec<Kernel>, CliError>> = files
        .par_iter()
        .map(|file| file_kernels(file, name(file), true))
        .collect();
    let mut kernels = Vec::new();
    for found in per_file {
        kernels.extend(found?);
    }
    Ok(kernels)
}

/// One kernel per function of a `.clif` file, or per function and bounds-check mode of a
/// `.wasm` module.
fn file_kernels(path: &Path, name: String, from_directory: bool) -> Result<Vec<Kernel>, CliError> {
    if crate::wasm_source::is_wasm(path) {
        crate::wasm_source::kernels(path, &name, &schedlab_wasm::BoundsChecks::ALL, None)
    } else {
        clif_kernels(path, name, from_directory)
    }
}

/// One kernel per function of a `.clif` file.
fn clif_kernels(path: &Path, name: String, from_directory: bool) -> Result<Vec<Kernel>, CliError> {
    let file = Arc::new(crate::clif::load(path, name, from_directory)?);
    Ok(file
        .functions
        .iter()
        .enumerate()
        .map(|(i, func)| Kernel {
            name: format!("{}:{}", file.name, func.name),
            builtin: None,
            func: func.clone(),
            clif: Some((Arc::clone(&file), i)),
            load_error: None,
            content: None,
        })
        .collect())
}

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// Splits a comma-separated command-line list, dropping empty items.
pub fn split_list(spec: &str) -> impl Iterator<Item = &str> {
    spec.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// Resolves `--strategy` (a list, or `all`) against the registry: each name once, in the
/// order given; an empty list is a usage error.
pub fn strategies(spec: Option<&str>) -> Result<Vec<String>, CliError> {
    let valid = schedlab_passes::sched::strategy_names();
    let Some(spec) = spec.filter(|s| *s != "all") else {
        return Ok(valid.iter().map(|s| s.to_string()).collect());
    };
    let mut chosen: Vec<String> = Vec::new();
    for name in split_list(spec) {
        if !valid.contains(&name) {
            return Err(CliError::usage(format!(
                "unknown strategy `{name}`; valid strategies: {}",
                valid.join(", ")
            )));
        }
        if !chosen.iter().any(|c| c == name) {
            chosen.push(name.to_string());
        }
    }
    if chosen.is_empty() {
        return Err(CliError::usage(format!(
            "--strategy names no strategy; valid strategies: all, {}",
            valid.join(", ")
        )));
    }
    Ok(chosen)
}

/// Resolves `--target` (a list, or `all`): each target once, in the order given; an empty
/// list is a usage error.
pub fn targets(spec: Option<&str>) -> Result<Vec<schedlab_backend::Target>, CliError> {
    let Some(spec) = spec.filter(|s| *s != "all") else {
        return Ok(schedlab_backend::Target::ALL.to_vec());
    };
    let mut chosen: Vec<schedlab_backend::Target> = Vec::new();
    for name in split_list(spec) {
        let target = name.parse().map_err(|e| CliError::usage(format!("{e}")))?;
        if !chosen.contains(&target) {
            chosen.push(target);
        }
    }
    if chosen.is_empty() {
        let names: Vec<&str> = schedlab_backend::Target::ALL
            .iter()
            .map(|t| t.name())
            .collect();
        return Err(CliError::usage(format!(
            "--target names no target; valid targets: all, {}",
            names.join(", ")
        )));
    }
    Ok(chosen)
}

/// `--slow-path` of `report` and `dump`: where the checked slow path of a predicated loop goes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowPathMode {
    /// In the same function, after the check-free loop.
    Eager,
    /// Outlined to a call, as the `Md5` library's JIT compiles it.
    Lazy,
}

impl SlowPathMode {
    /// The pipeline's stage options for a report or dump of `target`.
    pub fn stage_options(
        self,
        target: schedlab_backend::Target,
    ) -> schedlab_backend::pipeline::StageOptions {
        match self {
            SlowPathMode::Eager => schedlab_backend::pipeline::StageOptions::REPORT,
            SlowPathMode::Lazy => schedlab_backend::pipeline::StageOptions::report_lazy(target),
        }
    }

    /// [`SlowPathMode::stage_options`] compiling with the ISA features `isa` names.
    pub fn stage_options_isa(
        self,
        target: schedlab_backend::Target,
        isa: IsaMode,
    ) -> schedlab_backend::pipeline::StageOptions {
        schedlab_backend::pipeline::StageOptions {
            isa: isa.choice(),
            ..self.stage_options(target)
        }
    }
}

/// `--isa`: the CPU features code generation uses.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IsaMode {
    /// A named level, the same on every machine (x86_64: `x86-64-v3`).
    #[default]
    Level,
    /// The host's detected features on the host target (the JIT's code).
    Native,
}

impl IsaMode {
    /// The backend's name for it.
    pub fn choice(self) -> schedlab_backend::IsaChoice {
        match self {
            IsaMode::Level => schedlab_backend::IsaChoice::Level,
            IsaMode::Native => schedlab_backend::IsaChoice::Native,
        }
    }
}
