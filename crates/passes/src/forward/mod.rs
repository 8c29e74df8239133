//! Store-to-load forwarding and dead scratch-store elimination: keeps a function's private
//! scratch memory (SHA-256's message schedule `W` as a stack slot) in SSA values.
//!
//! **Forwarding.** Walking each block in order, the pass keeps the set of *available stores*:
//! `(base, offset, type, endianness) → stored value`. A plain `load` of exactly such a location
//! is replaced by the stored value. A store first removes every available entry it may alias
//! ([`memory::may_alias`]: same base at overlapping constant ranges, another pointer unless
//! proven disjoint) and then records itself; a call, an atomic or any instruction with unknown
//! memory effects empties the set. Loads never remove anything (this pass does not forward
//! load to load, which would undo the scheduler's rematerialised loads). A block whose only
//! predecessor is already processed starts from that predecessor's final set (an *extended*
//! basic block: the stored value is defined on every path into the block), so the Java
//! front end's chain of check blocks counts as one block.
//!
//! **Dead scratch stores.** After forwarding, a stack slot whose address never escapes
//! ([`memory::SlotEscapes`]) and that no remaining instruction reads holds nothing anyone can
//! observe: its stores are removed, then its now unused `stack_addr` instructions, and the slot
//! shrinks to zero bytes so it takes no frame space.
//!
//! The control-flow graph is unchanged (no block or branch is added or removed).

pub mod memory;

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Block, Endianness, Function, Inst, InstructionData, StackSlot, Type, Value,
};
use memory::{Access, Base, Effect, SlotEscapes, effect, may_alias};
use rustc_hash::{FxHashMap, FxHashSet};

/// What [`run`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForwardStats {
    /// Loads replaced by the value an earlier store wrote.
    pub loads_forwarded: usize,
    /// Stores removed because nothing can read what they wrote.
    pub stores_removed: usize,
    /// Non-escaping stack slots left without any access (shrunk to zero bytes).
    pub slots_freed: usize,
}

/// The key of an available store: forwarding needs the same place, type and byte order.
type Location = (Base, i64, Type, Option<Endianness>);

/// The stores whose values are still in memory at a point of a block.
#[derive(Clone, Debug, Default)]
struct Available {
    entries: Vec<(Access, Value)>,
}

impl Available {
    fn find(&self, location: Location) -> Option<Value> {
        self.entries
            .iter()
            .find(|(a, _)| (a.base, a.offset, a.ty, a.endianness) == location)
            .map(|&(_, v)| v)
    }

    fn kill_aliasing(&mut self, store: &Access, escapes: &SlotEscapes) {
        self.entries.retain(|(a, _)| !may_alias(a, store, escapes));
    }
}

/// Forwards stores to loads, then removes dead stores to non-escaping stack slots.
pub fn run(func: &mut Function) -> ForwardStats {
    let mut stats = ForwardStats {
        loads_forwarded: forward_loads(func),
        ..ForwardStats::default()
    };
    let (stores, slots) = remove_dead_scratch_stores(func);
    stats.stores_removed = stores;
    stats.slots_freed = slots;
    stats
}

/// The forwarding half of [`run`]; returns how many loads it replaced.
pub fn forward_loads(func: &mut Function) -> usize {
    let escapes = SlotEscapes::of(func);
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let order: Vec<Block> = domtree.cfg_postorder().iter().rev().copied().collect();
    let mut out: FxHashMap<Block, Available> = FxHashMap::default();
    let mut replaced: Vec<(Inst, Value, Value)> = Vec::new();
    for block in order {
        let mut preds = cfg.pred_iter(block).map(|p| p.block);
        let first = preds.next();
        let single = first.filter(|&p| p != block && preds.all(|q| q == p));
        let mut available = single
            .and_then(|p| out.get(&p).cloned())
            .unwrap_or_default();
        for inst in func.layout.block_insts(block) {
            match effect(func, inst) {
                Effect::None | Effect::OtherRead(_) => {}
                Effect::Load(access, result) => {
                    let location = (access.base, access.offset, access.ty, access.endianness);
                    if let Some(value) = available.find(location) {
                        replaced.push((inst, result, value));
                    }
                }
                Effect::Store(access, value) => {
                    available.kill_aliasing(&access, &escapes);
                    available.entries.push((access, value));
                }
                Effect::OtherStore(access) => available.kill_aliasing(&access, &escapes),
                Effect::Unknown => available.entries.clear(),
            }
        }
        out.insert(block, available);
    }
    for &(inst, result, value) in &replaced {
        func.layout.remove_inst(inst);
        func.dfg.clear_results(inst);
        func.dfg.change_to_alias(result, value);
    }
    if !replaced.is_empty() {
        func.dfg.resolve_all_aliases();
    }
    replaced.len()
}

/// The dead-store half of [`run`]: stores to non-escaping, never-read stack slots go, and so
/// do the slots' unused `stack_addr`s. Returns (stores removed, slots freed).
pub fn remove_dead_scratch_stores(func: &mut Function) -> (usize, usize) {
    // Only stack slots are scratch memory (no slot, no `stack_addr`): nothing to look for.
    if func.sized_stack_slots.is_empty() {
        return (0, 0);
    }
    let escapes = SlotEscapes::of(func);
    let mut read: FxHashSet<StackSlot> = FxHashSet::default();
    let mut stores: Vec<(Inst, StackSlot)> = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            match effect(func, inst) {
                Effect::Load(access, _) | Effect::OtherRead(access) => {
                    if let Base::Slot(slot) = access.base {
                        read.insert(slot);
                    }
                }
                Effect::Store(access, _) | Effect::OtherStore(access) => {
                    if let Base::Slot(slot) = access.base {
                        stores.push((inst, slot));
                    }
                }
                Effect::None | Effect::Unknown => {}
            }
        }
    }
    let dead = |slot: StackSlot| !escapes.escapes(slot) && !read.contains(&slot);
    let mut removed = 0;
    for &(inst, slot) in &stores {
        if dead(slot) {
            func.layout.remove_inst(inst);
            removed += 1;
        }
    }
    // Now-unused addresses of dead slots, and the slots themselves.
    let mut used: FxHashSet<Value> = FxHashSet::default();
    let mut addresses: Vec<(Inst, StackSlot)> = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            used.extend(
                func.dfg
                    .inst_values(inst)
                    .map(|v| func.dfg.resolve_aliases(v)),
            );
            if let InstructionData::StackAddr { stack_slot, .. } = func.dfg.insts[inst] {
                addresses.push((inst, stack_slot));
            }
        }
    }
    let mut still_addressed: FxHashSet<StackSlot> = FxHashSet::default();
    for &(inst, slot) in &addresses {
        let result = func.dfg.first_result(inst);
        if dead(slot) && !used.contains(&result) {
            func.layout.remove_inst(inst);
        } else {
            still_addressed.insert(slot);
        }
    }
    let mut freed = 0;
    let slots: Vec<StackSlot> = func.sized_stack_slots.keys().collect();
    for slot in slots {
        let touched = stores.iter().any(|&(_, s)| s == slot);
        if touched && dead(slot) && !still_addressed.contains(&slot) {
            func.sized_stack_slots[slot].size = 0;
            freed += 1;
        }
    }
    (removed, freed)
}
