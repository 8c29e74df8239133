//! Guards that a counting-down loop's induction variable already answers.
//!
//! Java code re-checks an argument inside a loop that its own bounds already pin. squareToLen's
//! outer loop calls `mulAdd(z, x, offset, i - 1, t)` for `i = len, len - 1, …, 1`, and
//! `mulAdd`'s argument check `len > in.length` becomes, inlined, `i - 1 > x.length` in every
//! iteration — although the entry checked `len <= x.length` and `i` only counts down from
//! `len`. The check keeps `x.length` live through the whole nest around the hot loop, where
//! registers are scarcest. This pass proves such comparisons from three kinds of fact and
//! replaces their branch by a `jump`:
//!
//! * **Edge facts.** On the edge `brif (icmp cc l, r), T, F → T` the comparison holds, on the
//!   edge to `F` its negation; a block whose only predecessor is such an edge inherits the
//!   fact, and so does every block it dominates (SSA values never change, so a fact about
//!   them stays true where the edge dominates).
//! * **Down-counting variables.** A block parameter `p` (32-bit) every incoming value of which
//!   is either a start value `e` or `p + c` with a constant `c <= 0`, where the facts on that
//!   edge bound `p` below by `i32::MIN - c` (so `p + c` does not wrap; in a top-tested loop the
//!   header's `p > 0` dominates the latch). By induction every value of `p` is `<= max(e)`.
//! * **Offsets.** `p + k` with a constant `k <= 0` is `<= p` where facts bound `p` below by
//!   `i32::MIN - k` (no wrap).
//!
//! So `icmp sgt (p + k), b` is false where every start value `e` of `p` satisfies `e <= b` by a
//! fact that holds there (`sle` true; `slt b, p + k` false; `sge b, p + k` true). Only signed
//! 32-bit comparisons feeding a `brif` are looked at; every proof is exact, none assumes the
//! value ranges of Java arrays. Nothing else changes, and a function without such a guard keeps
//! its IR exactly.

use crate::bce::predicate::{edge_args, resolve_copy};
use crate::bce::recognize::{iconst_value, split_constant};
use crate::edges::{any_brif_on_signed_i32_compare, brif};
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Block, BlockArg, Function, Inst, InstBuilder, InstructionData, Value, ValueDef,
    condcodes::{CondCode, IntCC},
    types,
};

/// How deep the search for a fact follows copies and induction variables.
const COPY_FUEL: u32 = 32;

/// `lo <= hi + slack` (signed, 32-bit), with `None` standing for a constant side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fact {
    lo: Term,
    hi: Term,
    slack: i64,
}

/// One side of a comparison: a value (after copies are resolved) or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Term {
    Value(Value),
    Const(i64),
}

/// The proof context: the function's CFG and dominator tree.
struct Prover<'a> {
    func: &'a Function,
    cfg: &'a ControlFlowGraph,
    domtree: &'a DominatorTree,
}

