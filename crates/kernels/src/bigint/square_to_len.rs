//! `implSquareToLenChecks` + `implSquareToLen`, with `mulAdd`, `addOne` and
//! `primitiveLeftShift(z, zlen, 1)` inlined (the constant `n = 1` folded, as after inlining).
//!
//! ```java
//! int lastProductLowWord = 0;
//! for (int j=0, i=0; j < len; j++) {
//!     long piece = (x[j] & LONG_MASK);
//!     long product = piece * piece;
//!     z[i++] = (lastProductLowWord << 31) | (int)(product >>> 33);
//!     z[i++] = (int)(product >>> 1);
//!     lastProductLowWord = (int)product;
//! }
//! for (int i=len, offset=1; i > 0; i--, offset+=2) {
//!     int t = x[i-1];
//!     t = mulAdd(z, x, offset, i-1, t);
//!     addOne(z, offset-1, i, t);
//! }
//! primitiveLeftShift(z, zlen, 1);
//! z[zlen-1] |= x[len-1] & 1;
//! return z;
//! ```

use super::{Entry, Frame, IntArray, block_with_params, build_kernel, jump, loop_test, mul_add};
use cranelift_codegen::ir::{BlockArg, Function, InstBuilder, Value, condcodes::IntCC, types};
use cranelift_frontend::FunctionBuilder;

/// Builds the `square_to_len` kernel entered at `entry`.
pub(super) fn build(entry: Entry, name: &str) -> Function {
    build_kernel(
        name,
        super::square_to_len_signature(),
        types::I32,
        |b, frame, p| {
            let (len, zlen) = (p[2], p[5]);
            let x = frame.int_array(b, p[0], p[1]);
            let z = frame.int_array(b, p[3], p[4]);

            if entry == Entry::Wrapper {
                emit_checks(b, frame, &x, &z, len, zlen);
            }
            emit_squares(b, frame, &x, &z, len);
            emit_off_diagonal(b, frame, &x, &z, len);
            emit_left_shift_one(b, frame, &z, zlen);

            // z[zlen-1] |= x[len-1] & 1;
            let last = b.ins().iadd_imm_s(zlen, -1);
            let z_last = frame.load(b, &z, last, 0);
            let x_last = frame.load(b, &x, len, -1);
            let low_bit = b.ins().band_imm_s(x_last, 1);
            let merged = b.ins().bor(z_last, low_bit);
            frame.store(b, &z, last, 0, merged);
            let ok = b.ins().iconst(types::I32, 0);
            b.ins().return_(&[ok]);
        },
    )
}

/// `implSquareToLenChecks(x, len, z, zlen)`, in Java's order.
fn emit_checks(
    b: &mut FunctionBuilder,
    frame: &Frame,
    x: &IntArray,
    z: &IntArray,
    len: Value,
    zlen: Value,
) {
    let c = b.ins().icmp_imm_s(IntCC::SignedLessThan, len, 1);
    frame.illegal_if(b, c);
    let c = b.ins().icmp(IntCC::SignedGreaterThan, len, x.length);
    frame.illegal_if(b, c);
    let twice = b.ins().imul_imm_s(len, 2); // Java `len * 2` wraps
    let c = b.ins().icmp(IntCC::SignedGreaterThan, twice, z.length);
    frame.illegal_if(b, c);
    let c = b.ins().icmp_imm_s(IntCC::SignedLessThan, zlen, 1);
    frame.illegal_if(b, c);
    let c = b.ins().icmp(IntCC::SignedGreaterThan, zlen, z.length);
    frame.illegal_if(b, c);
}

