//! Resolving `--kernel` to Cranelift functions: a built-in name or a `.clif` file.

use crate::CliError;
use cranelift_codegen::ir::Function;
use std::path::Path;

/// The built-in kernels, by name.
pub const BUILTIN: &[&str] = &["md5"];

/// One kernel to run through the pipeline.
pub struct Kernel {
    /// Display name (built-in name, or `file.clif:function`).
    pub name: String,
    /// The function as built (before any pass).
    pub func: Function,
}

/// Resolves a `--kernel` argument: a built-in name or a path to a `.clif` file (every function
/// in it becomes one kernel).
pub fn resolve(spec: &str) -> Result<Vec<Kernel>, CliError> {
    match spec {
        "md5" => Ok(vec![Kernel {
            name: "md5".into(),
            func: schedlab_kernels::md5::compress_multi_block(),
        }]),
        path if path.ends_with(".clif") || Path::new(path).exists() => parse_clif_file(path),
        other => Err(CliError::usage(format!(
            "unknown kernel `{other}`; valid kernels: {}, or a path to a .clif file",
            BUILTIN.join(", ")
        ))),
    }
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