impl Prover<'_> {
    fn term(&self, v: Value) -> Term {
        let v = resolve_copy(self.func, self.cfg, v, COPY_FUEL);
        match iconst_value(self.func, v) {
            Some(k) => Term::Const(k),
            None => Term::Value(v),
        }
    }

    /// The fact that `cond` (an `icmp` result) being `holds` establishes, if it is a signed
    /// 32-bit comparison.
    fn fact_of(&self, cond: Value, holds: bool) -> Option<Fact> {
        let dfg = &self.func.dfg;
        let inst = dfg.value_def(dfg.resolve_aliases(cond)).inst()?;
        let InstructionData::IntCompare { cond: cc, args, .. } = dfg.insts[inst] else {
            return None;
        };
        if dfg.value_type(args[0]) != types::I32 {
            return None;
        }
        let cc = if holds { cc } else { cc.complement() };
        let [l, r] = args.map(|v| self.term(v));
        let (lo, hi, slack) = match cc {
            IntCC::SignedLessThanOrEqual => (l, r, 0),
            IntCC::SignedLessThan => (l, r, -1),
            IntCC::SignedGreaterThanOrEqual => (r, l, 0),
            IntCC::SignedGreaterThan => (r, l, -1),
            _ => return None,
        };
        Some(Fact { lo, hi, slack })
    }

    /// The facts of the edge from `branch` to `to` (none when both arms lead to `to`).
    fn edge_fact(&self, branch: Inst, to: Block) -> Option<Fact> {
        let dfg = &self.func.dfg;
        let (arg, [t, f]) = brif(self.func, branch)?;
        let (t, f) = (t.block(&dfg.value_lists), f.block(&dfg.value_lists));
        match (t == to, f == to) {
            (true, false) => self.fact_of(arg, true),
            (false, true) => self.fact_of(arg, false),
            _ => None,
        }
    }

    /// Every edge fact that holds at the start of `block`: those of the single-predecessor
    /// blocks on its dominator path.
    fn facts_at(&self, block: Block) -> Vec<Fact> {
        let mut facts = Vec::new();
        let mut cur = Some(block);
        while let Some(b) = cur {
            let mut preds = self.cfg.pred_iter(b);
            if let (Some(pred), None) = (preds.next(), preds.next())
                && let Some(fact) = self.edge_fact(pred.inst, b)
            {
                facts.push(fact);
            }
            cur = self.domtree.idom(b);
        }
        facts
    }

    /// The facts that hold on the edge from `branch` to `to`.
    fn facts_on_edge(&self, branch: Inst, to: Block) -> Vec<Fact> {
        let mut facts = self
            .func
            .layout
            .inst_block(branch)
            .map(|b| self.facts_at(b))
            .unwrap_or_default();
        facts.extend(self.edge_fact(branch, to));
        facts
    }

    /// The lowest value `facts` allow for `t`.
    fn lower_bound(t: Term, facts: &[Fact]) -> Option<i64> {
        if let Term::Const(k) = t {
            return Some(k);
        }
        facts
            .iter()
            .filter_map(|f| match f.lo {
                Term::Const(k) if f.hi == t => k.checked_sub(f.slack),
                _ => None,
            })
            .max()
    }

    /// Whether `a <= b` follows from `facts` directly.
    fn le_by_facts(a: Term, b: Term, facts: &[Fact]) -> bool {
        a == b
            || matches!((a, b), (Term::Const(x), Term::Const(y)) if x <= y)
            || facts.iter().any(|f| f.lo == a && f.hi == b && f.slack <= 0)
    }

    /// Whether `p + k` (32-bit, `k <= 0`) cannot wrap where `facts` hold: `p >= i32::MIN - k`.
    fn no_wrap(p: Term, k: i64, facts: &[Fact]) -> bool {
        k == 0 || Self::lower_bound(p, facts).is_some_and(|lo| lo + k >= i64::from(i32::MIN))
    }

    /// The start values of `p` if it is a down-counting variable (module documentation).
    fn down_counting_starts(&self, p: Value) -> Option<Vec<Term>> {
        let ValueDef::Param(header, index) = self.func.dfg.value_def(p) else {
            return None;
        };
        if self.func.dfg.value_type(p) != types::I32
            || Some(header) == self.func.layout.entry_block()
        {
            return None;
        }
        let mut starts = Vec::new();
        for pred in self.cfg.pred_iter(header) {
            // One edge per branch: `edge_args` reads the first edge to the header only.
            let dfg = &self.func.dfg;
            let edges = dfg.insts[pred.inst]
                .branch_destination(&dfg.jump_tables, &dfg.exception_tables)
                .iter()
                .filter(|c| c.block(&dfg.value_lists) == header)
                .count();
            if edges != 1 {
                return None;
            }
            let arg = *edge_args(self.func, pred.inst, header)?.get(index)?;
            let (base, step) = split_constant(self.func, arg);
            if (-(1 << 30)..=0).contains(&step)
                && resolve_copy(self.func, self.cfg, base, COPY_FUEL) == p
            {
                // `p + step` on this edge: exact (and `<= p`) when `p` is bounded below there.
                if !Self::no_wrap(Term::Value(p), step, &self.facts_on_edge(pred.inst, header)) {
                    return None;
                }
                continue;
            }
            starts.push(self.term(arg));
        }
        (!starts.is_empty()).then_some(starts)
    }

    /// Whether `a <= b` (signed 32-bit) holds at the start of `block`.
    fn proves_le(&self, a: Value, b: Value, block: Block) -> bool {
        let facts = self.facts_at(block);
        let (ta, tb) = (self.term(a), self.term(b));
        if Self::le_by_facts(ta, tb, &facts) {
            return true;
        }
        // `a = p + k`, `k <= 0`, `p` counting down from starts each `<= b`.
        let (base, k) = split_constant(self.func, a);
        let k = if self.func.dfg.value_type(a) == types::I32 {
            k
        } else {
            return false;
        };
        if k > 0 {
            return false;
        }
        let p = resolve_copy(self.func, self.cfg, base, COPY_FUEL);
        if k < -(1 << 30) || !Self::no_wrap(Term::Value(p), k, &facts) {
            return false;
        }
        let Some(starts) = self.down_counting_starts(p) else {
            return false;
        };
        starts.iter().all(|&e| Self::le_by_facts(e, tb, &facts))
    }

    /// The known outcome of `brif`'s condition at its block, if there is one (only a
    /// [`brif_on_signed_i32_compare`] has one).
    fn decide(&self, branch: Inst) -> Option<bool> {
        let dfg = &self.func.dfg;
        let (arg, _) = brif(self.func, branch)?;
        let cmp = dfg.value_def(dfg.resolve_aliases(arg)).inst()?;
        let InstructionData::IntCompare { cond, args, .. } = dfg.insts[cmp] else {
            return None;
        };
        if dfg.value_type(args[0]) != types::I32 {
            return None;
        }
        let block = self.func.layout.inst_block(branch)?;
        let [l, r] = args;
        match cond {
            IntCC::SignedGreaterThan if self.proves_le(l, r, block) => Some(false),
            IntCC::SignedLessThanOrEqual if self.proves_le(l, r, block) => Some(true),
            IntCC::SignedLessThan if self.proves_le(r, l, block) => Some(false),
            IntCC::SignedGreaterThanOrEqual if self.proves_le(r, l, block) => Some(true),
            _ => None,
        }
    }
}

