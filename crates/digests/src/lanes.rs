//! The streaming lane engine: many independent [`Md5`] hashers share one multi-buffer kernel.
//!
//! A [`LaneEngine`] hands out ordinary [`Md5`] hashers (`update` in pieces from any thread,
//! `finalize`, `Clone`, `reset`). Their whole blocks go to the engine, which keeps each stream's
//! chaining value and the blocks it has received but not compressed yet (its *pending* blocks,
//! at most [`LaneEngine::hold_back_blocks`] of them: a stream is never held back longer than
//! that). When an `update` would exceed the bound, the calling thread runs *rounds* of the
//! multi-buffer kernel: its own stream in one lane, the other streams with the most pending
//! blocks in the others (one lane per stream), as many blocks per round as the shortest of them
//! has — but when the streams with pending blocks fill every lane with fewer than half as many
//! again left out, at most a quarter of the hold-back per round
//! ([`LaneEngine::round_cap_blocks`]): such a round leaves its partners pending blocks rather
//! than draining them all at once, so the next round again finds a stream for every lane (the
//! streams left out keep the most pending blocks and are chosen first next time; with more of
//! them waiting, rounds stay long, which costs less per block). Lanes stay idle only when fewer
//! streams than lanes have pending blocks; idle lanes repeat a busy lane's input and their
//! results are dropped. Streams from any thread are gathered the same way (the engine is one
//! mutex: whichever thread runs a round compresses every chosen stream, as in flat combining).
//! `finalize` drains its stream the same way. Where the target has a wider lane kernel
//! ([`crate::WIDE_BATCH`]: 13 lanes on x86_64 beside the 9 of the batch kernel), a round runs it
//! while at least as many streams as it has lanes have blocks pending (compiled in the
//! background once updates that ran such rounds have brought
//! [`crate::WIDE_THRESHOLD_BLOCKS`] blocks); a round that drains a stream takes it only if
//! draining every pending stream then needs fewer lane slots. [`LaneEngine::stats`] counts the
//! rounds (and the wide ones), the blocks per lane they stepped and how many lane slots held a
//! stream's block.
//!
//! The single-stream kernel (the engine's [`TieredEngine`]) takes over when lanes cannot help:
//! a lone stream (the only live hasher of its engine) compresses straight from the caller's
//! buffer without a copy; a stream with no partner pending compresses all but its last
//! `hold_back` blocks at once; and when the multi-buffer kernel cannot be compiled (riscv64),
//! every stream compresses alone. Until it is compiled — on a background thread like every
//! tier — rounds run portable code that steps [`PORTABLE_LANES`] streams together. Nothing
//! waits for the compiler.

use crate::Md5;
use crate::jit_tier::Backend;
use crate::multi::{Lane, MultiCompressor, state_index, state_words};
use crate::portable::PORTABLE_LANES;
use crate::tiered_engine::TieredEngine;
use schedlab_kernels::md5::INITIAL_STATE;
use std::sync::{Arc, Mutex, MutexGuard};

/// Bytes in an MD5 block.
const BLOCK: usize = 64;

/// Blocks a stream may hold back by default (16 KiB: a round then runs up to 256 blocks per
/// lane, 64 while few streams beyond the lanes wait, and 64 streams buffer at most 1 MiB).
pub const DEFAULT_HOLD_BACK_BLOCKS: usize = 256;

/// The largest hold-back a [`LaneEngine`] accepts (lane offsets are Java `int`s).
pub const MAX_HOLD_BACK_BLOCKS: usize = 1 << 20;

/// Lanes of the widest kernel an engine drives (four vector groups and three scalar lanes).
const MAX_LANES: usize = 19;

