//! Critical-path rewrites: algebraic identities that take operations off a block's longest
//! dependence chain without changing any result.
//!
//! * [`masked_merge()`] — `(m & x) | (~m & y)` becomes `y ^ (m & (x ^ y))` when the mask is the
//!   last operand to be ready, or `(m & x) + (y & ~m)` (the two terms are bit-disjoint) when
//!   the merge feeds an addition, so that it can join the reassociated sum.
//! * [`reassociate()`] — trees of one associative-commutative operation (`iadd`, `bxor`, `band`,
//!   `bor`) are rebuilt so the operands ready earliest are combined first and the latest one
//!   last (a Huffman-style combination by ready time), folding their constants.
//!
//! Both read operation latencies from a [`LatencyFn`] (the scheduler's machine model), so the
//! decisions are the ones a latency-aware scheduler would want. They are general: nothing here
//! knows about MD5. Each returns a plain statistics struct.
//!
//! * [`identities`] — `x + 0` becomes `x`, and an extended single-use load one widening load
//!   (first, so the other rewrites see the simpler code).
//! * [`address`] — `load (a + (b + k))` becomes `load (a + b) + k`, one shared `a + b` per pair,
//!   so that loads need no address register of their own.

pub mod address;
pub mod identities;
pub mod masked_merge;
mod ready;
pub mod reassociate;
mod recurrence;

pub use address::{AddressStats, fold_address_offsets};
pub use identities::{IdentityStats, simplify_identities};
pub use masked_merge::{MaskedMergeStats, masked_merge};
pub(crate) use ready::{Aliases, reads_no_alias};
pub use ready::{LatencyFn, model_latency, ready_times, unit_latency};
pub use reassociate::{ConstantPlacement, ReassociateStats, reassociate, reassociate_with};

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{Function, Inst, Value, ValueDef};

/// Statistics of [`run`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RewriteStats {
    /// What the masked-merge rewrite did.
    pub masked_merge: MaskedMergeStats,
    /// What reassociation did.
    pub reassociate: ReassociateStats,
    /// What address offset folding did.
    pub address: AddressStats,
    /// What the identities removed.
    pub identities: IdentityStats,
}

/// How [`run`] runs: where reassociated constants go, and what a JIT may leave out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RewriteOptions {
    /// Where reassociation puts a tree's constant.
    pub constants: ConstantPlacement,
    /// Count what each rewrite did in full. Off (as a JIT runs it), the dead code the
    /// masked-merge rewrite leaves is removed in one sweep with address folding's, and
    /// reassociation does not compute the trees' ready times before rebuilding them: the
    /// function that results is the same, the statistics do not split the removed
    /// instructions (`masked_merge.removed` counts both sweeps') and
    /// `reassociate.shortened` / `reassociate.cycles_saved` stay zero.
    pub lean: bool,
    /// No instruction of the function reads an alias (what predicating bounds-check
    /// elimination and forwarding leave; checked in debug builds), so no operand is passed
    /// through `resolve_aliases`. The function that results, and the statistics, are the
    /// same.
    pub aliases_resolved: bool,
    /// Leave trees of `i8` conditions as built (reassociate only values). Predicating
    /// bounds-check elimination tests a loop's ranges in its preheader as a chain
    /// `all & (lo_ok & hi_ok)`, one lane or array at a time; rebuilt by ready time, the chain
    /// becomes a balanced tree whose tests are all live at once. With many arrays (the
    /// eight-lane MD5 kernel: 16 tests beside 8 offsets and 8 bounds) that exceeds the
    /// general registers, and the allocator then keeps the loop's counter in a stack slot. A
    /// preheader runs once per loop, so nothing is lost by keeping the chain.
    pub keep_conditions: bool,
}

impl From<ConstantPlacement> for RewriteOptions {
    /// Full statistics, constants placed as `constants` says.
    fn from(constants: ConstantPlacement) -> Self {
        Self {
            constants,
            ..Self::default()
        }
    }
}

/// Runs the identities, the masked-merge rewrite, address folding and then reassociation on
/// every block, as `options` says (a [`ConstantPlacement`] alone: full statistics).
pub fn run(
    func: &mut Function,
    latency: LatencyFn<'_>,
    options: impl Into<RewriteOptions>,
) -> RewriteStats {
    let options = options.into();
    if options.aliases_resolved {
        debug_assert!(reads_no_alias(func));
        let stats = run_steps(func, latency, options, Aliases::NoneRead);
        debug_assert!(reads_no_alias(func));
        return stats;
    }
    run_steps(func, latency, options, Aliases::Resolve)
}

