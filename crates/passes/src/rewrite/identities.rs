//! Identities the code generator keeps at `opt_level=none`: an addition of zero, and the
//! widening of a narrow load that a widening load does in one instruction.
//!
//! * `iadd x, 0` (either operand) becomes `x`. Index arithmetic written for any offset leaves
//!   it where the offset is the constant 0 (`mulAdd`'s `out[offset + j]` after induction
//!   variable reduction); without the pass every such sum is a register copy (`lea (r), r'`
//!   on x86_64) in the loop.
//! * `uextend`/`sextend` of a `load` used only there, in the same block, becomes one
//!   `uload*`/`sload*` of the wider type with the load's flags and offset: x86_64 otherwise
//!   emits the load and then a same-register `mov` to zero-extend it.
//!
//! Both give the same bits for every input.

use super::ready::Aliases;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{
    Function, Inst, InstBuilder, InstructionData, Opcode, Value, ValueDef, types,
};

/// What [`simplify_identities`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdentityStats {
    /// Additions of zero replaced by their other operand.
    pub zero_additions: usize,
    /// Load + extension pairs replaced by one widening load.
    pub widening_loads: usize,
}

/// Applies both identities to every instruction of `func`; resolves the aliases it creates.
pub fn simplify_identities(func: &mut Function) -> IdentityStats {
    simplify_identities_with(func, Aliases::Resolve)
}

/// [`simplify_identities`], operands read as `aliases` says.
pub(crate) fn simplify_identities_with(func: &mut Function, aliases: Aliases) -> IdentityStats {
    let mut stats = IdentityStats::default();
    // One sweep finds the candidates of both identities; the use counts are taken only if an
    // extension of a load is among them.
    let mut extensions = Vec::new();
    let mut zero_sums: Vec<(Inst, Value)> = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            match func.dfg.insts[inst] {
                InstructionData::Unary {
                    opcode: Opcode::Uextend | Opcode::Sextend,
                    arg,
                } => {
                    if let ValueDef::Result(def, 0) = func.dfg.value_def(arg)
                        && func.dfg.insts[def].opcode() == Opcode::Load
                    {
                        extensions.push(inst);
                    }
                }
                InstructionData::Binary {
                    opcode: Opcode::Iadd,
                    args,
                } => {
                    if let Some(other) = zero_addition(func, args, aliases) {
                        zero_sums.push((inst, other));
                    }
                }
                _ => {}
            }
        }
    }
    for &(inst, other) in &zero_sums {
        let result = func.dfg.first_result(inst);
        func.layout.remove_inst(inst);
        func.dfg.clear_results(inst);
        func.dfg.change_to_alias(result, other);
    }
    stats.zero_additions = zero_sums.len();
    if stats.zero_additions > 0 {
        func.dfg.resolve_all_aliases();
    }
    if !extensions.is_empty() {
        let uses = super::ready::use_counts_with(func, aliases);
        for inst in extensions {
            if widen_load(func, inst, &uses, aliases) {
                stats.widening_loads += 1;
            }
        }
    }
    stats
}

/// The operand `x` when `args` of an `iadd` are `x, 0` or `0, x`.
fn zero_addition(func: &Function, args: [Value; 2], aliases: Aliases) -> Option<Value> {
    let [a, b] = args.map(|v| aliases.resolve(func, v));
    // `a` and `b` are resolved: only an `iconst` needs a closer look.
    let zero = |v: Value| {
        matches!(func.dfg.value_def(v), ValueDef::Result(def, _)
            if func.dfg.insts[def].opcode() == Opcode::Iconst)
            && crate::bce::recognize::iconst_value(func, v) == Some(0)
    };
    if zero(b) {
        Some(a)
    } else if zero(a) {
        Some(b)
    } else {
        None
    }
}

/// Replaces `inst`, an extension of a single-use narrow `load` in the same block, by the
/// widening load; returns whether it did.
fn widen_load(
    func: &mut Function,
    inst: Inst,
    uses: &super::ready::Uses,
    aliases: Aliases,
) -> bool {
    let InstructionData::Unary {
        opcode: opcode @ (Opcode::Uextend | Opcode::Sextend),
        arg,
    } = func.dfg.insts[inst]
    else {
        return false;
    };
    let narrow = aliases.resolve(func, arg);
    let ValueDef::Result(load, 0) = func.dfg.value_def(narrow) else {
        return false;
    };
    let InstructionData::Load {
        opcode: Opcode::Load,
        arg: address,
        flags,
        offset,
    } = func.dfg.insts[load]
    else {
        return false;
    };
    let wide = func.dfg.ctrl_typevar(inst);
    let from = func.dfg.value_type(narrow);
    let same_block = func.layout.inst_block(load) == func.layout.inst_block(inst);
    if uses.count[narrow] != 1 || !same_block || !wide.is_int() || wide.bits() <= from.bits() {
        return false;
    }
    let signed = opcode == Opcode::Sextend;
    let widening = match (from, wide, signed) {
        (types::I8, _, false) => Opcode::Uload8,
        (types::I8, _, true) => Opcode::Sload8,
        (types::I16, _, false) => Opcode::Uload16,
        (types::I16, _, true) => Opcode::Sload16,
        (types::I32, types::I64, false) => Opcode::Uload32,
        (types::I32, types::I64, true) => Opcode::Sload32,
        _ => return false,
    };
    // The widening load takes the extension's place (so its result keeps its number and
    // users) and reads memory where the load stood: move it there, then drop the load.
    func.replace(inst)
        .Load(widening, wide, flags, offset, address);
    func.layout.remove_inst(inst);
    let mut cursor = FuncCursor::new(func).at_inst(load);
    cursor.insert_inst(inst);
    func.layout.remove_inst(load);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::test_function as function;

    #[test]
    fn zero_additions_vanish_and_single_use_extended_loads_widen() {
        let mut func = function(
            "function %f(i64, i64) -> i64 {
             block0(v0: i64, v1: i64):
                 v2 = iconst.i64 0
                 v3 = iadd v1, v2
                 v4 = load.i32 notrap aligned v0+8
                 v5 = uextend.i64 v4
                 v6 = load.i32 notrap aligned v0+12
                 v7 = sextend.i64 v6
                 v8 = iadd v3, v5
                 v9 = iadd v8, v7
                 v10 = uextend.i64 v6
                 v11 = iadd v9, v10
                 return v11
             }",
        );
        let stats = simplify_identities(&mut func);
        assert_eq!(stats.zero_additions, 1);
        // v6 has two users: left as it is.
        assert_eq!(stats.widening_loads, 1);
        let text = func.display().to_string();
        assert!(text.contains("v5 = uload32 notrap aligned v0+8"), "{text}");
        assert!(text.contains("v8 = iadd v1, v5"), "{text}");
        assert!(text.contains("v7 = sextend.i64 v6"), "{text}");
        assert!(!text.contains("v4 = load"), "{text}");
        cranelift_codegen::verifier::verify_function(
            &func,
            &cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder()),
        )
        .expect("verifies");
    }

    #[test]
    fn a_load_in_another_block_or_a_same_width_extension_is_left_alone() {
        let mut func = function(
            "function %f(i64) -> i64 {
             block0(v0: i64):
                 v1 = load.i32 notrap aligned v0
                 jump block1
             block1:
                 v2 = uextend.i64 v1
                 return v2
             }",
        );
        assert_eq!(simplify_identities(&mut func), IdentityStats::default());
    }
}
