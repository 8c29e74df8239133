//! A cycle-by-cycle schedule of the hot loop on a model of an out-of-order core — beside the
//! bound, because `max(recurrence, resource)` assumes the recurrence and the resources overlap
//! perfectly, which a core with a finite window and ports bound early does not do.
//!
//! **The core** (every mechanism cited; [`SimOptions`] switches each off, to show its effect):
//! - *Allocation* in program order, [`CoreModel::issue_width`] fused-domain slots per cycle (a
//!   compare fused with its branch takes no slot of its own, an indexed store two on Intel
//!   cores before Golden Cove, and on Golden Cove a register move none when the next
//!   instruction is an ALU operation on its destination and the loop fits the uop queue
//!   ([`CoreModel::move_fusion_queue`], [EXP-MOVOP] in `models.rs`), as the bound counts
//!   them), into a reorder buffer of [`Window::rob`] entries and the schedulers of [`Window`]:
//!   one unified scheduler, or ([`SimOptions::split_schedulers`]) a computation scheduler and
//!   separate ones for loads/store addresses and for store data where the core has them.
//! - *Uops* ([`super::ports::UopClass`], `x86::uops`): a load part, the computation, a store's
//!   address and data parts, each with its own ports and scheduler entry; eliminated moves and
//!   zero idioms take no port and no scheduler entry (they complete at rename).
//! - *Latencies*: the computation's as in the bound (`models.rs`); a load delivers
//!   [`CoreModel::load`] cycles after it dispatches, a reload of a stack slot stored in the
//!   loop [`CoreModel::store_forward`] after the store's data (so no figure is under the
//!   bound's edge weights).
//! - *Ports* ([`SimOptions::bind_ports_at_allocation`]): a uop is bound to one port of its
//!   class when it is allocated, by the load-balancing rule Abel and Reineke's uiCA uses for
//!   the core's generation, and each cycle every port dispatches the oldest ready uop bound to
//!   it; off, the oldest ready uops take any free port of their class (the idealised choice).
//!   The loop's back edge, predicted taken, takes the ports of a taken branch (port 6 alone on
//!   Golden Cove: [BR-P6], [EXP-P6] in `ports.rs`; [`Fusion::taken_branch`]).
//! - *Issue → dispatch delay* ([`SimOptions::issue_dispatch_delay`], [`Window::dispatch_delay`]):
//!   a uop cannot dispatch earlier than that many cycles after its allocation.
//! - *Write-back conflicts* ([`SimOptions::writeback_conflicts`]): a port delivers one result
//!   per cycle, so a computation uop is not dispatched onto a port whose result bus is taken
//!   in the cycle it would finish — a 1-cycle `add` bound to port 1 waits when an `imul`
//!   dispatched there two cycles earlier returns its result ([AF-WB]; [EXP-H3]). **On for
//!   Golden Cove only** ([`SimOptions::cited`], [`Window::writeback_conflicts`], [EXP-WB]);
//!   [`SimOptions::CITED`] leaves it off for the other cores: the source documents it for
//!   Sandy Bridge and Haswell, and nothing was measured on Skylake or Zen. Without
//!   [`SimOptions::immediate_add_elimination`] it predicts 2.68 for the JIT's `mulAdd` loop
//!   measured at 2.25 on Golden Cove; with the loop's pointer step eliminated it gives 2.18,
//!   and 2.62 with the step executed, measured 2.60 (`cargo test --release --workspace --test experiments bigint_loop_asm::mul_add_loop_variants -- --ignored --nocapture`).
//! - *uiCA's rule in full* (both **off by default**, [`SimOptions::CITED`]; the rows of
//!   `scripts/regen-notes validation` with each option on): [`SimOptions::issue_slot_rule`],
//!   the issue slot of an
//!   instruction in its allocation group steering the 10-port rule and loads, store addresses
//!   and store data taking their ports in turn; [`SimOptions::late_operand_penalty`], a uop
//!   whose last operand arrives exactly at its earliest dispatch cycle or one later being
//!   ready a cycle later (\[UICA\] `Scheduler.addNewUops`, `getReadyForDispatchCycle`). Both are
//!   uiCA's Ice Lake behaviour; on Golden Cove they move SHA-256's source-order and `pressure`
//!   rows toward measurement but squareToLen's `pressure` rows and mulAdd's
//!   `latency-pressure` away, so the lead figure leaves them out.
//! - *Whole-group allocation* ([`SimOptions::whole_group_allocation`], **on for Golden Cove
//!   only**, [`Window::allocates_whole_groups`]): \[UICA\] allocates nothing in a cycle unless
//!   the reorder buffer and the scheduler have room for a whole group (`ReorderBuffer.isFull`,
//!   `Scheduler.isFull`), so a full window refills in groups, not one instruction a cycle.
//!   Golden Cove's measured window ([EXP-WIN]) and its small ALU loops ([EXP-GROUP]) fit it
//!   better than allocation into any free entry, and without it the 10-port rule's one-cycle
//!   lag puts lone ALU uops of consecutive cycles on the same port (MD5's `list-latency` row:
//!   +9.7 %). With \[UICA\]'s margin of 5 it puts SHA-256's window-limited rows 5–6 % under
//!   measurement; with Golden Cove's margin
//!   of 3 ([`PortRule::TenPort`], [EXP-GROUP]) they are within 5 %. Zen 4 keeps
//!   allocation into any free entry ([EXP-Z4A]; with whole groups 25 of its 36 rows within
//!   ±5 % instead of 31).
//! - *Immediate adds at rename* ([`SimOptions::immediate_add_elimination`],
//!   [`Window::eliminates_immediate_adds`], Golden Cove only): a 64-bit `add`/`sub` of a small
//!   immediate or `inc`/`dec` not fused with a branch is executed by the renamer — zero latency,
//!   no port, no scheduler entry, still one allocation slot ([GLC-ADD], [EXP-ADD]). It is what
//!   keeps the BigInteger loops' pointer chain `addq $-4, %r8` off the ports: bound to a port
//!   at allocation, that 1-cycle chain waited ≈1.4 cycles per link behind older ready uops, and
//!   every load hangs on it (`cargo test --release --workspace --test experiments bigint_loop_asm::mul_add_loop_variants -- --ignored --nocapture`).
//! - *Memory renaming* ([`Window::renames_memory`]): a reload of a just-stored stack slot gets
//!   the stored register's value at rename plus [`CoreModel::store_forward`] ([TD-FW],
//!   [AF-Z2], [EXP-SF]); elsewhere it waits for the store-data uop.
//! - *One uop per ALU queue per cycle* ([`SimOptions::one_uop_per_queue_per_cycle`],
//!   [`Window::single_write_queues`], Zen 4 only): allocation, in program order, stops at an
//!   instruction whose ALU uop finds every ALU queue of its ports already given a uop this
//!   cycle ([EXP-Z4A]); the binding rule picks among the queues still open.
//! - *Paired stores* ([`SimOptions::paired_stores`], [`Window::pairs_stores`], Golden Cove
//!   only): the two oldest ready store-data uops dispatch in one cycle only if they write the
//!   same 64 bytes (same base and index registers holding the same values, displacements
//!   less than 64 apart: \[UICA\]'s abstract address); otherwise the older goes alone, so
//!   stores to different lines go one a cycle ([EXP-ST]).
//! - *Registers in flight* ([`SimOptions::register_file`], [`Window::registers`], Golden Cove
//!   only): at most that many allocated, unretired instructions write an integer register or
//!   the flags (one physical register each; eliminated moves and zero idioms none), and
//!   allocation waits for retirement when they run out ([EXP-WIN]).
//! - *Retirement* in order, [`Window::retire`] fused-domain uops per cycle, once every uop of
//!   the instruction has completed.
//!
//! The front end is ideal (the hot loops fit the decoded-uop cache or the loop stream
//! detector). Enough iterations are simulated to fill the reorder buffer three times (at least
//! [`MIN_ITERATIONS`], and [`MIN_SIMULATED_INSTRUCTIONS`]); cycles per iteration are measured
//! over the middle third, an iteration's time being the dispatch of its last-dispatched uop.
//!
//! Sources, by key:
//! - **\[UICA\]** A. Abel, J. Reineke, "uiCA: Accurate Throughput Prediction of Basic Blocks on
//!   Recent Intel Microarchitectures", ICS 2022, and its source (github.com/andreas-abel/uiCA,
//!   `microArchConfigs.py`, `uiCA.py`; read for the facts, no code taken): Skylake reorder
//!   buffer 224, reservation station 97, retire width 4; Ice Lake 352 / 160 / retire 8; an
//!   issue→dispatch delay of 5 cycles on every modelled core (`issueDispatchDelay`); ports
//!   bound at issue by a load-balancing rule over the ports' pending uops (`Scheduler.addNewUops`:
//!   on the 8-port cores the least-loaded port, every second uop of an issue group the
//!   second-least-loaded unless it has 3 more pending; on the 10-port cores the ports are
//!   ranked by the pending counts of the previous cycle, ties to the higher port number, and
//!   the n-th uop of a cycle with the same port set takes the n-th of those within 5 of the
//!   least loaded — [`PortRule::TenPort`]); one uop per port per cycle, oldest first.
//! - **[LLVM-SPR]** LLVM `X86SchedSapphireRapids.td` (Intel-contributed): `MicroOpBufferSize`
//!   512 (the reorder buffer), 112 reservation-station entries for the integer ports 0/1/5/6/10,
//!   72 for the memory ports 2/3/7/8/11, 48 for store data (ports 4/9), `LoadLatency` 5.
//! - **[AMD-SOG]** AMD *Software Optimization Guide* for family 19h: Zen 3 reorder buffer 256,
//!   Zen 4 320, 4 × 24 integer scheduler entries.
//! - **[AF-WB]** Agner Fog, *The microarchitecture of Intel, AMD and VIA CPUs*, the Sandy
//!   Bridge and Haswell chapters, "write-back conflicts": µops of different latencies on one
//!   execution port cannot return their results in the same clock cycle.
//! - **[TD-FW]**, **[AF-Z2]**: as in [`super::models`] (Ice Lake's 0.58-cycle store → load
//!   round trip, Zen 2's memory mirroring).
//! - **[EXP-SF]** `crates/cost/experiments/store_forward_asm.rs` (issue 16) on this project's
//!   Emerald Rapids host: store → load → `add` through a stack slot at the `add`'s one cycle
//!   per link, i.e. the reload costs nothing on the chain.
//! - **[EXP-H3]** hand-written copies of `mulAdd`'s loop on the same host (the variants of
//!   `crates/cost/experiments/bigint_loop_asm.rs`, `cargo test --release --workspace --test experiments bigint_loop_asm::mul_add_loop_variants -- --ignored --nocapture`): the loop runs
//!   ≈3.18 cycles per word, ≈3.04 with the `imul`
//!   replaced by a no-op and the rest unchanged; it checks the mechanism, no figure is taken
//!   from it.
//!
//! - **[EXP-WB]** `bench --validate-model` on this project's Intel host with AMX
//!   (`scripts/regen-notes validation`, notes/validation-sapphirerapids.md): with write-back
//!   conflicts the simulation puts the BigInteger rows 1–4 % under measurement instead of 0–11 %
//!   (mulAdd's `latency-pressure` loop, whose carry shares port 1's result bus with the `imul`:
//!   2.18 against 2.24 measured, 2.00 without them), and leaves MD5's and SHA-256's rows
//!   unchanged; over the 160 orders of mulAdd's loop 140 come within ±5 % (124 without).
//! - **[EXP-ST]** `crates/cost/experiments/probes/glc_store_probes.txt` on this project's Intel host
//!   with AMX (the `loops_file` command of [EXP-GROUP]; medians in
//!   `glc_store_probes.measured.tsv`): pairs of stores with four `nop`s run at two stores a
//!   cycle when
//!   both write one 64-byte line (`8(%rsi)` and `16(%rsi)`: 100 cycles per 200 stores) and at
//!   one a cycle when they write two (`8(%rsi)` and `264(%rsi)`: 200), as \[UICA\]
//!   (`Scheduler.dispatchUops`, after the optimization manual's "paired stores") has it for
//!   Ice Lake.
//! - **[EXP-WIN]** `cargo test --release --workspace --test experiments window_asm:: -- --ignored
//!   --nocapture` on this project's Intel host with AMX (H. Wong's two pointer
//!   chases with `n` fillers between the misses): the misses stop overlapping at `n` ≈ 495
//!   `nop`s (reorder buffer), 245–250 register-writing `mov`s (integer registers), 108–112
//!   `lea`s reading the miss (computation scheduler), 68–70 dependent loads (memory
//!   scheduler), 44–48 dependent stores (store data): [LLVM-SPR]'s 512 / 112 / 72 / 48, with
//!   ramps that this simulation reproduces with whole-group allocation (108–112, 68–72,
//!   44–48) and not without it (a step at 114, 72, 50). `rorx` (ports 0 and 6
//!   only) and `imul` (port 1 only) reading the miss stop overlapping at 108–112 too, so the
//!   computation scheduler is one pool shared by all ALU ports, as simulated (not a queue per
//!   port, as on Zen). `addl $1` fillers (a register and the flags) stop
//!   overlapping at 245–250 and `cmpl $1` fillers (the flags only) at 255–260, like the `mov`s,
//!   so every register- or flag-writing instruction holds one of ≈ 250 registers
//!   ([`Window::registers`]); register moves of the miss at 495–500, with the reorder buffer
//!   (eliminated: no register, no scheduler entry, as simulated); units of a `lea` and a load
//!   reading the miss at 64–68 and of two `lea`s and a store at 48 — the memory and store-data
//!   limits, not the 56 and 37 a computation scheduler shared with them would give.
//! - **[GLC-ADD]** Golden Cove (Alder Lake P-core) and its successors execute 64-bit
//!   additions of small constants at rename with zero latency, not sending them to an
//!   execution unit (the answer to Stack Overflow question 79363816: add/sub/inc/dec with
//!   64-bit operand size only, ≈4 eliminations per cycle; uops.info's ADL-P `INC_R64`
//!   latency measurements, as cited in public discussion of it), and
//!   A. Ertl, "Zero-cycle constant adds" (mips.complang.tuwien.ac.at/anton/additions/,
//!   Raptor Cove: 5 dependent `addq $1` per 1.01 cycles; 10…12 of them in 11…13-uop loops at
//!   the 6-wide issue rate, faster than 5 ALU ports allow).
//! - **[EXP-ADD]** a hand-written check on this project's Emerald Rapids host
//!   (`LOOPS_FILE=$PWD/crates/cost/experiments/probes/glc_port_probes.txt cargo test --release --workspace
//!   --test experiments zen4_order_asm::loops_file -- --ignored --nocapture`): 5 dependent
//!   `addq $1` per iteration run at 1.0 cycle,
//!   `addl $1` and `addq %reg` at 5.0; 11 dependent `addq $1` plus `dec`/`jnz` at 2.00 cycles
//!   (12 slots / 6), under the 2.4 that 12 uops on 5 ALU ports would take. The immediate range
//!   −1024…1023 is a conservative reading of Ertl's loops o–s; no limit on eliminations per
//!   cycle is modelled (the simulated loops have one or two).
//!
//! - **[EXP-GROUP]** `LOOPS_FILE=$PWD/crates/cost/experiments/probes/glc_port_probes.txt cargo test
//!   --release --workspace --test experiments zen4_order_asm::loops_file -- --ignored --nocapture`
//!   (and `glc_rorx_probes.txt`, `glc_sha_probes.txt`; scored on any host against the stored
//!   medians with `scripts/regen-notes probes` and `LOOPS_AGAINST=`) on this project's Intel
//!   host with AMX: the
//!   10-port rule's variants (counts seen 0–2 cycles late; the n-th uop of a port set in a cycle
//!   on the n-th ranked port, the first, or a counter kept across cycles; a margin of 3, 5 or
//!   any number of pending uops over the least loaded; ties either way; uiCA's issue-slot rule;
//!   whole groups or not; 864 in all) simulated on 70 probe loops of
//!   `crates/cost/experiments/probes/glc_{port,rorx,sha}_probes.txt` and scored against their measured
//!   medians (`*.measured.tsv`): the lead figure before (any free entry, margin 5) 5.64 % mean
//!   error, whole groups with margin 5 4.59 %, with margin 3 4.46 %, the best 4.38 %; the
//!   probes do not separate margins 3 and 5 on their own (every variant misses the same slow
//!   states of chained loops by up to 30 %). On the 36 validated kernel rows (the test the
//!   probes did not see) whole groups with margin 3 put all 36 within ±5 % (mean 0.77 %; 35–36
//!   with the first 40 cycles' bindings drawn at random, six draws), margin 5 32 of 36, lag 2
//!   with margin 5 36 (32–36 over the same draws).
//!
//! Approximations: Golden Cove (Sapphire/Emerald Rapids) is not in uiCA; the 10-port rule of
//! its predecessor Ice Lake is applied to its 12 ports with a margin of 3 ([EXP-GROUP]), and
//! Ice Lake's issue→dispatch delay and retire width are taken for it. Zen 3 keeps the
//! idealised port choice, Zen 4 binds ([`SimOptions::bind_ports_at_allocation`]) by
//! \[UICA\]'s 8-port rule (approx., see [ZEN-Q]); both use one scheduler capacity and no
//! issue→dispatch delay.
//!
//! - **[ZEN-Q]** Zen's integer ALUs each have their own scheduler queue, so a uop is given to
//!   one ALU when it is dispatched, not when it is ready: AnandTech, "The AMD Zen and Ryzen 7
//!   Review", execution page ("each execution port has its own 14-entry schedule queue");
//!   WikiChip, Zen 2 ("four ALU scheduler queues", 16 entries); [AMD-SOG] 19h: 4 × 24
//!   entries. How Zen 4 picks the queue is not documented; \[UICA\]'s Skylake rule (least
//!   pending uops, every second uop of a group the second least) is taken for it, checked
//!   against [EXP-Z4]. Without the binding every BigInteger row was 7–21 % under measurement.
//! - **[EXP-Z4]** `cargo test --release --workspace --test experiments bigint_loop_asm::mul_add_loop_variants_zen --
//!   --ignored --nocapture` on this project's Zen 4 host: the JIT's
//!   13-macro-op `mulAdd` loop (carry chain `add`, `shr`: 2 cycles; 9 ALU-pipe uops with the
//!   store's data, [`super::ports`]' [EXP-ZST]: 2.25 on 4 ALUs) runs at 2.90 cycles per word;
//!   without the store 2.02, with two more `movl $1` 3.41, two more `nop`s 2.90, the `imul` as
//!   an `add` 2.52: ALU-pipe contention the idealised choice (2.33) does not see, and which
//!   uops bound to one ALU queue at dispatch reproduce (2.89).
//! - **[EXP-Z4ORD]** `scripts/regen-notes orders` (`notes/orders.md`): the same loop's 14
//!   instructions in 160 dependence-preserving orders run at 2.36 … 4.38 cycles per word on
//!   that host; the rule above does not rank them (Pearson r ≈ −0.15), nor did any queue rule
//!   tried against [`super::ports`]' [EXP-Z4Q] probes (`zen4_probes.txt`). Order
//!   effects on Zen 4 are therefore outside what this model predicts.
//! - **[EXP-Z4A]** `LOOPS_FILE=$PWD/crates/cost/experiments/probes/zen4_alloc_probes.txt cargo test
//!   --release --workspace --test experiments zen4_order_asm::loops_file -- --ignored --nocapture`
//!   on the Zen 4 host (cycles per iteration, contention check 2.25): 8 independent
//!   `add`s + `dec`/`jnz` run at 2.25; with 4 register moves, 4 loads or 4 stores after them
//!   at 2.50, with the same 4 moves interleaved (`add add mov` × 4) at 2.25, with 2 at 2.25;
//!   12 `add`s + 4 moves at 3.50; 7 `add`s + 4 moves at 2.00. In program order, at most one
//!   uop enters each of the four ALU queues per cycle: the cycles that allocate the moves
//!   allocate fewer ALU uops, which the ALUs never win back. With it, 76 of the 100
//!   [EXP-Z4Q] probes are within 5 % (71 without; mean error 3.4 % against 5.5 %) and the
//!   orders of [EXP-Z4ORD] rank at Spearman +0.27 (−0.17 without). Not explained by it: 8
//!   `add`s + 6 moves at 2.75 (modelled 3.00), 4 `shr` before 4 `add`s at 2.34 (3.00).
//!   Retirement: 4 `add`s + 4 moves + `dec`/`jnz` run at 1.50 (9 macro-ops at 6 per cycle),
//!   and groups of 3 `add`s, 2 loads and a `nop` at 0.83 cycles, over 7 instructions
//!   retired per cycle: not the 6 per cycle modelled before.

