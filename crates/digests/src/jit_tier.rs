//! One JIT tier, for any kernel: [`Tier`] hashes with the portable code while the JIT compiles
//! on a background thread, switches when it is ready, and stays portable (saying why) when it
//! fails. [`crate::tiered_engine`] builds the MD5 engine from two of them.
//!
//! A tier counts the blocks hashed portably and starts the compile once they pass its
//! threshold, as a JVM's invocation counters do: a program that hashes one small file never
//! pays for a compile (nor for the thread), one that hashes megabytes switches after a few
//! milliseconds. Nothing ever waits for the compiler unless asked to ([`Tier::wait`]).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Which code a hasher currently runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The portable Rust compression; the JIT has not been started (too little work so far).
    Portable,
    /// The portable Rust compression while the JIT compiles on a background thread.
    Compiling,
    /// The JIT-compiled kernel.
    Jit,
    /// The portable Rust compression for good: the JIT could not compile, for this reason.
    Failed(String),
}

/// The environment variable that controls the default tiers: `off` never compiles (the
/// backend reports [`Backend::Failed`]), `eager` starts compiling on first use; anything else,
/// or nothing, compiles after [`JIT_THRESHOLD_BLOCKS`].
pub const JIT_ENV: &str = "SCHEDLAB_MD5_JIT";

/// Blocks hashed portably before the default tiers start compiling (256 KiB of input: the
/// portable code hashes it in well under a millisecond, less than one compile takes).
pub const JIT_THRESHOLD_BLOCKS: u64 = 4096;

/// What a tier compiles; returns the code or why it could not.
type CompileFn<T> = Box<dyn Fn() -> Result<T, String> + Send + Sync>;

/// A kernel compiled on first need on a background thread.
pub struct Tier<T: 'static> {
    code: OnceLock<Result<&'static T, String>>,
    started: AtomicBool,
    portable_blocks: AtomicU64,
    threshold: u64,
    compile: CompileFn<T>,
}

impl<T: Send + Sync + 'static> Tier<T> {
    /// A tier that runs `compile` once `threshold` blocks have been hashed portably (0: on the
    /// first use).
    pub fn new(
        threshold: u64,
        compile: impl Fn() -> Result<T, String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            code: OnceLock::new(),
            started: AtomicBool::new(false),
            portable_blocks: AtomicU64::new(0),
            threshold,
            compile: Box::new(compile),
        }
    }

    /// A tier configured by [`JIT_ENV`]: `default_threshold` unless the variable says `eager`
    /// (0) or `off` (already failed).
    pub fn from_env(
        default_threshold: u64,
        compile: impl Fn() -> Result<T, String> + Send + Sync + 'static,
    ) -> Self {
        let mode = std::env::var(JIT_ENV).unwrap_or_default();
        let threshold = if mode == "eager" {
            0
        } else {
            default_threshold
        };
        let tier = Self::new(threshold, compile);
        if mode == "off" {
            tier.started.store(true, Ordering::Relaxed);
            let _ = tier
                .code
                .set(Err(format!("the JIT is disabled by {JIT_ENV}=off")));
        }
        tier
    }

    /// The compiled code if it is ready.
    #[inline]
    pub fn ready(&self) -> Option<&'static T> {
        match self.code.get() {
            Some(Ok(code)) => Some(code),
            _ => None,
        }
    }

    /// The compiled code if it is ready; otherwise counts `blocks` as hashed portably and
    /// starts the compile when they pass the threshold.
    #[inline]
    pub fn code_or_count(&'static self, blocks: u64) -> Option<&'static T> {
        if let Some(code) = self.ready() {
            return Some(code);
        }
        let before = self.portable_blocks.fetch_add(blocks, Ordering::Relaxed);
        if before.saturating_add(blocks) >= self.threshold {
            self.start();
        }
        None
    }

    /// Starts the background compile if it has not started.
    pub fn start(&'static self) {
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("schedlab-digests-jit".into())
            .spawn(move || self.compile_now());
        if let Err(e) = spawned {
            let _ = self
                .code
                .set(Err(format!("cannot start the compiler thread: {e}")));
        }
    }

    fn compile_now(&self) {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.compile)()));
        let result = match outcome {
            // Compiled code lives for the process: the hashers hold plain references to it.
            Ok(Ok(code)) => Ok(&*Box::leak(Box::new(code))),
            Ok(Err(reason)) => Err(reason),
            Err(panic) => Err(format!(
                "the compiler panicked: {}",
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)")
            )),
        };
        let _ = self.code.set(result);
    }

    /// Which code hashes now.
    pub fn backend(&self) -> Backend {
        match self.code.get() {
            Some(Ok(_)) => Backend::Jit,
            Some(Err(reason)) => Backend::Failed(reason.clone()),
            None if self.started.load(Ordering::Acquire) => Backend::Compiling,
            None => Backend::Portable,
        }
    }

    /// Starts the compile if needed and blocks until it has finished; returns the outcome
    /// ([`Backend::Jit`] or [`Backend::Failed`]).
    pub fn wait(&'static self) -> Backend {
        self.start();
        match self.code.wait() {
            Ok(_) => Backend::Jit,
            Err(reason) => Backend::Failed(reason.clone()),
        }
    }
}
