//! Exact in-block schedules: the lowest peak register pressure any legal order reaches, and the
//! shortest schedule within the target's register budget, each proven optimal or reported
//! with the gap to a proven lower bound.
//!
//! The problem is the one the heuristic strategies face, on the same [`DepDag`], latencies and
//! pressure count ([`BlockProblem::from_view`]):
//!
//! * **Order space.** Every topological order of the block's *free* nodes. Integer constants
//!   are not free: the driver places each right before its first user, for every strategy
//!   (`driver::is_constant`), so they are part of the pressure count but not of the choice.
//! * **Pressure** is [`PressureTracker`](super::pressure::PressureTracker)'s count, exactly:
//!   values live at the block's entry (live-ins and used parameters, the idle ones included),
//!   a result live from its definition to its last use in the block (or to the end when live
//!   out), a constant from just before its first user to its last use. The peak is the
//!   largest count at the entry, right before each free node (its constants placed) and right
//!   after it. Every value counts as one: one register class, as the heuristics count.
//! * **Length** is the driver's in-order issue model: the next node issues when its operands
//!   are ready (edge latencies) and the cycle has an issue slot left (the model's issue
//!   width); a constant costs neither a slot nor latency, as in the driver. The length is the
//!   cycle by which every node's own latency has elapsed.
//! * **Budget.** A schedule is *within budget* when its working set — peak pressure minus the
//!   values idle through the block, which the allocator can keep in a spill slot off every
//!   chain — fits the model's allocatable registers (`balanced`'s test, the same figure).
//!
//! Two problems per block ([`solve`]): **(a)** the minimum peak pressure; **(b)** the minimum
//! length among the orders within budget, or a proof that no order is within budget (then the
//! order of (a) is the schedule). Both start from the best order of the heuristic strategies
//! (a warm start and an upper bound) and from lower bounds computed from the DAG
//! ([`pressure_lower_bound`], [`length_lower_bound`], the cuts of [`cut`] and the precedences
//! they force, [`forced`]); the constraint solver
//! ([`cp`], Pumpkin: lazy clause generation) only closes the gap between the two, one
//! candidate value at a time from the bound upward, so every unsatisfiable step raises the
//! proven bound and an effort or time limit leaves the best order found with a stated gap.
//!
//! Nothing the solver returns is trusted: its order is re-checked as a topological order and
//! re-evaluated with [`BlockProblem::evaluate`] before it is used, and the strategy built on
//! it runs through the same driver and verifier as every other.

pub mod brute;
pub mod cache;
pub mod cp;
pub mod cut;
pub mod effort;
pub mod forced;
pub mod ideals;
mod search_state;
pub mod symmetry;
pub mod timed;

use super::dag::{DepDag, NodeId};
use super::driver;
use super::latency::MachineModel;
use super::pressure::{Liveness, PressureTracker};
use super::ready::SchedView;
use super::remat;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{Block, Function};
use effort::{Budget, Stop};
use std::fmt;
use std::time::Duration;

/// The answer of an exact search ([`ideals`], [`timed`]) to "is there an order within these
/// limits?".
pub enum Answer {
    /// An order within the limits.
    Found(Vec<u32>),
    /// No order is within them (every state was visited).
    Proven,
    /// Too many states, or the effort or time ran out.
    GaveUp,
}

/// Where a value's live range starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Def {
    /// Live on entry to the block (a live-in or a used block parameter).
    Entry,
    /// A result of the free node with this index.
    Node(u32),
    /// A constant the driver places right before its first user.
    FirstUse,
}

/// One value the pressure count follows.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ValueLife {
    /// Where it starts.
    pub def: Def,
    /// The free nodes that read it (distinct, ascending).
    pub users: Vec<u32>,
    /// Whether it is live on exit from the block.
    pub live_out: bool,
}

/// One block's scheduling problem over its free nodes, indexed `0..len()` in source order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockProblem {
    /// Per free node: the DAG node it is.
    pub nodes: Vec<NodeId>,
    /// Per free node: its own latency.
    pub latency: Vec<u32>,
    /// Dependences between free nodes: `(from, to, latency)`, `from < to`.
    pub edges: Vec<(u32, u32, u32)>,
    /// The values whose live ranges depend on the order.
    pub values: Vec<ValueLife>,
    /// Values live through the block that no instruction of it reads.
    pub idle: u32,
    /// Instructions issued per cycle.
    pub issue_width: u32,
    /// Registers the working set may use.
    pub register_budget: u32,
}

/// The pressure and length of one order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figures {
    /// Peak live values (the tracker's maximum).
    pub pressure: u32,
    /// Cycles on the in-order issue model.
    pub length: u32,
}

impl BlockProblem {
    /// The problem of the block `view` shows, before anything is placed: the view handed to
    /// [`Strategy::init_block`](super::Strategy::init_block).
    pub fn from_view(view: &SchedView<'_>) -> BlockProblem {
        Self::from_parts(view.func, view.dag, view.pressure, view.model)
    }

