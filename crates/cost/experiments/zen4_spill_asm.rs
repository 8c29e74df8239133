//! An experiment, not a check (`#[ignore]`d, prints, asserts nothing timed): what limits
//! SHA-256's spill-heavy hot loops on an AMD Zen 4 host (notes/design.md, Findings, "Zen 4":
//! "Memory", "The op cache")? Four questions, each answered by hand-written
//! loops timed in one run against the dependent-`add` clock probe of `asm_clock`:
//!
//! 1. *Reload on the chain*: 8 × (store; reload of the same 32-bit word; `add 1`) per
//!    iteration, addressed from `rsp`, from another base register, and with the reload folded
//!    into the `add` (`add x, [rsp + 8]`; Cranelift's SHA-256 reloads are plain `movq`s).
//!    Per link: ≈1–2 with memory renaming (Zen 2's "mirroring" of memory operands), ≈1 + the
//!    store-to-load forwarding latency without.
//! 2. *Front end*: loops of `n` copies of a six-instruction group shaped like the kernel's
//!    code (a folded reload, a `rorx`, a spill store, two ALU ops, a plain reload; 24 bytes,
//!    4 ALU ops: ≈1 cycle per group while the loop streams from the op cache at 6 per cycle,
//!    1.5 from the 4-wide legacy decoders), and of `n` 5-byte `nop`s (≈1/6 and ≈1/4 cycle).
//!    Where cycles per group step up, the loop has left the op cache.
//!    The same groups with the spill store and plain reload replaced by register moves show
//!    what the memory operations cost beside the ALU ops.
//! 3. *Register moves*: 4 independent `add`s with 2 `mov`s beside them, and an
//!    `add`/`mov` chain (moves eliminated: no ALU slot, no latency).
//! 4. *Memory throughput and renaming by distance*: `C` 64-bit chains that each store and
//!    then reload their own slot; 8 stores or 8 loads beside 8 `add`s; one 64-bit chain with
//!    `k` `nop`s between the store and the reload; and a 20-instruction group in SHA-256
//!    `latency-pressure`'s mix with every operation independent (at the ALU bound or not).
//!
//! `queue_binding_on_the_host` times small loops of independent chains and a Σ1-like rotate
//! chain, and simulates them with the free port choice and with Zen 4's binding of ALU uops to a
//! queue at dispatch (`SimOptions::bind_ports_at_allocation`, Zen 4's lead figure; a
//! least-occupied rule was tried and not kept: notes/design.md, Findings, "Zen 4", [ZEN-Q]).
//!
//! Run: `cargo test --release --workspace --test experiments zen4_spill_asm:: -- --ignored
//! --nocapture` (x86_64 with BMI2).

#[cfg(target_arch = "x86_64")]
mod x86 {
    use crate::asm_clock::cycle_time;
    use std::arch::asm;
    use std::time::Instant;

    const LINKS: u64 = 8;

    /// `iterations` × 8 links through `[rsp + 8]`: store, reload, `add 1`.
    fn chain_stack(iterations: u64) -> u32 {
        let mut x: u32 = 1;
        // SAFETY: reserves 64 bytes below the stack pointer, touches only them, restores rsp.
        unsafe {
            asm!(
                "sub rsp, 64",
                "2:",
                ".rept 8",
                "mov dword ptr [rsp + 8], {x:e}", "mov {x:e}, dword ptr [rsp + 8]", "add {x:e}, 1",
                ".endr",
                "sub {n}, 1",
                "jnz 2b",
                "add rsp, 64",
                x = inout(reg) x, n = inout(reg) iterations => _,
            );
        }
        x
    }

    /// Like [`chain_stack`], the reload folded into the `add` (`mov x, 1; add x, [rsp + 8]`).
    fn chain_stack_folded(iterations: u64) -> u32 {
        let mut x: u32 = 1;
        // SAFETY: as in `chain_stack`.
        unsafe {
            asm!(
                "sub rsp, 64",
                "2:",
                ".rept 8",
                "mov dword ptr [rsp + 8], {x:e}", "mov {x:e}, 1", "add {x:e}, dword ptr [rsp + 8]",
                ".endr",
                "sub {n}, 1",
                "jnz 2b",
                "add rsp, 64",
                x = inout(reg) x, n = inout(reg) iterations => _,
            );
        }
        x
    }