/// The squares loop: `header(j, i, lastProductLowWord)` tests `j < len`; the body loads
/// `x[j]` and stores `z[i]`, `z[i + 1]`, then jumps back with `j + 1`, `i + 2`.
fn emit_squares(b: &mut FunctionBuilder, frame: &Frame, x: &IntArray, z: &IntArray, len: Value) {
    let zero = b.ins().iconst(types::I32, 0);
    let (header, hp) = block_with_params(b, &[types::I32, types::I32, types::I32]);
    jump(b, header, &[zero, zero, zero]);

    b.switch_to_block(header);
    let (j, i, last_low) = (hp[0], hp[1], hp[2]);
    let exit = loop_test(b, IntCC::SignedLessThan, j, len);
    let xj = frame.load(b, x, j, 0);
    let piece = b.ins().uextend(types::I64, xj);
    let product = b.ins().imul(piece, piece);
    let carried = b.ins().ishl_imm_u(last_low, 31);
    let high64 = b.ins().ushr_imm_u(product, 33);
    let high = b.ins().ireduce(types::I32, high64);
    let first = b.ins().bor(carried, high);
    frame.store(b, z, i, 0, first);
    let low64 = b.ins().ushr_imm_u(product, 1);
    let second = b.ins().ireduce(types::I32, low64);
    frame.store(b, z, i, 1, second);
    let next_low = b.ins().ireduce(types::I32, product);
    let next_j = b.ins().iadd_imm_s(j, 1);
    let next_i = b.ins().iadd_imm_s(i, 2);
    jump(b, header, &[next_j, next_i, next_low]);
    b.switch_to_block(exit);
}

/// The off-diagonal loop: `header(i, offset)` tests `i > 0`; the body loads `x[i - 1]`, runs
/// the inlined `mulAdd` loop and `addOne`, and jumps back with `i - 1`, `offset + 2`.
fn emit_off_diagonal(
    b: &mut FunctionBuilder,
    frame: &Frame,
    x: &IntArray,
    z: &IntArray,
    len: Value,
) {
    let one = b.ins().iconst(types::I32, 1);
    let (header, hp) = block_with_params(b, &[types::I32, types::I32]);
    jump(b, header, &[len, one]);

    b.switch_to_block(header);
    let (i, offset) = (hp[0], hp[1]);
    let zero = b.ins().iconst(types::I32, 0);
    let exit = loop_test(b, IntCC::SignedGreaterThan, i, zero);
    let t = frame.load(b, x, i, -1);
    let i_minus_1 = b.ins().iadd_imm_s(i, -1);
    let operands = mul_add::Operands {
        out: *z,
        input: *x,
        offset,
        len: i_minus_1,
    };
    mul_add::emit_check(b, frame, operands);
    let t = mul_add::emit_impl(b, frame, operands, t);
    let add_offset = b.ins().iadd_imm_s(offset, -1);
    emit_add_one(b, frame, z, add_offset, i, t);
    let next_i = b.ins().iadd_imm_s(i, -1);
    let next_offset = b.ins().iadd_imm_s(offset, 2);
    jump(b, header, &[next_i, next_offset]);
    b.switch_to_block(exit);
}

