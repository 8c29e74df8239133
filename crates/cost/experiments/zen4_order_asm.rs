//! Instruction order on the host, measured: the mulAdd loop's 14 instructions (the JIT's
//! registers, as `bigint_loop_asm.rs`' Z0) in many dependence-respecting orders, each timed
//! against a 3-cycle carry chain in the same run, beside `schedlab-sim` on every x86 core.
//! The orders are assembled at run time (`as`, `objcopy`, `nm` from binutils) and called from
//! an executable mapping, so any order can be timed without rebuilding.
//!
//! `cargo test --release --workspace --test experiments zen4_order_asm:: -- --ignored --nocapture`
//! (`ORDERS=N` orders timed, default 60; `ORDER_TSV=path` writes the table as TSV,
//! `ORDER_NOTES=path` a markdown summary: `scripts/regen-notes orders` → `notes/orders.md`).
//!
//! Any set of loop bodies (port-assignment probes) can be timed from a text file:
//! `LOOPS_FILE=path cargo test --release --workspace --test experiments zen4_order_asm::loops_file --
//! --ignored --nocapture` (see [`x86::probes`] for the file format and register convention;
//! `crates/cost/experiments/probes/zen4_probes.txt` holds the 100 Zen 4 port-assignment probes, [EXP-Z4Q]).

#[cfg(target_arch = "x86_64")]
mod x86 {
    use schedlab_backend::Target;
    use schedlab_bench::stats::{pearson, ranks};
    use schedlab_cost::mca::HotLoop;
    use schedlab_cost::models::core_model;
    use schedlab_cost::simulated;
    use std::fmt::Write as _;
    use std::process::Command;
    use std::time::Instant;

    /// Cycles per iteration of the contention check (8 independent register `add`s and a fused
    /// `dec`/`jnz`) on an undisturbed core: on an Intel core with AMX (Golden Cove) 1.90, not
    /// the 1.8 that 9 uops on 5 ALU ports would allow — the core's port binding, measured
    /// (`ADD8` in `glc_port_probes.txt`, 1.900 in every run; the simulation gives 1.83–1.90;
    /// notes/design.md, Findings, Golden Cove "Small chained loops"); on Zen 4 ([EXP-Z4Q] `A8`) 2.25, 9 uops on 4 ALUs.
    pub fn quiet_alu_cycles() -> f64 {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let golden_cove = cpuinfo.contains("GenuineIntel") && cpuinfo.contains(" amx_tile");
        if golden_cove { 1.9 } else { 2.25 }
    }

    /// The loop: text, registers (and memory) read, registers written. `test`/`jge` close it.
    pub const LOOP: &[(&str, &[&str], &[&str])] = &[
        ("movl (%r11), %edx", &["r11"], &["rdx"]),
        (
            "movl (%rdi,%rcx,4), %r10d",
            &["rdi", "rcx", "mem"],
            &["r10"],
        ),
        ("imulq %rax, %rdx", &["rax", "rdx"], &["rdx"]),
        ("addq %r10, %rdx", &["r10", "rdx"], &["rdx"]),
        ("addq %rdx, %rsi", &["rdx", "rsi"], &["rsi"]),
        ("movl %esi, (%rdi,%rcx,4)", &["rsi", "rdi", "rcx"], &["mem"]),
        ("addl $-1, %r8d", &["r8"], &["r8"]),
        ("shrq $32, %rsi", &["rsi"], &["rsi"]),
        ("addq $-4, %r11", &["r11"], &["r11"]),
        ("movslq %r8d, %rcx", &["r8"], &["rcx"]),
        ("movq %r11, %rdx", &["r11"], &["rdx"]),
        ("subq %r9, %rdx", &["rdx", "r9"], &["rdx"]),
    ];
    const CLOSE: [&str; 2] = ["testq %rdx, %rdx", "jge 2b"];
    const WORDS: usize = 2048;
    const CPUS: [&str; 4] = ["sapphirerapids", "skylake", "znver3", "znver4"];

    fn must_precede(a: usize, b: usize) -> bool {
        let (_, ra, wa) = LOOP[a];
        let (_, rb, wb) = LOOP[b];
        wa.iter().any(|x| rb.contains(x) || wb.contains(x)) || wb.iter().any(|x| ra.contains(x))
    }

    /// Every order of [`LOOP`] that keeps each dependence (true, anti and output).
    pub fn all_orders() -> Vec<Vec<usize>> {
        fn extend(order: &mut Vec<usize>, used: &mut [bool], out: &mut Vec<Vec<usize>>) {
            if order.len() == LOOP.len() {
                out.push(order.clone());
                return;
            }
            for c in 0..LOOP.len() {
                if used[c] || (0..c).any(|p| !used[p] && must_precede(p, c)) {
                    continue;
                }
                used[c] = true;
                order.push(c);
                extend(order, used, out);
                order.pop();
                used[c] = false;
            }
        }
        let mut out = Vec::new();
        extend(&mut Vec::new(), &mut vec![false; LOOP.len()], &mut out);
        out
    }

