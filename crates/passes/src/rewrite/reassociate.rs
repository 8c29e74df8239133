//! Reassociation of associative-commutative trees by operand ready time.
//!
//! A source language evaluates `a + F + x + ac` left to right, so every addition waits for
//! `F`, the operand that is ready last. This pass collects each maximal tree of one operation
//! (`iadd`, `bxor`, `band`, `bor`, including their `_imm` forms and `iconst` operands) whose
//! interior values have no other use, folds its constants, and rebuilds it by repeatedly
//! combining the two operands that are ready earliest (ready times come from the latency
//! model). The operand ready last is then combined last: on a dependence chain only one
//! operation follows it. In a loop, operands on a recurrence through the tree's own result
//! (a carried sum: `super::recurrence`) are combined after all the others, whatever their
//! ready time within the block: an out-of-order core computes the other operands of later
//! iterations ahead, so the loop-carried chain passes through one operation per tree. Integer
//! addition wraps, so every regrouping gives the same bits.

use super::ready::{Aliases, BlockReadyTimes, LatencyFn, Uses, note_ready_with, use_counts_with};
use super::recurrence::Recurrences;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::types::I8;
use cranelift_codegen::ir::{
    Block, Function, Inst, InstBuilder, InstructionData, Opcode, Type, Value, ValueDef,
};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What [`reassociate`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReassociateStats {
    /// Trees of three or more operands found.
    pub trees: usize,
    /// Trees whose root became ready earlier after rebuilding.
    pub shortened: usize,
    /// Sum over all trees of cycles saved at the root (by the latency model).
    pub cycles_saved: u32,
    /// Constant operands folded into another constant.
    pub constants_folded: usize,
    /// Instructions that became dead and were removed.
    pub removed: usize,
}

/// Where a tree's folded constant joins the operands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ConstantPlacement {
    /// With the operand ready earliest (constants are ready at once): the constant is added
    /// off the dependence chain. The default.
    #[default]
    Early,
    /// After every other operand, as the last operation of the tree: on x86_64 the last two
    /// additions then become one three-component `lea` on the chain (the form JDK-8296548
    /// removed from HotSpot's MD5 intrinsic). For measuring that form.
    Late,
}

impl ConstantPlacement {
    /// Both placements, the default first.
    pub const ALL: [ConstantPlacement; 2] = [ConstantPlacement::Early, ConstantPlacement::Late];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            ConstantPlacement::Early => "early",
            ConstantPlacement::Late => "late",
        }
    }
}

/// The associative-commutative operations the pass rebuilds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Add,
    Xor,
    And,
    Or,
}

impl Family {
    fn of(op: Opcode) -> Option<Family> {
        Some(match op {
            Opcode::Iadd => Family::Add,
            Opcode::Bxor => Family::Xor,
            Opcode::Band => Family::And,
            Opcode::Bor => Family::Or,
            _ => return None,
        })
    }

    fn identity(self) -> i64 {
        if self == Family::And { -1 } else { 0 }
    }

    fn fold(self, a: i64, b: i64) -> i64 {
        match self {
            Family::Add => a.wrapping_add(b),
            Family::Xor => a ^ b,
            Family::And => a & b,
            Family::Or => a | b,
        }
    }
}

/// Sign-extends the low `ty.bits()` bits of `v`.
fn truncate(ty: Type, v: i64) -> i64 {
    let bits = ty.bits();
    if bits >= 64 {
        v
    } else {
        let shift = 64 - bits;
        (v << shift) >> shift
    }
}

/// Rebuilds every associative-commutative tree in `func` by operand ready time.
pub fn reassociate(func: &mut Function, latency: LatencyFn<'_>) -> ReassociateStats {
    reassociate_with(func, latency, ConstantPlacement::Early)
}

/// [`reassociate`] with the folded constants placed as `constants` says.
pub fn reassociate_with(
    func: &mut Function,
    latency: LatencyFn<'_>,
    constants: ConstantPlacement,
) -> ReassociateStats {
    reassociate_counting(func, latency, constants, true, Aliases::Resolve, false)
}

