//! The library's engine: portable code first, JIT-compiled kernels once a background thread
//! has compiled them (see [`crate::tier`]), for single messages and for batches.

use crate::Md5;
use crate::batch::digest_many_with;
use crate::compressor::Compressor;
use crate::multi::MultiCompressor;
use crate::portable;
use crate::tier::{Backend, JIT_THRESHOLD_BLOCKS, Tier};
use digest::{Digest, Output};
use schedlab_backend::pipeline::PipelineConfig;

/// Lane groups of the batch kernel the library compiles (2 × 4 lanes, interleaved).
pub const BATCH_GROUPS: usize = 2;

/// Tiered MD5: the single-stream kernel for [`Md5`] hashers, the multi-buffer kernel for
/// [`TieredEngine::digest_many`], each compiled in the background when enough work has been
/// seen, the portable Rust code meanwhile and whenever a compile fails.
pub struct TieredEngine {
    single: Tier<Compressor>,
    batch: Tier<MultiCompressor>,
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
        let batch_config = config.clone();
        Box::leak(Box::new(Self {
            single: Tier::from_env(JIT_THRESHOLD_BLOCKS, move || {
                Compressor::compile(&config).map_err(|e| e.to_string())
            }),
            batch: Tier::from_env(JIT_THRESHOLD_BLOCKS, move || {
                MultiCompressor::compile(&batch_config, BATCH_GROUPS).map_err(|e| e.to_string())
            }),
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
    /// (lanes refilled as messages finish), one by one before that. Identical to
    /// [`TieredEngine::digest`] of each.
    pub fn digest_many(&'static self, messages: &[&[u8]]) -> Vec<Output<Md5>> {
        let blocks: u64 = messages.iter().map(|m| m.len() as u64 / 64 + 1).sum();
        match self.batch.code_or_count(blocks) {
            Some(kernel) if messages.len() > 1 => {
                let single = |state: &mut [u32; 4], data: &[u8]| self.compress_blocks(state, data);
                digest_many_with(kernel, &single, messages)
                    .into_iter()
                    .map(Output::<Md5>::from)
                    .collect()
            }
            _ => messages.iter().map(|m| self.digest(m)).collect(),
        }
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

    /// Which code [`TieredEngine::digest_many`] runs now.
    pub fn batch_backend(&self) -> Backend {
        self.batch.backend()
    }

    /// Starts both compiles if needed and blocks until they have finished; returns the
    /// single-stream and the batch outcome. For tests and benchmarks: hashing never needs it.
    pub fn wait_for_jit(&'static self) -> (Backend, Backend) {
        (self.single.wait(), self.batch.wait())
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
