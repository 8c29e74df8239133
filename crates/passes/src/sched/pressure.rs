//! IR register pressure: how many SSA values are live at once.
//!
//! A value is live from its definition (or from the block entry, for a block parameter or a
//! value defined in a dominating block) to its last use; a value used in a later block stays
//! live to the end of every block on the way. The pressure of a block is the largest live set
//! at the block entry or right after any of its instructions. Every value counts as one,
//! constants included: whether the backend folds a constant into an immediate depends on the
//! target and the constant.

use super::dag::DepDag;
use crate::bce::recognize::for_each_operand;
use cranelift_codegen::entity::{EntityRef, SecondaryMap};
use cranelift_codegen::ir::{Block, Function, Inst, Value, ValueDef};
use std::sync::Arc;

/// Live-in and live-out sets of every block.
///
/// Each set is a list of values in ascending order, indexed by the block's number: the
/// propagation visits one value at a time, so a per-block mark of the last value added is all
/// the deduplication it needs (no hashing), and membership is a binary search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Liveness {
    live_in: BlockSets,
    live_out: BlockSets,
}

/// One list per block number, stored flat: block `b`'s list is `items[start[b]..start[b + 1]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PerBlock<T> {
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T> Default for PerBlock<T> {
    fn default() -> Self {
        Self {
            start: Vec::new(),
            items: Vec::new(),
        }
    }
}

impl<T: Copy> PerBlock<T> {
    /// The lists of `blocks` blocks holding `pairs` (block, item); each block's items keep
    /// the order they have in `pairs`.
    fn grouped(blocks: usize, pairs: &[(Block, T)]) -> Self {
        let mut start = vec![0u32; blocks + 1];
        for &(block, _) in pairs {
            start[block.index() + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut next = start.clone();
        let mut items: Vec<T> = pairs.iter().map(|&(_, item)| item).collect();
        for &(block, item) in pairs {
            items[next[block.index()] as usize] = item;
            next[block.index()] += 1;
        }
        Self { start, items }
    }

    /// The lists of `keys` keys (numbers below it) holding the items of `pairs` (key, item),
    /// each key's items in the order `pairs` gives them.
    fn grouped_by(keys: usize, pairs: impl Iterator<Item = (usize, T)> + Clone) -> Self {
        let mut start = vec![0u32; keys + 1];
        let mut first: Option<T> = None;
        for (key, item) in pairs.clone() {
            start[key + 1] += 1;
            first.get_or_insert(item);
        }
        let Some(first) = first else {
            return Self {
                start,
                items: Vec::new(),
            };
        };
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut items = vec![first; start[keys] as usize];
        let mut next = start.clone();
        for (key, item) in pairs {
            items[next[key] as usize] = item;
            next[key] += 1;
        }
        Self { start, items }
    }

    /// The non-empty lists with their key, in ascending order of key.
    fn nonempty(&self) -> impl Iterator<Item = (usize, &[T])> + '_ {
        self.start
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[1] > w[0])
            .map(|(key, w)| (key, &self.items[w[0] as usize..w[1] as usize]))
    }

    /// The list of `block` (empty for a block number out of range).
    fn of(&self, block: Block) -> &[T] {
        match self.start.get(block.index()..block.index() + 2) {
            Some(&[from, to]) => &self.items[from as usize..to as usize],
            _ => &[],
        }
    }
}

/// One sorted list of values per block number (pairs given in ascending order of value).
type BlockSets = PerBlock<Value>;

/// The live-in or live-out side of [`Liveness::propagate`]'s work: (block, value) pairs in
/// ascending order of value, and per block the last value added.
struct SideEntries {
    entries: Vec<(Block, Value)>,
    last: Vec<Option<Value>>,
}

impl SideEntries {
    fn new(blocks: usize, capacity: usize) -> Self {
        Self {
            entries: Vec::with_capacity(capacity),
            last: vec![None; blocks],
        }
    }

    /// Adds `v` to `block`'s list unless it was the last value added to it; returns whether
    /// it was added.
    fn add_once(&mut self, block: Block, v: Value) -> bool {
        let mark = &mut self.last[block.index()];
        if *mark == Some(v) {
            return false;
        }
        *mark = Some(v);
        self.entries.push((block, v));
        true
    }
}

