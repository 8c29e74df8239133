//! Differential test of `examples/md5sum.rs` against GNU coreutils' `/usr/bin/md5sum`: both
//! run on the same files, arguments, stdin and environment, and their stdout, stderr and exit
//! status must be byte-identical. The harness (`common/sum_harness.rs`) is shared with
//! `tests/sha256sum.rs`.
//!
//! Cargo builds examples for a test run only when it builds every target, so the example is
//! built here with `$CARGO build --example md5sum` in the test's own profile and target
//! directory, and located through cargo's JSON messages.

const PROGRAM: &str = "md5sum";
const COREUTILS: &str = "/usr/bin/md5sum";

include!("common/sum_harness.rs");

#[test]
fn hashes_like_coreutils() {
    let dir = setup();
    let mut cases = size_cases();
    for name in ODD_NAMES {
        cases.push(Case::new("odd name", &[b"--", name]));
    }
    cases.extend(all_files_cases(&[
        &[],
        &["-b"],
        &["-t"],
        &["--tag"],
        &["-z"],
        &["--tag", "-z"],
        &["-bz"],
    ]));
    let data = bytes(100_000, 7);
    cases.push(Case::new("stdin, no operand", &[]).stdin(&data));
    cases.push(Case::new("stdin, empty", &[]).stdin(b""));
    cases.push(Case::new("stdin as -", &[b"-"]).stdin(b"abc"));
    cases.push(Case::new("stdin between files", &[b"one", b"-", b"b64"]).stdin(&data));
    cases.push(Case::new("stdin twice", &[b"-", b"-"]).stdin(b"abc"));
    cases.push(Case::new("tagged stdin", &[b"--tag"]).stdin(b"abc"));
    cases.push(Case::new(
        "missing among existing",
        &[b"one", b"missing", b"b55", b"subdir", b"mib"],
    ));
    cases.push(Case::new(
        "missing odd names",
        &[
            b"--",
            b"miss ing",
            b"new\nmissing",
            b"it's",
            b"it's a\tb",
            b"\xff\xfe",
            "ü\u{85}".as_bytes(),
            b"x:y",
            b"~home",
            b"{",
            b"a{b}",
            b"",
            b"-",
            b"@at",
        ],
    ));
    cases.push(
        Case::new(
            "C locale quoting",
            &[b"--", "é".as_bytes(), "nö".as_bytes()],
        )
        .env("LC_ALL", "C"),
    );
    // Many operands: batches of files hashed in SIMD lanes (compiled at once with
    // SCHEDLAB_MD5_JIT=eager, which GNU md5sum ignores), errors and stdin in between.
    let mut many: Vec<&[u8]> = Vec::new();
    for round in 0..3 {
        many.extend(all_files());
        many.push([&b"missing"[..], b"subdir", b"-"][round]);
    }
    cases.push(
        Case::new("many files in lanes", &many)
            .stdin(b"abc")
            .env("SCHEDLAB_MD5_JIT", "eager"),
    );
    cases.push(
        Case::new(
            "many files in lanes, --ignore-missing",
            &with(&["--ignore-missing"], &many),
        )
        .env("SCHEDLAB_MD5_JIT", "eager"),
    );
    // More files than the reader keeps open, of sizes around its 64 KiB pieces, then the same
    // with stdin, a directory, a missing file, a file whose `read` fails (/proc/self/mem) and
    // one whose size `stat` does not tell (/proc/version) among them.
    let piece_files: Vec<Vec<u8>> = (0..40)
        .map(|i| {
            let name = format!("piece{i}").into_bytes();
            write(
                dir.path(),
                &name,
                &bytes(i * 20_000 + (i % 3) * 65_536, 300 + i as u64),
            );
            name
        })
        .collect();
    let mut mixed: Vec<&[u8]> = Vec::new();
    let odd: [&[u8]; 6] = [
        b"-",
        b"subdir",
        b"missing",
        b"/proc/self/mem",
        b"/proc/version",
        b"b65",
    ];
    for (i, name) in piece_files.iter().enumerate() {
        mixed.push(name);
        if i % 7 == 3 {
            mixed.push(odd[i / 7]);
        }
    }
    let all_pieces: Vec<&[u8]> = piece_files.iter().map(Vec::as_slice).collect();
    cases.push(Case::new("files read in pieces", &all_pieces).env("SCHEDLAB_MD5_JIT", "eager"));
    cases.push(
        Case::new("files read in pieces, portable", &all_pieces).env("SCHEDLAB_MD5_JIT", "off"),
    );
    cases.push(
        Case::new("unreadable operands among pieces", &mixed)
            .stdin(&data)
            .env("SCHEDLAB_MD5_JIT", "eager"),
    );
    cases.push(Case::new("unreadable operands among pieces, default", &mixed).stdin(&data));
    // Fewer descriptors than the reader's window of open files needs.
    cases.push(Case::new("files read in pieces, 8 descriptors", &all_pieces).fd_limit(8));
    cases.push(Case::new(
        "/proc files among files",
        &[b"one", b"/proc/self/mem", b"mib", b"/proc/version", b"b55"],
    ));
    cases.push(Case::new("stdout write error", &[b"one", b"b55"]).dev_full());
    cases.push(Case::new("stdout write error, missing file", &[b"one", b"nope"]).dev_full());
    cases.push(Case::new("stdout write error with -z", &[b"-z", b"one"]).dev_full());
    compare(dir.path(), &cases);
}