    /// The problem of `dag`'s block from the tracker at its entry.
    fn from_parts(
        func: &Function,
        dag: &DepDag,
        pressure: &PressureTracker,
        model: &MachineModel,
    ) -> BlockProblem {
        let free: Vec<bool> = dag
            .nodes()
            .map(|n| !driver::is_constant(func, dag, n) || !driver::bindable(dag, n))
            .collect();
        let mut index = vec![u32::MAX; dag.len()];
        let mut nodes = Vec::new();
        for n in dag.nodes().filter(|n| free[n.index()]) {
            index[n.index()] = nodes.len() as u32;
            nodes.push(n);
        }
        let latency = nodes.iter().map(|&n| dag.node(n).latency).collect();
        let mut edges: Vec<(u32, u32, u32)> = dag
            .edges()
            .filter(|(a, b, _)| free[a.index()] && free[b.index()])
            .map(|(a, b, e)| (index[a.index()], index[b.index()], e.latency))
            .collect();
        sort_and_merge_edges(&mut edges);
        let table = pressure.value_table();
        let mut values = Vec::new();
        for v in 0..table.live_out.len() {
            let users: Vec<u32> = table.users[v].iter().map(|&i| index[i as usize]).collect();
            debug_assert!(
                users.iter().all(|&u| u != u32::MAX),
                "a constant reads nothing"
            );
            let def = match table.def[v] {
                None => Def::Entry,
                Some(i) if free[i as usize] => Def::Node(index[i as usize]),
                Some(_) => Def::FirstUse,
            };
            let live_out = table.live_out[v];
            let needed = !users.is_empty() || live_out;
            // Entry values without a use are the idle ones, counted in `idle`.
            if needed && !(def == Def::Entry && users.is_empty()) {
                values.push(ValueLife {
                    def,
                    users,
                    live_out,
                });
            }
        }
        BlockProblem {
            nodes,
            latency,
            edges,
            values,
            idle: pressure.idle_through() as u32,
            issue_width: model.issue_width.max(1),
            register_budget: model.allocatable_gprs as u32,
        }
    }

    /// The problem of every block of `func` as the driver would see it (constants copied to
    /// their users first, as for every strategy), in layout order. For a function a strategy
    /// has scheduled, [`BlockProblem::evaluate`] of the identity order gives its figures.
    pub fn of_function(func: &Function, model: &MachineModel) -> Vec<(Block, BlockProblem)> {
        let mut func = func.clone();
        func.dfg.resolve_all_aliases();
        let _ = remat::remat_resolved(&mut func, false, true);
        let blocks: Vec<Block> = func.layout.blocks().collect();
        let dags = DepDag::build_all_resolved(&func, &blocks, model);
        let preds = crate::sched::pressure::Predecessors::of(&func);
        let liveness = Liveness::from_dags(&func, &dags, &preds);
        let mut ids = SecondaryMap::with_capacity(func.dfg.num_values());
        ids.resize(func.dfg.num_values());
        blocks
            .iter()
            .zip(&dags)
            .map(|(&block, dag)| {
                let tracker = PressureTracker::for_dag(&func, &liveness, dag, &mut ids);
                (block, Self::from_parts(&func, dag, &tracker, model))
            })
            .collect()
    }

    /// The identity order `0..len()`: the block's current order.
    pub fn source_order(&self) -> Vec<u32> {
        (0..self.len() as u32).collect()
    }

    /// Free nodes.
    pub fn len(&self) -> usize {
        self.latency.len()
    }

    /// Whether the block has no free node.
    pub fn is_empty(&self) -> bool {
        self.latency.is_empty()
    }

    /// Per node: its predecessors `(from, latency)`.
    pub fn preds(&self) -> Vec<Vec<(u32, u32)>> {
        let mut p = vec![Vec::new(); self.len()];
        for &(a, b, l) in &self.edges {
            p[b as usize].push((a, l));
        }
        p
    }

    /// Per node: the values it reads, and how many values it defines.
    pub fn reads_and_defines(&self) -> (Vec<Vec<usize>>, Vec<u32>) {
        let mut reads = vec![Vec::new(); self.len()];
        let mut defines = vec![0u32; self.len()];
        for (v, life) in self.values.iter().enumerate() {
            if let Def::Node(d) = life.def {
                defines[d as usize] += 1;
            }
            for &u in &life.users {
                reads[u as usize].push(v);
            }
        }
        (reads, defines)
    }

    /// Per value: how many nodes read it.
    pub fn readers(&self) -> Vec<u32> {
        self.values.iter().map(|v| v.users.len() as u32).collect()
    }

    /// Per node: its successors `(to, latency)`.
    pub fn succs(&self) -> Vec<Vec<(u32, u32)>> {
        let mut s = vec![Vec::new(); self.len()];
        for &(a, b, l) in &self.edges {
            s[a as usize].push((b, l));
        }
        s
    }

