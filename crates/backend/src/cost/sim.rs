//! An **experiment**, not part of the bound: a cycle-by-cycle schedule of the hot loop on an
//! idealised out-of-order core, to test whether the gap between the bound and measurement
//! (SHA-256, the BigInteger loops) comes from the recurrence and the ports *interfering* —
//! `max(recurrence, resource)` assumes they overlap perfectly.
//!
//! The core: instructions allocate in program order, [`CoreModel::issue_width`] slots per
//! cycle (a compare fused with its branch takes no slot of its own, an indexed store two on
//! Intel cores), into a reorder buffer of
//! [`Window::rob`] and a scheduler of [`Window::scheduler`] entries; each cycle the *oldest*
//! ready instructions take a free port of their class ([`super::ports`]), as Intel and AMD
//! schedulers pick; a result is ready `latency` cycles later (the dependence graph's edge
//! weights, so store forwarding and load-to-use are included); instructions retire in order,
//! `issue_width` per cycle. Eliminated moves and zero idioms execute at allocation. Each
//! instruction is one port uop (its computation, else its load or store-data part). The
//! front end is ideal. Enough iterations are simulated to fill the reorder buffer three times
//! (at least [`MIN_ITERATIONS`]); cycles per iteration are measured over the second half, an
//! iteration's time being the start of its last-starting instruction.

use super::models::CoreModel;
use super::ports::{PortLayout, UopClass, port_layout};
use super::{Effects, OpClass, dependence_graph};

/// Fewest iterations simulated.
pub const MIN_ITERATIONS: usize = 6;

/// Out-of-order window sizes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// Reorder-buffer entries.
    pub rob: usize,
    /// Scheduler (reservation-station) entries.
    pub scheduler: usize,
}

/// The window of `core` ([INT-OPT] Skylake ROB 224 / RS 97, Golden Cove ROB 512 / 97-entry
/// ALU scheduler; [AMD-SOG] Zen 3 ROB 256, Zen 4 ROB 320, 4 × 24 integer scheduler entries).
pub fn window(core: &str) -> Option<Window> {
    let (rob, scheduler) = match core {
        "skylake" => (224, 97),
        "sapphirerapids" => (512, 97),
        "znver3" => (256, 96),
        "znver4" => (320, 96),
        _ => return None,
    };
    Some(Window { rob, scheduler })
}

/// The port uop that stands for an instruction in the schedule.
fn main_uop(uops: &[UopClass]) -> Option<UopClass> {
    uops.iter()
        .copied()
        .find(|c| {
            !matches!(
                c,
                UopClass::Load | UopClass::StoreAddress | UopClass::StoreData
            )
        })
        .or_else(|| {
            uops.iter()
                .copied()
                .find(|c| matches!(c, UopClass::Load | UopClass::StoreData))
        })
}

/// Cycles per iteration of the simulated schedule, `None` for cores without a port layout or
/// window, or an empty loop.
pub(crate) fn simulate(
    effects: &[Effects],
    uops: &[Vec<UopClass>],
    fused_compares: &[usize],
    model: &CoreModel,
) -> Option<f64> {
    let layout: &PortLayout = port_layout(model.name)?;
    let win = window(model.name)?;
    let n = effects.len();
    if n == 0 || uops.len() != n {
        return None;
    }
    let graph = dependence_graph(effects, model);
    let mut preds: Vec<Vec<(usize, f64, usize)>> = vec![Vec::new(); n];
    for e in &graph.edges {
        preds[e.to].push((e.from, e.latency, e.distance as usize));
    }
    let masks: Vec<u32> = uops
        .iter()
        .zip(effects)
        .map(|(u, fx)| match fx.class {
            OpClass::Move | OpClass::ZeroIdiom => 0,
            _ => main_uop(u).map_or(0, |c| layout.mask(c)),
        })
        .collect();
    // Issue slots as the bound counts them: a fused compare none of its own, an indexed store
    // two on cores that un-laminate it.
    let slots: Vec<usize> = effects
        .iter()
        .enumerate()
        .map(|(i, fx)| {
            if fused_compares.contains(&i) {
                0
            } else if model.unlaminates_indexed_stores
                && fx.store.is_some()
                && fx.addr_reads.len() >= 2
            {
                2
            } else {
                1
            }
        })
        .collect();
    let iterations = MIN_ITERATIONS.max(3 * win.rob / n + 4);
    let total = n * iterations;
    // Start cycle of each instance (iteration-major), None until executed.
    let mut start: Vec<Option<u64>> = vec![None; total];
    let width = model.issue_width.max(1.0) as usize;
    let ports = layout.ports.len();
    // A uop takes the free port of its set that the fewest classes in use can take, so that
    // flexible uops leave the scarce ports (0 and 6 for shifts) to the uops that need them.
    let popularity: Vec<usize> = (0..ports)
        .map(|p| {
            let mut in_use: Vec<u32> = masks.iter().copied().filter(|m| *m != 0).collect();
            in_use.sort_unstable();
            in_use.dedup();
            in_use.iter().filter(|m| *m & (1 << p) != 0).count()
        })
        .collect();
    let mut port_order: Vec<usize> = (0..ports).collect();
    port_order.sort_by_key(|&p| popularity[p]);
    let (mut next_alloc, mut retired) = (0usize, 0usize);
    let mut waiting: Vec<usize> = Vec::new();
    let mut cycle: u64 = 0;
    let ready_at = |inst: usize, start: &[Option<u64>]| -> Option<u64> {
        let (k, v) = (inst / n, inst % n);
        let mut t = 0.0f64;
        for &(u, lat, d) in &preds[v] {
            if d > k {
                continue;
            }
            let p = (k - d) * n + u;
            let s = start[p]? as f64;
            t = t.max(s + lat);
        }
        Some(t.ceil() as u64)
    };
    while retired < total {
        // Retire in order.
        let mut r = 0;
        while retired < next_alloc && r < width && start[retired].is_some_and(|s| s < cycle) {
            retired += 1;
            r += 1;
        }
        // Allocate in order.
        let mut used = 0;
        while next_alloc < total
            && used + slots[next_alloc % n] <= width
            && next_alloc - retired < win.rob
            && waiting.len() < win.scheduler
        {
            let i = next_alloc;
            used += slots[i % n];
            waiting.push(i);
            next_alloc += 1;
        }
        // Execute, oldest first.
        let mut busy = vec![false; ports];
        waiting.retain(|&i| {
            let Some(t) = ready_at(i, &start) else {
                return true;
            };
            if t > cycle {
                return true;
            }
            let mask = masks[i % n];
            if mask == 0 {
                start[i] = Some(cycle);
                return false;
            }
            match port_order
                .iter()
                .copied()
                .find(|&p| mask & (1 << p) != 0 && !busy[p])
            {
                Some(p) => {
                    busy[p] = true;
                    start[i] = Some(cycle);
                    false
                }
                None => true,
            }
        });
        cycle += 1;
        if cycle > 1_000_000_000 {
            return None;
        }
    }
    let finish = |k: usize| -> Option<u64> { (k * n..(k + 1) * n).map(|i| start[i]).max()? };
    let from = iterations / 2;
    let (first, last) = (finish(from)?, finish(iterations - 1)?);
    Some(last.saturating_sub(first) as f64 / (iterations - 1 - from) as f64)
}

#[cfg(test)]
mod tests {
    use super::super::{Target, bound_of, models::core_model, simulated};
    use crate::mca::HotLoop;

    fn body(lines: &[&str]) -> HotLoop {
        super::super::tests::body(Target::X86_64, lines)
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