/// Counters of an engine's work since it was created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneStats {
    /// Calls of the multi-buffer kernel.
    pub lane_rounds: u64,
    /// Stream blocks compressed in lanes (repeated inputs of idle lanes not counted).
    pub lane_blocks: u64,
    /// Lanes that repeated another lane's input, summed over rounds.
    pub idle_lanes: u64,
    /// Blocks each lane of a round stepped, summed over rounds: the lane slots of the rounds
    /// are this times the kernel's lanes, of which `lane_blocks` held a stream's block.
    pub round_blocks: u64,
    /// Stream blocks compressed by the single-stream tiers.
    pub single_blocks: u64,
    /// Of `lane_blocks`, those compressed by portable rounds while the lane kernel compiled.
    pub portable_lane_blocks: u64,
    /// Lane slots of the rounds: the blocks each lane of a round stepped times the round's
    /// lanes, summed over rounds (`round_blocks` times the lanes when every round ran one
    /// kernel); `lane_blocks` of them held a stream's block.
    pub lane_slots: u64,
    /// Of `lane_rounds`, those run by the wider lane kernel
    /// ([`crate::WIDE_BATCH`]).
    pub wide_rounds: u64,
}

/// What runs a round: the JIT-compiled multi-buffer kernel, the wider one
/// ([`crate::WIDE_BATCH`]), or portable code while the first compiles.
#[derive(Clone, Copy)]
enum Rounds {
    Jit(&'static MultiCompressor),
    Wide(&'static MultiCompressor),
    Portable,
}

impl Rounds {
    fn lanes(self) -> usize {
        match self {
            Rounds::Jit(kernel) | Rounds::Wide(kernel) => kernel.lanes(),
            Rounds::Portable => PORTABLE_LANES,
        }
    }
}

/// An engine whose hashers share the lanes of the multi-buffer kernel (see the module docs).
/// Cloning it gives another handle to the same engine.
///
/// ```
/// use schedlab_digests::{Digest, LaneEngine, Md5};
/// let engine = LaneEngine::new();
/// let (mut a, mut b) = (engine.hasher(), engine.hasher());
/// a.update(b"a");
/// b.update(b"message ");
/// a.update(b"bc");
/// b.update(b"digest");
/// assert_eq!(a.finalize(), Md5::digest(b"abc"));
/// assert_eq!(b.finalize(), Md5::digest(b"message digest"));
/// ```
#[derive(Clone)]
pub struct LaneEngine {
    shared: Arc<Shared>,
}

struct Shared {
    tiered: &'static TieredEngine,
    /// A kernel chosen by the caller instead of `tiered`'s lane kernel.
    fixed: Option<&'static MultiCompressor>,
    hold_back: usize,
    streams: Mutex<Streams>,
}

/// Everything the mutex guards.
#[derive(Default)]
struct Streams {
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    live: usize,
    stats: LaneStats,
    /// The kernel's state vectors, reused by every round.
    scratch: Vec<u32>,
}

/// One stream's chaining value and its pending blocks.
#[derive(Clone)]
struct Slot {
    state: [u32; 4],
    /// Whole blocks received; `pending[start..]` are not compressed yet.
    pending: Vec<u8>,
    start: usize,
}

impl Slot {
    fn fresh() -> Self {
        Self {
            state: INITIAL_STATE,
            pending: Vec::new(),
            start: 0,
        }
    }

    fn pending_blocks(&self) -> usize {
        (self.pending.len() - self.start) / BLOCK
    }

    fn consume(&mut self, blocks: usize) {
        self.start += blocks * BLOCK;
        if self.start >= self.pending.len() {
            self.pending.clear();
            self.start = 0;
        }
    }

    /// Appends `data` after the pending blocks. The compressed prefix is dropped (the pending
    /// blocks moved to the front) only once it is at least as long as they are, so that a
    /// block is moved at most once on average, not at every append after a round that left
    /// pending blocks; the buffer stays under twice the pending blocks plus `data`.
    fn append(&mut self, data: &[u8]) {
        if self.start > 0 && self.start >= self.pending.len() - self.start {
            self.pending.drain(..self.start);
            self.start = 0;
        }
        self.pending.extend_from_slice(data);
    }
}

impl std::fmt::Debug for LaneEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaneEngine")
            .field("hold_back_blocks", &self.shared.hold_back)
            .field("streams", &self.streams())
            .field("stats", &self.stats())
            .finish()
    }
}

