//! The streaming lane engine: many independent [`Md5`] hashers share one multi-buffer kernel.
//!
//! A [`LaneEngine`] hands out ordinary [`Md5`] hashers (`update` in pieces from any thread,
//! `finalize`, `Clone`, `reset`). Their whole blocks go to the engine, which keeps each stream's
//! chaining value and the blocks it has received but not compressed yet (its *pending* blocks,
//! at most [`LaneEngine::hold_back_blocks`] of them, or as many as its latest `update` brought
//! up to [`MAX_UPDATE_HOLD_BLOCKS`] if that is more; up to [`HOLD_SLACK`] times that while too
//! few streams have blocks pending to fill the widest kernel's lanes: a stream is never held
//! back longer than that). When an `update` would exceed the bound, the calling thread runs
//! *rounds* of the multi-buffer kernel: its own stream in one lane, the other streams with the
//! most pending blocks in the others (one lane per stream; among equals, those whose latest
//! `update` is the oldest), as many blocks per round as the shortest of them has, but at most a
//! hold-back while streams with pending blocks are left out. The streams left out of a round
//! are thus those updated last: the ones whose next `update` is furthest off when streams take
//! turns, so that by the time one of them needs room the others have refilled and the next
//! round again finds a stream for every lane; and streams that hold more than a hold-back each
//! run out together. Lanes stay idle only when fewer streams than lanes have pending blocks;
//! idle lanes repeat a busy lane's input and their results are dropped. Streams from any thread
//! are gathered the same way (the engine is one mutex: whichever thread runs a round compresses
//! every chosen stream, as in flat combining).
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
/// lane, and 64 streams buffer at most 1 MiB, twice that while they cannot fill the lanes).
pub const DEFAULT_HOLD_BACK_BLOCKS: usize = 256;

/// The largest hold-back a [`LaneEngine`] accepts (lane offsets are Java `int`s).
pub const MAX_HOLD_BACK_BLOCKS: usize = 1 << 20;

/// The most blocks a stream holds back after an `update` larger than its engine's hold-back:
/// as many as that update brought, up to 16384 blocks (1 MiB; up to [`HOLD_SLACK`] times that
/// while too few streams have blocks pending to fill the lanes).
pub const MAX_UPDATE_HOLD_BLOCKS: usize = 16384;

/// How many times its bound ([`LaneEngine::hold_back_blocks`], or a larger `update`'s blocks)
/// a stream may hold while fewer streams than the widest lane kernel has lanes have blocks
/// pending. A round it ran then would leave lanes idle; held on, it meets the streams whose
/// blocks come meanwhile. Streams that take turns always fill the lanes and never use it;
/// streams fed in no set order do (`notes/md5-lanes.md`).
pub const HOLD_SLACK: usize = 2;

/// Ring buffers an engine keeps from removed streams for new ones.
const SPARE_BUFFERS: usize = 64;

/// Lanes of the widest kernel an engine drives (four vector groups and three scalar lanes).
const MAX_LANES: usize = 19;

/// Up to [`MAX_LANES`] stream ids of one round, on the stack.
#[derive(Clone, Copy, Default)]
struct Members {
    ids: [usize; MAX_LANES],
    len: usize,
}

impl Members {
    fn push(&mut self, id: usize) {
        self.ids[self.len] = id;
        self.len += 1;
    }

    fn as_slice(&self) -> &[usize] {
        &self.ids[..self.len]
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn len(&self) -> usize {
        self.len
    }
}

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
    /// Ring buffers of removed streams, for new ones.
    spare: Vec<Vec<u8>>,
    /// Pending blocks of each stream by id (0 for a free id), kept beside the slots so that
    /// choosing a round's partners reads one short array, not every slot.
    pending: Vec<usize>,
    /// When each stream by id last brought blocks, on the `updates` clock.
    last_update: Vec<u64>,
    /// `update` calls so far: the clock of `last_update`.
    updates: u64,
}

