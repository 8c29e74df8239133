//! Foreign execution: one object with the units and trampolines, one generated C file (the
//! generic `harness/exec_harness.c` plus a table of the trampolines), linked by the cross
//! `gcc` and run under qemu through [`crate::emulate::run_harness_source`].

use super::link::Linked;
use super::{ExecError, RawOutcome, Request};
use crate::emulate::run_harness_source;
use crate::object::ObjectFile;
use crate::target::Target;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_object::{ObjectBuilder, ObjectModule};
use schedlab_kernels::case::Placement;
use std::fmt::Write as _;

/// The fixed part of the generated harness.
const HARNESS_BODY: &str = include_str!("../../harness/exec_harness.c");

/// Runs `requests` under the target's emulator.
pub(crate) fn run(
    target: Target,
    isa: &OwnedTargetIsa,
    linked: &Linked,
    requests: &[Request],
) -> Result<Vec<RawOutcome>, ExecError> {
    let object = build_object(target, isa, linked)?;
    let source = harness_source(linked);
    let mut input = String::new();
    for request in requests {
        input_line(&mut input, request);
    }
    let stdout = run_harness_source(&object, "exec_harness", &source, &input)?;
    let mut lines = stdout.lines();
    Ok(requests
        .iter()
        .map(|request| match lines.next() {
            Some(line) => parse_line(line, request),
            None => RawOutcome::NotRun("the harness stopped before this call".into()),
        })
        .collect())
}

/// Appends the harness's input line for `request` (the protocol is described in
/// `harness/exec_harness.c`).
fn input_line(input: &mut String, request: &Request) {
    let placement = match request.placement {
        Placement::End => 'e',
        Placement::Start => 's',
    };
    let _ = write!(input, "{} {placement} ", request.trampoline);
    push_hex(input, &request.buffer);
    let _ = write!(input, " {}", request.arrays.len());
    for array in &request.arrays {
        let _ = write!(input, " {}:", array.len());
        push_hex(input, array);
    }
    let _ = write!(input, " {}", request.pointers.len());
    for (slot, array) in &request.pointers {
        let _ = write!(input, " {slot}:{array}");
    }
    let _ = write!(input, " {}", request.inner_pointers.len());
    for (container, offset, array) in &request.inner_pointers {
        let _ = write!(input, " {container}.{offset}:{array}");
    }
    input.push('\n');
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(2 * bytes.len());
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
}

