//! The constraint models, solved with Pumpkin (a lazy-clause-generation CP solver, pure Rust).
//!
//! **Order.** One position variable `p_i ∈ [ancestors, n - 1 - descendants]` per free node,
//! all different, `p_a < p_b` on every edge.
//!
//! **Pressure at most `k`.** The pressure count changes only at the points right before and
//! right after each position `t`. A value is live right after `t` when its start (the
//! position of its defining node; of its first user, for a constant; the entry) is at most
//! `t` and its last use (the maximum of its users' positions; unbounded when live out) is
//! after `t`; right before `t` likewise with the start before `t` (at `t`, for a constant)
//! and the last use at or after `t`. Each such conjunction is one literal over two bound
//! predicates (`[start ≤ a]`, `[last ≥ b]`), the literals Pumpkin reasons with natively; only
//! values whose start or last use can fall either side of the point get one (the others are
//! live or dead there in every order). Per point, the literals plus the values certainly live
//! sum to at most `k` minus the idle values.
//!
//! **Length at most `L`.** One issue-cycle variable `s_i ∈ [head_i, L - tail_i]` per node,
//! `s_b ≥ s_a + latency` on every edge, at most `W` nodes per cycle (`cumulative`), tied to
//! the order: `p_i < p_j ⇒ s_i ≤ s_j`. The order sorted by position is then sorted by issue
//! cycle, and the in-order issue model issues every node no later than its `s_i` — so the
//! order's length is at most `L`. With the register budget, the pressure constraints above
//! hold as well (`k` = budget + idle).
//!
//! Minimising is a sequence of satisfiability questions from the proven lower bound upward:
//! `value ≤ bound?` — unsatisfiable raises the bound by one, satisfiable ends the search with
//! an optimum. The incumbent (an order given as the upper bound) guides the search as a warm
//! start.

use super::effort::{self, Polls, Stop};
use super::{BlockProblem, Bounded, Def, Status, closures};
use pumpkin_conflict_resolvers::resolvers::ResolutionResolver;
use pumpkin_core::Solver;
use pumpkin_core::branching::branchers::dynamic_brancher::DynamicBrancher;
use pumpkin_core::branching::branchers::warm_start::WarmStart;
use pumpkin_core::constraints::Constraint;
use pumpkin_core::predicate;
use pumpkin_core::predicates::Predicate;
use pumpkin_core::proof::ConstraintTag;
use pumpkin_core::results::{ProblemSolution, SatisfactionResult};
use pumpkin_core::variables::{DomainId, Literal, TransformableVariable};
use std::collections::HashMap;

/// What to minimise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    /// Peak pressure.
    Pressure,
    /// Length within the register budget.
    Length,
}

/// The answer to one satisfiability question.
enum Answer {
    /// An order meeting it.
    Found(Vec<u32>),
    /// None exists.
    Proven,
    /// The effort or the time ran out.
    Unknown,
}

/// Minimises `objective` between the proven `bound` and the incumbent's `upper` (reached by
/// `incumbent`) until `stop`, by bisection: each question "value ≤ k?" either improves the
/// incumbent, raises the bound, or (out of effort or time for its share) sends the next
/// question above `k`, where an order is easier to find.
pub fn minimise(
    problem: &BlockProblem,
    objective: Objective,
    bound: u32,
    upper: u32,
    incumbent: Vec<u32>,
    stop: Stop,
) -> Bounded {
    let (mut bound, mut best, mut order) = (bound, upper, incumbent);
    let mut steps = 0;
    // Questions at or below this value ran out of effort or time.
    let mut timed_out: Option<u32> = None;
    loop {
        let lo = timed_out.map_or(bound, |k| bound.max(k + 1));
        if lo >= best || stop.reached() {
            break;
        }
        let k = lo + (best - 1 - lo) / 2;
        // The last open question may take all the effort and time left; others half of it.
        let share = if k + 1 == best {
            stop
        } else {
            stop.share_of_rest(1, 2)
        };
        steps += 1;
        match ask(problem, objective, k, Some(&order), share) {
            Answer::Found(found) => {
                best = figure(problem, objective, &found);
                order = found;
            }
            Answer::Proven => bound = k + 1,
            Answer::Unknown => timed_out = Some(k),
        }
    }
    Bounded {
        value: Some(best),
        bound: bound.min(best),
        status: if bound >= best {
            Status::Optimal
        } else {
            Status::Gap
        },
        order,
        seconds: 0.0,
        steps,
    }
}

