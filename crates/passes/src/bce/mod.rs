//! Bounds-check elimination: 16 checks per MD5 block → 1 → 0 in the hot loop, exactly (and
//! 3 → 0 per iteration of BigInteger's mulAdd and squaring loops).
//!
//! A Java front end checks every array read. OpenJDK's `MD5.implCompress0` reads the 64-byte
//! block as 16 little-endian `int`s, so the Java-literal kernel performs 16 checks per block,
//! each one a compare, a branch and a block boundary that splits the 64 steps from their
//! inputs. Graal removes 15 of them by proving that one check covers all 16 reads; HotSpot's
//! C2 goes further with loop predication and tests once, before the loop, that no iteration
//! can fail. This pass does both over Cranelift IR, for any function that uses the kernels'
//! check shape (`recognize`), not for MD5 alone:
//!
//! 1. [`merge`] — within a run of checks that leave through the same exit with the same
//!    arguments and have no side effect between them, all checks on one base and bound
//!    become one check on `base + kmin` against `max(bound - (kmax - kmin), 0)`. Exact for
//!    every input, including a base near `i32::MAX` whose `base + 63` wraps.
//! 2. [`predicate`] — a counted loop gets a preheader test (`o0 + kmin >= 0`,
//!    `limit + kmax < bound`, no wrap of the induction variable) that selects a copy of the
//!    loop without the checks it proves, or the original checked loop. Every input that fails
//!    the test runs the original, so failure status and committed state never change. The
//!    induction variable may count up (`iv < limit`, `iv <= limit`) or down (`iv > limit`,
//!    `iv >= limit`, BigInteger's `for (j = len-1; j >= 0; j--)`), and checks may also be on a
//!    second induction variable that moves in lockstep with it (a step `r` times the
//!    controlling one: mulAdd's `out[o--]`, squareToLen's `z[i]`, `z[i+1]` with `i += 2`):
//!    its range follows from the trip count `last - o0`, in 64-bit arithmetic. BigInteger:
//!    mulAdd 3 checks per iteration → 0, squareToLen's squares loop 3 → 0, and the loops with
//!    early exits (`addOne`) keep theirs.
//! 3. [`fuse`] — the jumps left behind are fused, so the 16 loads and 64 steps of an MD5 block
//!    form one basic block for the in-block scheduler.
//!
//! Before merging, [`constant`] turns checks of constant indices that the bound's definition
//! proves into jumps (SHA-256's `W[t-2]` … `W[i]` against `int[64]`), at `merge` and above.
//!
//! Measured payoff (`benches/bce.rs`, 1 MiB, x86-64 host, one run, medians): checked 608,
//! merged 607, predicated 605 MB/s with `opt_level=none`, the same within 0.5% after
//! Cranelift's optimiser. MD5 is bound by its 64-step dependency chain and the well-predicted
//! checks were never on it, so removing them buys no throughput by itself; what it buys is
//! structure — the 16 loads and 64 steps in one basic block that an in-block scheduler can
//! reorder, as Graal's schedule could once its one check covered all 16 reads. The counters
//! of every run are in [`BceStats`]. The verifier runs after each stage.

pub mod constant;
pub mod fuse;
pub mod heap;
pub mod merge;
pub mod predicate;
pub mod recognize;
pub mod sink;

use crate::deopt::SlowPathCall;
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{self, Block};
use cranelift_codegen::loop_analysis::LoopAnalysis;
use cranelift_codegen::settings;
use std::fmt;
use std::str::FromStr;

/// How far bounds-check elimination goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum BceLevel {
    /// Leave every check in place.
    Off,
    /// Merge checks within a block (16 → 1 per MD5 block).
    Merge,
    /// Merge, then version loops so the hot loop has no checks (→ 0).
    #[default]
    Predicate,
}

impl BceLevel {
    /// Every level, weakest first.
    pub const ALL: [BceLevel; 3] = [BceLevel::Off, BceLevel::Merge, BceLevel::Predicate];

    /// The level's name as [`FromStr`] accepts it.
    pub fn name(self) -> &'static str {
        match self {
            BceLevel::Off => "off",
            BceLevel::Merge => "merge",
            BceLevel::Predicate => "predicate",
        }
    }
}