    /// Like [`chain_stack`], addressed from a heap pointer.
    fn chain_pointer(iterations: u64, buf: &mut [u32; 64]) -> u32 {
        let mut x: u32 = 1;
        // SAFETY: touches only buf[2].
        unsafe {
            asm!(
                "2:",
                ".rept 8",
                "mov dword ptr [{b} + 8], {x:e}", "mov {x:e}, dword ptr [{b} + 8]", "add {x:e}, 1",
                ".endr",
                "sub {n}, 1",
                "jnz 2b",
                x = inout(reg) x, n = inout(reg) iterations => _, b = in(reg) buf.as_mut_ptr(),
                options(nostack),
            );
        }
        x
    }

    /// A dependent `add` chain of 8 links per iteration (the chains' floor).
    fn chain_add(iterations: u64) -> u32 {
        let mut x: u32 = 1;
        // SAFETY: register-only.
        unsafe {
            asm!(
                "2:",
                ".rept 8",
                "add {x:e}, 1",
                ".endr",
                "sub {n}, 1",
                "jnz 2b",
                x = inout(reg) x, n = inout(reg) iterations => _,
                options(nomem, nostack),
            );
        }
        x
    }

    /// The six-instruction group, `$reps` times per iteration, `iterations` iterations.
    /// Memory form: folded reload, `rorx`, spill store, `xor`, plain reload, `and`.
    macro_rules! group_loop {
        ($reps:literal, $iterations:expr, mem) => {{
            // SAFETY: reserves 64 bytes below rsp and touches only them; restores rsp.
            unsafe {
                asm!(
                    "sub rsp, 64",
                    "2:",
                    concat!(".rept ", $reps),
                    "add eax, dword ptr [rsp + 8]",
                    "rorx ecx, edx, 6",
                    "mov dword ptr [rsp + 16], esi",
                    "xor edi, r8d",
                    "mov r9d, dword ptr [rsp + 24]",
                    "and r10d, r11d",
                    ".endr",
                    "sub {n}, 1",
                    "jnz 2b",
                    "add rsp, 64",
                    n = inout(reg) $iterations => _,
                    out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
                    out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                );
            }
        }};
        ($reps:literal, $iterations:expr, reg) => {{
            // SAFETY: register-only.
            unsafe {
                asm!(
                    "2:",
                    concat!(".rept ", $reps),
                    "add eax, r12d",
                    "rorx ecx, edx, 6",
                    "mov esi, r13d",
                    "xor edi, r8d",
                    "mov r9d, r14d",
                    "and r10d, r11d",
                    ".endr",
                    "sub {n}, 1",
                    "jnz 2b",
                    n = inout(reg) $iterations => _,
                    out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
                    out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                    out("r12") _, out("r13") _, out("r14") _,
                    options(nomem, nostack),
                );
            }
        }};
        ($reps:literal, $iterations:expr, nop) => {{
            // SAFETY: `nop`s only.
            unsafe {
                asm!(
                    "2:",
                    concat!(".rept ", $reps),
                    ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00",
                    ".endr",
                    "sub {n}, 1",
                    "jnz 2b",
                    n = inout(reg) $iterations => _,
                    options(nomem, nostack),
                );
            }
        }};
    }

    /// `$iterations` × 100 groups of the register-only `$line`s, which write only the
    /// registers `$clobber`s name.
    macro_rules! hundred_groups {
        ($iterations:expr, [$($line:literal),+ $(,)?], $($clobber:tt)+) => {{
            // SAFETY: register-only.
            unsafe {
                asm!(
                    "2:",
                    ".rept 100",
                    $($line,)+
                    ".endr",
                    "sub {n}, 1",
                    "jnz 2b",
                    n = inout(reg) $iterations => _,
                    $($clobber)+
                    options(nomem, nostack),
                );
            }
        }};
    }