    /// Whether `order` holds every free node once and puts every edge forward.
    pub fn is_legal(&self, order: &[u32]) -> bool {
        if order.len() != self.len() {
            return false;
        }
        let mut pos = vec![u32::MAX; self.len()];
        for (at, &n) in order.iter().enumerate() {
            match pos.get_mut(n as usize) {
                Some(p) if *p == u32::MAX => *p = at as u32,
                _ => return false,
            }
        }
        self.edges
            .iter()
            .all(|&(a, b, _)| pos[a as usize] < pos[b as usize])
    }

    /// The pressure and length of a legal `order` (the tracker's count and the driver's issue
    /// model; see the module documentation).
    pub fn evaluate(&self, order: &[u32]) -> Figures {
        Figures {
            pressure: self.pressure_of(order),
            length: self.length_of(order),
        }
    }

    /// The entry pressure: idle values and entry values that are read in the block.
    pub fn entry_pressure(&self) -> u32 {
        self.idle + self.values.iter().filter(|v| v.def == Def::Entry).count() as u32
    }

    /// Peak pressure of a legal `order`.
    pub fn pressure_of(&self, order: &[u32]) -> u32 {
        self.points_of(order)
            .into_iter()
            .fold(self.entry_pressure(), |m, (before, after)| {
                m.max(before).max(after)
            })
    }

    /// Per free node, the live count right before it and right after it in the legal `order`.
    pub fn points_of(&self, order: &[u32]) -> Vec<(u32, u32)> {
        let n = self.len();
        // Per node: values it defines, constants it may start, values it reads.
        let mut defines = vec![0u32; n];
        let mut reads: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut remaining: Vec<u32> = Vec::with_capacity(self.values.len());
        for (v, life) in self.values.iter().enumerate() {
            if let Def::Node(d) = life.def {
                defines[d as usize] += 1;
            }
            for &u in &life.users {
                reads[u as usize].push(v);
            }
            remaining.push(life.users.len() as u32);
        }
        let mut born: Vec<bool> = self.values.iter().map(|v| v.def != Def::FirstUse).collect();
        let mut live = self.entry_pressure();
        let mut points = vec![(0, 0); n];
        for &u in order {
            let u = u as usize;
            for &v in &reads[u] {
                if !born[v] {
                    born[v] = true;
                    live += 1;
                }
            }
            let before = live;
            let mut dying = 0;
            for &v in &reads[u] {
                remaining[v] -= 1;
                if remaining[v] == 0 && !self.values[v].live_out {
                    dying += 1;
                }
            }
            live = live + defines[u] - dying;
            points[u] = (before, live);
        }
        points
    }

    /// Length of a legal `order` on the in-order issue model.
    pub fn length_of(&self, order: &[u32]) -> u32 {
        let issue = self.issue_cycles(order);
        order
            .iter()
            .map(|&u| issue[u as usize] + self.latency[u as usize])
            .max()
            .unwrap_or(0)
    }

    /// The cycle each node of a legal `order` issues in on the in-order issue model.
    pub fn issue_cycles(&self, order: &[u32]) -> Vec<u32> {
        let succs = self.succs();
        let mut ready = vec![0u32; self.len()];
        let mut issue = vec![0u32; self.len()];
        let (mut cycle, mut issued) = (0u32, 0u32);
        for &u in order {
            let u = u as usize;
            let at = cycle.max(ready[u]);
            issue_at(&mut cycle, &mut issued, at, self.issue_width);
            issue[u] = at;
            for &(s, l) in &succs[u] {
                ready[s as usize] = ready[s as usize].max(at + l);
            }
        }
        issue
    }

    /// Whether figures with this pressure keep the working set within the register budget.
    pub fn within_budget(&self, pressure: u32) -> bool {
        pressure.saturating_sub(self.idle) <= self.register_budget
    }

    /// A stable 64-bit digest of the problem (FNV-1a over its fields): the cache key. Two
    /// blocks with the same key have the same free nodes, edges, latencies, values, issue width
    /// and budget, so the same optimum.
    pub fn key(&self) -> u64 {
        let mut h = Fnv::default();
        h.word(self.len() as u64);
        for &l in &self.latency {
            h.word(u64::from(l));
        }
        h.word(self.edges.len() as u64);
        for &(a, b, l) in &self.edges {
            h.word(u64::from(a));
            h.word(u64::from(b));
            h.word(u64::from(l));
        }
        h.word(self.values.len() as u64);
        for v in &self.values {
            h.word(match v.def {
                Def::Entry => u64::MAX,
                Def::FirstUse => u64::MAX - 1,
                Def::Node(d) => u64::from(d),
            });
            h.word(u64::from(v.live_out));
            h.word(v.users.len() as u64);
            for &u in &v.users {
                h.word(u64::from(u));
            }
        }
        h.word(u64::from(self.idle));
        h.word(u64::from(self.issue_width));
        h.word(u64::from(self.register_budget));
        h.0
    }
}

/// FNV-1a, 64 bits: a digest that does not change between Rust releases or hosts.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Issues one node at cycle `at` (no earlier than `cycle`) on the in-order issue model whose
/// current cycle is `cycle` with `issued` of its `width` slots used: the cycle moves on when
/// the node waits, or when it takes the last slot.
pub(crate) fn issue_at(cycle: &mut u32, issued: &mut u32, at: u32, width: u32) {
    if at > *cycle {
        *cycle = at;
        *issued = 0;
    }
    *issued += 1;
    if *issued >= width {
        *cycle += 1;
        *issued = 0;
    }
}