fn parse_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// Reads one output line of the harness for `request`; anything unexpected is a
/// [`RawOutcome::NotRun`] naming the line.
fn parse_line(line: &str, request: &Request) -> RawOutcome {
    if let Some(rest) = line.strip_prefix("ok ") {
        let unreadable = || {
            let shown: String = line.chars().take(200).collect();
            RawOutcome::NotRun(format!("unreadable harness output {shown:?}"))
        };
        let mut fields = rest.split(' ');
        let Some(buffer) = fields.next().and_then(parse_hex) else {
            return unreadable();
        };
        if buffer.len() != request.buffer.len() {
            return unreadable();
        }
        let mut arrays = Vec::with_capacity(request.arrays.len());
        for sent in &request.arrays {
            let back = fields.next().and_then(|field| {
                let (len, hex) = field.split_once(':')?;
                let bytes = parse_hex(hex)?;
                (len.parse::<usize>().ok()? == bytes.len() && bytes.len() == sent.len())
                    .then_some(bytes)
            });
            match back {
                Some(bytes) => arrays.push(bytes),
                None => return unreadable(),
            }
        }
        if fields.next().is_some() {
            return unreadable();
        }
        RawOutcome::Returned { buffer, arrays }
    } else if let Some(signal) = line.strip_prefix("trap ") {
        RawOutcome::Trapped(signal.trim().to_string())
    } else {
        RawOutcome::NotRun(format!("harness: {line}"))
    }
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
    ObjectFile::emit(module, target, "schedlab_exec".to_string()).map_err(host_err)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn request(buffer: usize, arrays: &[usize]) -> Request {
        Request {
            trampoline: 2,
            buffer: vec![0; buffer],
            arrays: arrays.iter().map(|&n| vec![0xab; n]).collect(),
            pointers: arrays.iter().enumerate().map(|(j, _)| (j, j)).collect(),
            inner_pointers: vec![],
            placement: Placement::Start,
        }
    }

    #[test]
    fn input_lines_follow_the_protocol() {
        let mut r = request(2, &[3, 0]);
        r.pointers.push((1, 0));
        r.inner_pointers.push((0, 8, 1));
        let mut line = String::new();
        input_line(&mut line, &r);
        assert_eq!(line, "2 s 0000 2 3:ababab 0: 3 0:0 1:1 1:0 1 0.8:1\n");
    }

    #[test]
    fn output_lines_are_checked() {
        let r = request(2, &[]);
        assert!(matches!(parse_line("ok 0102", &r),
            RawOutcome::Returned { buffer, arrays } if buffer == [1, 2] && arrays.is_empty()));
        assert!(matches!(parse_line("ok 01", &r), RawOutcome::NotRun(_)));
        assert!(matches!(
            parse_line("ok 0102 1:00", &r),
            RawOutcome::NotRun(_)
        ));
        assert!(matches!(parse_line("trap SIGILL", &r), RawOutcome::Trapped(s) if s == "SIGILL"));
        assert!(matches!(
            parse_line("bad no such trampoline", &r),
            RawOutcome::NotRun(_)
        ));
    }

    #[test]
    fn arrays_in_output_lines_must_have_their_sizes() {
        let r = request(1, &[2, 0]);
        assert!(matches!(parse_line("ok 00 2:0102 0:", &r),
            RawOutcome::Returned { arrays, .. } if arrays == [vec![1, 2], vec![]]));
        for bad in [
            "ok 00 2:01 0:",
            "ok 00 3:010203 0:",
            "ok 00 2:0102",
            "ok 00 2:0102 0: 1:00",
            "ok 00 2:01zz 0:",
            "ok 00 x:0102 0:",
        ] {
            assert!(
                matches!(parse_line(bad, &r), RawOutcome::NotRun(_)),
                "{bad}"
            );
        }
    }

    /// The C side refuses malformed lines one by one (a `bad` line each) and keeps going.
    #[test]
    fn the_harness_answers_malformed_lines_with_bad_and_goes_on() {
        use crate::emulate::toolchain_status;
        use crate::exec::{Call, Unit, isa::isa_with_flags, link::compile_units};
        use cranelift_codegen::data_value::DataValue;
        let target = Target::Aarch64;
        if !crate::tools::test_can_use(toolchain_status(target)) {
            return;
        }
        let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
        let isa = isa_with_flags(target, &flags, None).expect("isa");
        let functions = cranelift_reader::parse_functions(
            "function %id(i64) -> i64 {\nblock0(v0: i64):\n    return v0\n}",
        )
        .expect("parses");
        let units = [Unit {
            label: "id".into(),
            functions,
        }];
        let calls = [Call::scalars(0, 0, &[DataValue::I64(5)])];
        let linked = compile_units(target, &isa, &units, &calls);
        let object = build_object(target, &isa, &linked).expect("object");
        let two_slots = format!("05{}", "00".repeat(31));
        let malformed = [
            "garbage".to_string(),
            "0".to_string(),
            "7 e 00 0 0".to_string(),
            "0 x 00 0 0".to_string(),
            "0 e 0 0 0".to_string(),
            "0 e 00 99 0".to_string(),
            "0 e 00 1 4:0102 0 0".to_string(),
            "0 e 00 1 2:01".to_string(),
            "0 e 00 1 99999999999999999999999:00 0 0".to_string(),
            "0 e 00 1 2:0102 1 0:3 0".to_string(),
            format!("0 e {two_slots} 1 2:0102 1 2:0 0"),
            format!("0 e {two_slots} 0 0"),
            format!("0 e {two_slots} 0 0 0 trailing"),
            format!("0 e {two_slots} 1 8:0000000000000000 0 1 0.4:0"),
            format!("0 e {two_slots} 1 8:0000000000000000 0 1 0.0:1"),
        ];
        let mut input = malformed.join("\n");
        input.push_str(&format!("\n0 s {two_slots} 1 3:aabbcc 0 0\n"));
        let output = run_harness_source(&object, "exec_harness", &harness_source(&linked), &input)
            .expect("the harness runs to the end");
        let lines: Vec<&str> = output.lines().collect();
        assert_eq!(lines.len(), malformed.len() + 1, "{output}");
        for (line, sent) in lines.iter().zip(&malformed) {
            assert!(line.starts_with("bad "), "{sent:?} gave {line:?}");
        }
        // `id` copies its argument slot into its result slot; the array comes back untouched.
        let five = format!("05{}", "00".repeat(15));
        assert_eq!(
            lines.last().copied(),
            Some(format!("ok {five}{five} 3:aabbcc").as_str())
        );
    }
}