use super::models::CoreModel;
use super::ports::{PortLayout, PortMask, UopClass, ZEN_ALU};
use super::{Address, Effects, Loc, MemRef, OpClass, latency, producer};
use std::collections::HashMap;

mod cache;
mod schedule;

pub(crate) use cache::simulate_cached;
pub(crate) use schedule::simulate_with;

/// Fewest iterations simulated.
pub const MIN_ITERATIONS: usize = 9;

/// Fewest instructions simulated (small loops run many iterations, so that the figure is an
/// average over many port-binding patterns).
pub const MIN_SIMULATED_INSTRUCTIONS: usize = 12_000;

/// Out-of-order window of a core.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// Reorder-buffer entries (fused-domain uops).
    pub rob: usize,
    /// Scheduler entries for computation uops (for every uop where the core has one
    /// scheduler, or with [`SimOptions::split_schedulers`] off).
    pub scheduler: usize,
    /// Separate scheduler entries for loads and store addresses, if any.
    pub memory: Option<usize>,
    /// Separate scheduler entries for store data, if any.
    pub store_data: Option<usize>,
    /// Fewest cycles from a uop's allocation to its dispatch.
    pub dispatch_delay: u64,
    /// Fused-domain uops retired per cycle.
    pub retire: usize,
    /// Whether uops are bound to ports at allocation ([`PortRule`]).
    pub port_rule: PortRule,
    /// Whether a reload of a just-stored slot takes its value from the store's data at rename
    /// (memory renaming): its consumers wait for the data plus [`CoreModel::store_forward`],
    /// not for the load to dispatch (the load still takes its port and scheduler entry).
    pub renames_memory: bool,
    /// Whether the renamer executes a 64-bit add or subtract of a small immediate itself:
    /// no port, no scheduler entry, zero latency ([`SimOptions::immediate_add_elimination`]).
    pub eliminates_immediate_adds: bool,
    /// Ports whose scheduler queue accepts at most one uop per cycle at allocation
    /// ([`SimOptions::one_uop_per_queue_per_cycle`]; 0: no such limit).
    pub single_write_queues: PortMask,
    /// Whether the lead figure ([`SimOptions::cited`]) counts write-back conflicts on this
    /// core ([`SimOptions::writeback_conflicts`]: [AF-WB], [EXP-WB]).
    pub writeback_conflicts: bool,
    /// Whether two store-data uops share a cycle only when they write the same 64 bytes
    /// ([`SimOptions::paired_stores`]; cores with two store-data ports and that rule).
    pub pairs_stores: bool,
    /// Instructions writing an integer register or the flags that can be in flight (allocated,
    /// not retired) at once: the physical registers beyond the architectural state
    /// ([`SimOptions::register_file`]; `None` where nothing was measured).
    pub registers: Option<usize>,
    /// Whether the lead figure ([`SimOptions::cited`]) allocates in whole groups on this core
    /// ([`SimOptions::whole_group_allocation`]: [EXP-WIN], [EXP-GROUP]).
    pub allocates_whole_groups: bool,
}

