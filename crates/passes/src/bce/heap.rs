//! WebAssembly heap checks: a check that a dominating check already proves becomes a `jump`.
//!
//! Wasmtime's explicit-bounds-check mode (`signals_based_traps(false)`, no reservation, no
//! guard pages) puts a check before every load and store of a 32-bit linear memory. In the IR
//! its translator writes (`wasmtime-internal-cranelift` 48, `bounds_checks.rs`), with `idx` the
//! zero-extended 32-bit address, `bound` the memory's current length in bytes (a `load.i64` from
//! the `VMMemoryDefinition`, reloaded at every access at `opt_level=none`) and `k` the access's
//! static offset plus its size:
//!
//! ```text
//!     idx   = uextend.i64 addr                ; addr: i32
//!     bound = load.i64 notrap aligned regionN vmctx+64
//!     ; one of three comparisons, `oob` true when the access is out of bounds:
//!     oob   = icmp uge idx, bound             ; k = 1:          idx + 1 > bound
//!     lim   = isub bound, k                   ; k <= min size:  idx > bound - k  (wrapping)
//!     oob   = icmp ugt idx, lim
//!     end   = iadd idx, k                     ; otherwise:      idx + k > bound
//!     oob   = icmp ugt end, bound
//!     c     = icmp ne oob, 0                  ; absent after the e-graph
//!     brif c, trap_block, guarded             ; trap_block: cold, calls the `trap` builtin, `trap`
//! ```
//!
//! A passed check of the first and third kind proves `idx + k <= bound` exactly ([`CheckForm::Exact`];
//! a zero-extended 32-bit `idx` plus a constant below 2^32 cannot wrap 64 bits). The second kind
//! proves only `idx <= bound - k` computed with wrap-around ([`CheckForm::Wrapping`]): Wasmtime
//! emits it only when `k` is at most the memory's declared minimum size, so that `bound >= k`
//! and no wrap happens, but that fact is the producer's, not the IR's. This pass takes it as
//! [`HeapFacts::min_bound`] (0 when unknown): a wrapping check with `k <= min_bound` counts as
//! exact, any other stays wrapping and proves only a check with exactly its own condition.
//!
//! Check `A` proves check `B` when both read the same index and the same bound, `A`'s success
//! block has `A`'s branch as its only predecessor and dominates `B`'s block (so `B` runs only
//! after `A` passed), and `A`'s fact implies `B`'s condition: `A` exact with `k_B <= k_A`, or
//! the same wrapping comparison. "The same bound" is the same SSA value, or two loads of the
//! same address, type and flags between which nothing may have written the bound's alias
//! region (a forward "last clobber" analysis like Cranelift's own alias analysis: a store to
//! that region or to no region, a call, an atomic or a fence clobbers; a store to the heap's
//! region does not, by the region contract of `ir::AliasRegion`). `memory.grow` is a call,
//! so a bound is never carried across one. Nothing else is assumed: a check is never removed
//! because it merely looks like another.

use super::recognize::{
    defining_inst, iconst_value, is_exit_block, predecessor_counts, unsigned_order,
};
use crate::edges::brif;
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    AliasRegion, Block, Function, Inst, InstructionData, MemFlagsData, Opcode, Type, Value,
    condcodes::IntCC, types,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// What the producer of the IR guarantees beyond the IR itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HeapFacts {
    /// Every bound a heap check compares against is at least this many bytes (a Wasm
    /// module's smallest declared memory minimum; 0: nothing known).
    pub min_bound: u64,
}

/// What a passed check proves about `idx` and `bound`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckForm {
    /// `idx + k <= bound` in exact integers.
    Exact(u64),
    /// `idx <= bound - k`, the subtraction wrapping modulo 2^64.
    Wrapping(u64),
}

