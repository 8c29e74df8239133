//! `java.math.BigInteger`'s `mulAdd` and `squareToLen` as the JVM front end sees them, the
//! loops behind HotSpot's `MulAdd` and `SquareToLen` intrinsics (JDK-8185976, seed 003).
//!
//! Signatures (`SystemV`; the backend adopts the target's default convention). A Java `int[]`
//! is passed as its element pointer (`i64`) followed by its `length` (`i32`); every other
//! argument is a Java `int` (`i32`):
//!
//! ```text
//! function %bigint_mul_add(i64 out, i32 out_length, i64 in, i32 in_length,
//!                          i32 offset, i32 len, i32 k) -> i64
//! function %bigint_square_to_len(i64 x, i32 x_length, i32 len,
//!                                i64 z, i32 z_length, i32 zlen) -> i32
//! ```
//!
//! * `mul_add` returns the carry zero-extended to 64 bits (`0..=u32::MAX`: a carry uses all 32
//!   bits, so no `i32` value is free for a status), or the status sign-extended (negative).
//! * `square_to_len` returns 0 (Java returns `z`, which the caller already has), or a status.
//! * Statuses: [`ILLEGAL_ARGUMENT`] when a wrapper's argument check fails
//!   (`implMulAddCheck`, `implSquareToLenChecks`), [`OUT_OF_BOUNDS`] when an array access would
//!   leave its array. Writes made before the failure stay, as in Java.
//!
//! `int` elements are native-endian (a JVM's `int[]` on that machine), so a big-endian target
//! runs the same algorithm on big-endian memory. Ints are widened exactly where Java says:
//! `x & LONG_MASK` is `uextend.i64`, `(int) v` is `ireduce.i32`, an index is `sextend.i64` in
//! [`CheckedArray`]'s check. A 64-bit product is one `imul.i64` of two zero-extended words.
//!
//! Every array access, loads and stores alike, has its own bounds check of the shape
//! documented in [`crate::java`] (`index_shift` 2). Java's compound assignments (`a[i]++`,
//! `a[i] <<= n`, `z[i] |= …`) are an `iaload` and an `iastore`, each checked, and `addOne`'s
//! `if (a[offset] != 0)` re-reads the element, as the bytecode does.
//!
//! Alias analysis: Java allows `out` and `in` (`z` and `x`) to be the same array, and a JIT
//! cannot assume otherwise, so every `int[]` access shares one alias region,
//! [`INT_ARRAY_REGION`] (type-based aliasing: all `int[]` may alias, nothing else is accessed).
//! No access is `readonly`.

pub mod cases;
pub mod entry;
mod mul_add;
pub mod reference;
mod square_to_len;

use crate::ir_build::{build_function, jump, system_v_signature};
use crate::java::{CheckedArray, alias_region};
pub use crate::java::{ILLEGAL_ARGUMENT, OUT_OF_BOUNDS};
use cranelift_codegen::ir::{
    Block, Function, InstBuilder, MemFlagsData, Signature, Type, Value, condcodes::IntCC, types,
};
use cranelift_frontend::FunctionBuilder;

/// Alias-region id shared by every `int[]` access of both kernels.
pub const INT_ARRAY_REGION: u32 = 3;

/// Where a kernel is entered: through the Java wrapper's argument checks, or at the
/// `@IntrinsicCandidate` method itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entry {
    /// `mulAdd` (`implMulAddCheck` + `implMulAdd`), `squareToLen`'s
    /// `implSquareToLenChecks` + `implSquareToLen`: what schedlab compares with the JVM.
    Wrapper,
    /// `implMulAdd` / `implSquareToLen` alone (what the intrinsics replace). Hostile arguments
    /// then reach the array bounds checks; `implSquareToLen` still calls the checked `mulAdd`.
    Impl,
}

impl Entry {
    fn prefix(self) -> &'static str {
        match self {
            Entry::Wrapper => "bigint_",
            Entry::Impl => "bigint_impl_",
        }
    }
}

/// Symbol of [`mul_add`].
pub const MUL_ADD_NAME: &str = "bigint_mul_add";
/// Symbol of [`square_to_len`].
pub const SQUARE_TO_LEN_NAME: &str = "bigint_square_to_len";

/// `(out: i64, out_length: i32, in: i64, in_length: i32, offset: i32, len: i32, k: i32) -> i64`.
pub fn mul_add_signature() -> Signature {
    use types::{I32, I64};
    system_v_signature(&[I64, I32, I64, I32, I32, I32, I32], &[I64])
}

/// `(x: i64, x_length: i32, len: i32, z: i64, z_length: i32, zlen: i32) -> i32`.
pub fn square_to_len_signature() -> Signature {
    use types::{I32, I64};
    system_v_signature(&[I64, I32, I32, I64, I32, I32], &[I32])
}

