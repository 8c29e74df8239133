//! An experiment, not a check (`#[ignore]`d, prints, asserts nothing timed): how many uops of
//! each kind this core keeps in flight behind a cache miss — the window sizes `cost/src/sim.rs`
//! takes from its sources. The method is H. Wong's ("Measuring Reorder Buffer Capacity",
//! blog.stuffedcow.net, 2013): two independent pointer chases through a 256 MiB buffer, one
//! load of each per iteration, `n` filler instructions between the first and the second.
//! While the window holds the first load, its `n` fillers and the second load, the two misses
//! overlap and an iteration costs one memory latency; once a resource the fillers take runs
//! out, the second load waits for the first to retire and the iteration costs two. The fillers pick the
//! resource: `nop` (reorder-buffer entries only), `mov $1, %r32` (an entry and an integer
//! register each, executed at once), `lea 1(%miss), %r64` reading the load just before
//! (an entry, a register and a computation-scheduler entry each, until the miss returns),
//! `rorx` or `imul` reading it (the same, on ports 0 and 6 or port 1 only: whether the
//! computation scheduler is one pool or a queue per port),
//! a load from the missed line (a memory-scheduler and a load-buffer entry), a store of the
//! missed value (a store-data-scheduler and a store-buffer entry); `add $1, %r32` and `cmp
//! $1, %r32` (whether the flags take a register too), `mov %miss, %r64` (whether moves are
//! eliminated), and units of a `lea` and a load or two `lea`s and a store reading the miss
//! (whether memory uops also take computation-scheduler entries).
//! Cycles come from `asm_clock`'s dependent-`add` chain timed in the same run.
//!
//! Run: `cargo test --release --workspace --test experiments window_asm:: -- --ignored --nocapture`
//! (x86_64; notes/design.md, Findings, Golden Cove "The window", [EXP-WIN]); `WINDOW_ONLY=<words of a sweep's label>`
//! runs only the sweeps whose label contains them.

#[cfg(target_arch = "x86_64")]
mod x86 {
    use crate::asm_clock::cycle_time;
    use schedlab_backend::Target;
    use schedlab_cost::mca::HotLoop;
    use schedlab_cost::models::{CoreModel, core_model};
    use schedlab_cost::sim::SimOptions;
    use schedlab_cost::simulated_with;
    use std::arch::asm;
    use std::time::Instant;

    /// Load latency the simulation gives the chases' misses (cycles; about what one costs
    /// here, and long enough that only the window decides whether two overlap).
    const SIM_MISS_LATENCY: f64 = 600.0;

    /// Cache lines in the chased buffer (256 MiB).
    const LINES: usize = 1 << 22;
    /// u64 words per cache line.
    const STRIDE: usize = 8;

    /// Filler kinds.
    const NOP: usize = 0;
    const REGISTER: usize = 1;
    const SCHEDULED: usize = 2;
    const LOADS: usize = 3;
    const STORES: usize = 4;
    const ROTATES: usize = 5;
    const MULTIPLIES: usize = 6;
    const FLAG_WRITES: usize = 7;
    const FLAGS_ONLY: usize = 8;
    const MOVES: usize = 9;
    const LEA_AND_LOAD: usize = 10;
    const TWO_LEAS_AND_STORE: usize = 11;