impl fmt::Display for BceLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BceLevel {
    type Err = BceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BceLevel::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| BceError::UnknownLevel(s.to_string()))
    }
}

/// Why the pass did not produce a function.
#[derive(Debug, thiserror::Error)]
pub enum BceError {
    /// A level name that is not one of `off`, `merge`, `predicate`.
    #[error("unknown bounds-check-elimination level {0:?}; valid levels: off, merge, predicate")]
    UnknownLevel(String),
    /// The input function does not verify.
    #[error("the input function does not verify: {0}")]
    InvalidInput(String),
    /// A stage produced a function that does not verify (a bug in the pass).
    #[error("bce {stage} produced an invalid function: {message}")]
    Verifier {
        /// `merge` or `predicate`.
        stage: &'static str,
        /// The verifier's errors.
        message: String,
    },
}

/// Checks in one loop after the pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopChecks {
    /// The loop's header block.
    pub header: Block,
    /// Bounds checks in the loop's blocks (per iteration when the body is straight-line).
    pub checks: usize,
    /// Whether this is the check-free copy made by predication.
    pub unchecked_copy: bool,
}

/// A loop predication versioned: a preheader test enters the check-free loop at
/// `fast_header`, or else the original checked loop at `checked_header` — or, when the slow
/// path was outlined ([`crate::deopt`]), calls it (`checked_header` is then `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VersionedLoop {
    /// Header of the original loop, which keeps its checks (`None`: outlined).
    pub checked_header: Option<Block>,
    /// Header of the check-free loop.
    pub fast_header: Block,
}

/// What bounds-check elimination did: counters for reports, no prose.
///
/// "Per block" means per iteration of the hot loop — per 64-byte block for MD5. The hot loop
/// is the innermost loop with the most checks; a function without loops counts as one block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BceStats {
    /// The level the pass ran at.
    pub level: BceLevel,
    /// Checks per iteration of the hot loop before the pass (16 for MD5).
    pub checks_per_block_unoptimized: usize,
    /// Checks per iteration of the hot loop after the pass; after predication the hot loop is
    /// the check-free copy (MD5: 16, 1, 0 for off, merge, predicate).
    pub checks_per_block: usize,
    /// Checks in the whole function before the pass.
    pub checks_before: usize,
    /// Checks in the whole function after the pass (the checked fallback loop included).
    pub checks_after: usize,
    /// Checks of constant indices that their bound proves ([`constant`], e.g. SHA-256's
    /// `W[t-2]`).
    pub checks_constant: usize,
    /// Groups of two or more checks merged into one.
    pub groups_merged: usize,
    /// Checks removed by merging.
    pub checks_merged_away: usize,
    /// Loops given a check-free copy.
    pub loops_versioned: usize,
    /// Checks left out of check-free copies.
    pub checks_predicated: usize,
    /// Blocks fused into their only predecessor.
    pub blocks_fused: usize,
    /// Instructions of narrowed bounds and widened bases moved out of loops they were only
    /// live through ([`sink`]).
    pub values_sunk: usize,
    /// Per loop, after the pass.
    pub loops: Vec<LoopChecks>,
    /// The loops predication versioned, in layout order of their fast headers.
    pub versioned: Vec<VersionedLoop>,
    /// Blocks deleted because only outlined slow paths reached them.
    pub blocks_removed: usize,
    /// WebAssembly heap checks (Wasmtime's explicit-mode shapes, [`heap`]) in the function.
    pub heap_checks_before: usize,
    /// Heap checks a dominating heap check proves, turned into jumps.
    pub heap_checks_removed: usize,
}

impl fmt::Display for BceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bce={} checks_per_block={}->{} checks={}->{} merged_groups={} merged_away={} \
             loops_versioned={} predicated={} fused={}",
            self.level,
            self.checks_per_block_unoptimized,
            self.checks_per_block,
            self.checks_before,
            self.checks_after,
            self.groups_merged,
            self.checks_merged_away,
            self.loops_versioned,
            self.checks_predicated,
            self.blocks_fused
        )
    }
}