/// One stream's chaining value and its pending blocks, kept in a ring: a round's lane reads
/// the run from the first pending block to the ring's end at most, and new blocks are written
/// where the compressed ones were, so the memory a stream's blocks pass through stays at the
/// most it may hold back (the cache footprint of the engine's copies: `notes/md5-lanes.md`).
#[derive(Clone)]
struct Slot {
    state: [u32; 4],
    /// `buffer[origin..origin + capacity]` is the ring.
    buffer: Vec<u8>,
    origin: usize,
    /// The ring's bytes (whole blocks; 0 until the first block arrives).
    capacity: usize,
    /// Where in the ring the first pending block begins.
    head: usize,
    /// Pending bytes (whole blocks).
    len: usize,
    /// Where in its 4 KiB page the ring begins ([`page_offset`]).
    place: usize,
}

/// Bytes of the span whose offset within it picks a line's L1 set (4 KiB: 64 sets of 64-byte
/// lines on the x86_64 and AArch64 cores measured).
const PAGE: usize = 4096;

/// Lines between the page offsets of consecutive streams' rings: 5 is prime to the 64 lines of
/// a page, so 64 streams begin on 64 different lines.
const PLACE_STRIDE_LINES: usize = 5;

/// The offset within a page at which stream `id`'s ring begins. Buffers allocated alike begin
/// at one offset within a page, so block `j` of every lane of a round would fall in one L1 set,
/// more lines than its ways; spread over the page, a round's lanes share sets only by chance,
/// a few at a time (13 lanes of page-aligned copies: `block fn x12+s1 distinct` against
/// `… distinct placed` in `notes/md5-lanes.md`).
fn page_offset(id: usize) -> usize {
    (id * PLACE_STRIDE_LINES % (PAGE / BLOCK)) * BLOCK
}

/// How far past `address` stream `id`'s ring begins: the first address at the stream's offset
/// within a page ([`LaneEngine`] places each stream's pending blocks so; the streams bench
/// places its copies the same way).
pub fn ring_start(address: usize, id: usize) -> usize {
    offset_to(address, page_offset(id))
}

/// How far past `address` the first address at offset `place` within a page lies.
fn offset_to(address: usize, place: usize) -> usize {
    (place + PAGE - address % PAGE) % PAGE
}

impl Slot {
    /// A new stream's slot, its ring to be built in `buffer` (a removed stream's, or empty).
    fn fresh(buffer: Vec<u8>) -> Self {
        Self {
            state: INITIAL_STATE,
            buffer,
            origin: 0,
            capacity: 0,
            head: 0,
            len: 0,
            place: 0,
        }
    }

    fn pending_blocks(&self) -> usize {
        self.len / BLOCK
    }

    /// Pending blocks from the first up to the ring's end: what one round can read.
    fn front_blocks(&self) -> usize {
        self.len.min(self.capacity - self.head) / BLOCK
    }

