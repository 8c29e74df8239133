//! Checks that hold on every input: a constant index against a bound that is known, from its
//! definition, to exceed it.
//!
//! SHA-256's message schedule `W` is an `int[64]` accessed only at indices that are constants
//! once its loops are unrolled (`W[t-2]`, `W[t-7]`, `W[t-15]`, `W[t-16]`, `W[t]`, `W[i]`).
//! Their checks are `sext(c + k) <u bound` with `c + k` a constant and `bound` built from
//! constants (`max(64 - 0, 0)`). Neither [`super::merge`] (a store to `W` ends every segment)
//! nor [`super::predicate`] (the base is no induction variable) removes them; both are right
//! not to, since the check is no question about the loop. Such a check is proven once
//! `0 <= c + k` (after the 32-bit wrap of Java's `int` addition) and `c + k` is below the
//! lowest value [`value_range`] allows for the bound: it becomes a `jump`, on every path, with
//! nothing else changed.

use super::merge::replace_with_jump;
use super::recognize::{all_checks, iconst_value, value_range};
use cranelift_codegen::ir::{Function, Inst};

/// What the constant-index step did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConstantOutcome {
    /// Checks turned into jumps because they hold on every input.
    pub checks_removed: usize,
    /// The jumps that replaced removed checks (candidates for block fusion).
    pub new_jumps: Vec<Inst>,
    /// Comparisons of removed checks, to delete with what only they used.
    pub dead: Vec<Inst>,
}

/// Replaces every check of a constant index that its bound's range proves by a jump.
pub fn remove_constant_checks(func: &mut Function) -> ConstantOutcome {
    let mut out = ConstantOutcome::default();
    for check in all_checks(func) {
        let Some(base) = iconst_value(func, check.base) else {
            continue;
        };
        // The index is the 32-bit Java `int` `base + offset`, then sign-extended.
        let index = i64::from((base as i32).wrapping_add(check.offset as i32));
        let (lowest_bound, _) = value_range(func, check.bound);
        if index >= 0 && i128::from(index) < lowest_bound {
            out.new_jumps.push(replace_with_jump(func, &check));
            out.dead.push(check.cmp);
            out.checks_removed += 1;
        }
    }
    out
}
