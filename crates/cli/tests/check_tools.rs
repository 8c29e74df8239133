//! `schedlab check` on a machine whose cross toolchain is incomplete: the message names the
//! Debian package that fixes it, not only the linker's output. The toolchain is faked on a
//! private `PATH`, so these tests need no emulator and run everywhere.

mod common;

use common::{schedlab_with_path, stdout};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes an executable shell script `name` into `dir`.
fn script(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn check_aarch64_with(path: &Path) -> String {
    let out = schedlab_with_path(
        &[
            "check",
            "--target",
            "aarch64",
            "--strategy",
            "source",
            "--random",
            "0",
        ],
        Some(path),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    stdout(&out)
}

#[test]
fn a_cross_gcc_without_its_c_library_names_the_package() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Debian's cross gcc without libc6-dev-arm64-cross: it prints the bare name for a library
    // it cannot find, and linking fails.
    script(
        dir.path(),
        "aarch64-linux-gnu-gcc",
        r#"[ "$1" = -print-file-name=libc.a ] && { echo libc.a; exit 0; }
echo "ld: cannot find crt1.o: No such file or directory" >&2; exit 1"#,
    );
    script(dir.path(), "qemu-aarch64", "exit 0");
    let text = check_aarch64_with(dir.path());
    assert!(text.contains("libc6-dev-arm64-cross"), "{text}");
    assert!(text.contains("apt-get install"), "{text}");
}

#[test]
fn a_link_failing_for_the_c_library_names_the_package() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The library probe passes (an existing absolute path), the link itself reports the
    // missing start files: the linker's message comes with the package to install.
    script(
        dir.path(),
        "aarch64-linux-gnu-gcc",
        r#"[ "$1" = -print-file-name=libc.a ] && { echo /bin/sh; exit 0; }
echo "ld: cannot find crt1.o: No such file or directory" >&2; exit 1"#,
    );
    script(dir.path(), "qemu-aarch64", "exit 0");
    let text = check_aarch64_with(dir.path());
    assert!(text.contains("cannot find crt1.o"), "{text}");
    assert!(
        text.contains("apt-get install -y libc6-dev-arm64-cross"),
        "{text}"
    );
}

#[test]
fn missing_qemu_and_gcc_name_their_packages() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = check_aarch64_with(dir.path());
    assert!(text.contains("gcc-aarch64-linux-gnu"), "{text}");
    assert!(text.contains("qemu-user"), "{text}");
}