/// How [`run`] runs: the level, and what a JIT may leave out.
#[derive(Clone, Copy, Debug)]
pub struct BceOptions<'a> {
    /// How far to go: off, merge or predicate.
    pub level: BceLevel,
    /// Run the verifier on the input and after each stage (a JIT that verifies the pipeline's
    /// end result once turns it off; tests keep it on).
    pub verify_stages: bool,
    /// Predicate restartable loops in place, their failing test calling this slow path
    /// instead of keeping a checked copy ([`crate::deopt`]).
    pub slow_path: Option<&'a SlowPathCall>,
    /// Take the census of checks before and after (statistics only). Off, the function that
    /// results is the same, and the statistics keep only what later stages read
    /// ([`BceStats::versioned`], the loop and check counters of each step): `checks_before`,
    /// `checks_after`, both `checks_per_block` figures and `loops` stay empty.
    pub count_checks: bool,
    /// What the IR's producer guarantees about heap bounds ([`heap::HeapFacts`]).
    pub heap_facts: heap::HeapFacts,
    /// The ISA whose flags the verifier checks against (a `.clif` file's `set` and `target`
    /// lines, e.g. `preserve_frame_pointers` for `get_frame_pointer`); `None`: Cranelift's
    /// default flags, no ISA.
    pub verifier_isa: Option<&'a dyn cranelift_codegen::isa::TargetIsa>,
}

impl From<BceLevel> for BceOptions<'_> {
    /// `level` with every verifier run and the census on, no slow path.
    fn from(level: BceLevel) -> Self {
        Self {
            level,
            verify_stages: true,
            slow_path: None,
            count_checks: true,
            heap_facts: heap::HeapFacts::default(),
            verifier_isa: None,
        }
    }
}

/// Runs bounds-check elimination as `options` says (a [`BceLevel`] alone: verifier after every
/// stage, census on, no slow path); the result passes Cranelift's verifier.
pub fn run<'a>(
    func: &mut ir::Function,
    options: impl Into<BceOptions<'a>>,
) -> Result<BceStats, BceError> {
    let options = options.into();
    run_counting(func, &options)
}

/// [`run`]'s steps; `count`: take the census of checks before and after (statistics only).
fn run_counting(func: &mut ir::Function, options: &BceOptions) -> Result<BceStats, BceError> {
    let (level, slow_path, count) = (options.level, options.slow_path, options.count_checks);
    let verify = |func: &ir::Function| {
        if options.verify_stages {
            verify(func, options.verifier_isa)
        } else {
            Ok(())
        }
    };
    verify(func).map_err(BceError::InvalidInput)?;
    // Only the total and the hot loop are read from the census before: without checks there
    // is no hot loop, and the loops need not be found.
    let before = if count {
        census_with(func, false)
    } else {
        Census::default()
    };
    let hot = before.hot();
    let mut stats = BceStats {
        level,
        checks_per_block_unoptimized: hot.map_or(before.total, |l| l.checks),
        checks_before: before.total,
        ..BceStats::default()
    };
    let mut hot_header = hot.map(|l| l.header);
    let mut fast_headers = Vec::new();

    if level != BceLevel::Off {
        let proven = constant::remove_constant_checks(func);
        stats.checks_constant = proven.checks_removed;
        recognize::remove_dead(func, &proven.dead);
        stats.blocks_fused += fuse::fuse_jumps(func, &proven.new_jumps);
        let merged = merge::merge_checks(func);
        stats.groups_merged = merged.groups_merged;
        stats.checks_merged_away = merged.checks_removed;
        recognize::remove_dead(func, &merged.dead);
        stats.blocks_fused += fuse::fuse_jumps(func, &merged.new_jumps);
        func.dfg.resolve_all_aliases();
        stats.values_sunk = sink::sink_out_of_loops(func, &merged.placed);
        let heap = heap::remove_proven_checks(func, options.heap_facts);
        stats.heap_checks_before = heap.checks_seen;
        stats.heap_checks_removed = heap.checks_removed;
        recognize::remove_dead(func, &heap.dead);
        stats.blocks_fused += fuse::fuse_jumps(func, &heap.new_jumps);
        verify(func).map_err(|message| BceError::Verifier {
            stage: "merge",
            message,
        })?;
    }
    if level == BceLevel::Predicate {
        let predicated = predicate::predicate_loops(func, slow_path);
        stats.loops_versioned = predicated.loops_versioned;
        stats.checks_predicated = predicated.checks_removed;
        recognize::remove_dead(func, &predicated.dead);
        stats.blocks_fused += fuse::fuse_jumps(func, &predicated.new_jumps);
        if !predicated.outlined.is_empty() {
            stats.blocks_removed = crate::deopt::remove_unreachable(func).0;
        }
        func.dfg.resolve_all_aliases();
        verify(func).map_err(|message| BceError::Verifier {
            stage: "predicate",
            message,
        })?;
        fast_headers = predicated.fast_headers.values().copied().collect();
        fast_headers.extend(&predicated.outlined);
        let order: Vec<Block> = func.layout.blocks().collect();
        let mut versioned: Vec<VersionedLoop> = predicated
            .fast_headers
            .iter()
            .map(|(&checked, &fast_header)| VersionedLoop {
                checked_header: Some(checked),
                fast_header,
            })
            .chain(
                predicated
                    .outlined
                    .iter()
                    .map(|&fast_header| VersionedLoop {
                        checked_header: None,
                        fast_header,
                    }),
            )
            .collect();
        versioned.sort_by_key(|v| order.iter().position(|&b| b == v.fast_header));
        stats.versioned = versioned;
        if let Some(h) = hot_header {
            hot_header = Some(predicated.fast_headers.get(&h).copied().unwrap_or(h));
        }
    }

    if !count {
        return Ok(stats);
    }
    let after = census(func);
    stats.checks_after = after.total;
    stats.checks_per_block = match hot_header {
        Some(h) => after
            .loops
            .iter()
            .find(|l| l.header == h)
            .map_or(0, |l| l.checks),
        None => after.total,
    };
    stats.loops = after
        .loops
        .into_iter()
        .map(|l| LoopChecks {
            unchecked_copy: fast_headers.contains(&l.header),
            ..l
        })
        .collect();
    Ok(stats)
}

