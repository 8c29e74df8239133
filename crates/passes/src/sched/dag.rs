//! The dependence DAG of one block (`DepDag`), built with petgraph.
//!
//! Nodes are the block's instructions in source order, so every edge goes from a lower to a
//! higher index and source order is a topological order. Edges:
//!
//! * **data** — an SSA value defined in the block and used later in it, weighted by the
//!   producer's latency from the [`MachineModel`];
//! * **memory** — a store and a later access that may alias it (read-after-write,
//!   write-after-read, write-after-write). Two accesses may alias unless they carry different
//!   alias regions; a load with the `readonly` flag reads memory nobody writes while the
//!   function runs, so it never depends on a store (Cranelift's own meaning of the flag);
//! * **order** — instructions that may trap keep their order among themselves and with every
//!   store; no load or store moves above an earlier instruction that may trap (a bounds check
//!   expressed as `trapnz` guards the accesses after it); calls, fences, atomics and other side
//!   effects are barriers for every effectful instruction;
//! * **terminator** — every instruction precedes the block's terminator.
//!
//! Bounds checks that branch (the Java-literal kernels' `brif` to an exception exit) end their
//! block, and the scheduler never moves an instruction across blocks, so a guarded access can
//! never rise above such a check either.

use super::latency::MachineModel;
use super::pressure::sort_dedup_tail;
use crate::bce::recognize::for_each_operand;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{
    AliasRegion, Block, Function, Inst, InstructionData, Opcode, Value, ValueDef,
};
use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use std::fmt;

/// Index of a node in a [`DepDag`]: the instruction's position in the block's source order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The node's position in source order.
    pub fn index(self) -> usize {
        self.0 as usize
    }
    fn graph(self) -> NodeIndex<u32> {
        NodeIndex::new(self.index())
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

/// Why one instruction must precede another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeKind {
    /// The later instruction uses a value the earlier one defines.
    Data,
    /// A load after a store that may write what it reads.
    MemReadAfterWrite,
    /// A store after a load that may read what it overwrites.
    MemWriteAfterRead,
    /// Two stores that may write the same memory.
    MemWriteAfterWrite,
    /// Trap and side-effect ordering (including guards before the accesses they protect).
    Order,
    /// Everything precedes the terminator.
    Terminator,
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EdgeKind::Data => "data",
            EdgeKind::MemReadAfterWrite => "memory RAW",
            EdgeKind::MemWriteAfterRead => "memory WAR",
            EdgeKind::MemWriteAfterWrite => "memory WAW",
            EdgeKind::Order => "order",
            EdgeKind::Terminator => "terminator",
        })
    }
}

/// One dependence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepEdge {
    /// Why.
    pub kind: EdgeKind,
    /// Cycles the later instruction waits after the earlier one issues.
    pub latency: u32,
}

/// What an instruction does to memory and control, as far as ordering is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// No memory access, cannot trap, no side effect.
    Pure,
    /// Reads memory.
    Load {
        /// Alias region; `None` may alias every region.
        region: Option<AliasRegion>,
        /// Reads memory that is not written while the function runs.
        readonly: bool,
        /// May trap (no `notrap` flag).
        traps: bool,
    },
    /// Writes memory.
    Store {
        /// Alias region; `None` may alias every region.
        region: Option<AliasRegion>,
        /// May trap.
        traps: bool,
    },
    /// May trap but touches no memory (`trapnz`, `udiv`, …).
    Trap,
    /// Call, fence, atomic or another side effect: ordered with everything effectful.
    Barrier,
}

/// Which memory some code may write, gathered from its instructions' [`Effect`]s.
#[derive(Default)]
pub struct Writes {
    everything: bool,
    regions: rustc_hash::FxHashSet<cranelift_codegen::ir::AliasRegion>,
}

impl Writes {
    /// Records what an instruction with effect `effect` may write.
    pub fn note(&mut self, effect: Effect) {
        match effect {
            Effect::Barrier | Effect::Store { region: None, .. } => self.everything = true,
            Effect::Store {
                region: Some(r), ..
            } => {
                self.regions.insert(r);
            }
            _ => {}
        }
    }

    /// Whether a load of `region` (or a `readonly` one) reads memory nothing noted writes.
    pub fn never_written(
        &self,
        region: Option<cranelift_codegen::ir::AliasRegion>,
        readonly: bool,
    ) -> bool {
        readonly || region.is_some_and(|r| !self.everything && !self.regions.contains(&r))
    }
}

