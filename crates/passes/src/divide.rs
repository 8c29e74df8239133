//! Unsigned division and remainder by a constant as a multiplication: what Cranelift's e-graph
//! does to `udiv`/`urem` of an `i32` or `i64` by a non-zero constant, which code generation
//! alone leaves as a hardware divide (tens of cycles on every modelled core, and a possible
//! trap that pins the instruction in its block's order).
//!
//! For a divisor `d` that is not a power of two, with `N` the width and `l = ⌈log₂ d⌉`:
//! - where some shift `s ≤ l` has `m = ⌈2^(N+s) / d⌉ < 2^N` and `m·d − 2^(N+s) ≤ 2^s`,
//!   `x / d = umulhi(x, m) >> s` for every `x < 2^N` (the error `x·(m·d − 2^(N+s)) / d·2^(N+s)`
//!   stays below `1/d`, so it never reaches the next multiple); the smallest such `s` is used;
//! - otherwise (the multiplier needs `N + 1` bits) `m' = ⌊2^N·(2^l − d) / d⌋ + 1` and
//!   `t = umulhi(x, m')`, `x / d = (t + ((x − t) >> 1)) >> (l − 1)` (Granlund and Montgomery,
//!   "Division by invariant integers using multiplication", PLDI 1994, figure 4.1).
//!
//! A power of two becomes a shift, 1 the dividend itself. A remainder is `x − (x / d)·d` with
//! the quotient computed so, a power of two's too (not a mask). A divisor of zero (the division
//! traps) and other types are left alone.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{Function, InstBuilder, InstructionData, Opcode, Type, Value, types};

/// How `x / d` is computed for one divisor (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quotient {
    /// `x` itself (`d = 1`).
    Dividend,
    /// `x >> k` (`d = 2^k`).
    Shift(u32),
    /// `umulhi(x, magic) >> shift`.
    MultiplyHigh {
        /// The multiplier, below `2^N`.
        magic: u64,
        /// The shift after taking the high half.
        shift: u32,
    },
    /// `t = umulhi(x, magic)`, `(t + ((x − t) >> 1)) >> shift`.
    MultiplyHighAdd {
        /// The low `N` bits of the `N + 1`-bit multiplier.
        magic: u64,
        /// The final shift (`l − 1`).
        shift: u32,
    },
}

/// How an `bits`-bit unsigned `x / d` is computed by multiplication (`bits` 32 or 64, `d ≠ 0`).
pub fn quotient(d: u64, bits: u32) -> Quotient {
    debug_assert!(d != 0 && (bits == 32 || bits == 64) && (bits == 64 || d <= u32::MAX as u64));
    if d == 1 {
        return Quotient::Dividend;
    }
    if d.is_power_of_two() {
        return Quotient::Shift(d.trailing_zeros());
    }
    let n = bits;
    let l = 64 - (d - 1).leading_zeros(); // ⌈log₂ d⌉, d ≥ 3
    let d128 = d as u128;
    // 2^(N+s) must fit in 128 bits (and the shift in the width).
    for s in 0..=l.min(127 - n).min(n - 1) {
        let two = 1u128 << (n + s);
        let m = two.div_ceil(d128);
        if m < (1u128 << n) && m * d128 - two <= 1u128 << s {
            return Quotient::MultiplyHigh {
                magic: m as u64,
                shift: s,
            };
        }
    }
    let m = ((1u128 << n) * ((1u128 << l) - d128)) / d128 + 1;
    Quotient::MultiplyHighAdd {
        magic: m as u64,
        shift: l - 1,
    }
}

/// `x / d` by [`quotient`]'s method, computed in Rust (what the rewritten IR computes).
pub fn divide_by_method(x: u64, d: u64, bits: u32) -> u64 {
    let high = |a: u64, b: u64| ((a as u128 * b as u128) >> bits) as u64;
    match quotient(d, bits) {
        Quotient::Dividend => x,
        Quotient::Shift(k) => x >> k,
        Quotient::MultiplyHigh { magic, shift } => high(x, magic) >> shift,
        Quotient::MultiplyHighAdd { magic, shift } => {
            let t = high(x, magic);
            // `t ≤ x`, and `t + (x − t) / 2 < 2^N`: no wrap at width N.
            (t + ((x - t) >> 1)) >> shift
        }
    }
}