    /// A lane reading the first `blocks` pending blocks (at most [`Slot::front_blocks`]).
    fn front(&self, blocks: usize) -> Lane<'_> {
        debug_assert!(blocks <= self.front_blocks());
        let at = self.origin + self.head;
        Lane {
            buf: &self.buffer[..at + blocks * BLOCK],
            ofs: at as i32,
        }
    }

    /// The pending bytes in order: the run to the ring's end, then the wrapped rest.
    fn pending_runs(&self) -> [&[u8]; 2] {
        let ring = &self.buffer[self.origin..self.origin + self.capacity];
        let first = self.len.min(self.capacity - self.head);
        [
            &ring[self.head..self.head + first],
            &ring[..self.len - first],
        ]
    }

    /// Marks the first `blocks` pending blocks compressed.
    fn consume(&mut self, blocks: usize) {
        debug_assert!(blocks <= self.front_blocks());
        self.len -= blocks * BLOCK;
        self.head += blocks * BLOCK;
        if self.head == self.capacity || self.len == 0 {
            // An empty ring starts over at its beginning, so that runs stay long.
            self.head = 0;
        }
    }

    /// Drops every pending block.
    fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// Appends `data` after the pending blocks; the ring grows (doubling, up to `limit` bytes
    /// and at least to what it must hold) when they would not fit.
    fn append(&mut self, data: &[u8], limit: usize) {
        if data.is_empty() {
            return;
        }
        let needed = self.len + data.len();
        if needed > self.capacity {
            self.grow(needed.max((2 * self.capacity).min(limit)));
        }
        let tail = (self.head + self.len) % self.capacity;
        let first = data.len().min(self.capacity - tail);
        let ring = &mut self.buffer[self.origin..self.origin + self.capacity];
        ring[tail..tail + first].copy_from_slice(&data[..first]);
        ring[..data.len() - first].copy_from_slice(&data[first..]);
        self.len = needed;
    }

    /// Rebuilds the ring with `capacity` bytes at [`page_offset`] within a page, the pending
    /// blocks first. A buffer with room is reused: its bytes are not zeroed again.
    fn grow(&mut self, capacity: usize) {
        let [first, second] = self.pending_runs();
        let pending = [first, second].concat();
        let mut buffer = std::mem::take(&mut self.buffer);
        if buffer.capacity() < PAGE + capacity {
            buffer = Vec::with_capacity(PAGE + capacity);
        }
        let origin = offset_to(buffer.as_ptr() as usize, self.place);
        if buffer.len() < origin + capacity {
            buffer.resize(origin + capacity, 0);
        }
        buffer[origin..origin + pending.len()].copy_from_slice(&pending);
        self.buffer = buffer;
        self.origin = origin;
        self.capacity = capacity;
        self.head = 0;
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
    /// stream, clamped to `1..=`[`MAX_HOLD_BACK_BLOCKS`] (or as many as a stream's latest
    /// `update` brought, up to [`MAX_UPDATE_HOLD_BLOCKS`], if that is more). A smaller bound
    /// means less latency and memory per stream, shorter rounds and more of them.
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

    /// The most blocks a stream may hold back (up to [`HOLD_SLACK`] times as many while too few
    /// streams have blocks pending to fill the lanes).
    pub fn hold_back_blocks(&self) -> usize {
        self.shared.hold_back
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
    /// have blocks pending, at least as many as it has lanes, and it is compiled (otherwise
    /// `blocks` count toward its compile); `kernel` itself for an engine with a kernel of its
    /// own, for portable rounds and where the target has none.
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

    /// The most blocks a round steps when `left_out` streams with pending blocks found no lane
    /// in it: the hold-back (no limit when every pending stream has a lane). Streams that each
    /// hold more (larger `update`s, or all of them finalizing after one) are then compressed a
    /// hold-back at a time, those with the most pending first, so that they run out together
    /// in full rounds rather than the round's members all at once, leaving the others to
    /// rounds of a few busy lanes. Rounds of a hold-back (256 blocks by default) are long
    /// enough that the kernel's cost per call does not matter (`notes/md5-lanes.md`).
    fn step_cap(&self, left_out: usize) -> usize {
        if left_out > 0 {
            self.hold_back
        } else {
            usize::MAX
        }
    }

    /// Whether the streams with blocks pending, stream `id` counted, fill every lane of the
    /// widest kernel a round of `kernel`'s could run ([`Shared::widen`]).
    fn lanes_fill(&self, streams: &Streams, id: usize, kernel: Rounds) -> bool {
        let widest = match (kernel, self.fixed, self.tiered.wide_lanes()) {
            (Rounds::Jit(_), None, Some(wide)) => wide.max(kernel.lanes()),
            _ => kernel.lanes(),
        };
        1 + streams.others_pending(id) >= widest
    }

    /// The most blocks a stream may hold back after an `update` of `blocks`: the engine's
    /// hold-back, or the update's own blocks up to [`MAX_UPDATE_HOLD_BLOCKS`] if that is more.
    /// Held back to the engine's bound only, the part of a larger update beyond it had to be
    /// compressed at once, while the other streams held too little to fill lanes beside it:
    /// 16 streams fed 32 KiB pieces ran at single-stream speed with a 16 KiB hold-back
    /// (`notes/md5-lanes.md`).
    fn hold_for(&self, blocks: usize) -> usize {
        self.hold_back.max(blocks.min(MAX_UPDATE_HOLD_BLOCKS))
    }

    /// Appends whole blocks `data` to stream `id`, compressing as the hold-back bound requires.
    fn update(&self, id: usize, mut data: &[u8]) {
        debug_assert_eq!(data.len() % BLOCK, 0);
        if data.is_empty() {
            return;
        }
        let mut streams = self.lock();
        streams.updated(id);
        // A lone stream neither needs lanes nor counts toward their compile.
        let Some(kernel) = self.rounds(streams.live, data.len() / BLOCK) else {
            // No lanes to share: the stream compresses alone, straight from `data`.
            self.compress_pending(&mut streams, id);
            drop(self.compress_alone(streams, id, data));
            return;
        };
        // The update's blocks count once toward the wider kernel's compile.
        let mut fresh = data.len() / BLOCK;
        let hold = self.hold_for(data.len() / BLOCK);
        let limit = hold * BLOCK;
        loop {
            let pending = streams.slot_ref(id).pending_blocks();
            let blocks = data.len() / BLOCK;
            let fits = pending + blocks <= hold;
            if fits
                || (pending + blocks <= HOLD_SLACK * hold && !self.lanes_fill(&streams, id, kernel))
            {
                // Within the bound, or within its slack while a round could not fill the lanes.
                let most = if fits { hold } else { HOLD_SLACK * hold };
                streams.slot(id).append(data, most * BLOCK);
                streams.sync(id);
                return;
            }
            if pending > 0 {
                // The stream's lane reads its pending blocks, topped up from `data`.
                let take = hold.saturating_sub(pending).min(blocks);
                streams.slot(id).append(&data[..take * BLOCK], limit);
                streams.sync(id);
                data = &data[take * BLOCK..];
            }
            let pending_streams = || 1 + streams.others_pending(id);
            let round_kernel = self.widen(pending_streams, kernel, std::mem::take(&mut fresh));
            let (partners, left_out) = streams.partners(id, round_kernel.lanes() - 1);
            if partners.is_empty() {
                // Nobody to share lanes with now: compress all but what may wait.
                self.compress_pending(&mut streams, id);
                let keep = (data.len() / BLOCK).min(hold);
                let (now, later) = data.split_at(data.len() - keep * BLOCK);
                streams = self.compress_alone(streams, id, now);
                streams.slot(id).append(later, limit);
                streams.sync(id);
                return;
            }
            let direct = (pending == 0).then_some(data);
            let cap = self.step_cap(left_out);
            let step = streams.round(round_kernel, id, direct, partners.as_slice(), cap);
            if pending == 0 {
                data = &data[step * BLOCK..];
            }
        }
    }

    /// Compresses every pending block of stream `id` (in lanes with other streams' pending
    /// blocks when it can) and returns its chaining value.
    fn drain(&self, id: usize) -> [u32; 4] {
        let mut streams = self.lock();
        let kernel = self.rounds(streams.live, 0);
        while streams.slot(id).pending_blocks() > 0 {
            let kernel = kernel.map(|k| self.widen_to_drain(&streams, id, k));
            let (partners, left_out) = match kernel {
                Some(kernel) if streams.live > 1 => streams.partners(id, kernel.lanes() - 1),
                _ => (Members::default(), 0),
            };
            match kernel {
                Some(kernel) if !partners.is_empty() => {
                    let cap = self.step_cap(left_out);
                    streams.round(kernel, id, None, partners.as_slice(), cap);
                }
                _ => self.compress_pending(&mut streams, id),
            }
        }
        if let Some(kernel) = kernel {
            self.drain_full_rounds(&mut streams, kernel);
        }
        streams.slot(id).state
    }

    /// Rounds among the other streams while they fill every lane, each as long as its
    /// shortest member allows. A draining stream's partners are left with the blocks the
    /// round did not reach, and streams finalized one after another then end in rounds of a
    /// few busy lanes (16 streams on 13 lanes: three streams' worth of blocks in narrow rounds
    /// a third full). Those blocks are due anyway; compressed now, while every lane has a
    /// stream, they cost their share of a full round.
    fn drain_full_rounds(&self, streams: &mut Streams, kernel: Rounds) {
        loop {
            let pending = streams.others_pending(usize::MAX);
            let kernel = self.widen(|| pending, kernel, 0);
            let lanes = kernel.lanes();
            let Some(first) = streams.most_pending() else {
                return;
            };
            let (partners, left_out) = streams.partners(first, lanes - 1);
            if partners.len() < lanes - 1 {
                return;
            }
            let cap = self.step_cap(left_out);
            streams.round(kernel, first, None, partners.as_slice(), cap);
        }
    }

    /// Stream `id`'s final chaining value with the padded `tail` (one or two blocks) compressed,
    /// under one lock, if the stream is its engine's only live one with nothing pending (a lone
    /// stream never buffers): what `update` and `drain` would do, without taking the lock
    /// three times for a message's last block. `None` otherwise.
    fn finish_alone(&self, id: usize, tail: &[u8]) -> Option<[u32; 4]> {
        let mut streams = self.lock();
        if streams.live != 1 || streams.slot_ref(id).pending_blocks() > 0 {
            return None;
        }
        let live = streams.live;
        let slot = streams.slot(id);
        self.compress_single(live, &mut slot.state, tail);
        let state = slot.state;
        streams.stats.single_blocks += (tail.len() / BLOCK) as u64;
        Some(state)
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
        let mut state = slot.state;
        for run in slot.pending_runs() {
            self.compress_single(live, &mut state, run);
        }
        slot.state = state;
        slot.clear();
        streams.sync(id);
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

    /// Registers `slot` under a free id (its ring placed for that id from its next rebuild on)
    /// and returns the id.
    fn insert(&mut self, mut slot: Slot) -> usize {
        self.live += 1;
        let id = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        slot.place = page_offset(id);
        if self.pending.len() < self.slots.len() {
            self.pending.resize(self.slots.len(), 0);
            self.last_update.resize(self.slots.len(), 0);
        }
        self.last_update[id] = self.updates;
        self.pending[id] = slot.pending_blocks();
        self.slots[id] = Some(slot);
        id
    }

    /// Whether [`Streams::pending`] agrees with every slot.
    fn pending_in_sync(&self) -> bool {
        self.slots.iter().enumerate().all(|(id, slot)| {
            slot.as_ref().map_or(0, Slot::pending_blocks)
                == self.pending.get(id).copied().unwrap_or(0)
        })
    }

    /// Records that stream `id` brings blocks now.
    fn updated(&mut self, id: usize) {
        self.updates += 1;
        self.last_update[id] = self.updates;
    }

    /// Records stream `id`'s pending blocks after its slot changed.
    fn sync(&mut self, id: usize) {
        self.pending[id] = self.slots[id].as_ref().map_or(0, Slot::pending_blocks);
    }

    /// A new stream's slot, with the ring buffer a removed stream left if there is one.
    fn fresh_slot(&mut self) -> Slot {
        Slot::fresh(self.spare.pop().unwrap_or_default())
    }

    /// Frees stream `id`'s slot; its ring buffer is kept for a later stream (up to
    /// [`SPARE_BUFFERS`] of at most `largest_spare` bytes: a ring grown for large updates is
    /// freed), so that streams started one after another reuse memory already mapped and
    /// cached instead of faulting in a fresh buffer each.
    fn remove(&mut self, id: usize, largest_spare: usize) {
        if let Some(slot) = self.slots[id].take() {
            self.live -= 1;
            self.free.push(id);
            self.pending[id] = 0;
            if self.spare.len() < SPARE_BUFFERS && slot.buffer.capacity() <= largest_spare {
                self.spare.push(slot.buffer);
            }
        }
    }

    /// Streams other than `id` with blocks pending (every one for an id no stream has).
    fn others_pending(&self, id: usize) -> usize {
        debug_assert!(self.pending_in_sync());
        self.pending
            .iter()
            .enumerate()
            .filter(|&(other, &blocks)| other != id && blocks > 0)
            .count()
    }

    /// The stream with the most pending blocks (the lower id among equals), if any has one.
    fn most_pending(&self) -> Option<usize> {
        debug_assert!(self.pending_in_sync());
        let (id, &blocks) = self
            .pending
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))?;
        (blocks > 0).then_some(id)
    }

    /// Up to `most` (at most [`MAX_LANES`]) other streams with pending blocks: those with the
    /// most first, and among equals those whose latest `update` is the oldest. Streams that take
    /// turns then leave out of a round the ones updated last, whose next `update` (when they
    /// may need room) is furthest off, while the others refill; choosing among equals by id
    /// instead left the next round only the few streams a round had skipped (16 streams on 13
    /// lanes: `notes/md5-lanes.md`). Also how many more have pending blocks but were left out.
    /// Kept on the stack: a round allocates nothing.
    fn partners(&self, id: usize, most: usize) -> (Members, usize) {
        debug_assert!(self.pending_in_sync());
        let most = most.min(MAX_LANES);
        // (pending blocks, last update, id) of the streams kept, the first to choose first.
        let mut top = [(0usize, 0u64, 0usize); MAX_LANES];
        let first = |a: (usize, u64), b: (usize, u64)| a.0 > b.0 || (a.0 == b.0 && a.1 < b.1);
        let (mut kept, mut found) = (0, 0);
        for (other, &blocks) in self.pending.iter().enumerate() {
            if other == id || blocks == 0 {
                continue;
            }
            found += 1;
            let key = (blocks, self.last_update[other]);
            if kept < most {
                kept += 1;
            } else if most == 0 || !first(key, (top[kept - 1].0, top[kept - 1].1)) {
                continue;
            }
            // Insertion into `top[..kept]`, the first to choose first.
            let mut at = kept - 1;
            while at > 0 && first(key, (top[at - 1].0, top[at - 1].1)) {
                top[at] = top[at - 1];
                at -= 1;
            }
            top[at] = (key.0, key.1, other);
        }
        let mut partners = Members::default();
        for &(_, _, other) in &top[..kept] {
            partners.push(other);
        }
        (partners, found - kept)
    }

    /// One kernel call: stream `id` (reading `direct`, or its pending blocks) and `partners`
    /// (their pending blocks) advance by the fewest blocks any of them has, at most `cap` (at
    /// least one); returns that count.
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
            None => self.slot_ref(id).front_blocks(),
        };
        let step = partners
            .iter()
            .map(|&p| self.slot_ref(p).front_blocks())
            .fold(own.min(cap), usize::min);
        debug_assert!(step > 0, "every member has a block");
        let mut members = Members::default();
        members.push(id);
        for &partner in partners {
            members.push(partner);
        }
        let members = members.as_slice();
        self.scratch.resize(state_words(lanes), 0);
        let Self {
            slots,
            scratch,
            pending,
            ..
        } = self;
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
                _ => slot.front(step),
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
                pending[member] = slot.pending_blocks();
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
        let mut streams = engine.shared.lock();
        let slot = streams.fresh_slot();
        let id = streams.insert(slot);
        drop(streams);
        Self { engine, id }
    }

    /// Feeds whole blocks.
    pub(crate) fn update(&self, blocks: &[u8]) {
        self.engine.shared.update(self.id, blocks);
    }

    /// Feeds the padded tail (whole blocks) and returns the final chaining value.
    pub(crate) fn finish(&self, tail: &[u8]) -> [u32; 4] {
        if let Some(state) = self.engine.shared.finish_alone(self.id, tail) {
            return state;
        }
        self.engine.shared.update(self.id, tail);
        self.engine.shared.drain(self.id)
    }

    /// Back to the initial chaining value, nothing pending.
    pub(crate) fn reset(&self) {
        let mut streams = self.engine.shared.lock();
        let slot = streams.slot(self.id);
        slot.state = INITIAL_STATE;
        slot.clear();
        streams.sync(self.id);
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
        let largest_spare = PAGE + HOLD_SLACK * self.engine.shared.hold_back * BLOCK;
        self.engine.shared.lock().remove(self.id, largest_spare);
    }
}