    /// Register moves beside ALU work, `$reps` groups per iteration: 4 independent `add`s and
    /// 2 moves per group. `indep`: the moves copy registers nobody writes; `fresh`: each move
    /// copies the result of an `add` of the same group (as the kernel's copies do); `chain`:
    /// one dependent `add` → `mov` → `add` → `mov` chain (2 adds + 2 moves per group).
    macro_rules! move_loop {
        ($iterations:expr, indep) => {
            hundred_groups!(
                $iterations,
                [
                    "add eax, 1", "add ecx, 1", "add edx, 1", "add esi, 1",
                    "mov r8, rdi", "mov r9, r10",
                ],
                out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
                out("r8") _, out("r9") _, out("r10") _,
            )
        };
        ($iterations:expr, fresh) => {
            hundred_groups!(
                $iterations,
                [
                    "add eax, 1", "add ecx, 1", "add edx, 1", "add esi, 1",
                    "mov r8, rax", "mov r9, rcx",
                ],
                out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _,
                out("r8") _, out("r9") _,
            )
        };
        ($iterations:expr, fresh32) => {
            hundred_groups!(
                $iterations,
                [
                    "add eax, 1", "add ecx, 1", "add edx, 1", "add esi, 1",
                    "mov r8d, eax", "mov r9d, ecx",
                ],
                out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _,
                out("r8") _, out("r9") _,
            )
        };
        ($iterations:expr, chain) => {
            hundred_groups!(
                $iterations,
                [
                    "add eax, 1", "mov rcx, rax", "add ecx, 1", "mov rax, rcx",
                ],
                out("rax") _, out("rcx") _,
            )
        };
        ($iterations:expr, noadd) => {
            hundred_groups!(
                $iterations,
                [
                    "add eax, 1", "add ecx, 1", "add edx, 1", "add esi, 1",
                ],
                out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _,
            )
        };
    }

    /// `C` chains through `C` stack slots (64-bit, as Cranelift spills): per iteration every
    /// chain stores, then every chain reloads and adds 1, so `C - 1` other stores stand between
    /// a chain's store and its reload.
    macro_rules! interleaved {
        ($iterations:expr; $($r:literal $o:literal),+) => {{
            // SAFETY: reserves 256 bytes below rsp, touches only them, restores rsp.
            unsafe {
                asm!(
                    "subq $256, %rsp",
                    "2:",
                    $(concat!("movq %", $r, ", ", $o, "(%rsp)"),)+
                    $(concat!("movq ", $o, "(%rsp), %", $r), concat!("addq $1, %", $r),)+
                    "decq {n}",
                    "jnz 2b",
                    "addq $256, %rsp",
                    n = inout(reg) $iterations => _,
                    out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
                    out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                    out("r12") _, out("r13") _, out("r14") _,
                    options(att_syntax),
                );
            }
        }};
    }

    /// One 64-bit chain: store, `$k` 5-byte `nop`s, reload, `add 1`.
    macro_rules! spaced {
        ($iterations:expr, $k:literal) => {{
            // SAFETY: reserves 64 bytes below rsp, touches only them, restores rsp.
            unsafe {
                asm!(
                    "subq $64, %rsp",
                    "2:",
                    "movq %rax, 8(%rsp)",
                    concat!(".rept ", $k),
                    ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00",
                    ".endr",
                    "movq 8(%rsp), %rax",
                    "addq $1, %rax",
                    "decq {n}",
                    "jnz 2b",
                    "addq $64, %rsp",
                    n = inout(reg) $iterations => _,
                    out("rax") _,
                    options(att_syntax),
                );
            }
        }};
    }

