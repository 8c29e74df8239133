//! The cut bound on peak pressure: at the point right after (or right before) a node `c`, the
//! nodes already placed form a *prefix* — a set closed under predecessors that holds `c`'s
//! ancestors (and `c`) and none of its descendants. Whatever the order, the pressure at that
//! point is the number of values that prefix leaves live. So the fewest values any such prefix
//! can leave live is a lower bound on the peak of every order, and the largest over all nodes
//! is the bound.
//!
//! The fewest values is a minimum s–t cut (project selection): a free node on the source side
//! is in the prefix; precedences are infinite arcs (a node in the prefix pulls its
//! predecessors in); a value costs one when its start is in the prefix and not all its readers
//! are (an auxiliary node per value with several readers, on the source side only when all of
//! them are). This sees what the per-node count of [`pressure_lower_bound`](super::pressure_lower_bound)
//! cannot: a message word read in MD5's first and last rounds through an addition that floats
//! free of the round chain still leaves *something* live across every round in between — the
//! word itself or the sum already taken — since the chain's later step needs one of them.
//! The bound's maximum flows are Dinic's algorithm on one `Residual` network per block (the
//! shared arcs built once, each point's few arcs added and taken out again); the order built
//! from the cuts uses petgraph's Dinic and its flows.

use super::effort::{self, Stop};
use super::{BlockProblem, Def};
use petgraph::Direction;
use petgraph::Graph;
use petgraph::algo::dinics;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

/// An arc capacity no cut pays.
pub(super) const INFINITE: u32 = 1 << 24;

/// The arcs every cut of the block shares, and what each point adds.
pub(super) struct Network {
    /// Free nodes, then auxiliary nodes; the source and the sink are the last two.
    pub(super) nodes: usize,
    /// `(from, to, capacity)` over `0..nodes`, the source and the sink included.
    pub(super) arcs: Vec<(u32, u32, u32)>,
    /// Values live at every point (live out and live on entry).
    pub(super) always: u32,
    /// Per free node: the "some reader placed" nodes of the constants it reads (forced onto
    /// the source side right before the node: its constants are placed then).
    pub(super) constants_of: Vec<Vec<u32>>,
    /// Per free node: its direct predecessors and successors.
    pub(super) preds: Vec<Vec<u32>>,
    pub(super) succs: Vec<Vec<u32>>,
}

impl Network {
    pub(super) fn new(problem: &BlockProblem) -> Network {
        let n = problem.len() as u32;
        let mut next = n;
        let mut aux = || {
            next += 1;
            next - 1
        };
        let mut arcs = Vec::new();
        let mut always = 0;
        let mut constants_of = vec![Vec::new(); n as usize];
        // Source and sink indices are fixed after the auxiliary nodes are known; use
        // placeholders and patch them.
        const SOURCE: u32 = u32::MAX;
        const SINK: u32 = u32::MAX - 1;
        for &(a, b, _) in &problem.edges {
            arcs.push((b, a, INFINITE));
        }
        for v in &problem.values {
            let users = &v.users;
            match (v.def, v.live_out) {
                (Def::Entry, true) => always += 1,
                (Def::Node(d), true) => arcs.push((d, SINK, 1)),
                (def @ (Def::Entry | Def::Node(_)), false) => {
                    // Live from its definition (the source for a live-in) until every reader
                    // is placed.
                    let from = match def {
                        Def::Node(d) => d,
                        _ => SOURCE,
                    };
                    match users.as_slice() {
                        [] => {}
                        [r] => arcs.push((from, *r, 1)),
                        _ => {
                            let all = aux();
                            arcs.push((from, all, 1));
                            arcs.extend(users.iter().map(|&r| (all, r, INFINITE)));
                        }
                    }
                }
                (Def::FirstUse, live_out) => {
                    // Started once any reader is placed (or is next); live until all are,
                    // or to the end.
                    let any = aux();
                    arcs.extend(users.iter().map(|&r| (r, any, INFINITE)));
                    if live_out {
                        arcs.push((any, SINK, 1));
                    } else {
                        let all = aux();
                        arcs.push((any, all, 1));
                        arcs.extend(users.iter().map(|&r| (all, r, INFINITE)));
                    }
                    for &r in users {
                        constants_of[r as usize].push(any);
                    }
                }
            }
        }
        let (source, sink) = (next, next + 1);
        for arc in &mut arcs {
            for end in [&mut arc.0, &mut arc.1] {
                *end = match *end {
                    SOURCE => source,
                    SINK => sink,
                    x => x,
                };
            }
        }
        let mut preds = vec![Vec::new(); n as usize];
        let mut succs = vec![Vec::new(); n as usize];
        for &(a, b, _) in &problem.edges {
            preds[b as usize].push(a);
            succs[a as usize].push(b);
        }
        Network {
            nodes: next as usize + 2,
            arcs,
            always,
            constants_of,
            preds,
            succs,
        }
    }