impl Default for LaneEngine {
    /// [`LaneEngine::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl LaneEngine {
    /// An engine over the default configuration's kernels ([`TieredEngine::default_instance`])
    /// holding back at most [`DEFAULT_HOLD_BACK_BLOCKS`] blocks per stream.
    pub fn new() -> Self {
        Self::with_tiered(TieredEngine::default_instance(), DEFAULT_HOLD_BACK_BLOCKS)
    }

    /// An engine over `tiered`'s kernels holding back at most `hold_back_blocks` blocks per
    /// stream, clamped to `1..=`[`MAX_HOLD_BACK_BLOCKS`]. A smaller bound means less latency
    /// and memory per stream, shorter rounds and more of them.
    pub fn with_tiered(tiered: &'static TieredEngine, hold_back_blocks: usize) -> Self {
        Self::build(tiered, None, hold_back_blocks)
    }

    /// Like [`LaneEngine::with_tiered`], with `kernel` (e.g. another lane count) for the lanes;
    /// `tiered` still compresses streams that have no partner.
    pub fn with_kernel(
        tiered: &'static TieredEngine,
        kernel: &'static MultiCompressor,
        hold_back_blocks: usize,
    ) -> Self {
        Self::build(tiered, Some(kernel), hold_back_blocks)
    }

    fn build(
        tiered: &'static TieredEngine,
        fixed: Option<&'static MultiCompressor>,
        hold_back_blocks: usize,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                tiered,
                fixed,
                hold_back: hold_back_blocks.clamp(1, MAX_HOLD_BACK_BLOCKS),
                streams: Mutex::new(Streams::default()),
            }),
        }
    }

    /// A fresh hasher whose blocks go through this engine's lanes.
    pub fn hasher(&self) -> Md5 {
        Md5::with_lanes(LaneStream::new(self.clone()))
    }

    /// The most blocks a stream may hold back.
    pub fn hold_back_blocks(&self) -> usize {
        self.shared.hold_back
    }

    /// The most blocks a round steps when the streams with pending blocks fill every lane with
    /// fewer than half as many again left out: a quarter of the hold-back (at least one block).
    pub fn round_cap_blocks(&self) -> usize {
        self.shared.round_cap()
    }

    /// Live hashers of this engine.
    pub fn streams(&self) -> usize {
        self.shared.lock().live
    }

    /// What the engine has done so far.
    pub fn stats(&self) -> LaneStats {
        self.shared.lock().stats
    }

    /// The tiered engine whose kernels this engine runs.
    pub fn tiered(&self) -> &'static TieredEngine {
        self.shared.tiered
    }
}

impl Shared {
    /// See [`LaneEngine::round_cap_blocks`].
    fn round_cap(&self) -> usize {
        (self.hold_back / 4).max(1)
    }

    /// What runs rounds among `live` streams: the lane kernel if it is ready (counting
    /// `blocks` toward the tiered compile), portable rounds while it is coming, nothing for a
    /// lone stream or when the kernel cannot be compiled.
    fn rounds(&self, live: usize, blocks: usize) -> Option<Rounds> {
        if live < 2 {
            return None;
        }
        let ready = self
            .fixed
            .or_else(|| self.tiered.batch_kernel_or_count(blocks as u64));
        match ready {
            Some(kernel) => Some(Rounds::Jit(kernel)),
            None => self.lanes_coming(live).then_some(Rounds::Portable),
        }
    }