#[test]
fn checks_like_coreutils() {
    let dir = setup();
    let d = dir.path();
    let plain = coreutils_list(d, &[]);
    let tagged = coreutils_list(d, &[b"--tag"]);
    let binary = coreutils_list(d, &[b"-b"]);
    write(d, b"ok.md5", &plain);
    write(d, b"tagged.md5", &tagged);
    write(d, b"binary.md5", &binary);

    // One digest changed, and upper-case digits (which still match).
    let mut mismatch = plain.clone();
    mismatch[..32].copy_from_slice(b"0123456789abcdef0123456789abcdef");
    write(d, b"mismatch.md5", &mismatch);
    let upper: Vec<u8> = plain
        .split_inclusive(|&b| b == b'\n')
        .flat_map(|line| {
            let mut line = line.to_vec();
            let start = usize::from(line[0] == b'\\');
            line[start..start + 32].make_ascii_uppercase();
            line
        })
        .collect();
    write(d, b"upper.md5", &upper);

    let h_one = digest_of_one(&plain, 32);
    let line = |name: &str| format!("{h_one}  {name}\n");
    write(
        d,
        b"missing.md5",
        format!("{}{}{}", line("one"), line("gone"), line("subdir")).as_bytes(),
    );
    write(d, b"allmissing.md5", line("gone").as_bytes());
    let malformed = [
        "garbage".to_string(),
        line("one"),
        "# comment".into(),
        String::new(),
        format!("   {h_one}  one"),
        format!("\t{h_one}  one"),
        format!("{h_one}  one\r"),
        format!("{}  one", &h_one[..31]),
        format!("{h_one}0  one"),
        h_one.clone(),
        format!("{h_one}  "),
        format!("\\{h_one}  bad\\xescape"),
        format!("\\{h_one}  trailing\\"),
        format!("MD5 (one) = {h_one}"),
        format!("MD5(one)= {h_one}"),
        format!("MD5 (one) ={h_one} "),
        format!("MD5 (one)) = {h_one}"),
        format!("\\MD5 (back\\\\slash) = {h_one}"),
        format!("{h_one} *one"),
        format!("z{}  one", &h_one[1..]),
        format!("{h_one}  one\0after a NUL"),
        format!("{h_one} one"), // reversed BSD form: not mixable with the standard one
    ];
    write(
        d,
        b"malformed.md5",
        (malformed.join("\n") + "\n").as_bytes(),
    );
    write(d, b"none.md5", b"nothing to see\n\n# here\n");
    write(d, b"empty.md5", b"");
    write(
        d,
        b"reversed.md5",
        format!("{h_one} one\n{h_one} b55\n").as_bytes(),
    );
    write(d, b"dash.md5", line("-").as_bytes());
    write(d, b"crlf.md5", line("one").replace('\n', "\r\n").as_bytes());
    write(d, b"noeol.md5", line("one").trim_end().as_bytes());

    let mut cases = Vec::new();
    for list in [
        &b"ok.md5"[..],
        b"tagged.md5",
        b"binary.md5",
        b"upper.md5",
        b"mismatch.md5",
        b"missing.md5",
        b"allmissing.md5",
        b"malformed.md5",
        b"none.md5",
        b"empty.md5",
        b"reversed.md5",
        b"crlf.md5",
        b"noeol.md5",
    ] {
        // Every option combination on the lists where they matter, the main ones elsewhere.
        let thorough = [
            &b"mismatch.md5"[..],
            b"missing.md5",
            b"allmissing.md5",
            b"malformed.md5",
        ]
        .contains(&list);
        let flag_sets: &[&[&str]] = if thorough {
            &[
                &["-c"],
                &["--check", "--quiet"],
                &["-c", "--status"],
                &["-c", "-w"],
                &["-c", "--strict"],
                &["-c", "-w", "--strict", "--quiet"],
                &["-c", "--ignore-missing"],
                &["-c", "--ignore-missing", "--status"],
                &["-c", "--status", "-w"],
            ]
        } else {
            &[&["-c"], &["-c", "--quiet"], &["-c", "--status"]]
        };
        for flags in flag_sets {
            let label = format!("check {} {flags:?}", list.escape_ascii());
            cases.push(Case::new(label, &with(flags, &[list])));
        }
    }
    cases.push(Case::new("two lists", &[b"-c", b"ok.md5", b"mismatch.md5"]));
    cases.push(Case::new(
        "reversed form persists across lists",
        &[b"-c", b"reversed.md5", b"ok.md5"],
    ));
    cases.push(Case::new("missing list", &[b"-c", b"nope.md5", b"ok.md5"]));
    cases.push(Case::new("list is a directory", &[b"-c", b"subdir"]));
    cases.push(Case::new("list on stdin", &[b"-c"]).stdin(&plain));
    cases.push(Case::new("list on stdin as -", &[b"-c", b"-", b"-w"]).stdin(&mismatch));
    cases.push(Case::new("- in a list on stdin", &[b"-c", b"-w"]).stdin(line("-").as_bytes()));
    cases.push(Case::new("- in a list file", &[b"-c", b"dash.md5"]).stdin(b"one"));
    cases.push(Case::new("check, stdout write error", &[b"-c", b"ok.md5"]).dev_full());
    compare(d, &cases);
}