/// `BigInteger.mulAdd` (argument checks + `implMulAdd`); see the module docs for the ABI.
pub fn mul_add() -> Function {
    mul_add_with(Entry::Wrapper)
}

/// `BigInteger.squareToLen`'s checks + `implSquareToLen`; see the module docs for the ABI.
pub fn square_to_len() -> Function {
    square_to_len_with(Entry::Wrapper)
}

/// [`mul_add`] entered at `entry` (named `bigint_impl_mul_add` for [`Entry::Impl`]).
pub fn mul_add_with(entry: Entry) -> Function {
    mul_add::build(entry, &format!("{}mul_add", entry.prefix()))
}

/// [`square_to_len`] entered at `entry` (named `bigint_impl_square_to_len` for
/// [`Entry::Impl`]).
pub fn square_to_len_with(entry: Entry) -> Function {
    square_to_len::build(entry, &format!("{}square_to_len", entry.prefix()))
}

/// A Java `int[]`: its checked view and its `length` (`i32`).
#[derive(Clone, Copy, Debug)]
struct IntArray {
    checked: CheckedArray,
    length: Value,
}

/// The builder state every kernel shares: the two exception exits and the `int[]` flags.
struct Frame {
    /// Java's `ArrayIndexOutOfBoundsException` exit (no parameters).
    oob: Block,
    /// Java's `IllegalArgumentException` exit (no parameters).
    iae: Block,
    flags: MemFlagsData,
}

impl Frame {
    fn new(b: &mut FunctionBuilder) -> Self {
        let region = alias_region(b, INT_ARRAY_REGION, "int[]");
        Self {
            oob: b.create_block(),
            iae: b.create_block(),
            flags: MemFlagsData::new()
                .with_notrap()
                .with_alias_region(Some(region)),
        }
    }

    /// An `int[]` at `base` with `length` elements (emits its bound at the current position).
    fn int_array(&self, b: &mut FunctionBuilder, base: Value, length: Value) -> IntArray {
        IntArray {
            // One index covers one element: bound = max(length, 0), offset = index << 2.
            checked: CheckedArray::new(b, base, length, 1, 2, self.flags),
            length,
        }
    }

    /// `a[index + k]`, checked.
    fn load(&self, b: &mut FunctionBuilder, a: &IntArray, index: Value, k: i64) -> Value {
        a.checked
            .checked_load(b, types::I32, index, k, self.oob, &[])
    }

    /// `a[index + k] = value`, checked.
    fn store(&self, b: &mut FunctionBuilder, a: &IntArray, index: Value, k: i64, value: Value) {
        a.checked.checked_store(b, value, index, k, self.oob, &[]);
    }

    /// `if (cond) throw new IllegalArgumentException(…)`; continues in a fresh block.
    fn illegal_if(&self, b: &mut FunctionBuilder, cond: Value) {
        let next = b.create_block();
        b.ins().brif(cond, self.iae, &[], next, &[]);
        b.switch_to_block(next);
    }

    /// Emits both exits returning their status as `ret` (sign-extended when wider than i32).
    fn finish(&self, b: &mut FunctionBuilder, ret: Type) {
        for (block, status) in [(self.oob, OUT_OF_BOUNDS), (self.iae, ILLEGAL_ARGUMENT)] {
            b.switch_to_block(block);
            let value = b.ins().iconst(ret, i64::from(status));
            b.ins().return_(&[value]);
        }
    }
}

/// A block with parameters of `tys`, and those parameters.
fn block_with_params(b: &mut FunctionBuilder, tys: &[Type]) -> (Block, Vec<Value>) {
    let block = b.create_block();
    let params = tys
        .iter()
        .map(|&t| b.append_block_param(block, t))
        .collect();
    (block, params)
}

/// `while (cond) { … }` header: branches to a fresh body block or to a fresh exit block and
/// switches to the body. Returns the exit.
fn loop_test(b: &mut FunctionBuilder, cc: IntCC, x: Value, y: Value) -> Block {
    let (body, exit) = (b.create_block(), b.create_block());
    let more = b.ins().icmp(cc, x, y);
    b.ins().brif(more, body, &[], exit, &[]);
    b.switch_to_block(body);
    exit
}

