//! Resolving `--kernel` to Cranelift functions: a built-in name or a `.clif` file.

use crate::CliError;
use cranelift_codegen::ir::Function;
use std::path::Path;

/// The built-in kernels, by name.
pub const BUILTIN: &[&str] = &["md5", "md5-mb", "muladd", "square-to-len"];

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
        path if path.ends_with(".clif") || Path::new(path).is_file() => parse_clif_file(path),
        other => Err(CliError::usage(format!(
            "unknown kernel `{other}`; valid kernels: {}, or a path to a .clif file",
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

fn parse_clif_file(path: &str) -> Result<Vec<Kernel>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("cannot read {path}: {e}")))?;
    let funcs = cranelift_reader::parse_functions(&text)
        .map_err(|e| CliError::usage(format!("{path}:{e}")))?;
    if funcs.is_empty() {
        return Err(CliError::usage(format!("{path}: no functions found")));
    }
    Ok(funcs
        .into_iter()
        .map(|func| Kernel {
            name: format!("{}:{}", file_name(path), func.name),
            kind: KernelKind::Clif,
            func,
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
}