/// Sorts dependence edges `(from, to, latency)` and merges repeats of one pair into one edge
/// with the largest latency.
pub(crate) fn sort_and_merge_edges(edges: &mut Vec<(u32, u32, u32)>) {
    edges.sort_unstable();
    edges.dedup_by(|a, b| {
        if (a.0, a.1) == (b.0, b.1) {
            b.2 = b.2.max(a.2);
            true
        } else {
            false
        }
    });
}

/// Per node, as bit sets over the free nodes: its ancestors and its descendants.
fn closures(problem: &BlockProblem) -> (Vec<BitSet>, Vec<BitSet>) {
    let n = problem.len();
    let preds = problem.preds();
    let succs = problem.succs();
    // Source order is topological: edges go from lower to higher indices.
    let mut anc = vec![BitSet::new(n); n];
    for (i, node_preds) in preds.iter().enumerate() {
        for &(p, _) in node_preds {
            let (lo, hi) = anc.split_at_mut(i);
            hi[0].union_with(&lo[p as usize]);
            hi[0].insert(p as usize);
        }
    }
    let mut desc = vec![BitSet::new(n); n];
    for i in (0..n).rev() {
        for &(s, _) in &succs[i] {
            let (lo, hi) = desc.split_at_mut(s as usize);
            lo[i].union_with(&hi[0]);
            lo[i].insert(s as usize);
        }
    }
    (anc, desc)
}

/// A fixed-size bit set.
#[derive(Clone, Debug)]
struct BitSet(Vec<u64>);

