//! The hand-written reference loops of `schedlab_cost::reference` compute what they claim:
//! each is wrapped in a function, linked into a small C program by the target's gcc and run
//! (natively, or under qemu) on FIPS 180-4's examples and on random messages against the
//! `sha2` crate; llvm-mca costs each on every CPU it names.

use rand::{Rng, SeedableRng};
use schedlab_backend::emulate::toolchain_status;
use schedlab_backend::target::Target;
use schedlab_backend::tools::test_can_use;
use schedlab_cost::mca::McaError;
use schedlab_cost::reference::{REFERENCES, Reference};
use schedlab_kernels::sha256::{FIPS180_EXAMPLES, INITIAL_STATE, ROUND_CONSTS, pad_message};
use sha2::Digest;
use std::io::Write;
use std::process::{Command, Stdio};

fn harness(reference: &Reference) -> String {
    let k: Vec<String> = ROUND_CONSTS.iter().map(|k| format!("0x{k:08x}u")).collect();
    let init: Vec<String> = INITIAL_STATE
        .iter()
        .map(|w| format!("0x{w:08x}u"))
        .collect();
    let (third_type, third_arg) = match reference.target {
        Target::X86_64 => ("const uint8_t *", "buf + n"),
        _ => ("uint64_t", "n / 64"),
    };
    format!(
        "#include <stdint.h>\n#include <stdio.h>\n\
         extern void {symbol}(uint32_t *state, const uint8_t *msg, {third_type} third, const uint32_t *k);\n\
         static const uint32_t K[64] __attribute__((aligned(16))) = {{{}}};\n\
         static uint8_t buf[1 << 16];\n\
         int main(void) {{\n\
           size_t n = fread(buf, 1, sizeof buf, stdin);\n\
           if (n == 0 || n % 64 != 0) return 2;\n\
           uint32_t s[8] = {{{}}};\n\
           {symbol}(s, buf, {third_arg}, K);\n\
           for (int i = 0; i < 8; i++) printf(\"%08x\", s[i]);\n\
           printf(\"\\n\");\n\
           return 0;\n\
         }}\n",
        k.join(", "),
        init.join(", "),
        symbol = reference.symbol,
    )
}

/// Builds the reference's test program; `None` (after `test_can_use` said why) when the
/// target's tools are missing outside CI.
fn build(
    reference: &Reference,
    dir: &std::path::Path,
) -> Option<(std::path::PathBuf, Option<std::path::PathBuf>)> {
    let tools = toolchain_status(reference.target);
    if !test_can_use(tools.as_ref()) {
        return None;
    }
    let tools = tools.ok()?;
    let asm = dir.join(format!("{}.s", reference.name));
    let c = dir.join(format!("{}.c", reference.name));
    let exe = dir.join(reference.name);
    std::fs::write(&asm, reference.callable()).expect("write the wrapper");
    std::fs::write(&c, harness(reference)).expect("write the harness");
    let mut cc = Command::new(&tools.cc);
    cc.args(["-static", "-O1"]);
    if reference.target == Target::Aarch64 {
        cc.arg("-march=armv8-a+crypto");
    }
    let out = cc
        .arg("-o")
        .arg(&exe)
        .arg(&c)
        .arg(&asm)
        .output()
        .expect("start the C compiler");
    assert!(
        out.status.success(),
        "{}: linking failed:\n{}",
        reference.name,
        String::from_utf8_lossy(&out.stderr)
    );
    Some((exe, tools.qemu))
}