    /// The wider lane kernel ([`crate::WIDE_BATCH`]) in place of `kernel` for a round when
    /// `pending()` streams (the caller's included; counted only where a wider kernel may run)
    /// have blocks pending, at least as many as it has lanes, and it is compiled (otherwise `blocks` count toward its compile); `kernel` itself for an
    /// engine with a kernel of its own, for portable rounds and where the target has none.
    /// With fewer streams the narrower kernel's rounds cost less per stream block: idle lanes
    /// cost as much as busy ones.
    fn widen(&self, pending: impl FnOnce() -> usize, kernel: Rounds, blocks: usize) -> Rounds {
        let (Rounds::Jit(_), None, Some(wide_lanes)) =
            (kernel, self.fixed, self.tiered.wide_lanes())
        else {
            return kernel;
        };
        if pending() < wide_lanes {
            return kernel;
        }
        match self.tiered.wide_kernel_or_count(blocks as u64) {
            Some(wide) => Rounds::Wide(wide),
            None => kernel,
        }
    }

    /// [`Shared::widen`] for a round that drains stream `id`: the wider kernel only if the
    /// rounds that drain every pending stream then need fewer lane slots in all
    /// ([`fewer_slots_starting_wide`]). Draining gets no more blocks to fill lanes later: 16
    /// streams take one round of 13 and one of 9 lanes (3 busy) after a wide start, but two
    /// rounds of 9 without.
    fn widen_to_drain(&self, streams: &Streams, id: usize, kernel: Rounds) -> Rounds {
        // Counted once, and only where a wider kernel may run.
        let counted = std::cell::OnceCell::new();
        let pending = || *counted.get_or_init(|| 1 + streams.others_pending(id));
        match self.widen(pending, kernel, 0) {
            Rounds::Wide(wide)
                if fewer_slots_starting_wide(pending(), kernel.lanes(), wide.lanes()) =>
            {
                Rounds::Wide(wide)
            }
            _ => kernel,
        }
    }

    /// Whether several streams wait for a lane kernel that is not compiled yet.
    fn lanes_coming(&self, live: usize) -> bool {
        self.fixed.is_none()
            && live > 1
            && matches!(
                self.tiered.batch_backend(),
                Backend::Portable | Backend::Compiling
            )
    }

    fn lock(&self) -> MutexGuard<'_, Streams> {
        // Nothing under the lock panics on valid state; a poisoned lock still holds it.
        self.streams
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Appends whole blocks `data` to stream `id`, compressing as the hold-back bound requires.
    fn update(&self, id: usize, mut data: &[u8]) {
        debug_assert_eq!(data.len() % BLOCK, 0);
        if data.is_empty() {
            return;
        }
        let mut streams = self.lock();
        // A lone stream neither needs lanes nor counts toward their compile.
        let Some(kernel) = self.rounds(streams.live, data.len() / BLOCK) else {
            // No lanes to share: the stream compresses alone, straight from `data`.
            self.compress_pending(&mut streams, id);
            drop(self.compress_alone(streams, id, data));
            return;
        };
        // The update's blocks count once toward the wider kernel's compile.
        let mut fresh = data.len() / BLOCK;
        loop {
            let slot = streams.slot(id);
            let pending = slot.pending_blocks();
            let blocks = data.len() / BLOCK;
            if pending + blocks <= self.hold_back {
                slot.append(data);
                return;
            }
            if pending > 0 {
                // The stream's lane reads its pending blocks, topped up from `data`.
                let take = (self.hold_back - pending).min(blocks);
                slot.append(&data[..take * BLOCK]);
                data = &data[take * BLOCK..];
            }
            let pending_streams = || 1 + streams.others_pending(id);
            let round_kernel = self.widen(pending_streams, kernel, std::mem::take(&mut fresh));
            let (partners, cap) = self.partners(&streams, id, round_kernel.lanes());
            if partners.is_empty() {
                // Nobody to share lanes with now: compress all but what may wait.
                self.compress_pending(&mut streams, id);
                let keep = (data.len() / BLOCK).min(self.hold_back);
                let (now, later) = data.split_at(data.len() - keep * BLOCK);
                streams = self.compress_alone(streams, id, now);
                streams.slot(id).append(later);
                return;
            }
            let direct = (pending == 0).then_some(data);
            let step = streams.round(round_kernel, id, direct, &partners, cap);
            if pending == 0 {
                data = &data[step * BLOCK..];
            }
        }
    }