/// How a uop is bound to one of its ports at allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortRule {
    /// Not bound: the oldest ready uops take any free port (no source for the core's rule).
    Free,
    /// \[UICA\]'s rule for its 8-port cores (Skylake).
    EightPort,
    /// \[UICA\]'s rule for its 10-port cores (Ice Lake), applied to Golden Cove: the uops of a
    /// cycle with one port set take, in turn, the ports with fewer than `margin` pending uops
    /// more than the least loaded (\[UICA\]: 5 on Ice Lake; [EXP-GROUP]: 3 on Golden Cove).
    TenPort {
        /// Pending uops over the least loaded port at which a port leaves the turn.
        margin: usize,
    },
}

/// Which mechanisms of the simulation are on (all by default; for before/after comparisons).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// Bind uops to ports at allocation by the core's [`PortRule`].
    pub bind_ports_at_allocation: bool,
    /// Apply [`Window::dispatch_delay`].
    pub issue_dispatch_delay: bool,
    /// Use the core's separate memory and store-data schedulers.
    pub split_schedulers: bool,
    /// A port returns one result per cycle: a computation uop is not dispatched onto a port
    /// whose result bus is taken in the cycle it would finish (write-back conflicts).
    pub writeback_conflicts: bool,
    /// \[UICA\]'s 10-port rule in full: the issue slot of the uop's instruction in its
    /// allocation group steers the choice (slot 4: the least-loaded port; slot 3, first uop of
    /// its port set in the cycle: the second-least-loaded), and loads, store addresses and
    /// store data take their ports in turn instead of by load ([`PortRule::TenPort`] only).
    pub issue_slot_rule: bool,
    /// \[UICA\]'s dispatch-readiness rule: a uop whose last operand becomes ready exactly at, or
    /// one cycle after, its earliest dispatch cycle (allocation + [`Window::dispatch_delay`])
    /// is ready one cycle later (`Scheduler.getReadyForDispatchCycle`).
    pub late_operand_penalty: bool,
    /// Golden Cove's renamer handles a 64-bit `add`/`sub`/`inc`/`dec` of a small immediate
    /// (not fused with a branch) at rename, with zero latency and no port
    /// ([`Window::eliminates_immediate_adds`], [GLC-ADD]).
    pub immediate_add_elimination: bool,
    /// Each queue of [`Window::single_write_queues`] takes at most one uop per allocation
    /// cycle: an instruction whose uop finds every queue of its ports written this cycle
    /// waits for the next ([EXP-Z4A]).
    pub one_uop_per_queue_per_cycle: bool,
    /// \[UICA\]'s allocation rule: nothing is allocated in a cycle unless the reorder buffer and
    /// every scheduler have room for a whole allocation group ([`CoreModel::issue_width`]
    /// entries; `ReorderBuffer.isFull`, `Scheduler.isFull`), so a full window refills in
    /// whole groups, not one instruction per cycle ([EXP-WIN]).
    pub whole_group_allocation: bool,
    /// Two store-data uops dispatch in one cycle only if they write the same 64 bytes (the
    /// same base and index registers holding the same values, displacements less than 64
    /// apart), on cores where [`Window::pairs_stores`] says so; otherwise one store a cycle
    /// (\[UICA\] `Scheduler.dispatchUops`, the optimization manual's "paired stores";
    /// [EXP-ST]).
    pub paired_stores: bool,
    /// At most [`Window::registers`] instructions that write an integer register or the
    /// flags are in flight: allocation waits for the oldest to retire ([EXP-WIN]; eliminated
    /// moves and zero idioms take no register).
    pub register_file: bool,
}