/// [`reassociate_with`]; without `shortening`, the trees' ready times before the rebuild are
/// not computed and [`ReassociateStats::shortened`] and [`ReassociateStats::cycles_saved`]
/// stay zero (the rebuilt function is the same). Operands are read as `aliases` says (the
/// rebuild makes no alias). With `keep_conditions`, trees of `i8` conditions (the `band`s of a
/// preheader's range tests) are left as built: see [`super::RewriteOptions::keep_conditions`].
pub(crate) fn reassociate_counting(
    func: &mut Function,
    latency: LatencyFn<'_>,
    constants: ConstantPlacement,
    shortening: bool,
    aliases: Aliases,
    keep_conditions: bool,
) -> ReassociateStats {
    let mut stats = ReassociateStats::default();
    let uses = use_counts_with(func, aliases);
    let recurrences = Recurrences::of(func, aliases);
    let blocks: Vec<Block> = func.layout.blocks().collect();
    // Both maps are reused block after block (see `BlockReadyTimes`).
    let mut original = BlockReadyTimes::new(func);
    let mut ready = BlockReadyTimes::new(func);
    for block in blocks {
        if shortening {
            original.compute_block(func, block, latency);
        }
        // One forward sweep: a tree's operands are final when its root is reached, and the
        // instructions a rebuild inserts get their ready times as they are created.
        ready.next_block();
        let insts: Vec<Inst> = func.layout.block_insts(block).collect();
        for inst in insts {
            if is_root(func, block, inst, &uses)
                && !(keep_conditions && func.dfg.value_type(func.dfg.first_result(inst)) == I8)
            {
                let before = original[func.dfg.first_result(inst)];
                let tree = Tree {
                    block,
                    root: inst,
                    constants,
                };
                let context = Context {
                    uses: &uses,
                    recurrences: &recurrences,
                    latency,
                    aliases,
                };
                rebuild(func, &tree, &context, &mut ready, &mut stats);
                note_ready_with(func, inst, latency, &mut ready, aliases);
                let after = ready[func.dfg.first_result(inst)];
                if after < before {
                    stats.shortened += 1;
                    stats.cycles_saved += before - after;
                }
            } else {
                note_ready_with(func, inst, latency, &mut ready, aliases);
            }
        }
    }
    stats.removed = super::remove_dead_pure_insts_with(func, aliases);
    stats
}

/// A tree root: a family operation whose result is not an interior node of a larger tree.
fn is_root(func: &Function, block: Block, inst: Inst, uses: &Uses) -> bool {
    let Some(family) = Family::of(func.dfg.insts[inst].opcode()) else {
        return false;
    };
    let result = func.dfg.first_result(inst);
    if uses.count[result] != 1 {
        return true;
    }
    // Single use: a root unless that user is a same-family operation in this block.
    let Some(user) = uses.user[result].expand() else {
        return true;
    };
    !(Family::of(func.dfg.insts[user].opcode()) == Some(family)
        && func.layout.inst_block(user) == Some(block))
}

/// The operands of a tree being collected: values (in source order) and constants.
#[derive(Default)]
struct Operands {
    leaves: Vec<Value>,
    constants: Vec<i64>,
}

/// Collects the operands of the tree rooted at `inst` into `out`: an operand defined in
/// `block` by a `family` operation whose result has no other use is an interior node (its
/// operands are collected in its place), one defined by an `iconst` a constant, any other a
/// leaf.
fn collect(
    func: &Function,
    block: Block,
    inst: Inst,
    family: Family,
    context: &Context<'_>,
    out: &mut Operands,
) {
    for &v in func.dfg.inst_args(inst) {
        let v = context.aliases.resolve(func, v);
        // What `interior` and then `constant` decide, from one look at the definition.
        if let ValueDef::Result(def, 0) = func.dfg.value_def(v) {
            let data = &func.dfg.insts[def];
            if Family::of(data.opcode()) == Some(family)
                && context.uses.count[v] == 1
                && func.layout.inst_block(def) == Some(block)
            {
                collect(func, block, def, family, context, out);
                continue;
            }
            if let InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } = *data
            {
                out.constants.push(imm.bits());
                continue;
            }
        }
        out.leaves.push(v);
    }
}

/// A tree to rebuild: its root, the root's block and where its constant goes.
struct Tree {
    block: Block,
    root: Inst,
    constants: ConstantPlacement,
}

/// What a rebuild consults besides the tree.
struct Context<'a> {
    uses: &'a Uses,
    recurrences: &'a Recurrences,
    latency: LatencyFn<'a>,
    aliases: Aliases,
}

