//! The simulated schedule itself: one iteration's uops ([`super::build_uops`]) allocated,
//! dispatched and retired cycle by cycle on a core's ports and windows, as the mechanisms of
//! [`SimOptions`] switch them on. [`simulate_with`] runs it; [`Schedule`] holds the state and
//! takes one step per stage of a cycle.

use super::{
    COMPUTE, Fusion, MEMORY, MIN_ITERATIONS, MIN_SIMULATED_INSTRUCTIONS, PortRule, STORE_DATA,
    SimOptions, SimUop, StoreAt, Window, build_uops, eliminated_at_rename, window,
};
use crate::models::CoreModel;
use crate::ports::{PortLayout, PortMask, UopClass, port_layout};
use crate::{Effects, Loc};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Cycles without any uop allocated, dispatched or retired after which the simulation gives up.
const STALL_LIMIT: u64 = 100_000;

/// Cycles per iteration of the simulated schedule with the mechanisms of `options`, `None`
/// for cores without a port layout or window, or an empty loop.
///
/// Each cycle retires ([`Schedule::retire`]), allocates ([`Schedule::allocate`]) and
/// dispatches ([`Schedule::dispatch`]) in that order, until every instruction of the
/// simulated iterations has retired; the figure is the steady state between the two ends
/// ([`Schedule::cycles_per_iteration`]).
pub(crate) fn simulate_with(
    effects: &[Effects],
    uops: &[Vec<UopClass>],
    fusion: Fusion<'_>,
    immediate_adds: &[usize],
    model: &CoreModel,
    options: SimOptions,
) -> Option<f64> {
    let layout: &PortLayout = port_layout(model.name)?;
    let win = window(model.name)?;
    let renamer_adds = if options.immediate_add_elimination && win.eliminates_immediate_adds {
        immediate_adds
    } else {
        &[]
    };
    let n = effects.len();
    if n == 0 || uops.len() != n {
        return None;
    }
    let core = Core::new(layout, win, model, options);
    let body = build_uops(
        effects,
        uops,
        fusion,
        renamer_adds,
        layout,
        model,
        core.split,
    );
    let iteration = Iteration::new(body, effects, uops, fusion, &core);
    let iterations = MIN_ITERATIONS
        .max(3 * win.rob / n + 4)
        .max(MIN_SIMULATED_INSTRUCTIONS / n);
    let m = iteration.body.len();
    let mut schedule = Schedule::new(&iteration, &core, iterations);
    let total_insts = n * iterations;
    let (mut last_progress, mut progress_cycle) = ((0usize, 0usize, 0usize), 0u64);
    while schedule.retired < total_insts {
        schedule.retire(&iteration, &core);
        schedule.allocate(&iteration, &core, total_insts);
        schedule.dispatch(&iteration, &core);
        schedule.cycle += 1;
        // No instruction can wait this long for anything in these loops: give up rather than
        // spin on a schedule that cannot progress.
        let progress = (schedule.retired, schedule.next_alloc, schedule.waiting);
        if progress != last_progress {
            last_progress = progress;
            progress_cycle = schedule.cycle;
        } else if schedule.cycle - progress_cycle > STALL_LIMIT {
            return None;
        }
        // The figure is fixed once the uops it reads have dispatched, and the rest would
        // retire without a stall ([`Schedule::figure_uops`]): stop there.
        if schedule.figure_dispatched == schedule.figure_uops {
            break;
        }
    }
    schedule.cycles_per_iteration(m, iterations)
}

/// The iterations whose dispatch cycles [`Schedule::cycles_per_iteration`] reads (their
/// middle third).
fn measured_iterations(iterations: usize) -> std::ops::Range<usize> {
    iterations / 3..2 * iterations / 3
}

/// The core as one simulation runs it: the window's sizes and rules with the mechanisms
/// `options` turns off taken out.
struct Core<'a> {
    model: &'a CoreModel,
    win: Window,
    options: SimOptions,
    /// Execution ports of the layout.
    ports: usize,
    /// Loads, store addresses and store data wait in schedulers of their own.
    split: bool,
    /// Entries of the computation, memory and store-data schedulers.
    capacity: [usize; 3],
    /// Cycles from allocation to the earliest dispatch.
    delay: u64,
    /// How a uop's port is chosen.
    rule: PortRule,
    /// Queues that take one uop per cycle (only where uops are bound at allocation).
    single_queues: PortMask,
    /// Two store-data uops to one line may dispatch in one cycle.
    pairs_stores: bool,
    issue_width: usize,
    /// Registers (integer and flags) in flight at most.
    register_limit: usize,
}