/// Counts the recognised bounds checks of `func`: in total and per innermost loop.
pub fn count_checks(func: &ir::Function) -> usize {
    recognize::all_checks(func).len()
}

#[derive(Default)]
struct Census {
    total: usize,
    /// Innermost loops, in layout order of their headers.
    loops: Vec<LoopChecks>,
}

impl Census {
    fn hot(&self) -> Option<&LoopChecks> {
        // The first of the loops with the most checks.
        self.loops
            .iter()
            .filter(|l| l.checks > 0)
            .fold(None, |best: Option<&LoopChecks>, l| match best {
                Some(b) if b.checks >= l.checks => Some(b),
                _ => Some(l),
            })
    }
}

fn census(func: &ir::Function) -> Census {
    census_with(func, true)
}

/// [`census`]; without `loops_always`, a function without checks gets no loops (nothing is
/// counted in them, and the control-flow analyses are skipped).
fn census_with(func: &ir::Function, loops_always: bool) -> Census {
    let check_blocks: Vec<Block> = recognize::all_checks(func)
        .into_iter()
        .map(|c| c.block)
        .collect();
    if check_blocks.is_empty() && !loops_always {
        return Census::default();
    }
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let mut la = LoopAnalysis::new();
    la.compute(func, &cfg, &domtree);
    let parents: Vec<_> = la.loops().filter_map(|l| la.loop_parent(l)).collect();
    let mut loops: Vec<LoopChecks> = la
        .loops()
        .filter(|l| !parents.contains(l))
        .map(|l| LoopChecks {
            header: la.loop_header(l),
            checks: check_blocks
                .iter()
                .filter(|&&b| la.is_in_loop(b, l))
                .count(),
            unchecked_copy: false,
        })
        .collect();
    let order: Vec<Block> = func.layout.blocks().collect();
    loops.sort_by_key(|l| order.iter().position(|&b| b == l.header));
    Census {
        total: check_blocks.len(),
        loops,
    }
}

fn verify(
    func: &ir::Function,
    isa: Option<&dyn cranelift_codegen::isa::TargetIsa>,
) -> Result<(), String> {
    let flags = settings::Flags::new(settings::builder());
    match isa {
        Some(isa) => cranelift_codegen::verify_function(func, isa),
        None => cranelift_codegen::verify_function(func, &flags),
    }
    .map_err(|e| e.to_string())
}
