//! Every target's MD5 machine code, executed: natively through the JIT (and through the linked
//! C harness) on the host, under qemu for the others. Checked on the RFC 1321 test suite
//! (padded here) and on random states, buffers, offsets and limits, including out-of-bounds
//! ones, against `reference_compress`.
//!
//! Without a cross compiler or qemu the foreign targets are skipped with a message; with
//! `SCHEDLAB_REQUIRE_EMULATORS=1` they fail instead.

mod common;

use schedlab_backend::Target;
use schedlab_backend::emulate::{Md5Case, Md5Outcome, run_md5_cases, run_md5_cases_linked};
use schedlab_kernels::OUT_OF_BOUNDS;
use schedlab_kernels::md5::{INITIAL_STATE, compress_multi_block};
use schedlab_kernels::md5::{RFC1321_SUITE as RFC1321, pad_message};

fn digest_hex(state: &[u32; 4]) -> String {
    state
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo + 1) as u64)) as i64
    }
}

fn rfc_cases() -> Vec<Md5Case> {
    RFC1321
        .iter()
        .map(|(msg, _)| Md5Case::whole_blocks(INITIAL_STATE, pad_message(msg.as_bytes()), 0))
        .collect()
}

fn random_cases(seed: u64, count: usize) -> Vec<Md5Case> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|i| {
            let size = rng.range(0, 320) as usize;
            let buf: Vec<u8> = (0..size).map(|_| rng.next() as u8).collect();
            // Mostly the whole buffer; sometimes a shorter Java length.
            let len = if i % 5 == 4 {
                rng.range(0, size as i64) as i32
            } else {
                size as i32
            };
            let state = [0; 4].map(|_: u32| rng.next() as u32);
            // Offsets and limits around the valid range: negative offsets, blocks that run
            // past `len`, empty loops.
            let ofs = match i % 4 {
                0 => 0,
                1 => rng.range(-70, 8) as i32,
                _ => rng.range(0, i64::from(len)) as i32,
            };
            let limit = match i % 3 {
                0 => len - 64,
                1 => rng.range(i64::from(ofs) - 64, i64::from(len)) as i32,
                _ => rng.range(-10, i64::from(len) + 64) as i32,
            };
            Md5Case {
                state,
                buf,
                len,
                ofs,
                limit,
            }
        })
        .collect()
}

fn check_outcomes(target: Target, how: &str, cases: &[Md5Case], got: &[Md5Outcome]) {
    assert_eq!(got.len(), cases.len(), "{target} {how}: result count");
    let mut oob = 0;
    for (i, (case, got)) in cases.iter().zip(got).enumerate() {
        let want = case.expected();
        assert_eq!(
            *got, want,
            "{target} {how} case {i}: len {} ofs {} limit {} state {:08x?}",
            case.len, case.ofs, case.limit, case.state
        );
        if want.ret == OUT_OF_BOUNDS {
            oob += 1;
        }
    }
    eprintln!(
        "{target} {how}: {} cases agree ({oob} out of bounds)",
        cases.len()
    );
}

fn run_target(target: Target) {
    if !target.is_host() && !common::runnable(target) {
        return;
    }
    let func = compress_multi_block();

    let rfc = rfc_cases();
    let got = run_md5_cases(&func, target, &rfc).unwrap_or_else(|e| panic!("{target}: {e}"));
    for ((msg, digest), out) in RFC1321.iter().zip(&got) {
        assert_eq!(
            digest_hex(&out.state),
            *digest,
            "{target}: MD5({msg:?}) (returned {})",
            out.ret
        );
    }
    check_outcomes(target, "rfc1321", &rfc, &got);

    let random = random_cases(0x5eed_0000 + target as u64, 300);
    assert!(random.iter().any(|c| c.expected().ret == OUT_OF_BOUNDS));
    assert!(random.iter().any(|c| c.expected().ret > c.ofs));
    let got = run_md5_cases(&func, target, &random).unwrap_or_else(|e| panic!("{target}: {e}"));
    check_outcomes(target, "random", &random, &got);
}

#[test]
fn x86_64_executes_md5() {
    run_target(Target::X86_64);
}

#[test]
fn aarch64_executes_md5_under_qemu() {
    run_target(Target::Aarch64);
}

#[test]
fn s390x_executes_md5_under_qemu() {
    run_target(Target::S390x);
}

#[test]
fn riscv64_executes_md5_under_qemu() {
    run_target(Target::Riscv64);
}

/// The host also runs the object + C harness path that the foreign targets use.
#[test]
fn host_object_links_with_the_c_harness() {
    let Some(host) = Target::host() else {
        eprintln!("skipping: the host is not one of schedlab's targets");
        return;
    };
    if !common::runnable(host) {
        return;
    }
    let func = compress_multi_block();
    let mut cases = rfc_cases();
    cases.extend(random_cases(42, 100));
    let got = run_md5_cases_linked(&func, host, &cases).unwrap_or_else(|e| panic!("{e}"));
    check_outcomes(host, "linked", &cases, &got);
}

#[test]
fn expected_outcomes_follow_the_java_loop() {
    let buf = pad_message(b"abc");
    let full = Md5Case::whole_blocks(INITIAL_STATE, buf.clone(), 0).expected();
    assert_eq!(full.ret, 64);
    // A block that starts inside the buffer but ends past `len`.
    let short = Md5Case {
        state: INITIAL_STATE,
        buf: buf.clone(),
        len: 60,
        ofs: 0,
        limit: 0,
    };
    assert_eq!(
        short.expected(),
        Md5Outcome {
            ret: OUT_OF_BOUNDS,
            state: INITIAL_STATE
        }
    );
    // An empty loop returns `ofs` and leaves the state alone.
    let empty = Md5Case {
        state: INITIAL_STATE,
        buf,
        len: 64,
        ofs: 5,
        limit: 4,
    };
    assert_eq!(empty.expected().ret, 5);
}
