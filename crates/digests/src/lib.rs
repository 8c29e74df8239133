//! MD5 and SHA-256 whose compression functions are schedlab's Java-semantics Cranelift
//! kernels, compiled by the JIT once per process ([`Md5`] here, [`Sha256`] in [`sha256`]).
//!
//! [`Md5`] implements the RustCrypto [`digest`] traits exactly like `md5::Md5` from the `md-5`
//! crate: only the block-level core differs. The library is tiered like a JVM
//! ([`TieredEngine`]): it hashes with portable Rust code until the default configuration's
//! machine code, compiled on a background thread once enough input has been seen, is ready,
//! then switches; if the JIT cannot compile, it stays portable and [`Md5::backend`] says why.
//! It never waits for the compiler and never panics for it. The machine code is shared by
//! every instance and thread and kept for the life of the process. [`LaneEngine`] hands out
//! hashers that share the SIMD lanes of the `md5-mb` kernel as their blocks arrive, from any
//! thread; [`Md5::digest_many`]
//! hashes many messages at once, one per SIMD lane of the `md5-mb` kernel. Only the check-free loop is compiled up front; the checked slow path, which
//! only out-of-range raw calls need, is compiled on first need ([`SlowPath`]). [`Md5Builder`]
//! compiles other pipeline configurations (another scheduling strategy, another bounds-check
//! level) for experiments.
//!
//! ```
//! use schedlab_digests::{Digest, Md5};
//! let hash = Md5::digest(b"abc");
//! let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
//! assert_eq!(hex, "900150983cd24fb0d6963f7d28e17f72");
//! ```
#![deny(missing_docs)]

#[macro_use]
mod core_traits;
mod batch;
mod block_core;
mod builder;
mod compressor;
mod jit_tier;
mod lanes;
mod multi;
mod portable;
pub mod sha256;
mod tiered_engine;

pub use block_core::Md5Core;
pub use builder::{BuildError, Md5Builder, Md5Engine};
pub use compressor::{CompileTimings, Compressor, OUT_OF_BOUNDS, SlowPath};
pub use digest::{self, Digest};
pub use jit_tier::{Backend, JIT_ENV, JIT_THRESHOLD_BLOCKS};
pub use lanes::{
    DEFAULT_HOLD_BACK_BLOCKS, HOLD_SLACK, LaneEngine, LaneStats, MAX_HOLD_BACK_BLOCKS,
    MAX_UPDATE_HOLD_BLOCKS, ring_start,
};
pub use multi::{
    LANE_STRATEGY, Lane, MultiCompressor, WIDE_LANE_STRATEGY, lane_config, state_index,
    state_words, wide_lane_config,
};
pub use sha256::Sha256;
pub use tiered_engine::{
    BATCH_GROUPS, BATCH_SCALAR, TieredEngine, WIDE_BATCH, WIDE_THRESHOLD_BLOCKS,
};

digest::buffer_fixed!(
    /// MD5 hasher whose blocks are compressed by JIT-compiled code (see the crate docs).
    pub struct Md5(Md5Core);
    impl: BaseFixedTraits AlgorithmName Default Clone HashMarker Reset FixedOutputReset;
);

impl Md5 {
    /// A hasher that compresses with `compressor` instead of the default configuration.
    pub fn with_compressor(compressor: &'static Compressor) -> Self {
        use digest::block_api::CoreProxy;
        Self::compose(Md5Core::with_compressor(compressor), Default::default())
    }

    /// A hasher whose blocks go through a lane engine's shared lanes.
    pub(crate) fn with_lanes(stream: lanes::LaneStream) -> Self {
        use digest::block_api::CoreProxy;
        Self::compose(Md5Core::with_lanes(stream), Default::default())
    }

    /// A hasher that compresses with a tiered engine.
    pub fn with_engine(engine: &'static TieredEngine) -> Self {
        use digest::block_api::CoreProxy;
        Self::compose(Md5Core::with_engine(engine), Default::default())
    }

    /// The MD5 of every message, in order, identical to [`Digest::digest`] of each: several
    /// messages are hashed at once in SIMD lanes once the multi-buffer kernel is compiled.
    pub fn digest_many(messages: &[&[u8]]) -> Vec<digest::Output<Md5>> {
        TieredEngine::default_instance().digest_many(messages)
    }

    /// Which code the default hashers run now (portable, compiling, JIT, or failed and why).
    pub fn backend() -> Backend {
        TieredEngine::default_instance().backend()
    }

    /// Starts compiling the batch kernel in the background now (a program that knows it will
    /// call [`Md5::digest_many`] on much input, e.g. while it reads the files); returns at once.
    pub fn start_batch_jit() {
        TieredEngine::default_instance().start_batch_jit()
    }

    /// Which code [`Md5::digest_many`] runs now.
    pub fn batch_backend() -> Backend {
        TieredEngine::default_instance().batch_backend()
    }

    /// Starts the default engine's compiles and waits for them (tests, benchmarks); hashing
    /// never needs this. Returns the single-stream and the batch outcome.
    pub fn wait_for_jit() -> (Backend, Backend) {
        TieredEngine::default_instance().wait_for_jit()
    }
}
