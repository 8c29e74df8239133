//! Foreign execution: one object with the units and trampolines, one generated C file (the
//! generic `harness/exec_harness.c` plus a table of the trampolines), linked by the cross
//! `gcc` and run under qemu through [`crate::emulate::run_harness_source`].

use super::link::Linked;
use super::{ExecError, RawOutcome};
use crate::emulate::run_harness_source;
use crate::object::ObjectFile;
use crate::target::Target;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_object::{ObjectBuilder, ObjectModule};
use std::fmt::Write as _;

/// The fixed part of the generated harness.
const HARNESS_BODY: &str = include_str!("../../harness/exec_harness.c");

/// Runs `requests` (trampoline number, argument buffer) under the target's emulator.
pub(crate) fn run(
    target: Target,
    isa: &OwnedTargetIsa,
    linked: &Linked,
    requests: &[(usize, Vec<u8>)],
) -> Result<Vec<RawOutcome>, ExecError> {
    let object = build_object(target, isa, linked)?;
    let source = harness_source(linked);
    let mut input = String::new();
    for (t, buf) in requests {
        let _ = write!(input, "{t} ");
        for b in buf {
            let _ = write!(input, "{b:02x}");
        }
        input.push('\n');
    }
    let stdout = run_harness_source(&object, "exec_harness", &source, &input)?;
    let mut lines = stdout.lines();
    Ok(requests
        .iter()
        .map(|(_, buf)| match lines.next() {
            Some(line) => parse_line(line, buf.len()),
            None => RawOutcome::NotRun("the harness stopped before this call".into()),
        })
        .collect())
}

fn build_object(
    target: Target,
    isa: &OwnedTargetIsa,
    linked: &Linked,
) -> Result<ObjectFile, ExecError> {
    let host_err = |e: String| ExecError::Host(format!("object for {target}: {e}"));
    let builder = ObjectBuilder::new(
        isa.clone(),
        "schedlab_exec.o",
        cranelift_module::default_libcall_names(),
    )
    .map_err(|e| host_err(e.to_string()))?;
    let mut module = ObjectModule::new(builder);
    linked.define_in(&mut module).map_err(host_err)?;
    let bytes = module
        .finish()
        .emit()
        .map_err(|e| host_err(e.to_string()))?;
    Ok(ObjectFile {
        target,
        symbol: "schedlab_exec".to_string(),
        bytes,
    })
}

/// The generic harness with the table of trampolines appended.
fn harness_source(linked: &Linked) -> String {
    let mut s = String::from(HARNESS_BODY);
    let symbols: Vec<&str> = linked
        .trampolines
        .iter()
        .map(|&k| linked.functions[k].symbol.as_str())
        .collect();
    for sym in &symbols {
        let _ = writeln!(s, "extern void {sym}(unsigned char *);");
    }
    s.push_str("static void (*const TRAMPOLINES[])(unsigned char *) = {\n");
    for sym in &symbols {
        let _ = writeln!(s, "    {sym},");
    }
    if symbols.is_empty() {
        s.push_str("    0,\n");
    }
    s.push_str("};\n");
    let _ = writeln!(
        s,
        "int main(void) {{ return run_calls(TRAMPOLINES, {}); }}",
        symbols.len()
    );
    s
}

fn parse_line(line: &str, len: usize) -> RawOutcome {
    if let Some(hex) = line.strip_prefix("ok ") {
        let bytes: Option<Vec<u8>> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
            .collect();
        match bytes {
            Some(b) if b.len() == len => RawOutcome::Returned(b),
            _ => RawOutcome::NotRun(format!("unreadable harness output {line:?}")),
        }
    } else if let Some(signal) = line.strip_prefix("trap ") {
        RawOutcome::Trapped(signal.trim().to_string())
    } else {
        RawOutcome::NotRun(format!("harness: {line}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_lines_are_checked() {
        assert!(matches!(parse_line("ok 0102", 2), RawOutcome::Returned(b) if b == [1, 2]));
        assert!(matches!(parse_line("ok 01", 2), RawOutcome::NotRun(_)));
        assert!(matches!(parse_line("trap SIGILL", 2), RawOutcome::Trapped(s) if s == "SIGILL"));
        assert!(matches!(
            parse_line("bad trampoline 9", 2),
            RawOutcome::NotRun(_)
        ));
    }
}