    /// Effort units of one minimum cut: the network's nodes and arcs.
    pub(super) fn cost(&self) -> u64 {
        (self.nodes + self.arcs.len()) as u64
    }

    /// The shared arcs as a petgraph network, cloned per point.
    fn graph(&self) -> Graph<(), u32> {
        let mut graph = Graph::with_capacity(self.nodes, self.arcs.len() + self.nodes);
        for _ in 0..self.nodes {
            graph.add_node(());
        }
        for &(a, b, w) in &self.arcs {
            graph.add_edge(NodeIndex::new(a as usize), NodeIndex::new(b as usize), w);
        }
        graph
    }

    /// The source and the sink of the network.
    pub(super) fn ends(&self) -> (usize, usize) {
        (self.nodes - 2, self.nodes - 1)
    }

    /// A residual network holding the shared arcs.
    pub(super) fn residual(&self) -> Residual {
        let mut residual = Residual::new(self.nodes);
        for &(a, b, w) in &self.arcs {
            residual.add(a as usize, b as usize, w);
        }
        residual
    }

    /// Adds to `residual` the arcs of the point right after `c` (`after`) or right before it,
    /// with the precedences `preds` and `succs` (direct predecessors and successors per free
    /// node): `c` and its ancestors in the prefix (or, before `c`, its predecessors and the
    /// constants it reads), its descendants (or `c` itself) outside. Its minimum cut is then
    /// the fewest values any prefix at that point leaves live, less [`Network::always`].
    /// Returns how many arcs it added ([`Residual::remove_last`] takes them out).
    pub(super) fn add_point(
        &self,
        residual: &mut Residual,
        preds: &[Vec<u32>],
        succs: &[Vec<u32>],
        c: usize,
        after: bool,
    ) -> usize {
        let (source, sink) = self.ends();
        let before = residual.arcs();
        if after {
            residual.add(source, c, INFINITE);
            for &s in &succs[c] {
                residual.add(s as usize, sink, INFINITE);
            }
        } else {
            residual.add(c, sink, INFINITE);
            for &p in &preds[c] {
                residual.add(source, p as usize, INFINITE);
            }
            // The node's constants are placed right before it.
            for &any in &self.constants_of[c] {
                residual.add(source, any as usize, INFINITE);
            }
        }
        residual.arcs() - before
    }

    /// The fewest values live right after `c` (`after`) or right before it, over every
    /// prefix; `residual` is [`Network::residual`] and is left as it was.
    fn min_live(&self, residual: &mut Residual, c: u32, after: bool) -> u32 {
        let (source, sink) = self.ends();
        let added = self.add_point(residual, &self.preds, &self.succs, c as usize, after);
        let flow = residual.max_flow(source, sink, u32::MAX - 1);
        residual.remove_last(added);
        flow + self.always
    }
}

/// The cut bound: the largest, over the points right before and right after every free node,
/// of the fewest values any prefix leaves live there (plus the idle values), and the entry
/// count (never below `floor`, a bound already known). Points are tried in decreasing order
/// of `floor_per_node` (the per-node count, a cheap bound on the same point), and the search
/// stops once the bound reaches `enough` (an order's pressure: nothing higher can be proven)
/// or at `stop`, with the largest found so far (still a bound). Each cut costs its network's
/// nodes and arcs in effort units.
pub fn cut_pressure_bound(problem: &BlockProblem, floor: u32, enough: u32, stop: Stop) -> u32 {
    cut_pressure_bound_near(problem, floor, enough, stop, None, usize::MAX)
}

