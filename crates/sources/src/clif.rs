//! `.clif` files as kernels: parsed with cranelift-reader's test-file API so the file's `set`
//! and `target` lines decide where and how each function is compiled, and its run lines
//! (`; run: %f(args) == expected`, `!=`, the bare `; run: %f(args)` meaning "non-zero", and
//! schedlab's `; trap: %f(args)`) become calls with expectations. As in Cranelift's own runner,
//! a run line calls the function it follows, whatever name it writes.

use crate::CliError;
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{Function, Signature};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_reader::{Comparison, IsaSpec, ParseOptions, RunCommand};
use schedlab_backend::Target;
use schedlab_backend::exec::{self, MAX_RESULTS};
use std::path::{Path, PathBuf};

/// A parsed `.clif` file.
pub struct ClifFile {
    /// The name in reports (the path as given, or relative to the directory given).
    pub name: String,
    /// The targets the file is compiled for (its `target` lines, or all four), each with the
    /// ISA built from the file's flags (or why it could not be built).
    pub targets: Vec<(Target, Result<OwnedTargetIsa, String>)>,
    /// The ISAs of further `target` lines for an architecture already in [`ClifFile::targets`]
    /// (e.g. `target x86_64 has_avx512vnni` after `target x86_64 has_avx_vnni`), in file
    /// order: the host runs the first of all its lines that it can ([`ClifFile::isa_to_run`]).
    pub more_targets: Vec<(Target, Result<OwnedTargetIsa, String>)>,
    /// The ISAs the stock-Cranelift baseline compiles with, where the source has its own
    /// (a `.wasm` module's: Wasmtime's flags at `opt_level=speed`); empty for `.clif` files.
    pub stock: Vec<(Target, Result<OwnedTargetIsa, String>)>,
    /// `target` lines naming an architecture schedlab does not compile for.
    pub foreign_targets: Vec<String>,
    /// The functions, in file order.
    pub functions: Vec<Function>,
    /// The run lines, in file order.
    pub run_lines: Vec<RunLine>,
    /// The file's `test` lines are all `test interpret`: `check` runs it under Cranelift's
    /// interpreter (before and after each strategy), as Cranelift's runner does, instead of
    /// compiling it.
    pub interpret_only: bool,
    /// Found in a directory given as `--kernel` (rather than named): a file whose targets miss
    /// `--target` is then left out with a note instead of being a usage error.
    pub from_directory: bool,
    /// What the source guarantees about heap bounds (a `.wasm` module's memory minimum).
    pub heap_facts: schedlab_passes::bce::heap::HeapFacts,
}

/// One `; run:` / `; print:` / `; trap:` comment.
pub struct RunLine {
    /// 1-based line number in the file.
    pub line: usize,
    /// The comment's text.
    pub text: String,
    /// What to run, or why the line cannot be run.
    pub spec: Result<RunSpec, String>,
}

/// A run line schedlab can execute.
pub struct RunSpec {
    /// Index of the called function.
    pub function: usize,
    /// Its arguments.
    pub args: Vec<DataValue>,
    /// What the file expects.
    pub expect: Expect,
}

/// What a run line expects.
#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    /// `==`: the results, bit for bit.
    Equal(Vec<DataValue>),
    /// `!=` (and the bare form, `!= 0`).
    NotEqual(Vec<DataValue>),
    /// `; trap: %f(args)`: the call must trap.
    Trap,
    /// `; print:`: no expectation (counted as skipped).
    Print,
}

impl ClifFile {
    /// Runs Cranelift's verifier on every function as written, with the file's flags: a
    /// function that does not verify makes the whole file bad input (exit 2, reported once),
    /// not one failed row per strategy and target.
    fn verify(&self) -> Result<(), CliError> {
        let Some(isa) = self.targets.iter().find_map(|(_, isa)| isa.as_ref().ok()) else {
            return Ok(());
        };
        for func in &self.functions {
            cranelift_codegen::verify_function(func, isa.as_ref()).map_err(|errors| {
                CliError::usage(format!(
                    "{}:{}: the function does not verify: {}",
                    self.name,
                    func.name,
                    errors.to_string().trim_end()
                ))
            })?;
        }
        Ok(())
    }

