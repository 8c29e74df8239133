//! `schedlab-cost`: the static cost model of the code `schedlab-backend` compiles — per CPU
//! model a recurrence and a resource bound (this module), the schedule simulation ([`sim`]),
//! the llvm-mca adapter ([`mca`]) and hand-written reference loops costed beside the compiled
//! ones ([`reference`]). The experiments that measured the model's figures, with their probe
//! files, are `crates/cost/experiments/` (its `README.md`); the tests that guard the model's
//! behaviour are `crates/cost/tests/`.
//!
//! schedlab's own static cost of a hot loop: a **recurrence bound** from the loop's machine
//! code and a **resource bound** from its size, per CPU model; the loop's spills and reloads.
//!
//! **The graph.** The hot loop is the one [`crate::mca::hot_loop`] hands to llvm-mca (the
//! disassembled machine code, one iteration, starting at the loop header). Every instruction
//! is a node; an edge `u → v` means `v` cannot start before `u`'s result is ready:
//!
//! - a register (or the flags) written by `u` and read by `v`; when `v` reads it before any
//!   instruction of the body writes it, the edge comes from the body's *last* writer and has
//!   distance 1 (it crosses the back edge);
//! - a store to a stack slot and a later load of the same slot (`[sp + k]`: the spill → reload
//!   dependence llvm-mca drops by default), distance 1 when the load comes first in the body.
//!
//! An edge weighs `lat(u)` (the producer's latency from [`models`]), plus the load-to-use
//! latency when the register is an address operand of a load in `v`; a store → load edge weighs
//! the model's store-forwarding latency (from the store's data being ready to the reload's
//! value being ready; the store and the pure load themselves cost 0 on the chain). Register
//! moves cost 0 on cores that eliminate them at rename ([`models::CoreModel::eliminates_moves`]),
//! zero idioms (`xor %eax, %eax`) have no inputs.
//!
//! **The bounds.** The recurrence bound is the graph's maximum cycle ratio ([`ratio`]): cycles
//! per iteration that no amount of parallel hardware beats. The resource bound is
//! `max(issue slots / issue width, ALU instructions / ALU ports, port-group bound)` (moves
//! eliminated at rename and branches need no ALU; a compare fused with its conditional branch
//! takes one slot, a store with an indexed address two on Intel cores, which un-laminate it).
//! The port-group bound ([`ports`], x86 cores) is the busiest set of execution ports: for every
//! port set, the uops that can only run there divided by its size (shifts and rotates on
//! Intel's ports 0 and 6, multiplies on port 1, loads, store data, …). The bound reported is the larger of the two. Without a loop
//! (straight-line code) the figures are those of runs back to back, each run's inputs the
//! previous run's outputs — what llvm-mca measures on the same code, so the two compare; one
//! run's critical path is reported apart ([`LoopBound::one_run_latency`]).
//!
//! **Approximations** (each makes the bound lower, i.e. still a bound, or is stated):
//! every instruction of the loop body counts once per iteration even if the body holds a
//! conditional side path (the built-in kernels' hot loops are straight-line after bounds-check
//! elimination); only stack-slot memory dependences are linked (the kernels' other stores go
//! to addresses no later load of the same iteration window reads); ports other than the
//! integer ALUs are modelled for the x86 cores only (the port-group bound); of the
//! fusions only compare + conditional branch is (as one issue slot), of the un-laminations
//! only indexed stores' (loads with an indexed operand are rarer in the kernels' loops).
//! riscv64 has no latency table: no bound is computed for it (s390x has z15's, [`models`]).
//! Floating-point and SIMD operations have their own latency classes and pipes
//! ([`models::FpModel`]); a load feeding a float register is costed with the integer
//! load-to-use latency (LLVM's Zen 4 model gives float loads 7–8 cycles), so a float reload on
//! a chain is under-costed, which keeps the bound a floor. Hot code that makes calls is not
//! costed ([`crate::mca::McaError::Calls`]): a call costs what its callee does.

#![deny(missing_docs)]

mod aarch64;
pub mod mca;
pub mod models;
pub mod ports;
pub mod ratio;
pub mod reference;
mod s390x;
pub mod sim;
mod x86;

use crate::mca::{DisasmInst, HotLoop, McaError, calls_error, hot_loop};
use models::CoreModel;
use ratio::{RatioEdge, RatioError, longest_acyclic_path, max_cycle_ratio};
use schedlab_backend::compile::Compiled;
use schedlab_backend::target::Target;
use std::collections::HashMap;

/// A register (numbered per target) or the condition flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Loc {
    /// A register.
    Reg(u16),
    /// The condition flags.
    Flags,
}

/// Which memory an access touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum MemRef {
    /// `[sp + offset]`: a spill slot or an explicit stack slot.
    Stack(i64),
    /// Anything else (not linked: see the module docs).
    Other,
}

/// A memory operand's address as written: base and index registers (the index with its
/// scale) and displacement. Two accesses with the same registers, holding the same values,
/// touch the same 64 bytes when their displacements are less than 64 apart (\[UICA\]'s
/// abstract address for paired stores, [`sim::SimOptions::paired_stores`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Address {
    /// Base register.
    pub base: Option<u16>,
    /// Index register and scale.
    pub index: Option<(u16, u8)>,
    /// Displacement.
    pub disp: i64,
}

/// Latency class of an instruction's computation (its memory part is costed separately).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpClass {
    /// Simple integer operation.
    Alu,
    /// Slow-form ALU operation (x86 three-component `lea`, AArch64 shifted operand).
    AluComplex,
    /// x86 `lea` with a scaled index (slower than the other slow forms on Golden Cove).
    LeaScaled,
    /// Register-to-register move.
    Move,
    /// Clears a register without reading it.
    ZeroIdiom,
    /// Multiply.
    Mul,
    /// Multiply producing the high half.
    MulHigh,
    /// Divide.
    Div,
    /// A pure load or store: the memory access is the whole instruction.
    MemOnly,
    /// A branch or no-op.
    Branch,
    /// Not understood: costed as an ALU operation.
    Other,
    /// Floating-point add, subtract, minimum or maximum.
    FpAdd,
    /// Floating-point multiply.
    FpMul,
    /// Fused multiply-add.
    FpFma,
    /// Floating-point divide or square root.
    FpDiv,
    /// Conversion between integer and floating point or between widths; rounding.
    FpCvt,
    /// Other floating-point/SIMD work: logic, shuffles, negation, compares, transfers between
    /// register files.
    FpMisc,
}

impl OpClass {
    /// Whether the class runs on the floating-point/SIMD pipes rather than the integer ALUs.
    pub fn is_fp(self) -> bool {
        matches!(
            self,
            OpClass::FpAdd
                | OpClass::FpMul
                | OpClass::FpFma
                | OpClass::FpDiv
                | OpClass::FpCvt
                | OpClass::FpMisc
        )
    }
}