impl BitSet {
    fn new(n: usize) -> Self {
        BitSet(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
    fn union_with(&mut self, other: &BitSet) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
    fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// A lower bound on the peak pressure of every legal order: the entry count, and per node the
/// values that are live right before it and right after it in *every* order. A value is
/// certainly started before a node when it is live on entry, or its definition, the node
/// itself (as a reader) or another reader is an ancestor of the node — a definition precedes
/// all its readers; it is certainly still needed when the node or a descendant reads it, or it
/// is live out. (So a message word read in MD5's first and last rounds counts in between,
/// wherever its load goes.)
pub fn pressure_lower_bound(problem: &BlockProblem) -> u32 {
    per_node_live(problem)
        .into_iter()
        .fold(problem.entry_pressure(), |best, (before, after)| {
            best.max(before).max(after)
        })
}

/// Per node: the values live right before it and right after it in every order (see
/// [`pressure_lower_bound`]), idle values included.
fn per_node_live(problem: &BlockProblem) -> Vec<(u32, u32)> {
    let (anc, desc) = closures(problem);
    let mut out = Vec::with_capacity(problem.len());
    for u in 0..problem.len() {
        let (mut before, mut after) = (problem.idle, problem.idle);
        for v in &problem.values {
            let reads_u = v.users.iter().any(|&w| w as usize == u);
            let read_below = v.live_out || v.users.iter().any(|&w| desc[u].contains(w as usize));
            let read_above = v.users.iter().any(|&w| anc[u].contains(w as usize));
            let started_before = reads_u
                || read_above
                || match v.def {
                    Def::Entry => true,
                    Def::Node(d) => anc[u].contains(d as usize),
                    Def::FirstUse => false,
                };
            let started_by_u = v.def == Def::Node(u as u32);
            if started_before && (reads_u || read_below) {
                before += 1;
            }
            if (started_before || started_by_u) && read_below {
                after += 1;
            }
        }
        out.push((before, after));
    }
    out
}

/// A lower bound on the length of every legal order on the in-order issue model: the
/// critical path, and for every `k` the `k` nodes with the longest tails (own latency plus the
/// longest path below), of which the last issued starts no earlier than cycle `⌈k/W⌉ - 1`.
/// The same with heads: the `k` nodes with the longest paths above them cannot all issue
/// before that path and `⌈k/W⌉ - 1` more cycles, plus the smallest tail among them.
pub fn length_lower_bound(problem: &BlockProblem) -> u32 {
    let n = problem.len();
    if n == 0 {
        return 0;
    }
    let (head, tail) = head_and_tail(problem);
    let w = problem.issue_width.max(1) as usize;
    let critical = (0..n).map(|i| head[i] + tail[i]).max().unwrap_or(0);
    let mut tails = tail.clone();
    tails.sort_unstable_by(|a, b| b.cmp(a));
    let by_tail = tails
        .iter()
        .enumerate()
        .map(|(k, &t)| (k / w) as u32 + t)
        .max()
        .unwrap_or(0);
    // Heads: sort by head descending; the k nodes with head >= h: the last of them issues at
    // >= h + ceil(k/W) - 1 only if they all become ready no earlier than h, which holds.
    let mut by_head_nodes: Vec<usize> = (0..n).collect();
    by_head_nodes.sort_unstable_by(|&a, &b| head[b].cmp(&head[a]));
    let mut min_tail = u32::MAX;
    let mut by_head = 0;
    for (k, &i) in by_head_nodes.iter().enumerate() {
        min_tail = min_tail.min(tail[i]);
        by_head = by_head.max(head[i] + (k / w) as u32 + min_tail);
    }
    critical.max(by_tail).max(by_head)
}

/// How a figure was settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// The best order meets a proven lower bound.
    Optimal,
    /// The effort or time limit ran out: the best order found and the proven lower bound
    /// differ.
    Gap,
    /// Proven: no order keeps the working set within the register budget.
    Infeasible,
    /// The effort or time limit ran out before any order within the budget was found or
    /// excluded.
    Unknown,
}

impl Status {
    /// Short name used in reports and the cache.
    pub fn name(self) -> &'static str {
        match self {
            Status::Optimal => "optimal",
            Status::Gap => "gap",
            Status::Infeasible => "infeasible",
            Status::Unknown => "unknown",
        }
    }

    /// The status called `name`.
    pub fn from_name(name: &str) -> Option<Status> {
        [
            Status::Optimal,
            Status::Gap,
            Status::Infeasible,
            Status::Unknown,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One problem's answer: the best value found, the proven bound, and the order that reaches
/// the value.
#[derive(Clone, Debug, PartialEq)]
pub struct Bounded {
    /// The best value any order found reaches (`None`: no order satisfies the constraint).
    pub value: Option<u32>,
    /// A proven lower bound (for an infeasible problem, meaningless).
    pub bound: u32,
    /// How it was settled.
    pub status: Status,
    /// The order reaching `value` (free-node indices).
    pub order: Vec<u32>,
    /// Wall time spent in the solver.
    pub seconds: f64,
    /// Satisfiability questions the solver was asked (0: the bounds settled it).
    pub steps: u32,
}

impl Bounded {
    /// No order satisfies the constraint: proven after `steps` questions, with `bound` the
    /// last bound reached (meaningless but kept).
    pub fn infeasible(bound: u32, steps: u32) -> Self {
        Bounded {
            value: None,
            bound,
            status: Status::Infeasible,
            order: Vec::new(),
            seconds: 0.0,
            steps,
        }
    }

    /// The relative gap `(value - bound) / value`, 0 when optimal.
    pub fn gap(&self) -> f64 {
        match self.value {
            Some(v) if v > 0 && v > self.bound => f64::from(v - self.bound) / f64::from(v),
            _ => 0.0,
        }
    }
}

/// Both problems' answers for one block.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockOptimum {
    /// Free nodes.
    pub nodes: usize,
    /// (a) the minimum peak pressure.
    pub pressure: Bounded,
    /// (b) the minimum length within the register budget.
    pub length: Bounded,
}

impl BlockOptimum {
    /// The order the `optimal` strategy takes: (b)'s when some order is within budget, else
    /// (a)'s.
    pub fn schedule(&self) -> &[u32] {
        if self.length.value.is_some() {
            &self.length.order
        } else {
            &self.pressure.order
        }
    }
}

/// Limits of one solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SolveLimits {
    /// Wall time per problem (pressure, then length): the outer safety bound.
    pub per_problem: Duration,
    /// Effort units per problem ([`effort`]; `None`: unlimited): the deterministic limit.
    pub effort: Option<u64>,
}

/// Effort units per problem when neither `SCHEDLAB_OPTIMUM_EFFORT` nor
/// `SCHEDLAB_OPTIMUM_SECONDS` is set (notes/optimal.md gives the measurements).
pub const DEFAULT_EFFORT: u64 = 250_000;

/// The wall-clock safety bound per problem beside [`DEFAULT_EFFORT`]: far above the time the
/// budget takes, so that load does not decide where a solve stops.
pub const DEFAULT_SAFETY_SECONDS: f64 = 5.0;

impl SolveLimits {
    /// The limits the `optimal` strategy uses (a block of the committed cache costs nothing):
    /// `SCHEDLAB_OPTIMUM_EFFORT` units per problem (a number, or `unlimited`) and
    /// `SCHEDLAB_OPTIMUM_SECONDS` seconds. Neither set: [`DEFAULT_EFFORT`] with
    /// [`DEFAULT_SAFETY_SECONDS`]. Only the seconds set: no effort limit (a run that asks for
    /// a time limit gets the time, as `scripts/regen-notes optimal` does). Only the effort set:
    /// 1 second.
    pub fn from_env() -> SolveLimits {
        let seconds = std::env::var("SCHEDLAB_OPTIMUM_SECONDS")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0);
        let (effort, default_seconds) = match std::env::var("SCHEDLAB_OPTIMUM_EFFORT") {
            Ok(e) => (parse_effort(&e), 1.0),
            Err(_) if seconds.is_some() => (None, 1.0),
            Err(_) => (Some(DEFAULT_EFFORT), DEFAULT_SAFETY_SECONDS),
        };
        SolveLimits {
            per_problem: Duration::from_secs_f64(seconds.unwrap_or(default_seconds)),
            effort,
        }
    }
}

/// An effort setting: `unlimited` (or empty) is none; otherwise a count of units, with `_`
/// separators allowed (unreadable: [`DEFAULT_EFFORT`]).
pub fn parse_effort(text: &str) -> Option<u64> {
    let text = text.trim();
    if text.is_empty() || text.eq_ignore_ascii_case("unlimited") {
        return None;
    }
    Some(text.replace('_', "").parse().unwrap_or(DEFAULT_EFFORT))
}

/// Blocks above this many free nodes get an order built from the cuts as a further warm start
/// (the solver settles smaller ones quickly by itself).
const GUIDED_MIN_NODES: usize = 12;

/// Blocks up to this many free nodes: the exact search over ideals after the cut bound, the
/// CP model after it; larger ones dive first (the search, bounded, as a way to find orders),
/// then the cut bound, then windows.
const IDEALS_MAX_NODES: usize = 256;

/// Positions per window of the large-neighbourhood search on larger blocks.
const LNS_WINDOW: usize = 48;

/// The most ideals that search remembers before it leaves the question to the solver.
const IDEALS_MAX: usize = 400_000;

/// Cuts tried at the best order's highest points before each dive on a large block.
const QUICK_CUTS: usize = 16;

/// The most states the search with issue times remembers per question.
const TIMED_MAX: usize = 400_000;

/// Solves both problems of `problem`, starting from the `candidates` (legal orders, e.g. the
/// heuristic strategies'; illegal ones are ignored).
pub fn solve(problem: &BlockProblem, candidates: &[Vec<u32>], limits: SolveLimits) -> BlockOptimum {
    let legal: Vec<(&Vec<u32>, Figures)> = candidates
        .iter()
        .filter(|o| problem.is_legal(o))
        .map(|o| (o, problem.evaluate(o)))
        .collect();
    let source: Vec<u32> = (0..problem.len() as u32).collect();
    let source_figures = problem.evaluate(&source);

    // (a) the minimum peak pressure.
    let budget = Budget::starting_now(limits.effort, limits.per_problem);
    let (mut best_p, mut best_p_order) = (source_figures.pressure, source.clone());
    for (o, f) in &legal {
        if f.pressure < best_p {
            best_p = f.pressure;
            best_p_order = o.to_vec();
        }
    }
    let large = problem.len() > IDEALS_MAX_NODES;
    // Eighths of the limit the windows and the search over ideals may reach on a large block:
    // the last eighth is the CP model's, unless the block is too large to model.
    let (windows_until, ideals_until) = if problem.len() > cp::MAX_NODES {
        (7, 8)
    } else {
        (6, 7)
    };
    // An order built from the cuts (up to a quarter of the budget) may beat every heuristic;
    // not when the per-node bound already meets the best order.
    let floor = pressure_lower_bound(problem);
    if !large && problem.len() > GUIDED_MIN_NODES && floor < best_p {
        let guided = cut::cut_guided_order(problem, &best_p_order, budget.share(1, 4));
        if problem.is_legal(&guided) && problem.pressure_of(&guided) < best_p {
            best_p = problem.pressure_of(&guided);
            best_p_order = guided;
        }
    }
    // Large blocks: the search over ideals as a dive first. Asked "an order at most one below
    // the best?", its depth-first walk (fewest live values first, backtracking, every failed
    // ideal remembered) often reaches the end at once where the cut-built order and the
    // windows stall (MD5's block23: 29 in milliseconds, where they ended at 30); a dive that
    // gives up costs at most a quarter of the budget.
    let mut ideal_steps = 0;
    let mut dive_gave_up_at = None;
    // Whether a dive visited every ideal below the best order's peak, or a cut proves the
    // peak: then the best is optimal.
    let mut dive_proven = false;
    if large {
        let dive = budget.share(1, 4);
        'lower: while best_p > problem.entry_pressure() && !dive.reached() {
            // The cuts at the best order's highest points first: when one already proves the
            // peak, no question below it is asked (each would give up only at its limit).
            let quick = cut::cut_pressure_bound_near(
                problem,
                floor,
                best_p,
                dive,
                Some(&best_p_order),
                QUICK_CUTS,
            );
            if quick >= best_p {
                dive_proven = true;
                break;
            }
            // Longest tail first (SHA-256's block343: 44 to 43; MD5's block23: 30 to 29), then
            // fewest live first, each with half of what is left.
            for prefer in [ideals::Prefer::LongestTail, ideals::Prefer::FewestLive] {
                ideal_steps += 1;
                let until = match prefer {
                    ideals::Prefer::LongestTail => dive.share_of_rest(1, 2),
                    _ => dive,
                };
                match ideals::order_within_preferring(
                    problem,
                    best_p - 1,
                    IDEALS_MAX,
                    until,
                    prefer,
                ) {
                    ideals::Reach::Found(order)
                        if problem.is_legal(&order) && problem.pressure_of(&order) < best_p =>
                    {
                        best_p = problem.pressure_of(&order);
                        best_p_order = order;
                        continue 'lower;
                    }
                    ideals::Reach::Proven => {
                        dive_proven = true;
                        break 'lower;
                    }
                    _ => {}
                }
            }
            dive_gave_up_at = Some(best_p - 1);
            break;
        }
    }
    // The cut bound: up to three quarters of the budget on small blocks, half on large ones
    // (stopped once it meets the best order).
    let mut p_bound = if dive_proven {
        best_p
    } else {
        cut::cut_pressure_bound_near(
            problem,
            floor,
            best_p,
            budget.share(if large { 2 } else { 3 }, 4),
            Some(&best_p_order),
            usize::MAX,
        )
        .min(best_p)
    };
    // Large blocks with a gap left: the order built from the cuts, then windows of the best
    // order re-ordered exactly (to three quarters of the budget; seven eighths where the block
    // is too large for the CP model).
    if large && p_bound < best_p {
        let guided = cut::cut_guided_order(
            problem,
            &best_p_order,
            Stop::from_now(limits.effort.map(|e| e / 8), limits.per_problem / 8)
                .min(budget.share(5, 8)),
        );
        if problem.is_legal(&guided) && problem.pressure_of(&guided) < best_p {
            best_p = problem.pressure_of(&guided);
            best_p_order = guided;
        }
        let improved = ideals::improve_by_windows(
            problem,
            best_p_order.clone(),
            LNS_WINDOW,
            budget.share(windows_until, 8),
        );
        if problem.is_legal(&improved) && problem.pressure_of(&improved) < best_p {
            best_p = problem.pressure_of(&improved);
            best_p_order = improved;
        }
    }
    // Large blocks with a gap left: the precedences the tight cuts force (within the search
    // over ideals' share; after the windows, which may lower the best order first, so that
    // no value at or above an order's is asked): SHA-256's loop bodies, where every single
    // cut stays one below the best order, are settled by them in seconds.
    if large && p_bound < best_p {
        p_bound =
            forced::forced_pressure_bound(problem, p_bound, best_p, budget.share(ideals_until, 8));
    }
    // The exact search over ideals (up to half the budget on small blocks, to seven eighths on
    // large ones, all of it on those too large for the CP model), the solver after; a question
    // the dive gave up on is not asked again.
    let stop = if !large {
        budget.share(1, 2)
    } else {
        budget.share(ideals_until, 8)
    };
    while p_bound < best_p && dive_gave_up_at != Some(best_p - 1) && !stop.reached() {
        ideal_steps += 1;
        match ideals::order_within(problem, best_p - 1, IDEALS_MAX, stop) {
            ideals::Reach::Found(order)
                if problem.is_legal(&order) && problem.pressure_of(&order) < best_p =>
            {
                best_p = problem.pressure_of(&order);
                best_p_order = order;
            }
            ideals::Reach::Proven => p_bound = best_p,
            _ => break,
        }
    }
    // Small blocks with a gap left after the search over ideals: the forced precedences (to
    // three quarters of the budget), the CP model after.
    if !large && p_bound < best_p {
        p_bound = forced::forced_pressure_bound(problem, p_bound, best_p, budget.share(3, 4));
    }
    let pressure = cp::minimise(
        problem,
        cp::Objective::Pressure,
        p_bound,
        best_p,
        best_p_order,
        budget.whole(),
    );
    let pressure = Bounded {
        seconds: budget.elapsed().as_secs_f64(),
        steps: pressure.steps + ideal_steps,
        ..pressure
    };