    /// Stream `id`'s partners in a round of `lanes` lanes ([`Streams::partners`]) and the most
    /// blocks the round may step: [`Shared::round_cap`] when they fill every lane but fewer
    /// than half as many streams again wait, so that the round leaves its partners pending
    /// blocks for the next one; no limit when lanes stay idle anyway, or when at least half as
    /// many streams again wait (the next round mostly fills from them, and long rounds cost
    /// less per block: `notes/md5-lanes.md`).
    fn partners(&self, streams: &Streams, id: usize, lanes: usize) -> (Vec<usize>, usize) {
        let (partners, waiting) = streams.partners(id, lanes - 1);
        let others = lanes - 1;
        let cap = if partners.len() == others && 2 * waiting < others {
            self.round_cap()
        } else {
            usize::MAX
        };
        (partners, cap)
    }

    /// Compresses every pending block of stream `id` (in lanes with other streams' pending
    /// blocks when it can) and returns its chaining value.
    fn drain(&self, id: usize) -> [u32; 4] {
        let mut streams = self.lock();
        let kernel = self.rounds(streams.live, 0);
        while streams.slot(id).pending_blocks() > 0 {
            let kernel = kernel.map(|k| self.widen_to_drain(&streams, id, k));
            let (partners, cap) = match kernel {
                Some(kernel) if streams.live > 1 => self.partners(&streams, id, kernel.lanes()),
                _ => (Vec::new(), usize::MAX),
            };
            match kernel {
                Some(kernel) if !partners.is_empty() => {
                    streams.round(kernel, id, None, &partners, cap);
                }
                _ => self.compress_pending(&mut streams, id),
            }
        }
        streams.slot(id).state
    }

    /// The single-stream path: the tiered single-stream kernel, but portable code while
    /// several streams wait for the lane kernel's compile (which then has the core to itself
    /// rather than sharing it with a second compile).
    fn compress_single(&self, live: usize, state: &mut [u32; 4], data: &[u8]) {
        if self.lanes_coming(live) {
            crate::portable::compress_blocks(state, data);
        } else {
            self.tiered.compress_blocks(state, data);
        }
    }

    /// Compresses stream `id`'s pending blocks on the single-stream path.
    fn compress_pending(&self, streams: &mut Streams, id: usize) {
        let live = streams.live;
        let slot = streams.slot(id);
        let blocks = slot.pending_blocks();
        if blocks == 0 {
            return;
        }
        let Slot {
            state,
            pending,
            start,
        } = slot;
        self.compress_single(live, state, &pending[*start..]);
        slot.consume(blocks);
        streams.stats.single_blocks += blocks as u64;
    }

    /// Compresses `data` into stream `id`, which has no pending blocks, on the single-stream
    /// path with the lock released (no round touches a stream without pending blocks).
    fn compress_alone<'a>(
        &'a self,
        streams: MutexGuard<'a, Streams>,
        id: usize,
        data: &[u8],
    ) -> MutexGuard<'a, Streams> {
        if data.is_empty() {
            return streams;
        }
        let mut state = streams.slot_ref(id).state;
        let live = streams.live;
        drop(streams);
        self.compress_single(live, &mut state, data);
        let mut streams = self.lock();
        streams.slot(id).state = state;
        streams.stats.single_blocks += (data.len() / BLOCK) as u64;
        streams
    }
}

