//! Folds the comparisons of constants that predication leaves in a loop's entry test.
//!
//! [`crate::bce::predicate`] writes each check-free loop's entry test for any start value and
//! bound: `first >= lowest`, `last + step <= i32::MAX`, `first <u bound`, … combined with
//! `band`. Where a start value is a constant (squareToLen's inner `mulAdd` loop starts at
//! offset 0), several of these terms compare two constants — `icmp sge 0, -2147483647` — and
//! the code generator, at `opt_level=none`, materialises every one of them in a register at
//! the loop's entry, inside the outer loop. This pass replaces such a comparison by its value
//! and simplifies the `band`/`bor` of truth values around it (`x & 1 = x`, `x & 0 = 0`,
//! `x | 0 = x`, `x | 1 = 1` for `x` a comparison result or a combination of them). Branches are
//! left as they are, so the control flow (and which loops exist) never changes.

use crate::bce::recognize::iconst_value;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{
    Function, Inst, InstBuilder, InstructionData, Opcode, Value, condcodes::IntCC,
};

/// The value of `a cc b` for two constants of `bits` bits (given sign-extended).
fn evaluate(cc: IntCC, a: i64, b: i64, bits: u32) -> bool {
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let (ua, ub) = (a as u64 & mask, b as u64 & mask);
    match cc {
        IntCC::Equal => a == b,
        IntCC::NotEqual => a != b,
        IntCC::SignedLessThan => a < b,
        IntCC::SignedLessThanOrEqual => a <= b,
        IntCC::SignedGreaterThan => a > b,
        IntCC::SignedGreaterThanOrEqual => a >= b,
        IntCC::UnsignedLessThan => ua < ub,
        IntCC::UnsignedLessThanOrEqual => ua <= ub,
        IntCC::UnsignedGreaterThan => ua > ub,
        IntCC::UnsignedGreaterThanOrEqual => ua >= ub,
    }
}

/// Whether `v` is a truth value (0 or 1): a comparison, a constant 0/1, or `band`/`bor` of two.
fn is_truth(func: &Function, v: Value, depth: u32) -> bool {
    let v = func.dfg.resolve_aliases(v);
    if let Some(k) = iconst_value(func, v) {
        return k == 0 || k == 1;
    }
    let Some(inst) = func.dfg.value_def(v).inst() else {
        return false;
    };
    match func.dfg.insts[inst] {
        InstructionData::IntCompare { .. } => true,
        InstructionData::Binary {
            opcode: Opcode::Band | Opcode::Bor,
            args,
        } if depth > 0 => args.iter().all(|&a| is_truth(func, a, depth - 1)),
        _ => false,
    }
}

/// What an instruction folds to.
enum Folded {
    Constant(i64),
    Alias(Value),
}

fn fold_inst(func: &Function, inst: Inst) -> Option<Folded> {
    let dfg = &func.dfg;
    match dfg.insts[inst] {
        InstructionData::IntCompare { cond, args, .. } => {
            let [a, b] = args.map(|v| iconst_value(func, v));
            let bits = dfg.value_type(args[0]).bits();
            Some(Folded::Constant(i64::from(evaluate(cond, a?, b?, bits))))
        }
        InstructionData::Binary {
            opcode: op @ (Opcode::Band | Opcode::Bor),
            args,
        } => {
            let [a, b] = args.map(|v| dfg.resolve_aliases(v));
            let (known, other) = match (iconst_value(func, a), iconst_value(func, b)) {
                (Some(k), _) => (k, b),
                (_, Some(k)) => (k, a),
                _ => return None,
            };
            if !(known == 0 || known == 1) || !is_truth(func, other, 8) {
                return None;
            }
            Some(match (op, known) {
                (Opcode::Band, 1) | (Opcode::Bor, 0) => Folded::Alias(other),
                (_, k) => Folded::Constant(k),
            })
        }
        _ => None,
    }
}

/// Folds comparisons of two constants and the truth-value `band`/`bor` they make trivial.
/// Returns the number of instructions folded.
pub fn fold_constant_conditions(func: &mut Function) -> usize {
    let mut folded = 0;
    loop {
        let insts: Vec<Inst> = func
            .layout
            .blocks()
            .flat_map(|b| func.layout.block_insts(b))
            .collect();
        let mut changed = false;
        for inst in insts {
            // Only comparisons and binary operations fold, and they have a result.
            let folded_to = fold_inst(func, inst);
            if folded_to.is_none() {
                continue;
            }
            let Some(result) = func.dfg.inst_results(inst).first().copied() else {
                continue;
            };
            match folded_to {
                Some(Folded::Constant(k)) => {
                    let ty = func.dfg.value_type(result);
                    let mut cur = FuncCursor::new(func).at_inst(inst);
                    let konst = cur.ins().iconst(ty, k);
                    func.layout.remove_inst(inst);
                    func.dfg.clear_results(inst);
                    func.dfg.change_to_alias(result, konst);
                }
                Some(Folded::Alias(v)) => {
                    func.layout.remove_inst(inst);
                    func.dfg.clear_results(inst);
                    func.dfg.change_to_alias(result, v);
                }
                None => continue,
            }
            folded += 1;
            changed = true;
        }
        if !changed {
            break;
        }
    }
    if folded > 0 {
        func.dfg.resolve_all_aliases();
        // Just resolved: no operand is an alias.
        crate::rewrite::remove_dead_pure_insts_with(func, crate::rewrite::Aliases::NoneRead);
    }
    folded
}