    fn texts(order: &[usize]) -> Vec<&'static str> {
        order.iter().map(|&i| LOOP[i].0).chain(CLOSE).collect()
    }

    /// Variants of the loop (`ORDER_VARIANT=name`), each replacing one instruction of [`LOOP`]
    /// by another that keeps every address: `store-elsewhere` moves the store to
    /// `out[rcx + 2·WORDS + 40]` (no load reads it, not 4 KiB-aliased with the loaded words),
    /// `store-plain` stores to `out[0]` without an index, `imul-add` replaces the `imul` by an
    /// `add`, `shr-add` the `shr` by `addq $0`, `ldin-fixed` loads `in[0]` (off the `r11`
    /// chain) and `ldout-fixed` loads `out[1]` (off the `rcx` index).
    const VARIANTS: &[(&str, usize, &str)] = &[
        ("store-elsewhere", 5, "movl %esi, 16544(%rdi,%rcx,4)"),
        ("store-plain", 5, "movl %esi, (%rdi)"),
        ("imul-add", 2, "addq %rax, %rdx"),
        ("shr-add", 7, "addq $0, %rsi"),
        ("ldin-fixed", 0, "movl (%r9), %edx"),
        ("ldout-fixed", 1, "movl 4(%rdi), %r10d"),
    ];

    /// [`texts`] with `variant`'s replacement.
    fn texts_with(order: &[usize], variant: (usize, &'static str)) -> Vec<&'static str> {
        order
            .iter()
            .map(|&i| if i == variant.0 { variant.1 } else { LOOP[i].0 })
            .chain(CLOSE)
            .collect()
    }

    /// A hot loop of `lines` (the back branch's label as an address).
    fn hot_loop_of<S: AsRef<str>>(lines: &[S]) -> HotLoop {
        let lines: Vec<String> = lines
            .iter()
            .map(|t| t.as_ref().replace("2b", "0x0"))
            .collect();
        HotLoop::from_lines(&lines)
    }

    fn simulate(order: &[usize]) -> Vec<f64> {
        let body = hot_loop_of(&texts(order));
        CPUS.iter()
            .map(|cpu| {
                let model = core_model(Target::X86_64, cpu).expect("an x86 core model");
                simulated(Target::X86_64, &body, model).unwrap_or(f64::NAN)
            })
            .collect()
    }

    type LoopFn = unsafe extern "C" fn(*mut u32, *const u32, *const u32, u64, u64) -> u64;

    /// Executable copies of assembled functions.
    pub struct Code {
        base: *mut libc::c_void,
        len: usize,
        entries: Vec<usize>,
    }

    impl Code {
        fn raw(&self, i: usize) -> *const u8 {
            // SAFETY: `entries[i]` is an offset inside the mapping.
            unsafe { self.base.cast::<u8>().add(self.entries[i]) }
        }

        fn entry(&self, i: usize) -> LoopFn {
            // SAFETY: `entries[i]` is the offset of a function symbol inside the mapping, which
            // holds the assembled text section and lives as long as `self`.
            unsafe {
                std::mem::transmute::<*mut u8, LoopFn>(self.base.cast::<u8>().add(self.entries[i]))
            }
        }
    }

    impl Drop for Code {
        fn drop(&mut self) {
            // SAFETY: the mapping was created by `assemble` with this length.
            unsafe { libc::munmap(self.base, self.len) };
        }
    }

    /// Assembles one function per loop body: `f(out, &in[len-1], in, len, k)` sets the JIT's
    /// registers, runs the loop `len` times and returns the carry.
    fn assemble(bodies: &[Vec<&str>]) -> Code {
        let mut src = String::from(".text\n");
        for (i, body) in bodies.iter().enumerate() {
            let _ = writeln!(src, ".p2align 6\n.globl f{i}\nf{i}:");
            src.push_str(
                "movq %r8, %rax\nmovq %rsi, %r11\nmovq %rdx, %r9\nmovq %rcx, %r8\n\
                 xorl %esi, %esi\nxorl %edx, %edx\nxorl %r10d, %r10d\n.p2align 6\n.skip 10, 0x90\n2:\n",
            );
            for inst in body {
                src.push_str(inst);
                src.push('\n');
            }
            src.push_str("movq %rsi, %rax\nret\n");
        }
        assemble_source(&src, bodies.len())
    }

    /// Assembles `src` (functions `f0`…`f{count-1}`) into an executable mapping.
    pub fn assemble_source(src: &str, count: usize) -> Code {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (s, o, bin) = (
            dir.path().join("l.s"),
            dir.path().join("l.o"),
            dir.path().join("l.bin"),
        );
        std::fs::write(&s, src).expect("write the assembly");
        let run = |cmd: &mut Command| {
            let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
            assert!(
                out.status.success(),
                "{cmd:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        run(Command::new("as").arg("--64").arg("-o").arg(&o).arg(&s));
        run(Command::new("objcopy")
            .args(["-O", "binary", "-j", ".text"])
            .arg(&o)
            .arg(&bin));
        let symbols = run(Command::new("nm").arg(&o));
        let bytes = std::fs::read(&bin).expect("read the binary");
        let mut entries = vec![0; count];
        for line in symbols.lines() {
            let mut f = line.split_whitespace();
            let (Some(addr), Some(_), Some(name)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            if let Some(i) = name.strip_prefix('f').and_then(|n| n.parse::<usize>().ok()) {
                entries[i] = usize::from_str_radix(addr, 16).expect("an address");
            }
        }
        let len = bytes.len().next_multiple_of(4096);
        // SAFETY: a fresh anonymous mapping, written and then made read+execute only.
        unsafe {
            let base = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(base, libc::MAP_FAILED, "mmap");
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.cast::<u8>(), bytes.len());
            assert_eq!(
                libc::mprotect(base, len, libc::PROT_READ | libc::PROT_EXEC),
                0
            );
            Code { base, len, entries }
        }
    }

    /// Seconds per word: the fastest of `batches` batches of 10 calls.
    fn per_word(f: LoopFn, out: &mut [u32], input: &[u32], batches: usize) -> f64 {
        let mut best = f64::INFINITY;
        for _ in 0..batches {
            let start = Instant::now();
            for _ in 0..10 {
                // SAFETY: the loop reads input[0..WORDS] and reads/writes out[1..=WORDS] (and writes out[0] or out[2·WORDS+41..=3·WORDS+40] with an ORDER_VARIANT).
                std::hint::black_box(unsafe {
                    f(
                        out.as_mut_ptr(),
                        input.as_ptr().add(WORDS - 1),
                        input.as_ptr(),
                        WORDS as u64,
                        0x9e37_79b9,
                    )
                });
            }
            best = best.min(start.elapsed().as_secs_f64() / 10.0 / WORDS as f64);
        }
        best
    }

    pub fn run() {
        let all = all_orders();
        let wanted: usize = std::env::var("ORDERS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(60);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        // The JIT's order (`bigint_loop_asm.rs` Z0), Z17 (hoist-loads), Z18/Z19 (pressure /
        // latency-pressure on squareToLen, test temporary in rdx), Z20, `balanced` with its
        // early induction steps, then a seeded sample.
        let mut picked: Vec<Vec<usize>> = vec![
            vec![0, 2, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11],
            vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
            vec![6, 0, 2, 8, 1, 3, 4, 5, 7, 9, 10, 11],
            vec![6, 0, 2, 8, 1, 3, 4, 5, 7, 10, 11, 9],
            vec![0, 8, 2, 1, 3, 4, 10, 6, 11, 5, 7, 9],
            vec![6, 0, 8, 2, 1, 3, 4, 5, 7, 9, 10, 11],
        ];
        while picked.len() < wanted.min(all.len()) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let candidate = &all[(seed % all.len() as u64) as usize];
            if !picked.contains(candidate) {
                picked.push(candidate.clone());
            }
        }
        // The 3-cycle chain (add, add, shr) with dec/jnz: the clock of this run.
        let chain = vec![
            "addq %r10, %rsi",
            "addq %rdx, %rsi",
            "shrq $32, %rsi",
            "decq %r8",
            "jnz 2b",
        ];
        // `ORDER_VARIANT=name` times each order a second time as that variant ([`VARIANTS`]).
        let variant = std::env::var("ORDER_VARIANT").ok().map(|name| {
            let v = VARIANTS.iter().find(|v| v.0 == name).unwrap_or_else(|| {
                panic!(
                    "ORDER_VARIANT: one of {:?}",
                    VARIANTS.iter().map(|v| v.0).collect::<Vec<_>>()
                )
            });
            (v.0, (v.1, v.2))
        });
        let mut bodies: Vec<Vec<&str>> = picked.iter().map(|o| texts(o)).collect();
        bodies.push(chain);
        if let Some((_, v)) = variant {
            bodies.extend(picked.iter().map(|o| texts_with(o, v)));
        }
        // The contention check (last body): 8 independent register adds and dec/jnz, ALU-bound
        // ([`quiet_alu_cycles`]). A busy neighbour slows this throughput-bound loop more than
        // the latency-bound chain, so a ratio above the quiet figure flags a run whose order
        // timings are inflated. Register operands: Golden Cove executes `addq $1` at rename.
        let check = vec![
            "addq %rbx, %rax",
            "addq %rbx, %rcx",
            "addq %rbx, %rdx",
            "addq %rbx, %rsi",
            "addq %rbx, %r9",
            "addq %rbx, %r10",
            "addq %rbx, %r11",
            "addq %rbx, %rdi",
            "decq %r8",
            "jnz 2b",
        ];
        bodies.push(check);
        let check_index = bodies.len() - 1;
        let code = assemble(&bodies);
        let input: Vec<u32> = (0..WORDS as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        // out[1..=WORDS] is read and written; with an ORDER_VARIANT also out[0] or
        // out[2·WORDS+41..=3·WORDS+40].
        let mut out = vec![0u32; 3 * WORDS + 64];
        let chain_fn = code.entry(picked.len());
        println!("{} legal orders, {} timed", all.len(), picked.len());
        let mut tsv = String::from("order\tmeasured\tsapphirerapids\tskylake\tznver3\tznver4\n");
        let mut results = Vec::new();
        // Warm up (clock ramp) before the first timing.
        per_word(chain_fn, &mut out, &input, 2000);
        let contention = |label: &str, out: &mut [u32]| {
            let (mut c, mut a) = (f64::INFINITY, f64::INFINITY);
            for _ in 0..3 {
                c = c.min(per_word(chain_fn, out, &input, 100));
                a = a.min(per_word(code.entry(check_index), out, &input, 100));
            }
            let ratio = 3.0 * a / c;
            println!(
                "contention check ({label}): 8 adds {ratio:.3} cycles/iteration (quiet: {:.2})",
                quiet_alu_cycles()
            );
            if ratio > quiet_alu_cycles() * 1.02 {
                eprintln!(
                    "warning: the core is shared with a busy neighbour; timings are inflated"
                );
            }
            ratio
        };
        let check_before = contention("before", &mut out);
        for (i, order) in picked.iter().enumerate() {
            let f = code.entry(i);
            let mut rounds = Vec::new();
            for _ in 0..2 {
                let (mut best, mut best_chain) = (f64::INFINITY, f64::INFINITY);
                for _ in 0..3 {
                    best_chain = best_chain.min(per_word(chain_fn, &mut out, &input, 100));
                    best = best.min(per_word(f, &mut out, &input, 100));
                }
                rounds.push(3.0 * best / best_chain);
            }
            let measured = rounds.iter().copied().fold(f64::INFINITY, f64::min);
            let spread = rounds.iter().copied().fold(0.0, f64::max) - measured;
            if let Some((name, _)) = variant {
                let g = code.entry(picked.len() + 1 + i);
                let mut best = (f64::INFINITY, f64::INFINITY);
                for _ in 0..3 {
                    best.0 = best.0.min(per_word(chain_fn, &mut out, &input, 100));
                    best.1 = best.1.min(per_word(g, &mut out, &input, 100));
                }
                print!("{name} {:.3} | ", 3.0 * best.1 / best.0);
            }
            let sim = simulate(order);
            let key: Vec<String> = order.iter().map(|k| k.to_string()).collect();
            println!(
                "{measured:.3} ±{spread:.3} | sim {} | {}",
                sim.iter()
                    .map(|c| format!("{c:.2}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                key.join(",")
            );
            results.push((order.clone(), measured, sim.clone()));
            let _ = writeln!(
                tsv,
                "{}\t{measured:.3}\t{}",
                key.join(","),
                sim.iter()
                    .map(|c| format!("{c:.3}"))
                    .collect::<Vec<_>>()
                    .join("\t")
            );
        }
        let check_after = contention("after", &mut out);
        if let Ok(path) = std::env::var("ORDER_TSV") {
            std::fs::write(path, tsv).expect("write the TSV");
        }
        if let Ok(path) = std::env::var("ORDER_NOTES") {
            let mut text = format!(
                "Contention check (8 independent `add`s + `dec`/`jnz`, {:.2} cycles on this host's \
                 core when it is not shared): {check_before:.3} before, {check_after:.3} after the \
                 run.\n\n",
                quiet_alu_cycles()
            );
            text.push_str(&summary(all.len(), &results));
            std::fs::write(path, text).expect("write the summary");
        }
    }

    /// The markdown body of `notes/orders.md`.
    fn summary(legal: usize, results: &[(Vec<usize>, f64, Vec<f64>)]) -> String {
        let measured: Vec<f64> = results.iter().map(|r| r.1).collect();
        let lo = measured.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = measured.iter().copied().fold(0.0, f64::max);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} of the loop's {legal} legal orders timed: {lo:.2} … {hi:.2} cycles per word (the same 14 instructions).\n",
            results.len()
        );
        s.push_str("| model | within ±5 % | mean abs. error | Pearson r | Spearman ρ | range |\n|---|---|---|---|---|---|\n");
        for (c, cpu) in CPUS.iter().enumerate() {
            let sim: Vec<f64> = results.iter().map(|r| r.2[c]).collect();
            let within = sim
                .iter()
                .zip(&measured)
                .filter(|(p, m)| ((*p - *m) / *m).abs() <= 0.05)
                .count();
            let mae = sim
                .iter()
                .zip(&measured)
                .map(|(p, m)| ((p - m) / m).abs())
                .sum::<f64>()
                / sim.len() as f64;
            let (slo, shi) = (
                sim.iter().copied().fold(f64::INFINITY, f64::min),
                sim.iter().copied().fold(0.0, f64::max),
            );
            let _ = writeln!(
                s,
                "| schedlab-sim/{cpu} | {within} of {} | {:.1} % | {:+.2} | {:+.2} | {slo:.2} … {shi:.2} |",
                sim.len(),
                100.0 * mae,
                pearson(&sim, &measured).unwrap_or(0.0),
                pearson(&ranks(&sim), &ranks(&measured)).unwrap_or(0.0),
            );
        }
        let names = [
            "ldin", "ldout", "imul", "add1", "add2", "store", "dec32", "shr", "ptr-4", "sext",
            "mov", "sub",
        ];
        s.push_str("\nInstructions: ");
        for (i, (text, _, _)) in LOOP.iter().enumerate() {
            let _ = write!(
                s,
                "`{}` = `{text}`{}",
                names[i],
                if i + 1 < LOOP.len() {
                    ", "
                } else {
                    "; every order ends with `testq %rdx, %rdx; jge`.\n"
                }
            );
        }
        let mut sorted: Vec<&(Vec<usize>, f64, Vec<f64>)> = results.iter().collect();
        sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
        let row = |s: &mut String, label: &str, r: &(Vec<usize>, f64, Vec<f64>)| {
            let order: Vec<&str> = r.0.iter().map(|&k| names[k]).collect();
            let _ = writeln!(
                s,
                "| {label} | {:.2} | {} | {} |",
                r.1,
                r.2.iter()
                    .map(|c| format!("{c:.2}"))
                    .collect::<Vec<_>>()
                    .join(" / "),
                order.join(" ")
            );
        };
        s.push_str("\n| order | measured | sim spr / skl / zn3 / zn4 | instructions |\n|---|---|---|---|\n");
        for (label, r) in [
            "JIT (source; balanced without early steps)",
            "hoist-loads",
            "pressure (squareToLen)",
            "latency-pressure (squareToLen)",
            "Z20 (the znver4 simulation's favourite)",
            "balanced (early induction steps)",
        ]
        .iter()
        .zip(results)
        {
            row(&mut s, label, r);
        }
        for r in sorted.iter().take(8) {
            row(&mut s, "fastest", r);
        }
        for r in sorted.iter().rev().take(5).rev() {
            row(&mut s, "slowest", r);
        }
        s
    }

    /// Loop bodies from a text file (port-assignment probes), each timed against a dependent
    /// `add` chain in the same run.
    ///
    /// File format: blocks separated by blank lines; a block's first line is `# name`, further
    /// lines starting with `#` are comments, the rest are AT&T instructions, one a line. A
    /// run of lines between `.rept N` and `.endr` stands for N copies of it (not nested).
    ///
    /// Register convention: on entry `%rdi` and `%rsi` point to two zeroed 8 KiB buffers
    /// (64-byte aligned), `%r15` holds the iteration count and every other general register
    /// (`rax rbx rcx rdx rbp r8`–`r14`) holds 1. A body must not write `%rdi`, `%rsi`, `%r15`
    /// or `%rsp`, and may address memory only as `d(%rdi…)` or `d(%rsi…)` with 0 ≤ d ≤ 8176
    /// and scale ≤ 8; an index register must either never be written by the block (it holds 1)
    /// or be written only by loads from a buffer the block never stores to (it holds 0). These rules
    /// are checked before anything runs. A block with no `2b` in it is closed by the harness
    /// with `decq %r15; jnz 2b`; a block that closes itself must count `%r15` down to zero.
    /// The loop label `2:` is 64-byte aligned.
    pub mod probes {
        use super::{assemble_source, core_model, simulated};
        use schedlab_backend::Target;
        use std::collections::HashMap;
        use std::fmt::Write as _;
        use std::time::Instant;

        type ProbeFn = unsafe extern "C" fn(u64, *mut u8, *mut u8) -> u64;

        /// Iterations per call.
        const ITERS: u64 = 20_000;
        /// Dependent adds in the reference chain (its cycles per iteration).
        const REF_ADDS: usize = 8;
        const BUFFER: usize = 8192;

        /// A 64-byte line of a buffer (only its size and alignment matter).
        #[repr(align(64))]
        #[derive(Clone, Copy)]
        struct Line(#[allow(dead_code)] [u64; 8]);

        /// One timed body: its name and instructions (without the harness's close).
        pub struct Probe {
            /// The block's `# name`.
            pub name: String,
            /// The instructions, including the close.
            pub body: Vec<String>,
        }

        const FORBIDDEN: [&str; 17] = [
            "%rdi", "%edi", "%di", "%dil", "%rsi", "%esi", "%si", "%sil", "%r15", "%r15d", "%r15w",
            "%r15b", "%rsp", "%esp", "%sp", "%spl", "%rip",
        ];

        /// Operands of an AT&T instruction, split at top-level commas.
        fn operands(inst: &str) -> Vec<String> {
            let rest = inst.split_once(char::is_whitespace).map_or("", |(_, r)| r);
            let mut out = vec![String::new()];
            let mut depth = 0;
            for c in rest.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(String::new());
                        continue;
                    }
                    _ => {}
                }
                out.last_mut().expect("one operand").push(c);
            }
            out.into_iter()
                .map(|o| o.trim().to_string())
                .filter(|o| !o.is_empty())
                .collect()
        }

        /// The 64-bit register a register name belongs to (`%r11d` → `r11`, `%al` → `rax`).
        fn family(reg: &str) -> String {
            let r = reg.trim().trim_start_matches('%');
            if let Some(n) = r
                .strip_prefix('r')
                .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
            {
                return format!("r{}", n.trim_end_matches(['d', 'w', 'b']));
            }
            let core = r
                .trim_start_matches(['r', 'e'])
                .trim_end_matches(['l', 'h', 'x']);
            let core = match core {
                "" => "a",
                other => other,
            };
            match core {
                "a" | "b" | "c" | "d" => format!("r{core}x"),
                "si" => "rsi".into(),
                "di" => "rdi".into(),
                "sp" | "spl" => "rsp".into(),
                "bp" | "bpl" => "rbp".into(),
                _ => format!("r{core}"),
            }
        }

        /// Checks `body` against the register convention; `Err` says why it is unsafe.
        ///
        /// Every memory operand must be `d(%rdi…)` or `d(%rsi…)` with 0 ≤ d ≤ 8176 and scale ≤ 8
        /// (a `lea`'s operand is no memory access).
        /// An index register must either never be written by the block (it then holds 1) or be
        /// written only by loads from a buffer that the block never stores to (it then holds 0).
        fn check(body: &[String]) -> Result<(), String> {
            // Per instruction: its mnemonic, operands, destination family, and for a load the
            // base of its source buffer.
            let parsed: Vec<(String, Vec<String>)> = body
                .iter()
                .map(|inst| {
                    let m = inst.split_whitespace().next().unwrap_or("").to_string();
                    (m, operands(inst))
                })
                .collect();
            let memory_base = |op: &str| -> Option<String> {
                op.find('(').map(|open| {
                    op[open + 1..]
                        .trim_end_matches(')')
                        .split(',')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string()
                })
            };
            let is_store = |m: &str, ops: &[String]| {
                ops.len() > 1
                    && ops.last().is_some_and(|o| o.contains('('))
                    && !m.starts_with("cmp")
                    && !m.starts_with("test")
            };
            let stored_bases: Vec<String> = parsed
                .iter()
                .filter(|(m, ops)| is_store(m, ops))
                .filter_map(|(_, ops)| memory_base(ops.last().expect("an operand")))
                .collect();
            for (inst, (mnemonic, ops)) in body.iter().zip(&parsed) {
                if [
                    "push", "pop", "call", "ret", "xchg", "xadd", "cmpxchg", "leave", "enter",
                ]
                .iter()
                .any(|m| mnemonic.starts_with(m))
                {
                    return Err(format!("`{inst}`: stack or two-destination instruction"));
                }
                // `lea` only computes an address: its operand touches no memory.
                let addresses_memory = !mnemonic.starts_with("lea");
                for (k, op) in ops.iter().enumerate() {
                    if let Some(open) = op.find('(').filter(|_| addresses_memory) {
                        let disp = op[..open].trim();
                        let disp: i64 = if disp.is_empty() {
                            0
                        } else {
                            disp.parse()
                                .map_err(|_| format!("`{inst}`: displacement"))?
                        };
                        let inner: Vec<&str> =
                            op[open + 1..].trim_end_matches(')').split(',').collect();
                        if !["%rdi", "%rsi"].contains(&inner[0].trim()) {
                            return Err(format!("`{inst}`: base must be %rdi or %rsi"));
                        }
                        if !(0..=(BUFFER as i64 - 16)).contains(&disp) {
                            return Err(format!("`{inst}`: displacement out of the buffer"));
                        }
                        if let Some(index) =
                            inner.get(1).map(|i| i.trim()).filter(|i| !i.is_empty())
                        {
                            let scale: Result<i64, _> =
                                inner.get(2).map_or(Ok(1), |s| s.trim().parse());
                            let scale = scale.map_err(|_| format!("`{inst}`: scale"))?;
                            if !(1..=8).contains(&scale) {
                                return Err(format!("`{inst}`: scale"));
                            }
                            let fam = family(index);
                            for (m, wops) in &parsed {
                                let Some(dst) = wops.last().filter(|o| o.starts_with('%')) else {
                                    continue;
                                };
                                if family(dst) != fam
                                    || m.starts_with("cmp")
                                    || m.starts_with("test")
                                {
                                    continue;
                                }
                                let zero_load = wops.len() == 2
                                    && m.starts_with("mov")
                                    && memory_base(&wops[0])
                                        .is_some_and(|b| !stored_bases.contains(&b));
                                if !zero_load {
                                    return Err(format!(
                                        "`{inst}`: index {index} is written other than by a load from an unstored buffer"
                                    ));
                                }
                            }
                        }
                    } else if k + 1 == ops.len() && FORBIDDEN.contains(&op.as_str()) {
                        return Err(format!("`{inst}`: writes a reserved register"));
                    }
                }
            }
            Ok(())
        }

        /// `lines` with each `.rept N` … `.endr` run replaced by N copies of its lines.
        pub fn expand_repeats<'a>(
            lines: impl Iterator<Item = &'a str>,
        ) -> Result<Vec<String>, String> {
            let mut out = Vec::new();
            let mut run: Option<(usize, Vec<String>)> = None;
            for line in lines {
                if let Some(n) = line.strip_prefix(".rept") {
                    if run.is_some() {
                        return Err("nested `.rept`".into());
                    }
                    let n = n.trim().parse().map_err(|_| format!("`{line}`: a count"))?;
                    run = Some((n, Vec::new()));
                } else if line == ".endr" {
                    let (n, body) = run.take().ok_or("`.endr` without `.rept`")?;
                    for _ in 0..n {
                        out.extend(body.iter().cloned());
                    }
                } else if let Some((_, body)) = run.as_mut() {
                    body.push(line.to_string());
                } else {
                    out.push(line.to_string());
                }
            }
            match run {
                Some(_) => Err("`.rept` without `.endr`".into()),
                None => Ok(out),
            }
        }

        /// The blocks of a loops file.
        pub fn parse(text: &str) -> Vec<Probe> {
            let mut probes = Vec::new();
            for block in text.split("\n\n") {
                let mut lines = block.lines().map(str::trim).filter(|l| !l.is_empty());
                let Some(first) = lines.next() else { continue };
                let name = first
                    .strip_prefix('#')
                    .unwrap_or_else(|| panic!("block must start with `# name`: {first}"))
                    .trim()
                    .to_string();
                let mut body = expand_repeats(lines.filter(|l| !l.starts_with('#')))
                    .unwrap_or_else(|e| panic!("block `{name}`: {e}"));
                if body.is_empty() {
                    continue;
                }
                let closes = body.iter().any(|l| l.contains("2b"));
                let checked: Vec<String> = body
                    .iter()
                    .filter(|l| !(closes && l.trim() == "decq %r15"))
                    .cloned()
                    .collect();
                if let Err(e) = check(&checked) {
                    panic!("block `{name}`: {e}");
                }
                if !closes {
                    body.push("decq %r15".into());
                    body.push("jnz 2b".into());
                }
                probes.push(Probe { name, body });
            }
            probes
        }

        fn source(bodies: &[Vec<String>]) -> String {
            let mut src = String::from(".text\n");
            for (i, body) in bodies.iter().enumerate() {
                let _ = writeln!(src, ".p2align 6\n.globl f{i}\nf{i}:");
                src.push_str(
                    "pushq %rbx\npushq %rbp\npushq %r12\npushq %r13\npushq %r14\npushq %r15\n\
                     movq %rdi, %r15\nmovq %rsi, %rdi\nmovq %rdx, %rsi\n",
                );
                for r in [
                    "eax", "ebx", "ecx", "edx", "ebp", "r8d", "r9d", "r10d", "r11d", "r12d",
                    "r13d", "r14d",
                ] {
                    let _ = writeln!(src, "movl $1, %{r}");
                }
                src.push_str(".p2align 6\n2:\n");
                for inst in body {
                    src.push_str(inst);
                    src.push('\n');
                }
                src.push_str(
                    "popq %r15\npopq %r14\npopq %r13\npopq %r12\npopq %rbp\npopq %rbx\nret\n",
                );
            }
            src
        }

        /// Seconds per iteration: the fastest of `batches` calls.
        fn per_iter(f: ProbeFn, a: &mut [Line], b: &mut [Line], batches: usize) -> f64 {
            let mut best = f64::INFINITY;
            for _ in 0..batches {
                let start = Instant::now();
                // SAFETY: `check` keeps every access inside the two 8 KiB buffers and the
                // callee-saved registers are restored by the wrapper.
                std::hint::black_box(unsafe {
                    f(ITERS, a.as_mut_ptr().cast(), b.as_mut_ptr().cast())
                });
                best = best.min(start.elapsed().as_secs_f64() / ITERS as f64);
            }
            best
        }

        /// `schedlab-sim/<core>`'s cycles per iteration of `body`.
        fn simulate(core: &str, body: &[String]) -> f64 {
            let hot = super::hot_loop_of(body);
            let model = core_model(Target::X86_64, core).expect("an x86 core model");
            simulated(Target::X86_64, &hot, model).unwrap_or(f64::NAN)
        }

        /// `simulate` on Golden Cove with the mechanisms named in `toggles` (comma-separated,
        /// as `sim_kernels` labels them: bind, delay, split, wb, slots, late, imm, queue, group,
        /// pair, regs) switched from the lead figure's setting.
        fn simulate_toggled(body: &[String], toggles: &str) -> f64 {
            use schedlab_cost::{sim::SimOptions, simulated_with};
            let hot = super::hot_loop_of(body);
            let model = core_model(Target::X86_64, "sapphirerapids").expect("the model");
            let mut o = SimOptions::cited(model.name);
            for toggle in toggles.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                let field = match toggle {
                    "bind" => &mut o.bind_ports_at_allocation,
                    "delay" => &mut o.issue_dispatch_delay,
                    "split" => &mut o.split_schedulers,
                    "wb" => &mut o.writeback_conflicts,
                    "slots" => &mut o.issue_slot_rule,
                    "late" => &mut o.late_operand_penalty,
                    "imm" => &mut o.immediate_add_elimination,
                    "queue" => &mut o.one_uop_per_queue_per_cycle,
                    "group" => &mut o.whole_group_allocation,
                    "pair" => &mut o.paired_stores,
                    "regs" => &mut o.register_file,
                    other => panic!("LOOPS_SIM_TOGGLES: no mechanism `{other}`"),
                };
                *field = !*field;
            }
            simulated_with(Target::X86_64, &hot, model, o).unwrap_or(f64::NAN)
        }

        /// Times every block of the file at `path` (cycles per iteration of the reference
        /// chain's clock); `PROBE_TSV=path` also writes the table as TSV.
        pub fn run(path: &str) {
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let probes = parse(&text);
            let mut bodies: Vec<Vec<String>> = probes.iter().map(|p| p.body.clone()).collect();
            // Register operand: Golden Cove executes `addq $1` chains at rename, not one a cycle.
            let mut chain = vec!["addq %rbx, %rax".to_string(); REF_ADDS];
            chain.extend(["decq %r15".to_string(), "jnz 2b".to_string()]);
            bodies.push(chain);
            // The contention check: probe `A8` of zen4_probes.txt with register operands
            // ([`super::quiet_alu_cycles`] when quiet).
            let mut check: Vec<String> = ["rax", "rbx", "rcx", "rdx", "rbp", "r8", "r9", "r10"]
                .iter()
                .map(|r| format!("addq %r11, %{r}"))
                .collect();
            check.extend(["decq %r15".to_string(), "jnz 2b".to_string()]);
            bodies.push(check);
            let src = source(&bodies);
            let code = assemble_source(&src, bodies.len());
            let entry = |i: usize| {
                // SAFETY: `f{i}` follows the `ProbeFn` convention (see `source`).
                unsafe { std::mem::transmute::<*const u8, ProbeFn>(code.raw(i)) }
            };
            let mut a = vec![Line([0; 8]); BUFFER / 64];
            let mut b = vec![Line([0; 8]); BUFFER / 64];
            let chain_fn = entry(probes.len());
            per_iter(chain_fn, &mut a, &mut b, 2_000);
            let check_fn = entry(probes.len() + 1);
            let contention = |label: &str, a: &mut [Line], b: &mut [Line]| {
                let (mut c, mut x) = (f64::INFINITY, f64::INFINITY);
                for _ in 0..3 {
                    c = c.min(per_iter(chain_fn, a, b, 10));
                    x = x.min(per_iter(check_fn, a, b, 10));
                }
                let ratio = REF_ADDS as f64 * x / c;
                println!(
                    "contention check ({label}): 8 adds {ratio:.3} cycles/iteration (quiet: {:.2})",
                    super::quiet_alu_cycles()
                );
                if ratio > super::quiet_alu_cycles() * 1.02 {
                    eprintln!(
                        "warning: the core is shared with a busy neighbour; timings are inflated"
                    );
                }
            };
            contention("before", &mut a, &mut b);
            // `LOOPS_SIM_TOGGLES="group;group,slots"`: one more Golden Cove column per
            // `;`-separated set of mechanisms switched from the lead figure (default: `group`).
            let variants: Vec<String> = std::env::var("LOOPS_SIM_TOGGLES")
                .unwrap_or_else(|_| "group".into())
                .split(';')
                .map(|v| v.trim().to_string())
                .collect();
            let mut tsv =
                String::from("name\tcycles\tspread\tmedian\tsim_znver4\tsim_sapphirerapids");
            for v in &variants {
                let _ = write!(tsv, "\tsim_sapphirerapids[{v}]");
            }
            tsv.push('\n');
            println!(
                "cycles/iter  ±(2nd best − best)  median  sim-znver4  sim-sapphirerapids  [{}]  name",
                variants.join("] [")
            );
            // `LOOPS_SIM_ONLY=1`: the simulation's columns only (no timing), for iterating on
            // the model.
            let sim_only = std::env::var_os("LOOPS_SIM_ONLY").is_some();
            // `LOOPS_ROUNDS=n` (default 7, at least 2): rounds per probe. Small port-bound
            // loops settle into one of several steady states per call on Golden Cove (notes/
            // design.md, Findings, "Small chained loops"), so the median beside the best shows which is usual.
            let round_count = std::env::var("LOOPS_ROUNDS")
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .map_or(7, |n| n.max(2));
            // `LOOPS_AGAINST=path`: a stored run of this file (a `PROBE_TSV` table) to score
            // the simulation's columns against, on any host.
            let against = std::env::var("LOOPS_AGAINST").ok().map(|path| {
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
                (
                    path,
                    stored_measurements(&text).unwrap_or_else(|e| panic!("{e}")),
                )
            });
            let mut labels = vec!["sim-znver4".to_string(), "sim-sapphirerapids".to_string()];
            labels.extend(variants.iter().map(|v| format!("sim-sapphirerapids[{v}]")));
            let mut errors: Vec<Vec<(f64, String)>> = vec![Vec::new(); labels.len()];
            for (i, probe) in probes.iter().enumerate() {
                let f = entry(i);
                let mut rounds = Vec::new();
                for _ in 0..if sim_only { 0 } else { round_count } {
                    let (mut best, mut best_chain) = (f64::INFINITY, f64::INFINITY);
                    for _ in 0..3 {
                        best_chain = best_chain.min(per_iter(chain_fn, &mut a, &mut b, 10));
                        best = best.min(per_iter(f, &mut a, &mut b, 10));
                    }
                    rounds.push(REF_ADDS as f64 * best / best_chain);
                }
                // The best of the rounds; `spread` is the gap to the second best (small when
                // the best is reproducible, even if a neighbour disturbed other rounds).
                rounds.sort_by(f64::total_cmp);
                let (cycles, spread) = match rounds.as_slice() {
                    [best, second, ..] => (*best, second - best),
                    _ => (f64::NAN, f64::NAN),
                };
                let median = rounds.get(rounds.len() / 2).copied().unwrap_or(f64::NAN);
                let zen4 = simulate("znver4", &probe.body);
                let glc = simulate("sapphirerapids", &probe.body);
                let toggled: Vec<f64> = variants
                    .iter()
                    .map(|v| simulate_toggled(&probe.body, v))
                    .collect();
                let columns: String = toggled.iter().map(|c| format!("{c:8.3}  ")).collect();
                println!(
                    "{cycles:8.3}  ±{spread:.3}  {median:8.3}  {zen4:8.3}  {glc:8.3}  {columns}{}",
                    probe.name
                );
                if let Some(measured) = against.as_ref().and_then(|(_, m)| m.get(&probe.name)) {
                    for (k, sim) in [zen4, glc].iter().chain(&toggled).enumerate() {
                        errors[k].push((sim / measured - 1.0, probe.name.clone()));
                    }
                }
                let extra: String = toggled.iter().map(|c| format!("\t{c:.3}")).collect();
                let _ = writeln!(
                    tsv,
                    "{}\t{cycles:.3}\t{spread:.3}\t{median:.3}\t{zen4:.3}\t{glc:.3}{extra}",
                    probe.name
                );
            }
            contention("after", &mut a, &mut b);
            if let Some((path, _)) = &against {
                for (label, errs) in labels.iter().zip(&errors) {
                    println!("against {path}: {label} {}", error_summary(errs));
                }
            }
            if let Ok(out) = std::env::var("PROBE_TSV") {
                std::fs::write(out, tsv).expect("write the TSV");
            }
        }

        /// Measured cycles per probe name from a `PROBE_TSV` table: the `median` column where
        /// there is one (else `cycles`); lines starting with `#` are comments.
        pub fn stored_measurements(text: &str) -> Result<HashMap<String, f64>, String> {
            let mut lines = text
                .lines()
                .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
            let header: Vec<&str> = lines.next().ok_or("an empty table")?.split('\t').collect();
            let column = |name: &str| header.iter().position(|h| *h == name);
            let at = column("median")
                .or_else(|| column("cycles"))
                .ok_or("no `median` or `cycles` column")?;
            let mut out = HashMap::new();
            for line in lines {
                let cells: Vec<&str> = line.split('\t').collect();
                let value = cells
                    .get(at)
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("no measurement in `{line}`"))?;
                out.insert(cells[0].to_string(), value);
            }
            Ok(out)
        }

        /// `n probes, mean |error| …, largest … (name)` over relative errors.
        fn error_summary(errors: &[(f64, String)]) -> String {
            let Some((worst, name)) = errors.iter().max_by(|a, b| a.0.abs().total_cmp(&b.0.abs()))
            else {
                return "no probe of this file in the table".into();
            };
            let mean = errors.iter().map(|e| e.0.abs()).sum::<f64>() / errors.len() as f64;
            format!(
                "{} probes, mean |error| {:.1} %, largest {:+.1} % ({name})",
                errors.len(),
                100.0 * mean,
                100.0 * worst
            )
        }

        #[test]
        fn stored_measurements_prefer_the_median_and_skip_comments() {
            let table = "# host: test\nname\tcycles\tspread\tmedian\nA: x\t1.0\t0.0\t1.2\nB: y\t2.0\t0.1\t2.5\n";
            let m = stored_measurements(table).expect("parses");
            assert_eq!(m.len(), 2);
            assert_eq!(m["A: x"], 1.2);
            assert_eq!(m["B: y"], 2.5);
            let old = stored_measurements("name\tcycles\nA: x\t1.5\n").expect("parses");
            assert_eq!(old["A: x"], 1.5);
            assert!(stored_measurements("name\tcycles\nA: x\tNaN\n").is_err());
            assert!(stored_measurements("name\tother\nA: x\t1\n").is_err());
            assert!(stored_measurements("# only a comment\n").is_err());
            let summary = error_summary(&[(0.1, "A".into()), (-0.3, "B".into())]);
            assert_eq!(
                summary,
                "2 probes, mean |error| 20.0 %, largest -30.0 % (B)"
            );
        }

        #[test]
        fn every_stored_probe_file_keeps_the_convention() {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/probes");
            let mut files = 0;
            for entry in std::fs::read_dir(&dir).expect("the probes directory") {
                let path = entry.expect("an entry").path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if !name.ends_with("_probes.txt") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("a probe file");
                // `parse` panics, naming the block, on a block that breaks the convention.
                assert!(!parse(&text).is_empty(), "{name} holds no probe");
                files += 1;
            }
            assert!(files >= 6, "only {files} probe files in {}", dir.display());
        }

        #[test]
        fn every_stored_measurement_names_the_probes_of_its_file() {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/probes");
            for entry in std::fs::read_dir(&dir).expect("the probes directory") {
                let path = entry.expect("an entry").path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let Some(stem) = name.strip_suffix(".measured.tsv") else {
                    continue;
                };
                let table = std::fs::read_to_string(&path).expect("a table");
                let measured =
                    stored_measurements(&table).unwrap_or_else(|e| panic!("{name}: {e}"));
                let probes = std::fs::read_to_string(dir.join(format!("{stem}.txt")))
                    .unwrap_or_else(|e| panic!("{name} without its probe file: {e}"));
                let names: Vec<String> = parse(&probes).into_iter().map(|p| p.name).collect();
                for probe in measured.keys() {
                    assert!(
                        names.contains(probe),
                        "{name}: `{probe}` is not a probe of {stem}.txt"
                    );
                }
                assert!(!measured.is_empty(), "{name} measures nothing");
            }
        }

        #[test]
        fn the_convention_is_checked() {
            let ok = |b: &[&str]| check(&b.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            assert!(ok(&["addq $1, %rax", "movq 8(%rdi), %rbx", "movl %eax, 16(%rsi)"]).is_ok());
            assert!(ok(&["movq (%rdi,%rax,8), %rax"]).is_ok());
            assert!(ok(&["addq $1, %rdi"]).is_err());
            assert!(ok(&["movq (%rbx), %rax"]).is_err());
            assert!(ok(&["movq 8192(%rdi), %rax"]).is_err());
            assert!(ok(&["movl %eax, 8(%rsi,%r14,4)", "addq $1, %rax"]).is_ok());
            assert!(ok(&["movl %eax, 8(%rsi,%rax,4)", "addq $1, %rax"]).is_err());
            assert!(ok(&["movq (%rdi,%rax,8), %rax", "movq %rax, (%rdi)"]).is_err());
            assert!(ok(&["movq (%rdi,%rax,8), %rax", "movq %rax, (%rsi)"]).is_ok());
            assert!(ok(&["addq $100, %rax", "movq (%rdi,%rax,8), %rbx"]).is_err());
            assert!(ok(&["addl $100, %eax", "movq (%rdi,%rax,8), %rbx"]).is_err());
            assert!(ok(&["movq (%rdi,%r14,16), %rbx"]).is_err());
            assert!(ok(&["pushq %rax"]).is_err());
            assert!(ok(&["leal 1000(%rax,%rbx), %eax"]).is_ok());
            assert!(ok(&["leaq 8(%rbx), %rdi"]).is_err());
            assert!(ok(&["leal 8(%rbx), %eax", "movq (%rdi,%rax,8), %rcx"]).is_err());
        }
    }
}

