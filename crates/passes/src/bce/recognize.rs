//! Recognising bounds checks, and the few facts about values the rewrites need.
//!
//! A bounds check is a block terminator of the shape the kernels emit (see
//! `schedlab_kernels::java`):
//!
//! ```text
//!     k    = iconst.i32 K            ; absent when K = 0
//!     idx  = iadd base, k            ; 32-bit, wrapping
//!     wide = sextend.i64 idx
//!     ok   = icmp ult wide, bound    ; or `icmp ugt bound, wide`, or the negations with the
//!     brif ok, guarded, exit(args)   ;   branch targets swapped
//! ```
//!
//! where `exit` ends in `return` or `trap`: the failure leaves the function. Any value is
//! `value + 0`, so every such comparison is a check on *some* base; whether two checks can be
//! merged is decided later from their bases, bounds and exits.

use crate::edges::brif;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{
    Block, BlockArg, Function, Inst, InstructionData, Opcode, Value, condcodes::IntCC, types,
};
use rustc_hash::FxHashMap as HashMap;

/// One recognised bounds check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundsCheck {
    /// The block the check terminates.
    pub block: Block,
    /// The conditional branch.
    pub branch: Inst,
    /// The comparison the branch tests.
    pub cmp: Inst,
    /// The sign-extended index the comparison reads.
    pub wide: Value,
    /// The index before the constant is added (`idx = base + offset`).
    pub base: Value,
    /// The constant added to `base`, as the index type's signed value.
    pub offset: i64,
    /// The unsigned bound the index is compared against.
    pub bound: Value,
    /// Where control goes when the check passes.
    pub guarded: Block,
    /// Where control goes when the check fails (ends in `return` or `trap`).
    pub exit: Block,
    /// The arguments the failure edge passes to `exit`.
    pub exit_args: Vec<Value>,
}