    /// Eight 64-bit stores (`stores`) or eight reloads of slots no store of the loop writes
    /// (`loads`), each beside an `add` to its own register: memory-operation throughput.
    macro_rules! mem_only {
        ($iterations:expr, stores) => {{
            // SAFETY: reserves 256 bytes below rsp, touches only them, restores rsp.
            unsafe {
                asm!(
                    "subq $256, %rsp",
                    "2:",
                    "movq %rax, 8(%rsp)", "addq $1, %rax", "movq %rcx, 16(%rsp)", "addq $1, %rcx",
                    "movq %rdx, 24(%rsp)", "addq $1, %rdx", "movq %rsi, 32(%rsp)", "addq $1, %rsi",
                    "movq %rdi, 40(%rsp)", "addq $1, %rdi", "movq %r8, 48(%rsp)", "addq $1, %r8",
                    "movq %r9, 56(%rsp)", "addq $1, %r9", "movq %r10, 64(%rsp)", "addq $1, %r10",
                    "decq {n}",
                    "jnz 2b",
                    "addq $256, %rsp",
                    n = inout(reg) $iterations => _,
                    out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
                    out("r8") _, out("r9") _, out("r10") _,
                    options(att_syntax),
                );
            }
        }};
        ($iterations:expr, loads) => {{
            // SAFETY: reserves 256 bytes below rsp, reads only them, restores rsp.
            unsafe {
                asm!(
                    "subq $256, %rsp",
                    "2:",
                    "movq 8(%rsp), %rax", "addq $1, %rax", "movq 16(%rsp), %rcx", "addq $1, %rcx",
                    "movq 24(%rsp), %rdx", "addq $1, %rdx", "movq 32(%rsp), %rsi", "addq $1, %rsi",
                    "movq 40(%rsp), %rdi", "addq $1, %rdi", "movq 48(%rsp), %r8", "addq $1, %r8",
                    "movq 56(%rsp), %r9", "addq $1, %r9", "movq 64(%rsp), %r10", "addq $1, %r10",
                    "decq {n}",
                    "jnz 2b",
                    "addq $256, %rsp",
                    n = inout(reg) $iterations => _,
                    out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
                    out("r8") _, out("r9") _, out("r10") _,
                    options(att_syntax),
                );
            }
        }};
    }

    /// A 20-instruction group in SHA-256 `latency-pressure`'s mix, every operation
    /// independent: 4 `rorx` and 10 `andn` (non-destructive, invariant sources), 2 register
    /// moves, 3 reloads of slots the loop does not store, 1 spill store. ALU bound 3.5 cycles
    /// per group, 6-wide dispatch 3.33.
    macro_rules! mix_loop {
        ($iterations:expr) => {{
            // SAFETY: reserves 256 bytes below rsp, touches only them, restores rsp.
            unsafe {
                asm!(
                    "subq $256, %rsp",
                    "2:",
                    ".rept 10",
                    "rorxl $6, %r8d, %eax", "andnl %r9d, %r8d, %ecx", "andnl %r8d, %r9d, %edx",
                    "movq 8(%rsp), %rsi", "andnl %r10d, %r8d, %edi", "rorxl $11, %r9d, %r11d",
                    "andnl %r8d, %r10d, %r12d", "movq %r8, %r13", "andnl %r9d, %r10d, %r14d",
                    "movq 16(%rsp), %rsi", "rorxl $25, %r10d, %eax", "andnl %r10d, %r9d, %ecx",
                    "movq %r11, 64(%rsp)", "andnl %r8d, %r8d, %edx", "rorxl $2, %r8d, %edi",
                    "movq 24(%rsp), %rsi", "andnl %r9d, %r9d, %r11d", "movq %r9, %r13",
                    "andnl %r10d, %r10d, %r12d", "andnl %r8d, %r9d, %r14d",
                    ".endr",
                    "decq {n}",
                    "jnz 2b",
                    "addq $256, %rsp",
                    n = inout(reg) $iterations => _,
                    in("r8") 3u64, in("r9") 5u64, in("r10") 7u64,
                    out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
                    out("r11") _, out("r12") _, out("r13") _, out("r14") _,
                    options(att_syntax),
                );
            }
        }};
    }

    /// Seconds per unit (`units` units per call) of the fastest of `tries` calls of `f`.
    fn best(tries: usize, units: f64, mut f: impl FnMut()) -> f64 {
        let mut best = f64::INFINITY;
        for _ in 0..tries {
            let start = Instant::now();
            f();
            best = best.min(start.elapsed().as_secs_f64() / units);
        }
        best
    }