/// One recognised Wasmtime heap check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeapCheck {
    /// The block the check terminates.
    pub block: Block,
    /// The conditional branch.
    pub branch: Inst,
    /// The 32-bit address before its zero extension.
    pub index: Value,
    /// The bound the comparison reads.
    pub bound: Value,
    /// What the check proves when it passes.
    pub form: CheckForm,
    /// Where control goes when the check passes.
    pub guarded: Block,
    /// The trap block taken when it fails.
    pub exit: Block,
    /// The comparison the branch tests (with the `icmp ne _, 0` around it, if any).
    pub cmp: Inst,
}

/// Recognises the heap check that terminates `block`, if it has one.
pub fn recognize_heap_check(func: &Function, block: Block) -> Option<HeapCheck> {
    let dfg = &func.dfg;
    let branch = func.layout.last_inst(block)?;
    let (arg, [fail_call, ok_call]) = brif(func, branch)?;
    let pool = &dfg.value_lists;
    let (exit, guarded) = (fail_call.block(pool), ok_call.block(pool));
    if exit == guarded || !ends_in_trap(func, exit) {
        return None;
    }
    let cmp = defining_inst(func, arg)?;
    let mut oob = cmp;
    // Wasmtime's `icmp ne oob, 0` on the i8 flag (the e-graph folds it away).
    if let InstructionData::IntCompare {
        cond: IntCC::NotEqual,
        args: [x, zero],
        ..
    } = dfg.insts[cmp]
        && iconst_value(func, zero) == Some(0)
        && dfg.value_type(x) == types::I8
    {
        oob = defining_inst(func, x)?;
    }
    // Normalise to `oob = x > y` or `oob = x >= y`.
    let (y, x, strict) = unsigned_order(func, oob)?;
    let (index, bound, form) = if !strict {
        // idx >= bound  ⟺  idx + 1 > bound.
        (zero_extended_index(func, x)?, y, CheckForm::Exact(1))
    } else if let Some(index) = zero_extended_index(func, x) {
        match binary(func, y, Opcode::Isub) {
            Some((bound, k)) => match non_negative_constant(func, k) {
                Some(k) => (index, bound, CheckForm::Wrapping(k)),
                None => return None,
            },
            // idx > bound  ⟺  idx + 0 > bound.
            None => (index, y, CheckForm::Exact(0)),
        }
    } else {
        // idx + k > bound, with k below 2^32 so that the sum of a 32-bit index cannot wrap.
        let (l, r) = binary(func, x, Opcode::Iadd)?;
        let (ext, k) = match (
            non_negative_constant(func, r),
            non_negative_constant(func, l),
        ) {
            (Some(k), _) => (l, k),
            (None, Some(k)) => (r, k),
            (None, None) => return None,
        };
        if k >= 1 << 32 {
            return None;
        }
        (zero_extended_index(func, ext)?, y, CheckForm::Exact(k))
    };
    Some(HeapCheck {
        block,
        branch,
        index,
        bound,
        form,
        guarded,
        exit,
        cmp,
    })
}

/// Every recognised heap check, in layout order.
pub fn all_heap_checks(func: &Function) -> Vec<HeapCheck> {
    func.layout
        .blocks()
        .filter_map(|b| recognize_heap_check(func, b))
        .collect()
}

/// What [`remove_proven_checks`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeapOutcome {
    /// Heap checks recognised.
    pub checks_seen: usize,
    /// Checks turned into jumps because a dominating check proves them.
    pub checks_removed: usize,
    /// The jumps that replaced removed checks (candidates for block fusion).
    pub new_jumps: Vec<Inst>,
    /// Comparisons of removed checks, to delete with what only they used.
    pub dead: Vec<Inst>,
}

