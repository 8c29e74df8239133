//! The library's engine: portable code first, JIT-compiled kernels once a background thread
//! has compiled them (see [`crate::jit_tier`]), for single messages and for batches.

use crate::Md5;
use crate::batch::digest_many_with;
use crate::compressor::Compressor;
use crate::jit_tier::{Backend, JIT_THRESHOLD_BLOCKS, Tier};
use crate::multi::{MultiCompressor, lane_config, wide_lane_config};
use crate::portable;
use digest::{Digest, Output};
use schedlab_backend::code_cache::CodeCache;
use schedlab_backend::pipeline::PipelineConfig;

/// One message hashed by the portable code alone.
fn portable_digest(message: &[u8]) -> Output<Md5> {
    let mut tail = [0u8; 128];
    let whole = message.len() - message.len() % 64;
    let mut state = schedlab_kernels::md5::INITIAL_STATE;
    portable::compress_blocks(&mut state, &message[..whole]);
    let blocks = crate::batch::padded_tail(message, &mut tail);
    portable::compress_blocks(&mut state, &tail[..64 * blocks]);
    let mut out = Output::<Md5>::default();
    for (chunk, word) in out.chunks_exact_mut(4).zip(state) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    out
}

/// Lane groups of the batch kernel the library compiles (2 × 4 lanes, interleaved).
pub const BATCH_GROUPS: usize = 2;

/// Scalar lanes of the batch kernel after its groups: one on x86_64, where the general
/// registers run a ninth lane's 64 steps beside the vector chains (block function 6.0× OpenSSL
/// against 5.4× for x8 on Zen 4; `notes/md5-mb.md`), none elsewhere (AArch64 and s390x
/// keep the x8 kernel, not measured with scalar lanes).
pub const BATCH_SCALAR: usize = if cfg!(target_arch = "x86_64") { 1 } else { 0 };

/// The wider lane kernel a [`crate::LaneEngine`] switches to while at least as many streams as
/// it has lanes have blocks pending: (vector groups, scalar lanes). On x86_64 three groups and
/// a scalar lane (13 lanes; block function 6.6× OpenSSL against 6.0× for the nine-lane batch
/// kernel on Zen 4, but slower per stream while fewer than about 12 streams fill it;
/// `notes/md5-lanes.md`); none elsewhere (not measured).
pub const WIDE_BATCH: Option<(usize, usize)> = if cfg!(target_arch = "x86_64") {
    Some((3, 1))
} else {
    None
};

/// Blocks that rounds with enough pending streams for the wider lane kernel ([`WIDE_BATCH`])
/// must have brought before it is compiled: 128 MiB. Compiling it costs about as much CPU as
/// hashing 100 MiB in lanes (x12+s1 on x86_64: ≈ 86 M instructions under callgrind), for rounds
/// ≈ 8 % faster, so a short run (`md5sum` over 64 files of 1 MiB, 64 MiB in all, whose lane
/// kernel compile already takes a noticeable share of its time) never starts it; a
/// long-running server with many streams does, early in its life. With the code cache the
/// compile happens once per build of the program and machine anyway.
pub const WIDE_THRESHOLD_BLOCKS: u64 = 1 << 21;

/// A tier compiling the lane kernel of `(groups, scalar)` with `config` (the lane kernels'
/// own: [`lane_config`], [`wide_lane_config`]) through the code cache once `threshold` blocks
/// have been seen.
fn lane_tier(
    config: PipelineConfig,
    (groups, scalar): (usize, usize),
    threshold: u64,
) -> Tier<MultiCompressor> {
    Tier::from_env(threshold, move || {
        MultiCompressor::compile_hybrid_with_cache(&config, groups, scalar, &CodeCache::from_env())
            .map_err(|e| e.to_string())
    })
}

/// Tiered MD5: the single-stream kernel for [`Md5`] hashers, the multi-buffer kernel for
/// [`TieredEngine::digest_many`] and lane engines, and the wider lane kernel ([`WIDE_BATCH`])
/// for lane engines with many streams, each compiled in the background when enough work has
/// been seen, the portable Rust code (or the narrower kernel) meanwhile and whenever a compile
/// fails.
pub struct TieredEngine {
    single: Tier<Compressor>,
    batch: Tier<MultiCompressor>,
    wide: Option<Tier<MultiCompressor>>,
}

impl std::fmt::Debug for TieredEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TieredEngine")
            .field("backend", &self.backend())
            .field("batch_backend", &self.batch_backend())
            .finish()
    }
}

