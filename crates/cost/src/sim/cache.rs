//! The simulations already run in this process, by everything [`simulate_with`] reads: a
//! report costs many codes of one function, and codes scheduled differently elsewhere often
//! share their hot loop. A figure is served only for a stored key equal to the asked one in
//! full (the digest only picks the bucket), so it is the figure the simulation would give.
//!
//! What the simulation reads: the loop's effects, uops, fused compares and moves, back edge and
//! small immediate adds ([`LoopKey`], [`CoreKey`]), the core model (by value; its name picks the
//! window and port layout) and the options. Memory: about 0.3 kB per stored instruction (an
//! `Effects` is 136 bytes, its register lists and uops a few small heap blocks) and 1 kB per
//! loop; the cache is emptied when it holds more than [`MAX_STORED_INSTRUCTIONS`] (≈30 MB).

use super::{Fusion, SimOptions, simulate_with};
use crate::Effects;
use crate::models::CoreModel;
use crate::ports::UopClass;
use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

/// Instructions of the stored loops at most before the cache is emptied.
const MAX_STORED_INSTRUCTIONS: usize = 100_000;

/// What the simulation reads of a loop on every core.
struct LoopKey {
    effects: Vec<Effects>,
    uops: Vec<Vec<UopClass>>,
    compares: Vec<usize>,
    taken_branch: Option<usize>,
    immediate_adds: Vec<usize>,
}

impl LoopKey {
    fn matches(
        &self,
        effects: &[Effects],
        uops: &[Vec<UopClass>],
        fusion: Fusion<'_>,
        immediate_adds: &[usize],
    ) -> bool {
        self.effects == effects
            && self.uops == uops
            && self.compares == fusion.compares
            && self.taken_branch == fusion.taken_branch
            && self.immediate_adds == immediate_adds
    }
}

/// What the simulation reads besides the loop, and its figure.
struct CoreKey {
    model: CoreModel,
    options: SimOptions,
    /// [`Fusion::moves`], which depends on the core.
    moves: Vec<usize>,
    cycles: Option<f64>,
}

/// One stored loop and its figures on the cores simulated so far.
struct Entry {
    key: LoopKey,
    cores: Vec<CoreKey>,
}

#[derive(Default)]
struct Cache {
    /// By [`loop_digest`]: the loops with that digest.
    loops: HashMap<u64, Vec<Entry>>,
    /// Instructions of the loops stored.
    instructions: usize,
}

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// A digest of the loop part of the key (picks the bucket; equality is checked in full).
fn loop_digest(
    effects: &[Effects],
    uops: &[Vec<UopClass>],
    fusion: Fusion<'_>,
    immediate_adds: &[usize],
) -> u64 {
    let mut h = DefaultHasher::new();
    effects.hash(&mut h);
    uops.hash(&mut h);
    fusion.compares.hash(&mut h);
    fusion.taken_branch.hash(&mut h);
    immediate_adds.hash(&mut h);
    h.finish()
}

/// [`simulate_with`], served from the figures of this process's earlier simulations when one
/// read exactly the same inputs.
pub(crate) fn simulate_cached(
    effects: &[Effects],
    uops: &[Vec<UopClass>],
    fusion: Fusion<'_>,
    immediate_adds: &[usize],
    model: &CoreModel,
    options: SimOptions,
) -> Option<f64> {
    let digest = loop_digest(effects, uops, fusion, immediate_adds);
    let core_matches =
        |c: &CoreKey| c.model == *model && c.options == options && c.moves == fusion.moves;
    {
        let cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        let stored = cache
            .as_ref()
            .and_then(|c| c.loops.get(&digest))
            .and_then(|bucket| {
                bucket
                    .iter()
                    .find(|e| e.key.matches(effects, uops, fusion, immediate_adds))?
                    .cores
                    .iter()
                    .find(|c| core_matches(c))
            });
        if let Some(core) = stored {
            return core.cycles;
        }
    }
    // Not held while simulating: another thread may run the same simulation meanwhile, to the
    // same figure, and only one is kept.
    let cycles = simulate_with(effects, uops, fusion, immediate_adds, model, options);
    let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = guard.get_or_insert_with(Cache::default);
    if cache.instructions + effects.len() > MAX_STORED_INSTRUCTIONS {
        *cache = Cache::default();
    }
    let bucket = cache.loops.entry(digest).or_default();
    let at = match bucket
        .iter()
        .position(|e| e.key.matches(effects, uops, fusion, immediate_adds))
    {
        Some(at) => at,
        None => {
            bucket.push(Entry {
                key: LoopKey {
                    effects: effects.to_vec(),
                    uops: uops.to_vec(),
                    compares: fusion.compares.to_vec(),
                    taken_branch: fusion.taken_branch,
                    immediate_adds: immediate_adds.to_vec(),
                },
                cores: Vec::new(),
            });
            cache.instructions += effects.len();
            bucket.len() - 1
        }
    };
    let cores = &mut bucket[at].cores;
    if !cores.iter().any(core_matches) {
        cores.push(CoreKey {
            model: *model,
            options,
            moves: fusion.moves.to_vec(),
            cycles,
        });
    }
    cycles
}