fn def_block(func: &Function, v: Value) -> Option<Block> {
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, _) => func.layout.inst_block(inst),
        ValueDef::Param(block, _) => Some(block),
        ValueDef::Union(..) => None,
    }
}

/// Every block's predecessors (one entry per branch edge), flat: what liveness walks, read
/// from the terminators in one sweep.
#[derive(Clone, Debug, Default)]
pub(crate) struct Predecessors(PerBlock<Block>);

impl Predecessors {
    /// The predecessors of every block of `func`'s layout.
    pub(crate) fn of(func: &Function) -> Self {
        let dfg = &func.dfg;
        let mut edges: Vec<(Block, Block)> = Vec::new();
        for block in func.layout.blocks() {
            let Some(term) = func.layout.last_inst(block) else {
                continue;
            };
            for call in dfg.insts[term].branch_destination(&dfg.jump_tables, &dfg.exception_tables)
            {
                edges.push((call.block(&dfg.value_lists), block));
            }
        }
        Self(PerBlock::grouped(dfg.num_blocks(), &edges))
    }

    /// The predecessors of `block`, one per branch edge into it.
    fn of_block(&self, block: Block) -> &[Block] {
        self.0.of(block)
    }
}

impl Liveness {
    /// Computes liveness for `func` (values are resolved through aliases).
    pub fn compute(func: &Function) -> Liveness {
        Self::compute_over(func, &Predecessors::of(func))
    }

    /// [`Liveness::compute`] over the control-flow edges `preds` (those of `func`).
    pub(crate) fn compute_over(func: &Function, preds: &Predecessors) -> Liveness {
        Self::compute_with(func, preds, |v| func.dfg.resolve_aliases(v))
    }

    /// [`Liveness::compute`] from the DAGs of every block of `func` (aliases resolved), which
    /// list the values each block reads without defining them
    /// ([`DepDag::external_uses`]): the same sets without another sweep over the function.
    /// `preds` are `func`'s control-flow edges ([`Predecessors::of`]).
    pub(crate) fn from_dags(func: &Function, dags: &[DepDag], preds: &Predecessors) -> Liveness {
        debug_assert!(all_aliases_resolved(func));
        debug_assert_eq!(dags.len(), func.layout.blocks().count());
        let work: Vec<(Value, Block)> = dags
            .iter()
            .flat_map(|dag| dag.external_uses().iter().map(|&v| (v, dag.block())))
            .collect();
        let live = Self::propagate(func, preds, work);
        debug_assert!(
            live == Self::compute(func),
            "liveness from the DAGs differs"
        );
        live
    }

    fn compute_with(
        func: &Function,
        preds: &Predecessors,
        resolve: impl Fn(Value) -> Value,
    ) -> Liveness {
        let mut work: Vec<(Value, Block)> = Vec::new();
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                for_each_operand(func, inst, |v| {
                    let v = resolve(v);
                    // Most operands are defined by an earlier instruction of the same block.
                    let local = match func.dfg.value_def(v) {
                        ValueDef::Result(def, _) => func.layout.inst_block(def) == Some(block),
                        ValueDef::Param(home, _) => home == block,
                        ValueDef::Union(..) => false,
                    };
                    if !local {
                        work.push((v, block));
                    }
                });
            }
        }
        Self::propagate(func, preds, work)
    }

    /// Marks each value of `work` live into its block and, through the predecessors, back
    /// to its definition. The work is taken value by value in ascending order, so every
    /// block's lists come out sorted and a block's last entry is the only possible duplicate.
    /// (The order of a value's blocks does not matter: each is added to a list once.)
    fn propagate(func: &Function, preds: &Predecessors, work: Vec<(Value, Block)>) -> Liveness {
        let blocks = func.dfg.num_blocks();
        // Sorted into per-block lists at the end; a first guess at their length: one entry
        // per use outside its block.
        let capacity = work.len();
        let (mut ins, mut outs) = (
            SideEntries::new(blocks, capacity),
            SideEntries::new(blocks, capacity),
        );
        // The work's blocks grouped by value, in ascending order of value (a counting sort:
        // values are dense numbers, and cheaper to bucket than to compare).
        let by_value = PerBlock::grouped_by(
            func.dfg.num_values(),
            work.iter().map(|&(v, b)| (v.index(), b)),
        );
        let mut pending: Vec<Block> = Vec::new();
        for (index, uses) in by_value.nonempty() {
            let v = Value::new(index);
            pending.extend_from_slice(uses);
            let home = def_block(func, v);
            while let Some(block) = pending.pop() {
                if !ins.add_once(block, v) {
                    continue;
                }
                for &pred in preds.of_block(block) {
                    outs.add_once(pred, v);
                    if home != Some(pred) {
                        pending.push(pred);
                    }
                }
            }
        }
        Liveness {
            live_in: BlockSets::grouped(blocks, &ins.entries),
            live_out: BlockSets::grouped(blocks, &outs.entries),
        }
    }

    /// Values live on entry to `block` (not counting its own parameters), in ascending order.
    pub fn live_in(&self, block: Block) -> impl Iterator<Item = Value> + '_ {
        self.live_in.of(block).iter().copied()
    }

    /// Whether `v` is live on exit from `block`.
    pub fn is_live_out(&self, block: Block, v: Value) -> bool {
        self.live_out.of(block).binary_search(&v).is_ok()
    }
}