fn rebuild(
    func: &mut Function,
    tree: &Tree,
    context: &Context<'_>,
    ready: &mut BlockReadyTimes,
    stats: &mut ReassociateStats,
) {
    let latency = context.latency;
    let (block, root) = (tree.block, tree.root);
    let Some(family) = Family::of(func.dfg.insts[root].opcode()) else {
        return;
    };
    let ty = func.dfg.value_type(func.dfg.first_result(root));
    let mut operands = Operands::default();
    collect(func, block, root, family, context, &mut operands);
    let Operands { leaves, constants } = operands;
    let operand_count = leaves.len() + constants.len();
    if operand_count < 3 || leaves.is_empty() {
        return;
    }
    stats.trees += 1;
    stats.constants_folded += constants.len().saturating_sub(1);
    let folded = truncate(
        ty,
        constants
            .iter()
            .fold(family.identity(), |a, &c| family.fold(a, c)),
    );
    let constant = (folded != truncate(ty, family.identity())).then_some(folded);

    let op_latency = latency(func, root);
    let result = func.dfg.first_result(root);
    // Min-heap of (recurrent, ready time, source order, value): operands off the tree's
    // recurrence first, then earliest first, ties in source order. A combination is
    // recurrent when either part is.
    let mut heap: BinaryHeap<Reverse<(bool, u32, usize, Value)>> = leaves
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let recurrent = context.recurrences.common(v, result);
            Reverse((recurrent, ready[v], i, v))
        })
        .collect();
    let mut seq = leaves.len();
    let mut pending_constant = constant;
    loop {
        let Some(Reverse((r0, t0, _, v0))) = heap.pop() else {
            return;
        };
        let last = heap.is_empty();
        let constant_now = tree.constants == ConstantPlacement::Early || last;
        if let Some(c) = pending_constant.filter(|_| constant_now) {
            pending_constant = None;
            // Early: the constant is ready at once, so it joins the earliest operand.
            // Late: it joins the combination of all the others.
            if last {
                replace_imm(func, root, family, v0, c);
                break;
            }
            let v = insert_imm(func, root, family, v0, c);
            note_new(func, v, context, ready);
            heap.push(Reverse((r0, t0 + op_latency, seq, v)));
            seq += 1;
            continue;
        }
        let Some(Reverse((r1, t1, _, v1))) = heap.pop() else {
            // A single operand left without a constant cannot happen: the loop always stops
            // when the last two are combined into the root.
            return;
        };
        if heap.is_empty() && pending_constant.is_none() {
            replace_binary(func, root, family, v0, v1);
            break;
        }
        let v = insert_binary(func, root, family, v0, v1);
        note_new(func, v, context, ready);
        heap.push(Reverse((r0 || r1, t0.max(t1) + op_latency, seq, v)));
        seq += 1;
    }
}

/// Records the ready time of a value a rebuild just created (and of its constant operand).
fn note_new(func: &Function, v: Value, context: &Context<'_>, ready: &mut BlockReadyTimes) {
    let (latency, aliases) = (context.latency, context.aliases);
    let inst = func.dfg.value_def(v).unwrap_inst();
    for &arg in func.dfg.inst_args(inst) {
        if let ValueDef::Result(def, _) = func.dfg.value_def(arg)
            && func.dfg.insts[def].opcode() == Opcode::Iconst
        {
            note_ready_with(func, def, latency, ready, aliases);
        }
    }
    note_ready_with(func, inst, latency, ready, aliases);
}

fn insert_binary(func: &mut Function, at: Inst, family: Family, a: Value, b: Value) -> Value {
    let mut cursor = FuncCursor::new(func).at_inst(at);
    let ins = cursor.ins();
    match family {
        Family::Add => ins.iadd(a, b),
        Family::Xor => ins.bxor(a, b),
        Family::And => ins.band(a, b),
        Family::Or => ins.bor(a, b),
    }
}

fn insert_imm(func: &mut Function, at: Inst, family: Family, a: Value, c: i64) -> Value {
    let k = insert_const(func, at, a, c);
    insert_binary(func, at, family, a, k)
}

/// Materialises `c` with the type of `like` right before `at`.
fn insert_const(func: &mut Function, at: Inst, like: Value, c: i64) -> Value {
    let ty = func.dfg.value_type(like);
    let mut cursor = FuncCursor::new(func).at_inst(at);
    cursor.ins().iconst(ty, c)
}

fn replace_binary(func: &mut Function, root: Inst, family: Family, a: Value, b: Value) {
    let r = func.replace(root);
    match family {
        Family::Add => r.iadd(a, b),
        Family::Xor => r.bxor(a, b),
        Family::And => r.band(a, b),
        Family::Or => r.bor(a, b),
    };
}

fn replace_imm(func: &mut Function, root: Inst, family: Family, a: Value, c: i64) {
    let k = insert_const(func, root, a, c);
    replace_binary(func, root, family, a, k);
}