    /// The file's ISA for `target`, if the file is compiled for it.
    pub fn isa(&self, target: Target) -> Option<&Result<OwnedTargetIsa, String>> {
        self.targets
            .iter()
            .find(|(t, _)| *t == target)
            .map(|(_, isa)| isa)
    }

    /// The ISA `check` runs the file's code with on `target`, or why none.
    ///
    /// Everywhere but on the host, the file's ISA ([`ClifFile::isa`]), unless it needs flags the
    /// emulator does not implement (then the reason). On the host, as in
    /// Cranelift's runner (`test_run.rs`, which skips a `target` line whose ISA flags the host
    /// lacks): the first of the file's lines for this architecture whose flags the host has; when
    /// every line asks for a flag the host lacks, the reason, naming those flags.
    pub fn isa_to_run(&self, target: Target) -> Option<Result<OwnedTargetIsa, String>> {
        let first = self.isa(target)?;
        let built = |isa: &Result<OwnedTargetIsa, String>| {
            isa.clone()
                .map_err(|e| format!("cannot build the {target} ISA from the file's flags: {e}"))
        };
        if !target.is_host() {
            let lacking = match first {
                Ok(isa) => exec::isa::flags_the_emulator_lacks(isa.as_ref()),
                Err(_) => Vec::new(),
            };
            if lacking.is_empty() {
                return Some(built(first));
            }
            return Some(Err(format!(
                "the file's `target {target}` line needs ISA flags qemu-user 7.2 does not \
                 emulate ({})",
                lacking.join(", ")
            )));
        }
        let lines = std::iter::once(first).chain(
            self.more_targets
                .iter()
                .filter(|(t, _)| *t == target)
                .map(|(_, isa)| isa),
        );
        let mut lacking: Vec<&'static str> = Vec::new();
        for isa in lines {
            let Ok(isa) = isa else { continue };
            let missing = exec::isa::flags_the_host_lacks(isa.as_ref());
            if missing.is_empty() {
                return Some(Ok(isa.clone()));
            }
            for m in missing {
                if !lacking.contains(&m) {
                    lacking.push(m);
                }
            }
        }
        if lacking.is_empty() {
            return Some(built(first));
        }
        Some(Err(format!(
            "every `target {target}` line of the file needs an ISA flag this host lacks ({}); \
             Cranelift's runner skips such lines too",
            lacking.join(", ")
        )))
    }

    /// The baseline's own ISA for `target`, if the source has one ([`ClifFile::stock`]).
    pub fn stock_isa(&self, target: Target) -> Option<&Result<OwnedTargetIsa, String>> {
        self.stock
            .iter()
            .find(|(t, _)| *t == target)
            .map(|(_, isa)| isa)
    }

