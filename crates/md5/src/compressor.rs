//! A compiled MD5 kernel and the safe entry points into it.

use schedlab_backend::pipeline::{PipelineConfig, run_ir_stages_with};
use schedlab_backend::{JitFunction, Target};
use std::sync::OnceLock;

pub use schedlab_kernels::OUT_OF_BOUNDS;

/// The kernel's machine-level type: `(state, buf, len, ofs, limit) -> offset | OUT_OF_BOUNDS`.
type KernelFn = unsafe extern "C" fn(*mut u32, *const u8, i32, i32, i32) -> i32;

/// One JIT-compiled MD5 multi-block compression function.
pub struct Compressor {
    entry: KernelFn,
    jit: JitFunction,
    config: PipelineConfig,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Compressor {
    /// Builds the kernel, runs the pipeline's IR stages with `config` and JIT-compiles it.
    pub fn compile(config: &PipelineConfig) -> Result<Self, crate::BuildError> {
        let target = Target::host().ok_or(crate::BuildError::UnsupportedHost)?;
        let mut func = schedlab_kernels::md5::compress_multi_block();
        run_ir_stages_with(&mut func, target, config, false)?;
        let jit = JitFunction::compile(&func)?;
        // SAFETY: the JIT compiled a function with exactly `KernelFn`'s signature in the
        // host's default (C) calling convention; the code lives for the process.
        let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(jit.code_ptr()) };
        Ok(Self {
            entry,
            jit,
            config: config.clone(),
        })
    }

    /// The process-wide compressor of the default configuration, compiled on first use.
    ///
    /// # Panics
    /// If the host JIT cannot compile the kernel (an architecture schedlab has no backend for);
    /// use [`crate::Md5Builder::build`] to get that as an error instead.
    pub fn default_instance() -> &'static Compressor {
        static DEFAULT: OnceLock<Compressor> = OnceLock::new();
        DEFAULT.get_or_init(|| {
            Compressor::compile(&crate::builder::default_config())
                .unwrap_or_else(|e| panic!("schedlab-md5 cannot compile its kernel: {e}"))
        })
    }

    /// The pipeline configuration this compressor was built with.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// The JIT-compiled function (machine code and VCode listing).
    pub fn jit(&self) -> &JitFunction {
        &self.jit
    }

    /// The raw entry point with Java semantics: compresses the 64-byte blocks of `buf` that start
    /// at `ofs, ofs + 64, …` while the start is `<= limit`.
    ///
    /// Returns the offset after the last block, or [`OUT_OF_BOUNDS`] if a block would read
    /// outside `buf` — then `state` holds exactly the blocks completed before that one. Never
    /// reads outside `buf`: the kernel bounds-checks every read (buffers longer than
    /// `i32::MAX` bytes are seen as their first `i32::MAX` bytes, like a Java array).
    pub fn compress_multi_block(
        &self,
        state: &mut [u32; 4],
        buf: &[u8],
        ofs: i32,
        limit: i32,
    ) -> i32 {
        let len = i32::try_from(buf.len()).unwrap_or(i32::MAX);
        // SAFETY: `state` is four writable words; the kernel reads at most `len` bytes from
        // `buf` because every read is bounds-checked against `len`.
        unsafe { (self.entry)(state.as_mut_ptr(), buf.as_ptr(), len, ofs, limit) }
    }

    /// Compresses every whole 64-byte block of `data` (whose length must be a multiple of 64).
    pub fn compress_blocks(&self, state: &mut [u32; 4], data: &[u8]) {
        assert_eq!(data.len() % 64, 0, "compress_blocks takes whole blocks");
        // Stay below i32::MAX so offsets cannot overflow a Java int.
        const CHUNK: usize = (i32::MAX as usize / 64 - 1) * 64;
        for chunk in data.chunks(CHUNK) {
            if chunk.is_empty() {
                continue;
            }
            let limit = (chunk.len() - 64) as i32;
            let end = self.compress_multi_block(state, chunk, 0, limit);
            assert_eq!(
                end,
                chunk.len() as i32,
                "JIT-compiled MD5 kernel stopped early (status {end})"
            );
        }
    }
}