/// The distinct values `inst` reads, alias-resolved.
pub fn operands(func: &Function, inst: Inst) -> Vec<Value> {
    let mut vs = Vec::new();
    push_operands(func, inst, &mut vs);
    vs
}

/// Whether every operand of `func` names a value directly (for `debug_assert`s of the
/// scheduler's alias-free fast paths).
pub(crate) fn all_aliases_resolved(func: &Function) -> bool {
    func.layout.blocks().all(|b| {
        func.layout.block_insts(b).all(|i| {
            func.dfg
                .inst_values(i)
                .all(|v| func.dfg.resolve_aliases(v) == v)
        })
    })
}

/// Appends the distinct values `inst` reads, alias-resolved and sorted, to `out`.
pub(crate) fn push_operands(func: &Function, inst: Inst, out: &mut Vec<Value>) {
    let start = out.len();
    for_each_operand(func, inst, |v| out.push(func.dfg.resolve_aliases(v)));
    sort_dedup_tail(out, start);
}

/// Sorts `out[start..]` and removes its duplicates.
pub(crate) fn sort_dedup_tail(out: &mut Vec<Value>, start: usize) {
    let tail = &mut out[start..];
    if tail.len() <= 8 {
        // An instruction reads one to three values as a rule: insertion sort, no set-up.
        for i in 1..tail.len() {
            let mut j = i;
            while j > 0 && tail[j - 1] > tail[j] {
                tail.swap(j - 1, j);
                j -= 1;
            }
        }
    } else {
        tail.sort_unstable();
    }
    let mut kept = start;
    for i in start..out.len() {
        if kept == start || out[i] != out[kept - 1] {
            out[kept] = out[i];
            kept += 1;
        }
    }
    out.truncate(kept);
}

/// Incremental live-value tracking for one block while its instructions are placed in some
/// order: the driver's pressure state and the measuring stick for the statistics.
///
/// Instructions are named by their position in the slice given to [`PressureTracker::new`];
/// values by dense indices, so that the per-candidate [`PressureTracker::delta`] is cheap.
/// Operands and results are stored flat: instruction `i`'s are `uses[use_start[i]..use_start[i + 1]]`.
/// What placing instructions does not change is shared by a tracker's copies (a strategy's
/// trial run starts from a copy), so that a copy costs one vector.
#[derive(Clone, Debug)]
pub struct PressureTracker {
    /// The block as the tracker sees it.
    shape: Arc<TrackedBlock>,
    /// Per value: unplaced instructions of the block that read it.
    remaining: Vec<u32>,
    live: usize,
    max: usize,
    /// Values live through the block without a use in it (see [`PressureTracker::idle_through`]).
    idle: usize,
}

/// The fixed part of a [`PressureTracker`]: the block's instructions and values by dense id.
#[derive(Debug)]
struct TrackedBlock {
    /// Per instruction, flat: the distinct values it reads.
    uses: Vec<u32>,
    use_start: Vec<u32>,
    /// Per instruction: how many of its results are used in the block or live out.
    defs: Vec<u32>,
    /// Per value: live on exit from the block.
    live_out: Vec<bool>,
    /// Per instruction, flat: its results' value ids (`results[result_start[i]..result_start[i + 1]]`).
    #[cfg_attr(not(feature = "optimal"), allow(dead_code))]
    results: Vec<u32>,
    #[cfg_attr(not(feature = "optimal"), allow(dead_code))]
    result_start: Vec<u32>,
}