/// The shortest order within the register budget when no order within it is known yet: the
/// lengths from `bound` up to a horizon every legal order meets, until `stop`.
pub fn first_within_budget(problem: &BlockProblem, bound: u32, stop: Stop) -> Bounded {
    // Issuing one node per cycle, each after every latency before it has elapsed, is legal.
    let horizon: u32 = problem
        .latency
        .iter()
        .map(|&l| l + 1)
        .chain(problem.edges.iter().map(|e| e.2))
        .sum::<u32>()
        .max(bound);
    let mut bound = bound;
    let mut steps = 0;
    while bound <= horizon {
        steps += 1;
        match ask(problem, Objective::Length, bound, None, stop) {
            Answer::Found(order) => {
                let value = figure(problem, Objective::Length, &order);
                return Bounded {
                    value: Some(value),
                    bound: value,
                    status: Status::Optimal,
                    order,
                    seconds: 0.0,
                    steps,
                };
            }
            Answer::Proven => bound += 1,
            Answer::Unknown => {
                return Bounded {
                    value: None,
                    bound,
                    status: Status::Unknown,
                    order: Vec::new(),
                    seconds: 0.0,
                    steps,
                };
            }
        }
    }
    Bounded::infeasible(bound, steps)
}

/// The objective's figure for a legal order.
fn figure(problem: &BlockProblem, objective: Objective, order: &[u32]) -> u32 {
    match objective {
        Objective::Pressure => problem.pressure_of(order),
        Objective::Length => problem.length_of(order),
    }
}

/// Blocks above this many free nodes are not modelled: every question about them is answered
/// unknown at once. The pressure model grows faster than the block: MD5's 535-node loop body
/// builds in 0.6 s, SHA-256's 2,469-node block343 is not built after 10 s, and freeing the
/// part built takes 2 s more — past the time limit, with nothing to show for it.
pub const MAX_NODES: usize = 1024;

/// Is there an order with `objective ≤ k` (and, for the length, within the budget)?
/// An order the solver returns is checked: legal, and meeting the question, or it is not used.
fn ask(
    problem: &BlockProblem,
    objective: Objective,
    k: u32,
    incumbent: Option<&[u32]>,
    stop: Stop,
) -> Answer {
    if stop.reached() || problem.len() > MAX_NODES {
        return Answer::Unknown;
    }
    let mut model = Model::new(problem, stop);
    if stop.reached() {
        // The model may be incomplete.
        return Answer::Unknown;
    }
    // Building a large block's model takes effort too: it stops at `stop`.
    let feasible = match objective {
        Objective::Pressure => model.pressure_at_most(k),
        Objective::Length => match model.pressure_at_most(problem.register_budget + problem.idle) {
            Some(true) => model.length_at_most(k),
            other => other,
        },
    };
    match feasible {
        None => return Answer::Unknown,
        Some(false) => return Answer::Proven,
        Some(true) => {}
    }
    let mut brancher = DynamicBrancher::new(Vec::new());
    if let Some(order) = incumbent {
        let mut vars = Vec::new();
        let mut vals = Vec::new();
        for (at, &node) in order.iter().enumerate() {
            vars.push(model.position[node as usize]);
            vals.push(at as i32);
        }
        if let Some(issue) = &model.issue {
            let cycles = problem.issue_cycles(order);
            for (node, &cycle) in cycles.iter().enumerate() {
                vars.push(issue[node]);
                vals.push(cycle as i32);
            }
        }
        brancher.add_brancher(Box::new(WarmStart::new(&vars, &vals)));
    }
    brancher.add_brancher(Box::new(model.solver.default_brancher()));
    let mut termination = Polls::new(stop, per_poll(model.size));
    let mut resolver = ResolutionResolver::default();
    let position = model.position.clone();
    let result = model
        .solver
        .satisfy(&mut brancher, &mut termination, &mut resolver);
    let found = match result {
        SatisfactionResult::Satisfiable(sat) => {
            let solution = sat.solution();
            let mut order: Vec<u32> = (0..problem.len() as u32).collect();
            order.sort_by_key(|&i| solution.get_integer_value(position[i as usize]));
            Some(order)
        }
        SatisfactionResult::Unsatisfiable(..) => return Answer::Proven,
        SatisfactionResult::Unknown(..) => return Answer::Unknown,
    };
    match found {
        Some(order)
            if problem.is_legal(&order)
                && figure(problem, objective, &order) <= k
                && (objective == Objective::Pressure
                    || problem.within_budget(problem.pressure_of(&order))) =>
        {
            Answer::Found(order)
        }
        // A solver answer that does not check out is not an answer.
        _ => Answer::Unknown,
    }
}

