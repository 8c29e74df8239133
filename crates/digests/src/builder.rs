//! Compiling MD5 with a chosen pipeline configuration.

use crate::Md5;
use crate::compressor::Compressor;
use crate::tiered_engine::TieredEngine;
use digest::{Digest, Output};
use schedlab_backend::Target;
use schedlab_backend::pipeline::{PipelineConfig, PipelineError};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Why a configuration could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The host is not one of schedlab's targets.
    #[error("the host architecture has no schedlab backend")]
    UnsupportedHost,
    /// A pipeline stage rejected the configuration (e.g. an unknown strategy).
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// The JIT failed.
    #[error(transparent)]
    Jit(#[from] schedlab_backend::JitError),
    /// The multi-buffer kernel has 4, 8, 12 or 16 lanes.
    #[error("md5-mb has 4, 8, 12 or 16 lanes, not {0}")]
    Lanes(usize),
    /// The host has no SIMD lowering for the multi-buffer kernel's `i32x4` vectors.
    #[error(
        "md5-mb needs SIMD: Cranelift lowers i32x4 on {0} only with its vector extension, \
         which schedlab's {0} target does not enable; batches use the single-stream path"
    )]
    NoSimd(Target),
}

/// The configuration [`Md5::default`] uses.
pub(crate) fn default_config() -> PipelineConfig {
    PipelineConfig::default()
}

/// Chooses a pipeline configuration and compiles it into an [`Md5Engine`].
#[derive(Clone, Debug, Default)]
pub struct Md5Builder {
    config: Option<PipelineConfig>,
}

impl Md5Builder {
    /// Starts from the default configuration.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules with the strategy registered as `name` (see
    /// `schedlab_passes::sched::strategy_names`); an unknown name fails in [`Md5Builder::build`]
    /// with the list of valid ones.
    pub fn strategy(mut self, name: &str) -> Self {
        let mut config = self.config.take().unwrap_or_else(default_config);
        config.strategy = name.to_string();
        self.config = Some(config);
        self
    }

    /// Uses `config` as a whole.
    pub fn config(mut self, config: PipelineConfig) -> Self {
        self.config = Some(config);
        self
    }

    /// A tiered engine for the configuration: portable hashing at once, its kernels compiled
    /// on a background thread (once per configuration and process). A configuration that cannot
    /// compile (e.g. an unknown strategy) gives an engine that stays portable and reports
    /// [`crate::Backend::Failed`].
    pub fn tiered(self) -> &'static TieredEngine {
        let config = self.config.unwrap_or_else(default_config);
        static ENGINES: OnceLock<Mutex<HashMap<PipelineConfig, &'static TieredEngine>>> =
            OnceLock::new();
        let mut engines = ENGINES
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        engines
            .entry(config.clone())
            .or_insert_with(|| TieredEngine::leak(config))
    }

    /// Compiles the configuration (once per process: later builds of an equal configuration
    /// return the same engine).
    pub fn build(self) -> Result<Md5Engine, BuildError> {
        let config = self.config.unwrap_or_else(default_config);
        static ENGINES: OnceLock<Mutex<HashMap<PipelineConfig, &'static Compressor>>> =
            OnceLock::new();
        let engines = ENGINES.get_or_init(Default::default);
        let mut engines = engines
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(&compressor) = engines.get(&config) {
            return Ok(Md5Engine { compressor });
        }
        // Compiled code lives for the process anyway; the cache bounds it to one per config.
        let compressor: &'static Compressor = Box::leak(Box::new(Compressor::compile(&config)?));
        engines.insert(config, compressor);
        Ok(Md5Engine { compressor })
    }
}

/// A compiled configuration: hands out hashers that share its machine code.
#[derive(Clone, Copy, Debug)]
pub struct Md5Engine {
    compressor: &'static Compressor,
}

impl Md5Engine {
    /// A fresh hasher using this engine.
    pub fn hasher(&self) -> Md5 {
        Md5::with_compressor(self.compressor)
    }

    /// Hashes `data` in one call.
    pub fn digest(&self, data: impl AsRef<[u8]>) -> Output<Md5> {
        let mut h = self.hasher();
        h.update(data);
        h.finalize()
    }

    /// The compiled compressor (raw entry point, machine code, configuration).
    pub fn compressor(&self) -> &'static Compressor {
        self.compressor
    }
}
