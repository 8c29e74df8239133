//! Loop-invariant loads, value numbering, boolean tests and division by constants: what
//! Cranelift's e-graph does to a Wasm function's loops that the pipeline without it missed, as
//! far as it pays (`notes/real-programs.md`, "Why the default's loops model slower than stock
//! without the e-graph").
//!
//! 1. **Hoisting loads.** Loops are visited innermost first. A `notrap` load of a loop whose
//!    address operands are all defined outside the loop moves to the end of the header's
//!    immediate dominator (before its terminator) when the loop does not write its memory
//!    (`readonly`, or an alias region no store of the loop names, in a loop without calls,
//!    fences, atomics or region-less stores) and it may execute earlier: it has the `can_move`
//!    flag (Wasmtime's `vmctx` fields such as the heap base), or it sits in the header before
//!    anything that may trap, and the header's only predecessor outside the loop jumps to it
//!    unconditionally (that predecessor is the immediate dominator, so the load runs exactly
//!    when it ran before, once instead of every iteration). A load of the loop identical to one
//!    hoisted from it (same flags, address and type) reads the same bytes, since the loop does
//!    not write them: it becomes that value.
//!
//!    Pure invariant instructions stay where they are: measured on a corpus shard, hoisting
//!    them too left the modelled loop cycles level and cost registers (x86_64: spills +
//!    reloads 0.844 → 0.865 of stock's, aarch64 0.927 → 0.972).
//! 2. **Value numbering.** Walking the blocks in a reverse postorder, a load of memory nothing
//!    in the function writes, identical to one in a dominating position, becomes that one's
//!    result; so does an integer extension (`uextend`, `sextend`: Wasm's widened indices)
//!    identical to one in another dominating block, or in its own block inside a loop, and an
//!    `iadd` of such an extension to a base (a heap address) identical to a dominating one of
//!    the same innermost loop. Other pure duplicates stay (see `number_values`).
//! 3. **Boolean tests.** `icmp ne c, 0` of a comparison's result `c` (possibly zero-extended)
//!    is `c`; `brif` on a zero-extended comparison tests the comparison. Code generation then
//!    fuses the comparison with the branch instead of materialising a flag in a register.
//! 4. **Division by constants.** `udiv`/`urem` of an `i32` or `i64` by a non-zero constant
//!    becomes a multiplication by its reciprocal ([`crate::divide`]), as the e-graph's rules
//!    do: a hardware divide is tens of cycles in a loop (sqlite's digit loops).
//!
//! Every rewrite keeps what the function computes: a moved load reads the bytes it read in the
//! loop, once on entry (a header load: only where the loop was entered; a `can_move` one
//! possibly where it was not), and a replaced instruction had the same operands as the value
//! replacing it, which dominates it. The pass leaves no alias behind
//! (operands name values directly).

use crate::sched::dag::{Effect, Writes};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AliasRegion, Block, Function, Inst, InstructionData, Opcode, Type, Value, ValueDef,
};
use cranelift_codegen::loop_analysis::{Loop, LoopAnalysis};
use cranelift_codegen::packed_option::PackedOption;
use rustc_hash::{FxHashMap as HashMap, FxHasher};
use std::hash::{Hash, Hasher};

/// What [`run`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HoistStats {
    /// Loads moved out of a loop.
    pub loads_hoisted: usize,
    /// Loads of a loop replaced by an identical load hoisted from it.
    pub loads_shared_in_loops: usize,
    /// Integer extensions, and additions of one to a base within a loop, replaced by an
    /// identical dominating one.
    pub pure_numbered: usize,
    /// Loads of never-written memory replaced by an identical dominating one.
    pub loads_numbered: usize,
    /// Boolean tests simplified (an `icmp ne c, 0` removed or a `brif` retargeted).
    pub conditions_simplified: usize,
    /// Unsigned divisions and remainders by a constant turned into multiplications
    /// ([`crate::divide`]).
    pub divisions_by_constants: usize,
}

impl HoistStats {
    /// Loads the pass moved or shared: rematerialising loads next to their users afterwards
    /// would undo that work.
    pub fn loads_moved(&self) -> usize {
        self.loads_hoisted + self.loads_shared_in_loops + self.loads_numbered
    }
}

/// Runs the four rewrites on `func` (see the module documentation).
pub fn run(func: &mut Function) -> HoistStats {
    func.dfg.resolve_all_aliases();
    let mut stats = HoistStats::default();
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let mut loops = LoopAnalysis::new();
    loops.compute(func, &cfg, &domtree);
    hoist_loops(func, &cfg, &domtree, &loops, &mut stats);
    if stats.loads_shared_in_loops > 0 {
        // Operands then name values directly again, so identical instructions compare equal.
        func.dfg.resolve_all_aliases();
    }
    number_values(func, &domtree, &loops, &mut stats);
    simplify_conditions(func, &mut stats);
    stats.divisions_by_constants = crate::divide::run(func);
    func.dfg.resolve_all_aliases();
    stats
}

