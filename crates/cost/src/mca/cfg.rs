//! The control-flow graph of a disassembled function, and which of its loops is the hot one.
//!
//! **Blocks.** Leaders are the entry, branch targets and the instruction after any transfer;
//! a block's successors are its branch target (when it lies in the function) and, unless it
//! ends in an unconditional jump, a return or a trap, the next block. A block that ends in an
//! indirect jump (a jump table's dispatch) has the targets the code generator recorded for it
//! ([`super::JumpTargets`]) and no next block: what follows is the table. Only blocks reachable
//! from the entry count: what is not reachable is data (constant pools, riscv64's inline
//! constants) that llvm-objdump decoded as instructions or could not decode.
//!
//! **Loops.** A back edge is an edge to a block at or before its source (address order); the
//! natural loop of a header is every block that reaches one of its back edges' sources
//! without passing the header (all back edges to one header form one loop).
//!
//! **The hot loop** is the loop the time is spent in, chosen statically:
//! 0. a loop *without calls* where there is one: in code that calls other functions the loops
//!    between the calls are what the code itself spends its time in (a loop that calls is
//!    chosen only when every innermost loop does, and is then not costed: its time is the
//!    callee's);
//! 1. an *innermost* loop (no other loop's header inside it): the instructions that run most;
//! 2. of those the *deepest* (inside the most loops): its trip count multiplies with theirs —
//!    `squareToLen`'s `mulAdd` loop runs n(n−1)/2 times per call, its squares and shift loops
//!    n and 2n times;
//! 3. of those the one with the fewest *exit edges*: bounds-check elimination's predicated
//!    copy of a loop has none but its loop test, the checked fallback copy one more per check
//!    (each check branches out of the loop), so the check-free loop that runs when the
//!    preheader test passes is chosen over its checked twin (MD5 with `--slow-path eager`,
//!    `mulAdd`);
//! 4. then the largest (instructions), then the lowest address, so the choice is deterministic.

use super::{Flow, JumpTargets, Listed};

/// Basic blocks, edges and reachability of one disassembled function.
pub(super) struct Cfg {
    /// Instruction index range `[start, end)` of each block, in address order.
    pub ranges: Vec<(usize, usize)>,
    /// Successor blocks, block after block: those of block `b` are
    /// `succ_list[succ_starts[b]..succ_starts[b + 1]]` (at most two but after an indirect jump).
    succ_list: Vec<usize>,
    succ_starts: Vec<usize>,
    /// Predecessor blocks (reachable ones only), block after block: those of block `b` are
    /// `preds[pred_starts[b]..pred_starts[b + 1]]`.
    preds: Vec<usize>,
    pred_starts: Vec<usize>,
    /// Whether control reaches the block from the entry.
    pub reachable: Vec<bool>,
}

/// `addrs` sorted, without duplicates: a set to look addresses up in by binary search.
fn address_set(mut addrs: Vec<u64>) -> Vec<u64> {
    addrs.sort_unstable();
    addrs.dedup();
    addrs
}

