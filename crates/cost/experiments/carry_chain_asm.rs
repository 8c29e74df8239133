//! An experiment, not a check (`#[ignore]`d, prints, asserts nothing timed): does the register
//! move on `mulAdd`'s carry chain cost anything on this core? Cranelift's loop computes the
//! carry as `add; add; mov; shr` (the `mov` copies the 64-bit sum before the shift, the store
//! takes the low half from the copy). If move elimination failed now and then, the 3-cycle
//! chain would run slower than 3 cycles per word. Two hand-written loops of the same shape —
//! A with the `mov` on the chain, B storing before the shift, no `mov` — are timed per word
//! (2048 words, the fastest of 3000 batches) and converted with a clock probed by a dependent
//! `add` chain in the same run (after one warm-up probe). Run: `cargo test --release --workspace --test
//! experiments carry_chain_asm:: -- --ignored --nocapture` (x86_64; notes/design.md, Findings, Golden Cove [EXP-H3]).

#[cfg(target_arch = "x86_64")]
mod x86 {
    use crate::asm_clock::cycle_time;
    use std::arch::asm;
    use std::time::Instant;

    /// One pass of `out[j] = lo(in[j] * k + out[j] + carry)`, `carry = hi(…)`, returning the
    /// carry; `mov_on_chain` selects loop A or B.
    fn mul_add(mov_on_chain: bool, input: &[u32], out: &mut [u32], k: u64) -> u64 {
        assert_eq!(input.len(), out.len());
        let mut carry: u64 = 0;
        // The loop around `$carry_step`, the lines that add the product into the carry,
        // store the low half and shift the carry down.
        macro_rules! word_loop {
            ($($carry_step:literal),+ $(,)?) => {
                asm!(
                    "2:",
                    "mov {t:e}, dword ptr [{inp} + {i}*4]",
                    "imul {t}, {k}",
                    "mov {o:e}, dword ptr [{out} + {i}*4]",
                    "add {c}, {o}",
                    $($carry_step,)+
                    "add {i}, 1",
                    "cmp {i}, {n}",
                    "jl 2b",
                    inp = in(reg) input.as_ptr(), out = in(reg) out.as_mut_ptr(), k = in(reg) k,
                    n = in(reg) input.len(), i = inout(reg) 0usize => _, t = out(reg) _,
                    o = out(reg) _, c = inout(reg) carry,
                    options(nostack),
                )
            };
        }
        // SAFETY: both loops read input[0..n] and read/write out[0..n], n = input.len() =
        // out.len() ≥ 1 (checked by the caller's sizes); no stack or other memory is touched.
        unsafe {
            if mov_on_chain {
                word_loop!(
                    "add {t}, {c}",
                    "mov {c}, {t}",
                    "shr {c}, 32",
                    "mov dword ptr [{out} + {i}*4], {t:e}",
                );
            } else {
                word_loop!(
                    "add {c}, {t}",
                    "mov dword ptr [{out} + {i}*4], {c:e}",
                    "shr {c}, 32",
                );
            }
        }
        carry
    }

    pub fn run() {
        const WORDS: usize = 2048;
        let input: Vec<u32> = (0..WORDS as u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9) | 0x8000_0000)
            .collect();
        let mut out = vec![0u32; WORDS];
        // Warm-up: the first probe of a run can read a low clock (frequency ramp).
        cycle_time();
        for round in 0..3 {
            let cycle = cycle_time();
            for (name, mov_on_chain) in [("A mov on chain", true), ("B no mov", false)] {
                let mut best = f64::INFINITY;
                for _ in 0..3000 {
                    let start = Instant::now();
                    for _ in 0..10 {
                        std::hint::black_box(mul_add(mov_on_chain, &input, &mut out, 0x9e37_79b9));
                    }
                    best = best.min(start.elapsed().as_secs_f64() / 10.0 / WORDS as f64);
                }
                println!(
                    "round {round} {name:>14}: {:.3} ns/word = {:.2} cycles/word ({:.2} GHz)",
                    best * 1e9,
                    best / cycle,
                    1e-9 / cycle
                );
            }
        }
    }
}

#[test]
#[ignore = "an experiment: prints timings, run by hand"]
fn carry_chain_with_and_without_a_move() {
    #[cfg(target_arch = "x86_64")]
    x86::run();
    #[cfg(not(target_arch = "x86_64"))]
    eprintln!("skipping: x86_64 only");
}
