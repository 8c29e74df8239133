//! A compiled MD5 kernel and the safe entry points into it.
//!
//! The kernel's checked slow path — the original loop that runs when the preheader test cannot
//! prove every read in bounds — is compiled on first need ([`SlowPath::Lazy`]): the JIT
//! compiles only the fast loop, whose versioning branch calls [`run_slow_path`], which
//! compiles the checked kernel once and runs it, as a JVM's uncommon trap leaves compiled
//! code for the interpreter. Valid input (everything [`crate::Md5`] passes) never takes it.

use cranelift_codegen::isa::CallConv;
use schedlab_backend::pipeline::{PipelineConfig, StageOptions, run_ir_stages_with};
use schedlab_backend::{JitFunction, JitOptions, Target};
use schedlab_passes::bce::BceLevel;
use schedlab_passes::deopt::SlowPathCall;
use std::sync::OnceLock;
use std::time::Instant;

pub use schedlab_kernels::OUT_OF_BOUNDS;

/// The kernel's machine-level type: `(state, buf, len, ofs, limit) -> offset | OUT_OF_BOUNDS`.
type KernelFn = unsafe extern "C" fn(*mut u32, *const u8, i32, i32, i32) -> i32;

/// How the kernel's checked slow path is compiled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SlowPath {
    /// On the first call whose range the preheader test cannot prove in bounds; only the fast
    /// loop is compiled up front. The library's choice.
    #[default]
    Lazy,
    /// Together with the fast loop, as one function (what `schedlab report` measures).
    Eager,
}

/// Phases of one compilation, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompileTimings {
    /// Building the kernel's IR.
    pub build_us: f64,
    /// The pipeline's IR stages (no verifier run for registered strategies).
    pub passes_us: f64,
    /// Cranelift code generation and making the code executable.
    pub codegen_us: f64,
}

impl CompileTimings {
    /// All phases.
    pub fn total_us(&self) -> f64 {
        self.build_us + self.passes_us + self.codegen_us
    }
}

/// The lazily compiled checked kernel behind a fast one.
struct SlowPathState {
    config: PipelineConfig,
    kernel: OnceLock<Option<KernelFn>>,
}

impl SlowPathState {
    /// The checked kernel, compiled on first use; `None` if it cannot be compiled.
    fn kernel(&self) -> Option<KernelFn> {
        *self.kernel.get_or_init(|| {
            // The slow path only runs for ranges that may fail: merged checks are enough.
            let config = PipelineConfig {
                bce: BceLevel::Merge,
                ..self.config.clone()
            };
            let mut func = schedlab_kernels::md5::compress_multi_block();
            let target = Target::host()?;
            run_ir_stages_with(&mut func, target, &config, &StageOptions::jit(None)).ok()?;
            let jit = JitFunction::compile_with(func, &jit_options()).ok()?;
            // SAFETY: as in `Compressor::compile_timed`; the code is never freed.
            Some(unsafe { std::mem::transmute::<*const u8, KernelFn>(jit.code_ptr()) })
        })
    }
}

/// The slow path's entry, called by the fast kernel's versioning branch with the kernel's own
/// arguments when the preheader test fails.
///
/// # Safety
/// `context` is the `SlowPathState` whose address the kernel was compiled with; the other
/// arguments are the kernel's (`state`: four writable words, `buf`: `len` readable bytes).
unsafe extern "C" fn run_slow_path(
    context: *const SlowPathState,
    state: *mut u32,
    buf: *const u8,
    len: i32,
    ofs: i32,
    limit: i32,
) -> i32 {
    // SAFETY: the state is leaked, so it outlives every kernel compiled with its address.
    let slow = unsafe { &*context };
    match slow.kernel() {
        // SAFETY: the checked kernel bounds-checks every read against `len`.
        Some(kernel) => unsafe { kernel(state, buf, len, ofs, limit) },
        // Compilation failed (a schedlab bug): the same semantics in Rust, never a wrong hash.
        None => {
            // SAFETY: the caller passes four writable words and `len` readable bytes.
            let (state, buf) = unsafe {
                (
                    &mut *state.cast::<[u32; 4]>(),
                    std::slice::from_raw_parts(buf, usize::try_from(len).unwrap_or(0)),
                )
            };
            schedlab_kernels::md5::java_compress_multi_block(state, buf, len.max(0), ofs, limit)
        }
    }
}