impl Effect {
    /// Classifies `inst`.
    pub fn of(func: &Function, inst: Inst) -> Effect {
        let data = &func.dfg.insts[inst];
        let opcode = data.opcode();
        let flags = data.memflags_data(&func.dfg);
        let region = flags.and_then(|f| f.alias_region());
        // An access without flags (stack slots) cannot trap.
        let mem_traps = flags.is_some_and(|f| f.trap_code().is_some());
        let is_plain_access = matches!(
            data,
            InstructionData::Load { .. } | InstructionData::Store { .. }
        );
        if opcode.is_call()
            || opcode.other_side_effects()
            || matches!(
                opcode,
                Opcode::AtomicRmw
                    | Opcode::AtomicCas
                    | Opcode::AtomicLoad
                    | Opcode::AtomicStore
                    | Opcode::Fence
                    | Opcode::Debugtrap
            )
            || ((opcode.can_load() || opcode.can_store()) && !is_plain_access)
        {
            Effect::Barrier
        } else if opcode.can_store() {
            Effect::Store {
                region,
                traps: mem_traps,
            }
        } else if opcode.can_load() {
            Effect::Load {
                region,
                readonly: flags.is_some_and(|f| f.readonly()),
                traps: mem_traps,
            }
        } else if opcode.can_trap() {
            Effect::Trap
        } else {
            Effect::Pure
        }
    }

    /// Whether the instruction may trap.
    pub fn traps(self) -> bool {
        match self {
            Effect::Load { traps, .. } | Effect::Store { traps, .. } => traps,
            Effect::Trap | Effect::Barrier => true,
            Effect::Pure => false,
        }
    }

    fn is_access(self) -> bool {
        matches!(self, Effect::Load { .. } | Effect::Store { .. })
    }
}