impl<'a> Core<'a> {
    fn new(layout: &PortLayout, win: Window, model: &'a CoreModel, options: SimOptions) -> Self {
        let split = options.split_schedulers && win.memory.is_some();
        let capacity: [usize; 3] = if split {
            [
                win.scheduler,
                win.memory.unwrap_or(win.scheduler),
                win.store_data.unwrap_or(win.scheduler),
            ]
        } else {
            [win.scheduler, usize::MAX, usize::MAX]
        };
        let rule = if options.bind_ports_at_allocation {
            win.port_rule
        } else {
            PortRule::Free
        };
        Core {
            model,
            win,
            options,
            ports: layout.ports.len(),
            split,
            capacity,
            delay: if options.issue_dispatch_delay {
                win.dispatch_delay
            } else {
                0
            },
            rule,
            single_queues: if options.one_uop_per_queue_per_cycle && rule != PortRule::Free {
                win.single_write_queues
            } else {
                0
            },
            pairs_stores: options.paired_stores && win.pairs_stores,
            issue_width: model.issue_width.max(1.0) as usize,
            register_limit: if options.register_file {
                win.registers.unwrap_or(usize::MAX)
            } else {
                usize::MAX
            },
        }
    }

    /// Whether the issue slot steers the ten-port rule ([`SimOptions::issue_slot_rule`]).
    fn issue_slot_steers(&self) -> bool {
        self.options.issue_slot_rule && matches!(self.rule, PortRule::TenPort { .. })
    }
}

/// One iteration of the loop as the simulation allocates it.
struct Iteration {
    /// Its uops ([`build_uops`]).
    body: Vec<SimUop>,
    /// Fused-domain slots per instruction, as the bound counts them.
    slots: Vec<usize>,
    /// Registers (integer or flags) each instruction takes until it retires: none for a move
    /// or zero idiom eliminated at rename, or a move allocated with the operation after it.
    registers: Vec<usize>,
    /// Uops of each instruction (indices into `body`).
    inst_uops: Vec<Vec<usize>>,
    /// Ports in the order a free choice tries them: the least popular first (flexible uops
    /// leave scarce ports).
    port_order: Vec<usize>,
}

impl Iteration {
    fn new(
        body: Vec<SimUop>,
        effects: &[Effects],
        uops: &[Vec<UopClass>],
        fusion: Fusion<'_>,
        core: &Core<'_>,
    ) -> Self {
        // Per instruction: allocated in one slot with its neighbour (fused compare or move).
        let mut fused = vec![false; effects.len()];
        let mut fused_move = vec![false; effects.len()];
        for &i in fusion.compares {
            fused[i] = true;
        }
        for &i in fusion.moves {
            fused[i] = true;
            fused_move[i] = true;
        }
        let slots: Vec<usize> = effects
            .iter()
            .enumerate()
            .map(|(i, fx)| {
                if fused[i] {
                    0
                } else if core.model.unlaminates_indexed_stores
                    && fx.store.is_some()
                    && fx.addr_reads.len() >= 2
                {
                    2
                } else {
                    1
                }
            })
            .collect();
        let registers: Vec<usize> = effects
            .iter()
            .zip(uops)
            .enumerate()
            .map(|(i, (fx, classes))| {
                let eliminated = eliminated_at_rename(fx, classes);
                let writes = fx
                    .writes
                    .iter()
                    .any(|w| matches!(w, Loc::Reg(_) | Loc::Flags));
                usize::from(writes && !eliminated && !fused_move[i])
            })
            .collect();
        let mut inst_uops: Vec<Vec<usize>> = vec![Vec::new(); effects.len()];
        for (j, u) in body.iter().enumerate() {
            inst_uops[u.inst].push(j);
        }
        let popularity: Vec<usize> = {
            let mut in_use: Vec<PortMask> =
                body.iter().map(|u| u.mask).filter(|&k| k != 0).collect();
            in_use.sort_unstable();
            in_use.dedup();
            (0..core.ports)
                .map(|p| in_use.iter().filter(|k| *k & (1 << p) != 0).count())
                .collect()
        };
        let mut port_order: Vec<usize> = (0..core.ports).collect();
        port_order.sort_by_key(|&p| popularity[p]);
        Iteration {
            body,
            slots,
            registers,
            inst_uops,
            port_order,
        }
    }
}

/// Result-bus use per port is kept by cycle modulo this ring's size.
const RING: usize = 64;

