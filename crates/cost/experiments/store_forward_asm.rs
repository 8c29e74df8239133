//! An experiment, not a check (`#[ignore]`d, prints, asserts nothing timed): what does a
//! store → load round trip of one 32-bit word cost on this core's dependence chain, by how the
//! address is formed? Memory renaming (a load renamed to the register an older store read) is
//! documented for stack accesses; SHA-256's `W` goes through a pointer argument instead. Each
//! loop is a chain of 8 × (store; load of the same word; `add 1`), addressed A from `rsp`,
//! B from another base register, C from a base register with the store and load 12 other
//! (independent) instructions apart, as in the kernel. Cycles per link come from a dependent
//! `add` chain timed in the same run. Run: `cargo test --release --workspace --test
//! experiments store_forward_asm:: -- --ignored --nocapture` (x86_64; notes/design.md, "Issue 16:
//! forwarding on by default").

#[cfg(target_arch = "x86_64")]
mod x86 {
    use crate::asm_clock::cycle_time;
    use std::arch::asm;
    use std::time::Instant;

    const LINKS: u64 = 8;

    /// A function `$name(iterations, buf)` running `iterations` × 8 links (each the lines
    /// `$link`) through `[base + 0xe4]`, `base` the heap buffer `buf`.
    macro_rules! pointer_chain {
        ($(#[$doc:meta])* $name:ident: [$($link:literal),+ $(,)?]) => {
            $(#[$doc])*
            fn $name(iterations: u64, buf: &mut [u32; 64]) -> u32 {
                let mut x: u32 = 1;
                // SAFETY: touches only buf[57] (offset 0xe4 < 256 bytes).
                unsafe {
                    asm!(
                        "2:",
                        $($link,)+ $($link,)+ $($link,)+ $($link,)+
                        $($link,)+ $($link,)+ $($link,)+ $($link,)+
                        "sub {n}, 1",
                        "jnz 2b",
                        x = inout(reg) x, n = inout(reg) iterations => _,
                        b = in(reg) buf.as_mut_ptr(),
                        options(nostack),
                    );
                }
                x
            }
        };
    }

    /// `iterations` × 8 links through `[rsp + 8]`.
    fn via_stack(iterations: u64) -> u32 {
        let mut x: u32 = 1;
        // SAFETY: reserves 64 bytes below the stack pointer, touches only them, restores rsp.
        unsafe {
            asm!(
                "sub rsp, 64",
                "2:",
                "mov dword ptr [rsp + 8], {x:e}", "mov {x:e}, dword ptr [rsp + 8]", "add {x:e}, 1",
                "mov dword ptr [rsp + 8], {x:e}", "mov {x:e}, dword ptr [rsp + 8]", "add {x:e}, 1",
                "mov dword ptr [rsp + 8], {x:e}", "mov {x:e}, dword ptr [rsp + 8]", "add {x:e}, 1",
                "mov dword ptr [rsp + 8], {x:e}", "mov {x:e}, dword ptr [rsp + 8]", "add {x:e}, 1",
                "mov dword ptr [rsp + 8], {x:e}", "mov {x:e}, dword ptr [rsp + 8]", "add {x:e}, 1",
                "mov dword ptr [rsp + 8], {x:e}", "mov {x:e}, dword ptr [rsp + 8]", "add {x:e}, 1",
                "mov dword ptr [rsp + 8], {x:e}", "mov {x:e}, dword ptr [rsp + 8]", "add {x:e}, 1",
                "mov dword ptr [rsp + 8], {x:e}", "mov {x:e}, dword ptr [rsp + 8]", "add {x:e}, 1",
                "sub {n}, 1",
                "jnz 2b",
                "add rsp, 64",
                x = inout(reg) x, n = inout(reg) iterations => _,
            );
        }
        x
    }

    pointer_chain! {
        /// `iterations` × 8 links through `[base + 0xe4]`, `base` a heap buffer.
        via_pointer: [
            "mov dword ptr [{b} + 0xe4], {x:e}",
            "mov {x:e}, dword ptr [{b} + 0xe4]",
            "add {x:e}, 1",
        ]
    }

    pointer_chain! {
        /// Like [`via_pointer`], the load folded into the `add` (`add x, [b + k]` after a store
        /// of another value), as the kernel's `W[t-16] + W[t-7]` terms are.
        via_pointer_folded: [
            "mov dword ptr [{b} + 0xe4], {x:e}",
            "mov {x:e}, 1",
            "add {x:e}, dword ptr [{b} + 0xe4]",
        ]
    }

    pub fn run() {
        let mut buf = Box::new([0u32; 64]);
        cycle_time();
        for round in 0..3 {
            let cycle = cycle_time();
            let mut line = format!("round {round}:");
            for name in ["A rsp", "B pointer", "C pointer, folded"] {
                let mut best = f64::INFINITY;
                for _ in 0..200 {
                    let start = Instant::now();
                    let x = match name {
                        "A rsp" => via_stack(10_000),
                        "B pointer" => via_pointer(10_000, &mut buf),
                        _ => via_pointer_folded(10_000, &mut buf),
                    };
                    std::hint::black_box(x);
                    best = best.min(start.elapsed().as_secs_f64() / (10_000 * LINKS) as f64);
                }
                line += &format!("  {name}: {:.2} cycles/link", best / cycle);
            }
            println!("{line} ({:.2} GHz)", 1e-9 / cycle);
        }
    }
}

#[test]
#[ignore = "an experiment: prints timings, run by hand"]
fn store_load_round_trip_by_address_form() {
    #[cfg(target_arch = "x86_64")]
    x86::run();
    #[cfg(not(target_arch = "x86_64"))]
    eprintln!("skipping: x86_64 only");
}