    // (b) the minimum length within the budget.
    let budget = Budget::starting_now(limits.effort, limits.per_problem);
    // No order within the budget when even the proven minimum pressure exceeds it.
    let length = if !problem.within_budget(pressure.bound) {
        Bounded::infeasible(0, 0)
    } else {
        let mut incumbent: Option<(u32, Vec<u32>)> = None;
        let pressure_order_figures = problem.evaluate(&pressure.order);
        let l_floor = length_lower_bound(problem);
        let settled = legal
            .iter()
            .map(|(_, f)| *f)
            .chain([source_figures, pressure_order_figures])
            .any(|f| problem.within_budget(f.pressure) && f.length <= l_floor);
        let mut consider = |o: &[u32], f: Figures| {
            if problem.within_budget(f.pressure)
                && incumbent.as_ref().is_none_or(|(l, _)| f.length < *l)
            {
                incumbent = Some((f.length, o.to_vec()));
            }
        };
        consider(&source, source_figures);
        for (o, f) in &legal {
            consider(o, *f);
        }
        consider(&pressure.order, pressure_order_figures);
        // List schedules kept within the budget by the search over ideals (earliest issue
        // first, then longest tail first; backtracking when a point would exceed the budget):
        // MD5's block23 on AArch64 reaches the critical path this way, where the CP model found
        // no order in 60 s.
        // When it visits every ideal within the budget without reaching the end, no order is
        // within it: a proof, as the pressure bound's. Not asked when an order within the
        // budget already meets the length bound: neither could do better.
        let mut dive_steps = 0;
        let mut none_within = false;
        let cap = problem.register_budget.saturating_add(problem.idle);
        for (prefer, share) in [
            (ideals::Prefer::EarliestIssue, 4),
            (ideals::Prefer::LongestTail, 3),
        ] {
            if none_within || settled {
                break;
            }
            dive_steps += 1;
            match ideals::order_within_preferring(
                problem,
                cap,
                IDEALS_MAX,
                budget.share(1, share),
                prefer,
            ) {
                ideals::Reach::Found(order) if problem.is_legal(&order) => {
                    let figures = problem.evaluate(&order);
                    consider(&order, figures);
                }
                ideals::Reach::Proven => none_within = true,
                _ => {}
            }
        }
        let l_bound = l_floor;
        let (upper, order) = match incumbent {
            Some((l, o)) => (Some(l), o),
            None => (None, Vec::new()),
        };
        let mut l_bound = upper.map_or(l_bound, |u| l_bound.min(u));
        // The exact search with issue times, asked from the bound upward (to half the budget).
        let (mut upper, mut order) = (upper, order);
        if let Some(mut u) = upper {
            let stop = budget.share(1, 2);
            while l_bound < u && !stop.reached() {
                dive_steps += 1;
                match timed::order_within(problem, cap, l_bound, TIMED_MAX, stop) {
                    timed::Timed::Found(found) if problem.is_legal(&found) => {
                        let f = problem.evaluate(&found);
                        if problem.within_budget(f.pressure) && f.length < u {
                            u = f.length;
                            order = found;
                        }
                        break;
                    }
                    timed::Timed::Proven => l_bound += 1,
                    _ => break,
                }
            }
            upper = Some(u);
        }
        let mut result = match upper {
            _ if none_within => Bounded::infeasible(0, 0),
            Some(u) => cp::minimise(
                problem,
                cp::Objective::Length,
                l_bound,
                u,
                order,
                budget.whole(),
            ),
            None => cp::first_within_budget(problem, l_bound, budget.whole()),
        };
        result.seconds = budget.elapsed().as_secs_f64();
        result.steps += dive_steps;
        result
    };
    BlockOptimum {
        nodes: problem.len(),
        pressure,
        length,
    }
}