/// Replaces each `brif` whose signed comparison the facts above decide by a `jump` to the arm
/// it always takes. Returns the number of branches replaced.
pub fn remove_implied_guards(func: &mut Function) -> usize {
    // Only a `brif` on a signed 32-bit comparison can be decided: without one, the analyses
    // are not needed.
    if !any_brif_on_signed_i32_compare(func) {
        return 0;
    }
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let decided: Vec<(Inst, bool)> = {
        let prover = Prover {
            func,
            cfg: &cfg,
            domtree: &domtree,
        };
        func.layout
            .blocks()
            .filter(|&b| domtree.is_reachable(b))
            .filter_map(|b| func.layout.last_inst(b))
            .filter_map(|branch| prover.decide(branch).map(|taken| (branch, taken)))
            .collect()
    };
    for &(branch, taken) in &decided {
        let dfg = &func.dfg;
        let Some((_, [t, f])) = brif(func, branch) else {
            continue;
        };
        let call = if taken { t } else { f };
        let target = call.block(&dfg.value_lists);
        let args: Vec<BlockArg> = call.args(&dfg.value_lists).collect();
        let Some(block) = func.layout.inst_block(branch) else {
            continue;
        };
        func.layout.remove_inst(branch);
        FuncCursor::new(func)
            .at_bottom(block)
            .ins()
            .jump(target, &args);
    }
    if !decided.is_empty() {
        crate::rewrite::remove_dead_pure_insts(func);
    }
    decided.len()
}