impl Cfg {
    /// The graph of `insts` whose transfers are `flows` (same length).
    pub fn build<I: Listed>(insts: &[I], flows: &[Flow], jumps: JumpTargets<'_>) -> Self {
        let mut leaders: Vec<u64> = Vec::new();
        if let Some(first) = insts.first() {
            leaders.push(first.addr());
        }
        for (i, f) in flows.iter().enumerate() {
            if let Flow::Jump(t) | Flow::CondJump(t) = f {
                leaders.push(*t);
            }
            if *f == Flow::Indirect {
                leaders.extend(jumps.of(insts[i].addr()));
            }
            if *f != Flow::Next
                && let Some(next) = insts.get(i + 1)
            {
                leaders.push(next.addr());
            }
        }
        let leaders = address_set(leaders);
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for (i, inst) in insts.iter().enumerate() {
            if i == 0 || leaders.binary_search(&inst.addr()).is_ok() {
                ranges.push((i, i + 1));
            } else if let Some(last) = ranges.last_mut() {
                last.1 = i + 1;
            }
        }
        // Block by start address; of blocks starting at one address the last (as a map
        // filled in block order keeps it).
        let mut block_at: Vec<(u64, usize)> = ranges
            .iter()
            .enumerate()
            .map(|(b, &(s, _))| (insts[s].addr(), b))
            .collect();
        block_at.sort_by_key(|&(addr, _)| addr);
        let block_of = |t: u64| -> Option<usize> {
            let after = block_at.partition_point(|&(addr, _)| addr <= t);
            after
                .checked_sub(1)
                .map(|at| block_at[at])
                .and_then(|(addr, b)| (addr == t).then_some(b))
        };
        let mut succ_list: Vec<usize> = Vec::with_capacity(2 * ranges.len());
        let mut succ_starts: Vec<usize> = Vec::with_capacity(ranges.len() + 1);
        for (b, &(_, end)) in ranges.iter().enumerate() {
            succ_starts.push(succ_list.len());
            let fallthrough = (b + 1 < ranges.len()).then_some(b + 1);
            match flows[end - 1] {
                Flow::Next => succ_list.extend(fallthrough),
                Flow::Jump(t) => succ_list.extend(block_of(t)),
                Flow::CondJump(t) => {
                    succ_list.extend(block_of(t));
                    succ_list.extend(fallthrough);
                }
                Flow::Indirect => {
                    // One edge per target block, however many table entries lead there.
                    let mut targets: Vec<usize> = jumps
                        .of(insts[end - 1].addr())
                        .filter_map(block_of)
                        .collect();
                    targets.sort_unstable();
                    targets.dedup();
                    succ_list.extend(targets);
                }
                Flow::Return | Flow::Trap => {}
            }
        }
        succ_starts.push(succ_list.len());
        let mut reachable = vec![false; ranges.len()];
        let mut work: Vec<usize> = if ranges.is_empty() { vec![] } else { vec![0] };
        while let Some(b) = work.pop() {
            if std::mem::replace(&mut reachable[b], true) {
                continue;
            }
            work.extend(
                succ_list[succ_starts[b]..succ_starts[b + 1]]
                    .iter()
                    .copied()
                    .filter(|&s| !reachable[s]),
            );
        }
        // Counted, then placed in the order a list per block would take them.
        let mut pred_starts = vec![0usize; ranges.len() + 1];
        for b in (0..ranges.len()).filter(|&b| reachable[b]) {
            for &s in &succ_list[succ_starts[b]..succ_starts[b + 1]] {
                pred_starts[s + 1] += 1;
            }
        }
        for b in 0..ranges.len() {
            pred_starts[b + 1] += pred_starts[b];
        }
        let mut preds = vec![0usize; pred_starts[ranges.len()]];
        let mut next_pred = pred_starts.clone();
        for b in (0..ranges.len()).filter(|&b| reachable[b]) {
            for &s in &succ_list[succ_starts[b]..succ_starts[b + 1]] {
                preds[next_pred[s]] = b;
                next_pred[s] += 1;
            }
        }
        Self {
            ranges,
            succ_list,
            succ_starts,
            preds,
            pred_starts,
            reachable,
        }
    }

    /// The successors of block `b`.
    pub fn succs(&self, b: usize) -> &[usize] {
        &self.succ_list[self.succ_starts[b]..self.succ_starts[b + 1]]
    }

    /// The reachable predecessors of block `b`.
    pub fn preds(&self, b: usize) -> &[usize] {
        &self.preds[self.pred_starts[b]..self.pred_starts[b + 1]]
    }

    /// The address of a reachable branch whose target lies inside the listing but at no
    /// instruction start (the decoder lost the instruction boundary), if any.
    pub fn branch_into_undecoded<I: Listed>(&self, insts: &[I], flows: &[Flow]) -> Option<u64> {
        let (first, last) = (insts.first()?.addr(), insts.last()?.addr());
        let mut starts: Option<Vec<u64>> = None;
        self.ranges
            .iter()
            .enumerate()
            .filter(|(b, _)| self.reachable[*b])
            .find_map(|(_, &(_, end))| match flows[end - 1] {
                Flow::Jump(t) | Flow::CondJump(t)
                    if (first..=last).contains(&t)
                        && starts
                            .get_or_insert_with(|| {
                                address_set(insts.iter().map(Listed::addr).collect())
                            })
                            .binary_search(&t)
                            .is_err() =>
                {
                    Some(insts[end - 1].addr())
                }
                _ => None,
            })
    }

    /// A target of a reachable indirect jump at which the listing has no instruction (a
    /// linear sweep that decoded the jump table as instructions ran past the target), if any.
    pub fn jump_into_undecoded<I: Listed>(
        &self,
        insts: &[I],
        flows: &[Flow],
        jumps: JumpTargets<'_>,
    ) -> Option<u64> {
        let starts = || address_set(insts.iter().map(Listed::addr).collect());
        let mut known: Option<Vec<u64>> = None;
        self.reachable_dispatches(insts, flows).find_map(|addr| {
            let starts = known.get_or_insert_with(starts);
            jumps.of(addr).find(|t| starts.binary_search(t).is_err())
        })
    }