/// One block's optimum beside every compared strategy's figures.
#[derive(Clone, Debug)]
pub struct BlockComparison {
    /// The block.
    pub block: Block,
    /// Its problem (before scheduling).
    pub problem: BlockProblem,
    /// Both problems' answers.
    pub optimum: BlockOptimum,
    /// Per strategy: its figures for the block, and whether it scheduled the same
    /// instructions (`false` for the load-rematerialising strategies, whose copies change the
    /// problem).
    pub strategies: Vec<(&'static str, Figures, bool)>,
}

/// Solves every block of `func` (a function about to be scheduled, e.g. the pipeline's text
/// after its rewrites) and measures each strategy of `strategies` on it.
pub fn compare(
    func: &Function,
    model: &MachineModel,
    strategies: &[&'static str],
    limits: SolveLimits,
) -> Result<Vec<BlockComparison>, super::SchedError> {
    let mut optimal = super::strategies::optimal::Optimal::with_limits(limits);
    let mut scheduled = func.clone();
    super::schedule_with_strategy(
        &mut scheduled,
        "optimal",
        &mut optimal,
        model,
        &super::ScheduleOptions::default(),
    )?;
    let problems = BlockProblem::of_function(func, model);
    let mut out: Vec<BlockComparison> = problems
        .into_iter()
        .zip(optimal.solved())
        .map(|((block, problem), (solved_block, optimum))| {
            debug_assert_eq!(block, *solved_block);
            BlockComparison {
                block,
                problem,
                optimum: optimum.clone(),
                strategies: Vec::new(),
            }
        })
        .collect();
    for &name in strategies {
        let mut g = func.clone();
        super::schedule_with_options(&mut g, name, model, &super::ScheduleOptions::default())?;
        for (block, problem) in BlockProblem::of_function(&g, model) {
            if let Some(c) = out.iter_mut().find(|c| c.block == block) {
                let same = problem.len() == c.problem.len();
                let figures = problem.evaluate(&problem.source_order());
                c.strategies.push((name, figures, same));
            }
        }
    }
    Ok(out)
}

/// Per node, the earliest cycle it can issue (longest latency path from the block's start) and
/// the cycles from its issue to the end of the block (its own latency included).
pub(crate) fn head_and_tail(problem: &BlockProblem) -> (Vec<u32>, Vec<u32>) {
    let n = problem.len();
    let preds = problem.preds();
    let succs = problem.succs();
    let mut head = vec![0u32; n];
    for i in 0..n {
        head[i] = preds[i]
            .iter()
            .map(|&(p, l)| head[p as usize] + l)
            .max()
            .unwrap_or(0);
    }
    let mut tail = vec![0u32; n];
    for i in (0..n).rev() {
        tail[i] = succs[i]
            .iter()
            .map(|&(s, l)| l + tail[s as usize])
            .max()
            .unwrap_or(0)
            .max(problem.latency[i]);
    }
    (head, tail)
}