/// Recognises the check that terminates `block`, if it has one.
pub fn recognize(func: &Function, block: Block) -> Option<BoundsCheck> {
    let dfg = &func.dfg;
    let branch = func.layout.last_inst(block)?;
    let (arg, [then_call, else_call]) = brif(func, branch)?;
    let cmp = defining_inst(func, arg)?;
    // Normalise to `in_bounds = wide <u bound` and note which branch target is "in bounds":
    // `low <= high` is `!(high < low)`.
    let (low, high, strict) = unsigned_order(func, cmp)?;
    let (wide, bound, then_is_ok) = if strict {
        (low, high, true)
    } else {
        (high, low, false)
    };
    let ext = defining_inst(func, wide)?;
    let InstructionData::Unary {
        opcode: Opcode::Sextend,
        arg: idx,
    } = dfg.insts[ext]
    else {
        return None;
    };
    let idx = dfg.resolve_aliases(idx);
    if dfg.value_type(idx) != types::I32 {
        return None;
    }
    let (base, offset) = split_constant(func, idx);

    let (ok_call, fail_call) = if then_is_ok {
        (then_call, else_call)
    } else {
        (else_call, then_call)
    };
    let pool = &dfg.value_lists;
    let guarded = ok_call.block(pool);
    let exit = fail_call.block(pool);
    if guarded == exit || !is_exit_block(func, exit) {
        return None;
    }
    let exit_args = fail_call
        .args(pool)
        .map(|a| match a {
            BlockArg::Value(v) => Some(dfg.resolve_aliases(v)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(BoundsCheck {
        block,
        branch,
        cmp,
        wide,
        base,
        offset,
        bound,
        guarded,
        exit,
        exit_args,
    })
}

/// Every recognised check, in layout order.
pub fn all_checks(func: &Function) -> Vec<BoundsCheck> {
    func.layout
        .blocks()
        .filter_map(|b| recognize(func, b))
        .collect()
}

/// A block that leaves the function: it ends in `return` or a trap and branches nowhere.
pub fn is_exit_block(func: &Function, block: Block) -> bool {
    func.layout.last_inst(block).is_some_and(|inst| {
        let op = func.dfg.insts[inst].opcode();
        op.is_return() || op == Opcode::Trap
    })
}

/// `idx = base + K` with `K` an `iconst`, or `(idx, 0)`.
pub fn split_constant(func: &Function, idx: Value) -> (Value, i64) {
    let dfg = &func.dfg;
    if let Some(inst) = defining_inst(func, idx)
        && let InstructionData::Binary {
            opcode: Opcode::Iadd,
            args,
        } = dfg.insts[inst]
    {
        let [a, b] = args.map(|v| dfg.resolve_aliases(v));
        if let Some(k) = iconst_value(func, b) {
            return (a, k);
        }
        if let Some(k) = iconst_value(func, a) {
            return (b, k);
        }
    }
    (idx, 0)
}

/// The unsigned comparison `cmp` of two 64-bit values as `(low, high, strict)`: it holds
/// exactly when `low < high` (`strict`) or `low <= high`. `None` for any other instruction,
/// condition or operand type.
pub fn unsigned_order(func: &Function, cmp: Inst) -> Option<(Value, Value, bool)> {
    let dfg = &func.dfg;
    let InstructionData::IntCompare { cond, args, .. } = dfg.insts[cmp] else {
        return None;
    };
    let [x, y] = args.map(|v| dfg.resolve_aliases(v));
    if dfg.value_type(x) != types::I64 || dfg.value_type(y) != types::I64 {
        return None;
    }
    match cond {
        IntCC::UnsignedLessThan => Some((x, y, true)),
        IntCC::UnsignedGreaterThan => Some((y, x, true)),
        IntCC::UnsignedLessThanOrEqual => Some((x, y, false)),
        IntCC::UnsignedGreaterThanOrEqual => Some((y, x, false)),
        _ => None,
    }
}

/// The instruction that defines `v` (through aliases), if an instruction does.
pub fn defining_inst(func: &Function, v: Value) -> Option<Inst> {
    func.dfg.value_def(func.dfg.resolve_aliases(v)).inst()
}

/// The signed value of an `iconst`, sign-extended from its type's width.
pub fn iconst_value(func: &Function, v: Value) -> Option<i64> {
    let inst = defining_inst(func, v)?;
    let InstructionData::UnaryImm {
        opcode: Opcode::Iconst,
        imm,
    } = func.dfg.insts[inst]
    else {
        return None;
    };
    let bits = func.dfg.value_type(v).bits();
    let raw = imm.bits();
    Some(if bits >= 64 {
        raw
    } else {
        let shift = 64 - bits;
        (raw << shift) >> shift
    })
}

/// An inclusive range `lo..=hi` of a value's signed interpretation.
pub type Range = (i128, i128);

/// What a value can be, from its definition: the type's full signed range unless the value is
/// built from constants, extensions, additions, `smax`/`smin` or a mask with a constant.
///
/// This is what makes merged checks exact: the bound of a check must be known to lie in
/// `0..=2^31` for one comparison to stand in for several on a 32-bit index.
pub fn value_range(func: &Function, v: Value) -> Range {
    let mut memo = HashMap::default();
    range_rec(func, func.dfg.resolve_aliases(v), 16, &mut memo)
}

fn full_range(bits: u32) -> Range {
    let bits = bits.clamp(1, 64);
    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
}

fn range_rec(func: &Function, v: Value, depth: u32, memo: &mut HashMap<Value, Range>) -> Range {
    let dfg = &func.dfg;
    let full = full_range(dfg.value_type(v).bits());
    if depth == 0 {
        return full;
    }
    if let Some(&r) = memo.get(&v) {
        return r;
    }
    let mut rec = |u: Value| range_rec(func, dfg.resolve_aliases(u), depth - 1, memo);
    let r = match dfg.value_def(v).inst().map(|i| dfg.insts[i]) {
        Some(InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            ..
        }) => match iconst_value(func, v) {
            Some(k) => (i128::from(k), i128::from(k)),
            None => full,
        },
        Some(InstructionData::Unary {
            opcode: Opcode::Sextend,
            arg,
        }) => rec(arg),
        Some(InstructionData::Unary {
            opcode: Opcode::Uextend,
            arg,
        }) => {
            let (lo, hi) = rec(arg);
            if lo >= 0 {
                (lo, hi)
            } else {
                (0, (1i128 << dfg.value_type(arg).bits()) - 1)
            }
        }
        Some(InstructionData::Binary { opcode, args }) => {
            let (a, b) = (rec(args[0]), rec(args[1]));
            match opcode {
                Opcode::Iadd => (a.0 + b.0, a.1 + b.1),
                Opcode::Isub => (a.0 - b.1, a.1 - b.0),
                Opcode::Smax => (a.0.max(b.0), a.1.max(b.1)),
                Opcode::Smin => (a.0.min(b.0), a.1.min(b.1)),
                Opcode::Band if a.0 >= 0 || b.0 >= 0 => {
                    let hi = match (a.0 >= 0, b.0 >= 0) {
                        (true, true) => a.1.min(b.1),
                        (true, false) => a.1,
                        _ => b.1,
                    };
                    (0, hi)
                }
                _ => full,
            }
        }
        _ => full,
    };
    // Arithmetic that may wrap tells us nothing.
    let r = if r.0 < full.0 || r.1 > full.1 {
        full
    } else {
        r
    };
    memo.insert(v, r);
    r
}

/// Does `inst` do anything a bounds check may not be moved across: store, call, trap, or a
/// load that is allowed to fault?
pub fn has_side_effect(func: &Function, inst: Inst) -> bool {
    let data = &func.dfg.insts[inst];
    let op = data.opcode();
    if op.is_call()
        || op.is_branch()
        || op.is_terminator()
        || op.can_trap()
        || op.other_side_effects()
        || op.can_store()
    {
        return true;
    }
    if op.can_load() {
        return match data.memflags_data(&func.dfg) {
            Some(flags) => !flags.notrap(),
            None => true,
        };
    }
    false
}

/// How many times each block is the target of a branch edge (a `brif` to the same block twice
/// counts twice).
pub fn predecessor_counts(func: &Function) -> HashMap<Block, usize> {
    let mut counts = HashMap::default();
    for block in func.layout.blocks() {
        if let Some(term) = func.layout.last_inst(block) {
            for call in func.dfg.insts[term]
                .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
            {
                *counts.entry(call.block(&func.dfg.value_lists)).or_insert(0) += 1;
            }
        }
    }
    counts
}

/// Calls `f` with every value `inst` uses, as [`cranelift_codegen::ir::DataFlowGraph::inst_values`]
/// lists them (arguments, then branch arguments, then exception contexts), without building
/// that iterator chain for the instructions that are not branches: the passes count uses over
/// the whole function several times per JIT compile.
#[inline]
pub fn for_each_operand(func: &Function, inst: Inst, mut f: impl FnMut(Value)) {
    let data = &func.dfg.insts[inst];
    if data.opcode().is_branch() || data.exception_table().is_some() {
        func.dfg.inst_values(inst).for_each(f);
    } else {
        func.dfg.inst_args(inst).iter().for_each(|&v| f(v));
    }
}

/// Removes each of `candidates` whose results are unused and that has no side effect, then
/// does the same for the instructions that defined their arguments. One use count serves the
/// whole batch, so the passes collect candidates and sweep once per stage.
pub fn remove_dead(func: &mut Function, candidates: &[Inst]) {
    if candidates.is_empty() {
        return;
    }
    // Sized once: growing on demand reallocates as the sweep meets higher value numbers.
    let mut uses: SecondaryMap<Value, u32> = SecondaryMap::with_capacity(func.dfg.num_values());
    uses.resize(func.dfg.num_values());
    for block in func.layout.blocks() {
        for i in func.layout.block_insts(block) {
            for_each_operand(func, i, |v| uses[func.dfg.resolve_aliases(v)] += 1);
        }
    }
    let mut work = candidates.to_vec();
    while let Some(inst) = work.pop() {
        if func.layout.inst_block(inst).is_none() || has_side_effect(func, inst) {
            continue;
        }
        if func.dfg.inst_results(inst).iter().any(|&r| uses[r] > 0) {
            continue;
        }
        let args: Vec<Value> = func
            .dfg
            .inst_values(inst)
            .map(|v| func.dfg.resolve_aliases(v))
            .collect();
        func.layout.remove_inst(inst);
        for a in args {
            uses[a] = uses[a].saturating_sub(1);
            if uses[a] == 0
                && let Some(def) = func.dfg.value_def(a).inst()
            {
                work.push(def);
            }
        }
    }
}