    /// The file's targets, for messages.
    pub fn target_names(&self) -> String {
        self.targets
            .iter()
            .map(|(t, _)| t.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Why the file is compiled for no target: its `target` lines name only architectures
    /// schedlab does not build (`None` when it has a target).
    pub fn foreign_only(&self) -> Option<String> {
        self.targets.is_empty().then(|| {
            format!(
                "its `target` lines name only {}; schedlab compiles for x86_64, aarch64, s390x, \
                 riscv64",
                self.foreign_targets.join(", ")
            )
        })
    }

    /// The file's targets that are also in `requested`; an empty intersection is a usage
    /// error naming the file's targets.
    pub fn select_targets(&self, requested: &[Target]) -> Result<Vec<Target>, CliError> {
        if let Some(why) = self.foreign_only() {
            let message = format!("{}: {why}", self.name);
            if self.from_directory {
                eprintln!("schedlab: note: {message}; left out");
                return Ok(Vec::new());
            }
            return Err(CliError::usage(message));
        }
        let chosen: Vec<Target> = self
            .targets
            .iter()
            .map(|(t, _)| *t)
            .filter(|t| requested.contains(t))
            .collect();
        if chosen.is_empty() {
            let asked: Vec<&str> = requested.iter().map(|t| t.name()).collect();
            let message = format!(
                "{}: compiled only for {} (its `target` lines), none of --target {}",
                self.name,
                self.target_names(),
                asked.join(",")
            );
            if self.from_directory {
                eprintln!("schedlab: note: {message}; left out");
                return Ok(chosen);
            }
            return Err(CliError::usage(message));
        }
        Ok(chosen)
    }
}

/// Every `.clif` file and `.wasm` module below `dir`, sorted.
pub fn files_below(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = std::fs::read_dir(&d)
            .map_err(|e| CliError::usage(format!("cannot read {}: {e}", d.display())))?;
        for entry in entries {
            let path = entry
                .map_err(|e| CliError::usage(format!("cannot read {}: {e}", d.display())))?
                .path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "clif")
                || crate::wasm_source::is_wasm(&path)
            {
                out.push(path);
            }
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(CliError::usage(format!(
            "{}: no .clif or .wasm files below this directory",
            dir.display()
        )));
    }
    Ok(out)
}

/// The files matching `pattern`, whose last component may hold `*` (any run of characters)
/// and `?` (one character), e.g. `kernels/*.clif`; sorted. No match is a usage error.
pub fn files_matching(pattern: &str) -> Result<Vec<PathBuf>, CliError> {
    let path = Path::new(pattern);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name_pattern = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if dir.to_string_lossy().contains(['*', '?']) {
        return Err(CliError::usage(format!(
            "{pattern}: only the last path component may hold `*` or `?`"
        )));
    }
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", dir.display())))?;
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .is_some_and(|n| wildcard_match(&name_pattern, &n.to_string_lossy()))
        })
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(CliError::usage(format!("{pattern}: no file matches")));
    }
    Ok(out)
}

/// `*` and `?` matching over characters.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // matches[j]: does the pattern prefix seen so far match t[..j]?
    let mut matches = vec![false; t.len() + 1];
    matches[0] = true;
    for &c in &p {
        let mut next = vec![false; t.len() + 1];
        for j in 0..=t.len() {
            next[j] = match c {
                '*' => matches[j] || (j > 0 && next[j - 1]),
                '?' => j > 0 && matches[j - 1],
                c => j > 0 && matches[j - 1] && t[j - 1] == c,
            };
        }
        matches = next;
    }
    matches[t.len()]
}

/// Reads and parses one file; `name` is how reports call it.
pub fn load(path: &Path, name: String, from_directory: bool) -> Result<ClifFile, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
    let mut file = crate::guard::catch(|| parse(&text, name.clone()))
        .map_err(|e| CliError::usage(format!("{name}: the reader failed: {e}")))??;
    file.from_directory = from_directory;
    file.verify()?;
    Ok(file)
}

/// Parses and verifies a file's text (one built into the binary); `name` is how errors call it.
pub fn parse_source(text: &str, name: String) -> Result<ClifFile, CliError> {
    let file = crate::guard::catch(|| parse(text, name.clone()))
        .map_err(|e| CliError::usage(format!("{name}: the reader failed: {e}")))??;
    file.verify()?;
    Ok(file)
}