/// The schedule as far as it is simulated. Uop instances are numbered iteration-major
/// (`k * uops per iteration + j`), instructions likewise (`k * instructions + i`).
struct Schedule {
    /// Per uop instance: dispatch cycle, result-ready time, allocation cycle, bound port.
    dispatched: Vec<Option<u64>>,
    ready: Vec<Option<f64>>,
    alloc_cycle: Vec<u64>,
    bound_port: Vec<usize>,
    /// Uops bound to each port and not yet dispatched (a cycle late: \[UICA\]).
    pending: Vec<usize>,
    /// `pending` at the start of the previous cycle (the ten-port rule sees these).
    pending_prev_cycle: Vec<usize>,
    /// Ports whose bound uops dispatched in the previous cycle.
    dispatched_last_cycle: Vec<usize>,
    /// The next port in turn per memory port set (\[UICA\]).
    turns: HashMap<PortMask, usize>,
    /// Result-bus use per port, by cycle modulo [`RING`].
    writeback: Vec<[u64; RING]>,
    /// Entries taken in each scheduler.
    occupancy: [usize; 3],
    /// The next instruction instance to allocate, and how many have retired.
    next_alloc: usize,
    retired: usize,
    /// Reorder-buffer entries and registers taken.
    rob_used: usize,
    registers_used: usize,
    /// Allocated uop instances not yet dispatched.
    waiting: usize,
    /// Uop instances allocated so far: allocation goes in instance order (an iteration's
    /// uops are in instruction order), so these are `0..allocated_uops`.
    allocated_uops: usize,
    /// No uop instance before this one waits (all before it have dispatched).
    oldest_waiting: usize,
    /// Waiting uop instances dispatch looks at, one bit each: those not parked in
    /// `waiters_of` or `calendar`.
    candidates: Vec<u64>,
    /// Per uop instance: the first of the waiting uops parked until its result is known
    /// ([`NO_UOP`]: none), and per waiting uop the next one parked behind the same producer.
    first_waiter: Vec<usize>,
    next_waiter: Vec<usize>,
    /// Waiting uops parked until a cycle: their inputs are final, and they cannot dispatch
    /// before it.
    calendar: Calendar,
    /// Waiting reloads of a slot stored in the loop whose result is not yet known, in
    /// allocation order (the ones memory renaming gives the store's data).
    unforwarded: Vec<usize>,
    /// The port loads the binding rule sees this cycle (reused buffer).
    usage_seen: Vec<usize>,
    /// Uops bound this cycle per port set (the ten-port rule; reused buffer).
    same_mask_this_cycle: Vec<(PortMask, usize)>,
    cycle: u64,
    /// The uop instances `0..figure_uops` are those whose dispatch cycles
    /// [`Schedule::cycles_per_iteration`] reads, and `figure_dispatched` of them have
    /// dispatched. Once all have, the simulation can stop with the figure it would give at
    /// the end:
    /// - a uop's dispatch cycle is written once ([`Schedule::complete`]) and never changed,
    ///   whatever younger uops do later (port bindings, pending counts and the oldest-first
    ///   order only decide when a uop not yet dispatched goes);
    /// - the rest cannot hit [`STALL_LIMIT`]. Every instruction of the loop has allocated by
    ///   then, so each can allocate into an empty window (its slots, registers and scheduler
    ///   entries fit; the whole group fits; [`queues_free`] with no queue written yet succeeds
    ///   whenever it did with some written, as the greedy choice with fewer queues taken
    ///   takes a subset of them). A uop's producers (and a reload's store) are uops of older
    ///   instructions, of the previous iteration, or of its own instruction in the order
    ///   load → computation → store data, so the allocated uops not dispatched always include
    ///   one whose producers have all dispatched; the oldest such uop, its masks being the
    ///   layout's ports, is kept from dispatching only by older uops dispatching (each once,
    ///   at most a window's worth), a result bus taken by an earlier uop (a latency's worth of
    ///   cycles) or its own delay and inputs: far fewer than [`STALL_LIMIT`] cycles. With no
    ///   uop waiting, the oldest instruction retires within a latency; with none in flight,
    ///   the next one allocates. The output is the same (`the_figures_are_pinned`, reports).
    figure_uops: usize,
    figure_dispatched: usize,
}

/// Cycles ahead that [`Calendar`] keeps in its ring of buckets.
const CALENDAR_RING: u64 = 128;

/// Uops parked until a cycle after the current one, each woken in that cycle: those due
/// within [`CALENDAR_RING`] cycles in the bucket of their cycle (dispatch runs every cycle, so
/// a bucket holds one cycle's uops when it is emptied), later ones in a heap.
#[derive(Default)]
struct Calendar {
    ring: Vec<Vec<usize>>,
    far: BinaryHeap<Reverse<(u64, usize)>>,
}