impl SimOptions {
    /// Every mechanism on.
    pub const ALL: Self = Self {
        bind_ports_at_allocation: true,
        issue_dispatch_delay: true,
        split_schedulers: true,
        writeback_conflicts: true,
        issue_slot_rule: true,
        late_operand_penalty: true,
        immediate_add_elimination: true,
        one_uop_per_queue_per_cycle: true,
        whole_group_allocation: true,
        paired_stores: true,
        register_file: true,
    };
    /// Every mechanism off: the idealised core (free port choice, no delay, one scheduler).
    pub const NONE: Self = Self {
        bind_ports_at_allocation: false,
        issue_dispatch_delay: false,
        split_schedulers: false,
        writeback_conflicts: false,
        issue_slot_rule: false,
        late_operand_penalty: false,
        immediate_add_elimination: false,
        one_uop_per_queue_per_cycle: false,
        whole_group_allocation: false,
        paired_stores: false,
        register_file: false,
    };
}

impl SimOptions {
    /// What the lead figure uses on every core ([`SimOptions::cited`] adds write-back
    /// conflicts and whole-group allocation where the core has them): every mechanism whose
    /// source covers the modelled cores (uiCA's issue-slot and late-operand rules off, see the
    /// module docs; immediate adds at rename on).
    pub const CITED: Self = Self {
        writeback_conflicts: false,
        issue_slot_rule: false,
        late_operand_penalty: false,
        whole_group_allocation: false,
        ..Self::ALL
    };
}

impl SimOptions {
    /// The lead figure's mechanisms on `core`: [`SimOptions::CITED`], with write-back
    /// conflicts where [`Window::writeback_conflicts`] says the core has them and whole-group
    /// allocation where [`Window::allocates_whole_groups`] does.
    pub fn cited(core: &str) -> Self {
        let win = window(core);
        Self {
            writeback_conflicts: win.is_some_and(|w| w.writeback_conflicts),
            whole_group_allocation: win.is_some_and(|w| w.allocates_whole_groups),
            ..Self::CITED
        }
    }
}

impl Default for SimOptions {
    fn default() -> Self {
        Self::CITED
    }
}

/// The window of `core` (sources in the module docs).
pub fn window(core: &str) -> Option<Window> {
    Some(match core {
        // [UICA] SKL: RBWidth 224, RSWidth 97, retireWidth 4, issueDispatchDelay 5.
        "skylake" => Window {
            rob: 224,
            scheduler: 97,
            memory: None,
            store_data: None,
            dispatch_delay: 5,
            retire: 4,
            port_rule: PortRule::EightPort,
            renames_memory: false, // [TD-FW] 4.4-cycle forwarding
            eliminates_immediate_adds: false,
            single_write_queues: 0,
            writeback_conflicts: false,
            pairs_stores: false, // one store-data port
            registers: None,
            allocates_whole_groups: false, // not measured here
        },
        // [LLVM-SPR] ROB 512, EU 112, MEM 72, STD 48; [UICA] ICL delay 5, retire 8 (approx.).
        "sapphirerapids" => Window {
            rob: 512,
            scheduler: 112,
            memory: Some(72),
            store_data: Some(48),
            dispatch_delay: 5,
            retire: 8,
            port_rule: PortRule::TenPort { margin: 3 }, // [EXP-GROUP] (Ice Lake's 5 in [UICA])
            renames_memory: true,                       // [TD-FW] Ice Lake 0.58; [EXP-SF]
            eliminates_immediate_adds: true,            // [GLC-ADD]
            single_write_queues: 0,
            writeback_conflicts: true, // [AF-WB] (Sandy Bridge, Haswell); [EXP-WB]
            pairs_stores: true,        // [UICA] ICL; [EXP-ST]
            registers: Some(250),      // [EXP-WIN]: mov / add / cmp fillers 245–260
            allocates_whole_groups: true, // [EXP-WIN] ramps, [EXP-GROUP]
        },
        // [AMD-SOG] ROB 256 / 320, 4 × 24 integer scheduler entries.
        "znver3" => Window {
            rob: 256,
            scheduler: 96,
            memory: None,
            store_data: None,
            dispatch_delay: 0,
            retire: 6,
            port_rule: PortRule::Free,
            renames_memory: true, // [AF-Z2] memory mirroring (Zen 2 on)
            eliminates_immediate_adds: false,
            single_write_queues: 0,
            writeback_conflicts: false,
            pairs_stores: false, // no source, nothing measured
            registers: None,
            allocates_whole_groups: false, // [EXP-Z4A]: allocation into any free entry
        },
        "znver4" => Window {
            rob: 320,
            scheduler: 96,
            memory: None,
            store_data: None,
            dispatch_delay: 0,
            retire: 8, // [EXP-Z4A] over 7 instructions retired per cycle
            port_rule: PortRule::EightPort, // [ZEN-Q] queue per ALU; rule approx. ([UICA] SKL)
            renames_memory: true, // [AF-Z2] memory mirroring (Zen 2 on)
            eliminates_immediate_adds: false,
            single_write_queues: ZEN_ALU, // [EXP-Z4A] one uop per ALU queue per cycle
            writeback_conflicts: false,
            pairs_stores: false, // no source, nothing measured
            registers: None,
            allocates_whole_groups: false, // [EXP-Z4A]: allocation into any free entry
        },
        _ => return None,
    })
}

/// One uop of one iteration, as the simulation sees it.
#[derive(Clone, Debug)]
struct SimUop {
    /// Instruction (iteration order) it belongs to.
    inst: usize,
    /// Ports it may use (0: none; it completes at rename once its inputs are ready).
    mask: PortMask,
    /// Scheduler it waits in (index into the capacities), `None` without a port.
    scheduler: Option<usize>,
    /// Producing uops and their iteration distance.
    inputs: Vec<(usize, usize)>,
    /// Result ready this many cycles after dispatch.
    latency: f64,
    /// A reload of a slot stored in the loop: the store-data uop and its distance; the result
    /// is ready [`CoreModel::store_forward`] after that store's data.
    forward_from: Option<(usize, usize)>,
    /// A store-data uop's address: where it writes, for [`SimOptions::paired_stores`].
    store_at: Option<StoreAt>,
}

/// Where a store writes, as far as pairing is concerned: its address as written, and for its
/// base and index registers the uop that last wrote each before the store (`None`: not
/// written in the loop) and how many iterations back that write is (0 or 1), as the
/// dependence walk of [`build_uops`] finds them.
#[derive(Clone, Copy, Debug, PartialEq)]
struct StoreAt {
    address: Address,
    base_writer: Option<(usize, usize)>,
    index_writer: Option<(usize, usize)>,
}

impl StoreAt {
    /// Whether this store, of iteration `k`, and `other`, of iteration `other_k`, write the
    /// same 64 bytes: the same registers holding the same values (written by the same
    /// instance of a uop, or not written in the loop), displacements less than 64 apart.
    fn same_line(&self, k: usize, other: &StoreAt, other_k: usize) -> bool {
        let instance =
            |w: Option<(usize, usize)>, k: usize| w.map(|(uop, back)| (k.checked_sub(back), uop));
        self.address.base == other.address.base
            && self.address.index == other.address.index
            && instance(self.base_writer, k) == instance(other.base_writer, other_k)
            && instance(self.index_writer, k) == instance(other.index_writer, other_k)
            && (self.address.disp - other.address.disp).abs() < 64
    }
}