/// The values a [`PressureTracker`] follows, by dense id: who defines and reads each, and
/// whether it is live out (the exact problem's view of the count, `optimum::BlockProblem`).
#[cfg_attr(not(feature = "optimal"), allow(dead_code))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ValueTable {
    /// Per value: the position of the instruction defining it (`None`: live on entry).
    pub(crate) def: Vec<Option<u32>>,
    /// Per value: the positions of the instructions that read it, ascending.
    pub(crate) users: Vec<Vec<u32>>,
    /// Per value: live on exit from the block.
    pub(crate) live_out: Vec<bool>,
}

impl PressureTracker {
    /// Starts at the entry of `block`, whose instructions are `insts` (in any order).
    pub fn new(func: &Function, liveness: &Liveness, block: Block, insts: &[Inst]) -> Self {
        let mut ids = SecondaryMap::with_capacity(func.dfg.num_values());
        let mut operand_values = Vec::with_capacity(insts.len() * 2);
        Self::with_scratch(func, liveness, block, insts, &mut ids, &mut operand_values)
    }

    /// [`PressureTracker::new`] with the caller's scratch space: `ids` for the value numbering
    /// (all zero on entry, and left so) and `operand_values` for the operand lists.
    fn with_scratch(
        func: &Function,
        liveness: &Liveness,
        block: Block,
        insts: &[Inst],
        ids: &mut SecondaryMap<Value, u32>,
        operand_values: &mut Vec<Value>,
    ) -> Self {
        operand_values.clear();
        let mut use_start = Vec::with_capacity(insts.len() + 1);
        use_start.push(0);
        for &inst in insts {
            push_operands(func, inst, operand_values);
            use_start.push(operand_values.len() as u32);
        }
        Self::with_operands(func, liveness, block, insts, operand_values, use_start, ids)
    }

    /// [`PressureTracker::new`] for the block of `dag`, in its source order, reusing the
    /// distinct operands the DAG collected (the same lists [`PressureTracker::new`] builds).
    /// `ids` is scratch space for the value numbering: all zero on entry, and left so.
    pub(crate) fn for_dag(
        func: &Function,
        liveness: &Liveness,
        dag: &DepDag,
        ids: &mut SecondaryMap<Value, u32>,
    ) -> Self {
        let (operand_values, use_start) = dag.operand_lists();
        Self::with_operands(
            func,
            liveness,
            dag.block(),
            dag.insts(),
            operand_values,
            use_start.to_vec(),
            ids,
        )
    }