/// [`cut_pressure_bound`] over at most `max_points` points, tried first where the legal order
/// `near` peaks (its live count at the point, then the per-node count): where an order is at
/// its peak, a prefix is most likely forced to leave that many live, so the search meets
/// `enough` after a few cuts instead of most of them (MD5's 535-node loop bodies).
pub fn cut_pressure_bound_near(
    problem: &BlockProblem,
    floor: u32,
    enough: u32,
    stop: Stop,
    near: Option<&[u32]>,
    max_points: usize,
) -> u32 {
    let mut best = problem.entry_pressure().max(floor);
    if problem.is_empty() || best >= enough {
        return best;
    }
    let network = Network::new(problem);
    let mut residual = network.residual();
    let near = near
        .filter(|o| problem.is_legal(o))
        .map(|o| problem.points_of(o))
        .unwrap_or_else(|| vec![(0, 0); problem.len()]);
    let mut points: Vec<(u32, u32, u32, bool)> = super::per_node_live(problem)
        .into_iter()
        .zip(near)
        .enumerate()
        .flat_map(|(c, ((before, after), (at_before, at_after)))| {
            [
                (at_before, before, c as u32, false),
                (at_after, after, c as u32, true),
            ]
        })
        .collect();
    points.sort_by_key(|&(at, live, c, after)| {
        (std::cmp::Reverse(at), std::cmp::Reverse(live), c, after)
    });
    points.truncate(max_points);
    for (_, _, c, after) in points {
        if best >= enough || stop.reached() {
            break;
        }
        effort::spend(network.cost());
        best = best.max(problem.idle + network.min_live(&mut residual, c, after));
    }
    best
}

/// An order built from the cuts (an upper bound, not a proof): walking `incumbent`, each node
/// not yet placed is preceded by the fewest-live prefix that holds it and everything placed
/// so far (the minimum cut with the placed nodes forced in, smallest source side), and the
/// nodes that prefix adds are placed greedily, the one that frees the most values first
/// (ties in `incumbent`'s order). At `stop` the rest follows in `incumbent`'s order.
/// `incumbent` must be a legal order; so is the result.
pub fn cut_guided_order(problem: &BlockProblem, incumbent: &[u32], stop: Stop) -> Vec<u32> {
    let n = problem.len();
    let network = Network::new(problem);
    let base = network.graph();
    let (source, sink) = (network.nodes - 2, network.nodes - 1);
    let mut rank = vec![0usize; n];
    for (at, &u) in incumbent.iter().enumerate() {
        rank[u as usize] = at;
    }
    let mut greedy = Greedy::new(problem);
    for &c in incumbent {
        if greedy.placed[c as usize] {
            continue;
        }
        if stop.reached() {
            break;
        }
        effort::spend(network.cost());
        let mut graph = base.clone();
        let mut add = |a: usize, b: usize| {
            graph.add_edge(NodeIndex::new(a), NodeIndex::new(b), INFINITE);
        };
        add(source, c as usize);
        for &s in &network.succs[c as usize] {
            add(s as usize, sink);
        }
        for u in (0..n).filter(|&u| greedy.placed[u]) {
            add(source, u);
        }
        let (_, flows) = dinics(&graph, NodeIndex::new(source), NodeIndex::new(sink));
        // The smallest source side: what the residual network reaches from the source.
        let mut reached = vec![false; network.nodes];
        let mut queue = vec![NodeIndex::new(source)];
        reached[source] = true;
        while let Some(u) = queue.pop() {
            let forward = graph
                .edges_directed(u, Direction::Outgoing)
                .filter(|e| flows[e.id().index()] < *e.weight())
                .map(|e| e.target());
            let backward = graph
                .edges_directed(u, Direction::Incoming)
                .filter(|e| flows[e.id().index()] > 0)
                .map(|e| e.source());
            for v in forward.chain(backward).collect::<Vec<_>>() {
                if !reached[v.index()] {
                    reached[v.index()] = true;
                    queue.push(v);
                }
            }
        }
        let mut adding: Vec<u32> = (0..n as u32)
            .filter(|&u| reached[u as usize] && !greedy.placed[u as usize])
            .collect();
        adding.sort_by_key(|&u| rank[u as usize]);
        greedy.place_all(&adding);
    }
    let rest: Vec<u32> = incumbent
        .iter()
        .copied()
        .filter(|&u| !greedy.placed[u as usize])
        .collect();
    greedy.place_all(&rest);
    greedy.order
}