/// Whether `inst` (of effect `effect`) is a pure instruction the pass may share: one
/// result, no memory access, no trap, no side effect, not a constant.
fn is_pure_with(func: &Function, inst: Inst, effect: Effect) -> bool {
    let op = func.dfg.insts[inst].opcode();
    effect == Effect::Pure
        && !matches!(
            op,
            Opcode::Iconst
                | Opcode::F16const
                | Opcode::F32const
                | Opcode::F64const
                | Opcode::Vconst
                // Machine state that other instructions change.
                | Opcode::GetPinnedReg
                | Opcode::GetStackPointer
                | Opcode::GetFramePointer
                | Opcode::GetReturnAddress
        )
        && !op.is_branch()
        && !op.is_terminator()
        && func.dfg.inst_results(inst).len() == 1
}

/// A plain load with one result (of effect `effect`): its region, `readonly` flag and whether
/// it may trap.
fn load_shape(
    func: &Function,
    inst: Inst,
    effect: Effect,
) -> Option<(Option<AliasRegion>, bool, bool)> {
    let Effect::Load {
        region,
        readonly,
        traps,
    } = effect
    else {
        return None;
    };
    (matches!(func.dfg.insts[inst], InstructionData::Load { .. })
        && func.dfg.inst_results(inst).len() == 1)
        .then_some((region, readonly, traps))
}

/// An instruction's identity for sharing: its data (operands included) and result type.
fn key_hash(func: &Function, inst: Inst) -> u64 {
    let mut h = FxHasher::default();
    func.dfg.insts[inst].hash(&mut h, &func.dfg.value_lists);
    func.dfg.ctrl_typevar(inst).hash(&mut h);
    h.finish()
}

fn same_key(func: &Function, a: Inst, b: Inst) -> bool {
    func.dfg.insts[a].eq(&func.dfg.insts[b], &func.dfg.value_lists)
        && func.dfg.ctrl_typevar(a) == func.dfg.ctrl_typevar(b)
}

/// Makes `inst`'s operands name values directly rather than aliases (of instructions shared
/// earlier in the pass), so that identical instructions compare equal.
fn resolve_args(func: &mut Function, inst: Inst) {
    for i in 0..func.dfg.inst_args(inst).len() {
        let resolved = func.dfg.resolve_aliases(func.dfg.inst_args(inst)[i]);
        func.dfg.inst_args_mut(inst)[i] = resolved;
    }
}

/// The block defining `v`.
fn def_block(func: &Function, v: Value) -> Option<Block> {
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, _) => func.layout.inst_block(inst),
        ValueDef::Param(block, _) => Some(block),
        ValueDef::Union(..) => None,
    }
}