    /// Starts at the entry of `block`, whose instructions are `insts`; instruction `i` reads
    /// the distinct values `operand_values[use_start[i]..use_start[i + 1]]`.
    fn with_operands(
        func: &Function,
        liveness: &Liveness,
        block: Block,
        insts: &[Inst],
        operand_values: &[Value],
        use_start: Vec<u32>,
        ids: &mut SecondaryMap<Value, u32>,
    ) -> Self {
        // Dense value ids (+1; 0 means unnumbered), reset before returning.
        let mut numbered: Vec<Value> = Vec::with_capacity(operand_values.len() + insts.len());
        let mut id = |v: Value, ids: &mut SecondaryMap<Value, u32>| {
            if ids[v] == 0 {
                numbered.push(v);
                ids[v] = numbered.len() as u32;
            }
            ids[v] - 1
        };
        let uses: Vec<u32> = operand_values.iter().map(|&v| id(v, ids)).collect();
        let mut result_ids: Vec<u32> = Vec::with_capacity(insts.len());
        let mut result_start: Vec<u32> = Vec::with_capacity(insts.len() + 1);
        result_start.push(0);
        for &inst in insts {
            for &v in func.dfg.inst_results(inst) {
                result_ids.push(id(v, ids));
            }
            result_start.push(result_ids.len() as u32);
        }
        // The parameters (those still needed are kept below), then the values live in.
        let params = func.dfg.block_params(block);
        let live_in = liveness.live_in.of(block);
        let mut entry: Vec<u32> = Vec::with_capacity(params.len() + live_in.len());
        entry.extend(params.iter().map(|&p| id(p, ids)));
        // A value live in that the block neither reads nor defines (most of them, in a large
        // function) would be numbered after every other, in ascending order: it takes that
        // number without a mark in `ids`, and only whether it is live out is kept.
        let read = numbered.len();
        let mut live_out: Vec<bool> = Vec::with_capacity(read + live_in.len());
        live_out.resize(read, false);
        let (mut unread, mut unread_live_out) = (0, 0);
        let live_out_values = liveness.live_out.of(block);
        let mut outs = live_out_values.iter().copied().peekable();
        for &v in live_in {
            match ids[v].checked_sub(1) {
                Some(i) => entry.push(i),
                None => {
                    while outs.next_if(|&out| out < v).is_some() {}
                    let out = outs.peek() == Some(&v);
                    live_out.push(out);
                    unread += 1;
                    unread_live_out += usize::from(out);
                }
            }
        }
        let mut remaining = vec![0u32; live_out.len()];
        for &u in &uses {
            remaining[u as usize] += 1;
        }
        // Only numbered values matter: mark those among the (few) values live out.
        for &v in live_out_values {
            if let Some(i) = ids[v].checked_sub(1) {
                live_out[i as usize] = true;
            }
        }
        for &v in &numbered {
            ids[v] = 0;
        }
        let needed = |i: u32| remaining[i as usize] > 0 || live_out[i as usize];
        let defs: Vec<u32> = result_start
            .windows(2)
            .map(|w| {
                result_ids[w[0] as usize..w[1] as usize]
                    .iter()
                    .filter(|&&i| needed(i))
                    .count() as u32
            })
            .collect();
        let mut position = 0;
        entry.retain(|&i| {
            position += 1;
            position > params.len() || needed(i)
        });
        entry.sort_unstable();
        entry.dedup();
        // The unread values live in are distinct from the others and none is read.
        let live = entry.len() + unread;
        let idle = entry
            .iter()
            .filter(|&&i| remaining[i as usize] == 0 && live_out[i as usize])
            .count()
            + unread_live_out;
        Self {
            shape: Arc::new(TrackedBlock {
                uses,
                use_start,
                defs,
                live_out,
                results: result_ids,
                result_start,
            }),
            remaining,
            live,
            max: live,
            idle,
        }
    }

    /// The values this tracker follows, as of its creation (only `live_out` and the operand
    /// and result lists are read, which placing instructions does not change).
    #[cfg_attr(not(feature = "optimal"), allow(dead_code))]
    pub(crate) fn value_table(&self) -> ValueTable {
        let shape = &*self.shape;
        let count = shape.live_out.len();
        let mut def = vec![None; count];
        let mut users = vec![Vec::new(); count];
        for i in 0..shape.use_start.len() - 1 {
            for &v in self.uses_of(i) {
                users[v as usize].push(i as u32);
            }
            let (a, b) = (
                shape.result_start[i] as usize,
                shape.result_start[i + 1] as usize,
            );
            for &v in &shape.results[a..b] {
                def[v as usize] = Some(i as u32);
            }
        }
        ValueTable {
            def,
            users,
            live_out: shape.live_out.clone(),
        }
    }

    /// Values live through the block that no instruction of it reads: live on entry and on
    /// exit, idle in between. The register allocator can keep each in a spill slot across the
    /// whole block at the cost of one store before it and one load after it, off the block's
    /// dependence chains.
    pub fn idle_through(&self) -> usize {
        self.idle
    }

    /// Values live now.
    pub fn live(&self) -> usize {
        self.live
    }

    /// The largest live count seen so far.
    pub fn max(&self) -> usize {
        self.max
    }

    fn uses_of(&self, i: usize) -> &[u32] {
        let shape = &*self.shape;
        &shape.uses[shape.use_start[i] as usize..shape.use_start[i + 1] as usize]
    }

    /// How the live count changes if the instruction at position `i` is placed next: its
    /// results that are used later start living, operands it reads for the last time die.
    pub fn delta(&self, i: usize) -> isize {
        let dying = self
            .uses_of(i)
            .iter()
            .filter(|&&v| self.remaining[v as usize] == 1 && !self.shape.live_out[v as usize])
            .count();
        self.shape.defs[i] as isize - dying as isize
    }

