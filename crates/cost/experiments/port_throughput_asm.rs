//! An experiment, not a check (`#[ignore]`d, prints, asserts nothing timed): how many of one
//! kind of instruction does this core execute per cycle? The port tables of
//! `crates/cost/src/ports.rs` come from sources (Intel's optimization manual, Agner
//! Fog, LLVM's scheduling models) that disagree on one case that matters for SHA-256: the
//! 32-bit `lea` Cranelift uses for additions (≈500 per SHA-256 block), which LLVM 19's
//! `sapphirerapids` model puts on port 1 alone and the tables here on every ALU port. Each
//! loop runs 12 *independent* instructions of one form (12 destination registers, sources
//! never written) 1000 times per call: cycles per instruction ≈ 1 / (ports that take it).
//! Two more loops are single dependent chains (`add`, and the 3-component `lea` Cranelift uses
//! for `x + y + constant`): their ratio is the `lea`'s latency in `add`s. The clock probe (a
//! dependent `add` chain) reads low on a loaded machine; the ratios within a round do not
//! depend on it. Run: `cargo
//! test --release --workspace --test experiments port_throughput_asm:: -- --ignored --nocapture`.

#[cfg(target_arch = "x86_64")]
mod x86 {
    use crate::asm_clock::cycle_time;
    use std::arch::asm;
    use std::time::Instant;

    /// 1000 iterations of the 12 instructions `$inst` + loop test.
    macro_rules! block {
        ($($inst:expr),+ $(,)?) => {{
            let start = Instant::now();
            // SAFETY: register-only instructions on the named scratch registers and the
            // counter; no memory or stack is touched.
            unsafe {
                asm!(
                    "mov {n}, 1000",
                    "2:",
                    $($inst,)+
                    "dec {n}",
                    "jnz 2b",
                    n = out(reg) _,
                    out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
                    out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                    out("r12") _, out("r13") _, out("r14") _,
                    in("r15") 7u64,
                    options(nomem, nostack),
                );
            }
            start.elapsed().as_secs_f64() / 12_000.0
        }};
    }

    /// 12 independent `$op`s, one into each scratch register, all reading `$sources`.
    macro_rules! independent {
        ($op:literal, $sources:literal) => {
            independent!(
                @into $op, $sources,
                "eax" "ecx" "edx" "esi" "edi" "r8d" "r9d" "r10d" "r11d" "r12d" "r13d" "r14d"
            )
        };
        (@into $op:literal, $sources:literal, $($dest:literal)+) => {
            block!($(concat!($op, " ", $dest, ", ", $sources)),+)
        };
    }

    /// 12 copies of `$inst`: one dependent chain when it reads its destination.
    macro_rules! chain {
        ($inst:literal) => {
            block!(
                $inst, $inst, $inst, $inst, $inst, $inst, $inst, $inst, $inst, $inst, $inst, $inst
            )
        };
    }

    type Kernel = fn() -> f64;

    fn lea2() -> f64 {
        independent!("lea", "[r15 + r15]")
    }

    fn lea3() -> f64 {
        independent!("lea", "[r15 + r15 + 0x5a827999]")
    }

    fn rorx() -> f64 {
        independent!("rorx", "r15d, 6")
    }

    fn andn() -> f64 {
        independent!("andn", "r15d, r15d")
    }

    fn mov_add() -> f64 {
        // `mov r, imm` + nothing else would be eliminated; `add r, r15` reads its destination,
        // so each register's chain is 1000 long: 12 chains in parallel, 1 cycle each.
        independent!("add", "r15d")
    }

    fn lea3_chain() -> f64 {
        // One dependent chain: cycles per instruction = the 3-component `lea`'s latency.
        chain!("lea eax, [rax + r15 + 0x5a827999]")
    }

    fn add_chain() -> f64 {
        // The same chain with `add`: 1 cycle per instruction, the reference for the one above.
        chain!("add eax, r15d")
    }

    pub fn run() {
        let kernels: [(&str, Kernel); 7] = [
            ("add chain", add_chain),
            ("lea [b + i + d32] chain", lea3_chain),
            ("add r32, r32", mov_add),
            ("lea r32, [b + i]", lea2),
            ("lea r32, [b + i + d32]", lea3),
            ("rorx r32, r32, i", rorx),
            ("andn r32, r32, r32", andn),
        ];
        cycle_time();
        for round in 0..3 {
            let cycle = cycle_time();
            for (name, kernel) in kernels {
                let best = (0..2000).map(|_| kernel()).fold(f64::INFINITY, f64::min);
                let per = best / cycle;
                println!(
                    "round {round} {name:>22}: {per:.3} cycles/instruction = {:.2} per cycle \
                     ({:.2} GHz)",
                    1.0 / per,
                    1e-9 / cycle
                );
            }
        }
    }
}

#[test]
#[ignore = "an experiment: prints timings, run by hand"]
fn instructions_per_cycle_of_one_form() {
    #[cfg(target_arch = "x86_64")]
    x86::run();
    #[cfg(not(target_arch = "x86_64"))]
    eprintln!("skipping: x86_64 only");
}
