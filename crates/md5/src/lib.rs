//! MD5 whose compression function is schedlab's Java-semantics Cranelift kernel, compiled by
//! the JIT once per process.
//!
//! [`Md5`] implements the RustCrypto [`digest`] traits exactly like `md5::Md5` from the `md-5`
//! crate: only the block-level core differs. The default configuration's machine code is
//! compiled lazily on first use, shared by every instance and thread, and kept for the life of
//! the process. Only the check-free loop is compiled up front; the checked slow path, which
//! only out-of-range raw calls need, is compiled on first need ([`SlowPath`]). [`Md5Builder`]
//! compiles other pipeline configurations (another scheduling strategy, another bounds-check
//! level) for experiments.
//!
//! ```
//! use schedlab_md5::{Digest, Md5};
//! let hash = Md5::digest(b"abc");
//! let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
//! assert_eq!(hex, "900150983cd24fb0d6963f7d28e17f72");
//! ```
#![deny(missing_docs)]

mod block_core;
mod builder;
mod compressor;

pub use block_core::Md5Core;
pub use builder::{BuildError, Md5Builder, Md5Engine};
pub use compressor::{CompileTimings, Compressor, OUT_OF_BOUNDS, SlowPath};
pub use digest::{self, Digest};

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
}