/// Places a set of nodes (closed under predecessors, given the nodes already placed) one at
/// a time, each time the ready node that adds the fewest live values.
struct Greedy<'a> {
    problem: &'a BlockProblem,
    placed: Vec<bool>,
    order: Vec<u32>,
    /// Per value: readers not yet placed; whether it is started.
    remaining: Vec<u32>,
    born: Vec<bool>,
    /// Per node: values it reads; values it defines.
    reads: Vec<Vec<usize>>,
    defines: Vec<u32>,
    preds: Vec<Vec<(u32, u32)>>,
}

impl<'a> Greedy<'a> {
    fn new(problem: &'a BlockProblem) -> Self {
        let n = problem.len();
        let (reads, defines) = problem.reads_and_defines();
        Greedy {
            problem,
            placed: vec![false; n],
            order: Vec::with_capacity(n),
            remaining: problem.readers(),
            born: problem
                .values
                .iter()
                .map(|v| v.def != Def::FirstUse)
                .collect(),
            reads,
            defines,
            preds: problem.preds(),
        }
    }

    /// The change in live values when `u` is placed next.
    fn delta(&self, u: usize) -> i64 {
        let mut d = i64::from(self.defines[u]);
        for &v in &self.reads[u] {
            if !self.born[v] {
                d += 1;
            }
            if self.remaining[v] == 1 && !self.problem.values[v].live_out {
                d -= 1;
            }
        }
        d
    }

    /// Places every node of `nodes` (listed in tie-break order).
    fn place_all(&mut self, nodes: &[u32]) {
        let mut left: Vec<u32> = nodes.to_vec();
        while !left.is_empty() {
            let ready = left.iter().enumerate().filter(|(_, u)| {
                self.preds[**u as usize]
                    .iter()
                    .all(|&(p, _)| self.placed[p as usize])
            });
            let Some((at, _)) = ready.min_by_key(|(at, u)| (self.delta(**u as usize), *at)) else {
                // Not closed under predecessors: cannot happen for a cut's source side.
                let rest = std::mem::take(&mut left);
                self.order.extend(rest.iter().copied());
                for u in rest {
                    self.placed[u as usize] = true;
                }
                return;
            };
            let u = left.remove(at) as usize;
            for &v in &self.reads[u] {
                self.born[v] = true;
                self.remaining[v] -= 1;
            }
            self.placed[u] = true;
            self.order.push(u as u32);
        }
    }
}

/// A residual network for repeated maximum flows: arcs in pairs (an arc and its reverse).
pub(super) struct Residual {
    /// Per arc, its head; arc `e ^ 1` is arc `e`'s reverse.
    to: Vec<u32>,
    /// Per arc, its capacity (0 for a reverse).
    capacity: Vec<u32>,
    /// Per arc, the room the last flow left.
    residual: Vec<u32>,
    /// Per node, the arcs leaving it (reverses included).
    arcs_of: Vec<Vec<u32>>,
    /// Per node, its breadth-first level (`u32::MAX`: unreached, or a dead end).
    level: Vec<u32>,
    /// Per node, the next arc the depth-first search tries.
    next_arc: Vec<usize>,
}

impl Residual {
    pub(super) fn new(nodes: usize) -> Residual {
        Residual {
            to: Vec::new(),
            capacity: Vec::new(),
            residual: Vec::new(),
            arcs_of: vec![Vec::new(); nodes],
            level: vec![0; nodes],
            next_arc: vec![0; nodes],
        }
    }

    pub(super) fn add(&mut self, a: usize, b: usize, capacity: u32) {
        let id = self.to.len() as u32;
        self.to.extend([b as u32, a as u32]);
        self.capacity.extend([capacity, 0]);
        self.arcs_of[a].push(id);
        self.arcs_of[b].push(id + 1);
    }