impl Calendar {
    /// Parks uop `id` until cycle `at`, later than the current cycle `now`.
    fn park(&mut self, now: u64, at: u64, id: usize) {
        debug_assert!(at > now, "parked until a later cycle");
        if at - now < CALENDAR_RING {
            if self.ring.is_empty() {
                self.ring = vec![Vec::new(); CALENDAR_RING as usize];
            }
            self.ring[(at % CALENDAR_RING) as usize].push(id);
        } else {
            self.far.push(Reverse((at, id)));
        }
    }

    /// Hands `wake` every uop parked until cycle `now` or before (called every cycle).
    fn wake(&mut self, now: u64, mut wake: impl FnMut(usize)) {
        while let Some(&Reverse((at, id))) = self.far.peek()
            && at <= now
        {
            self.far.pop();
            wake(id);
        }
        if let Some(bucket) = self.ring.get_mut((now % CALENDAR_RING) as usize) {
            for id in bucket.drain(..) {
                wake(id);
            }
        }
    }
}

/// No uop instance (ends the lists of [`Schedule::first_waiter`]).
const NO_UOP: usize = usize::MAX;

/// What one cycle's dispatch has taken so far.
struct DispatchCycle {
    /// Ports that took a uop.
    busy: PortMask,
    /// The first store-data uop dispatched: its iteration and address.
    store: Option<(usize, Option<StoreAt>)>,
    /// No more store data this cycle.
    stores_closed: bool,
    /// Ports (as bound) of the uops dispatched.
    dispatched: Vec<usize>,
}

impl Schedule {
    fn new(iteration: &Iteration, core: &Core<'_>, iterations: usize) -> Self {
        let total = iteration.body.len() * iterations;
        Schedule {
            dispatched: vec![None; total],
            ready: vec![None; total],
            alloc_cycle: vec![0; total],
            bound_port: vec![usize::MAX; total],
            pending: vec![0; core.ports],
            pending_prev_cycle: vec![0; core.ports],
            dispatched_last_cycle: Vec::new(),
            turns: HashMap::new(),
            writeback: vec![[u64::MAX; RING]; core.ports],
            occupancy: [0; 3],
            next_alloc: 0,
            retired: 0,
            rob_used: 0,
            registers_used: 0,
            waiting: 0,
            allocated_uops: 0,
            oldest_waiting: 0,
            candidates: vec![0; total.div_ceil(64)],
            first_waiter: vec![NO_UOP; total],
            next_waiter: vec![NO_UOP; total],
            calendar: Calendar::default(),
            unforwarded: Vec::new(),
            usage_seen: Vec::with_capacity(core.ports),
            same_mask_this_cycle: Vec::new(),
            cycle: 0,
            // The iterations before the end of the measured ones.
            figure_uops: measured_iterations(iterations).end * iteration.body.len(),
            figure_dispatched: 0,
        }
    }

    /// When the inputs of uop instance `id` are ready, `None` while one is not yet known.
    fn input_ready(&self, iteration: &Iteration, id: usize) -> Option<f64> {
        let m = iteration.body.len();
        let (k, j) = (id / m, id % m);
        let mut t = 0.0f64;
        for &(p, d) in &iteration.body[j].inputs {
            if d > k {
                continue;
            }
            t = t.max(self.ready[(k - d) * m + p]?);
        }
        Some(t)
    }

    /// [`Schedule::input_ready`] of uop instance `id`, and whether that time is final (every
    /// input's producer has dispatched: a result known before dispatch, a reload's forwarded
    /// data, may still change); `Err` with a producer whose result is not yet known.
    fn inputs_ready(&self, iteration: &Iteration, id: usize) -> Result<(f64, bool), usize> {
        let m = iteration.body.len();
        let (k, j) = (id / m, id % m);
        let (mut t, mut settled) = (0.0f64, true);
        for &(p, d) in &iteration.body[j].inputs {
            if d > k {
                continue;
            }
            let producer = (k - d) * m + p;
            let Some(ready) = self.ready[producer] else {
                return Err(producer);
            };
            t = t.max(ready);
            settled &= self.dispatched[producer].is_some();
        }
        Ok((t, settled))
    }

    /// Retires in order, up to the retire width: an instruction whose uops have all
    /// completed before this cycle.
    fn retire(&mut self, iteration: &Iteration, core: &Core<'_>) {
        let (n, m) = (iteration.slots.len(), iteration.body.len());
        let mut r = 0;
        while self.retired < self.next_alloc && r < core.win.retire {
            let k = self.retired / n;
            let done = iteration.inst_uops[self.retired % n].iter().all(|&j| {
                let id = k * m + j;
                match (self.dispatched[id], self.ready[id]) {
                    (Some(d), Some(t)) => (d as f64 + 1.0).max(t) <= self.cycle as f64,
                    _ => false,
                }
            });
            if !done {
                break;
            }
            let i = self.retired % n;
            self.rob_used -= iteration.slots[i];
            self.registers_used -= iteration.registers[i];
            r += iteration.slots[i].max(1);
            self.retired += 1;
        }
    }