/// Effort units of one poll of the solver (one decision or conflict) on a model of `size`.
fn per_poll(size: u64) -> u64 {
    (size / 16).max(1)
}

/// The predicate `¬[var ≤ b]` (`upper`) or `¬[var ≥ b]`.
fn negated((var, upper, b): (DomainId, bool, i32)) -> Predicate {
    if upper {
        predicate!(var >= b + 1)
    } else {
        predicate!(var <= b - 1)
    }
}

/// One satisfiability question's model.
struct Model<'a> {
    problem: &'a BlockProblem,
    solver: Solver,
    tag: ConstraintTag,
    /// Per node: its position.
    position: Vec<DomainId>,
    /// Per node: the bounds of its position.
    range: Vec<(i32, i32)>,
    /// Per node: its ancestors and descendants.
    anc: Vec<super::BitSet>,
    desc: Vec<super::BitSet>,
    /// Per node: its issue cycle (length questions only).
    issue: Option<Vec<DomainId>>,
    /// Literals of bound predicates, by (variable, is upper bound, bound).
    predicates: HashMap<(DomainId, bool, i32), Literal>,
    /// When the question's effort or time runs out (model building included).
    stop: Stop,
    /// Constraints and clauses posted, each counted by the variables or literals it reads.
    size: u64,
}

/// A value's start or last use: a position variable and its bounds, or unbounded.
#[derive(Clone, Copy)]
enum End {
    /// Before every position (the entry).
    Entry,
    /// After every position (live out).
    Never,
    /// A variable with bounds.
    At(DomainId, i32, i32),
}