fn parse(text: &str, name: String) -> Result<ClifFile, CliError> {
    let test = cranelift_reader::parse_test(text, ParseOptions::default())
        .map_err(|e| CliError::usage(format!("{name}:{e}")))?;
    if test.functions.is_empty() {
        return Err(CliError::usage(format!("{name}: no functions found")));
    }
    let mut targets: Vec<(Target, Result<OwnedTargetIsa, String>)> = Vec::new();
    let mut more_targets: Vec<(Target, Result<OwnedTargetIsa, String>)> = Vec::new();
    // The reader drops a `target` line whose backend is not compiled in (Pulley): the
    // header's lines say which targets the file names.
    let mut foreign_targets: Vec<String> = header_targets(text)
        .into_iter()
        .filter(|name| exec::isa::target_of_triple(name).is_none())
        .collect();
    match &test.isa_spec {
        IsaSpec::None(_) if !foreign_targets.is_empty() => {}
        IsaSpec::None(flags) => {
            for t in Target::ALL {
                targets.push((t, exec::isa::isa_with_flags(t, flags, None)));
            }
        }
        IsaSpec::Some(isas) => {
            for isa in isas {
                match exec::isa::target_of(isa.as_ref()) {
                    // The first `target` line for an architecture wins.
                    Some(t) if !targets.iter().any(|(seen, _)| *seen == t) => targets.push((
                        t,
                        exec::isa::isa_with_flags(t, isa.flags(), Some(isa.as_ref())),
                    )),
                    Some(t) => more_targets.push((
                        t,
                        exec::isa::isa_with_flags(t, isa.flags(), Some(isa.as_ref())),
                    )),
                    None => {
                        let triple = isa.triple().to_string();
                        if !foreign_targets.contains(&triple) {
                            foreign_targets.push(triple);
                        }
                    }
                }
            }
            // A file for targets schedlab does not build (e.g. only `target pulley64`) keeps
            // no targets: `check` skips it with [`ClifFile::foreign_only`] as the reason, as
            // Cranelift's runner skips a file the host cannot run.
        }
    }
    let interpret_only =
        !test.commands.is_empty() && test.commands.iter().all(|c| c.command == "interpret");
    let functions: Vec<Function> = test.functions.iter().map(|(f, _)| f.clone()).collect();
    let mut run_lines = Vec::new();
    for (attached, (_, details)) in test.functions.iter().enumerate() {
        for comment in &details.comments {
            if let Some(spec) = run_line(comment.text, attached, &functions) {
                run_lines.push(RunLine {
                    line: line_of(text, comment.text),
                    text: comment.text.trim().to_string(),
                    spec,
                });
            }
        }
    }
    run_lines.sort_by_key(|l| l.line);
    Ok(ClifFile {
        name,
        targets,
        more_targets,
        stock: Vec::new(),
        foreign_targets,
        functions,
        run_lines,
        interpret_only,
        from_directory: false,
        heap_facts: Default::default(),
    })
}

/// The triples of the `target` lines before the first function.
fn header_targets(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| line.split(';').next().unwrap_or("").trim())
        .take_while(|line| !line.starts_with("function"))
        .filter_map(|line| line.strip_prefix("target"))
        .filter(|rest| rest.starts_with([' ', '\t']))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The 1-based line of `part`, a slice of `text`.
fn line_of(text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    text.get(..offset)
        .map_or(0, |before| before.lines().count())
        + 1
}

/// Parses a comment as a run line: `None` when it is not one.
fn run_line(
    comment: &str,
    attached: usize,
    functions: &[Function],
) -> Option<Result<RunSpec, String>> {
    let body = comment.trim_start_matches([';', ' ', '\t']).trim_end();
    let keyword = body.split([':', ' ', '(']).next().unwrap_or("");
    if !matches!(keyword, "run" | "print" | "trap") {
        return None;
    }
    Some(parse_run_line(body, keyword, attached, functions))
}

fn parse_run_line(
    body: &str,
    keyword: &str,
    attached: usize,
    functions: &[Function],
) -> Result<RunSpec, String> {
    let rest = body[keyword.len()..].trim_start();
    // As in Cranelift's runner (filetests' `test run`), a line runs the function whose
    // comments hold it — the one it follows — whatever name the line writes: the name is
    // parsed but not looked up.
    let function = attached;
    match rest.strip_prefix(':').map(str::trim_start) {
        Some(call) if !call.starts_with('%') => {
            return Err(format!("expected `%function(args)` after `{keyword}:`"));
        }
        None if keyword == "trap" => return Err("expected `; trap: %function(args)`".into()),
        _ => {}
    }
    let sig = &functions[function].signature;
    if sig.returns.len() > MAX_RESULTS {
        return Err(format!("more than {MAX_RESULTS} results"));
    }
    if keyword == "trap" {
        let print = format!("print{rest}");
        let command = reader_parse(&print, sig)?;
        let RunCommand::Print(invocation) = command else {
            return Err("expected `; trap: %function(args)`".into());
        };
        return Ok(RunSpec {
            function,
            args: invocation.args,
            expect: Expect::Trap,
        });
    }
    let command = match reader_parse(body, sig) {
        Ok(c) => c,
        Err(first) if keyword == "run" && body.ends_with(')') && bare_form_allowed(sig) => {
            // The bare form `; run: %f(args)`: true when the single integer result is non-zero.
            reader_parse(&format!("{body} != 0"), sig).map_err(|_| first)?
        }
        Err(e) => return Err(e),
    };
    Ok(match command {
        RunCommand::Print(invocation) => RunSpec {
            function,
            args: invocation.args,
            expect: Expect::Print,
        },
        RunCommand::Run(invocation, comparison, expected) => RunSpec {
            function,
            args: invocation.args,
            expect: match comparison {
                Comparison::Equals => Expect::Equal(expected),
                Comparison::NotEquals => Expect::NotEqual(expected),
            },
        },
    })
}