    /// Allocates in order, up to the issue width, while the reorder buffer, the registers
    /// and the schedulers have room; binds each uop to its port where the core does that at
    /// allocation.
    fn allocate(&mut self, iteration: &Iteration, core: &Core<'_>, total_insts: usize) {
        let (n, m) = (iteration.slots.len(), iteration.body.len());
        let body = &iteration.body;
        // The port loads the binding rule sees.
        let mut usage_seen = std::mem::take(&mut self.usage_seen);
        usage_seen.clone_from(match core.rule {
            PortRule::TenPort { .. } => &self.pending_prev_cycle,
            _ => &self.pending,
        });
        self.pending_prev_cycle.clone_from(&self.pending);
        let mut used = 0;
        // Queues of `single_queues` that took a uop this cycle.
        let mut written: PortMask = 0;
        let mut same_mask_this_cycle = std::mem::take(&mut self.same_mask_this_cycle);
        same_mask_this_cycle.clear();
        let mut group_index = 0usize;
        let group_fits = !core.options.whole_group_allocation
            || (room_for_a_group(
                core.issue_width,
                self.rob_used,
                core.win.rob,
                &self.occupancy,
                &core.capacity,
            ) && self.registers_used.saturating_add(core.issue_width) <= core.register_limit);
        while group_fits && self.next_alloc < total_insts {
            let i = self.next_alloc % n;
            let k = self.next_alloc / n;
            let slots = iteration.slots[i];
            if used + slots > core.issue_width
                || self.rob_used + slots > core.win.rob
                || self.registers_used + iteration.registers[i] > core.register_limit
            {
                break;
            }
            let mut need = [0usize; 3];
            for &j in &iteration.inst_uops[i] {
                if let Some(s) = body[j].scheduler {
                    need[s] += 1;
                }
            }
            if (0..3).any(|s| need[s] > 0 && self.occupancy[s] + need[s] > core.capacity[s]) {
                break;
            }
            if core.single_queues != 0
                && !queues_free(&iteration.inst_uops[i], body, core.single_queues, written)
            {
                break;
            }
            let slot_in_group = used;
            used += slots;
            self.rob_used += slots;
            self.registers_used += iteration.registers[i];
            for (taken, needed) in self.occupancy.iter_mut().zip(need) {
                *taken += needed;
            }
            for &j in &iteration.inst_uops[i] {
                let id = k * m + j;
                self.alloc_cycle[id] = self.cycle;
                let mask = body[j].mask;
                // Ports whose queue is still open this cycle (all of them without the limit).
                let open = match mask & !(written & core.single_queues) {
                    0 => mask,
                    open => open,
                };
                if mask != 0 && core.rule != PortRule::Free {
                    let in_turn = core.issue_slot_steers()
                        && takes_ports_in_turn(body[j].scheduler, core.split);
                    let p = if in_turn {
                        next_in_turn(mask, self.turns.entry(mask).or_insert(0))
                    } else {
                        let same_mask = match same_mask_this_cycle
                            .iter()
                            .position(|&(seen, _)| seen == open)
                        {
                            Some(at) => at,
                            None => {
                                same_mask_this_cycle.push((open, 0));
                                same_mask_this_cycle.len() - 1
                            }
                        };
                        bind_port(
                            core.rule,
                            open,
                            &usage_seen,
                            &mut same_mask_this_cycle[same_mask].1,
                            core.issue_slot_steers().then_some(slot_in_group),
                            group_index,
                        )
                    };
                    self.bound_port[id] = p;
                    written |= core.single_queues & (1 << p);
                    self.pending[p] += 1;
                    group_index += 1;
                }
                if core.win.renames_memory && matches!(body[j].forward_from, Some((_, d)) if d <= k)
                {
                    self.unforwarded.push(id);
                }
                debug_assert_eq!(id, self.allocated_uops, "allocation in instance order");
                self.allocated_uops = id + 1;
                self.waiting += 1;
                self.candidates[id / 64] |= 1 << (id % 64);
            }
            self.next_alloc += 1;
        }
        self.usage_seen = usage_seen;
        self.same_mask_this_cycle = same_mask_this_cycle;
    }

