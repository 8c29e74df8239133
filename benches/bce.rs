//! 1 MiB throughput of the MD5 multi-block kernel with its bounds checks as the front end
//! emits them (16 per block), merged (1 per block) and predicated (0 in the hot loop), side
//! by side in one run; the same for the `int[]` sum kernel.
//!
//! `cargo bench -p schedlab-bench --bench bce`. Each kernel is JIT-compiled twice: with the
//! backend's plain compile step (`opt_level=none`, the IR's order as is) and after Cranelift's
//! optimise stage. The state is reset every iteration; the whole buffer is one call.
#![allow(missing_docs)]

use cranelift_codegen::ir::Function;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use schedlab_backend::{JitFunction, Target, optimize};
use schedlab_kernels::{int_sum, md5};
use schedlab_passes::bce::{self, BceLevel};
use std::hint::black_box;
use std::time::Duration;

type Kernel = unsafe extern "C" fn(*mut u32, *const u8, i32, i32, i32) -> i32;

const BYTES: usize = 1 << 20;

fn label(level: BceLevel) -> &'static str {
    match level {
        BceLevel::Off => "checked",
        BceLevel::Merge => "merged",
        BceLevel::Predicate => "predicated",
    }
}

/// Compiles `build()` after bce at `level` (and the optimise stage when `opt`).
fn kernel(build: fn() -> Function, level: BceLevel, opt: bool) -> Option<Kernel> {
    let mut func = build();
    if let Err(e) = bce::run(&mut func, level) {
        eprintln!("benches/bce: {e}");
        return None;
    }
    if opt {
        let target = Target::host()?;
        if let Err(e) = optimize(&mut func, target) {
            eprintln!("benches/bce: {e}");
            return None;
        }
    }
    let jit = match JitFunction::compile(&func) {
        Ok(jit) => jit,
        Err(e) => {
            eprintln!("benches/bce: {e}");
            return None;
        }
    };
    let ptr = jit.code_ptr();
    std::mem::forget(jit);
    // SAFETY: both kernels have this signature (`md5::signature()`); the code is never freed.
    Some(unsafe { std::mem::transmute::<*const u8, Kernel>(ptr) })
}

fn buffer() -> Vec<u8> {
    // xorshift: deterministic, incompressible enough for a hash.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..BYTES)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn bench_kernel(
    c: &mut Criterion,
    name: &str,
    build: fn() -> Function,
    len: i32,
    limit: i32,
    data: &[u8],
) {
    for opt in [false, true] {
        let mut group = c.benchmark_group(format!(
            "bce/{name}/1MiB/{}",
            if opt { "optimized" } else { "opt_none" }
        ));
        group.throughput(Throughput::Bytes(BYTES as u64));
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(3));
        let kernels: Vec<(BceLevel, Kernel)> = BceLevel::ALL
            .into_iter()
            .filter_map(|level| kernel(build, level, opt).map(|k| (level, k)))
            .collect();
        let run = |k: Kernel| {
            let mut state = md5::INITIAL_STATE;
            // SAFETY: `data` holds `len` bytes (`len` ints for the int[] kernel) and `state`
            // four words.
            let r = unsafe {
                k(
                    state.as_mut_ptr(),
                    black_box(data.as_ptr()),
                    black_box(len),
                    0,
                    limit,
                )
            };
            (r, state)
        };
        // The variants must agree before their speed means anything.
        let results: Vec<_> = kernels.iter().map(|&(_, k)| run(k)).collect();
        assert!(
            results.windows(2).all(|w| w[0] == w[1]),
            "{name}: variants disagree: {results:?}"
        );
        for &(level, k) in &kernels {
            group.bench_function(label(level), |b| b.iter(|| black_box(run(k))));
        }
        group.finish();
    }
}

fn bce_throughput(c: &mut Criterion) {
    let data = buffer();
    let bytes = i32::try_from(BYTES).unwrap_or(i32::MAX);
    bench_kernel(
        c,
        "md5",
        md5::compress_multi_block,
        bytes,
        bytes - 64,
        &data,
    );
    let ints = bytes / 4;
    bench_kernel(c, "int_sum", int_sum::multi_block, ints, ints - 8, &data);
}

criterion_group!(benches, bce_throughput);
criterion_main!(benches);