    /// Places the instruction at position `i` next.
    pub fn place(&mut self, i: usize) {
        // `delta(i)`, counted while the operands' remaining uses go down.
        let shape = &*self.shape;
        let (start, end) = (shape.use_start[i] as usize, shape.use_start[i + 1] as usize);
        let mut dying = 0usize;
        for &v in &shape.uses[start..end] {
            let v = v as usize;
            let n = &mut self.remaining[v];
            dying += usize::from(*n == 1 && !shape.live_out[v]);
            *n = n.saturating_sub(1);
        }
        let delta = shape.defs[i] as isize - dying as isize;
        self.live = (self.live as isize + delta).max(0) as usize;
        self.max = self.max.max(self.live);
    }
}

/// Maximum pressure of `block` in its current instruction order.
pub fn block_max_pressure(func: &Function, liveness: &Liveness, block: Block) -> usize {
    blocks_max_pressure(func, liveness, &[block])[0]
}

/// [`block_max_pressure`] of each of `blocks`, with one set of scratch space for them all.
///
/// The order is fixed, so no [`PressureTracker`] is built: one sweep counts each value's
/// readers, a second places the instructions in order. The count is the tracker's (the
/// parameters the block needs and the values live in at the entry; then per instruction its
/// results read in the block or live out, minus its operands read for the last time and not
/// live out), without numbering the values live in, most of which a large function's blocks
/// never read.
pub(crate) fn blocks_max_pressure(
    func: &Function,
    liveness: &Liveness,
    blocks: &[Block],
) -> Vec<usize> {
    // Per value: instructions of the current block still to be placed that read it (all
    // zero between blocks).
    let mut readers: SecondaryMap<Value, u32> = SecondaryMap::with_capacity(func.dfg.num_values());
    readers.resize(func.dfg.num_values());
    let mut operand_values: Vec<Value> = Vec::new();
    let mut use_start: Vec<u32> = Vec::new();
    let mut defs: Vec<u32> = Vec::new();
    blocks
        .iter()
        .map(|&block| {
            operand_values.clear();
            use_start.clear();
            use_start.push(0);
            for inst in func.layout.block_insts(block) {
                push_operands(func, inst, &mut operand_values);
                use_start.push(operand_values.len() as u32);
            }
            for &v in &operand_values {
                readers[v] += 1;
            }
            let live_out = liveness.live_out.of(block);
            let is_live_out = |v: Value| live_out.binary_search(&v).is_ok();
            let needed =
                |v: Value, readers: &SecondaryMap<Value, u32>| readers[v] > 0 || is_live_out(v);
            // Results that start living, counted before any reader is placed.
            defs.clear();
            defs.extend(func.layout.block_insts(block).map(|inst| {
                func.dfg
                    .inst_results(inst)
                    .iter()
                    .filter(|&&v| needed(v, &readers))
                    .count() as u32
            }));
            // The needed parameters and the values live in (a set: a parameter is never live
            // into its own block, but one would count once).
            let live_in = liveness.live_in.of(block);
            let params_needed = func
                .dfg
                .block_params(block)
                .iter()
                .filter(|&&p| needed(p, &readers) && live_in.binary_search(&p).is_err())
                .count();
            let mut live = params_needed + live_in.len();
            let mut max = live;
            for (i, w) in use_start.windows(2).enumerate() {
                let mut dying = 0usize;
                for &v in &operand_values[w[0] as usize..w[1] as usize] {
                    let n = &mut readers[v];
                    dying += usize::from(*n == 1 && !is_live_out(v));
                    *n = n.saturating_sub(1);
                }
                let delta = defs[i] as isize - dying as isize;
                live = (live as isize + delta).max(0) as usize;
                max = max.max(live);
            }
            max
        })
        .collect()
}

/// Maximum pressure over all blocks of `func` in its current order.
pub fn function_max_pressure(func: &Function) -> usize {
    let liveness = Liveness::compute(func);
    let blocks: Vec<Block> = func.layout.blocks().collect();
    blocks_max_pressure(func, &liveness, &blocks)
        .into_iter()
        .max()
        .unwrap_or(0)
}
