//! `mulAdd` = `implMulAddCheck` + `implMulAdd`, also inlined into `implSquareToLen`.
//!
//! ```java
//! long kLong = k & LONG_MASK;
//! long carry = 0;
//! offset = out.length-offset - 1;
//! for (int j=len-1; j >= 0; j--) {
//!     long product = (in[j] & LONG_MASK) * kLong + (out[offset] & LONG_MASK) + carry;
//!     out[offset--] = (int)product;
//!     carry = product >>> 32;
//! }
//! return (int)carry;
//! ```

use super::{Entry, Frame, IntArray, block_with_params, build_kernel, jump, loop_test};
use cranelift_codegen::ir::{Function, InstBuilder, Value, condcodes::IntCC, types};
use cranelift_frontend::FunctionBuilder;

/// Builds the `mul_add` kernel entered at `entry`.
pub(super) fn build(entry: Entry, name: &str) -> Function {
    build_kernel(
        name,
        super::mul_add_signature(),
        types::I64,
        |b, frame, p| {
            let operands = Operands {
                out: frame.int_array(b, p[0], p[1]),
                input: frame.int_array(b, p[2], p[3]),
                offset: p[4],
                len: p[5],
            };
            let k = p[6];

            if entry == Entry::Wrapper {
                emit_check(b, frame, operands);
            }
            let carry = emit_impl(b, frame, operands, k);
            let wide = b.ins().uextend(types::I64, carry);
            b.ins().return_(&[wide]);
        },
    )
}

/// The operands of `mulAdd(out, in, offset, len, k)` that its checks read (all but `k`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Operands {
    /// `int[] out`.
    pub(super) out: IntArray,
    /// `int[] in`.
    pub(super) input: IntArray,
    /// `int offset` (`i32`).
    pub(super) offset: Value,
    /// `int len` (`i32`).
    pub(super) len: Value,
}

impl Operands {
    /// `out.length - offset`: the words from `offset` to the end of `out`.
    fn room(self, b: &mut FunctionBuilder) -> Value {
        b.ins().isub(self.out.length, self.offset)
    }
}

/// `implMulAddCheck(out, in, offset, len, k)`: four tests leaving for the
/// `IllegalArgumentException` exit, in Java's order.
pub(super) fn emit_check(b: &mut FunctionBuilder, frame: &Frame, operands: Operands) {
    let Operands {
        out,
        input,
        offset,
        len,
    } = operands;
    let c = b.ins().icmp(IntCC::SignedGreaterThan, len, input.length);
    frame.illegal_if(b, c);
    let c = b.ins().icmp_imm_s(IntCC::SignedLessThan, offset, 0);
    frame.illegal_if(b, c);
    let last = b.ins().iadd_imm_s(out.length, -1);
    let c = b.ins().icmp(IntCC::SignedGreaterThan, offset, last);
    frame.illegal_if(b, c);
    let room = operands.room(b);
    let c = b.ins().icmp(IntCC::SignedGreaterThan, len, room);
    frame.illegal_if(b, c);
}

/// `implMulAdd(out, in, offset, len, k)`: the loop, leaving the builder after it. Returns
/// `(int) carry` (`i32`).
///
/// Loop shape: `header(j, o, carry)` tests `j >= 0`; the body loads `in[j]`, loads `out[o]`
/// and stores `out[o]` (three checks, each with `k = 0`), and jumps back with `j - 1`, `o - 1`.
pub(super) fn emit_impl(
    b: &mut FunctionBuilder,
    frame: &Frame,
    operands: Operands,
    k: Value,
) -> Value {
    let k_long = b.ins().uextend(types::I64, k);
    let carry0 = b.ins().iconst(types::I64, 0);
    let room = operands.room(b);
    let o0 = b.ins().iadd_imm_s(room, -1);
    let j0 = b.ins().iadd_imm_s(operands.len, -1);
    let (header, hp) = block_with_params(b, &[types::I32, types::I32, types::I64]);
    jump(b, header, &[j0, o0, carry0]);

    b.switch_to_block(header);
    let (j, o, carry) = (hp[0], hp[1], hp[2]);
    let zero = b.ins().iconst(types::I32, 0);
    let exit = loop_test(b, IntCC::SignedGreaterThanOrEqual, j, zero);
    let in_j = frame.load(b, &operands.input, j, 0);
    let in_long = b.ins().uextend(types::I64, in_j);
    let scaled = b.ins().imul(in_long, k_long);
    let out_o = frame.load(b, &operands.out, o, 0);
    let out_long = b.ins().uextend(types::I64, out_o);
    let sum = b.ins().iadd(scaled, out_long);
    let product = b.ins().iadd(sum, carry);
    let low = b.ins().ireduce(types::I32, product);
    frame.store(b, &operands.out, o, 0, low);
    let next_o = b.ins().iadd_imm_s(o, -1);
    let next_carry = b.ins().ushr_imm_u(product, 32);
    let next_j = b.ins().iadd_imm_s(j, -1);
    jump(b, header, &[next_j, next_o, next_carry]);

    b.switch_to_block(exit);
    b.ins().ireduce(types::I32, carry)
}