#[test]
fn option_errors_like_coreutils() {
    let dir = setup();
    let cases: Vec<Case> = [
        &[&b"-x"[..]][..],
        &[b"-bx", b"one"],
        &[b"--foo"],
        &[b"--foo=bar"],
        &[b"--s"],
        &[b"--st=1"],
        &[b"--t"],
        &[b"--check=1"],
        &[b"--che=yes"],
        &[b"--stat", b"one"],
        &[b"--quiet", b"one"],
        &[b"-w", b"one"],
        &[b"--strict", b"one"],
        &[b"--ignore-missing", b"one"],
        &[b"--quiet", b"--strict", b"--ignore-missing"],
        &[b"--strict", b"--quiet", b"--status", b"--warn"],
        &[b"-c", b"-z", b"ok.md5"],
        &[b"--tag", b"-c", b"ok.md5"],
        &[b"-z", b"-c", b"--tag", b"-b"],
        &[b"-b", b"-c", b"ok.md5"],
        &[b"-t", b"--check"],
        &[b"--tag", b"-t", b"one"],
        &[b"-t", b"--tag", b"one"],
        &[b"--bin", b"--te", b"--ze", b"one"],
        &[b"one", b"-b"],
        &[b"--", b"-b", b"one"],
        &[b"one", b"--", b"--tag"],
        &[b"-x", b"--help"],
        &[b"--bogus", b"--version"],
    ]
    .iter()
    .map(|args| Case::new("options", args))
    .chain([Case::new("POSIXLY_CORRECT", &[b"one", b"-b"]).env("POSIXLY_CORRECT", "1")])
    .collect();
    compare(dir.path(), &cases);

    // `--help` matches except for the last line, `--version` says what this program is.
    let help = run(example(), dir.path(), &Case::new("help", &[b"--help"]));
    let want = run(
        Path::new(COREUTILS),
        dir.path(),
        &Case::new("help", &[b"--help"]),
    );
    assert_eq!(help.status.code(), Some(0));
    let body = |out: &[u8]| {
        let text = String::from_utf8_lossy(out).into_owned();
        let end = text.find("\nNote:").expect("help text ends with a note");
        text[..end].to_string()
    };
    assert_eq!(body(&help.stdout), body(&want.stdout));
    let version = run(
        example(),
        dir.path(),
        &Case::new("version", &[b"--version"]),
    );
    assert_eq!(version.status.code(), Some(0));
    assert!(version.stdout.starts_with(b"md5sum (schedlab) "));
}