impl<'a> Model<'a> {
    fn new(problem: &'a BlockProblem, stop: Stop) -> Model<'a> {
        let mut solver = Solver::default();
        let tag = solver.new_constraint_tag();
        let n = problem.len();
        let (anc, desc) = closures(problem);
        let range: Vec<(i32, i32)> = (0..n)
            .map(|i| (anc[i].count() as i32, (n - 1 - desc[i].count()) as i32))
            .collect();
        let position: Vec<DomainId> = range
            .iter()
            .map(|&(lo, hi)| solver.new_bounded_integer(lo, hi))
            .collect();
        // All positions differ. Pumpkin's `all_different` posts a `≠` for each of the n²/2
        // pairs (2,469 nodes: 3 M constraints, 7 s before any search); a pair one of whose
        // nodes precedes the other is kept apart by the precedences already, and a pair whose
        // position ranges do not overlap cannot meet, so only the rest get one, and building
        // stops at `stop` ([`ask`] then answers unknown); each pair looked at costs a unit.
        let mut posted = 2 * problem.edges.len() as u64;
        for i in 0..n {
            if stop.reached() {
                break;
            }
            effort::spend((n - i) as u64);
            for j in i + 1..n {
                let apart = range[i].1 < range[j].0 || range[j].1 < range[i].0;
                if apart || anc[j].contains(i) || desc[j].contains(i) {
                    continue;
                }
                posted += 2;
                solver
                    .add_constraint(pumpkin_constraints::binary_not_equals(
                        position[i],
                        position[j],
                        tag,
                    ))
                    .post();
            }
        }
        for &(a, b, _) in &problem.edges {
            solver
                .add_constraint(pumpkin_constraints::binary_less_than(
                    position[a as usize],
                    position[b as usize],
                    tag,
                ))
                .post();
        }
        Model {
            problem,
            solver,
            tag,
            position,
            range,
            anc,
            desc,
            issue: None,
            predicates: HashMap::new(),
            stop,
            size: posted,
        }
    }

    /// The literal `[var ≤ bound]` (`upper`) or `[var ≥ bound]`.
    fn bound_literal(&mut self, var: DomainId, upper: bool, bound: i32) -> Literal {
        let tag = self.tag;
        let solver = &mut self.solver;
        *self
            .predicates
            .entry((var, upper, bound))
            .or_insert_with(|| {
                let p = if upper {
                    predicate!(var <= bound)
                } else {
                    predicate!(var >= bound)
                };
                solver.new_literal_for_predicate(p, tag)
            })
    }

    /// A variable equal to the minimum (`min`) or maximum of the users' positions.
    fn extreme(&mut self, users: &[u32], min: bool) -> End {
        let bounds = users.iter().map(|&u| self.range[u as usize]);
        let (lo, hi) = if min {
            (
                bounds.clone().map(|b| b.0).min().unwrap_or(0),
                bounds.map(|b| b.1).min().unwrap_or(0),
            )
        } else {
            (
                bounds.clone().map(|b| b.0).max().unwrap_or(0),
                bounds.map(|b| b.1).max().unwrap_or(0),
            )
        };
        if let [only] = users {
            return End::At(self.position[*only as usize], lo, hi);
        }
        let var = self.solver.new_bounded_integer(lo, hi);
        self.size += users.len() as u64 + 1;
        let array: Vec<DomainId> = users.iter().map(|&u| self.position[u as usize]).collect();
        if min {
            self.post(pumpkin_constraints::minimum(array, var, self.tag));
        } else {
            self.post(pumpkin_constraints::maximum(array, var, self.tag));
        }
        End::At(var, lo, hi)
    }

    /// Posts "pressure at most `k`"; false when that is impossible before any search, `None`
    /// when the stop was reached while building.
    fn pressure_at_most(&mut self, k: u32) -> Option<bool> {
        let problem = self.problem;
        if problem.entry_pressure() > k {
            return Some(false);
        }
        let cap = i64::from(k) - i64::from(problem.idle);
        let n = problem.len();
        // Per value: start and last use.
        let mut lives: Vec<(End, End, bool)> = Vec::with_capacity(problem.values.len());
        for v in &problem.values {
            let start = match v.def {
                Def::Entry => End::Entry,
                Def::Node(d) => {
                    let (lo, hi) = self.range[d as usize];
                    End::At(self.position[d as usize], lo, hi)
                }
                Def::FirstUse => self.extreme(&v.users, true),
            };
            let last = if v.live_out || v.users.is_empty() {
                End::Never
            } else {
                self.extreme(&v.users, false)
            };
            lives.push((start, last, v.def == Def::FirstUse));
        }
        let has_constants = lives.iter().any(|l| l.2);
        for t in 0..n as i32 {
            if self.stop.reached() {
                return None;
            }
            effort::spend(lives.len() as u64);
            // (start ≤ a, last ≥ b) for the point right after t, and right before t.
            let mut points = vec![(t, t + 1, false)];
            if has_constants {
                points.push((t - 1, t, true));
            }
            for (a, b, before) in points {
                let mut sure = 0i64;
                let mut lits = Vec::new();
                for &(start, last, constant) in &lives {
                    // A constant starts at its first user: right before t it counts when its
                    // first user is at t at the latest.
                    let a = if before && constant { t } else { a };
                    let s = match start {
                        End::Entry => Some(None),
                        End::Never => None,
                        End::At(_, lo, _) if lo > a => None,
                        End::At(_, _, hi) if hi <= a => Some(None),
                        End::At(var, _, _) => Some(Some((var, true, a))),
                    };
                    let e = match last {
                        End::Never => Some(None),
                        End::Entry => None,
                        End::At(_, _, hi) if hi < b => None,
                        End::At(_, lo, _) if lo >= b => Some(None),
                        End::At(var, _, _) => Some(Some((var, false, b))),
                    };
                    match (s, e) {
                        (Some(None), Some(None)) => sure += 1,
                        (Some(Some(p)), Some(None)) | (Some(None), Some(Some(p))) => {
                            lits.push(self.bound_literal(p.0, p.1, p.2));
                        }
                        (Some(Some(p)), Some(Some(q))) => {
                            let both = self.solver.new_literal();
                            // both ≥ [p] ∧ [q]: an upper bound on the sum needs only this side.
                            let clause = [negated(p), negated(q), both.get_true_predicate()];
                            self.solver.add_clause(clause, self.tag);
                            self.size += 3;
                            lits.push(both);
                        }
                        _ => {}
                    }
                }
                let room = cap - sure;
                if room < 0 {
                    return Some(false);
                }
                if (lits.len() as i64) > room {
                    self.size += lits.len() as u64;
                    let weights = vec![1i32; lits.len()];
                    self.post(pumpkin_constraints::boolean_less_than_or_equals(
                        weights,
                        lits,
                        room as i32,
                        self.tag,
                    ));
                }
            }
        }
        Some(true)
    }

    /// Posts "length at most `l`"; false when that is impossible before any search, `None`
    /// when the stop was reached while building.
    fn length_at_most(&mut self, l: u32) -> Option<bool> {
        let problem = self.problem;
        let n = problem.len();
        let (head, tail) = super::head_and_tail(problem);
        let mut window = Vec::with_capacity(n);
        for i in 0..n {
            if head[i] + tail[i] > l {
                return Some(false);
            }
            window.push((head[i] as i32, (l - tail[i]) as i32));
        }
        let issue: Vec<DomainId> = window
            .iter()
            .map(|&(lo, hi)| self.solver.new_bounded_integer(lo, hi))
            .collect();
        let tag = self.tag;
        self.size += 2 * problem.edges.len() as u64;
        for &(a, b, lat) in &problem.edges {
            self.post(pumpkin_constraints::binary_less_than_or_equals(
                issue[a as usize].offset(lat as i32),
                issue[b as usize].scaled(1),
                tag,
            ));
        }
        if n as u32 > problem.issue_width {
            self.size += n as u64;
            self.post(pumpkin_constraints::cumulative(
                issue.clone(),
                vec![1; n],
                vec![1; n],
                problem.issue_width as i32,
                tag,
            ));
        }
        // The order sorted by position is sorted by issue cycle.
        for i in 0..n {
            if self.stop.reached() {
                return None;
            }
            effort::spend((n - i) as u64);
            for j in i + 1..n {
                if self.anc[j].contains(i) || self.desc[j].contains(i) {
                    continue; // ordered by an edge path, latencies are not negative
                }
                let (pi, pj) = (self.position[i], self.position[j]);
                let (si, sj) = (issue[i], issue[j]);
                let ((pil, pih), (pjl, pjh)) = (self.range[i], self.range[j]);
                let ((sil, sih), (sjl, sjh)) = (window[i], window[j]);
                self.size += 4;
                if sih < sjl || pih < pjl {
                    // i issues strictly earlier, or comes first in every order.
                    self.post_le(pi, pj, true);
                    self.post_le(si, sj, false);
                } else if sjh < sil || pjh < pil {
                    self.post_le(pj, pi, true);
                    self.post_le(sj, si, false);
                } else {
                    let first = self.solver.new_literal();
                    self.solver
                        .add_constraint(pumpkin_constraints::binary_less_than(pi, pj, tag))
                        .reify(first);
                    self.solver
                        .add_constraint(pumpkin_constraints::binary_less_than_or_equals(
                            si, sj, tag,
                        ))
                        .implied_by(first);
                    self.solver
                        .add_constraint(pumpkin_constraints::binary_less_than_or_equals(
                            sj, si, tag,
                        ))
                        .implied_by(!first);
                }
            }
        }
        self.issue = Some(issue);
        Some(true)
    }

    /// Posts `constraint` unconditionally.
    fn post(&mut self, constraint: impl Constraint) {
        self.solver.add_constraint(constraint).post();
    }

    /// Posts `a < b` (`strict`) or `a ≤ b`.
    fn post_le(&mut self, a: DomainId, b: DomainId, strict: bool) {
        if strict {
            self.post(pumpkin_constraints::binary_less_than(a, b, self.tag));
        } else {
            self.post(pumpkin_constraints::binary_less_than_or_equals(
                a, b, self.tag,
            ));
        }
    }
}