/// Whether `streams` streams, one round each with kernels of `narrow` or `wide` lanes until
/// none is left, take fewer lane slots in all when the first round is the wide one (the fewest
/// slots after each choice: a small dynamic programme over the streams left). Idle lanes cost
/// what busy ones do, and a wider round costs at most its share of lanes.
fn fewer_slots_starting_wide(streams: usize, narrow: usize, wide: usize) -> bool {
    let mut fewest = vec![0usize; streams + 1];
    for left in 1..=streams {
        fewest[left] = [narrow, wide]
            .iter()
            .map(|&lanes| lanes + fewest[left - left.min(lanes)])
            .min()
            .unwrap_or(0);
    }
    let after = |lanes: usize| lanes + fewest[streams - streams.min(lanes)];
    after(wide) < after(narrow)
}

impl Streams {
    fn slot(&mut self, id: usize) -> &mut Slot {
        self.slots[id]
            .as_mut()
            .expect("a live stream's slot is occupied")
    }

    fn slot_ref(&self, id: usize) -> &Slot {
        self.slots[id]
            .as_ref()
            .expect("a live stream's slot is occupied")
    }

    fn insert(&mut self, slot: Slot) -> usize {
        self.live += 1;
        match self.free.pop() {
            Some(id) => {
                self.slots[id] = Some(slot);
                id
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        }
    }

    fn remove(&mut self, id: usize) {
        if self.slots[id].take().is_some() {
            self.live -= 1;
            self.free.push(id);
        }
    }

    /// Streams other than `id` with blocks pending.
    fn others_pending(&self, id: usize) -> usize {
        self.slots
            .iter()
            .enumerate()
            .filter(|&(other, slot)| {
                other != id && slot.as_ref().is_some_and(|s| s.pending_blocks() > 0)
            })
            .count()
    }

    /// Up to `most` other streams with pending blocks, those with the most first, and how many
    /// more have pending blocks but were left out.
    fn partners(&self, id: usize, most: usize) -> (Vec<usize>, usize) {
        let mut found: Vec<(usize, usize)> = self
            .slots
            .iter()
            .enumerate()
            .filter(|&(other, _)| other != id)
            .filter_map(|(other, slot)| {
                let blocks = slot.as_ref()?.pending_blocks();
                (blocks > 0).then_some((blocks, other))
            })
            .collect();
        let waiting = found.len().saturating_sub(most);
        if waiting > 0 {
            found.select_nth_unstable_by(most, |a, b| b.0.cmp(&a.0));
            found.truncate(most);
        }
        (found.into_iter().map(|(_, other)| other).collect(), waiting)
    }

    /// One kernel call: stream `id` (reading `direct`, or its pending blocks) and `partners`
    /// (their pending blocks) advance by the fewest blocks any of them has, at most `cap`
    /// (at least one); returns that count.
    fn round(
        &mut self,
        kernel: Rounds,
        id: usize,
        direct: Option<&[u8]>,
        partners: &[usize],
        cap: usize,
    ) -> usize {
        let lanes = kernel.lanes();
        debug_assert!(lanes <= MAX_LANES && !partners.is_empty() && partners.len() < lanes);
        let own = match direct {
            Some(data) => data.len() / BLOCK,
            None => self.slot_ref(id).pending_blocks(),
        };
        let step = partners
            .iter()
            .map(|&p| self.slot_ref(p).pending_blocks())
            .fold(own.min(cap), usize::min);
        debug_assert!(step > 0, "every member has a block");
        let members: Vec<usize> = std::iter::once(id)
            .chain(partners.iter().copied())
            .collect();
        self.scratch.resize(state_words(lanes), 0);
        let Self { slots, scratch, .. } = self;
        let mut inputs = [Lane { buf: &[], ofs: 0 }; MAX_LANES];
        for lane in 0..lanes {
            // Idle lanes repeat the stream's own input; their results are dropped.
            let member = members.get(lane).copied().unwrap_or(id);
            let slot = slots[member].as_ref().expect("a member's slot is occupied");
            inputs[lane] = match direct {
                Some(data) if member == id => Lane {
                    buf: &data[..step * BLOCK],
                    ofs: 0,
                },
                _ => Lane {
                    buf: &slot.pending[..slot.start + step * BLOCK],
                    ofs: slot.start as i32,
                },
            };
            for (w, word) in slot.state.into_iter().enumerate() {
                scratch[state_index(lane, w)] = word;
            }
        }
        let state = &mut scratch[..state_words(lanes)];
        match kernel {
            Rounds::Jit(kernel) | Rounds::Wide(kernel) => {
                let done = kernel.compress_lanes(state, &inputs[..lanes], step as i32);
                debug_assert_eq!(done, step as i32, "in-bounds lanes never fail");
            }
            Rounds::Portable => {
                crate::portable::compress_lanes(state, &inputs[..members.len()], step);
            }
        }
        for (lane, &member) in members.iter().enumerate() {
            let slot = slots[member].as_mut().expect("a member's slot is occupied");
            slot.state = std::array::from_fn(|w| scratch[state_index(lane, w)]);
            if member != id || direct.is_none() {
                slot.consume(step);
            }
        }
        self.stats.lane_rounds += 1;
        self.stats.lane_blocks += (members.len() * step) as u64;
        if matches!(kernel, Rounds::Portable) {
            self.stats.portable_lane_blocks += (members.len() * step) as u64;
        }
        self.stats.idle_lanes += (lanes - members.len()) as u64;
        self.stats.round_blocks += step as u64;
        self.stats.lane_slots += (step * lanes) as u64;
        if matches!(kernel, Rounds::Wide(_)) {
            self.stats.wide_rounds += 1;
        }
        step
    }
}

/// A hasher's place in its engine: registered on creation and clone, removed on drop.
pub(crate) struct LaneStream {
    engine: LaneEngine,
    id: usize,
}

impl LaneStream {
    fn new(engine: LaneEngine) -> Self {
        let id = engine.shared.lock().insert(Slot::fresh());
        Self { engine, id }
    }