#[test]
#[ignore = "an experiment: prints timings, run by hand (LOOPS_FILE=path)"]
fn loops_file() {
    #[cfg(target_arch = "x86_64")]
    match std::env::var("LOOPS_FILE") {
        Ok(path) => x86::probes::run(&path),
        Err(_) => eprintln!("skipping: set LOOPS_FILE=path"),
    }
    #[cfg(not(target_arch = "x86_64"))]
    eprintln!("skipping: x86_64 only");
}

#[test]
#[ignore = "an experiment: prints timings, run by hand"]
fn mul_add_loop_orders() {
    #[cfg(target_arch = "x86_64")]
    x86::run();
    #[cfg(not(target_arch = "x86_64"))]
    eprintln!("skipping: x86_64 only");
}

#[test]
fn loops_files_expand_rept_runs() {
    #[cfg(target_arch = "x86_64")]
    {
        use x86::probes::expand_repeats;
        let text = [
            "nop",
            ".rept 3",
            "addq %rax, %rbx",
            "nop",
            ".endr",
            "decq %r15",
        ];
        let got = expand_repeats(text.into_iter()).expect("expands");
        assert_eq!(got.len(), 1 + 3 * 2 + 1);
        assert_eq!(got[1..3], ["addq %rax, %rbx", "nop"]);
        assert_eq!(got[5..8], ["addq %rax, %rbx", "nop", "decq %r15"]);
        assert!(expand_repeats([".rept 2", "nop"].into_iter()).is_err());
        assert!(expand_repeats([".endr"].into_iter()).is_err());
        assert!(expand_repeats([".rept x", "nop", ".endr"].into_iter()).is_err());
        assert!(expand_repeats([".rept 2", ".rept 2", ".endr", ".endr"].into_iter()).is_err());
    }
}