    /// Dispatches waiting uops, oldest first, each to a free port (its bound one where the
    /// core binds at allocation) once its inputs are ready.
    fn dispatch(&mut self, iteration: &Iteration, core: &Core<'_>) {
        let m = iteration.body.len();
        // Pending counts drop one cycle after dispatch ([UICA]).
        let mut dispatched = std::mem::take(&mut self.dispatched_last_cycle);
        for p in dispatched.drain(..) {
            self.pending[p] = self.pending[p].saturating_sub(1);
        }
        // Memory renaming: a waiting reload of a stored slot takes the store's data as its
        // result once that is known.
        let mut unforwarded = std::mem::take(&mut self.unforwarded);
        unforwarded.retain(|&id| {
            if self.ready[id].is_some() {
                return false;
            }
            if let Some((s, d)) = iteration.body[id % m].forward_from
                // The stored register's value, not the store-data uop's dispatch.
                && let Some(data) = self.input_ready(iteration, (id / m - d) * m + s)
            {
                self.ready[id] = Some(data + core.model.store_forward);
                self.wake_waiters(id);
                return false;
            }
            true
        });
        self.unforwarded = unforwarded;
        let mut this_cycle = DispatchCycle {
            busy: 0,
            store: None,
            stores_closed: false,
            dispatched,
        };
        let candidates = &mut self.candidates;
        self.calendar
            .wake(self.cycle, |id| candidates[id / 64] |= 1 << (id % 64));
        while self.oldest_waiting < self.allocated_uops
            && self.dispatched[self.oldest_waiting].is_some()
        {
            self.oldest_waiting += 1;
        }
        // Oldest first: the candidates in instance order, including those a dispatch in
        // this pass makes candidates after the one dispatched.
        for word in self.oldest_waiting / 64..self.allocated_uops.div_ceil(64) {
            let mut bits = self.candidates[word];
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                self.dispatch_uop(iteration, core, word * 64 + bit, &mut this_cycle);
                bits = self.candidates[word] & (u64::MAX << bit << 1);
            }
        }
        self.dispatched_last_cycle = this_cycle.dispatched;
    }

    /// Parks waiting uop `id` until `producer`'s result is known.
    fn park_behind(&mut self, id: usize, producer: usize) {
        self.candidates[id / 64] &= !(1 << (id % 64));
        self.next_waiter[id] = self.first_waiter[producer];
        self.first_waiter[producer] = id;
    }

    /// Parks waiting uop `id` until cycle `at`.
    fn park_until(&mut self, id: usize, at: u64) {
        self.candidates[id / 64] &= !(1 << (id % 64));
        self.calendar.park(self.cycle, at, id);
    }

    /// Makes the uops parked behind `producer` candidates again (its result is now known).
    fn wake_waiters(&mut self, producer: usize) {
        let mut id = std::mem::replace(&mut self.first_waiter[producer], NO_UOP);
        while id != NO_UOP {
            self.candidates[id / 64] |= 1 << (id % 64);
            id = std::mem::replace(&mut self.next_waiter[id], NO_UOP);
        }
    }

    /// Marks uop instance `id` dispatched this cycle with its result ready at `ready`.
    fn complete(&mut self, id: usize, ready: f64) {
        self.candidates[id / 64] &= !(1 << (id % 64));
        self.waiting -= 1;
        self.dispatched[id] = Some(self.cycle);
        self.figure_dispatched += usize::from(id < self.figure_uops);
        self.ready[id] = Some(ready);
        self.wake_waiters(id);
    }

    /// Dispatches uop instance `id` this cycle if it can go; otherwise parks it where its
    /// inputs show it cannot go before a result or a cycle.
    fn dispatch_uop(
        &mut self,
        iteration: &Iteration,
        core: &Core<'_>,
        id: usize,
        this_cycle: &mut DispatchCycle,
    ) {
        let cycle = self.cycle;
        let m = iteration.body.len();
        let u = &iteration.body[id % m];
        let paired = core.pairs_stores && u.scheduler == Some(STORE_DATA);
        if u.mask != 0 && !paired {
            // No free port for it this cycle, whatever its inputs.
            let free = if core.rule == PortRule::Free {
                u.mask & !this_cycle.busy
            } else {
                (1 << self.bound_port[id]) & !this_cycle.busy
            };
            if free == 0 {
                return;
            }
        }
        let (t, settled) = match self.inputs_ready(iteration, id) {
            Ok(ready) => ready,
            Err(producer) => return self.park_behind(id, producer),
        };
        if u.mask == 0 {
            // Completes at rename once its inputs are ready.
            let at = t.max(self.alloc_cycle[id] as f64);
            if at > cycle as f64 {
                if settled {
                    self.park_until(id, at.ceil() as u64);
                }
                return;
            }
            return self.complete(id, at + u.latency);
        }
        let operands = t.ceil() as u64;
        let earliest = self.alloc_cycle[id] + core.delay;
        let mut first = operands.max(earliest);
        if core.options.late_operand_penalty && (operands == earliest || operands == earliest + 1) {
            // [UICA]: operands ready at the earliest dispatch cycle, or one later, cost a cycle.
            first = first.max(operands + 1);
        }
        if cycle < first {
            if settled {
                self.park_until(id, first);
            }
            return;
        }
        // The cycle this uop's result would take the port's result bus (computation uops).
        let returns =
            (core.options.writeback_conflicts && u.scheduler == Some(COMPUTE) && u.latency >= 1.0)
                .then(|| cycle + u.latency.ceil() as u64);
        let writeback = &self.writeback;
        let bus_free = |p: usize| returns.is_none_or(|r| writeback[p][r as usize % RING] != r);
        // Paired stores: the two oldest ready store-data uops go together, each on a free
        // store-data port, only if they write the same line; otherwise the older goes
        // alone (\[UICA\] binds store data to its ports in turn, so the two oldest sit at
        // the heads of the two queues).
        if paired {
            match this_cycle.store {
                _ if this_cycle.stores_closed => return,
                None => this_cycle.store = Some((id / m, u.store_at)),
                Some((k, first)) => {
                    this_cycle.stores_closed = true;
                    let same = matches!((first, u.store_at), (Some(a), Some(b)) if a.same_line(k, &b, id / m));
                    if !same {
                        return;
                    }
                }
            }
        }
        let busy = this_cycle.busy;
        let port = if core.rule == PortRule::Free || paired {
            iteration
                .port_order
                .iter()
                .copied()
                .find(|&p| u.mask & (1 << p) != 0 && busy & (1 << p) == 0 && bus_free(p))
        } else {
            let p = self.bound_port[id];
            (p < core.ports && busy & (1 << p) == 0 && bus_free(p)).then_some(p)
        };
        let Some(p) = port else {
            return;
        };
        // A forwarded reload needs its store's data.
        let forwarded = match u.forward_from {
            Some((s, d)) if d <= id / m => match self.ready[(id / m - d) * m + s] {
                Some(data) => Some(data + core.model.store_forward),
                None => return,
            },
            _ => None,
        };
        this_cycle.busy |= 1 << p;
        if let Some(r) = returns {
            self.writeback[p][r as usize % RING] = r;
        }
        self.complete(
            id,
            match forwarded {
                Some(f) if core.win.renames_memory => f,
                Some(f) => f.max(cycle as f64 + u.latency),
                None => cycle as f64 + u.latency,
            },
        );
        if let Some(s) = u.scheduler {
            self.occupancy[s] -= 1;
        }
        if core.rule != PortRule::Free {
            // The port it was bound to (a paired store may have gone on the other one).
            this_cycle
                .dispatched
                .push(if paired { self.bound_port[id] } else { p });
        }
    }

    /// Cycles per iteration between the two ends of the `iterations` simulated (`m` uops
    /// each): away from both ends, since the first iterations start into an empty core and
    /// the last ones finish without younger uops competing for the ports. Each end is
    /// averaged over a few iterations: one iteration's finish jitters by a cycle or two with
    /// the port bindings.
    fn cycles_per_iteration(&self, m: usize, iterations: usize) -> Option<f64> {
        let finish =
            |k: usize| -> Option<u64> { (k * m..(k + 1) * m).map(|i| self.dispatched[i]).max()? };
        let std::ops::Range {
            start: from,
            end: to,
        } = measured_iterations(iterations);
        let span = ((to - from) / 4).max(1);
        let mean = |range: std::ops::Range<usize>| -> Option<f64> {
            let len = range.len() as f64;
            let mut sum = 0.0;
            for k in range {
                sum += finish(k)? as f64;
            }
            Some(sum / len)
        };
        let (first, last) = (mean(from..from + span)?, mean(to - span..to)?);
        Some((last - first).max(0.0) / (to - from - span) as f64)
    }
}

