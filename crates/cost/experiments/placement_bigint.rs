//! An experiment, not a check (`#[ignore]`d, prints, asserts nothing timed): how much the speed
//! of `mulAdd`'s check-free loop depends on where its code sits modulo 64 bytes. The JIT aligns
//! each function to 64 bytes, so the loop's offset in the function fixes its placement; here
//! the same bytes are copied to 0, 16, 32 and 48 bytes past a page start and timed per word
//! (2048-word operand, arrays 2 KiB apart modulo 4 KiB, the fastest of 600 batches of 20
//! calls), each strategy compiled with its loop tested at the top (two taken branches per
//! iteration) and rotated (one; `PipelineConfig::rotate_loops`). Run: `cargo test --release --workspace --test experiments placement_bigint:: -- --ignored
//! --nocapture` (x86_64 hosts; notes/design.md, "Loop rotation").

use schedlab_backend::pipeline::{self, PipelineConfig, StageOptions};
use schedlab_backend::{IsaChoice, Target};
use std::time::Instant;

type MulAddFn = unsafe extern "C" fn(*mut i32, i32, *const i32, i32, i32, i32, i32) -> i64;

const WORDS: usize = 2048;
const CODE_BYTES: usize = 1 << 16;

#[test]
#[ignore = "an experiment: prints timings, run by hand"]
fn mul_add_speed_by_code_placement() {
    if Target::host() != Some(Target::X86_64) {
        eprintln!("skipping: x86_64 only");
        return;
    }
    let options = StageOptions {
        isa: IsaChoice::Native,
        ..StageOptions::REPORT
    };
    for (strategy, rotate_loops) in ["source", "list-latency", "pressure", "pressure-remat"]
        .into_iter()
        .flat_map(|s| [(s, false), (s, true)])
    {
        let config = PipelineConfig {
            rotate_loops,
            ..PipelineConfig::with_strategy(strategy)
        };
        let compiled = pipeline::run_with(
            schedlab_kernels::bigint::mul_add(),
            Target::X86_64,
            &config,
            &options,
        )
        .expect("compiles")
        .compiled;
        assert!(compiled.relocs.is_empty() && compiled.code.len() + 64 < CODE_BYTES);
        let layout = if rotate_loops {
            "rotated"
        } else {
            "top-tested"
        };
        let mut line = format!("{strategy:>15} {layout:>10}:");
        for shift in [0usize, 16, 32, 48] {
            // SAFETY: a fresh private anonymous mapping, checked below; unmapped after use.
            let mem = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    CODE_BYTES,
                    libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert_ne!(mem, libc::MAP_FAILED, "mmap");
            let base = mem.cast::<u8>();
            // SAFETY: the code fits the mapping after `shift` bytes (asserted above); the
            // bytes are position-independent (no relocations, no constant-pool access in
            // mulAdd), and the signature is `mul_add_signature()`, spelled by `MulAddFn`.
            let f: MulAddFn = unsafe {
                std::ptr::copy_nonoverlapping(
                    compiled.code.as_ptr(),
                    base.add(shift),
                    compiled.code.len(),
                );
                std::mem::transmute::<*mut u8, MulAddFn>(base.add(shift))
            };
            let mut arrays = vec![0i32; 4096 + 512 + WORDS + 1];
            for (i, w) in arrays[..WORDS].iter_mut().enumerate() {
                *w = (i as i32).wrapping_mul(0x9e37_79b9_u32 as i32) | i32::MIN;
            }
            let (input, output) = arrays.split_at_mut(4096 + 512);
            let n = WORDS as i32;
            let mut fastest = f64::INFINITY;
            for _ in 0..600 {
                let start = Instant::now();
                for _ in 0..20 {
                    // SAFETY: `output` holds n + 1 ints, `input` at least n; the kernel
                    // checks every access against the lengths passed.
                    std::hint::black_box(unsafe {
                        f(output.as_mut_ptr(), n + 1, input.as_ptr(), n, 0, n, 12345)
                    });
                }
                fastest = fastest.min(start.elapsed().as_secs_f64() / 20.0);
            }
            // SAFETY: the mapping made above, no longer used.
            unsafe { libc::munmap(mem, CODE_BYTES) };
            line.push_str(&format!(
                "  +{shift}: {:.3} ns/word",
                fastest * 1e9 / WORDS as f64
            ));
        }
        println!("{line}");
    }
}