/// What one instruction reads, writes and accesses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Effects {
    pub class: OpClass,
    /// Data inputs.
    pub reads: Vec<Loc>,
    /// Address inputs of a memory operand.
    pub addr_reads: Vec<Loc>,
    /// Outputs.
    pub writes: Vec<Loc>,
    /// Memory read.
    pub load: Option<MemRef>,
    /// Memory written.
    pub store: Option<MemRef>,
    /// The written operand's address, where the target's parser records it (x86).
    pub store_address: Option<Address>,
}

impl Effects {
    fn new(class: OpClass) -> Self {
        Self {
            class,
            reads: Vec::new(),
            addr_reads: Vec::new(),
            writes: Vec::new(),
            load: None,
            store: None,
            store_address: None,
        }
    }
}

/// The static bound of one loop on one core model.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopBound {
    /// The core model's name.
    pub cpu: &'static str,
    /// Longest loop-carried dependence cycle, cycles per iteration.
    pub recurrence: f64,
    /// Throughput bound, cycles per iteration: the largest of issue slots / issue width, ALU
    /// operations / ALU ports and the port-group bound [`LoopBound::ports`].
    pub resource: f64,
    /// Port-group bound ([`ports::port_bound`]), cycles per iteration (0 where the core has
    /// no port layout: the AArch64 models).
    pub ports: f64,
    /// The port set that attains [`LoopBound::ports`] (e.g. `["p0", "p6"]`).
    pub port_group: Vec<&'static str>,
    /// Instructions on the critical cycle (text), in order.
    pub critical: Vec<String>,
    /// Straight-line code only: the critical path of one run (from its inputs to its last
    /// result), which is a latency, not the back-to-back throughput [`LoopBound::bound`] and
    /// llvm-mca give; `None` for a loop.
    pub one_run_latency: Option<f64>,
}

impl LoopBound {
    /// `max(recurrence, resource)`: no core of this kind runs an iteration faster.
    pub fn bound(&self) -> f64 {
        self.recurrence.max(self.resource)
    }
}

/// Spill-slot traffic of the hot loop, per iteration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopSpills {
    /// Stores to stack slots.
    pub spills: usize,
    /// Loads from stack slots (including x86 load-operate forms).
    pub reloads: usize,
}