/// The port \[UICA\]'s rule binds a uop with `mask` to, given the ports' pending uops `usage`,
/// how many uops with the same mask this cycle already bound (`nth`, counted on by the
/// ten-port rule), and the uop's place in the allocation group.
pub(super) fn bind_port(
    rule: PortRule,
    mask: PortMask,
    usage: &[usize],
    nth: &mut usize,
    issue_slot: Option<usize>,
    group_index: usize,
) -> usize {
    // Port numbers fit a byte (a mask has 32 bits): a small array to fill and rank.
    let mut candidates = [0u8; PortMask::BITS as usize];
    let mut count = 0;
    for p in (0..usage.len()).filter(|p| mask & (1 << p) != 0) {
        candidates[count] = p as u8;
        count += 1;
    }
    let load = |p: u8| usage[usize::from(p)];
    if count == 1 {
        return usize::from(candidates[0]);
    }
    // Least loaded first; ties to the higher port number ([UICA]).
    let ranked = &mut candidates[..count];
    ranked.sort_unstable_by(|&a, &b| load(a).cmp(&load(b)).then(b.cmp(&a)));
    let p = match rule {
        PortRule::TenPort { margin } => {
            let least = load(ranked[0]);
            // Ranked by load: the ports within the margin lead.
            let within = ranked
                .iter()
                .take_while(|&&p| load(p) < least + margin)
                .count();
            let ranked = &ranked[..within];
            let first_of_its_set = *nth == 0;
            let p = match issue_slot {
                Some(4) => ranked[0],
                Some(3) if first_of_its_set && ranked.len() > 1 => ranked[1],
                _ => ranked[*nth % ranked.len()],
            };
            *nth += 1;
            p
        }
        _ => {
            if group_index.is_multiple_of(2) || load(ranked[1]) >= load(ranked[0]) + 3 {
                ranked[0]
            } else {
                ranked[1]
            }
        }
    };
    usize::from(p)
}