fn hoist_loops(
    func: &mut Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
    loops: &LoopAnalysis,
    stats: &mut HoistStats,
) {
    let mut order: Vec<Loop> = loops.loops().collect();
    if order.is_empty() {
        return;
    }
    // Each loop's blocks in a reverse postorder (a definition before its uses), nested
    // loops' blocks included: one walk up each block's loop nest.
    let mut bodies: SecondaryMap<Loop, Vec<Block>> = SecondaryMap::new();
    for &block in domtree.cfg_rpo() {
        let mut lp = loops.innermost_loop(block);
        while let Some(l) = lp {
            bodies[l].push(block);
            lp = loops.loop_parent(l);
        }
    }
    // Innermost first: what leaves an inner loop may then leave the enclosing one.
    order.sort_by_key(|&lp| std::cmp::Reverse(loops.loop_level(loops.loop_header(lp)).level()));
    let mut hoisted_loads: HashMap<u64, Vec<Inst>> = HashMap::default();
    for lp in order {
        let header = loops.loop_header(lp);
        let Some(target) = domtree.idom(header) else {
            continue;
        };
        let Some(anchor) = func.layout.last_inst(target) else {
            continue;
        };
        let body = &bodies[lp];
        let exact_preheader = cfg
            .pred_iter(header)
            .all(|p| p.block == target || loops.is_in_loop(p.block, lp))
            && func.dfg.insts[anchor].opcode() == Opcode::Jump;
        let mut writes = Writes::default();
        for &b in body {
            for inst in func.layout.block_insts(b) {
                writes.note(Effect::of(func, inst));
            }
        }
        let outside = |func: &Function, v: Value| {
            def_block(func, v).is_some_and(|d| !loops.is_in_loop(d, lp))
        };
        hoisted_loads.clear();
        for &block in body {
            // A header load may run earlier only while nothing before it in the header traps.
            let mut header_clear = block == header && exact_preheader;
            let mut next = func.layout.first_inst(block);
            while let Some(inst) = next {
                next = func.layout.next_inst(inst);
                let effect = Effect::of(func, inst);
                if effect.traps() && !matches!(effect, Effect::Load { .. }) {
                    header_clear = false;
                    continue;
                }
                if !func.dfg.inst_args(inst).iter().all(|&v| outside(func, v)) {
                    header_clear &= !effect.traps();
                    continue;
                }
                let Some((region, readonly, traps)) = load_shape(func, inst, effect) else {
                    header_clear &= !effect.traps();
                    continue;
                };
                if writes.never_written(region, readonly) {
                    // Identical to a load hoisted from this loop: that load ran (without
                    // trapping) at the same address, and the loop does not write there. An
                    // address may be a load shared a moment ago: compare what it names.
                    resolve_args(func, inst);
                    let hash = key_hash(func, inst);
                    let earlier = hoisted_loads
                        .get(&hash)
                        .and_then(|list| list.iter().copied().find(|&h| same_key(func, h, inst)));
                    if let Some(earlier) = earlier {
                        func.dfg.replace_with_aliases(inst, earlier);
                        func.layout.remove_inst(inst);
                        stats.loads_shared_in_loops += 1;
                        continue;
                    }
                    let can_move = func.dfg.insts[inst]
                        .memflags_data(&func.dfg)
                        .is_some_and(|f| f.can_move());
                    if !traps && (can_move || header_clear) {
                        func.layout.remove_inst(inst);
                        func.layout.insert_inst(inst, anchor);
                        hoisted_loads.entry(hash).or_default().push(inst);
                        stats.loads_hoisted += 1;
                        continue;
                    }
                }
                header_clear &= !traps;
            }
        }
    }
}

/// Shares identical loads of memory nothing in the function writes where the earlier one
/// dominates the later one; identical integer extensions (`uextend`, `sextend`: a Wasm index
/// widened for an address) where it does so from another block, or from the same block
/// inside a loop; and additions of one to a base (the address itself) where it does so from
/// the same innermost loop, its own block included. A loop that reads
/// `heap + uextend(i) + 16` in one block and `+ 20` in the next, or several fields in one
/// block, then computes the address once, as the e-graph's code does
/// (`notes/real-programs.md`, "Where tree-sitter lost, and why no longer"). Outside loops sharing an address
/// saves no loop cycles and keeps a register (on a corpus shard, aarch64 spills + reloads
/// 0.913 of stock's when only loops share it, 0.927 everywhere). Other pure duplicates stay:
/// sharing them only lengthens live ranges. Within a block, SHA-256's `Maj` would keep the
/// last round's `b & c` (x86_64: 221 → 252 spills in `balanced`); across blocks, sharing
/// `isub`/`iadd` cost squareToLen a spill on s390x, and on a corpus shard saved no loop cycles.
fn number_values(
    func: &mut Function,
    domtree: &DominatorTree,
    loops: &LoopAnalysis,
    stats: &mut HoistStats,
) {
    let mut writes = Writes::default();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            writes.note(Effect::of(func, inst));
        }
    }
    // The first instruction seen with each hash, then any other with the same hash.
    let mut first: HashMap<u64, Inst> = HashMap::default();
    let mut more: HashMap<u64, Vec<Inst>> = HashMap::default();
    let mut replaced: SecondaryMap<Value, PackedOption<Value>> =
        SecondaryMap::with_capacity(func.dfg.num_values());
    let rpo: Vec<Block> = domtree.cfg_rpo().copied().collect();
    for block in rpo {
        let mut next = func.layout.first_inst(block);
        while let Some(inst) = next {
            next = func.layout.next_inst(inst);
            let effect = Effect::of(func, inst);
            let pure_candidate = is_pure_with(func, inst, effect);
            let address = pure_candidate && is_extended_index_address(func, inst, &replaced);
            let pure = address
                || pure_candidate
                    && matches!(
                        func.dfg.insts[inst].opcode(),
                        Opcode::Uextend | Opcode::Sextend
                    );
            let load = !pure
                && load_shape(func, inst, effect)
                    .is_some_and(|(r, ro, _)| writes.never_written(r, ro));
            if !pure && !load {
                continue;
            }
            // Operands may name a value replaced earlier in this walk.
            if func
                .dfg
                .inst_args(inst)
                .iter()
                .any(|&v| replaced[v].is_some())
            {
                for v in func.dfg.inst_args_mut(inst) {
                    if let Some(r) = replaced[*v].expand() {
                        *v = r;
                    }
                }
            }
            let hash = key_hash(func, inst);
            let shares = |func: &Function, e: Inst| {
                let e_block = func.layout.inst_block(e);
                let in_loop = e_block.is_some_and(|b| same_loop(loops, b, block));
                (load || e_block != Some(block) || in_loop)
                    && (!address || in_loop)
                    && same_key(func, e, inst)
                    && domtree.dominates(e, inst, &func.layout)
            };
            let earlier = match first.get(&hash) {
                None => {
                    first.insert(hash, inst);
                    continue;
                }
                Some(&e) if shares(func, e) => Some(e),
                Some(_) => more
                    .get(&hash)
                    .and_then(|list| list.iter().copied().find(|&e| shares(func, e))),
            };
            match earlier {
                Some(e) => {
                    let (old, new) = (func.dfg.first_result(inst), func.dfg.first_result(e));
                    replaced[old] = new.into();
                    func.dfg.replace_with_aliases(inst, e);
                    func.layout.remove_inst(inst);
                    if pure {
                        stats.pure_numbered += 1;
                    } else {
                        stats.loads_numbered += 1;
                    }
                }
                None => more.entry(hash).or_default().push(inst),
            }
        }
    }
}