/// The JIT's settings: the pipeline verified the function; no listing (the report makes its own).
fn jit_options() -> JitOptions {
    JitOptions {
        verify: false,
        listing: false,
    }
}

/// One JIT-compiled MD5 multi-block compression function.
pub struct Compressor {
    entry: KernelFn,
    jit: JitFunction,
    config: PipelineConfig,
    slow_path: SlowPath,
    /// The lazily compiled checked kernel ([`SlowPath::Lazy`] only).
    slow_state: Option<&'static SlowPathState>,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("config", &self.config)
            .field("slow_path", &self.slow_path)
            .finish_non_exhaustive()
    }
}

impl Compressor {
    /// Builds the kernel, runs the pipeline's IR stages with `config` and JIT-compiles it, the
    /// slow path lazily.
    pub fn compile(config: &PipelineConfig) -> Result<Self, crate::BuildError> {
        Self::compile_timed(config, SlowPath::Lazy).map(|(c, _)| c)
    }

    /// [`Compressor::compile`] with a choice of slow path, timing each phase.
    pub fn compile_timed(
        config: &PipelineConfig,
        slow_path: SlowPath,
    ) -> Result<(Self, CompileTimings), crate::BuildError> {
        let target = Target::host().ok_or(crate::BuildError::UnsupportedHost)?;
        let t0 = Instant::now();
        let mut func = schedlab_kernels::md5::compress_multi_block();
        let t1 = Instant::now();
        let slow_state: Option<&'static SlowPathState> = match slow_path {
            SlowPath::Eager => None,
            // Leaked: compiled code lives for the process and holds this address.
            SlowPath::Lazy => Some(Box::leak(Box::new(SlowPathState {
                config: config.clone(),
                kernel: OnceLock::new(),
            }))),
        };
        let call = slow_state.map(|state| SlowPathCall {
            callee: run_slow_path as *const () as usize as u64,
            context: std::ptr::from_ref(state) as usize as u64,
            call_conv: CallConv::triple_default(&target.triple()),
        });
        let (_, ir) = run_ir_stages_with(&mut func, target, config, &StageOptions::jit(call))?;
        // Without predication (or a restartable loop) both loops are in this function.
        let outlined = ir
            .bce
            .is_some_and(|b| b.versioned.iter().any(|v| v.checked_header.is_none()));
        let (slow_path, slow_state) = if outlined {
            (slow_path, slow_state)
        } else {
            (SlowPath::Eager, None)
        };
        let t2 = Instant::now();
        let jit = JitFunction::compile_with(func, &jit_options())?;
        let t3 = Instant::now();
        // SAFETY: the JIT compiled a function with exactly `KernelFn`'s signature in the
        // host's default (C) calling convention; the code lives for the process.
        let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(jit.code_ptr()) };
        let us = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e6;
        let timings = CompileTimings {
            build_us: us(t0, t1),
            passes_us: us(t1, t2),
            codegen_us: us(t2, t3),
        };
        let compressor = Self {
            entry,
            jit,
            config: config.clone(),
            slow_path,
            slow_state,
        };
        Ok((compressor, timings))
    }

    /// The pipeline configuration this compressor was built with.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// How the slow path was compiled.
    pub fn slow_path(&self) -> SlowPath {
        self.slow_path
    }

    /// Whether the checked slow path has been compiled: always with [`SlowPath::Eager`], after
    /// the first call that needed it with [`SlowPath::Lazy`].
    pub fn slow_path_compiled(&self) -> bool {
        self.slow_state
            .is_none_or(|state| state.kernel.get().is_some())
    }

    /// The JIT-compiled function (machine code; no VCode listing, see `schedlab dump`).
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