#[cfg(test)]
mod tests {
    use super::{simulate_cached, simulate_with};
    use crate::models::core_model;
    use crate::ports::UopClass;
    use crate::sim::{Fusion, SimOptions};
    use crate::{DecodedLoop, Target, fused_moves};

    /// One simulation's inputs, as the cost model builds them for a loop, with a change.
    #[derive(Clone, Copy)]
    struct Case {
        lines: &'static [&'static str],
        core: &'static str,
        options: SimOptions,
        /// The uops of every instruction but the last replaced by a shift's.
        shifts: bool,
        /// The back edge dropped (no taken-branch ports).
        no_taken_branch: bool,
        /// No immediate adds executed at rename.
        no_immediate_adds: bool,
    }

    /// Independent adds: the ALU ports bound the loop.
    const ADDS: &[&str] = &[
        "addl %ecx, %eax",
        "addl %ecx, %ebx",
        "addl %ecx, %edx",
        "addl %ecx, %esi",
        "addl %ecx, %edi",
        "addl %ecx, %r8d",
        "addl %ecx, %r9d",
        "jne 0x0",
    ];

    /// The figure served for `case` after the cases before it, and the figure simulated.
    fn served_and_simulated(case: &Case) -> (Option<f64>, Option<f64>) {
        let target = Target::X86_64;
        let body = crate::tests::body(target, case.lines);
        let decoded = DecodedLoop::new(target, &body);
        let model = core_model(target, case.core).expect("an x86_64 core");
        let effects = decoded.effects.as_deref().expect("decoded");
        let moves = fused_moves(&decoded.order, effects, &decoded.fused_compares, model);
        let fusion = Fusion {
            compares: &decoded.fused_compares,
            moves: &moves,
            taken_branch: decoded.back_edge.filter(|_| !case.no_taken_branch),
        };
        let adds: &[usize] = if case.no_immediate_adds {
            &[]
        } else {
            &decoded.immediate_adds
        };
        let mut uops = decoded.x86_uops.clone();
        if case.shifts {
            let n = uops.len();
            uops[..n - 1].fill(vec![UopClass::Shift]);
        }
        (
            simulate_cached(effects, &uops, fusion, adds, model, case.options),
            simulate_with(effects, &uops, fusion, adds, model, case.options),
        )
    }

    #[test]
    fn a_figure_is_served_only_for_the_same_inputs() {
        let skylake = Case {
            lines: ADDS,
            core: "skylake",
            options: SimOptions::CITED,
            shifts: false,
            no_taken_branch: false,
            no_immediate_adds: false,
        };
        let golden_cove = Case {
            core: "sapphirerapids",
            ..skylake
        };
        let pointer_steps = Case {
            lines: &[
                "addq $0x8, %rdi",
                "addq $0x8, %rsi",
                "addq $0x8, %rdx",
                "addq $0x8, %rcx",
                "addq $0x8, %r8",
                "addq $0x8, %r9",
                "addq $0x8, %r10",
                "jne 0x0",
            ],
            ..golden_cove
        };
        // Each case differs from the one before in one input, and in its figure: a key that
        // left that input out would serve the earlier figure.
        let cases = [
            skylake,
            // The effects: one add on a chain.
            Case {
                lines: &[
                    "addl %ecx, %eax",
                    "addl %eax, %ebx",
                    "addl %ebx, %edx",
                    "addl %edx, %esi",
                    "addl %esi, %edi",
                    "addl %edi, %r8d",
                    "addl %r8d, %eax",
                    "jne 0x0",
                ],
                ..skylake
            },
            skylake,
            // The uops.
            Case {
                shifts: true,
                ..skylake
            },
            skylake,
            // The core.
            golden_cove,
            // The options.
            Case {
                options: SimOptions::NONE,
                ..golden_cove
            },
            golden_cove,
            // The back edge.
            Case {
                no_taken_branch: true,
                ..golden_cove
            },
            pointer_steps,
            // The adds executed at rename.
            Case {
                no_immediate_adds: true,
                ..pointer_steps
            },
        ];
        let mut figures = Vec::new();
        for case in &cases {
            let (served, simulated) = served_and_simulated(case);
            assert_eq!(served, simulated, "{:?} on {}", case.lines, case.core);
            // Served again, from the cache.
            assert_eq!(served_and_simulated(case).0, simulated);
            figures.push(simulated.expect("a figure"));
        }
        for pair in figures.windows(2) {
            assert_ne!(pair[0], pair[1], "figures {figures:?}");
        }
    }
}
