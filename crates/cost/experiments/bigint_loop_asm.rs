//! An experiment, not a check (`#[ignore]`d, prints, asserts nothing timed): why does
//! `mulAdd`'s hot loop, whose carry chain (`add`, `add`, `shr`: 3 cycles) and 18 issue slots
//! (÷ 6 per cycle) both say 3.00 cycles per word, run at ≈3.16 on this core? The loop the JIT
//! emits for `mulAdd` (default strategy, host features) is printed, copied instruction for
//! instruction (`V0`, checked to store the same words as the JIT's function) and timed beside
//! variants that each change one thing: the multiply, the loads and stores, the same-register
//! zero-extending moves, the number of issue slots, the ALU uops off the chain, where the
//! store goes, the loop's alignment. A second family starts from the chain alone (`C4`) and
//! adds issue slots (`nop`s, which take no port), ALU work, or port-1 uops (`imul`, `popcnt`)
//! beside chains that can or cannot use port 1. Every loop runs over 2048 words; a figure is
//! the fastest of many batches, printed in cycles of a dependent `add` chain timed in the same
//! round and as `×3/C4`: 3 × its time ÷ the time of C4 (which cannot run under 3 cycles), the
//! two timed alternately — the unit to read, since this machine's clock moves with the other
//! cores' load. Then: the JIT's `mulAdd` and `squareToLen`, the bench's `squareToLen` fit on
//! the JIT function and on hand loops run in its row pattern, and cycles per call by pass
//! length. Run: `cargo test --release --workspace --test experiments bigint_loop_asm:: -- --ignored
//! --nocapture` (x86_64; notes/design.md, Findings, Golden Cove [EXP-H3] and Zen 4 [EXP-Z4]).

#[cfg(target_arch = "x86_64")]
mod x86 {
    use crate::asm_clock::cycle_time;
    use schedlab_backend::pipeline::{PipelineConfig, StageOptions, run_ir_stages_with};
    use schedlab_backend::{JitFunction, Target};
    use schedlab_cost::mca::hot_loop;
    use std::arch::asm;
    use std::time::Instant;

    /// Words per pass (as the bench's largest `mulAdd` size).
    pub const WORDS: usize = 2048;
    /// The multiplier (the bench's `MUL_ADD_K`).
    const K: u32 = 0x9e37_79b9;

    /// `in` (WORDS ints), then `out` (WORDS + 1 ints) 2048 bytes past a 4 KiB multiple, as
    /// the bench lays them out; `other` is a second output array far from both.
    pub struct Arrays {
        mem: Vec<u32>,
        other: Vec<u32>,
        /// Words per pass (≤ WORDS): the loop runs over in[0..len] and out[1..=len].
        len: usize,
        /// The carry out of the previous pass, the next pass's carry in: consecutive passes
        /// form one dependence chain, so short passes cannot overlap in the out-of-order
        /// window (a call of the real kernels depends on the previous one through memory).
        carry: u64,
    }

    const OUT_AT: usize = WORDS + 512;

    impl Arrays {
        pub fn new() -> Self {
            let mut state = 0x2545_f491_4f6c_dd1d_u64;
            let mut mem = vec![0u32; OUT_AT + WORDS + 1];
            for word in &mut mem[..WORDS] {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *word = (state >> 32) as u32 | 0x8000_0000;
            }
            Self {
                mem,
                other: vec![0u32; WORDS + 1 + 4096],
                len: WORDS,
                carry: 0,
            }
        }

        fn input_ptr(&self) -> *const u32 {
            self.mem.as_ptr()
        }

        fn out_ptr(&mut self) -> *mut u32 {
            self.mem[OUT_AT..].as_mut_ptr()
        }

        fn other_ptr(&mut self) -> *mut u32 {
            self.other[2048..].as_mut_ptr()
        }
    }

    /// One pass of a hand-written loop over `a`: the registers are those of the JIT's loop
    /// (`rdi` = out, `r11` = &in[j] walking down to `r9` = &in[0], `r8`/`rcx` = out index,
    /// `rax` = k, `rsi` = carry, `rdx`/`r10` scratch; `r12` = the second output array,
    /// `r13`–`r15` scratch). `pad` bytes of `nop` after a 64-byte boundary place the loop.
    macro_rules! pass {
        ($pad:expr; $($inst:literal),+ $(,)?) => {{
            fn run(a: &mut Arrays) -> u64 {
                let carry: u64;
                let other = a.other_ptr();
                let out = a.out_ptr();
                let input = a.input_ptr();
                let len = a.len.clamp(1, WORDS);
                // SAFETY: every variant reads in[0..len] through r11 (from &in[len-1] down
                // to r9 = &in[0]), and reads/writes out[1..=len] (or other[1..=len]) at
                // index rcx = r8 (from len down to 1), len ≤ WORDS; chain-only variants
                // touch no memory.
                // Scratch registers are declared clobbered; the stack is not used.
                unsafe {
                    asm!(
                        ".p2align 6",
                        ".skip {pad}, 0x90",
                        $($inst,)+
                        pad = const $pad,
                        in("rdi") out,
                        inout("r11") input.add(len - 1) => _,
                        in("r9") input,
                        inout("r8") len => _,
                        inout("rcx") len => _,
                        in("rax") u64::from(K),
                        inout("rsi") a.carry => carry,
                        inout("rdx") 0u64 => _,
                        inout("r10") 0u64 => _,
                        in("r12") other,
                        out("r13") _, out("r14") _, out("r15") _,
                        options(att_syntax, nostack),
                    );
                }
                a.carry = carry;
                carry
            }
            run as fn(&mut Arrays) -> u64
        }};
    }

