//! Address offset folding: `load (a + (b + k))` becomes `load (a + b) + k`.
//!
//! Front ends compute each element's address in full: `base + (index + k)`. Every access then
//! needs its own address register, and a scheduler that moves or duplicates loads drags those
//! registers along. Folding the constant into the access's immediate offset leaves one shared
//! `a + b` per (base, index) pair — what a hand-written loop does with `[p + 4k]` — and x86_64
//! can then fold the load itself into its user. Pointer arithmetic wraps, so the regrouping is
//! exact.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Function, Inst, InstBuilder, InstructionData, Opcode, Value, ValueDef, immediates::Offset32,
};
use rustc_hash::FxHashMap as HashMap;

/// What [`fold_address_offsets`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddressStats {
    /// Loads and stores whose constant moved into the offset.
    pub folded: usize,
    /// Shared `base + index` values created.
    pub shared_bases: usize,
}

fn def(func: &Function, v: Value, op: Opcode) -> Option<Inst> {
    match func.dfg.value_def(func.dfg.resolve_aliases(v)) {
        ValueDef::Result(inst, 0) if func.dfg.insts[inst].opcode() == op => Some(inst),
        _ => None,
    }
}

fn iconst(func: &Function, v: Value) -> Option<i64> {
    let inst = def(func, v, Opcode::Iconst)?;
    match func.dfg.insts[inst] {
        InstructionData::UnaryImm { imm, .. } => Some(imm.bits()),
        _ => None,
    }
}

/// `v = x + k` with a constant `k`, in either operand order.
fn plus_const(func: &Function, v: Value) -> Option<(Value, i64)> {
    let inst = def(func, v, Opcode::Iadd)?;
    let [x, y] = [0, 1].map(|i| func.dfg.resolve_aliases(func.dfg.inst_args(inst)[i]));
    iconst(func, y)
        .map(|k| (x, k))
        .or_else(|| iconst(func, x).map(|k| (y, k)))
}

/// The address operand of a load or store and its current offset.
fn access(func: &Function, inst: Inst) -> Option<(usize, i32)> {
    match func.dfg.insts[inst] {
        InstructionData::Load { offset, .. } => Some((0, offset.into())),
        InstructionData::Store { offset, .. } => Some((1, offset.into())),
        _ => None,
    }
}

fn set_offset(func: &mut Function, inst: Inst, new: i32) {
    match &mut func.dfg.insts[inst] {
        InstructionData::Load { offset, .. } | InstructionData::Store { offset, .. } => {
            *offset = Offset32::new(new);
        }
        _ => {}
    }
}

/// Where a value is available: the instruction it must be inserted before.
fn insertion_point(
    func: &Function,
    v: Value,
) -> Option<(cranelift_codegen::ir::Block, Option<Inst>)> {
    match func.dfg.value_def(v) {
        ValueDef::Param(block, _) => Some((block, func.layout.first_inst(block))),
        ValueDef::Result(inst, _) => {
            Some((func.layout.inst_block(inst)?, func.layout.next_inst(inst)))
        }
        _ => None,
    }
}

/// The dominator tree of `func`, computed into `slot` the first time.
fn dominators<'a>(func: &Function, slot: &'a mut Option<DominatorTree>) -> &'a DominatorTree {
    slot.get_or_insert_with(|| {
        let cfg = ControlFlowGraph::with_function(func);
        DominatorTree::with_function(func, &cfg)
    })
}

/// Folds constant address offsets of every load and store in `func`.
pub fn fold_address_offsets(func: &mut Function) -> AddressStats {
    let mut stats = AddressStats::default();
    // Needed only to place a shared base between blocks: built on first use (the instructions
    // inserted before then leave the control flow as it is).
    let mut domtree: Option<DominatorTree> = None;
    let mut shared: HashMap<(Value, Value), Value> = HashMap::default();
    let accesses: Vec<Inst> = func
        .layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .filter(|&i| access(func, i).is_some())
        .collect();
    for inst in accesses {
        let Some((slot, offset)) = access(func, inst) else {
            continue;
        };
        let addr = func.dfg.resolve_aliases(func.dfg.inst_args(inst)[slot]);
        // Either `addr = x + k`, or `addr = a + (b + k)` in any operand order.
        let (new_addr, k) = if let Some((x, k)) = plus_const(func, addr) {
            (x, k)
        } else {
            let Some(add) = def(func, addr, Opcode::Iadd) else {
                continue;
            };
            let [p, q] = [0, 1].map(|i| func.dfg.resolve_aliases(func.dfg.inst_args(add)[i]));
            let (a, b, k) = match (plus_const(func, q), plus_const(func, p)) {
                (Some((b, k)), _) => (p, b, k),
                (None, Some((b, k))) => (q, b, k),
                _ => continue,
            };
            let base = match shared.get(&(a, b)) {
                Some(&v) => v,
                None => {
                    let (Some((ba, ia)), Some((bb, ib))) =
                        (insertion_point(func, a), insertion_point(func, b))
                    else {
                        continue;
                    };
                    // Insert after the later of the two definitions.
                    let later_is_b = if ba == bb {
                        match (ia, ib) {
                            (Some(x), Some(y)) => func.layout.pp_cmp(x, y).is_le(),
                            (None, _) => false,
                            (_, None) => true,
                        }
                    } else if dominators(func, &mut domtree).block_dominates(ba, bb) {
                        true
                    } else if dominators(func, &mut domtree).block_dominates(bb, ba) {
                        false
                    } else {
                        continue;
                    };
                    let (block, at) = if later_is_b { (bb, ib) } else { (ba, ia) };
                    let mut cur = match at {
                        Some(at) => FuncCursor::new(func).at_inst(at),
                        None => FuncCursor::new(func).at_bottom(block),
                    };
                    let v = cur.ins().iadd(a, b);
                    shared.insert((a, b), v);
                    stats.shared_bases += 1;
                    v
                }
            };
            (base, k)
        };
        let Some(new_offset) = i64::from(offset)
            .checked_add(k)
            .and_then(|o| i32::try_from(o).ok())
        else {
            continue;
        };
        func.dfg.inst_args_mut(inst)[slot] = new_addr;
        set_offset(func, inst, new_offset);
        stats.folded += 1;
    }
    stats
}