fn run(exe: &std::path::Path, qemu: Option<&std::path::Path>, padded: &[u8]) -> String {
    let mut cmd = match qemu {
        Some(qemu) => {
            let mut c = Command::new(qemu);
            c.arg(exe);
            c
        }
        None => Command::new(exe),
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the test program");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(padded)
        .expect("feed the message");
    let out = child.wait_with_output().expect("wait for the test program");
    assert!(
        out.status.success(),
        "the reference program failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn every_reference_computes_sha256_on_its_target() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5a256);
    let mut messages: Vec<Vec<u8>> = FIPS180_EXAMPLES
        .iter()
        .map(|(m, _)| m.as_bytes().to_vec())
        .collect();
    for len in [0usize, 55, 56, 64, 119, 1000] {
        messages.push((0..len).map(|_| rng.random()).collect());
    }
    for reference in &REFERENCES {
        let Some((exe, qemu)) = build(reference, dir.path()) else {
            continue;
        };
        if reference.target == Target::X86_64
            && !(std::arch::is_x86_feature_detected!("sha")
                && std::arch::is_x86_feature_detected!("sse4.1"))
        {
            // Both CPUs of this machine kind have the SHA extensions; any other host cannot
            // run this reference natively, which is a missing tool like any other.
            assert!(
                test_can_use::<(), &str>(Err("the host CPU has no SHA extensions")),
                "unreachable"
            );
            continue;
        }
        for message in &messages {
            let got = run(&exe, qemu.as_deref(), &pad_message(message));
            assert_eq!(
                got,
                hex(&sha2::Sha256::digest(message)),
                "{} on a {}-byte message",
                reference.name,
                message.len()
            );
        }
        for (message, digest) in FIPS180_EXAMPLES {
            assert_eq!(
                run(&exe, qemu.as_deref(), &pad_message(message.as_bytes())),
                digest
            );
        }
    }
}

#[test]
fn every_reference_has_all_64_rounds_and_48_schedule_words() {
    for reference in &REFERENCES {
        let (rounds, schedule): (usize, usize) = match reference.target {
            Target::Aarch64 => (
                4 * reference.count("sha256h"),
                4 * reference.count("sha256su1"),
            ),
            Target::X86_64 => (
                2 * reference.count("sha256rnds2"),
                4 * reference.count("sha256msg2"),
            ),
            other => panic!("unexpected target {other}"),
        };
        assert_eq!(rounds, 64, "{}", reference.name);
        assert_eq!(schedule, 48, "{}", reference.name);
    }
}

#[test]
fn every_reference_is_costed_on_each_of_its_cpus() {
    for reference in &REFERENCES {
        for cpu in reference.cpus {
            let cycles = match reference.cycles(cpu) {
                Ok(cycles) => cycles,
                // A missing llvm-mca is a missing tool; any other error is a failure.
                Err(missing @ McaError::MissingTool { .. }) => {
                    assert!(!test_can_use::<(), _>(Err(missing)));
                    continue;
                }
                Err(e) => panic!("{} on {cpu}: {e}", reference.name),
            };
            // One crypto pipe issues at most one round instruction per cycle: 16 (AArch64:
            // SHA256H + SHA256H2 per quad → 32) round instructions per block at the least.
            let round_insts = reference.count("sha256h")
                + reference.count("sha256h2")
                + reference.count("sha256rnds2");
            assert!(
                cycles.is_finite() && cycles >= round_insts as f64 / 2.0,
                "{} on {cpu}: {cycles} cycles per block",
                reference.name
            );
        }
    }
    assert!(REFERENCES[0].cycles("skylake").is_err());
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_linked_sha_ni_reference_matches_sha2_and_refuses_partial_blocks() {
    use schedlab_cost::reference::native::{sha256_ni_available, sha256_ni_compress};
    if !sha256_ni_available() {
        assert!(!test_can_use::<(), _>(Err(
            "the host CPU has no SHA extensions"
        )));
        return;
    }
    for len in [0usize, 3, 64, 200, 4096] {
        let message: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
        let mut state = INITIAL_STATE;
        sha256_ni_compress(&mut state, &pad_message(&message)).expect("whole blocks");
        let digest: String = state.iter().map(|w| format!("{w:08x}")).collect();
        assert_eq!(digest, hex(&sha2::Sha256::digest(&message)), "{len} bytes");
    }
    let mut state = INITIAL_STATE;
    assert!(sha256_ni_compress(&mut state, &[0u8; 65]).is_err());
    assert_eq!(state, INITIAL_STATE);
}