/// [`run`]'s steps, operands read as `aliases` says (with full statistics: `Resolve`).
fn run_steps(
    func: &mut Function,
    latency: LatencyFn<'_>,
    options: RewriteOptions,
    aliases: Aliases,
) -> RewriteStats {
    let counting = !options.lean;
    let identities = identities::simplify_identities_with(func, aliases);
    let mut masked_merge = masked_merge::rewrite_merges(func, latency, aliases);
    if counting {
        // Full statistics: what the merges alone left dead.
        masked_merge.removed = remove_dead_pure_insts_with(func, aliases);
    }
    // Addresses first: their constants belong in the accesses' offsets, not in a
    // reassociated sum.
    let address = fold_address_offsets(func);
    // With full statistics the sweep above left no dead pure instruction, so one is needed
    // again only if address folding changed the function (a folded access, a shared base).
    let changed = address.folded > 0 || address.shared_bases > 0;
    if !counting {
        masked_merge.removed = remove_dead_pure_insts_with(func, aliases);
    } else if changed {
        remove_dead_pure_insts_with(func, aliases);
    }
    let reassociate = reassociate::reassociate_counting(
        func,
        latency,
        options.constants,
        counting,
        aliases,
        options.keep_conditions,
    );
    RewriteStats {
        masked_merge,
        reassociate,
        address,
        identities,
    }
}

/// Removes instructions without side effects whose results are all unused, and then those
/// that only they used. Returns how many were removed.
pub(crate) fn remove_dead_pure_insts(func: &mut Function) -> usize {
    remove_dead_pure_insts_with(func, Aliases::Resolve)
}

/// [`remove_dead_pure_insts`], operands read as `aliases` says.
pub(crate) fn remove_dead_pure_insts_with(func: &mut Function, aliases: Aliases) -> usize {
    // Whether the opcode has no side effect; that it has results is checked when a candidate
    // is taken from the work list (once per candidate).
    let pure = |func: &Function, inst: Inst| {
        let op = func.dfg.insts[inst].opcode();
        !op.is_terminator()
            && !op.is_branch()
            && !op.can_store()
            && !op.can_load()
            && !op.can_trap()
            && !op.is_call()
            && !op.other_side_effects()
    };
    // One sweep counts the uses and lists the candidates: pure instructions, in layout order
    // (the others are never removed).
    let mut uses: SecondaryMap<Value, u32> = SecondaryMap::with_capacity(func.dfg.num_values());
    uses.resize(func.dfg.num_values());
    let mut work: Vec<Inst> = Vec::with_capacity(func.dfg.num_insts());
    // Purity is decided once per instruction of the layout; an instruction stays a candidate
    // while it is in the layout (removing it clears the flag).
    let mut candidate: SecondaryMap<Inst, bool> = SecondaryMap::with_capacity(func.dfg.num_insts());
    candidate.resize(func.dfg.num_insts());
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            crate::bce::recognize::for_each_operand(func, inst, |v| {
                uses[aliases.resolve(func, v)] += 1;
            });
            if pure(func, inst) {
                candidate[inst] = true;
                work.push(inst);
            }
        }
    }
    let mut removed = 0;
    while let Some(inst) = work.pop() {
        if !candidate[inst] {
            continue;
        }
        let results = func.dfg.inst_results(inst);
        if results.is_empty() || results.iter().any(|&v| uses[v] > 0) {
            continue;
        }
        func.layout.remove_inst(inst);
        candidate[inst] = false;
        removed += 1;
        for &arg in func.dfg.inst_args(inst) {
            let v = aliases.resolve(func, arg);
            uses[v] = uses[v].saturating_sub(1);
            if uses[v] == 0
                && let ValueDef::Result(def, _) = func.dfg.value_def(v)
            {
                work.push(def);
            }
        }
    }
    removed
}

/// The last function of a CLIF text, for the rewrites' unit tests.
#[cfg(test)]
pub(crate) fn test_function(text: &str) -> Function {
    cranelift_reader::parse_functions(text)
        .ok()
        .and_then(|mut fs| fs.pop())
        .expect("test function parses")
}