    pub fn run() {
        let mut buf = Box::new([0u32; 64]);
        cycle_time();
        for round in 0..3 {
            let cycle = cycle_time();
            println!("round {round} ({:.2} GHz)", 1e-9 / cycle);
            // 1. Reload on the chain.
            let n = 20_000u64;
            let units = (n * LINKS) as f64;
            let a = best(100, units, || {
                std::hint::black_box(chain_add(n));
            });
            let s = best(100, units, || {
                std::hint::black_box(chain_stack(n));
            });
            let f = best(100, units, || {
                std::hint::black_box(chain_stack_folded(n));
            });
            let p = best(100, units, || {
                std::hint::black_box(chain_pointer(n, &mut buf));
            });
            println!(
                "  chain cycles/link: add {:.2}  store+reload+add rsp {:.2}  rsp folded {:.2}  pointer {:.2}",
                a / cycle,
                s / cycle,
                f / cycle,
                p / cycle
            );
            // 5. Memory renaming by distance (cycles per iteration, i.e. per round of chains).
            {
                let iters = 200_000u64;
                let u = iters as f64;
                let c1 = best(20, u, || interleaved!(iters; "rax" "8"));
                let c2 = best(20, u, || interleaved!(iters; "rax" "8", "rcx" "16"));
                let c4 = best(
                    20,
                    u,
                    || interleaved!(iters; "rax" "8", "rcx" "16", "rdx" "24", "rsi" "32"),
                );
                let c8 = best(20, u, || {
                    interleaved!(iters; "rax" "8", "rcx" "16", "rdx" "24", "rsi" "32",
                        "rdi" "40", "r8" "48", "r9" "56", "r10" "64")
                });
                let c12 = best(20, u, || {
                    interleaved!(iters; "rax" "8", "rcx" "16", "rdx" "24", "rsi" "32",
                        "rdi" "40", "r8" "48", "r9" "56", "r10" "64", "r11" "72", "r12" "80",
                        "r13" "88", "r14" "96")
                });
                println!(
                    "  C 64-bit chains, C stores then C reloads+adds, cycles/iteration: C=1 {:.2}  C=2 {:.2}  C=4 {:.2}  C=8 {:.2}  C=12 {:.2}",
                    c1 / cycle,
                    c2 / cycle,
                    c4 / cycle,
                    c8 / cycle,
                    c12 / cycle
                );
                let st = best(20, u, || mem_only!(iters, stores));
                let ld = best(20, u, || mem_only!(iters, loads));
                println!(
                    "  8 stores + 8 adds {:.2}  8 loads + 8 adds {:.2} cycles/iteration",
                    st / cycle,
                    ld / cycle
                );
                let k0 = best(20, u, || spaced!(iters, 0));
                let k8 = best(20, u, || spaced!(iters, 8));
                let k16 = best(20, u, || spaced!(iters, 16));
                let k32 = best(20, u, || spaced!(iters, 32));
                let k64 = best(20, u, || spaced!(iters, 64));
                println!(
                    "  store, k nops, reload, add (64-bit), cycles/iteration: k=0 {:.2}  8 {:.2}  16 {:.2}  32 {:.2}  64 {:.2}",
                    k0 / cycle,
                    k8 / cycle,
                    k16 / cycle,
                    k32 / cycle,
                    k64 / cycle
                );
            }
            // 6. SHA-256's instruction mix, all independent (cycles per 20-instruction group).
            {
                let iters = 20_000u64;
                let mix = best(30, (iters * 10) as f64, || mix_loop!(iters));
                println!(
                    "  latency-pressure mix, 20 independent instructions: {:.3} cycles/group ({:.2} per cycle)",
                    mix / cycle,
                    20.0 * cycle / mix
                );
            }
            // 4. Register moves beside 4 ALU ops per group (cycles per group).
            {
                let iters = 20_000u64;
                let units = (iters * 100) as f64;
                let base = best(30, units, || move_loop!(iters, noadd));
                let indep = best(30, units, || move_loop!(iters, indep));
                let fresh = best(30, units, || move_loop!(iters, fresh));
                let fresh32 = best(30, units, || move_loop!(iters, fresh32));
                let chain = best(30, units, || move_loop!(iters, chain));
                println!(
                    "  moves cycles/group: 4 adds {:.3}  +2 mov r64 (idle sources) {:.3}  +2 mov r64 (fresh) {:.3}  +2 mov r32 (fresh) {:.3}  chain add,mov,add,mov {:.3}",
                    base / cycle,
                    indep / cycle,
                    fresh / cycle,
                    fresh32 / cycle,
                    chain / cycle
                );
            }
            // 2. Front end: cycles per group / per nop by loop size (≈2.4 M groups per call).
            macro_rules! sweep {
                ($kind:ident, $label:literal, $($reps:literal),+) => {{
                    let mut line = format!("  {}:", $label);
                    $(
                        let iters = (2_400_000 / $reps) as u64;
                        let t = best(15, (iters * $reps) as f64, || group_loop!($reps, iters, $kind));
                        line += &format!("  {}: {:.3}", $reps, t / cycle);
                    )+
                    println!("{line}");
                }};
            }
            sweep!(
                mem,
                "group (mem) cycles/group by groups per loop",
                50,
                200,
                400,
                600,
                800,
                1000,
                1400,
                2000
            );
            sweep!(
                reg,
                "group (reg) cycles/group by groups per loop",
                50,
                200,
                400,
                600,
                800,
                1000,
                1400,
                2000
            );
            sweep!(
                nop,
                "5-byte nop cycles/nop by nops per loop",
                300,
                1200,
                2400,
                3600,
                4800,
                6000,
                8400,
                12000
            );
        }
    }
}

