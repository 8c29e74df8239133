//! Differential test of `examples/sha256sum.rs` against GNU coreutils' `/usr/bin/sha256sum`
//! (same harness as `tests/md5sum.rs`: `common/sum_harness.rs`): hashing files of every padding
//! boundary and odd names, stdin, `--tag`, `-z`, and `-c` on plain, tagged, mismatching,
//! missing and malformed lists. stdout, stderr and exit status must be byte-identical.

const PROGRAM: &str = "sha256sum";
const COREUTILS: &str = "/usr/bin/sha256sum";

include!("common/sum_harness.rs");

#[test]
fn hashes_like_coreutils() {
    let dir = setup();
    let mut cases = size_cases();
    cases.extend(all_files_cases(&[
        &[],
        &["-b"],
        &["--tag"],
        &["-z"],
        &["--tag", "-z"],
    ]));
    let data = bytes(100_000, 7);
    cases.push(Case::new("stdin, no operand", &[]).stdin(&data));
    cases.push(Case::new("stdin as -", &[b"-"]).stdin(b"abc"));
    cases.push(Case::new(
        "missing among existing",
        &[b"one", b"missing", b"b55", b"subdir", b"mib"],
    ));
    cases.push(Case::new("C locale quoting", &[b"--", "é".as_bytes()]).env("LC_ALL", "C"));
    // A file whose `read` fails (/proc/self/mem) and one whose size `stat` does not tell
    // (/proc/version) among files read in pieces.
    cases.push(Case::new(
        "/proc files among files",
        &[b"one", b"/proc/self/mem", b"mib", b"/proc/version", b"b55"],
    ));
    // Fewer descriptors than the reader's window of open files needs.
    cases.push(Case::new("all files, 8 descriptors", &all_files()).fd_limit(8));
    cases.push(Case::new("stdout write error", &[b"one", b"b55"]).dev_full());
    cases.push(Case::new("bad option", &[b"-x"]));
    cases.push(Case::new("--tag with --check", &[b"--tag", b"-c", b"one"]));
    compare(dir.path(), &cases);
}

#[test]
fn checks_like_coreutils() {
    let dir = setup();
    let d = dir.path();
    let plain = coreutils_list(d, &[]);
    write(d, b"ok.sha", &plain);
    write(d, b"tagged.sha", &coreutils_list(d, &[b"--tag"]));
    let mut mismatch = plain.clone();
    mismatch[..64].copy_from_slice(&[b'0'; 64]);
    write(d, b"mismatch.sha", &mismatch);
    let h_one = digest_of_one(&plain, 64);
    let malformed = [
        "garbage".to_string(),
        format!("{h_one}  one"),
        format!("{}  one", &h_one[..63]),
        format!("SHA256 (one) = {h_one}"),
        format!("SHA256(one)= {h_one}"),
        format!("MD5 (one) = {h_one}"),
        format!("{h_one}  gone"),
    ];
    write(
        d,
        b"malformed.sha",
        (malformed.join("\n") + "\n").as_bytes(),
    );
    let mut cases = Vec::new();
    for list in [
        &b"ok.sha"[..],
        b"tagged.sha",
        b"mismatch.sha",
        b"malformed.sha",
    ] {
        for flags in [
            &["-c"][..],
            &["--check", "--quiet"],
            &["-c", "--status"],
            &["-c", "-w", "--strict"],
            &["-c", "--ignore-missing"],
        ] {
            let label = format!("check {} {flags:?}", list.escape_ascii());
            cases.push(Case::new(label, &with(flags, &[list])));
        }
    }
    cases.push(Case::new("list on stdin", &[b"-c"]).stdin(&plain));
    compare(d, &cases);
}