#[cfg(test)]
mod tests {
    use super::{BLOCK, PAGE, Slot, Streams, fewer_slots_starting_wide, page_offset};
    use std::collections::VecDeque;

    /// Distinct bytes for block `n`.
    fn block(n: usize) -> Vec<u8> {
        (0..BLOCK).map(|i| (n * 7 + i) as u8).collect()
    }

    /// The pending bytes a slot's runs give, in order.
    fn pending(slot: &Slot) -> Vec<u8> {
        slot.pending_runs().concat()
    }

    #[test]
    fn the_ring_keeps_blocks_in_order_across_wraps_and_growth() {
        let limit = 16 * BLOCK;
        let mut slot = Slot::fresh(Vec::new());
        let mut model: VecDeque<u8> = VecDeque::new();
        let mut next = 0;
        let mut seed = 7u64;
        for _ in 0..2000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = (seed >> 33) as usize;
            if !pick.is_multiple_of(3) {
                let room = (limit - slot.len) / BLOCK;
                let blocks = if room == 0 { 0 } else { 1 + pick / 3 % room };
                let data: Vec<u8> = (next..next + blocks).flat_map(block).collect();
                next += blocks;
                slot.append(&data, limit);
                model.extend(&data);
            } else if slot.pending_blocks() > 0 {
                let front = slot.front_blocks();
                let take = 1 + pick / 3 % front;
                let lane = slot.front(take);
                let read = &lane.buf[lane.ofs as usize..];
                let want: Vec<u8> = model.iter().take(take * BLOCK).copied().collect();
                assert_eq!(read, &want[..], "a round reads the first pending blocks");
                slot.consume(take);
                model.drain(..take * BLOCK);
            }
            assert_eq!(slot.len, model.len());
            assert!(
                slot.capacity <= limit,
                "the ring never outgrows the hold-back"
            );
            assert_eq!(pending(&slot), model.iter().copied().collect::<Vec<u8>>());
        }
        assert!(next > 1000, "the sequence wrapped the ring many times");
    }

    #[test]
    fn rings_begin_at_their_page_offset_and_spread_over_the_page() {
        let offsets: std::collections::BTreeSet<usize> = (0..64).map(page_offset).collect();
        assert_eq!(offsets.len(), 64, "64 streams begin on 64 different lines");
        assert!(offsets.iter().all(|&o| o % BLOCK == 0 && o < PAGE));
        let mut streams = Streams::default();
        for _ in 0..20 {
            let slot = streams.fresh_slot();
            let id = streams.insert(slot);
            let slot = streams.slot(id);
            slot.append(&block(id), 4 * BLOCK);
            let address = slot.buffer[slot.origin..].as_ptr() as usize;
            assert_eq!(address % PAGE, page_offset(id));
        }
    }

    #[test]
    fn a_removed_stream_leaves_its_ring_to_the_next_one() {
        let mut streams = Streams::default();
        let slot = streams.fresh_slot();
        let id = streams.insert(slot);
        streams.slot(id).append(&block(0), 256 * BLOCK);
        let buffer = streams.slot(id).buffer.as_ptr();
        streams.remove(id, usize::MAX);
        let slot = streams.fresh_slot();
        assert_eq!(
            slot.buffer.as_ptr(),
            buffer,
            "the same allocation, already touched"
        );
        let id = streams.insert(slot);
        let slot = streams.slot(id);
        assert_eq!(
            slot.pending_blocks(),
            0,
            "nothing of the old stream is pending"
        );
        slot.append(&block(1), 256 * BLOCK);
        assert_eq!(pending(slot), block(1));
    }

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