/// Why no bound was computed.
#[derive(Debug, thiserror::Error)]
pub enum CostError {
    /// Extracting the loop failed (llvm-objdump missing or its output not understood).
    #[error(transparent)]
    Loop(#[from] McaError),
    /// The target has no latency table.
    #[error("no latency table for {0} (x86_64, aarch64 and s390x are modelled)")]
    NoModel(Target),
    /// The CPU is not modelled for the target.
    #[error("no latency table for CPU `{cpu}` on {target}; modelled: {}", valid.join(", "))]
    UnknownCpu {
        /// The CPU asked for.
        cpu: String,
        /// The target.
        target: Target,
        /// The CPUs modelled.
        valid: Vec<&'static str>,
    },
    /// The dependence graph had no valid cycle ratio.
    #[error("dependence graph: {0}")]
    Graph(#[from] RatioError),
}

/// Splits `mnemonic operands` into the mnemonic and its top-level comma-separated operands
/// (commas inside `(…)`, `[…]` and `{…}` do not split).
pub(crate) fn split_operands(text: &str) -> (&str, Vec<&str>) {
    schedlab_backend::stats::split_operands(text, true)
}

pub(crate) use schedlab_backend::stats::parse_imm;

fn decode(target: Target, text: &str) -> Option<Effects> {
    match target {
        Target::X86_64 => Some(x86::effects(text)),
        Target::Aarch64 => Some(aarch64::effects(text)),
        Target::S390x => Some(s390x::effects(text)),
        Target::Riscv64 => None,
    }
}

/// The loop body in execution order: from the header to the end, then what precedes it.
fn iteration_order(body: &HotLoop) -> Vec<&DisasmInst> {
    let (after, before): (Vec<&DisasmInst>, Vec<&DisasmInst>) =
        body.insts.iter().partition(|i| i.addr >= body.header);
    after.into_iter().chain(before).collect()
}

/// What one hot loop's instructions do, independent of the core model: decoded once for
/// the bounds and simulations on every core of its target.
struct DecodedLoop<'a> {
    body: &'a HotLoop,
    /// The instructions in iteration order ([`iteration_order`]).
    order: Vec<&'a DisasmInst>,
    /// What each does, `None` where the target has no decoder.
    effects: Option<Vec<Effects>>,
    /// [`fused_compares`] of `effects`.
    fused_compares: Vec<usize>,
    /// x86_64: the uops of each instruction ([`x86::uops`]; empty on other targets).
    x86_uops: Vec<Vec<ports::UopClass>>,
    /// x86_64 loops: the small 64-bit immediate adds ([`sim::is_small_immediate_add64`]).
    immediate_adds: Vec<usize>,
    /// x86_64 loops: [`back_edge`].
    back_edge: Option<usize>,
}

impl<'a> DecodedLoop<'a> {
    fn new(target: Target, body: &'a HotLoop) -> Self {
        let order = iteration_order(body);
        let effects: Option<Vec<Effects>> = order.iter().map(|i| decode(target, &i.text)).collect();
        let fused_compares = effects.as_deref().map(fused_compares).unwrap_or_default();
        let x86 = target == Target::X86_64;
        let x86_uops = if x86 {
            order.iter().map(|i| x86::uops(&i.text)).collect()
        } else {
            Vec::new()
        };
        let (immediate_adds, back_edge) = if x86 && body.is_loop {
            (
                (0..order.len())
                    .filter(|&i| sim::is_small_immediate_add64(&order[i].text))
                    .collect(),
                back_edge(&order, body.header, &fused_compares),
            )
        } else {
            (Vec::new(), None)
        };
        DecodedLoop {
            body,
            order,
            effects,
            fused_compares,
            x86_uops,
            immediate_adds,
            back_edge,
        }
    }
}

/// Everything schedlab's own model says about one hot loop.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopCost {
    /// Whether a loop was found (else: straight-line code, figures per run).
    pub is_loop: bool,
    /// Instructions in one iteration.
    pub insts: usize,
    /// Spill-slot traffic per iteration.
    pub spills: LoopSpills,
    /// The bound on each modelled core of the target (empty for riscv64).
    pub bounds: Vec<LoopBound>,
    /// The schedule simulation ([`sim`]) on each core that has a window and a port layout (the
    /// x86_64 cores), cycles per iteration; empty unless [`loop_cost_simulated`] computed it.
    pub simulated: Vec<(&'static str, f64)>,
}

impl LoopCost {
    /// What schedlab leads with for `cpu`: the simulated schedule where the core has one,
    /// never under the core's bound (the simulation counts whole cycles, so its figure can
    /// round a fraction of a cycle under a fractional bound: the bound is then taken), else
    /// the bound.
    pub fn lead(&self, cpu: &str) -> Option<f64> {
        let bound = self
            .bounds
            .iter()
            .find(|b| b.cpu == cpu)
            .map(LoopBound::bound)?;
        Some(
            self.simulated
                .iter()
                .find(|(c, _)| *c == cpu)
                .map_or(bound, |&(_, s)| s.max(bound)),
        )
    }
}

/// [`LoopCost`] of `compiled`'s hot loop without the simulation (disassembles once; a few
/// milliseconds): the bounds and the spill counts.
pub fn loop_cost(compiled: &Compiled) -> Result<LoopCost, CostError> {
    cost_of(compiled, false)
}

/// [`loop_cost`] with the schedule simulation on every core that has one
/// ([`LoopCost::simulated`], what [`LoopCost::lead`] leads with): up to ≈0.1 s more for a
/// 3 000-instruction loop.
pub fn loop_cost_simulated(compiled: &Compiled) -> Result<LoopCost, CostError> {
    cost_of(compiled, true)
}

/// [`loop_cost_simulated`] of each of `compiled`, in order: the same figures and errors, the
/// functions disassembled together ([`crate::mca::disassemble_all`]: one llvm-objdump process
/// per target instead of one per function).
pub fn loop_costs_simulated(compiled: &[&Compiled]) -> Vec<Result<LoopCost, CostError>> {
    costs_of(compiled, true)
}

/// [`loop_cost`] of each of `compiled`, in order: the figures of [`loop_costs_simulated`]
/// without the simulation.
pub fn loop_costs(compiled: &[&Compiled]) -> Vec<Result<LoopCost, CostError>> {
    costs_of(compiled, false)
}

fn costs_of(compiled: &[&Compiled], simulate: bool) -> Vec<Result<LoopCost, CostError>> {
    crate::mca::costable_hot_loops(compiled)
        .into_iter()
        .zip(compiled)
        .map(|(body, c)| cost_of_body(c, body?, simulate))
        .collect()
}

fn cost_of(compiled: &Compiled, simulate: bool) -> Result<LoopCost, CostError> {
    cost_of_body(compiled, hot_loop(compiled)?, simulate)
}

fn cost_of_body(compiled: &Compiled, body: HotLoop, simulate: bool) -> Result<LoopCost, CostError> {
    if let Some(e) = calls_error(&body) {
        return Err(e.into());
    }
    let decoded = DecodedLoop::new(compiled.target, &body);
    let bounds = models::core_models(compiled.target)
        .map(|m| bound_of_decoded(compiled.target, &decoded, m))
        .collect::<Result<_, _>>()?;
    let simulated = if simulate {
        models::core_models(compiled.target)
            .filter_map(|m| {
                let options = sim::SimOptions::cited(m.name);
                simulated_of_decoded(compiled.target, &decoded, m, options).map(|s| (m.name, s))
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(LoopCost {
        is_loop: body.is_loop,
        insts: body.insts.len(),
        spills: hot_code_spills(compiled, body.is_loop, || {
            spills_of_decoded(compiled.target, &decoded)
        }),
        bounds,
        simulated,
    })
}

/// The bound of `compiled`'s hot loop on the core model `cpu`.
pub fn loop_bound(compiled: &Compiled, cpu: &str) -> Result<LoopBound, CostError> {
    let target = compiled.target;
    let model = models::core_model(target, cpu).ok_or_else(|| CostError::UnknownCpu {
        cpu: cpu.to_string(),
        target,
        valid: models::core_models(target).map(|m| m.name).collect(),
    })?;
    let body = hot_loop(compiled)?;
    if let Some(e) = calls_error(&body) {
        return Err(e.into());
    }
    bound_of(target, &body, model)
}

/// Spill stores and reloads in one iteration of `compiled`'s hot loop (for straight-line code,
/// in one run: the function's own counts).
pub fn loop_spills(compiled: &Compiled) -> Result<LoopSpills, CostError> {
    let body = hot_loop(compiled)?;
    Ok(hot_code_spills(compiled, body.is_loop, || {
        spills_of(compiled.target, &body)
    }))
}

/// [`spills_of`] for a loop (`in_loop` counts them); without one the hot code is the whole
/// function, prologue and epilogue included, whose saves and restores of callee-saved registers
/// are stack accesses but not spills: the function's allocator counts
/// ([`schedlab_backend::stats::code_stats`]) are taken.
fn hot_code_spills(
    compiled: &Compiled,
    is_loop: bool,
    in_loop: impl FnOnce() -> LoopSpills,
) -> LoopSpills {
    if is_loop {
        return in_loop();
    }
    let stats = schedlab_backend::stats::code_stats(compiled);
    LoopSpills {
        spills: stats.spills,
        reloads: stats.reloads,
    }
}

/// [`spills_of`] of a loop already decoded: the same counts, from its effects where the
/// target has a decoder.
fn spills_of_decoded(target: Target, decoded: &DecodedLoop<'_>) -> LoopSpills {
    let Some(effects) = &decoded.effects else {
        return spills_of(target, decoded.body);
    };
    let mut out = LoopSpills::default();
    for fx in effects {
        out.spills += usize::from(matches!(fx.store, Some(MemRef::Stack(_))));
        out.reloads += usize::from(matches!(fx.load, Some(MemRef::Stack(_))));
    }
    out
}

/// [`loop_spills`] of an already extracted loop. On x86_64, AArch64 and s390x every access to
/// a stack slot (`[sp + k]`, `k(%r15)`) in the loop counts (the hot loops hold no explicit
/// stack slots); on riscv64 (`k(sp)`) the same rule is applied textually.
pub fn spills_of(target: Target, body: &HotLoop) -> LoopSpills {
    let mut out = LoopSpills::default();
    for inst in &body.insts {
        let (load, store) = match decode(target, &inst.text) {
            Some(fx) => (
                matches!(fx.load, Some(MemRef::Stack(_))),
                matches!(fx.store, Some(MemRef::Stack(_))),
            ),
            None => textual_stack_access(target, &inst.text),
        };
        out.spills += usize::from(store);
        out.reloads += usize::from(load);
    }
    out
}

/// `(reload, spill)` for a target without a decoder (riscv64; s390x before it had one), from
/// the mnemonic and a stack-pointer operand.
fn textual_stack_access(target: Target, text: &str) -> (bool, bool) {
    let (m, ops) = split_operands(text);
    let sp = match target {
        Target::S390x => "(%r15)",
        _ => "(sp)",
    };
    if ops.len() != 2 || !ops[1].ends_with(sp) {
        return (false, false);
    }
    let store = match target {
        Target::S390x => m.starts_with("st") && !m.starts_with("stm"),
        _ => m.starts_with('s') || m.starts_with("fs"),
    };
    let load = match target {
        Target::S390x => {
            m.starts_with('l') && !matches!(m, "la" | "lay" | "larl" | "lmg" | "lm" | "lmy")
        }
        _ => m.starts_with('l') || m.starts_with("fl"),
    };
    (load, store)
}

pub(crate) fn latency(model: &CoreModel, class: OpClass) -> f64 {
    match class {
        OpClass::Alu | OpClass::Other => model.alu,
        OpClass::AluComplex => model.alu_complex,
        OpClass::LeaScaled => model.lea_scaled,
        OpClass::Move => model.reg_move,
        OpClass::ZeroIdiom | OpClass::MemOnly | OpClass::Branch => 0.0,
        OpClass::Mul => model.mul,
        OpClass::MulHigh => model.mul_high,
        OpClass::Div => model.div,
        OpClass::FpAdd => model.fp.add,
        OpClass::FpMul => model.fp.mul,
        OpClass::FpFma => model.fp.fma,
        OpClass::FpDiv => model.fp.div,
        OpClass::FpCvt => model.fp.cvt,
        OpClass::FpMisc => model.fp.misc,
    }
}

/// The dependence graph of one iteration (see the module docs).
pub(crate) struct DepGraph {
    /// Node count (one per instruction).
    pub nodes: usize,
    /// The edges.
    pub edges: Vec<RatioEdge>,
}

/// The producer of `key` (a location or a stack slot) and its iteration distance: the last one
/// so far in this iteration (`so_far`, distance 0), else the last one in the whole body
/// (`whole_body`, from the previous iteration: distance 1).
pub(crate) fn producer<K: std::hash::Hash + Eq, D: From<u8>>(
    key: &K,
    so_far: &HashMap<K, usize>,
    whole_body: &HashMap<K, usize>,
) -> Option<(usize, D)> {
    so_far
        .get(key)
        .map(|&u| (u, D::from(0)))
        .or_else(|| whole_body.get(key).map(|&u| (u, D::from(1))))
}

/// Builds the graph of `effects` (one iteration, in execution order) for `model`.
pub(crate) fn dependence_graph(effects: &[Effects], model: &CoreModel) -> DepGraph {
    let lat: Vec<f64> = effects.iter().map(|fx| latency(model, fx.class)).collect();
    // Last writer of each location / store to each slot, over the whole body (for edges that
    // cross the back edge) and as the walk goes (inside the iteration).
    let mut last_writer: HashMap<Loc, usize> = HashMap::new();
    let mut last_store: HashMap<i64, usize> = HashMap::new();
    for (i, fx) in effects.iter().enumerate() {
        for &w in &fx.writes {
            last_writer.insert(w, i);
        }
        if let Some(MemRef::Stack(k)) = fx.store {
            last_store.insert(k, i);
        }
    }
    let mut writer: HashMap<Loc, usize> = HashMap::new();
    let mut store: HashMap<i64, usize> = HashMap::new();
    let mut edges = Vec::new();
    for (v, fx) in effects.iter().enumerate() {
        for loc in &fx.reads {
            if let Some((u, distance)) = producer(loc, &writer, &last_writer) {
                edges.push(RatioEdge {
                    from: u,
                    to: v,
                    latency: lat[u],
                    distance,
                });
            }
        }
        let address_delay = if fx.load.is_some() { model.load } else { 0.0 };
        for loc in &fx.addr_reads {
            if let Some((u, distance)) = producer(loc, &writer, &last_writer) {
                edges.push(RatioEdge {
                    from: u,
                    to: v,
                    latency: lat[u] + address_delay,
                    distance,
                });
            }
        }
        if let Some(MemRef::Stack(k)) = fx.load
            && let Some((u, distance)) = producer(&k, &store, &last_store)
        {
            edges.push(RatioEdge {
                from: u,
                to: v,
                latency: lat[u] + model.store_forward,
                distance,
            });
        }
        for &w in &fx.writes {
            writer.insert(w, v);
        }
        if let Some(MemRef::Stack(k)) = fx.store {
            store.insert(k, v);
        }
    }
    DepGraph {
        nodes: effects.len(),
        edges,
    }
}

/// The bound of an extracted loop on `model` (no external tool involved).
pub fn bound_of(target: Target, body: &HotLoop, model: &CoreModel) -> Result<LoopBound, CostError> {
    bound_of_decoded(target, &DecodedLoop::new(target, body), model)
}

/// [`bound_of`] of a loop already decoded.
fn bound_of_decoded(
    target: Target,
    decoded: &DecodedLoop<'_>,
    model: &CoreModel,
) -> Result<LoopBound, CostError> {
    let (body, order) = (decoded.body, &decoded.order);
    let effects = decoded
        .effects
        .as_deref()
        .ok_or(CostError::NoModel(target))?;
    let graph = dependence_graph(effects, model);
    // Straight-line code is costed as llvm-mca costs it: run back to back, each run's inputs
    // the previous run's outputs (the same graph as a loop's), so the two figures measure the
    // same thing; one run's latency is kept apart ([`LoopBound::one_run_latency`]).
    let (recurrence, critical) = match max_cycle_ratio(graph.nodes, &graph.edges)? {
        Some(cycle) => {
            let texts = cycle
                .edges
                .iter()
                .map(|&e| order[graph.edges[e].to].text.clone())
                .collect();
            (cycle.ratio, texts)
        }
        None => (0.0, Vec::new()),
    };
    let one_run_latency = if body.is_loop {
        None
    } else {
        Some(longest_acyclic_path(graph.nodes, &graph.edges)?)
    };
    // Issue slots: a conditional branch right after the flag-setting ALU instruction it tests
    // is fused with it (x86 macro-fusion; Arm cores fuse `cmp` + `b.cond` likewise), so the
    // pair takes one slot; counting it twice would lift the floor above what the core can do.
    let fused_compares = &decoded.fused_compares;
    let fused = fused_compares.len();
    // An indexed store (`[base + index]`) is un-laminated into two slots on Intel cores.
    let unlaminated = if model.unlaminates_indexed_stores {
        effects
            .iter()
            .filter(|fx| fx.store.is_some() && fx.addr_reads.len() >= 2)
            .count()
    } else {
        0
    };
    let moves_fused = fused_moves(order, effects, fused_compares, model).len();
    let insts = (effects.len() - fused - moves_fused + unlaminated) as f64;
    // s390x compares execute on the FXb units, not on the FXa units `alu_ports` counts
    // (models.rs, [LLVM-Z15], [GCC-Z15]).
    let compare_off_alu = |fx: &Effects| target == Target::S390x && fx.writes == [Loc::Flags];
    let alu_ops = effects
        .iter()
        .filter(|fx| match fx.class {
            _ if compare_off_alu(fx) => false,
            OpClass::Branch | OpClass::ZeroIdiom => false,
            OpClass::Move => !model.eliminates_moves,
            OpClass::MemOnly => false,
            class => !class.is_fp(),
        })
        .count() as f64;
    let fp_ops = effects.iter().filter(|fx| fx.class.is_fp()).count() as f64;
    let port = port_group_bound(target, decoded, effects, model);
    let resource = (insts / model.issue_width)
        .max(alu_ops / model.alu_ports)
        .max(fp_ops / model.fp.ports)
        .max(port.cycles);
    Ok(LoopBound {
        cpu: model.name,
        recurrence,
        resource,
        ports: port.cycles,
        port_group: port.ports,
        critical,
        one_run_latency,
    })
}

/// Indices of the flag-setting ALU instructions that a directly following conditional branch
/// tests: decoded as one fused uop with the branch.
fn fused_compares(effects: &[Effects]) -> Vec<usize> {
    effects
        .windows(2)
        .enumerate()
        .filter(|(_, w)| {
            w[1].class == OpClass::Branch
                && w[1].reads.contains(&Loc::Flags)
                && matches!(w[0].class, OpClass::Alu)
                && w[0].writes.contains(&Loc::Flags)
                && w[0].load.is_none()
        })
        .map(|(i, _)| i)
        .collect()
}

/// Indices of the register moves that `model` allocates in one slot with the instruction right
/// after them ([`models::CoreModel::move_fusion_queue`], [EXP-MOVOP] in `models.rs`): a plain
/// `mov` between registers followed by one of the ALU operations of [`x86::fuses_after_move`]
/// (not itself fused with a branch) that reads and writes the move's destination.
fn fused_moves(
    order: &[&DisasmInst],
    effects: &[Effects],
    fused_compares: &[usize],
    model: &CoreModel,
) -> Vec<usize> {
    let slots = effects.len() - fused_compares.len();
    if slots > model.move_fusion_queue || model.target != Target::X86_64 {
        return Vec::new();
    }
    (0..effects.len().saturating_sub(1))
        .filter(|&i| {
            let (mv, op) = (&effects[i], &effects[i + 1]);
            let dest = match mv.writes.as_slice() {
                [d @ Loc::Reg(_)] => *d,
                _ => return false,
            };
            let text = &order[i + 1].text;
            mv.class == OpClass::Move
                && op.class == OpClass::Alu
                && op.load.is_none()
                && op.store.is_none()
                && !op.reads.contains(&Loc::Flags)
                && op.reads.contains(&dest)
                && op.writes.contains(&dest)
                && x86::fuses_after_move(text)
                && !fused_compares.contains(&(i + 1))
        })
        .collect()
}

/// The schedule simulation ([`sim`], its cited mechanisms: [`sim::SimOptions::cited`]) of an
/// extracted x86_64 loop on `model`: cycles per
/// iteration, `None` where the core has no port layout or the loop cannot be read.
pub fn simulated(target: Target, body: &HotLoop, model: &CoreModel) -> Option<f64> {
    simulated_with(target, body, model, sim::SimOptions::cited(model.name))
}

/// [`simulated`] with only the mechanisms of `options` (to show what each one does).
pub fn simulated_with(
    target: Target,
    body: &HotLoop,
    model: &CoreModel,
    options: sim::SimOptions,
) -> Option<f64> {
    if target != Target::X86_64 || !body.is_loop {
        return None;
    }
    simulated_of_decoded(target, &DecodedLoop::new(target, body), model, options)
}

/// [`simulated_with`] of a loop already decoded.
fn simulated_of_decoded(
    target: Target,
    decoded: &DecodedLoop<'_>,
    model: &CoreModel,
    options: sim::SimOptions,
) -> Option<f64> {
    if target != Target::X86_64 || !decoded.body.is_loop {
        return None;
    }
    let effects = decoded.effects.as_deref()?;
    let fused = &decoded.fused_compares;
    let moves = fused_moves(&decoded.order, effects, fused, model);
    let fusion = sim::Fusion {
        compares: fused,
        moves: &moves,
        taken_branch: decoded.back_edge,
    };
    sim::simulate_cached(
        effects,
        &decoded.x86_uops,
        fusion,
        &decoded.immediate_adds,
        model,
        options,
    )
}

/// The instruction (iteration order) whose uop is the loop's back edge: the branch whose
/// target is the loop header, or the compare fused with it; `None` if no branch names it.
fn back_edge(order: &[&DisasmInst], header: u64, fused_compares: &[usize]) -> Option<usize> {
    let branch = order
        .iter()
        .position(|inst| crate::mca::branch_target(Target::X86_64, inst) == Some(header))?;
    Some(match branch.checked_sub(1) {
        Some(compare) if fused_compares.contains(&compare) => compare,
        _ => branch,
    })
}

/// The port-group bound of one iteration on `model`'s port layout (x86 cores only): the
/// uops of every instruction, a compare fused with its branch counted as the branch's uop.
fn port_group_bound(
    target: Target,
    decoded: &DecodedLoop<'_>,
    effects: &[Effects],
    model: &CoreModel,
) -> ports::PortBound {
    let fused_compares = &decoded.fused_compares;
    let layout = match (target, ports::port_layout(model.name)) {
        (Target::X86_64, Some(layout)) => layout,
        _ => {
            return ports::PortBound {
                cycles: 0.0,
                ports: Vec::new(),
                uops: 0,
            };
        }
    };
    // `fused_compares` is in ascending order.
    let fused = |i: usize| fused_compares.binary_search(&i).is_ok();
    let uops = decoded.x86_uops.iter().enumerate().flat_map(|(i, u)| {
        let mut u = u.clone();
        if fused(i) {
            // The fused pair issues and executes as one uop of the branch's kind.
            u.retain(|c| *c != ports::UopClass::Alu);
            u.push(sim::fused_branch_class(&effects[i]));
        }
        if i > 0 && fused(i - 1) {
            u.retain(|c| *c != ports::UopClass::Branch);
        }
        u
    });
    ports::port_bound(layout, uops)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hot loop of `lines`, one instruction each, 4 bytes apart (also used by `sim`'s tests).
    pub(super) fn body(_target: Target, lines: &[&str]) -> HotLoop {
        HotLoop::from_lines(lines)
    }

    fn model(name: &str) -> &'static CoreModel {
        models::MODELS
            .iter()
            .find(|m| m.name == name)
            .expect("model exists")
    }

    /// Each `(line, count)` of `groups` `count` times, then `tail`.
    fn repeated<'a>(groups: &[(&'a str, usize)], tail: &[&'a str]) -> Vec<&'a str> {
        groups
            .iter()
            .flat_map(|&(line, count)| std::iter::repeat_n(line, count))
            .chain(tail.iter().copied())
            .collect()
    }

    /// The bound of the loop of `lines` on the core model `cpu`.
    fn bound_on(target: Target, lines: &[&str], cpu: &str) -> LoopBound {
        bound_of(target, &body(target, lines), model(cpu)).expect("bound")
    }

    #[test]
    fn the_back_edge_is_the_branch_to_the_header() {
        let insts = |lines: &[(u64, &str)]| -> Vec<DisasmInst> {
            lines
                .iter()
                .map(|&(addr, text)| DisasmInst {
                    addr,
                    text: text.to_string(),
                })
                .collect()
        };
        // A rotated loop: the header at 0x10, the back edge fused with its compare.
        let rotated = insts(&[
            (0x0, "addq %rbx, %rax"),
            (0x4, "cmpq %rcx, %rax"),
            (0x8, "jl 0x10"),
            (0xc, "jmp 0x40"),
            (0x10, "addq $1, %rcx"),
            (0x14, "testq %rdx, %rdx"),
            (0x18, "jne 0x0"),
        ]);
        let order: Vec<&DisasmInst> = rotated.iter().collect();
        let effects: Vec<Effects> = order.iter().map(|i| x86::effects(&i.text)).collect();
        let fused = fused_compares(&effects);
        assert_eq!(back_edge(&order, 0x10, &fused), Some(1));
        // The same loop entered at 0x0: `jne 0x0` closes it, fused with its `test`.
        assert_eq!(back_edge(&order, 0x0, &fused), Some(5));
        assert_eq!(back_edge(&order, 0x20, &fused), None);
    }

    #[test]
    fn a_move_and_the_op_on_its_destination_share_a_slot_in_small_golden_cove_loops() {
        // `lines` + 10 nops + dec/jnz, as a loop: its resource bound on `cpu`.
        let resource = |lines: &[&str], cpu: &str| {
            let mut all = lines.to_vec();
            all.extend(["nop"; 10]);
            all.extend(["decq %r15", "jne 0x0"]);
            bound_of(Target::X86_64, &body(Target::X86_64, &all), model(cpu))
                .expect("bound")
                .resource
        };
        // 13 slots (2.17 cycles at 6 a cycle), 12 with the pair fused ([EXP-MOVOP]: 2.00).
        let pair = ["movq %r11, %rdx", "subq %r9, %rdx"];
        assert!((resource(&pair, "sapphirerapids") - 2.0).abs() < 1e-9);
        let mut lines = pair.to_vec();
        lines.extend(["nop"; 10]);
        lines.extend(["decq %r15", "jne 0x0"]);
        let small = body(Target::X86_64, &lines);
        assert_eq!(
            simulated(Target::X86_64, &small, model("sapphirerapids")),
            Some(2.0)
        );
        // Zen 4 has no such fusion in the model.
        assert!((resource(&pair, "znver4") - 13.0 / 6.0).abs() < 1e-9);
        // Not fused: another destination, a nop between, `imul`, `cmp`, `movslq`, `adc`, `%cl`.
        for other in [
            &["movq %r11, %rdx", "subq %r9, %rbx"][..],
            &["movq %r11, %rdx", "nop", "subq %r9, %rdx"][..],
            &["movq %r11, %rdx", "imulq %r9, %rdx"][..],
            &["movq %r11, %rdx", "cmpq %r9, %rdx"][..],
            &["movslq %r11d, %rdx", "subq %r9, %rdx"][..],
            &["movq %r11, %rdx", "adcq %r9, %rdx"][..],
            &["movq %r11, %rdx", "shrq %cl, %rdx"][..],
        ] {
            // One slot per instruction: the block's entries (and the fused dec/jnz) ÷ 6.
            let unfused = (other.len() + 11) as f64 / 6.0;
            let r = resource(other, "sapphirerapids");
            assert!((r - unfused).abs() < 1e-9, "{other:?}: {r}");
        }
        // A loop beyond the 72-entry uop queue gains nothing.
        let mut big: Vec<&str> = Vec::new();
        for _ in 0..10 {
            big.extend(["movl %r11d, %edx", "rorl $0x6, %edx"]);
            big.extend(["nop"; 10]);
        }
        assert!((resource(&big[..110], "sapphirerapids") - 121.0 / 6.0).abs() < 1e-9);
    }

    #[test]
    fn a_carried_chain_costs_its_latencies() {
        // eax: add (1) -> lea complex (3 on Skylake) -> rol (1) = 5 per iteration.
        let b = body(
            Target::X86_64,
            &[
                "addl %ecx, %eax",
                "leal 0x10(%rax,%rdx), %eax",
                "roll $0x7, %eax",
                "cmpq %rsi, %rdi",
                "jb 0x0",
            ],
        );
        let got = bound_of(Target::X86_64, &b, model("skylake")).expect("bound");
        assert!((got.recurrence - 5.0).abs() < 1e-9, "{got:?}");
        let zen = bound_of(Target::X86_64, &b, model("znver3")).expect("bound");
        assert!((zen.recurrence - 4.0).abs() < 1e-9, "{zen:?}");
    }

    #[test]
    fn float_chains_cost_each_cores_float_latencies() {
        // acc = acc * x + 1.0: a multiply and an add on the carried chain, on every target.
        let loops = [
            (
                Target::X86_64,
                vec![
                    "vmulsd %xmm1, %xmm0, %xmm0",
                    "vaddsd %xmm2, %xmm0, %xmm0",
                    "decq %rdi",
                    "jne 0x0",
                ],
            ),
            (
                Target::Aarch64,
                vec![
                    "fmul d0, d0, d1",
                    "fadd d0, d0, d2",
                    "subs x0, x0, #1",
                    "b.ne 0x0",
                ],
            ),
            (
                Target::S390x,
                vec!["mdbr %f0, %f2", "adbr %f0, %f4", "brctg %r2, 0x0"],
            ),
        ];
        for (target, lines) in loops {
            let b = body(target, &lines);
            for m in models::core_models(target) {
                let got = bound_of(target, &b, m).expect("bound");
                let want = m.fp.mul + m.fp.add;
                assert!((got.recurrence - want).abs() < 1e-9, "{}: {got:?}", m.name);
                assert!((got.bound() - want).abs() < 1e-9, "{}: {got:?}", m.name);
            }
        }
        // Zen 4: 3 + 3 (the integer model's 1 + 1 before floating point had its own table).
        let zen = bound_of(
            Target::X86_64,
            &body(Target::X86_64, &loops_x86_fma()),
            model("znver4"),
        )
        .expect("bound");
        assert!((zen.recurrence - 4.0).abs() < 1e-9, "{zen:?}");
    }

    /// `acc = fma(acc, x, y)`: the accumulator is read by the fused multiply-add.
    fn loops_x86_fma() -> Vec<&'static str> {
        vec!["vfmadd213sd %xmm2, %xmm1, %xmm0", "decq %rdi", "jne 0x0"]
    }

    #[test]
    fn float_operations_leave_the_flags_and_the_integer_alus_alone() {
        // The compare's flags reach the branch past a float add; 12 float adds and the loop
        // counter: the adds go to the float pipes (Zen 4: 2 add pipes, 12 / 2 = 6 cycles), not
        // the four integer ALUs.
        let mut lines: Vec<&str> = vec!["vaddsd %xmm1, %xmm2, %xmm3"; 12];
        lines.extend(["cmpq %rsi, %rdi", "vaddsd %xmm4, %xmm5, %xmm6", "jne 0x0"]);
        let b = body(Target::X86_64, &lines);
        let zen = bound_of(Target::X86_64, &b, model("znver4")).expect("bound");
        assert!((zen.ports - 6.5).abs() < 1e-9, "{zen:?}");
        assert_eq!(zen.port_group, vec!["FP2", "FP3"]);
        let effects: Vec<Effects> = lines.iter().map(|l| x86::effects(l)).collect();
        assert!(effects[13].writes.iter().all(|w| *w != Loc::Flags));
        let skl = bound_of(Target::X86_64, &b, model("skylake")).expect("bound");
        // Skylake adds on p0/p1: 13 / 2.
        assert!((skl.ports - 6.5).abs() < 1e-9, "{skl:?}");
    }

    #[test]
    fn straight_line_code_is_costed_back_to_back_with_one_runs_latency_apart() {
        // No value flows from one run to the next: runs overlap, the bound is a throughput
        // (Zen 4: two `imul`s on ALU1 = 2 cycles a run), as llvm-mca costs such code; one run's
        // critical path (lea 1 + imul 3 to the last imul's start) is kept apart.
        let mut b = body(
            Target::X86_64,
            &[
                "leal (%rdi,%rsi), %eax",
                "imull %eax, %eax",
                "imull %eax, %eax",
                "retq",
            ],
        );
        b.is_loop = false;
        let zen = bound_of(Target::X86_64, &b, model("znver4")).expect("bound");
        assert_eq!(zen.one_run_latency, Some(4.0), "{zen:?}");
        assert!(zen.recurrence.abs() < 1e-9, "{zen:?}");
        assert!((zen.bound() - 2.0).abs() < 1e-9, "{zen:?}");
        // A value carried from run to run is a recurrence, as in a loop.
        let mut carried = body(Target::X86_64, &["imull %esi, %eax", "retq"]);
        carried.is_loop = false;
        let zen = bound_of(Target::X86_64, &carried, model("znver4")).expect("bound");
        assert!((zen.recurrence - 3.0).abs() < 1e-9, "{zen:?}");
        // Loops have no one-run figure.
        let looped = body(Target::X86_64, &["imull %esi, %eax", "jmp 0x0"]);
        let zen = bound_of(Target::X86_64, &looped, model("znver4")).expect("bound");
        assert_eq!(zen.one_run_latency, None);
    }

    #[test]
    fn a_spill_on_the_chain_adds_store_forwarding() {
        let plain = body(Target::X86_64, &["addl %ecx, %eax", "jmp 0x0"]);
        let spilled = body(
            Target::X86_64,
            &[
                "movl 0x8(%rsp), %eax",
                "addl %ecx, %eax",
                "movl %eax, 0x8(%rsp)",
                "jmp 0x0",
            ],
        );
        let m = model("skylake");
        let a = bound_of(Target::X86_64, &plain, m).expect("bound");
        let b = bound_of(Target::X86_64, &spilled, m).expect("bound");
        assert!((a.recurrence - m.alu).abs() < 1e-9);
        assert!(
            (b.recurrence - (m.alu + m.store_forward)).abs() < 1e-9,
            "{b:?}"
        );
        let counts = spills_of(Target::X86_64, &spilled);
        assert_eq!((counts.spills, counts.reloads), (1, 1));
    }

    #[test]
    fn eliminated_moves_cost_nothing_elsewhere_one() {
        let lines = ["mov w8, w9", "add w9, w8, #1", "b 0x0"];
        let b = body(Target::Aarch64, &lines);
        let a72 = bound_of(Target::Aarch64, &b, model("cortex-a72")).expect("bound");
        let v2 = bound_of(Target::Aarch64, &b, model("neoverse-v2")).expect("bound");
        assert!((a72.recurrence - 2.0).abs() < 1e-9, "{a72:?}");
        assert!((v2.recurrence - 1.0).abs() < 1e-9, "{v2:?}");
    }

    #[test]
    fn the_resource_bound_counts_issue_slots() {
        let lines = repeated(&[("addl %ecx, %edx", 7)], &["jmp 0x0"]);
        let got = bound_on(Target::X86_64, &lines, "skylake");
        // 8 instructions / 4 wide = 2; 7 ALU ops / 4 ports = 1.75; recurrence 7.
        assert!((got.resource - 2.0).abs() < 1e-9, "{got:?}");
        assert!((got.bound() - 7.0).abs() < 1e-9);
        // A compare fused with its branch takes one slot: 6 adds + cmp/jb = 7 slots, not 8.
        let lines = repeated(&[("addl %ecx, %edx", 6)], &["cmpq %rsi, %rdi", "jb 0x0"]);
        let fused = bound_on(Target::X86_64, &lines, "skylake");
        assert!((fused.resource - 7.0 / 4.0).abs() < 1e-9, "{fused:?}");
    }

    #[test]
    fn indexed_stores_take_two_slots_on_skylake_only() {
        // 11 instructions, the last a jump: 12 slots with the indexed store un-laminated
        // (Skylake, [INT-UNL]), 11 on Golden Cove ([EXP-UNL]) and Zen (one macro-op).
        // (5 ALU operations: the issue slots, not the ALU ports, bound it on every core.)
        let lines = repeated(
            &[("addl %ecx, %edx", 5), ("movl 0x10(%rsi), %r8d", 4)],
            &["movl %r9d, (%rdi,%rax,4)", "jmp 0x0"],
        );
        let skl = bound_on(Target::X86_64, &lines, "skylake");
        assert!((skl.resource - 12.0 / 4.0).abs() < 1e-9, "{skl:?}");
        for cpu in ["sapphirerapids", "znver4"] {
            let other = bound_on(Target::X86_64, &lines, cpu);
            assert!(
                (other.resource - 11.0 / 6.0).abs() < 1e-9,
                "{cpu}: {other:?}"
            );
        }
        // A base + displacement store stays one slot.
        let plain = repeated(
            &[("addl %ecx, %edx", 5), ("movl 0x10(%rsi), %r8d", 4)],
            &["movl %r9d, 0x8(%rsp)", "jmp 0x0"],
        );
        let skl = bound_on(Target::X86_64, &plain, "skylake");
        assert!((skl.resource - 11.0 / 4.0).abs() < 1e-9, "{skl:?}");
    }

    #[test]
    fn a_loop_of_rotates_is_bound_by_two_ports() {
        // 12 independent rotates and the back edge: issue 13/6 ≈ 2.2 on Golden Cove, ALU 12/5
        // = 2.4, but rotates run on ports 0 and 6 only: (12 + the branch) / 2 = 6.5.
        let lines: Vec<&str> = ["rorxl $0x6, %eax, %ebx", "rorxl $0xb, %ecx, %edx"]
            .into_iter()
            .cycle()
            .take(12)
            .chain(std::iter::once("jmp 0x0"))
            .collect();
        let b = body(Target::X86_64, &lines);
        for cpu in ["skylake", "sapphirerapids"] {
            let got = bound_of(Target::X86_64, &b, model(cpu)).expect("bound");
            assert!((got.ports - 6.5).abs() < 1e-9, "{cpu}: {got:?}");
            assert_eq!(got.port_group, vec!["p0", "p6"], "{cpu}");
            assert!((got.bound() - 6.5).abs() < 1e-9, "{cpu}: {got:?}");
        }
        // Zen 3/4: rotates on ALU1/ALU2, the branch elsewhere: 12 / 2 = 6.
        let zen = bound_of(Target::X86_64, &b, model("znver4")).expect("bound");
        assert!((zen.ports - 6.0).abs() < 1e-9, "{zen:?}");
        // AArch64 cores have no port layout: the port term is 0 and changes nothing.
        let arm = body(Target::Aarch64, &["ror w1, w2, #6", "b 0x0"]);
        let a72 = bound_of(Target::Aarch64, &arm, model("cortex-a72")).expect("bound");
        assert_eq!(a72.ports, 0.0);
        assert!(a72.port_group.is_empty());
    }

    #[test]
    fn mixed_classes_bind_on_the_busiest_port_group() {
        // 4 imul (p1) + 4 shifts (p06) + 4 adds + a fused compare/branch on Skylake: p1 alone
        // 4, p06 (4 + 1) / 2 = 2.5, all ALU ports (4 + 4 + 4 + 1) / 4 = 3.25 → 4 on p1.
        let lines = repeated(
            &[
                ("imull %esi, %edi", 4),
                ("shrl $0x3, %ecx", 4),
                ("addl %r8d, %r9d", 4),
            ],
            &["cmpq %rsi, %rdx", "jb 0x0"],
        );
        let skl = bound_on(Target::X86_64, &lines, "skylake");
        assert!((skl.ports - 4.0).abs() < 1e-9, "{skl:?}");
        assert_eq!(skl.port_group, vec!["p1"]);
        // Stores: a store-data port each on Skylake (1), two on Golden Cove.
        let stores = repeated(&[("movl %eax, 0x8(%rdi)", 6)], &["jmp 0x0"]);
        let skl = bound_on(Target::X86_64, &stores, "skylake");
        assert!((skl.ports - 6.0).abs() < 1e-9, "{skl:?}");
        let spr = bound_on(Target::X86_64, &stores, "sapphirerapids");
        assert!((spr.ports - 3.0).abs() < 1e-9, "{spr:?}");
    }

    /// Asserts that the z15 model bounds the s390x loop `lines` by a recurrence of `want`
    /// cycles.
    fn assert_z15_recurrence(lines: &[&str], want: f64) {
        let b = body(Target::S390x, lines);
        let got = bound_of(Target::S390x, &b, model("z15")).expect("bound");
        assert!((got.recurrence - want).abs() < 1e-9, "{got:?}");
    }

    #[test]
    fn s390x_chains_cost_their_z15_latencies() {
        let m = model("z15");
        // r3: ark (1) -> rll (1) -> msgr (multiply) per iteration; the compare is off the chain.
        assert_z15_recurrence(
            &[
                "ark %r3, %r4, %r3",
                "rll %r3, %r3, 7",
                "msgr %r3, %r5",
                "aghi %r6, -1",
                "cghi %r6, 0",
                "jghe 0x0",
            ],
            2.0 * m.alu + m.mul,
        );
        // The 128-bit multiply reads the odd half of its pair: mlgr -> lgr -> mlgr.
        assert_z15_recurrence(
            &["mlgr %r2, %r9", "lgr %r3, %r2", "jg 0x0"],
            m.mul_high + m.reg_move,
        );
    }

    #[test]
    fn s390x_compares_take_no_fxa_slot() {
        // 4 adds + 1 compare + branch: 4 FXa operations on 2 units = 2 cycles (not 2.5).
        let lines = repeated(&[("agr %r2, %r3", 4)], &["cghi %r5, 0", "jghe 0x0"]);
        let got = bound_on(Target::S390x, &lines, "z15");
        assert!((got.resource - 2.0).abs() < 1e-9, "{got:?}");
    }

    #[test]
    fn an_s390x_spill_on_the_chain_adds_store_forwarding() {
        let spilled = [
            "lg %r3, 184(%r15)",
            "agr %r3, %r4",
            "stg %r3, 184(%r15)",
            "jg 0x0",
        ];
        let m = model("z15");
        assert_z15_recurrence(&spilled, m.alu + m.store_forward);
        let counts = spills_of(Target::S390x, &body(Target::S390x, &spilled));
        assert_eq!((counts.spills, counts.reloads), (1, 1));
        // A different slot, or an indexed access off %r15, is no dependence.
        let apart = body(
            Target::S390x,
            &[
                "lg %r3, 184(%r15)",
                "agr %r3, %r4",
                "stg %r3, 192(%r15)",
                "lg %r5, 0(%r2,%r15)",
                "jg 0x0",
            ],
        );
        let got = bound_of(Target::S390x, &apart, m).expect("bound");
        assert!(got.recurrence < m.alu + m.store_forward, "{got:?}");
    }

    #[test]
    fn odd_text_never_panics() {
        let odd = [
            "",
            " ",
            "]x[",
            "ldr w1, ]sp[",
            "str",
            "movl (",
            "movl )(",
            "leal",
            "addl ,,",
            "b.ne",
            "ldp w1, w2, [x3], #",
            "mulq",
            "jmp *",
            "é, ü(",
            "ldr x1, [sp, #é]",
            "rll %r3, %r3,",
            "stg %r1, (",
            "l %r1, 8(%r99)",
            "mlgr",
            "mlgr %r15, %r1",
            "dsgr %r16, %r1",
            "lmg %r14, %r6, 0(%r15)",
            "stmg %v31, %r0, 0(%r15)",
            "lm %f3, %r1, x",
            "risbg %r1, %r2, 0, 0x",
            "cgrjhe",
            "brasl %r14,",
            "a %r1, é(%r15)",
            "srlg %r1, %r2, 3(",
            "locgrhe",
            "st %r1, 0(,%r15)",
        ];
        for text in odd {
            for target in [Target::X86_64, Target::Aarch64, Target::S390x] {
                let _ = decode(target, text);
            }
            let _ = x86::uops(text);
            let _ = textual_stack_access(Target::S390x, text);
        }
        // A whole loop of unknown and malformed instructions still gets a bound per core.
        let lines: Vec<&str> = odd
            .iter()
            .copied()
            .chain(["vfoo %zmm1, %zmm2", "jmp 0x0"])
            .collect();
        let b = body(Target::X86_64, &lines);
        for m in models::core_models(Target::X86_64) {
            let got = bound_of(Target::X86_64, &b, m).expect("bound");
            assert!(got.ports.is_finite() && got.ports >= 0.0, "{got:?}");
            // The simulation reads the same loop without panicking, at or over the bound.
            if let Some(sim) = simulated(Target::X86_64, &b, m) {
                assert!(sim.is_finite() && sim + 1.0 > got.bound(), "{sim} {got:?}");
            }
        }
    }

    #[test]
    fn targets_without_tables_are_errors() {
        let b = body(Target::Riscv64, &["addw a0, a0, a1"]);
        assert!(matches!(
            bound_of(Target::Riscv64, &b, model("skylake")),
            Err(CostError::NoModel(Target::Riscv64))
        ));
        let counts = spills_of(
            Target::Riscv64,
            &body(
                Target::Riscv64,
                &["sd a4, 8(sp)", "ld a5, 8(sp)", "lw a0, 4(a1)"],
            ),
        );
        assert_eq!((counts.spills, counts.reloads), (1, 1));
    }
}