/// The loops of [`queue_binding_on_the_host`]: (name, AT&T lines of one iteration).
#[cfg(target_arch = "x86_64")]
const BINDING_LOOPS: &[(&str, &[&str])] = &[
    (
        "2 rorx + 2 add chains",
        &[
            "rorxl $6, %eax, %eax",
            "rorxl $11, %ecx, %ecx",
            "addl %r8d, %edx",
            "addl %r8d, %esi",
        ],
    ),
    (
        "1 rorx + 3 add chains",
        &[
            "rorxl $6, %eax, %eax",
            "addl %r8d, %ecx",
            "addl %r8d, %edx",
            "addl %r8d, %esi",
        ],
    ),
    (
        "4 add chains",
        &[
            "addl %r8d, %eax",
            "addl %r8d, %ecx",
            "addl %r8d, %edx",
            "addl %r8d, %esi",
        ],
    ),
    (
        "2 rorx chains + 2 free adds",
        &[
            "rorxl $6, %eax, %eax",
            "rorxl $11, %ecx, %ecx",
            "leal 1(%r8), %edx",
            "leal 1(%r9), %esi",
        ],
    ),
    (
        "Sigma1-like chain",
        &[
            "rorxl $6, %eax, %ecx",
            "rorxl $11, %eax, %edx",
            "xorl %ecx, %edx",
            "rorxl $25, %eax, %esi",
            "xorl %esi, %edx",
            "addl %edx, %eax",
        ],
    ),
    (
        "Sigma1-like chain + 4 free ops",
        &[
            "rorxl $6, %eax, %ecx",
            "rorxl $11, %eax, %edx",
            "xorl %ecx, %edx",
            "rorxl $25, %eax, %esi",
            "xorl %esi, %edx",
            "addl %edx, %eax",
            "addl %r8d, %r10d",
            "addl %r8d, %r11d",
            "xorl %r9d, %r12d",
            "andl %r9d, %r13d",
        ],
    ),
];