    /// The offset of a reachable indirect jump whose block's edges are not known
    /// ([`JumpTargets::unknown_at`]), if there is one.
    pub fn dispatch_with_unknown_targets<I: Listed>(
        &self,
        insts: &[I],
        flows: &[Flow],
        jumps: JumpTargets<'_>,
    ) -> Option<u64> {
        self.reachable_dispatches(insts, flows)
            .find(|&addr| jumps.unknown_at(addr))
    }

    /// The offsets of the indirect jumps that end reachable blocks.
    fn reachable_dispatches<'a, I: Listed>(
        &'a self,
        insts: &'a [I],
        flows: &'a [Flow],
    ) -> impl Iterator<Item = u64> + 'a {
        self.ranges
            .iter()
            .enumerate()
            .filter(|&(b, &(_, end))| self.reachable[b] && flows[end - 1] == Flow::Indirect)
            .map(|(_, &(_, end))| insts[end - 1].addr())
    }

    fn size(&self, body: &[usize]) -> usize {
        body.iter()
            .map(|&b| self.ranges[b].1 - self.ranges[b].0)
            .sum()
    }
}

/// One natural loop and what the choice of the hot loop weighs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct NaturalLoop {
    /// The header block.
    pub header: usize,
    /// Its blocks (header included), in address order.
    pub body: Vec<usize>,
    /// Loops whose body holds this loop's header, itself included (1 = outermost).
    pub depth: usize,
    /// Edges from the body to a block outside it.
    pub exits: usize,
    /// Instructions in the body.
    pub size: usize,
    /// Whether no other loop's header lies in the body.
    pub innermost: bool,
}

/// Every natural loop of `cfg`'s reachable part, by header address.
pub(super) fn natural_loops(cfg: &Cfg) -> Vec<NaturalLoop> {
    let blocks = cfg.ranges.len();
    // Per header (in the order first seen), which blocks its loop holds.
    let mut bodies: Vec<(usize, Vec<bool>)> = Vec::new();
    let mut work: Vec<usize> = Vec::new();
    for src in 0..blocks {
        if !cfg.reachable[src] {
            continue;
        }
        for &header in cfg.succs(src).iter().filter(|&&h| h <= src) {
            let at = match bodies.iter().position(|(h, _)| *h == header) {
                Some(at) => at,
                None => {
                    bodies.push((header, vec![false; blocks]));
                    bodies.len() - 1
                }
            };
            let body = &mut bodies[at].1;
            body[header] = true;
            work.clear();
            if !std::mem::replace(&mut body[src], true) {
                work.push(src);
            }
            // The header is in the body already, so the walk stops there.
            while let Some(b) = work.pop() {
                for &p in cfg.preds(b) {
                    if !std::mem::replace(&mut body[p], true) {
                        work.push(p);
                    }
                }
            }
        }
    }
    bodies.sort_unstable_by_key(|&(header, _)| header);
    bodies
        .iter()
        .map(|(header, holds)| {
            let header = *header;
            let body: Vec<usize> = (0..blocks).filter(|&b| holds[b]).collect();
            let exits = body
                .iter()
                .map(|&b| cfg.succs(b).iter().filter(|&&s| !holds[s]).count())
                .sum();
            NaturalLoop {
                header,
                depth: bodies.iter().filter(|(_, o)| o[header]).count(),
                exits,
                size: cfg.size(&body),
                innermost: bodies.iter().all(|(h, _)| *h == header || !holds[*h]),
                body,
            }
        })
        .collect()
}

/// The hot loop (see the module docs), or `None` without a loop; `block_calls[b]` is the
/// number of calls in block `b`.
pub(super) fn choose_loop(cfg: &Cfg, block_calls: &[usize]) -> Option<NaturalLoop> {
    let calls = |l: &NaturalLoop| l.body.iter().any(|&b| block_calls.get(b) > Some(&0));
    natural_loops(cfg)
        .into_iter()
        .filter(|l| l.innermost)
        .min_by(|a, b| {
            calls(a)
                .cmp(&calls(b))
                .then(b.depth.cmp(&a.depth))
                .then(a.exits.cmp(&b.exits))
                .then(b.size.cmp(&a.size))
                .then(a.header.cmp(&b.header))
        })
}