/// Scheduler indices.
const COMPUTE: usize = 0;
const MEMORY: usize = 1;
const STORE_DATA: usize = 2;

/// The class of the one uop a compare-and-branch pair executes as: [`UopClass::ArithBranch`]
/// when the first instruction also writes a register (`dec`/`jnz`), else [`UopClass::Branch`].
pub(super) fn fused_branch_class(first: &Effects) -> UopClass {
    if first.writes.iter().any(|w| matches!(w, Loc::Reg(_))) {
        UopClass::ArithBranch
    } else {
        UopClass::Branch
    }
}

/// Whether the renamer completes an instruction itself: a register move or zero idiom, which
/// `x86::uops` gives no uop (no port, no scheduler entry, no register of its own).
fn eliminated_at_rename(fx: &Effects, classes: &[UopClass]) -> bool {
    classes.is_empty() && matches!(fx.class, OpClass::Move | OpClass::ZeroIdiom)
}

/// The uops of one iteration and the fused-domain slots of each instruction.
fn build_uops(
    effects: &[Effects],
    uops: &[Vec<UopClass>],
    fusion: Fusion<'_>,
    renamer_adds: &[usize],
    layout: &PortLayout,
    model: &CoreModel,
    split: bool,
) -> Vec<SimUop> {
    // Per instruction: fused with the branch after it; executed by the renamer.
    let mut fused_compare = vec![false; effects.len()];
    for &i in fusion.compares {
        fused_compare[i] = true;
    }
    let mut renamer_add = vec![false; effects.len()];
    for &i in renamer_adds {
        renamer_add[i] = true;
    }
    // The loop's back edge takes the ports of a predicted-taken branch.
    let class_of = |i: usize, class: UopClass| {
        if fusion.taken_branch == Some(i) {
            class.taken()
        } else {
            class
        }
    };
    let sched = |class: UopClass| -> usize {
        if !split {
            return COMPUTE;
        }
        match class {
            UopClass::Load | UopClass::StoreAddress => MEMORY,
            UopClass::StoreData | UopClass::IndexedStoreData | UopClass::FpStoreData => STORE_DATA,
            _ => COMPUTE,
        }
    };
    // Producers over the whole body (for inputs that cross the back edge), then as the walk goes.
    let mut out: Vec<SimUop> = Vec::new();
    // Per instruction: (uop writing its registers, store-data uop).
    let mut result_uop: Vec<Option<usize>> = vec![None; effects.len()];
    let mut data_uop: Vec<Option<usize>> = vec![None; effects.len()];
    // First pass: create uops without inputs, remembering roles.
    struct Roles {
        load: Option<usize>,
        compute: Vec<usize>,
        sta: Option<usize>,
        std: Option<usize>,
    }
    let mut roles: Vec<Roles> = Vec::with_capacity(effects.len());
    for (i, (fx, classes)) in effects.iter().zip(uops).enumerate() {
        let fused_branch = i > 0 && fused_compare[i - 1];
        let mut r = Roles {
            load: None,
            compute: Vec::new(),
            sta: None,
            std: None,
        };
        let mut push = |mask: PortMask, scheduler: Option<usize>, lat: f64| {
            out.push(SimUop {
                inst: i,
                mask,
                scheduler,
                inputs: Vec::new(),
                latency: lat,
                forward_from: None,
                store_at: None,
            });
            out.len() - 1
        };
        // Executed by the renamer: no port, no scheduler entry, zero latency ([GLC-ADD]).
        let renamed = renamer_add[i] && !fused_compare[i];
        if renamed {
            r.compute.push(push(0, None, 0.0));
        }
        for &c in classes.iter().filter(|_| !renamed) {
            match c {
                UopClass::Load => r.load = Some(push(layout.mask(c), Some(sched(c)), model.load)),
                UopClass::StoreAddress => r.sta = Some(push(layout.mask(c), Some(sched(c)), 0.0)),
                UopClass::StoreData | UopClass::IndexedStoreData | UopClass::FpStoreData => {
                    r.std = Some(push(layout.mask(c), Some(sched(c)), 0.0))
                }
                UopClass::Branch if fused_branch => {}
                UopClass::Alu if fused_compare[i] => {
                    // The fused pair executes as the branch's one uop.
                    let m = layout.mask(class_of(i, fused_branch_class(fx)));
                    r.compute
                        .push(push(m, Some(sched(UopClass::Branch)), model.alu));
                }
                _ => {
                    let lat = latency(model, fx.class);
                    r.compute
                        .push(push(layout.mask(class_of(i, c)), Some(sched(c)), lat));
                }
            }
        }
        if eliminated_at_rename(fx, classes) {
            // Eliminated at rename: no port, no scheduler entry.
            r.compute.push(push(0, None, latency(model, fx.class)));
        }
        result_uop[i] = r.compute.first().copied().or(r.load);
        data_uop[i] = r.std;
        roles.push(r);
    }
    // Producers.
    let mut last_writer: HashMap<Loc, usize> = HashMap::new();
    let mut last_store: HashMap<i64, usize> = HashMap::new();
    for (i, fx) in effects.iter().enumerate() {
        if let Some(u) = result_uop[i] {
            for &w in &fx.writes {
                last_writer.insert(w, u);
            }
        }
        if let (Some(MemRef::Stack(k)), Some(d)) = (fx.store, data_uop[i]) {
            last_store.insert(k, d);
        }
    }
    let mut writer: HashMap<Loc, usize> = HashMap::new();
    let mut store: HashMap<i64, usize> = HashMap::new();
    for (i, fx) in effects.iter().enumerate() {
        let data: Vec<(usize, usize)> = fx
            .reads
            .iter()
            .filter_map(|l| producer(l, &writer, &last_writer))
            .collect();
        let addr: Vec<(usize, usize)> = fx
            .addr_reads
            .iter()
            .filter_map(|l| producer(l, &writer, &last_writer))
            .collect();
        let r = &roles[i];
        let forward = match fx.load {
            Some(MemRef::Stack(k)) => producer(&k, &store, &last_store),
            _ => None,
        };
        if let Some(l) = r.load {
            out[l].inputs = addr.clone();
            out[l].forward_from = forward;
        }
        if let Some(a) = r.sta {
            out[a].inputs = addr.clone();
        }
        for &c in &r.compute {
            let mut ins = data.clone();
            if let Some(l) = r.load {
                ins.push((l, 0));
            }
            if fx.class == OpClass::ZeroIdiom {
                ins.clear();
            }
            out[c].inputs = ins;
        }
        if let Some(d) = r.std {
            out[d].inputs = match (r.compute.first(), r.load) {
                (Some(&c), _) => vec![(c, 0)],
                (None, Some(l)) => vec![(l, 0)],
                (None, None) => data.clone(),
            };
            let written_by = |reg: u16| producer(&Loc::Reg(reg), &writer, &last_writer);
            out[d].store_at = fx.store_address.map(|address| StoreAt {
                address,
                base_writer: address.base.and_then(written_by),
                index_writer: address.index.and_then(|(reg, _)| written_by(reg)),
            });
        }
        if let Some(u) = result_uop[i] {
            for &w in &fx.writes {
                writer.insert(w, u);
            }
        }
        if let (Some(MemRef::Stack(k)), Some(d)) = (fx.store, data_uop[i]) {
            store.insert(k, d);
        }
    }
    out
}

/// Instructions that allocate together with a neighbour (indices in iteration order).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fusion<'a> {
    /// Flag-setting instructions fused with the conditional branch after them.
    pub compares: &'a [usize],
    /// Register moves allocated in one slot with the ALU operation after them
    /// ([`super::models::CoreModel::move_fusion_queue`]).
    pub moves: &'a [usize],
    /// The instruction whose uop is the loop's predicted-taken back edge (the branch, or the
    /// compare fused with it), which takes [`UopClass::taken`]'s ports ([BR-P6] in `ports.rs`).
    pub taken_branch: Option<usize>,
}