    /// A random cyclic order of `LINES` cache lines: word `STRIDE·i` holds the word index of the
    /// next line (Sattolo's shuffle with a fixed xorshift seed, so runs are repeatable). The
    /// vector is advised into 2 MiB transparent huge pages before it is written
    /// (`MADV_HUGEPAGE`, where the kernel grants them), so that the loads miss the caches,
    /// not the TLB.
    fn cyclic_chase() -> Vec<u64> {
        let mut order: Vec<usize> = (0..LINES).collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in (1..LINES).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let j = (state % i as u64) as usize;
            order.swap(i, j);
        }
        let mut words = vec![0u64; LINES * STRIDE];
        const HUGE: usize = 2 << 20;
        let start = words.as_mut_ptr() as usize;
        let aligned = start.next_multiple_of(HUGE);
        let end = (start + words.len() * 8) / HUGE * HUGE;
        if end > aligned {
            // SAFETY: advice on whole pages inside the vector's allocation; it changes no
            // contents.
            unsafe {
                libc::madvise(
                    aligned as *mut libc::c_void,
                    end - aligned,
                    libc::MADV_HUGEPAGE,
                )
            };
        }
        for k in 0..LINES {
            words[order[k] * STRIDE] = (order[(k + 1) % LINES] * STRIDE) as u64;
        }
        words
    }

    /// Seconds per iteration of `iterations` iterations: load A, `N` fillers of `KIND`, load B,
    /// continuing the chases from word indices `state`, which it advances.
    fn chase<const KIND: usize, const N: usize>(
        words: &[u64],
        iterations: u64,
        state: &mut (u64, u64),
    ) -> f64 {
        let buf = words.as_ptr();
        let mut scratch = [0u64; 8];
        let sink = scratch.as_mut_ptr();
        let start = Instant::now();
        let (mut a, mut b) = *state;
        // One loop per filler kind: the two loads, each followed by `N` copies of its filler
        // (`t` and `sink` are named in a comment line so every kind takes the same operands).
        macro_rules! chase_loop {
            ($after_a:literal, $after_b:literal) => {
                asm!(
                    "# {t} {sink}",
                    "2:",
                    "mov {a}, qword ptr [{buf} + 8*{a}]",
                    ".rept {n}", $after_a, ".endr",
                    "mov {b}, qword ptr [{buf} + 8*{b}]",
                    ".rept {n}", $after_b, ".endr",
                    "dec {i}", "jnz 2b",
                    a = inout(reg) a, b = inout(reg) b, buf = in(reg) buf, sink = in(reg) sink,
                    i = inout(reg) iterations => _, t = out(reg) _, n = const N,
                    options(nostack),
                )
            };
        }
        // SAFETY: `a` and `b` are word indices the buffer itself holds (multiples of STRIDE
        // below LINES·STRIDE), so every load stays inside `words`; the fillers write only
        // `t`, which is declared as clobbered, or `scratch[0]`.
        unsafe {
            match KIND {
                NOP => chase_loop!("nop", "nop"),
                REGISTER => chase_loop!("mov {t:e}, 1", "mov {t:e}, 1"),
                LOADS => chase_loop!(
                    "mov {t}, qword ptr [{buf} + 8*{a}]",
                    "mov {t}, qword ptr [{buf} + 8*{b}]"
                ),
                STORES => chase_loop!("mov qword ptr [{sink}], {a}", "mov qword ptr [{sink}], {b}"),
                ROTATES => chase_loop!("rorx {t}, {a}, 7", "rorx {t}, {b}, 7"),
                MULTIPLIES => chase_loop!("imul {t}, {a}, 3", "imul {t}, {b}, 3"),
                FLAG_WRITES => chase_loop!("add {t:e}, 1", "add {t:e}, 1"),
                FLAGS_ONLY => chase_loop!("cmp {t:e}, 1", "cmp {t:e}, 1"),
                MOVES => chase_loop!("mov {t}, {a}", "mov {t}, {b}"),
                LEA_AND_LOAD => chase_loop!(
                    "lea {t}, [{a} + 2*{a}]\n mov {t}, qword ptr [{buf} + 8*{a}]",
                    "lea {t}, [{b} + 2*{b}]\n mov {t}, qword ptr [{buf} + 8*{b}]"
                ),
                TWO_LEAS_AND_STORE => chase_loop!(
                    "lea {t}, [{a} + 2*{a}]\n lea {t}, [{a} + 2*{a}]\n mov qword ptr [{sink}], {a}",
                    "lea {t}, [{b} + 2*{b}]\n lea {t}, [{b} + 2*{b}]\n mov qword ptr [{sink}], {b}"
                ),
                _ => chase_loop!("lea {t}, [{a} + 2*{a}]", "lea {t}, [{b} + 2*{b}]"),
            }
        }
        let seconds = start.elapsed().as_secs_f64() / iterations as f64;
        std::hint::black_box(&scratch);
        *state = (a, b);
        seconds
    }

    type Probe = fn(&[u64], u64, &mut (u64, u64)) -> f64;

    /// One sweep: its label, filler kind and the filler counts it times.
    type Sweep = (&'static str, usize, Vec<(usize, Probe)>);

    /// The sweep `$label` of the fillers `$kind`, one probe per filler count `$n`.
    macro_rules! sweep {
        ($label:literal, $kind:expr; $($n:literal)*) => {
            ($label, $kind, vec![$((($n), chase::<{ $kind }, $n> as Probe)),*])
        };
    }

    /// The loop of `kind` with `n` fillers in AT&T syntax, for the simulation.
    fn loop_text(kind: usize, n: usize) -> Vec<String> {
        let filler = |miss: &str| match kind {
            NOP => "nop".to_string(),
            REGISTER => "movl $1, %ecx".to_string(),
            SCHEDULED => format!("leaq (%{miss},%{miss},2), %rcx"),
            LOADS => format!("movq (%rdi,%{miss},8), %rcx"),
            ROTATES => format!("rorxq $7, %{miss}, %rcx"),
            MULTIPLIES => format!("imulq $3, %{miss}, %rcx"),
            FLAG_WRITES => "addl $1, %ecx".to_string(),
            FLAGS_ONLY => "cmpl $1, %ecx".to_string(),
            MOVES => format!("movq %{miss}, %rcx"),
            LEA_AND_LOAD => format!("leaq (%{miss},%{miss},2), %rcx\nmovq (%rdi,%{miss},8), %rcx"),
            TWO_LEAS_AND_STORE => format!(
                "leaq (%{miss},%{miss},2), %rcx\nleaq (%{miss},%{miss},2), %rcx\nmovq %{miss}, (%rsi)"
            ),
            _ => format!("movq %{miss}, (%rsi)"),
        };
        let mut lines = vec!["movq (%rdi,%rax,8), %rax".to_string()];
        lines.extend((0..n).flat_map(|_| {
            filler("rax")
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        }));
        lines.push("movq (%rdi,%rbx,8), %rbx".to_string());
        lines.extend((0..n).flat_map(|_| {
            filler("rbx")
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        }));
        lines.extend(["decq %r15".to_string(), "jne 0x0".to_string()]);
        lines
    }

    /// `schedlab-sim/sapphirerapids` for the loop of `kind` with `n` fillers, its loads given
    /// a miss's latency, allocating into any free entry or whole groups only.
    fn simulated_pair(kind: usize, n: usize) -> (f64, f64) {
        let base = core_model(Target::X86_64, "sapphirerapids").expect("the model");
        let model = CoreModel {
            load: SIM_MISS_LATENCY,
            ..*base
        };
        let body = HotLoop::from_lines(&loop_text(kind, n));
        let sim = |whole_group_allocation: bool| {
            let options = SimOptions {
                whole_group_allocation,
                ..SimOptions::cited(model.name)
            };
            simulated_with(Target::X86_64, &body, &model, options).unwrap_or(f64::NAN)
        };
        (sim(false), sim(true))
    }

    /// Times every filler count of `probes` (the fastest of 5 runs each) and prints cycles per
    /// iteration, each against the smallest count's, and the first count past 1.5×; beside
    /// them the simulation's ratios without and with whole-group allocation.
    fn sweep(
        label: &str,
        kind: usize,
        words: &[u64],
        state: &mut (u64, u64),
        probes: &[(usize, Probe)],
        cycle: f64,
    ) {
        let iterations = 4_000;
        let mut baseline = None;
        let mut sim_baseline = None;
        let mut knee = None;
        println!("{label}:  measured | simulated: any free entry, whole groups");
        for &(n, probe) in probes {
            let mut best = f64::INFINITY;
            for _ in 0..5 {
                best = best.min(probe(words, iterations, state));
            }
            let cycles = best / cycle;
            let base = *baseline.get_or_insert(cycles);
            let ratio = cycles / base;
            if knee.is_none() && ratio > 1.5 {
                knee = Some(n);
            }
            let (single, group) = simulated_pair(kind, n);
            let (s0, g0) = *sim_baseline.get_or_insert((single, group));
            println!(
                "  n {n:4}  {cycles:8.1} cycles/iteration  ×{ratio:.2} | ×{:.2}  ×{:.2}",
                single / s0,
                group / g0
            );
        }
        match knee {
            Some(n) => println!("  first count past 1.5× the smallest: {n}"),
            None => println!("  no count past 1.5× the smallest"),
        }
    }

    pub fn run() {
        let only = std::env::var("WINDOW_ONLY").ok();
        let words = &cyclic_chase();
        let huge = std::fs::read_to_string("/proc/self/smaps_rollup")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("AnonHugePages:"))
                    .map(|l| l.to_string())
            })
            .unwrap_or_default();
        println!("buffer: {} MiB; {huge}", (words.len() * 8) >> 20);
        // The chases start half the cycle apart, so neither runs into lines the other loaded.
        let mut b = 0;
        for _ in 0..LINES / 2 {
            b = words[b as usize];
        }
        let mut state = (0, b);
        let cycle = cycle_time();
        println!(
            "clock: {:.3} GHz effective (dependent add chain)",
            1e-9 / cycle
        );
        let sweeps: Vec<Sweep> = vec![
            sweep!(
                "nop fillers (reorder buffer)",
                NOP; 100 300 450 460 470 480 485 490 495 500 505 510 520 600
            ),
            sweep!(
                "mov $1, %r32 fillers (reorder buffer, integer registers)",
                REGISTER; 20 100 150 200 210 220 225 230 235 240 245 250 255 260 270 300
            ),
            sweep!(
                "add $1, %r32 fillers (reorder buffer, integer registers, flags)",
                FLAG_WRITES; 20 100 120 130 140 150 160 180 200 220 240 250 260 270 300
            ),
            sweep!(
                "cmp $1, %r32 fillers (reorder buffer, flags only)",
                FLAGS_ONLY; 20 100 120 130 140 150 160 180 200 220 240 250 260 270 300 400 500
            ),
            sweep!(
                "register moves of the miss (eliminated at rename, or a scheduler entry each)",
                MOVES; 10 50 90 100 104 108 112 116 120 150 200 250 300 400 480 500 520
            ),
            sweep!(
                "units of a lea and a load reading the miss (whether loads take computation-scheduler entries)",
                LEA_AND_LOAD; 10 30 40 48 52 56 60 64 68 72 76 80 100
            ),
            sweep!(
                "units of two leas and a store of the miss (whether store data takes computation-scheduler entries)",
                TWO_LEAS_AND_STORE; 10 20 30 34 36 38 40 44 48 52 56 60 80
            ),
            sweep!(
                "lea fillers reading the miss (scheduler, registers, reorder buffer)",
                SCHEDULED; 10 50 90 96 98 100 102 104 106 108 110 112 116 120 150
            ),
            sweep!(
                "rorx fillers reading the miss (ports 0 and 6 only: the scheduler's share of two ports)",
                ROTATES; 10 30 40 44 48 52 56 60 64 70 80 90 100 104 108 112 116 120 150
            ),
            sweep!(
                "imul fillers reading the miss (port 1 only: the scheduler's share of one port)",
                MULTIPLIES; 10 20 24 28 32 36 40 48 56 64 80 90 100 104 108 112 116 120 150
            ),
            sweep!(
                "loads reading the miss (memory scheduler, load buffer)",
                LOADS; 10 30 50 60 64 68 70 72 74 76 80 90 100 120 150 200
            ),
            sweep!(
                "stores of the miss (store-data scheduler, store buffer)",
                STORES; 10 20 30 36 40 44 48 52 56 60 70 80 100 120 150
            ),
        ];
        for (label, kind, probes) in &sweeps {
            if only.as_deref().is_none_or(|o| label.contains(o)) {
                sweep(label, *kind, words, &mut state, probes, cycle);
            }
        }
    }
}

#[test]
#[ignore = "an experiment: times pointer chases with fillers and prints"]
fn window_sizes_on_the_host() {
    #[cfg(target_arch = "x86_64")]
    x86::run();
}