/// Whether `inst` is `iadd` of an extended index (`uextend`/`sextend`, possibly one `replaced`
/// by a dominating twin) to a base: the address arithmetic a Wasm heap access repeats in
/// each block that touches the same element.
fn is_extended_index_address(
    func: &Function,
    inst: Inst,
    replaced: &SecondaryMap<Value, PackedOption<Value>>,
) -> bool {
    let InstructionData::Binary {
        opcode: Opcode::Iadd,
        args,
    } = func.dfg.insts[inst]
    else {
        return false;
    };
    args.iter().any(|&v| {
        let v = replaced[v].expand().unwrap_or(v);
        matches!(func.dfg.value_def(v), ValueDef::Result(def, _)
            if matches!(func.dfg.insts[def].opcode(), Opcode::Uextend | Opcode::Sextend))
    })
}

/// Whether blocks `a` and `b` are in the same innermost loop (not both outside every loop).
fn same_loop(loops: &LoopAnalysis, a: Block, b: Block) -> bool {
    let inner = loops.innermost_loop(b);
    inner.is_some() && loops.innermost_loop(a) == inner
}

/// `c` when `v` is a comparison's result, possibly zero-extended.
fn comparison_under(func: &Function, v: Value) -> Option<Value> {
    let ValueDef::Result(inst, _) = func.dfg.value_def(v) else {
        return None;
    };
    match func.dfg.insts[inst] {
        InstructionData::IntCompare { .. } | InstructionData::FloatCompare { .. } => Some(v),
        InstructionData::Unary {
            opcode: Opcode::Uextend,
            arg,
        } => comparison_under(func, arg),
        _ => None,
    }
}

/// Whether `v` is the constant zero.
fn is_zero(func: &Function, v: Value) -> bool {
    let ValueDef::Result(inst, _) = func.dfg.value_def(v) else {
        return false;
    };
    matches!(func.dfg.insts[inst], InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } if imm.bits() == 0)
}

fn simplify_conditions(func: &mut Function, stats: &mut HoistStats) {
    let blocks: Vec<Block> = func.layout.blocks().collect();
    for block in blocks {
        let mut next = func.layout.first_inst(block);
        while let Some(inst) = next {
            next = func.layout.next_inst(inst);
            match func.dfg.insts[inst] {
                InstructionData::IntCompare {
                    opcode: Opcode::Icmp,
                    cond: IntCC::NotEqual,
                    args: [a, b],
                } => {
                    let a = func.dfg.resolve_aliases(a);
                    let b = func.dfg.resolve_aliases(b);
                    let Some(c) = comparison_under(func, a) else {
                        continue;
                    };
                    if !is_zero(func, b) {
                        continue;
                    }
                    let result = func.dfg.first_result(inst);
                    let ty: Type = func.dfg.value_type(result);
                    if func.dfg.value_type(c) != ty {
                        continue;
                    }
                    func.layout.remove_inst(inst);
                    func.dfg.clear_results(inst);
                    func.dfg.change_to_alias(result, c);
                    stats.conditions_simplified += 1;
                }
                InstructionData::Brif {
                    opcode: Opcode::Brif,
                    arg,
                    ..
                } => {
                    let arg = func.dfg.resolve_aliases(arg);
                    if let Some(c) = comparison_under(func, arg)
                        && c != arg
                    {
                        func.dfg.inst_args_mut(inst)[0] = c;
                        stats.conditions_simplified += 1;
                    }
                }
                _ => {}
            }
        }
    }
}