/// Whether the core binds each ALU operation to one of its four scheduler queues at dispatch
/// (an experiment: prints, asserts nothing timed): small loops of independent chains, some
/// `rorx` (ALU1/ALU2 only), and a Σ1-like rotate chain, timed here and simulated with the
/// free port choice and with the binding at dispatch the lead figure uses
/// (`SimOptions::bind_ports_at_allocation`). Per iteration:
/// one group of the lines below, 16 groups unrolled. Run: `cargo test --release --workspace
/// --test experiments zen4_spill_asm::queue_binding -- --ignored --nocapture`.
#[test]
#[ignore = "an experiment: times hand-written loops and prints"]
#[cfg(target_arch = "x86_64")]
fn queue_binding_on_the_host() {
    use schedlab_backend::Target;
    use schedlab_cost::mca::HotLoop;
    use schedlab_cost::models::core_model;
    use schedlab_cost::sim::SimOptions;
    use schedlab_cost::simulated_with;
    use std::arch::asm;
    use std::time::Instant;
    const ITERS: u64 = 200_000;
    fn run(kind: usize) -> f64 {
        let start = Instant::now();
        // SAFETY: register-only loops; the counter counts down to zero.
        unsafe {
            match kind {
                0 => asm!("2:", ".rept 16", "rorxl $6, %eax, %eax", "rorxl $11, %ecx, %ecx",
                    "addl %r8d, %edx", "addl %r8d, %esi", ".endr", "decq {n}", "jnz 2b",
                    n = inout(reg) ITERS => _, out("rax") _, out("rcx") _, out("rdx") _,
                    out("rsi") _, in("r8") 3u64, options(att_syntax, nomem, nostack)),
                1 => asm!("2:", ".rept 16", "rorxl $6, %eax, %eax", "addl %r8d, %ecx",
                    "addl %r8d, %edx", "addl %r8d, %esi", ".endr", "decq {n}", "jnz 2b",
                    n = inout(reg) ITERS => _, out("rax") _, out("rcx") _, out("rdx") _,
                    out("rsi") _, in("r8") 3u64, options(att_syntax, nomem, nostack)),
                2 => asm!("2:", ".rept 16", "addl %r8d, %eax", "addl %r8d, %ecx",
                    "addl %r8d, %edx", "addl %r8d, %esi", ".endr", "decq {n}", "jnz 2b",
                    n = inout(reg) ITERS => _, out("rax") _, out("rcx") _, out("rdx") _,
                    out("rsi") _, in("r8") 3u64, options(att_syntax, nomem, nostack)),
                3 => asm!("2:", ".rept 16", "rorxl $6, %eax, %eax", "rorxl $11, %ecx, %ecx",
                    "leal 1(%r8), %edx", "leal 1(%r9), %esi", ".endr", "decq {n}", "jnz 2b",
                    n = inout(reg) ITERS => _, out("rax") _, out("rcx") _, out("rdx") _,
                    out("rsi") _, in("r8") 3u64, in("r9") 5u64,
                    options(att_syntax, nomem, nostack)),
                4 => asm!("2:", ".rept 16", "rorxl $6, %eax, %ecx", "rorxl $11, %eax, %edx",
                    "xorl %ecx, %edx", "rorxl $25, %eax, %esi", "xorl %esi, %edx",
                    "addl %edx, %eax", ".endr", "decq {n}", "jnz 2b",
                    n = inout(reg) ITERS => _, out("rax") _, out("rcx") _, out("rdx") _,
                    out("rsi") _, options(att_syntax, nomem, nostack)),
                _ => asm!("2:", ".rept 16", "rorxl $6, %eax, %ecx", "rorxl $11, %eax, %edx",
                    "xorl %ecx, %edx", "rorxl $25, %eax, %esi", "xorl %esi, %edx",
                    "addl %edx, %eax", "addl %r8d, %r10d", "addl %r8d, %r11d",
                    "xorl %r9d, %r12d", "andl %r9d, %r13d", ".endr", "decq {n}", "jnz 2b",
                    n = inout(reg) ITERS => _, out("rax") _, out("rcx") _, out("rdx") _,
                    out("rsi") _, in("r8") 3u64, in("r9") 5u64, out("r10") _, out("r11") _,
                    out("r12") _, out("r13") _, options(att_syntax, nomem, nostack)),
            }
        }
        start.elapsed().as_secs_f64() / (ITERS * 16) as f64
    }
    let mut best = [f64::INFINITY; 6];
    for _ in 0..15 {
        let cycle = crate::asm_clock::cycle_time();
        for (k, b) in best.iter_mut().enumerate() {
            *b = b.min(run(k) / cycle);
        }
    }
    let m = core_model(Target::X86_64, "znver4").expect("model");
    for ((name, lines), measured) in BINDING_LOOPS.iter().zip(best) {
        let mut text: Vec<String> = Vec::new();
        for _ in 0..16 {
            text.extend(lines.iter().map(|l| l.to_string()));
        }
        text.push("decq %rdi".into());
        text.push("jne 0x0".into());
        let body = HotLoop::from_lines(&text);
        let sim =
            |o: SimOptions| simulated_with(Target::X86_64, &body, m, o).unwrap_or(f64::NAN) / 16.0;
        println!(
            "{name:30}: measured {measured:.3} cycles/group | znver4 simulated: free ports {:.3}, bound at dispatch (cited) {:.3}",
            sim(SimOptions {
                bind_ports_at_allocation: false,
                ..SimOptions::CITED
            }),
            sim(SimOptions::CITED),
        );
    }
}

#[test]
#[ignore = "an experiment: prints timings, run by hand"]
fn zen4_reload_chain_and_front_end() {
    #[cfg(target_arch = "x86_64")]
    x86::run();
    #[cfg(not(target_arch = "x86_64"))]
    eprintln!("skipping: x86_64 only");
}