/// Rewrites every `udiv`/`urem` of an `i32` or `i64` by a non-zero constant in `func`;
/// returns how many. The replaced instructions' results become aliases of the new values.
pub fn run(func: &mut Function) -> usize {
    let mut rewritten = 0;
    let mut cursor = FuncCursor::new(func);
    while cursor.next_block().is_some() {
        while let Some(inst) = cursor.next_inst() {
            let InstructionData::Binary {
                opcode: opcode @ (Opcode::Udiv | Opcode::Urem),
                args: [x, y],
            } = cursor.func.dfg.insts[inst]
            else {
                continue;
            };
            let ty = cursor.func.dfg.value_type(x);
            if ty != types::I32 && ty != types::I64 {
                continue;
            }
            let Some(d) = constant(cursor.func, y, ty) else {
                continue;
            };
            let srcloc = cursor.func.srcloc(inst);
            cursor.set_srcloc(srcloc);
            let q = emit_quotient(&mut cursor, x, d, ty);
            let result = match opcode {
                Opcode::Udiv => q,
                _ => {
                    let divisor = cursor.ins().iconst(ty, d as i64);
                    let product = cursor.ins().imul(q, divisor);
                    cursor.ins().isub(x, product)
                }
            };
            let old = cursor.func.dfg.first_result(inst);
            cursor.remove_inst_and_step_back();
            cursor.func.dfg.clear_results(inst);
            cursor.func.dfg.change_to_alias(old, result);
            rewritten += 1;
        }
    }
    rewritten
}

/// The non-zero value of `v` as an unsigned `ty` when it is an `iconst`.
fn constant(func: &Function, v: Value, ty: Type) -> Option<u64> {
    let signed = crate::bce::recognize::iconst_value(func, v)?;
    let d = if ty == types::I32 {
        signed as u64 & u32::MAX as u64
    } else {
        signed as u64
    };
    (d != 0).then_some(d)
}

/// Inserts `x / d` before the cursor's instruction.
fn emit_quotient(cursor: &mut FuncCursor, x: Value, d: u64, ty: Type) -> Value {
    match quotient(d, ty.bits()) {
        Quotient::Dividend => x,
        Quotient::Shift(k) => cursor.ins().ushr_imm_u(x, k as i64),
        Quotient::MultiplyHigh { magic, shift } => {
            let m = cursor.ins().iconst(ty, magic as i64);
            let high = cursor.ins().umulhi(x, m);
            if shift == 0 {
                high
            } else {
                cursor.ins().ushr_imm_u(high, shift as i64)
            }
        }
        Quotient::MultiplyHighAdd { magic, shift } => {
            let m = cursor.ins().iconst(ty, magic as i64);
            let t = cursor.ins().umulhi(x, m);
            let rest = cursor.ins().isub(x, t);
            let half = cursor.ins().ushr_imm_u(rest, 1);
            let sum = cursor.ins().iadd(t, half);
            cursor.ins().ushr_imm_u(sum, shift as i64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Dividends that sit on and next to multiples of `d`, the extremes and random ones.
    fn dividends(d: u64, bits: u32, rng: &mut StdRng) -> Vec<u64> {
        let max = if bits == 32 {
            u32::MAX as u64
        } else {
            u64::MAX
        };
        let next = d.saturating_add(1).min(max);
        let mut xs = vec![0, 1, d - 1, d, next, max, max - 1, max / 2, max / 2 + 1];
        for _ in 0..64 {
            let k = rng.random_range(0..=max / d);
            let x = k * d;
            xs.extend([x, x.wrapping_sub(1) & max, x.saturating_add(d - 1).min(max)]);
            xs.push(rng.random::<u64>() & max);
        }
        xs.push((max / d) * d);
        xs
    }

    fn check(d: u64, bits: u32, rng: &mut StdRng) {
        for x in dividends(d, bits, rng) {
            assert_eq!(
                divide_by_method(x, d, bits),
                x / d,
                "{x} / {d} at {bits} bits by {:?}",
                quotient(d, bits)
            );
        }
    }

    #[test]
    fn every_method_divides_exactly() {
        let mut rng = StdRng::seed_from_u64(7);
        for bits in [32, 64] {
            let max = if bits == 32 {
                u32::MAX as u64
            } else {
                u64::MAX
            };
            for d in 1..=3000 {
                check(d, bits, &mut rng);
            }
            for k in 2..bits {
                for d in [(1u64 << k) - 1, (1 << k) + 1, 1 << k] {
                    check(d, bits, &mut rng);
                }
            }
            for d in [
                max,
                max - 1,
                max / 2,
                max / 3,
                max / 7,
                641,
                6_700_417,
                1_000_000_007,
            ] {
                check(d.min(max), bits, &mut rng);
            }
            for _ in 0..2000 {
                let d = (rng.random::<u64>() & max) >> rng.random_range(0..bits);
                if d != 0 {
                    check(d, bits, &mut rng);
                }
            }
        }
    }

    #[test]
    fn both_multiplier_forms_occur() {
        assert_eq!(
            quotient(10, 32),
            Quotient::MultiplyHigh {
                magic: 0xCCCC_CCCD,
                shift: 3
            }
        );
        assert!(matches!(quotient(7, 32), Quotient::MultiplyHighAdd { .. }));
        assert_eq!(quotient(64, 64), Quotient::Shift(6));
        assert_eq!(quotient(1, 32), Quotient::Dividend);
    }
}