fn may_alias(a: Option<AliasRegion>, b: Option<AliasRegion>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// The ordering constraint between an earlier instruction with effect `a` and a later one with
/// effect `b`, if any.
pub fn ordering(a: Effect, b: Effect) -> Option<EdgeKind> {
    use Effect::*;
    if a == Pure || b == Pure {
        return None;
    }
    if a == Barrier || b == Barrier {
        return Some(EdgeKind::Order);
    }
    // Traps keep their order among themselves and with stores; nothing that accesses memory
    // rises above a possible trap (it may be the guard of that access).
    if a.traps() && (b.traps() || b.is_access()) {
        return Some(EdgeKind::Order);
    }
    if matches!(a, Store { .. }) && b.traps() {
        return Some(EdgeKind::Order);
    }
    match (a, b) {
        (Store { region: ra, .. }, Store { region: rb, .. }) if may_alias(ra, rb) => {
            Some(EdgeKind::MemWriteAfterWrite)
        }
        (
            Store { region: ra, .. },
            Load {
                region: rb,
                readonly: false,
                ..
            },
        ) if may_alias(ra, rb) => Some(EdgeKind::MemReadAfterWrite),
        (
            Load {
                region: ra,
                readonly: false,
                ..
            },
            Store { region: rb, .. },
        ) if may_alias(ra, rb) => Some(EdgeKind::MemWriteAfterRead),
        _ => None,
    }
}

/// One node: an instruction with its effect and latency.
#[derive(Clone, Copy, Debug)]
pub struct DepNode {
    /// The instruction.
    pub inst: Inst,
    /// Its effect class.
    pub effect: Effect,
    /// Its latency on the model the DAG was built for.
    pub latency: u32,
}

/// The dependence DAG of one block.
#[derive(Clone, Debug)]
pub struct DepDag {
    block: Block,
    graph: DiGraph<DepNode, DepEdge, u32>,
    terminator: Option<NodeId>,
    heights: Vec<u32>,
    depths: Vec<u32>,
    /// The block's instructions in source order.
    insts: Vec<Inst>,
    /// Per node, flat: the distinct values its instruction reads (alias-resolved, sorted);
    /// node `i`'s are `operands[operand_start[i]..operand_start[i + 1]]`.
    operands: Vec<Value>,
    operand_start: Vec<u32>,
    /// See [`DepDag::external_uses`].
    external: Vec<Value>,
}

impl DepDag {
    /// Builds the DAG of `block` in `func` with `model`'s latencies.
    pub fn build(func: &Function, block: Block, model: &MachineModel) -> DepDag {
        let mut index = SecondaryMap::with_capacity(func.dfg.num_insts());
        index.resize(func.dfg.num_insts());
        Self::build_with(
            func,
            block,
            model,
            |v| func.dfg.resolve_aliases(v),
            &mut index,
        )
    }

    /// [`DepDag::build`] of every block in `blocks`, for a function whose operands name values
    /// directly (aliases resolved), as the scheduler's are after rematerialisation. One
    /// instruction index serves all the blocks.
    pub(crate) fn build_all_resolved(
        func: &Function,
        blocks: &[Block],
        model: &MachineModel,
    ) -> Vec<DepDag> {
        let mut index = SecondaryMap::with_capacity(func.dfg.num_insts());
        index.resize(func.dfg.num_insts());
        blocks
            .iter()
            .map(|&block| Self::build_with(func, block, model, |v| v, &mut index))
            .collect()
    }

    /// Builds the DAG with `index`, a map from instruction to position + 1 that is all
    /// zero on entry and left so.
    fn build_with(
        func: &Function,
        block: Block,
        model: &MachineModel,
        resolve: impl Fn(Value) -> Value,
        index: &mut SecondaryMap<Inst, u32>,
    ) -> DepDag {
        let insts: Vec<Inst> = func.layout.block_insts(block).collect();
        // Data edges (about two per node) and one edge per node to the terminator.
        let mut graph = DiGraph::with_capacity(insts.len(), insts.len() * 4);
        for (i, &inst) in insts.iter().enumerate() {
            let id = graph.add_node(DepNode {
                inst,
                effect: Effect::of(func, inst),
                latency: model.latency(func, inst),
            });
            debug_assert_eq!(id.index(), i);
            index[inst] = i as u32 + 1;
        }
        let terminator = insts
            .last()
            .filter(|&&i| func.dfg.insts[i].opcode().is_terminator())
            .map(|_| NodeId(insts.len() as u32 - 1));

        let mut effectful: Vec<NodeId> = Vec::new();
        let mut producers: Vec<NodeId> = Vec::new();
        let mut external: Vec<Value> = Vec::new();
        let mut operands: Vec<Value> = Vec::with_capacity(insts.len() * 2);
        let mut operand_start: Vec<u32> = Vec::with_capacity(insts.len() + 1);
        operand_start.push(0);
        for (j, &inst) in insts.iter().enumerate() {
            let to = NodeId(j as u32);
            // Data edges, one per producer.
            producers.clear();
            let first_operand = operands.len();
            for_each_operand(func, inst, |v| {
                let v = resolve(v);
                operands.push(v);
                match func.dfg.value_def(v) {
                    ValueDef::Result(def, _) => match index[def].checked_sub(1).map(NodeId) {
                        Some(from) => {
                            if from < to && !producers.contains(&from) {
                                producers.push(from);
                            }
                        }
                        None => external.push(v),
                    },
                    ValueDef::Param(home, _) if home == block => {}
                    _ => external.push(v),
                }
            });
            sort_dedup_tail(&mut operands, first_operand);
            operand_start.push(operands.len() as u32);
            for &from in &producers {
                let latency = graph[from.graph()].latency;
                graph.add_edge(
                    from.graph(),
                    to.graph(),
                    DepEdge {
                        kind: EdgeKind::Data,
                        latency,
                    },
                );
            }
            // Memory and ordering edges.
            let effect = graph[to.graph()].effect;
            if effect != Effect::Pure && Some(to) != terminator {
                for &from in &effectful {
                    let earlier: DepNode = graph[from.graph()];
                    if let Some(kind) = ordering(earlier.effect, effect) {
                        let latency = if kind == EdgeKind::MemReadAfterWrite {
                            earlier.latency
                        } else {
                            0
                        };
                        graph.add_edge(from.graph(), to.graph(), DepEdge { kind, latency });
                    }
                }
                effectful.push(to);
            }
        }
        for &inst in &insts {
            index[inst] = 0;
        }
        if let Some(term) = terminator {
            for i in 0..term.0 {
                graph.add_edge(
                    NodeIndex::new(i as usize),
                    term.graph(),
                    DepEdge {
                        kind: EdgeKind::Terminator,
                        latency: 0,
                    },
                );
            }
        }

        // Heights (critical path to the block's end) and depths (earliest start), using that
        // source order is topological.
        let n = insts.len();
        let mut heights = vec![0u32; n];
        for i in (0..n).rev() {
            let node = NodeIndex::new(i);
            let own = graph[node].latency;
            heights[i] = graph
                .edges_directed(node, Direction::Outgoing)
                .map(|e| e.weight().latency + heights[e.target().index()])
                .max()
                .unwrap_or(0)
                .max(own);
        }
        let mut depths = vec![0u32; n];
        for i in 0..n {
            let node = NodeIndex::new(i);
            depths[i] = graph
                .edges_directed(node, Direction::Incoming)
                .map(|e| depths[e.source().index()] + e.weight().latency)
                .max()
                .unwrap_or(0);
        }
        DepDag {
            block,
            graph,
            terminator,
            heights,
            depths,
            insts,
            operands,
            operand_start,
            external,
        }
    }

    /// The values the block's instructions read that the block does not define (neither a
    /// result of one of its instructions nor one of its parameters), once per read, in
    /// source order: what liveness propagates to the predecessors
    /// ([`crate::sched::Liveness`]).
    pub(crate) fn external_uses(&self) -> &[Value] {
        &self.external
    }

    /// The block's instructions in source order (node `i` is `insts()[i]`).
    pub fn insts(&self) -> &[Inst] {
        &self.insts
    }

    /// The distinct values each node reads, flat: node `i`'s are
    /// `values[starts[i]..starts[i + 1]]` (alias-resolved, sorted).
    pub(crate) fn operand_lists(&self) -> (&[Value], &[u32]) {
        (&self.operands, &self.operand_start)
    }

    /// The block.
    pub fn block(&self) -> Block {
        self.block
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    /// Whether the block has no instructions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }

    /// All nodes in source order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.len() as u32).map(NodeId)
    }

    /// The node's data.
    pub fn node(&self, n: NodeId) -> &DepNode {
        &self.graph[n.graph()]
    }

    /// The node's instruction.
    pub fn inst(&self, n: NodeId) -> Inst {
        self.node(n).inst
    }

    /// The node of an instruction of this block (a search through the block).
    pub fn node_of(&self, inst: Inst) -> Option<NodeId> {
        self.insts
            .iter()
            .position(|&i| i == inst)
            .map(|i| NodeId(i as u32))
    }

    /// The block's terminator, if its last instruction is one.
    pub fn terminator(&self) -> Option<NodeId> {
        self.terminator
    }

    /// Longest latency-weighted path from the node to the end of the block.
    pub fn height(&self, n: NodeId) -> u32 {
        self.heights[n.index()]
    }

    /// Longest latency-weighted path from the block's start to the node.
    pub fn depth(&self, n: NodeId) -> u32 {
        self.depths[n.index()]
    }

    /// Whether the node is a load.
    pub fn is_load(&self, n: NodeId) -> bool {
        matches!(self.node(n).effect, Effect::Load { .. })
    }

    /// Successors with their edges.
    pub fn succs(&self, n: NodeId) -> impl Iterator<Item = (NodeId, DepEdge)> + '_ {
        self.graph
            .edges_directed(n.graph(), Direction::Outgoing)
            .map(|e| (NodeId(e.target().index() as u32), *e.weight()))
    }

    /// Predecessors with their edges.
    pub fn preds(&self, n: NodeId) -> impl Iterator<Item = (NodeId, DepEdge)> + '_ {
        self.graph
            .edges_directed(n.graph(), Direction::Incoming)
            .map(|e| (NodeId(e.source().index() as u32), *e.weight()))
    }

    /// Every edge as (from, to, edge).
    pub fn edges(&self) -> impl Iterator<Item = (NodeId, NodeId, DepEdge)> + '_ {
        self.graph.edge_references().map(|e| {
            (
                NodeId(e.source().index() as u32),
                NodeId(e.target().index() as u32),
                *e.weight(),
            )
        })
    }

    /// Users of the node through data edges, in source order.
    pub fn data_users(&self, n: NodeId) -> Vec<NodeId> {
        let mut users: Vec<NodeId> = self
            .succs(n)
            .filter(|(_, e)| e.kind == EdgeKind::Data)
            .map(|(s, _)| s)
            .collect();
        users.sort();
        users
    }

    /// Number of cycles `order` takes on an in-order machine with the model's issue width:
    /// each instruction issues once its operands are ready and a slot is free.
    pub fn simulate(&self, order: &[NodeId], issue_width: u32) -> u32 {
        let mut ready = vec![0u32; self.len()];
        let (mut cycle, mut issued, mut end) = (0u32, 0u32, 0u32);
        for &n in order {
            let at = cycle.max(ready[n.index()]);
            if at > cycle {
                cycle = at;
                issued = 0;
            }
            for (s, e) in self.succs(n) {
                ready[s.index()] = ready[s.index()].max(at + e.latency);
            }
            end = end.max(at + self.node(n).latency);
            issued += 1;
            if issued >= issue_width.max(1) {
                cycle += 1;
                issued = 0;
            }
        }
        end
    }
}