    /// The JIT's loop (V0) with its loop control; `$body` replaces the 13 instructions from
    /// the first load up to and including `shr` (instructions 1–12 of the listing).
    macro_rules! jit_shape {
        ($pad:expr; $($inst:literal),+ $(,)?) => {
            pass!($pad;
                "2:",
                $($inst,)+
                "addq $-4, %r11",
                "movslq %r8d, %rcx",
                "movq %r11, %rdx",
                "subq %r9, %rdx",
                "testq %rdx, %rdx",
                "jge 2b",
            )
        };
    }

    /// The JIT's body (V0), `pad` bytes past a 64-byte boundary.
    macro_rules! v0 {
        ($pad:expr) => {
            jit_shape!($pad;
                "movl (%r11), %edx",
                "movl %edx, %edx",
                "imulq %rax, %rdx",
                "leaq (%rcx), %r10",
                "movl (%rdi,%r10,4), %r10d",
                "movl %r10d, %r10d",
                "addq %r10, %rsi",
                "addq %rdx, %rsi",
                "addq $0, %rcx",
                "movl %esi, (%rdi,%rcx,4)",
                "addl $-1, %r8d",
                "shrq $32, %rsi",
            )
        };
    }

    /// The chain alone (`add`, `add`, `shr` on rsi; rdx and r10 stay constant), a fused
    /// `dec`/`jnz` on r8 (WORDS iterations), and the given filler instructions.
    macro_rules! chain {
        ($($inst:literal),* $(,)?) => {
            pass!(10;
                "2:",
                "addq %r10, %rsi",
                "addq %rdx, %rsi",
                $($inst,)*
                "shrq $32, %rsi",
                "decq %r8",
                "jnz 2b",
            )
        };
    }