/// Whether the reorder buffer (`rob_used` of `rob` entries) and every scheduler (`occupancy`
/// of `capacity`) have room for a whole allocation group of `width` (\[UICA\]
/// `ReorderBuffer.isFull`, `Scheduler.isFull`; [`SimOptions::whole_group_allocation`]).
pub(super) fn room_for_a_group(
    width: usize,
    rob_used: usize,
    rob: usize,
    occupancy: &[usize; 3],
    capacity: &[usize; 3],
) -> bool {
    rob_used + width <= rob
        && occupancy
            .iter()
            .zip(capacity)
            .all(|(&used, &cap)| used.saturating_add(width) <= cap)
}

/// Whether every uop of `uops` (indices into `body`) finds a queue open this cycle: a uop
/// whose ports all have single-write queues (`single`) needs one not yet `written`, and takes
/// it (the lowest such, for the uops after it in the same instruction).
fn queues_free(uops: &[usize], body: &[SimUop], single: PortMask, written: PortMask) -> bool {
    let mut taken = written & single;
    for &j in uops {
        let mask = body[j].mask;
        if mask == 0 || mask & !single != 0 {
            continue;
        }
        let open = mask & !taken;
        if open == 0 {
            return false;
        }
        taken |= open & open.wrapping_neg();
    }
    true
}

/// Whether a uop in `scheduler` takes its ports in turn (\[UICA\]: loads, store addresses and
/// store data do, per port set), not by load.
pub(super) fn takes_ports_in_turn(scheduler: Option<usize>, split: bool) -> bool {
    split && matches!(scheduler, Some(MEMORY | STORE_DATA))
}

/// The next port of `mask` after the one `turn` last gave (in port order), advancing `turn`.
pub(super) fn next_in_turn(mask: PortMask, turn: &mut usize) -> usize {
    let ports: Vec<usize> = (0..PortMask::BITS as usize)
        .filter(|p| mask & (1 << p) != 0)
        .collect();
    let p = ports
        .iter()
        .copied()
        .find(|&p| p >= *turn)
        .or_else(|| ports.first().copied())
        .unwrap_or(0);
    *turn = p + 1;
    p
}

#[cfg(test)]
mod tests {
    use super::{CALENDAR_RING, Calendar};

    /// Runs a calendar cycle by cycle from 0, parking `(at, id)` pairs in the cycles given,
    /// and returns the cycle each uop was woken in.
    fn wake_cycles(parks: &[(u64, u64, usize)], until: u64) -> Vec<(usize, u64)> {
        let mut calendar = Calendar::default();
        let mut woken = Vec::new();
        for now in 0..until {
            calendar.wake(now, |id| woken.push((id, now)));
            for &(_, at, id) in parks.iter().filter(|p| p.0 == now) {
                calendar.park(now, at, id);
            }
        }
        woken.sort_unstable();
        woken
    }

    #[test]
    fn a_parked_uop_wakes_in_its_cycle_near_or_far() {
        let ring = CALENDAR_RING;
        // (parked in cycle, until cycle, uop): the next cycle, the ring's last one, the first
        // beyond it, far beyond, and two uops due in one bucket's cycle one lap apart.
        let parks = [
            (0, 1, 0),
            (0, ring - 1, 1),
            (0, ring, 2),
            (3, 5 * ring + 7, 3),
            (10, 20, 4),
            (21, 20 + ring, 5),
        ];
        assert_eq!(
            wake_cycles(&parks, 6 * ring),
            vec![
                (0, 1),
                (1, ring - 1),
                (2, ring),
                (3, 5 * ring + 7),
                (4, 20),
                (5, 20 + ring)
            ]
        );
    }
}
