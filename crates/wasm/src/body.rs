//! What makes two translated functions the same IR, whatever module they come from.
//!
//! Programs built by one toolchain share many functions (a language's standard library, the
//! allocator, formatting), and a module's functions in Wasmtime's translation differ from
//! such a twin elsewhere only in what names things within the module: the function's own
//! index, the indices of the functions it calls, and the source locations (byte offsets in
//! the module). None of these reaches code generation's choices: a call's target is a
//! relocation, a source location annotates an instruction. [`body_digest`] hashes the IR
//! text with them left out.

use sha2::{Digest, Sha256};

/// The namespace of a module's own functions in Wasmtime's IR (`u0:<index>`); Wasmtime's
/// builtins have a namespace of their own and are kept.
const MODULE_FUNCTION: &str = "u0:";

/// SHA-256 of `text` (one function's IR as Wasmtime writes it) without its comment lines,
/// leading source locations (`@0a3f`) and the indices of the module's functions
/// (`u0:<index>` becomes `u0:`).
pub fn body_digest(text: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    let mut line_out = String::new();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with(';') {
            continue;
        }
        line_out.clear();
        without_function_indices(without_source_location(line), &mut line_out);
        hasher.update(line_out.as_bytes());
        hasher.update(b"\n");
    }
    hasher.finalize().into()
}

/// `line` without a leading `@<hex>` source location and the blanks after it.
fn without_source_location(line: &str) -> &str {
    match line.strip_prefix('@') {
        Some(rest) => rest
            .trim_start_matches(|c: char| c.is_ascii_hexdigit())
            .trim_start(),
        None => line,
    }
}

/// Appends `line` to `out` with the digits after each `u0:` that starts a name left out.
fn without_function_indices(line: &str, out: &mut String) {
    let mut rest = line;
    while let Some(at) = rest.find(MODULE_FUNCTION) {
        let starts_name = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
        let end = at + MODULE_FUNCTION.len();
        out.push_str(&rest[..end]);
        rest = &rest[end..];
        if starts_name {
            rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        }
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALLER: &str = ";; Intermediate Representation of function <wasm[0]--function[7]>:
function u0:7(i64 vmctx, i64) tail {
    fn0 = colocated u0:12 sig0
    fn1 = colocated u805306368:1 sig1

                                block0(v0: i64, v1: i64):
@03f8                               v2 = iconst.i32 5
@03fa                               return
}
";

    #[test]
    fn names_and_locations_do_not_count() {
        let elsewhere = CALLER
            .replace("function[7]", "function[40]")
            .replace("u0:7(", "u0:40(")
            .replace("u0:12 ", "u0:3 ")
            .replace("@03f8", "@1a00")
            .replace("@03fa", "@1a02");
        assert_eq!(body_digest(CALLER), body_digest(&elsewhere));
    }

    #[test]
    fn code_and_builtins_count() {
        for changed in [
            CALLER.replace("iconst.i32 5", "iconst.i32 6"),
            CALLER.replace("u805306368:1", "u805306368:2"),
            CALLER.replace("(i64 vmctx, i64)", "(i64 vmctx, i32)"),
        ] {
            assert_ne!(changed, CALLER);
            assert_ne!(body_digest(CALLER), body_digest(&changed), "{changed}");
        }
    }

    #[test]
    fn only_whole_names_lose_their_digits() {
        let mut out = String::new();
        without_function_indices("v1 = call fn0(v0) ; xu0:5 u0:12 u0:", &mut out);
        assert_eq!(out, "v1 = call fn0(v0) ; xu0:5 u0: u0:");
    }
}