impl TieredEngine {
    /// The engine of `config`, honouring [`crate::JIT_ENV`] (leaked: hashers hold `&'static`
    /// references to it).
    pub(crate) fn leak(config: PipelineConfig) -> &'static Self {
        let batch = lane_tier(
            lane_config(&config),
            (BATCH_GROUPS, BATCH_SCALAR),
            JIT_THRESHOLD_BLOCKS,
        );
        let wide = WIDE_BATCH
            .map(|shape| lane_tier(wide_lane_config(&config), shape, WIDE_THRESHOLD_BLOCKS));
        Box::leak(Box::new(Self {
            single: Tier::from_env(JIT_THRESHOLD_BLOCKS, move || {
                Compressor::compile(&config).map_err(|e| e.to_string())
            }),
            batch,
            wide,
        }))
    }

    /// The engine behind [`Md5::default`] (the default pipeline configuration).
    pub fn default_instance() -> &'static Self {
        static DEFAULT: std::sync::OnceLock<&'static TieredEngine> = std::sync::OnceLock::new();
        DEFAULT.get_or_init(|| Self::leak(crate::builder::default_config()))
    }

    /// A fresh hasher using this engine.
    pub fn hasher(&'static self) -> Md5 {
        Md5::with_engine(self)
    }

    /// Hashes `data` in one call.
    pub fn digest(&'static self, data: impl AsRef<[u8]>) -> Output<Md5> {
        let mut h = self.hasher();
        h.update(data);
        h.finalize()
    }

    /// The MD5 of every message, in order: with the multi-buffer kernel once it is compiled
    /// (lanes refilled as messages finish), one by one with the portable code while it
    /// compiles (readiness is checked before each message), one by one with the single-stream
    /// tiers if it cannot be compiled. Identical to [`TieredEngine::digest`] of each.
    pub fn digest_many(&'static self, messages: &[&[u8]]) -> Vec<Output<Md5>> {
        let mut out = Vec::with_capacity(messages.len());
        if messages.len() > 1 {
            // The whole batch counts at once: a large one starts the compile before its first
            // message is hashed.
            let blocks: u64 = messages.iter().map(|m| m.len() as u64 / 64 + 1).sum();
            self.batch.code_or_count(blocks);
        }
        let mut rest = messages;
        while let [first, tail @ ..] = rest {
            if tail.is_empty() {
                out.push(self.digest(first));
                break;
            }
            if let Some(kernel) = self.batch.ready() {
                let single = |state: &mut [u32; 4], data: &[u8]| self.compress_blocks(state, data);
                out.extend(
                    digest_many_with(kernel, &single, rest)
                        .into_iter()
                        .map(Output::<Md5>::from),
                );
                break;
            }
            // Not compiled yet: this message now, the next ones in lanes if it is ready by then.
            out.push(match self.batch.backend() {
                Backend::Failed(_) => self.digest(first),
                // Leave the core to the batch compile rather than start a second one.
                _ => portable_digest(first),
            });
            rest = tail;
        }
        out
    }

    /// The compiled batch kernel if it is ready; otherwise counts `blocks` toward starting its
    /// compile (never waits).
    pub(crate) fn batch_kernel_or_count(
        &'static self,
        blocks: u64,
    ) -> Option<&'static MultiCompressor> {
        self.batch.code_or_count(blocks)
    }

    /// Lanes of the wider lane kernel ([`WIDE_BATCH`]), if the target has one.
    pub(crate) fn wide_lanes(&self) -> Option<usize> {
        WIDE_BATCH.map(|(groups, scalar)| schedlab_kernels::md5_mb::GROUP_LANES * groups + scalar)
    }

    /// The compiled wider lane kernel if it is ready; otherwise counts `blocks` toward starting
    /// its compile (never waits). `None` where the target has none.
    pub(crate) fn wide_kernel_or_count(
        &'static self,
        blocks: u64,
    ) -> Option<&'static MultiCompressor> {
        self.wide.as_ref()?.code_or_count(blocks)
    }

    /// Which code the wider lane kernel's rounds run now (`None` where the target has none).
    pub fn wide_backend(&self) -> Option<Backend> {
        self.wide.as_ref().map(Tier::backend)
    }

    /// Compresses whole blocks with the single-stream kernel, or portably until it is ready.
    pub(crate) fn compress_blocks(&'static self, state: &mut [u32; 4], data: &[u8]) {
        match self.single.code_or_count(data.len() as u64 / 64) {
            Some(compressor) => compressor.compress_blocks(state, data),
            None => portable::compress_blocks(state, data),
        }
    }

    /// Which code single-stream hashing runs now.
    pub fn backend(&self) -> Backend {
        self.single.backend()
    }

    /// Starts the batch kernel's background compile if it has not started (no effect when the
    /// JIT is off or has failed); never waits.
    pub fn start_batch_jit(&'static self) {
        self.batch.start();
    }

    /// Which code [`TieredEngine::digest_many`] runs now.
    pub fn batch_backend(&self) -> Backend {
        self.batch.backend()
    }

    /// Starts both compiles if needed and blocks until they have finished; returns the
    /// single-stream and the batch outcome. For tests and benchmarks: hashing never needs it.
    pub fn wait_for_jit(&'static self) -> (Backend, Backend) {
        (self.single.wait(), self.batch.wait())
    }

    /// Starts the wider lane kernel's compile if needed and blocks until it has finished
    /// (`None` where the target has none). For tests and benchmarks.
    pub fn wait_for_wide_jit(&'static self) -> Option<Backend> {
        self.wide.as_ref().map(Tier::wait)
    }

    /// The compiled single-stream compressor, if it is ready.
    pub fn compressor(&self) -> Option<&'static Compressor> {
        self.single.ready()
    }

    /// The compiled batch kernel, if it is ready.
    pub fn batch_compressor(&self) -> Option<&'static MultiCompressor> {
        self.batch.ready()
    }
}