/// The kernel `name` with signature `sig`: `body` emits it from the entry block, given the
/// frame and the function's parameters; the frame's exits then return their status as `ret`.
fn build_kernel(
    name: &str,
    sig: Signature,
    ret: Type,
    body: impl FnOnce(&mut FunctionBuilder, &Frame, &[Value]),
) -> Function {
    build_function(name, sig, |b| {
        let frame = Frame::new(b);

        let start = b.create_block();
        b.append_block_params_for_function_params(start);
        b.switch_to_block(start);
        let params = b.block_params(start).to_vec();
        body(b, &frame, &params);

        frame.finish(b, ret);
        b.seal_all_blocks();
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
    use cranelift_codegen::settings;

    fn all() -> Vec<Function> {
        [Entry::Wrapper, Entry::Impl]
            .into_iter()
            .flat_map(|e| [mul_add_with(e), square_to_len_with(e)])
            .collect()
    }

    fn count(func: &Function, op: Opcode) -> usize {
        func.layout
            .blocks()
            .flat_map(|blk| func.layout.block_insts(blk))
            .filter(|&i| func.dfg.insts[i].opcode() == op)
            .count()
    }

    /// Conditional branches whose taken/not-taken target is the block returning `status`.
    fn branches_to_status(func: &Function, status: i32) -> usize {
        let exit = func.layout.blocks().find(|&blk| {
            func.layout.block_insts(blk).any(|i| {
                matches!(func.dfg.insts[i], InstructionData::UnaryImm { imm, .. }
                    if imm.bits() as i32 == status)
            })
        });
        let Some(exit) = exit else { return 0 };
        func.layout
            .blocks()
            .filter_map(|blk| func.layout.last_inst(blk))
            .filter(|&inst| match &func.dfg.insts[inst] {
                InstructionData::Brif { blocks, .. } => blocks
                    .iter()
                    .any(|c| c.block(&func.dfg.value_lists) == exit),
                _ => false,
            })
            .count()
    }

    #[test]
    fn kernels_verify() {
        let flags = settings::Flags::new(settings::builder());
        for func in all() {
            cranelift_codegen::verify_function(&func, &flags)
                .unwrap_or_else(|e| panic!("{}: {e}", func.name));
        }
    }

    #[test]
    fn every_access_has_its_own_check() {
        // (function, loads, stores, bounds checks, argument checks)
        let expected = [
            (mul_add(), 2, 1, 3, 4),
            (mul_add_with(Entry::Impl), 2, 1, 3, 0),
            (square_to_len(), 12, 8, 20, 5 + 4),
            (square_to_len_with(Entry::Impl), 12, 8, 20, 4),
        ];
        for (func, loads, stores, checks, args) in expected {
            let name = func.name.to_string();
            assert_eq!(count(&func, Opcode::Load), loads, "{name} loads");
            assert_eq!(count(&func, Opcode::Store), stores, "{name} stores");
            assert_eq!(branches_to_status(&func, OUT_OF_BOUNDS), checks, "{name}");
            assert_eq!(branches_to_status(&func, ILLEGAL_ARGUMENT), args, "{name}");
        }
    }

    /// Every load and store sits in a block entered only from the `then` edge of
    /// `brif (icmp ult (sextend.i64 idx), bound)`, and its address is `base + (wide << 2)`.
    #[test]
    fn accesses_have_the_checked_array_shape() {
        for func in all() {
            for blk in func.layout.blocks() {
                for inst in func.layout.block_insts(blk) {
                    let op = func.dfg.insts[inst].opcode();
                    if op != Opcode::Load && op != Opcode::Store {
                        continue;
                    }
                    let guards: Vec<_> = func
                        .layout
                        .blocks()
                        .filter_map(|b| func.layout.last_inst(b))
                        .filter(|&t| {
                            func.dfg.insts[t]
                                .branch_destination(
                                    &func.dfg.jump_tables,
                                    &func.dfg.exception_tables,
                                )
                                .iter()
                                .any(|c| c.block(&func.dfg.value_lists) == blk)
                        })
                        .collect();
                    assert_eq!(guards.len(), 1, "{}: {blk} has one predecessor", func.name);
                    let InstructionData::Brif { arg, blocks, .. } = func.dfg.insts[guards[0]]
                    else {
                        panic!("{}: {blk} is not entered by a brif", func.name);
                    };
                    assert_eq!(blocks[0].block(&func.dfg.value_lists), blk);
                    let ValueDef::Result(cmp, _) = func.dfg.value_def(arg) else {
                        panic!("condition is an instruction result");
                    };
                    let InstructionData::IntCompare { cond, args, .. } = func.dfg.insts[cmp] else {
                        panic!("{}: guard of {blk} is not an icmp", func.name);
                    };
                    assert_eq!(cond, IntCC::UnsignedLessThan);
                    let ValueDef::Result(ext, _) = func.dfg.value_def(args[0]) else {
                        panic!("index is an instruction result");
                    };
                    assert_eq!(func.dfg.insts[ext].opcode(), Opcode::Sextend);
                    let addr = func.dfg.inst_args(inst)[usize::from(op == Opcode::Store)];
                    let ValueDef::Result(add, _) = func.dfg.value_def(addr) else {
                        panic!("address is an instruction result");
                    };
                    let ValueDef::Result(shl, _) = func.dfg.value_def(func.dfg.inst_args(add)[1])
                    else {
                        panic!("offset is an instruction result");
                    };
                    assert_eq!(func.dfg.inst_args(shl)[0], args[0], "offset = wide << 2");
                }
            }
        }
    }
}