fn bare_form_allowed(sig: &Signature) -> bool {
    sig.returns.len() == 1 && sig.returns[0].value_type.is_int()
}

fn reader_parse(text: &str, sig: &Signature) -> Result<RunCommand, String> {
    match crate::guard::catch(|| cranelift_reader::parse_run_command(text, sig)) {
        Ok(Ok(Some(command))) => Ok(command),
        Ok(Ok(None)) => Err("not a run command".into()),
        Ok(Err(e)) => {
            // The reader counts lines within the comment: "1: expected …".
            let message = e.to_string();
            let message = message.strip_prefix("1: ").unwrap_or(&message).to_string();
            Err(format!("malformed run line: {message}"))
        }
        Err(panic) => Err(format!("malformed run line (the reader {panic})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "test run\n\
        function %add(i32, i32) -> i32 {\n\
        block0(v0: i32, v1: i32):\n\
            v2 = iadd v0, v1\n\
            return v2\n\
        }\n\
        ; run: %add(1, 2) == 3\n\
        ; run: %add(1, 2) != 4\n\
        ; run: %add(1, 2)\n\
        ; run: %add(1) == 1\n\
        ; run: %other_name(1, 2) == 3\n\
        ; trap: %add(1, 2)\n";

    #[test]
    fn run_lines_are_parsed_with_their_forms_and_errors() {
        let file = parse(FILE, "t.clif".into()).unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(file.targets.len(), 4);
        let lines: Vec<&RunLine> = file.run_lines.iter().collect();
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[0].line, 7);
        let expect = |i: usize| lines[i].spec.as_ref().map(|s| s.expect.clone());
        assert_eq!(expect(0), Ok(Expect::Equal(vec![DataValue::I32(3)])));
        assert_eq!(expect(1), Ok(Expect::NotEqual(vec![DataValue::I32(4)])));
        assert_eq!(expect(2), Ok(Expect::NotEqual(vec![DataValue::I32(0)])));
        assert!(lines[3].spec.is_err(), "wrong arity");
        // Another name runs the function the line follows, as Cranelift's runner does.
        assert_eq!(expect(4), Ok(Expect::Equal(vec![DataValue::I32(3)])));
        assert_eq!(lines[4].spec.as_ref().map(|s| s.function), Ok(0));
        assert_eq!(expect(5), Ok(Expect::Trap));
    }

    #[test]
    fn wildcards_match_runs_and_single_characters() {
        assert!(wildcard_match("*.clif", "a.clif"));
        assert!(wildcard_match("int_*_add.clif", "int_i128_add.clif"));
        assert!(wildcard_match("f?.clif", "f1.clif"));
        assert!(!wildcard_match("f?.clif", "f12.clif"));
        assert!(!wildcard_match("*.clif", "a.clif.txt"));
    }

    #[test]
    fn target_lines_select_targets_and_an_empty_intersection_is_a_usage_error() {
        let text = "target aarch64\ntarget s390x\nfunction %f() -> i8 {\nblock0:\n v0 = iconst.i8 1\n return v0\n}\n";
        let file = parse(text, "t.clif".into()).unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(file.target_names(), "aarch64, s390x");
        let err = file
            .select_targets(&[Target::X86_64])
            .err()
            .map(|e| (e.code, e.message));
        let (code, message) = err.unwrap_or_default();
        assert_eq!(code, 2);
        assert!(message.contains("aarch64, s390x"), "{message}");
    }
}