    /// Arcs (not counting reverses).
    pub(super) fn arcs(&self) -> usize {
        self.to.len() / 2
    }

    /// Removes the last `count` arcs added (and their reverses).
    pub(super) fn remove_last(&mut self, count: usize) {
        for _ in 0..count {
            let b = self.to.pop().expect("an arc") as usize;
            let a = self.to.pop().expect("an arc") as usize;
            self.capacity.truncate(self.to.len());
            self.arcs_of[a].pop();
            self.arcs_of[b].pop();
        }
    }

    /// The maximum flow from `source` to `sink` (Dinic), or `limit + 1` once it exceeds
    /// `limit`. The residual network stays for [`Residual::reaches`].
    pub(super) fn max_flow(&mut self, source: usize, sink: usize, limit: u32) -> u32 {
        self.residual.clear();
        self.residual.extend_from_slice(&self.capacity);
        let mut flow = 0u32;
        let nodes = self.arcs_of.len();
        let mut queue = Vec::with_capacity(nodes);
        let mut path: Vec<u32> = Vec::new();
        loop {
            // Levels by breadth-first search over arcs with room left.
            self.level.fill(u32::MAX);
            self.level[source] = 0;
            queue.clear();
            queue.push(source as u32);
            let mut head = 0;
            while head < queue.len() {
                let u = queue[head] as usize;
                head += 1;
                for &e in &self.arcs_of[u] {
                    let v = self.to[e as usize] as usize;
                    if self.residual[e as usize] > 0 && self.level[v] == u32::MAX {
                        self.level[v] = self.level[u] + 1;
                        queue.push(v as u32);
                    }
                }
            }
            if self.level[sink] == u32::MAX {
                return flow;
            }
            self.next_arc.fill(0);
            // Blocking flow by depth-first search with current-arc pointers.
            path.clear();
            let mut u = source;
            loop {
                if u == sink {
                    let push = path
                        .iter()
                        .map(|&e| self.residual[e as usize])
                        .min()
                        .unwrap_or(0);
                    for &e in &path {
                        self.residual[e as usize] -= push;
                        self.residual[e as usize ^ 1] += push;
                    }
                    flow = flow.saturating_add(push);
                    if flow > limit {
                        return limit + 1;
                    }
                    // Back to the tail of the first saturated arc.
                    let cut = path
                        .iter()
                        .position(|&e| self.residual[e as usize] == 0)
                        .unwrap_or(0);
                    path.truncate(cut);
                    u = path
                        .last()
                        .map_or(source, |&e| self.to[e as usize] as usize);
                    continue;
                }
                let mut advanced = false;
                while self.next_arc[u] < self.arcs_of[u].len() {
                    let e = self.arcs_of[u][self.next_arc[u]] as usize;
                    let v = self.to[e] as usize;
                    if self.residual[e] > 0 && self.level[v] == self.level[u] + 1 {
                        path.push(e as u32);
                        u = v;
                        advanced = true;
                        break;
                    }
                    self.next_arc[u] += 1;
                }
                if advanced {
                    continue;
                }
                // A dead end: retreat.
                self.level[u] = u32::MAX;
                match path.pop() {
                    None => break,
                    Some(e) => {
                        u = self.to[e as usize ^ 1] as usize;
                        self.next_arc[u] += 1;
                    }
                }
            }
        }
    }

    /// After [`Residual::max_flow`]: what the residual network reaches from `source`
    /// (`forward`), or what reaches `sink` in it.
    pub(super) fn reaches(&self, from: usize, forward: bool) -> Vec<bool> {
        let mut seen = vec![false; self.arcs_of.len()];
        seen[from] = true;
        let mut stack = vec![from];
        while let Some(u) = stack.pop() {
            for &e in &self.arcs_of[u] {
                let e = e as usize;
                let v = self.to[e] as usize;
                let room = if forward {
                    self.residual[e]
                } else {
                    self.residual[e ^ 1]
                };
                if room > 0 && !seen[v] {
                    seen[v] = true;
                    stack.push(v);
                }
            }
        }
        seen
    }
}
