//! Resolving `--kernel` to Cranelift functions: a built-in name or a `.clif` file.

use crate::CliError;
use crate::clif::ClifFile;
use cranelift_codegen::ir::Function;
use std::path::Path;
use std::sync::Arc;

/// The built-in kernels, by name.
pub const BUILTIN: &[&str] = &["md5", "md5-mb", "muladd", "square-to-len"];

/// The built-in kernels with one line each, for `schedlab list` (names as `--kernel` takes
/// them).
pub fn list() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "md5",
            "MD5's multi-block compression loop (Java semantics: every message read \
             bounds-checked)",
        ),
        (
            "md5-mb",
            "multi-buffer MD5: 4 and 8 messages in SIMD lanes (md5-mb-x4, md5-mb-x8 alone)",
        ),
        ("muladd", "BigInteger.implMulAdd with its wrapper's checks"),
        (
            "square-to-len",
            "BigInteger.implSquareToLen with its wrapper's checks",
        ),
    ]
}

/// What a kernel computes, which decides how `check` runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// MD5's multi-block compression.
    Md5,
    /// `BigInteger.implMulAdd` with its wrapper's checks.
    MulAdd,
    /// `BigInteger.implSquareToLen` with its wrapper's checks.
    SquareToLen,
    /// Multi-buffer MD5 (`md5-mb`), 4 or 8 lanes.
    Md5Mb,
    /// A function read from a `.clif` file: reported, not executed.
    Clif,
}

/// One kernel to run through the pipeline.
#[derive(Clone)]
pub struct Kernel {
    /// Display name (built-in name, or `file.clif:function`).
    pub name: String,
    /// What it computes.
    pub kind: KernelKind,
    /// The function as built (before any pass).
    pub func: Function,
    /// For a `.clif` kernel: its file (targets, ISA flags, run lines) and function index.
    pub clif: Option<(Arc<ClifFile>, usize)>,
}

impl Kernel {
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
    use schedlab_kernels::bigint;
    let builtin = |name: &str, kind, func| {
        Ok(vec![Kernel {
            name: name.to_string(),
            kind,
            func,
            clif: None,
        }])
    };
    match spec {
        "md5" => builtin(
            "md5",
            KernelKind::Md5,
            schedlab_kernels::md5::compress_multi_block(),
        ),
        "md5-mb" => Ok(crate::check_mb::kernels(&[1, 2])),
        "md5-mb-x4" => Ok(crate::check_mb::kernels(&[1])),
        "md5-mb-x8" => Ok(crate::check_mb::kernels(&[2])),
        "muladd" | "mul-add" => builtin("muladd", KernelKind::MulAdd, bigint::mul_add()),
        "square-to-len" | "squaretolen" => builtin(
            "square-to-len",
            KernelKind::SquareToLen,
            bigint::square_to_len(),
        ),
        pattern if pattern.contains(['*', '?']) => {
            let mut kernels = Vec::new();
            for file in crate::clif::files_matching(pattern)? {
                kernels.extend(clif_kernels(&file, file.display().to_string(), true)?);
            }
            Ok(kernels)
        }
        path if Path::new(path).is_dir() => {
            let mut kernels = Vec::new();
            for file in crate::clif::files_below(Path::new(path))? {
                let name = file
                    .strip_prefix(path)
                    .map_or_else(|_| file.display().to_string(), |p| p.display().to_string());
                kernels.extend(clif_kernels(&file, name, true)?);
            }
            Ok(kernels)
        }
        path if path.ends_with(".clif") || Path::new(path).is_file() => {
            clif_kernels(Path::new(path), file_name(path), false)
        }
        other => Err(CliError::usage(format!(
            "unknown kernel `{other}`; valid kernels: {}, a path to a .clif file, a \
             directory of .clif files, or a pattern like `dir/*.clif`",
            BUILTIN.join(", ")
        ))),
    }
}

/// Resolves a comma-separated list of kernels.
pub fn resolve_list(spec: &str) -> Result<Vec<Kernel>, CliError> {
    let mut kernels = Vec::new();
    for part in split_list(spec) {
        kernels.extend(resolve(part)?);
    }
    Ok(kernels)
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
            kind: KernelKind::Clif,
            func: func.clone(),
            clif: Some((Arc::clone(&file), i)),
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

/// Resolves `--strategy` (a list, or `all`) against the registry.
pub fn strategies(spec: Option<&str>) -> Result<Vec<String>, CliError> {
    let valid = schedlab_passes::sched::strategy_names();
    let Some(spec) = spec.filter(|s| *s != "all") else {
        return Ok(valid.iter().map(|s| s.to_string()).collect());
    };
    split_list(spec)
        .map(|name| {
            if valid.contains(&name) {
                Ok(name.to_string())
            } else {
                Err(CliError::usage(format!(
                    "unknown strategy `{name}`; valid strategies: {}",
                    valid.join(", ")
                )))
            }
        })
        .collect()
}

/// Resolves `--target` (a list, or `all`).
pub fn targets(spec: Option<&str>) -> Result<Vec<schedlab_backend::Target>, CliError> {
    let Some(spec) = spec.filter(|s| *s != "all") else {
        return Ok(schedlab_backend::Target::ALL.to_vec());
    };
    split_list(spec)
        .map(|name| name.parse().map_err(|e| CliError::usage(format!("{e}"))))
        .collect()
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