/// Turns every heap check that a dominating heap check proves into a jump to its success block.
pub fn remove_proven_checks(func: &mut Function, facts: HeapFacts) -> HeapOutcome {
    let checks = all_heap_checks(func);
    let mut out = HeapOutcome {
        checks_seen: checks.len(),
        ..HeapOutcome::default()
    };
    if checks.len() < 2 {
        return out;
    }
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let Some(bounds) = BoundNumbering::new(func, &cfg, &domtree, &checks) else {
        return out;
    };
    let preds = predecessor_counts(func);
    let form = |c: &HeapCheck| match c.form {
        CheckForm::Wrapping(k) if k <= facts.min_bound => CheckForm::Exact(k),
        f => f,
    };
    // Checks on the same index and bound, in layout order.
    let mut groups: HashMap<(Value, BoundKey), Vec<usize>> = HashMap::default();
    for (i, c) in checks.iter().enumerate() {
        let key = (func.dfg.resolve_aliases(c.index), bounds.key(func, c.bound));
        groups.entry(key).or_default().push(i);
    }
    let mut removed = Vec::new();
    for members in groups.values().filter(|m| m.len() > 1) {
        for &b in members {
            let proven = members.iter().any(|&a| {
                a != b
                    && preds.get(&checks[a].guarded) == Some(&1)
                    && domtree.block_dominates(checks[a].guarded, checks[b].block)
                    && implies(form(&checks[a]), form(&checks[b]))
            });
            if proven {
                removed.push(b);
            }
        }
    }
    removed.sort_unstable();
    for i in removed {
        let c = &checks[i];
        out.dead.push(c.cmp);
        out.new_jumps.push(replace_with_jump(func, c));
        out.checks_removed += 1;
    }
    out
}

/// Whether a passed check of form `a` makes a check of form `b` (same index, same bound) pass.
fn implies(a: CheckForm, b: CheckForm) -> bool {
    match (a, b) {
        // idx + ka <= bound: bound >= ka >= kb, so neither idx + kb nor bound - kb wraps.
        (CheckForm::Exact(ka), CheckForm::Exact(kb) | CheckForm::Wrapping(kb)) => kb <= ka,
        // The same comparison; any other wrapping fact says nothing when bound < ka.
        (CheckForm::Wrapping(ka), CheckForm::Wrapping(kb)) => ka == kb,
        (CheckForm::Wrapping(_), CheckForm::Exact(_)) => false,
    }
}

fn replace_with_jump(func: &mut Function, check: &HeapCheck) -> Inst {
    // `guarded` is the branch's second destination, never its first (the trap block).
    super::merge::replace_branch_with_jump(func, check.branch, check.block, check.guarded)
}

/// A block that ends in `trap` (Wasmtime's explicit-mode trap blocks call builtins first).
fn ends_in_trap(func: &Function, block: Block) -> bool {
    is_exit_block(func, block)
        && func
            .layout
            .last_inst(block)
            .is_some_and(|i| func.dfg.insts[i].opcode() == Opcode::Trap)
}

/// `v = uextend.i64 addr` with `addr` 32 bits wide: `addr`.
fn zero_extended_index(func: &Function, v: Value) -> Option<Value> {
    let inst = defining_inst(func, v)?;
    match func.dfg.insts[inst] {
        InstructionData::Unary {
            opcode: Opcode::Uextend,
            arg,
        } if func.dfg.value_type(arg).bits() <= 32 => Some(func.dfg.resolve_aliases(arg)),
        _ => None,
    }
}

fn binary(func: &Function, v: Value, opcode: Opcode) -> Option<(Value, Value)> {
    let inst = defining_inst(func, v)?;
    match func.dfg.insts[inst] {
        InstructionData::Binary { opcode: op, args } if op == opcode => {
            let [a, b] = args.map(|v| func.dfg.resolve_aliases(v));
            Some((a, b))
        }
        _ => None,
    }
}

fn non_negative_constant(func: &Function, v: Value) -> Option<u64> {
    iconst_value(func, v).and_then(|k| u64::try_from(k).ok())
}

/// The last point before which something may have written a bound's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Clobber {
    /// Nothing since the function's entry.
    Entry,
    /// This instruction.
    At(Inst),
    /// Paths with different last clobbers meet at the top of this block.
    Merge(Block),
}

/// Two bounds compare equal when they are one value, or loads of one location with one last
/// clobber.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum BoundKey {
    Value(Value),
    Load {
        base: Value,
        offset: i32,
        ty: Type,
        flags: MemFlagsData,
        since: Clobber,
    },
}