/// `addOne(a, offset, mlen, carry)` with its result unused (as in `implSquareToLen`); every
/// `return` continues after the call.
///
/// Loop shape: `header(mlen, o)` computes `mlen - 1` and tests it `>= 0`, then `o - 1 < 0`
/// leaves; the body loads, stores and re-loads `a[o - 1]` (`k = 0` on the decremented index)
/// and leaves when the element is non-zero, else jumps back with `mlen - 1`, `o - 1`.
fn emit_add_one(
    b: &mut FunctionBuilder,
    frame: &Frame,
    a: &IntArray,
    offset: Value,
    mlen: Value,
    carry: Value,
) {
    let done = b.create_block();
    // offset = a.length - 1 - mlen - offset;
    let last = b.ins().iadd_imm_s(a.length, -1);
    let minus_mlen = b.ins().isub(last, mlen);
    let o = b.ins().isub(minus_mlen, offset);
    // long t = (a[offset] & LONG_MASK) + (carry & LONG_MASK); a[offset] = (int)t;
    let element = frame.load(b, a, o, 0);
    let element_long = b.ins().uextend(types::I64, element);
    let carry_long = b.ins().uextend(types::I64, carry);
    let t = b.ins().iadd(element_long, carry_long);
    let t_int = b.ins().ireduce(types::I32, t);
    frame.store(b, a, o, 0, t_int);
    // if ((t >>> 32) == 0) return 0;
    let t_high = b.ins().ushr_imm_u(t, 32);
    let (header, hp) = block_with_params(b, &[types::I32, types::I32]);
    let args = [mlen, o].map(BlockArg::Value);
    b.ins().brif(t_high, header, &args, done, &[]);

    // while (--mlen >= 0) { if (--offset < 0) return 1; … }
    b.switch_to_block(header);
    let (m, cur) = (hp[0], hp[1]);
    let next_m = b.ins().iadd_imm_s(m, -1);
    let zero = b.ins().iconst(types::I32, 0);
    let more = b.ins().icmp(IntCC::SignedGreaterThanOrEqual, next_m, zero);
    let step = b.create_block();
    b.ins().brif(more, step, &[], done, &[]);
    b.switch_to_block(step);
    let next_o = b.ins().iadd_imm_s(cur, -1);
    let carry_out = b.ins().icmp(IntCC::SignedLessThan, next_o, zero);
    let body = b.create_block();
    b.ins().brif(carry_out, done, &[], body, &[]);
    b.switch_to_block(body);
    // a[offset]++; if (a[offset] != 0) return 0;
    let element = frame.load(b, a, next_o, 0);
    let incremented = b.ins().iadd_imm_s(element, 1);
    frame.store(b, a, next_o, 0, incremented);
    let reread = frame.load(b, a, next_o, 0);
    let back = [next_m, next_o].map(BlockArg::Value);
    b.ins().brif(reread, done, &[], header, &back);
    b.switch_to_block(done);
}

/// `primitiveLeftShift(a, len, 1)`.
///
/// Loop shape: `c = a[0]` before the loop; `header(i, c)` tests `i < len - 1`; the body loads
/// `a[i + 1]` (`k = 1`) and stores `a[i]`, then jumps back with `i + 1`. After the loop,
/// `a[len - 1] <<= 1` loads and stores `a[len - 1]`.
fn emit_left_shift_one(b: &mut FunctionBuilder, frame: &Frame, a: &IntArray, len: Value) {
    // if (len == 0 || n == 0) return;   (n == 1 here)
    let done = b.create_block();
    let shift = b.create_block();
    b.ins().brif(len, shift, &[], done, &[]);
    b.switch_to_block(shift);
    // for (int i=0, c=a[i], m=i+len-1; i < m; i++)
    let zero = b.ins().iconst(types::I32, 0);
    let c0 = frame.load(b, a, zero, 0);
    let m = b.ins().iadd_imm_s(len, -1); // i + len - 1 with i = 0 folded
    let (header, hp) = block_with_params(b, &[types::I32, types::I32]);
    jump(b, header, &[zero, c0]);

    b.switch_to_block(header);
    let (i, c) = (hp[0], hp[1]);
    let exit = loop_test(b, IntCC::SignedLessThan, i, m);
    let next_c = frame.load(b, a, i, 1);
    let up = b.ins().ishl_imm_u(c, 1);
    let down = b.ins().ushr_imm_u(next_c, 31);
    let merged = b.ins().bor(up, down);
    frame.store(b, a, i, 0, merged);
    let next_i = b.ins().iadd_imm_s(i, 1);
    jump(b, header, &[next_i, next_c]);

    // a[len-1] <<= n;
    b.switch_to_block(exit);
    let last = b.ins().iadd_imm_s(len, -1);
    let element = frame.load(b, a, last, 0);
    let shifted = b.ins().ishl_imm_u(element, 1);
    frame.store(b, a, last, 0, shifted);
    jump(b, done, &[]);
    b.switch_to_block(done);
}