/// Whether `text` (AT&T syntax) adds a small immediate to a 64-bit register: `add`/`sub` of an
/// immediate in −1024…1023, or `inc`/`dec`, with operand size 64 — what Golden Cove's renamer
/// executes itself ([GLC-ADD]: 32-bit forms are not).
pub(crate) fn is_small_immediate_add64(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let (Some(mnemonic), operands) = (words.next(), words.collect::<String>()) else {
        return false;
    };
    let register64 = |operand: &str| -> bool {
        let Some(name) = operand.strip_prefix('%') else {
            return false;
        };
        matches!(
            name,
            "rax" | "rbx" | "rcx" | "rdx" | "rsi" | "rdi" | "rbp" | "rsp"
        ) || name
            .strip_prefix('r')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    match mnemonic {
        "incq" | "decq" => register64(&operands),
        "addq" | "subq" => {
            let Some((imm, reg)) = operands.split_once(',') else {
                return false;
            };
            let Some(imm) = imm.strip_prefix('$') else {
                return false;
            };
            let (negative, digits) = match imm.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, imm),
            };
            let value = match digits.strip_prefix("0x") {
                Some(hex) => i64::from_str_radix(hex, 16).ok(),
                None => digits.parse::<i64>().ok(),
            };
            let Some(value) = value.map(|v| if negative { -v } else { v }) else {
                return false;
            };
            (-1024..=1023).contains(&value) && register64(reg)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::schedule::{bind_port, next_in_turn, room_for_a_group, takes_ports_in_turn};
    use super::{
        COMPUTE, MEMORY, PortMask, PortRule, STORE_DATA, SimOptions, is_small_immediate_add64,
        window,
    };
    use crate::mca::HotLoop;
    use crate::{Target, bound_of, models::CoreModel, models::core_model, simulated};

    fn body(lines: &[&str]) -> HotLoop {
        crate::tests::body(Target::X86_64, lines)
    }

    #[test]
    fn zen4_binds_alu_uops_to_a_queue_at_dispatch() {
        // [ZEN-Q], [EXP-Z4]: measured 2.90; idealised port choice 2.33 (9 ALU-pipe uops / 4
        // and the 2-cycle chain leave room), bound at dispatch the chain waits behind older
        // uops in its queue.
        let (bound, free) = sim_with_and_without(MUL_ADD_JIT, "znver4", |o| {
            o.bind_ports_at_allocation = false;
        });
        assert!(free < 2.4, "free choice {free}");
        assert!((2.75..3.05).contains(&bound), "bound at dispatch {bound}");
        // Zen 3 keeps the idealised choice.
        assert_eq!(window("znver3").map(|w| w.port_rule), Some(PortRule::Free));
    }

    #[test]
    fn the_schedule_is_never_faster_than_the_bound() {
        let loops: [&[&str]; 3] = [
            // A carried chain of 3 adds: 3 cycles.
            &[
                "addl %ecx, %eax",
                "addl %edx, %eax",
                "addl %esi, %eax",
                "jmp 0x0",
            ],
            // 12 independent rotates: ports 0 and 6, (12 + branch) / 2 on Intel.
            &[
                "rorxl $0x6, %eax, %ebx",
                "rorxl $0x6, %eax, %ecx",
                "rorxl $0x6, %eax, %edx",
                "rorxl $0x6, %eax, %esi",
                "rorxl $0x6, %eax, %edi",
                "rorxl $0x6, %eax, %r8d",
                "rorxl $0x6, %eax, %r9d",
                "rorxl $0x6, %eax, %r10d",
                "rorxl $0x6, %eax, %r11d",
                "rorxl $0x6, %eax, %r12d",
                "rorxl $0x6, %eax, %r13d",
                "rorxl $0x6, %eax, %r14d",
                "jmp 0x0",
            ],
            // A spill on the chain.
            &[
                "movl 0x8(%rsp), %eax",
                "addl %ecx, %eax",
                "movl %eax, 0x8(%rsp)",
                "jmp 0x0",
            ],
        ];
        for lines in loops {
            let b = body(lines);
            for cpu in ["skylake", "sapphirerapids", "znver3", "znver4"] {
                let m = core_model(Target::X86_64, cpu).expect("model");
                let bound = bound_of(Target::X86_64, &b, m).expect("bound").bound();
                let sim = simulated(Target::X86_64, &b, m).expect("simulated");
                // Cycles are whole in the schedule: allow rounding a fractional bound down.
                assert!(
                    sim + 1.0 > bound.floor(),
                    "{cpu} {lines:?}: {sim} < {bound}"
                );
                assert!(
                    sim >= bound.floor() - 1e-9,
                    "{cpu} {lines:?}: {sim} < {bound}"
                );
            }
        }
    }

    /// The loop of `mulAdd` as the JIT compiles it (rotated; the carry chain `add, add, shr`
    /// through `%rsi`, 3 cycles; 18 issue slots = 3 cycles on Golden Cove).
    const MUL_ADD: &[&str] = &[
        "movl (%r11), %edx",
        "leaq (%rcx), %r10",
        "movl (%rdi,%r10,4), %r10d",
        "movl %edx, %edx",
        "imulq %rax, %rdx",
        "movl %r10d, %r10d",
        "addq %r10, %rsi",
        "addq %rdx, %rsi",
        "addq $0, %rcx",
        "movl %esi, (%rdi,%rcx,4)",
        "addl $4294967295, %r8d",
        "shrq $32, %rsi",
        "addq $-4, %r11",
        "movslq %r8d, %rcx",
        "movq %r11, %rdx",
        "subq %r9, %rdx",
        "testq %rdx, %rdx",
        "jge 0x0",
    ];

    /// The switches of [`SimOptions`] as the bits of `bits`, in declaration order (2 048
    /// combinations).
    fn switches(bits: u16) -> SimOptions {
        SimOptions {
            bind_ports_at_allocation: bits & 1 != 0,
            issue_dispatch_delay: bits & 2 != 0,
            split_schedulers: bits & 4 != 0,
            writeback_conflicts: bits & 8 != 0,
            issue_slot_rule: bits & 16 != 0,
            late_operand_penalty: bits & 32 != 0,
            immediate_add_elimination: bits & 64 != 0,
            one_uop_per_queue_per_cycle: bits & 128 != 0,
            whole_group_allocation: bits & 256 != 0,
            paired_stores: bits & 512 != 0,
            register_file: bits & 1024 != 0,
        }
    }

    fn sim_of(lines: &[&str], cpu: &str, options: SimOptions) -> f64 {
        let m = core_model(Target::X86_64, cpu).expect("model");
        crate::simulated_with(Target::X86_64, &body(lines), m, options).expect("simulated")
    }

    /// [`sim_of`] with [`SimOptions::CITED`], and with the mechanism `turn_off` turns off.
    fn sim_with_and_without(
        lines: &[&str],
        cpu: &str,
        turn_off: fn(&mut SimOptions),
    ) -> (f64, f64) {
        let mut off = SimOptions::CITED;
        turn_off(&mut off);
        (
            sim_of(lines, cpu, SimOptions::CITED),
            sim_of(lines, cpu, off),
        )
    }

    #[test]
    fn a_multiply_sharing_a_port_with_the_carry_chain_slows_it() {
        // Ports bound at allocation plus one result per port and cycle: the 3-cycle `imulq` on
        // port 1 returns its result in a cycle a 1-cycle chain `add` bound to port 1 would
        // need, so the chain sometimes waits ([EXP-H3]: the loop runs ≈3.15, and ≈3.0 with
        // the multiply replaced by a no-op).
        let all = sim_of(MUL_ADD, "sapphirerapids", SimOptions::ALL);
        assert!(all > 3.05, "{all}");
        let free = sim_of(
            MUL_ADD,
            "sapphirerapids",
            SimOptions {
                bind_ports_at_allocation: false,
                ..SimOptions::ALL
            },
        );
        assert!(free < all - 0.05, "free choice {free}, bound {all}");
        let no_wb = sim_of(
            MUL_ADD,
            "sapphirerapids",
            SimOptions {
                writeback_conflicts: false,
                ..SimOptions::ALL
            },
        );
        assert!(
            no_wb < all - 0.05,
            "without write-back conflicts {no_wb}, with {all}"
        );
        let without_multiply: Vec<&str> = MUL_ADD
            .iter()
            .map(|l| if l.starts_with("imulq") { "nop" } else { *l })
            .collect();
        let nop = sim_of(&without_multiply, "sapphirerapids", SimOptions::ALL);
        assert!(
            nop < all - 0.05,
            "imul -> nop {nop}, with the multiply {all}"
        );
    }

    #[test]
    fn chains_beside_an_independent_multiply_behave_as_measured_on_the_host() {
        // The hand-written loops of [EXP-H3] on this project's Emerald Rapids host, checked
        // for direction, not fitted: a 3-add chain slows beside an
        // independent `imul` (measured 3.26) and more beside two (3.68); a chain of rotates
        // (ports 0 and 6, never port 1) does not (3.00); nor does a chain of one `imul` (3.00).
        let tail = ["subq $1, %r8", "jne 0x0"];
        let with = |chain: &[&'static str], extra: &[&'static str]| -> Vec<&'static str> {
            chain.iter().chain(extra).chain(&tail).copied().collect()
        };
        let adds = ["addq %rcx, %rax", "addq %rdx, %rax", "addq %rsi, %rax"];
        let rotates = ["rorq $5, %rax", "rorq $5, %rax", "rorq $5, %rax"];
        let imul = ["imulq $3, %r9, %r10"];
        let imul2 = ["imulq $3, %r9, %r10", "imulq $5, %r9, %r11"];
        let spr = |lines: &[&str]| sim_of(lines, "sapphirerapids", SimOptions::ALL);
        let bare = spr(&with(&adds, &[]));
        let one = spr(&with(&adds, &imul));
        let two = spr(&with(&adds, &imul2));
        assert!((bare - 3.0).abs() < 0.02, "{bare}");
        assert!(one > bare + 0.05, "chain + imul {one}, bare {bare}");
        assert!(two > one + 0.05, "chain + 2 imuls {two}, + 1 {one}");
        let ror = spr(&with(&rotates, &imul2));
        assert!((ror - 3.0).abs() < 0.02, "rotates + imuls {ror}");
        let mul_chain = spr(&with(&["imulq %rcx, %rax"], &imul));
        assert!(
            (mul_chain - 3.0).abs() < 0.02,
            "imul chain + imul {mul_chain}"
        );
        eprintln!(
            "bare {bare} +imul {one} +2 imul {two} ror+2imul {ror} imul chain+imul {mul_chain}"
        );
    }

    #[test]
    fn every_mechanism_keeps_the_schedule_at_or_over_the_bound() {
        for cpu in ["sapphirerapids", "znver4"] {
            let m = core_model(Target::X86_64, cpu).expect("model");
            let b = bound_of(Target::X86_64, &body(MUL_ADD), m)
                .expect("bound")
                .bound();
            for bits in 0..2048u16 {
                let options = switches(bits);
                let sim = sim_of(MUL_ADD, cpu, options);
                assert!(sim >= b - 1e-9, "{cpu} {options:?}: {sim} < {b}");
            }
        }
    }

    #[test]
    fn the_loops_back_edge_runs_on_port_6() {
        // [EXP-P6]: three add chains and the loop's fused `dec`/`jnz` run at 1.009 cycles on the
        // host (1.007 in some calls, 1.199 in most — [EXP-GROUP]); with the back
        // edge free to take port 0 the binding rule puts chains behind it.
        let add3 = [
            "addq %rbx, %rax",
            "addq %rbx, %rcx",
            "addq %rbx, %rdx",
            "decq %r15",
            "jne 0x0",
        ];
        let spr = SimOptions::cited("sapphirerapids");
        let cited = sim_of(&add3, "sapphirerapids", spr);
        assert!((1.0..=1.2).contains(&cited), "{cited}");
        // A branch that leaves the loop (predicted not taken) keeps both branch ports.
        let mut exit = vec!["testq %r14, %r14", "je 0x400"];
        exit.extend(add3);
        let with_exit = sim_of(&exit, "sapphirerapids", spr);
        assert!(with_exit >= cited - 1e-9, "{with_exit}");
    }

    #[test]
    fn registers_in_flight_bound_the_window() {
        // [EXP-WIN]: two independent misses with `n` register-writing `movl $1`s after each
        // overlap up to n ≈ 250 and not from 260 on (one miss's latency per iteration, then
        // two); nothing else in that loop runs out before the reorder buffer (512).
        let base = core_model(Target::X86_64, "sapphirerapids").expect("model");
        let model = CoreModel {
            load: 600.0,
            ..*base
        };
        let chase = |n: usize| -> HotLoop {
            let mut lines = vec!["movq (%rdi,%rax,8), %rax"];
            lines.extend(std::iter::repeat_n("movl $1, %ecx", n));
            lines.push("movq (%rdi,%rbx,8), %rbx");
            lines.extend(std::iter::repeat_n("movl $1, %ecx", n));
            lines.extend(["decq %r15", "jne 0x0"]);
            body(&lines)
        };
        let on = SimOptions::cited("sapphirerapids");
        let off = SimOptions {
            register_file: false,
            ..on
        };
        let sim = |n: usize, options: SimOptions| {
            crate::simulated_with(Target::X86_64, &chase(n), &model, options).expect("simulated")
        };
        let (short, long) = (sim(200, on), sim(270, on));
        assert!(short < 650.0, "200 movs: {short}");
        assert!(long > 1150.0, "270 movs: {long}");
        let unlimited = sim(270, off);
        assert!(unlimited < 650.0, "270 movs, no limit: {unlimited}");
    }

    #[test]
    fn two_stores_share_a_cycle_only_on_one_line() {
        // [EXP-ST]: `movl %eax, 8(%rsi)` and `movl %eax, 264(%rsi)` with four `nop`s, 100 times:
        // 200 cycles (one store a cycle); with 16(%rsi) instead of 264, 100 (two a cycle).
        let unit = |second: &'static str| -> Vec<&'static str> {
            let mut lines = Vec::new();
            for _ in 0..50 {
                lines.extend(["nop", "nop", "nop", "nop", "movl %eax, 8(%rsi)", second]);
            }
            lines.extend(["decq %r15", "jne 0x0"]);
            lines
        };
        let on = SimOptions::cited("sapphirerapids");
        let off = SimOptions {
            paired_stores: false,
            ..on
        };
        let far = unit("movl %eax, 264(%rsi)");
        let near = unit("movl %eax, 16(%rsi)");
        let far_on = sim_of(&far, "sapphirerapids", on);
        assert!((far_on - 100.0).abs() < 3.0, "{far_on}");
        let near_on = sim_of(&near, "sapphirerapids", on);
        assert!((near_on - 50.2).abs() < 2.0, "{near_on}");
        let far_off = sim_of(&far, "sapphirerapids", off);
        assert!((far_off - 50.2).abs() < 2.0, "{far_off}");
    }

    #[test]
    fn whole_groups_are_allocated_only_into_room_for_a_whole_group() {
        // [UICA] `ReorderBuffer.isFull`, `Scheduler.isFull`: room for 6 in a 112-entry
        // scheduler means at most 106 taken; the reorder buffer and every other scheduler too.
        let capacity = [112, 72, 48];
        let fits = |rob_used: usize, occupancy: [usize; 3]| {
            room_for_a_group(6, rob_used, 512, &occupancy, &capacity)
        };
        assert!(fits(0, [0, 0, 0]));
        assert!(fits(506, [106, 66, 42]));
        assert!(!fits(507, [0, 0, 0]));
        assert!(!fits(0, [107, 0, 0]));
        assert!(!fits(0, [0, 67, 0]));
        assert!(!fits(0, [0, 0, 43]));
        // A core with one scheduler has no capacity for the others.
        assert!(room_for_a_group(
            6,
            0,
            224,
            &[91, 5, 5],
            &[97, usize::MAX, usize::MAX]
        ));
    }

    #[test]
    fn memory_uops_take_their_ports_in_turn() {
        // Golden Cove's load ports 2, 3, 11: in turn, whatever their load ([UICA] `nextP23Port`).
        let loads: PortMask = (1 << 2) | (1 << 3) | (1 << 11);
        let mut turn = 0;
        let taken: Vec<usize> = (0..5).map(|_| next_in_turn(loads, &mut turn)).collect();
        assert_eq!(taken, [2, 3, 11, 2, 3]);
        assert!(takes_ports_in_turn(Some(MEMORY), true));
        assert!(takes_ports_in_turn(Some(STORE_DATA), true));
        assert!(!takes_ports_in_turn(Some(COMPUTE), true));
        assert!(!takes_ports_in_turn(Some(MEMORY), false));
    }

    #[test]
    fn the_issue_slot_steers_the_ten_port_rule() {
        // ALU ports 0, 1, 5, 6, 10 with pending uops 3, 0, 1, 2, 1: ranked 1, 10, 5, 6, 0.
        let alu: PortMask = (1 << 0) | (1 << 1) | (1 << 5) | (1 << 6) | (1 << 10);
        let mut usage = vec![0usize; 12];
        (usage[0], usage[1], usage[5], usage[6], usage[10]) = (3, 0, 1, 2, 1);
        let bind = |slot: Option<usize>, mut already: usize| {
            bind_port(
                PortRule::TenPort { margin: 5 },
                alu,
                &usage,
                &mut already,
                slot,
                0,
            )
        };
        // Without the slot rule: the n-th uop of the set in the cycle takes the n-th port.
        assert_eq!(bind(None, 0), 1);
        assert_eq!(bind(None, 1), 10);
        assert_eq!(bind(None, 2), 5);
        // Slot 4: the least loaded, whatever came before; slot 3, first of its set: the second.
        assert_eq!(bind(Some(4), 2), 1);
        assert_eq!(bind(Some(3), 0), 10);
        assert_eq!(bind(Some(3), 1), 10);
        assert_eq!(bind(Some(3), 2), 5);
        assert_eq!(bind(Some(2), 0), 1);
    }

    /// The loop of `mulAdd` as the JIT compiles it now (13 allocation slots, 2.17 cycles on
    /// Golden Cove; the pointer chain `addq $-4, %r8` feeds both loads; [EXP-Z4]'s Z0 on Zen 4).
    const MUL_ADD_JIT: &[&str] = &[
        "movl (%r8), %r10d",
        "imulq %rax, %r10",
        "movl (%rdi,%rdx,4), %r11d",
        "addq %r11, %r10",
        "addq %r10, %rcx",
        "movl %ecx, (%rdi,%rdx,4)",
        "addl $4294967295, %esi",
        "shrq $32, %rcx",
        "addq $-4, %r8",
        "movslq %esi, %rdx",
        "movq %r8, %r10",
        "subq %r9, %r10",
        "testq %r10, %r10",
        "jge 0x0",
    ];

    #[test]
    fn immediate_adds_at_rename_keep_the_pointer_chain_off_the_ports() {
        let m = core_model(Target::X86_64, "sapphirerapids").expect("model");
        let b = bound_of(Target::X86_64, &body(MUL_ADD_JIT), m)
            .expect("bound")
            .bound();
        let (with, without) = sim_with_and_without(MUL_ADD_JIT, "sapphirerapids", |o| {
            o.immediate_add_elimination = false;
        });
        // Bound to a port, the 1-cycle chain waits behind older uops and slows the loop.
        assert!(with < without - 0.1, "with {with}, without {without}");
        assert!(with >= b.floor() - 1e-9, "{with} under the bound {b}");
        // Neither a 32-bit add nor a register operand is eliminated: those forms of the chain
        // keep the slowdown (on this host the loop with `subq %r12, %r8` runs ≈15 % slower
        // than with `addq $-4, %r8`: [EXP-ADD]).
        for replacement in ["addl $-4, %r8d", "subq %r12, %r8"] {
            let changed: Vec<&str> = MUL_ADD_JIT
                .iter()
                .map(|l| {
                    if *l == "addq $-4, %r8" {
                        replacement
                    } else {
                        *l
                    }
                })
                .collect();
            let slower = sim_of(&changed, "sapphirerapids", SimOptions::CITED);
            assert!(slower > with + 0.1, "{replacement} {slower}, addq {with}");
        }
        assert!(!window("skylake").expect("window").eliminates_immediate_adds);
    }

    #[test]
    fn small_immediate_adds_with_64_bit_operands_are_recognised() {
        for yes in [
            "addq $-4, %r8",
            "addq $1, %rax",
            "subq $0x40, %rsi",
            "addq $1023, %r15",
            "subq $-1024, %rdi",
            "incq %rcx",
            "decq %r9",
        ] {
            assert!(is_small_immediate_add64(yes), "{yes}");
        }
        for no in [
            "addl $4294967295, %esi",
            "addq $1024, %rax",
            "addq $0x400, %rax",
            "addq %rcx, %rax",
            "addq $4, (%rax)",
            "incl %eax",
            "addq $4, %r8d",
            "leaq 4(%rax), %rax",
            "addq",
            "addq $x, %rax",
        ] {
            assert!(!is_small_immediate_add64(no), "{no}");
        }
    }

    /// The figure of every loop below on every x86 core, with the cited mechanisms, all of
    /// them and none, as `f64` bits; and a digest of [`MUL_ADD`] under every combination of
    /// mechanisms. The simulation is deterministic: any change to a figure is a change to the
    /// model, never noise.
    #[test]
    fn the_figures_are_pinned() {
        let mut stores = Vec::new();
        for _ in 0..4 {
            stores.extend(["nop", "movl %eax, 8(%rsi)", "movl %eax, 16(%rsi)"]);
            stores.extend(["movl %eax, 264(%rsi)", "movl 8(%rsi), %ecx"]);
        }
        stores.extend(["addl %ecx, %edx", "decq %r15", "jne 0x0"]);
        let loops: [&[&str]; 5] = [
            MUL_ADD,
            MUL_ADD_JIT,
            &stores,
            &[
                "movl 0x8(%rsp), %eax",
                "addl %ecx, %eax",
                "movl %eax, 0x8(%rsp)",
                "imulq %rax, %rdx",
                "testq %r14, %r14",
                "je 0x400",
                "addq $8, %rdi",
                "jmp 0x0",
            ],
            &[
                "movq (%rdi,%rax,8), %rax",
                "rorxl $0x6, %eax, %ebx",
                "rorxl $0x6, %eax, %ecx",
                "addq %rbx, %rcx",
                "movq %rcx, 0x10(%rsp)",
                "decq %r15",
                "jne 0x0",
            ],
        ];
        let cpus = ["skylake", "sapphirerapids", "znver3", "znver4"];
        let mut figures = Vec::new();
        for lines in loops {
            for cpu in cpus {
                for options in [SimOptions::cited(cpu), SimOptions::ALL, SimOptions::NONE] {
                    figures.push(sim_of(lines, cpu, options).to_bits());
                }
            }
        }
        let mut digest = 0xcbf2_9ce4_8422_2325u64;
        for cpu in cpus {
            for bits in 0..2048u16 {
                let options = switches(bits);
                for byte in sim_of(MUL_ADD, cpu, options).to_bits().to_le_bytes() {
                    digest = (digest ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
                }
            }
        }
        assert_eq!(figures, PINNED_FIGURES);
        assert_eq!(digest, PINNED_DIGEST);
    }

    /// [`the_figures_are_pinned`]'s figures: per loop, per core, cited / all / none.
    const PINNED_FIGURES: [u64; 60] = [
        4616913332050403349,
        4616927796523893542,
        4616873370877879593,
        4614306539734789276,
        4614278836590647043,
        4613937818241073152,
        4613937818241073152,
        4613937818241073152,
        4613937818241073152,
        4614543364843120248,
        4614986860309963644,
        4613937818241073152,
        4615441132482885556,
        4615431101537105629,
        4615435969496087064,
        4611849611351945843,
        4611967179937042937,
        4611686018427387904,
        4612436716707888672,
        4612436569193980143,
        4612436716707888672,
        4613475067110019721,
        4613794434721983598,
        4612436716707888672,
        4622945017495814144,
        4622945017495814144,
        4622945017495814144,
        4620693217682128896,
        4620693217682128896,
        4618441417868443648,
        4618441417868443648,
        4618441417868443648,
        4618441417868443648,
        4618441417868443648,
        4618441417868443648,
        4618441417868443648,
        4618441417868443648,
        4618441417868443648,
        4618441417868443648,
        4613937818241073152,
        4613937818241073152,
        4613937818241073152,
        4613937818241073152,
        4613937818241073152,
        4613937818241073152,
        4613937818241073152,
        4613937818241073152,
        4613937818241073152,
        4616189618054758400,
        4616189618054758400,
        4616189618054758400,
        4617315517961601024,
        4617315517961601024,
        4617315517961601024,
        4616189618054758400,
        4616189618054758400,
        4616189618054758400,
        4616189618054758400,
        4616189618054758400,
        4616189618054758400,
    ];
    /// [`the_figures_are_pinned`]'s digest of [`MUL_ADD`] under every combination.
    const PINNED_DIGEST: u64 = 0x54890229322dbff5;

    #[test]
    fn windows_are_the_cited_sizes() {
        let glc = window("sapphirerapids").expect("window");
        assert_eq!((glc.rob, glc.scheduler), (512, 112));
        assert_eq!((glc.memory, glc.store_data), (Some(72), Some(48)));
        let skl = window("skylake").expect("window");
        assert_eq!((skl.rob, skl.scheduler, skl.memory), (224, 97, None));
        assert!(window("cortex-a72").is_none());
    }

    #[test]
    fn no_simulation_without_a_layout_or_a_loop() {
        let arm = core_model(Target::Aarch64, "cortex-a72").expect("model");
        assert!(simulated(Target::Aarch64, &body(&["add w1, w1, w2", "b 0x0"]), arm).is_none());
        let m = core_model(Target::X86_64, "skylake").expect("model");
        let mut b = body(&["addl %ecx, %eax"]);
        b.is_loop = false;
        assert!(simulated(Target::X86_64, &b, m).is_none());
        assert!(simulated(Target::X86_64, &body(&[]), m).is_none());
    }
}