    /// Feeds whole blocks.
    pub(crate) fn update(&self, blocks: &[u8]) {
        self.engine.shared.update(self.id, blocks);
    }

    /// Feeds the padded tail (whole blocks) and returns the final chaining value.
    pub(crate) fn finish(&self, tail: &[u8]) -> [u32; 4] {
        self.engine.shared.update(self.id, tail);
        self.engine.shared.drain(self.id)
    }

    /// Back to the initial chaining value, nothing pending.
    pub(crate) fn reset(&self) {
        let mut streams = self.engine.shared.lock();
        let slot = streams.slot(self.id);
        slot.state = INITIAL_STATE;
        slot.pending.clear();
        slot.start = 0;
    }
}

impl Clone for LaneStream {
    /// A new stream of the same engine with this one's chaining value and pending blocks.
    fn clone(&self) -> Self {
        let mut streams = self.engine.shared.lock();
        let copy = streams.slot_ref(self.id).clone();
        let id = streams.insert(copy);
        Self {
            engine: self.engine.clone(),
            id,
        }
    }
}

impl Drop for LaneStream {
    fn drop(&mut self) {
        self.engine.shared.lock().remove(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::fewer_slots_starting_wide;

    #[test]
    fn draining_starts_wide_only_when_it_saves_lane_slots() {
        // 9 and 13 lanes: 16 streams take 18 slots narrow (9 + 9), 22 wide first (13 + 9).
        assert!(!fewer_slots_starting_wide(16, 9, 13));
        // 13: one wide round (13) against two narrow ones (18); 26: 13 + 13 against 9 + 9 + 9.
        assert!(fewer_slots_starting_wide(13, 9, 13));
        assert!(fewer_slots_starting_wide(26, 9, 13));
        // 20: 13 + 9 either way round; a tie keeps the narrow kernel.
        assert!(!fewer_slots_starting_wide(20, 9, 13));
        // Fewer streams than the narrow kernel's lanes: one narrow round.
        assert!(!fewer_slots_starting_wide(8, 9, 13));
        assert!(!fewer_slots_starting_wide(1, 9, 13));
    }
}
