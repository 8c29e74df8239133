//! The scheduler's schedules survive to machine code and keep MD5 correct.
//!
//! Every strategy's schedule of the Java-literal MD5 kernel is JIT-compiled and must give the
//! RFC 1321 digests, agree with the `md-5` crate on random messages and still report an
//! out-of-bounds read. `spills_and_pressure_per_strategy` prints the per-strategy table of the
//! closing note (`cargo test -p schedlab-backend --test sched_md5 -- --nocapture`).

use md5::{Digest, Md5};
use rand::{Rng, SeedableRng, rngs::StdRng};
use schedlab_backend::stats::code_stats;
use schedlab_backend::{JitFunction, Target, compile};
use schedlab_kernels::OUT_OF_BOUNDS;
use schedlab_kernels::md5::RFC1321_SUITE as RFC1321;
use schedlab_kernels::md5::{INITIAL_STATE, compress_multi_block, reference_compress};
use schedlab_passes::sched::{self, MachineModel, ScheduleStats};

type Kernel = unsafe extern "C" fn(*mut u32, *const u8, i32, i32, i32) -> i32;

fn scheduled(
    strategy: &str,
    model: &MachineModel,
) -> (cranelift_codegen::ir::Function, ScheduleStats) {
    let mut func = compress_multi_block();
    let stats = sched::schedule_with_seed(&mut func, strategy, model, 11)
        .unwrap_or_else(|e| panic!("{strategy}: {e}"));
    (func, stats)
}

struct Jitted {
    jit: JitFunction,
}

impl Jitted {
    fn new(strategy: &str) -> Self {
        let (func, _) = scheduled(strategy, &MachineModel::zen3());
        let jit = JitFunction::compile(&func).unwrap_or_else(|e| panic!("{strategy}: {e}"));
        Self { jit }
    }

    /// Runs the kernel over `buf[ofs..]` blocks while `ofs <= limit`.
    fn run(&self, state: &mut [u32; 4], buf: &[u8], ofs: i32, limit: i32) -> i32 {
        let len = i32::try_from(buf.len()).expect("test buffers are small");
        // SAFETY: the pointer is this JIT function's entry and its signature is the kernel's
        // (`schedlab_kernels::md5::signature`); the kernel checks every read against `len`
        // and writes exactly the four state words.
        unsafe {
            let f: Kernel = std::mem::transmute(self.jit.code_ptr());
            f(state.as_mut_ptr(), buf.as_ptr(), len, ofs, limit)
        }
    }

    fn digest(&self, message: &[u8]) -> [u8; 16] {
        let mut padded = message.to_vec();
        padded.push(0x80);
        while padded.len() % 64 != 56 {
            padded.push(0);
        }
        padded.extend_from_slice(&((message.len() as u64) * 8).to_le_bytes());
        let mut state = INITIAL_STATE;
        let end = self.run(&mut state, &padded, 0, padded.len() as i32 - 64);
        assert_eq!(end as usize, padded.len());
        let mut out = [0u8; 16];
        for (chunk, word) in out.chunks_mut(4).zip(state) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        out
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn md5_under_every_strategy_gives_the_rfc1321_digests_and_agrees_with_md5_crate() {
    let mut rng = StdRng::seed_from_u64(1321);
    for strategy in sched::strategy_names() {
        let kernel = Jitted::new(strategy);
        for (message, expected) in RFC1321 {
            assert_eq!(
                hex(&kernel.digest(message.as_bytes())),
                expected,
                "{strategy}: {message:?}"
            );
        }
        for _ in 0..64 {
            let len = rng.random_range(0..700);
            let message: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let ours = kernel.digest(&message);
            assert_eq!(
                ours[..],
                Md5::digest(&message)[..],
                "{strategy}: {len} bytes"
            );
        }
        // Raw multi-block calls at an offset agree with the RFC reference compression, and a
        // block that would read past the buffer is still reported.
        let buf: Vec<u8> = (0..64 * 5 + 7).map(|_| rng.random()).collect();
        let mut state: [u32; 4] = rng.random();
        let mut expected = state;
        for block in buf[3..3 + 64 * 4].chunks_exact(64) {
            reference_compress(&mut expected, block.try_into().expect("64 bytes"));
        }
        assert_eq!(
            kernel.run(&mut state, &buf, 3, 3 + 64 * 3),
            3 + 64 * 4,
            "{strategy}"
        );
        assert_eq!(state, expected, "{strategy}");
        let mut partial: [u32; 4] = rng.random();
        let mut expected = partial;
        for block in buf[64..64 * 5].chunks_exact(64) {
            reference_compress(&mut expected, block.try_into().expect("64 bytes"));
        }
        assert_eq!(
            kernel.run(&mut partial, &buf, 64, 64 * 5),
            OUT_OF_BOUNDS,
            "{strategy}"
        );
        assert_eq!(
            partial, expected,
            "{strategy}: completed blocks are committed"
        );
    }
}

#[test]
fn two_strategies_with_different_orders_give_different_machine_code() {
    let original = compile(&compress_multi_block(), Target::X86_64).expect("compiles");
    let model = MachineModel::zen3();
    let (source, _) = scheduled("source", &model);
    let (latency, stats) = scheduled("list-latency", &model);
    assert!(stats.moved > 0, "list-latency reorders the kernel");
    let source = compile(&source, Target::X86_64).expect("compiles");
    let latency = compile(&latency, Target::X86_64).expect("compiles");
    assert_eq!(
        source.code, original.code,
        "the identity schedule keeps the code"
    );
    assert_ne!(
        source.code, latency.code,
        "a different order reaches the machine code"
    );
}

#[test]
fn spills_and_pressure_per_strategy() {
    let host = Target::host();
    let mut after: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    println!(
        "strategy        | x86_64 spills/reloads | aarch64 spills/reloads | pressure x86 (before->after) | pressure aarch64 | model cycles x86"
    );
    for strategy in sched::strategy_names() {
        let (x86_func, x86) = scheduled(strategy, &MachineModel::zen3());
        let x86_code = if host == Some(Target::X86_64) {
            JitFunction::compile(&x86_func)
                .unwrap_or_else(|e| panic!("{strategy}: {e}"))
                .compiled()
                .clone()
        } else {
            compile(&x86_func, Target::X86_64).expect("compiles")
        };
        let (a64_func, a64) = scheduled(strategy, &MachineModel::thunderx2());
        let a64_code = compile(&a64_func, Target::Aarch64).expect("compiles");
        let (xs, as_) = (code_stats(&x86_code), code_stats(&a64_code));
        assert_eq!(
            x86.max_pressure_after,
            sched::function_max_pressure(&x86_func)
        );
        after.insert(strategy, x86.max_pressure_after);
        println!(
            "{strategy:15} | {:>10} / {:<10} | {:>10} / {:<10} | {:>3} -> {:<3} | {:>3} -> {:<3} | {} -> {}",
            xs.spills,
            xs.reloads,
            as_.spills,
            as_.reloads,
            x86.max_pressure_before,
            x86.max_pressure_after,
            a64.max_pressure_before,
            a64.max_pressure_after,
            x86.cycles_before,
            x86.cycles_after,
        );
        for target in [Target::S390x, Target::Riscv64] {
            let model = MachineModel::for_target(target.name()).expect("every target has a model");
            let (func, _) = scheduled(strategy, &model);
            compile(&func, target).unwrap_or_else(|e| panic!("{strategy} on {target}: {e}"));
        }
    }
    // The pressure cascade never ends above the latency-only schedule.
    assert!(after["pressure"] <= after["list-latency"], "{after:?}");
}