/// The last clobber before every load that defines a check's bound.
struct BoundNumbering {
    before_load: HashMap<Inst, Clobber>,
}

impl BoundNumbering {
    /// `None` when the analysis did not settle (never expected; no check is then removed).
    fn new(
        func: &Function,
        cfg: &ControlFlowGraph,
        domtree: &DominatorTree,
        checks: &[HeapCheck],
    ) -> Option<Self> {
        let loads: HashSet<Inst> = checks
            .iter()
            .filter_map(|c| bound_load(func, c.bound))
            .collect();
        let mut regions: HashSet<Option<AliasRegion>> = HashSet::default();
        for &l in &loads {
            regions.insert(func.dfg.insts[l].alias_region(&func.dfg));
        }
        let any_region = regions.contains(&None);
        let clobbers = |inst: Inst| {
            let data = &func.dfg.insts[inst];
            let op = data.opcode();
            if op.is_call()
                || op.other_side_effects()
                || matches!(
                    op,
                    Opcode::AtomicRmw
                        | Opcode::AtomicCas
                        | Opcode::AtomicLoad
                        | Opcode::AtomicStore
                        | Opcode::Fence
                )
            {
                return true;
            }
            op.can_store()
                && (any_region || {
                    let region = data.alias_region(&func.dfg);
                    region.is_none() || regions.contains(&region)
                })
        };
        let last_in = |block: Block, entry: Clobber| {
            func.layout
                .block_insts(block)
                .rev()
                .find(|&i| clobbers(i))
                .map_or(entry, Clobber::At)
        };
        let entry_block = func.layout.entry_block()?;
        let rpo: Vec<Block> = domtree.cfg_rpo().copied().collect();
        let mut at_entry: HashMap<Block, Clobber> = HashMap::default();
        let mut at_exit: HashMap<Block, Clobber> = HashMap::default();
        let mut settled = false;
        for _ in 0..64 {
            let mut changed = false;
            for &block in &rpo {
                let state = if block == entry_block {
                    Clobber::Entry
                } else {
                    let mut seen = cfg
                        .pred_iter(block)
                        .filter_map(|p| at_exit.get(&p.block).copied());
                    match seen.next() {
                        None => continue,
                        Some(first) => {
                            if seen.all(|s| s == first) {
                                first
                            } else {
                                Clobber::Merge(block)
                            }
                        }
                    }
                };
                if at_entry.get(&block) != Some(&state) {
                    at_entry.insert(block, state);
                    at_exit.insert(block, last_in(block, state));
                    changed = true;
                }
            }
            if !changed {
                settled = true;
                break;
            }
        }
        if !settled {
            return None;
        }
        let mut before_load = HashMap::default();
        for (&block, &entry) in &at_entry {
            let mut state = entry;
            for inst in func.layout.block_insts(block) {
                if loads.contains(&inst) {
                    before_load.insert(inst, state);
                }
                if clobbers(inst) {
                    state = Clobber::At(inst);
                }
            }
        }
        Some(Self { before_load })
    }

    fn key(&self, func: &Function, bound: Value) -> BoundKey {
        let bound = func.dfg.resolve_aliases(bound);
        let Some(load) = bound_load(func, bound) else {
            return BoundKey::Value(bound);
        };
        let (
            InstructionData::Load {
                arg, offset, flags, ..
            },
            Some(&since),
        ) = (func.dfg.insts[load], self.before_load.get(&load))
        else {
            return BoundKey::Value(bound);
        };
        BoundKey::Load {
            base: func.dfg.resolve_aliases(arg),
            offset: offset.into(),
            ty: func.dfg.value_type(bound),
            flags: func.dfg.mem_flags[flags],
            since,
        }
    }
}

/// The plain `load` that defines `bound`, if one does.
fn bound_load(func: &Function, bound: Value) -> Option<Inst> {
    let inst = defining_inst(func, bound)?;
    matches!(
        func.dfg.insts[inst],
        InstructionData::Load {
            opcode: Opcode::Load,
            ..
        }
    )
    .then_some(inst)
}