    /// A named loop and what it changes.
    type Variant = (&'static str, fn(&mut Arrays) -> u64);

    fn variants() -> Vec<Variant> {
        vec![
            (
                "V0  JIT loop copy (18 slots; loop at +10 like the JIT's)",
                v0!(10),
            ),
            ("V0a V0 at +0 of 64", v0!(0)),
            ("V0b V0 at +16", v0!(16)),
            ("V0c V0 at +32", v0!(32)),
            ("V0d V0 at +48", v0!(48)),
            ("V0e V0 at +58 (crosses a 64-byte line twice)", v0!(58)),
            (
                "V1  imul -> nop (18 slots, no p1 multiply)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "movl %edx, %edx",
                    "nop",
                    "leaq (%rcx), %r10",
                    "movl (%rdi,%r10,4), %r10d",
                    "movl %r10d, %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "addq $0, %rcx",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V2  two zero-extending movl r,r -> nop (18 slots, 2 ALU uops fewer)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "nop",
                    "imulq %rax, %rdx",
                    "leaq (%rcx), %r10",
                    "movl (%rdi,%r10,4), %r10d",
                    "nop",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "addq $0, %rcx",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V3  V2 + lea/add$0 -> nop (18 slots, 4 ALU uops fewer)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "nop",
                    "imulq %rax, %rdx",
                    "nop",
                    "movl (%rdi,%rcx,4), %r10d",
                    "nop",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "nop",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V4  V3 without its 4 nops (14 slots)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "imulq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V5  nop dropped-add$0: 17 slots, same ALU uops but one",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "movl %edx, %edx",
                    "imulq %rax, %rdx",
                    "leaq (%rcx), %r10",
                    "movl (%rdi,%r10,4), %r10d",
                    "movl %r10d, %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V6  store laminated: add$0 -> lea r13=&out[k], store (%r13) (17 slots)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "movl %edx, %edx",
                    "imulq %rax, %rdx",
                    "leaq (%rcx), %r10",
                    "movl (%rdi,%r10,4), %r10d",
                    "movl %r10d, %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "leaq (%rdi,%rcx,4), %r13",
                    "movl %esi, (%r13)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V7  V6 + 1 nop (18 slots again, same uops)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "movl %edx, %edx",
                    "imulq %rax, %rdx",
                    "leaq (%rcx), %r10",
                    "movl (%rdi,%r10,4), %r10d",
                    "movl %r10d, %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "leaq (%rdi,%rcx,4), %r13",
                    "movl %esi, (%r13)",
                    "nop",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V8  V0, store to another array (no store->load one word apart)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "movl %edx, %edx",
                    "imulq %rax, %rdx",
                    "leaq (%rcx), %r10",
                    "movl (%rdi,%r10,4), %r10d",
                    "movl %r10d, %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "addq $0, %rcx",
                    "movl %esi, (%r12,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V9  V0, out[k] load -> movl %ecx,%r10d (no load on the chain's input)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "movl %edx, %edx",
                    "imulq %rax, %rdx",
                    "leaq (%rcx), %r10",
                    "movl %ecx, %r10d",
                    "movl %r10d, %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "addq $0, %rcx",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V10 V0, chain order: product added first (out[k] last)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "movl %edx, %edx",
                    "imulq %rax, %rdx",
                    "leaq (%rcx), %r10",
                    "movl (%rdi,%r10,4), %r10d",
                    "movl %r10d, %r10d",
                    "addq %rdx, %rsi",
                    "addq %r10, %rsi",
                    "addq $0, %rcx",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V11 V0, out[k] + product summed off the chain (chain: add, shr = 2)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "movl %edx, %edx",
                    "imulq %rax, %rdx",
                    "leaq (%rcx), %r10",
                    "movl (%rdi,%r10,4), %r10d",
                    "movl %r10d, %r10d",
                    "addq %r10, %rdx",
                    "addq %rdx, %rsi",
                    "addq $0, %rcx",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V12 imul kept but its product unused (chain adds the loaded word)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "movl %edx, %r13d",
                    "imulq %rax, %r13",
                    "leaq (%rcx), %r10",
                    "movl (%rdi,%r10,4), %r10d",
                    "movl %r10d, %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "addq $0, %rcx",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V13 V4 (14 slots) with imul -> add %rax,%rdx (1-cycle, any ALU port)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "addq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V14 V4 with imul -> 3 dependent adds (3-cycle path on ALU ports, 16 slots)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "addq %rax, %rdx",
                    "addq %rax, %rdx",
                    "addq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V15 V4 with imul -> popcnt (3-cycle, port 1 like imul)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "popcntq %rdx, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "V16 V4 with the imul's product added last (chain: add out[k], add product, shr)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "imulq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                    "nop",
                ),
            ),
            (
                "V17 V4 (14 slots) with V11's sum: out[k] + product off the chain (chain 2)",
                jit_shape!(10;
                    "movl (%r11), %edx",
                    "imulq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "S0  squareToLen's JIT inner loop, registers renamed to V0's (lea on the chain)",
                jit_shape!(14;
                    "movl (%r11), %edx",
                    "movl %edx, %edx",
                    "imulq %rax, %rdx",
                    "leaq (%rcx), %r10",
                    "movl (%rdi,%r10,4), %r10d",
                    "movl %r10d, %r10d",
                    "addq %rsi, %r10",
                    "leaq (%r10,%rdx), %rsi",
                    "leaq (%rcx), %rdx",
                    "movl %esi, (%rdi,%rdx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            ("C4  chain alone (4 slots)", chain!()),
            (
                "C12 chain + 8 nop (12 slots)",
                chain!("nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop"),
            ),
            (
                "C15 chain + 11 nop (15 slots)",
                chain!(
                    "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop"
                ),
            ),
            (
                "C16 chain + 12 nop (16 slots)",
                chain!(
                    "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop",
                    "nop"
                ),
            ),
            (
                "C17 chain + 13 nop (17 slots)",
                chain!(
                    "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop",
                    "nop", "nop"
                ),
            ),
            (
                "C18 chain + 14 nop (18 slots)",
                chain!(
                    "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop",
                    "nop", "nop", "nop"
                ),
            ),
            (
                "C19 chain + 15 nop (19 slots)",
                chain!(
                    "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop",
                    "nop", "nop", "nop", "nop"
                ),
            ),
            (
                "CI  chain + imul off the chain (movq %rax,%r13; imulq %rax,%r13)",
                chain!("movq %rax, %r13", "imulq %rax, %r13"),
            ),
            (
                "CP  chain + product feeding its 2nd add (movq %rax,%rdx; imulq %rax,%rdx)",
                pass!(10;
                    "2:",
                    "movq %rax, %rdx",
                    "imulq %rax, %rdx",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "shrq $32, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CL  chain + load of in[j] + imul feeding its 2nd add",
                pass!(10;
                    "2:",
                    "movl (%r11), %edx",
                    "imulq %rax, %rdx",
                    "addq $-4, %r11",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "shrq $32, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CLP CL + popcnt instead of imul (port 1, 3 cycles)",
                pass!(10;
                    "2:",
                    "movl (%r11), %edx",
                    "popcntq %rdx, %rdx",
                    "addq $-4, %r11",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "shrq $32, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CLA CL + 3 dependent adds instead of imul (ALU ports, 3 cycles)",
                pass!(10;
                    "2:",
                    "movl (%r11), %edx",
                    "addq %rax, %rdx",
                    "addq %rax, %rdx",
                    "addq %rax, %rdx",
                    "addq $-4, %r11",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "shrq $32, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CI2 chain + two imuls off the chain",
                chain!(
                    "movq %rax, %r13",
                    "imulq %rax, %r13",
                    "movq %rax, %r14",
                    "imulq %rax, %r14"
                ),
            ),
            (
                "CIP chain + popcnt off the chain (port 1, 3 cycles)",
                chain!("popcntq %rax, %r13"),
            ),
            (
                "CA3 chain of 3 adds (no shift; any ALU port)",
                pass!(10;
                    "2:",
                    "addq %r10, %rsi",
                    "addq %rdx, %rsi",
                    "addq %rdx, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CA3I CA3 + imul off the chain",
                pass!(10;
                    "2:",
                    "addq %r10, %rsi",
                    "movq %rax, %r13",
                    "imulq %rax, %r13",
                    "addq %rdx, %rsi",
                    "addq %rdx, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CR  chain of 3 rotates by 5 (ports 0 and 6 only)",
                pass!(10;
                    "2:",
                    "rorq $5, %rsi",
                    "rorq $5, %rsi",
                    "rorq $5, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CRI CR + imul off the chain",
                pass!(10;
                    "2:",
                    "rorq $5, %rsi",
                    "movq %rax, %r13",
                    "imulq %rax, %r13",
                    "rorq $5, %rsi",
                    "rorq $5, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CR2I CR + two imuls off the chain",
                pass!(10;
                    "2:",
                    "rorq $5, %rsi",
                    "movq %rax, %r13",
                    "imulq %rax, %r13",
                    "movq %rax, %r14",
                    "imulq %rax, %r14",
                    "rorq $5, %rsi",
                    "rorq $5, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CS  chain + scaled lea off the chain (leaq (%rax,%rax,2),%r13)",
                chain!("leaq (%rax,%rax,2), %r13"),
            ),
            (
                "LT  12 independent scaled leas per iteration (cycles/iteration: 12 / ports)",
                pass!(10;
                    "2:",
                    "leaq (%rax,%rax,2), %r13", "leaq (%rax,%rax,2), %r14",
                    "leaq (%rax,%rax,2), %r15", "leaq (%rax,%rax,2), %rdx",
                    "leaq (%rax,%rax,2), %r10", "leaq (%rax,%rax,2), %r13",
                    "leaq (%rax,%rax,2), %r14", "leaq (%rax,%rax,2), %r15",
                    "leaq (%rax,%rax,2), %rdx", "leaq (%rax,%rax,2), %r10",
                    "leaq (%rax,%rax,2), %r13", "leaq (%rax,%rax,2), %r14",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "LL  3 dependent scaled leas per iteration (cycles/iteration: 3 x latency)",
                pass!(10;
                    "2:",
                    "leaq (%rsi,%rsi,2), %rsi",
                    "leaq (%rsi,%rsi,2), %rsi",
                    "leaq (%rsi,%rsi,2), %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CM  chain of one imul (3 cycles, port 1)",
                pass!(10;
                    "2:",
                    "imulq %rax, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CMI CM + an independent imul (two 3-cycle port-1 uops per 3 cycles)",
                pass!(10;
                    "2:",
                    "imulq %rax, %rsi",
                    "movq %rax, %r13",
                    "imulq %rax, %r13",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CMA chain of imul + add (4 cycles)",
                pass!(10;
                    "2:",
                    "imulq %rax, %rsi",
                    "addq %rdx, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "CMAI CMA + an independent imul",
                pass!(10;
                    "2:",
                    "imulq %rax, %rsi",
                    "movq %rax, %r13",
                    "imulq %rax, %r13",
                    "addq %rdx, %rsi",
                    "decq %r8",
                    "jnz 2b",
                ),
            ),
            (
                "A6  chain + 6 mov imm + 8 nop (18 slots, 10 ALU uops)",
                chain!(
                    "movl $1, %r13d",
                    "movl $1, %r14d",
                    "movl $1, %r15d",
                    "movl $1, %r13d",
                    "movl $1, %r14d",
                    "movl $1, %r15d",
                    "nop",
                    "nop",
                    "nop",
                    "nop",
                    "nop",
                    "nop",
                    "nop",
                    "nop"
                ),
            ),
            (
                "A10 chain + 10 mov imm + 4 nop (18 slots, 14 ALU uops)",
                chain!(
                    "movl $1, %r13d",
                    "movl $1, %r14d",
                    "movl $1, %r15d",
                    "movl $1, %r13d",
                    "movl $1, %r14d",
                    "movl $1, %r15d",
                    "movl $1, %r13d",
                    "movl $1, %r14d",
                    "movl $1, %r15d",
                    "movl $1, %r13d",
                    "nop",
                    "nop",
                    "nop",
                    "nop"
                ),
            ),
            (
                "A14 chain + 14 mov imm (18 slots, 18 ALU uops: 3.6 on 5 ALU ports)",
                chain!(
                    "movl $1, %r13d",
                    "movl $1, %r14d",
                    "movl $1, %r15d",
                    "movl $1, %r13d",
                    "movl $1, %r14d",
                    "movl $1, %r15d",
                    "movl $1, %r13d",
                    "movl $1, %r14d",
                    "movl $1, %r15d",
                    "movl $1, %r13d",
                    "movl $1, %r14d",
                    "movl $1, %r15d",
                    "movl $1, %r13d",
                    "movl $1, %r14d"
                ),
            ),
        ]
    }

    /// The JIT's `mulAdd` and `squareToLen` as the bench compiles them (default strategy,
    /// host features), with their hot loops printed.
    fn jit(kernel: fn() -> cranelift_codegen::ir::Function, name: &str) -> JitFunction {
        let mut func = kernel();
        let config = PipelineConfig::default();
        run_ir_stages_with(&mut func, Target::X86_64, &config, &StageOptions::jit(None))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let compiled = JitFunction::compile(&func).unwrap_or_else(|e| panic!("{name}: {e}"));
        match hot_loop(compiled.compiled()) {
            Ok(l) => {
                println!(
                    "{name}: hot loop at code offset {:#x} (code at {:p}; {} instructions)",
                    l.header,
                    compiled.code_ptr(),
                    l.insts.len()
                );
                for inst in &l.insts {
                    println!("  {:#6x}  {}", inst.addr, inst.text);
                }
            }
            Err(e) => println!("{name}: hot loop not printed ({e})"),
        }
        compiled
    }

    /// The JIT's current `mulAdd` loop (V17: the product and out[k] summed off the carry
    /// chain, chain `add`, `shr` = 2 cycles, 13 macro-ops with `test`/`jge` fused) and
    /// variants that each change one thing, for the Zen 4 question (notes/design.md,
    /// Findings, "Zen 4", [EXP-Z4]): the multiply, the loop control's ALU operations, the
    /// sign-extending index move, the store, the loads, filler `nop`s.
    macro_rules! jit13 {
        ($($inst:literal),+ $(,)?) => {
            jit_shape!(10; $($inst,)+)
        };
    }

    fn zen_variants() -> Vec<Variant> {
        vec![
            (
                "Z0  JIT loop (= V17: 14 instructions, 13 macro-ops)",
                jit13!(
                    "movl (%r11), %edx",
                    "imulq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "Z1  imul -> add %rax,%rdx (no multiply)",
                jit13!(
                    "movl (%r11), %edx",
                    "addq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "Z2  imul -> nop",
                jit13!(
                    "movl (%r11), %edx",
                    "nop",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "Z3  store -> nop (no store)",
                jit13!(
                    "movl (%r11), %edx",
                    "imulq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx",
                    "addq %rdx, %rsi",
                    "nop",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "Z4  store to the other array (r12)",
                jit13!(
                    "movl (%r11), %edx",
                    "imulq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx",
                    "addq %rdx, %rsi",
                    "movl %esi, (%r12,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "Z5  store data off the chain (stores %eax)",
                jit13!(
                    "movl (%r11), %edx",
                    "imulq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx",
                    "addq %rdx, %rsi",
                    "movl %eax, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "Z6  out[k] load -> movl %ecx,%r10d",
                jit13!(
                    "movl (%r11), %edx",
                    "imulq %rax, %rdx",
                    "movl %ecx, %r10d",
                    "addq %r10, %rdx",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                ),
            ),
            (
                "Z7  + 2 nop (15 macro-ops)",
                jit13!(
                    "movl (%r11), %edx",
                    "imulq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                    "nop",
                    "nop",
                ),
            ),
            (
                "Z8  + 2 ALU ops off every chain (movl $1 -> r13d, r14d)",
                jit13!(
                    "movl (%r11), %edx",
                    "imulq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx",
                    "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d",
                    "shrq $32, %rsi",
                    "movl $1, %r13d",
                    "movl $1, %r14d",
                ),
            ),
            (
                "Z9  addl + movslq index -> decq %rcx (one ALU uop fewer)",
                pass!(10;
                    "2:",
                    "movl (%r11), %edx", "imulq %rax, %rdx", "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx", "addq %rdx, %rsi", "movl %esi, (%rdi,%rcx,4)",
                    "decq %rcx", "shrq $32, %rsi",
                    "addq $-4, %r11", "movq %r11, %rdx", "subq %r9, %rdx", "testq %rdx, %rdx",
                    "jge 2b",
                ),
            ),
            (
                "Z10 loop control cmpq %r9,%r11; jge (no movq/subq/testq)",
                pass!(10;
                    "2:",
                    "movl (%r11), %edx", "imulq %rax, %rdx", "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx", "addq %rdx, %rsi", "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d", "shrq $32, %rsi",
                    "addq $-4, %r11", "movslq %r8d, %rcx", "cmpq %r9, %r11",
                    "jge 2b",
                ),
            ),
            (
                "Z11 Z10 with decq %rcx for addl/movslq (7 ALU uops + branch)",
                pass!(10;
                    "2:",
                    "movl (%r11), %edx", "imulq %rax, %rdx", "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx", "addq %rdx, %rsi", "movl %esi, (%rdi,%rcx,4)",
                    "decq %rcx", "shrq $32, %rsi",
                    "addq $-4, %r11", "cmpq %r9, %r11",
                    "jge 2b",
                ),
            ),
            (
                "Z12 Z11 with imul -> add (no multiply)",
                pass!(10;
                    "2:",
                    "movl (%r11), %edx", "addq %rax, %rdx", "movl (%rdi,%rcx,4), %r10d",
                    "addq %r10, %rdx", "addq %rdx, %rsi", "movl %esi, (%rdi,%rcx,4)",
                    "decq %rcx", "shrq $32, %rsi",
                    "addq $-4, %r11", "cmpq %r9, %r11",
                    "jge 2b",
                ),
            ),
            (
                "Z13 chain (add, shr) + dec/jnz alone",
                pass!(10;
                    "2:",
                    "addq %rdx, %rsi", "shrq $32, %rsi", "decq %r8", "jnz 2b",
                ),
            ),
            (
                "Z14 chain (add, shr) + imul off the chain",
                pass!(10;
                    "2:",
                    "movq %rax, %r13", "imulq %rax, %r13",
                    "addq %rdx, %rsi", "shrq $32, %rsi", "decq %r8", "jnz 2b",
                ),
            ),
            (
                "Z15 chain (add, shr) + 6 ALU ops (movl $1)",
                pass!(10;
                    "2:",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d",
                    "addq %rdx, %rsi", "shrq $32, %rsi", "decq %r8", "jnz 2b",
                ),
            ),
            (
                "Z16 Z15 + imul off the chain (8 ALU-pipe uops + branch)",
                pass!(10;
                    "2:",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d",
                    "movl $1, %r13d", "movl $1, %r14d", "movl %eax, %r15d",
                    "imulq %rax, %r15",
                    "addq %rdx, %rsi", "shrq $32, %rsi", "decq %r8", "jnz 2b",
                ),
            ),
            (
                "Z17 Z0 in hoist-loads' order (both loads first)",
                pass!(10;
                    "2:",
                    "movl (%r11), %edx", "movl (%rdi,%rcx,4), %r10d", "imulq %rax, %rdx",
                    "addq %r10, %rdx", "addq %rdx, %rsi", "movl %esi, (%rdi,%rcx,4)",
                    "addl $-1, %r8d", "shrq $32, %rsi", "addq $-4, %r11", "movslq %r8d, %rcx",
                    "movq %r11, %r10", "subq %r9, %r10", "testq %r10, %r10", "jge 2b",
                ),
            ),
            (
                "Z18 Z0 in pressure's order (squareToLen's loop)",
                pass!(10;
                    "2:",
                    "addl $-1, %r8d", "movl (%r11), %edx", "imulq %rax, %rdx", "addq $-4, %r11",
                    "movl (%rdi,%rcx,4), %r10d", "addq %r10, %rdx", "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)", "shrq $32, %rsi", "movslq %r8d, %rcx",
                    "movq %r11, %r10", "subq %r9, %r10", "testq %r10, %r10", "jge 2b",
                ),
            ),
            (
                "Z19 Z0 in latency-pressure's order (squareToLen's loop)",
                pass!(10;
                    "2:",
                    "addl $-1, %r8d", "movl (%r11), %edx", "imulq %rax, %rdx", "addq $-4, %r11",
                    "movl (%rdi,%rcx,4), %r10d", "addq %r10, %rdx", "addq %rdx, %rsi",
                    "movl %esi, (%rdi,%rcx,4)", "shrq $32, %rsi", "movq %r11, %rdx",
                    "subq %r9, %rdx", "movslq %r8d, %rcx", "testq %rdx, %rdx", "jge 2b",
                ),
            ),
            (
                "Z20 Z0 with the store and shr after the loop control (the simulation's best on four cores)",
                pass!(10;
                    "2:",
                    "movl (%r11), %edx", "addq $-4, %r11", "imulq %rax, %rdx",
                    "movl (%rdi,%rcx,4), %r10d", "addq %r10, %rdx", "addq %rdx, %rsi",
                    "movq %r11, %rdx", "addl $-1, %r8d", "subq %r9, %rdx",
                    "movl %esi, (%rdi,%rcx,4)", "shrq $32, %rsi", "movslq %r8d, %rcx",
                    "testq %rdx, %rdx", "jge 2b",
                ),
            ),
            (
                "Z21 Z0 with the counters after the chain's adds, store and shr last",
                pass!(10;
                    "2:",
                    "movl (%r11), %edx", "movl (%rdi,%rcx,4), %r10d", "imulq %rax, %rdx",
                    "addq %r10, %rdx", "addq %rdx, %rsi", "addq $-4, %r11", "addl $-1, %r8d",
                    "movq %r11, %rdx", "subq %r9, %rdx", "movl %esi, (%rdi,%rcx,4)",
                    "shrq $32, %rsi", "movslq %r8d, %rcx", "testq %rdx, %rdx", "jge 2b",
                ),
            ),
            (
                "T1  8 movl $1 + dec/jnz (throughput: 9 ALU uops)",
                pass!(10;
                    "2:",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "decq %r8", "jnz 2b",
                ),
            ),
            (
                "T2  T1 + a store of %eax (same index each time)",
                pass!(10;
                    "2:",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl %eax, (%r12,%rcx,4)",
                    "decq %r8", "jnz 2b",
                ),
            ),
            (
                "T3  T1 + two stores of %eax",
                pass!(10;
                    "2:",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl %eax, (%r12,%rcx,4)", "movl %eax, 8(%r12,%rcx,4)",
                    "decq %r8", "jnz 2b",
                ),
            ),
            (
                "T4  T1 + a load (movl (%r12,%rcx,4), %edx)",
                pass!(10;
                    "2:",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl (%r12,%rcx,4), %edx",
                    "decq %r8", "jnz 2b",
                ),
            ),
            (
                "T5  T1 with dec/jnz -> subq $1; testq; jg (test/jcc fusion?)",
                pass!(10;
                    "2:",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "subq $1, %r8", "testq %r8, %r8", "jg 2b",
                ),
            ),
            (
                "T6  T1 + movq %r8,%rdx (register move: eliminated?)",
                pass!(10;
                    "2:",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movq %r8, %rdx",
                    "decq %r8", "jnz 2b",
                ),
            ),
            (
                "T7  T1 + movslq %r8d,%rdx",
                pass!(10;
                    "2:",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movslq %r8d, %rdx",
                    "decq %r8", "jnz 2b",
                ),
            ),
            (
                "T8  T1 + imulq %rax,%rdx (independent)",
                pass!(10;
                    "2:",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl %eax, %edx", "imulq %rax, %rdx",
                    "decq %r8", "jnz 2b",
                ),
            ),
            (
                "T9  T1 + shrq $32,%rdx",
                pass!(10;
                    "2:",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "movl $1, %r13d", "movl $1, %r14d", "movl $1, %r15d", "movl $1, %r10d",
                    "shrq $32, %rdx",
                    "decq %r8", "jnz 2b",
                ),
            ),
        ]
    }

    /// Times [`zen_variants`] against C4 alternately (as [`run`] does), three rounds.
    pub fn run_zen() {
        let mut a = Arrays::new();
        let c4_pass = chain!();
        cycle_time();
        for round in 0..3 {
            let cycle = cycle_time();
            println!("round {round}: add chain {:.3} GHz", 1e-9 / cycle);
            let only = std::env::var("ZEN_VARIANTS").unwrap_or_default();
            for (name, f) in zen_variants().into_iter().filter(|(name, _)| {
                only.is_empty()
                    || only
                        .split(',')
                        .any(|p| name.split_whitespace().next() == Some(p))
            }) {
                let (mut best, mut best_c4) = (f64::INFINITY, f64::INFINITY);
                for _ in 0..5 {
                    best_c4 = best_c4.min(per_word(&mut || c4_pass(&mut a), 300, WORDS as f64));
                    best = best.min(per_word(&mut || f(&mut a), 300, WORDS as f64));
                }
                println!(
                    "round {round} {:.3} cycles/word = {:.3} ×3/C4  {name}",
                    best / cycle,
                    3.0 * best / best_c4
                );
            }
        }
    }

    type MulAddFn = unsafe extern "C" fn(*mut u32, i32, *const u32, i32, i32, i32, i32) -> i64;
    type SquareFn = unsafe extern "C" fn(*const u32, i32, i32, *mut u32, i32, i32) -> i32;

    /// Seconds per word of `f`: the fastest of `batches` batches of 10 passes.
    fn per_word(f: &mut dyn FnMut() -> u64, batches: usize, words: f64) -> f64 {
        let mut best = f64::INFINITY;
        for _ in 0..batches {
            let start = Instant::now();
            for _ in 0..10 {
                std::hint::black_box(f());
            }
            best = best.min(start.elapsed().as_secs_f64() / 10.0 / words);
        }
        best
    }

    /// Runs a hand-written loop and the JIT's `mulAdd` on the same zeroed output from carry 0
    /// and checks that both store the same words and return the same carry.
    fn check_copy(a: &mut Arrays, v0: fn(&mut Arrays) -> u64, mul_add_fn: MulAddFn) {
        a.len = WORDS;
        a.mem[OUT_AT..].fill(0);
        a.carry = 0;
        let copy_carry = v0(a);
        let copy_out = a.mem[OUT_AT..].to_vec();
        a.mem[OUT_AT..].fill(0);
        let (out, input) = (a.out_ptr(), a.input_ptr());
        let n = WORDS as i32;
        // SAFETY: out has WORDS + 1 ints, input WORDS; the kernel checks its bounds.
        let jit_carry = unsafe { mul_add_fn(out, n + 1, input, n, 0, n, K as i32) };
        assert_eq!(
            copy_out,
            a.mem[OUT_AT..],
            "V0 stores what the JIT's mulAdd stores"
        );
        assert_eq!(
            copy_carry as u32, jit_carry as u32,
            "V0's carry is the JIT's"
        );
        a.carry = 0;
    }

    /// `cycles ≈ a·iterations + b·n + c` fitted in relative least squares (each size's
    /// error relative to its measurement), as `bench --validate-model` fits `squareToLen`.
    fn fit_square(sizes: &[usize], cycles: &[f64]) -> [f64; 3] {
        let mut m = [[0.0f64; 4]; 3];
        for (&n, &y) in sizes.iter().zip(cycles) {
            let x = [(n * (n - 1) / 2) as f64 / y, n as f64 / y, 1.0 / y];
            for i in 0..3 {
                for j in 0..3 {
                    m[i][j] += x[i] * x[j];
                }
                m[i][3] += x[i];
            }
        }
        for col in 0..3 {
            let pivot = (col..3)
                .max_by(|&p, &q| m[p][col].abs().total_cmp(&m[q][col].abs()))
                .unwrap_or(col);
            m.swap(col, pivot);
            for row in 0..3 {
                if row != col && m[col][col] != 0.0 {
                    let f = m[row][col] / m[col][col];
                    let pivot_row = m[col];
                    for (x, p) in m[row].iter_mut().zip(pivot_row).skip(col) {
                        *x -= f * p;
                    }
                }
            }
        }
        [m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]]
    }

    /// squareToLen's row structure with a hand-written loop: passes of n−1, n−2, …, 1 words
    /// (each pass's carry feeding the next), one call's worth.
    fn triangle(a: &mut Arrays, f: fn(&mut Arrays) -> u64, n: usize) -> u64 {
        let mut sum = 0;
        for len in (1..n).rev() {
            a.len = len;
            sum ^= f(a);
        }
        a.len = WORDS;
        sum
    }

    pub fn run() {
        let mul_add = jit(schedlab_kernels::bigint::mul_add, "JIT mulAdd");
        let square = jit(schedlab_kernels::bigint::square_to_len, "JIT squareToLen");
        // SAFETY: the kernels' signatures (schedlab_kernels::bigint's module docs), host C ABI.
        let mul_add_fn: MulAddFn = unsafe { std::mem::transmute(mul_add.code_ptr()) };
        // SAFETY: as above.
        let square_fn: SquareFn = unsafe { std::mem::transmute(square.code_ptr()) };
        let mut a = Arrays::new();
        let variants = variants();
        // V0 and the two loops that reassociate the sum must store what the JIT's mulAdd does.
        for (name, f) in variants
            .iter()
            .filter(|(name, _)| ["V0 ", "V11", "V17"].iter().any(|p| name.starts_with(p)))
        {
            println!("checking {} against the JIT's mulAdd", &name[..3]);
            check_copy(&mut a, *f, mul_add_fn);
        }
        println!(
            "cycles/word: time ÷ one step of the add chain; ×3/C4: 3 × time ÷ time of C4 (the \
             bare chain, which cannot run under 3 cycles) timed alternately with it"
        );
        cycle_time();
        for round in 0..3 {
            let cycle = cycle_time();
            println!("round {round}: add chain {:.3} GHz", 1e-9 / cycle);
            // Each variant alternates with C4 (five times 300 batches each, the fastest of
            // each kept): the ×3/C4 column is then a ratio to a reference timed within
            // milliseconds of it, which a clock that drifts during the round does not move.
            let c4_pass = variants
                .iter()
                .find(|(name, _)| name.starts_with("C4 "))
                .map(|v| v.1)
                .expect("C4 is a variant");
            let mut results: Vec<(String, f64, f64)> = variants
                .iter()
                .map(|(name, f)| {
                    let (mut best, mut best_c4) = (f64::INFINITY, f64::INFINITY);
                    for _ in 0..5 {
                        best_c4 = best_c4.min(per_word(&mut || c4_pass(&mut a), 300, WORDS as f64));
                        best = best.min(per_word(&mut || f(&mut a), 300, WORDS as f64));
                    }
                    (name.to_string(), best / cycle, 3.0 * best / best_c4)
                })
                .collect();
            let (out, input) = (a.out_ptr(), a.input_ptr());
            let n = WORDS as i32;
            let t = per_word(
                // SAFETY: out has WORDS + 1 ints, input WORDS; the kernel checks its bounds.
                &mut || unsafe { mul_add_fn(out, n + 1, input, n, 0, n, K as i32) } as u64,
                1500,
                WORDS as f64,
            );
            let c4 = per_word(&mut || c4_pass(&mut a), 1500, WORDS as f64);
            results.push((
                format!("JIT mulAdd itself (n={WORDS})"),
                t / cycle,
                3.0 * t / c4,
            ));
            let v0 = results
                .iter()
                .find(|(name, ..)| name.starts_with("V0 "))
                .map_or(f64::NAN, |r| r.2);
            for (name, c, paired) in &results {
                println!(
                    "round {round} {c:.3} cycles/word = {paired:.3} ×3/C4 ({:+5.1} % vs V0)  {name}",
                    (paired / v0 - 1.0) * 100.0
                );
            }
            // squareToLen on 256 ints: 256·255/2 inner-loop words plus per-row work; reported
            // per inner word for orientation only (the bench fits the per-row term out).
            let sq_n = 256usize;
            let mut z = vec![0u32; 2 * sq_n];
            let words = (sq_n * (sq_n - 1) / 2) as f64;
            let t = per_word(
                // SAFETY: input has ≥ 256 ints, z has 512; the kernel checks its bounds.
                &mut || unsafe {
                    square_fn(input, sq_n as i32, sq_n as i32, z.as_mut_ptr(), 512, 512)
                } as u64,
                300,
                words,
            );
            println!(
                "round {round} {:.3} cycles/inner word incl. per-row work  JIT squareToLen n=256",
                t / cycle
            );
            // The bench's squareToLen fit, on the JIT's function and on V0 / V1 / C18 run in
            // squareToLen's row pattern, at the bench's sizes.
            let sizes = [16usize, 34, 64, 128, 256];
            let mut jit_cycles = Vec::new();
            for &n in &sizes {
                let mut z = vec![0u32; 2 * n];
                let len = n as i32;
                let t = per_word(
                    // SAFETY: input has ≥ n ints, z has 2n; the kernel checks its bounds.
                    &mut || unsafe { square_fn(input, len, len, z.as_mut_ptr(), 2 * len, 2 * len) }
                        as u64,
                    300,
                    1.0,
                );
                jit_cycles.push(t / cycle);
            }
            let [a_jit, b_jit, c_jit] = fit_square(&sizes, &jit_cycles);
            // Cycles of the add chain → C4 units (C4 timed now, next to the fits).
            let to_c4 = 3.0 * cycle / per_word(&mut || c4_pass(&mut a), 1500, WORDS as f64);
            println!(
                "round {round} squareToLen fit, JIT function: {a_jit:.3} per inner word = \
                 {:.3} ×3/C4 (+ {b_jit:.1}·n + {c_jit:.0}) from {jit_cycles:.0?} cycles at \
                 n = {sizes:?}",
                a_jit * to_c4
            );
            for (name, f) in variants
                .iter()
                .filter(|(name, _)| ["V0 ", "V1 ", "C18"].iter().any(|p| name.starts_with(p)))
            {
                let cycles: Vec<f64> = sizes
                    .iter()
                    .map(|&n| per_word(&mut || triangle(&mut a, *f, n), 300, 1.0) / cycle)
                    .collect();
                let [a_fit, b_fit, c_fit] = fit_square(&sizes, &cycles);
                println!(
                    "round {round} squareToLen fit, {} in rows n-1..1: {a_fit:.3} per inner word \
                     = {:.3} ×3/C4 (+ {b_fit:.1}·n + {c_fit:.0})",
                    &name[..4],
                    a_fit * to_c4
                );
            }
            // Short passes, as squareToLen's rows are: cycles per call by length (each pass's
            // carry feeds the next, so passes do not overlap), for V0 and a few others; the
            // slope between lengths is what a per-word fit over such sizes sees.
            for (name, f) in variants.iter().filter(|(name, _)| {
                ["V0 ", "V1 ", "V4 ", "C18", "CI "]
                    .iter()
                    .any(|p| name.starts_with(p))
            }) {
                let mut line = format!("round {round} by length (×3/C4) {:<5}", &name[..4]);
                for len in [
                    8usize, 16, 32, 64, 96, 112, 120, 128, 136, 144, 152, 160, 176, 192, 256, 384,
                    512, 1024, 2048,
                ] {
                    a.len = len;
                    let t = per_word(&mut || f(&mut a), 2000, 1.0) / cycle * to_c4;
                    line.push_str(&format!(" {len}:{t:.1}"));
                }
                println!("{line}");
            }
            a.len = WORDS;
        }
    }
}

#[test]
#[ignore = "an experiment: prints timings, run by hand"]
fn mul_add_loop_variants() {
    #[cfg(target_arch = "x86_64")]
    x86::run();
    #[cfg(not(target_arch = "x86_64"))]
    eprintln!("skipping: x86_64 only");
}

#[test]
#[ignore = "an experiment: prints timings, run by hand"]
fn mul_add_loop_variants_zen() {
    #[cfg(target_arch = "x86_64")]
    x86::run_zen();
    #[cfg(not(target_arch = "x86_64"))]
    eprintln!("skipping: x86_64 only");
}
