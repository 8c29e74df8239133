//! The JIT-compiled multi-buffer kernel (`md5-mb`): one message per SIMD lane.

use cranelift_codegen::isa::CallConv;
use schedlab_backend::code_cache::CodeCache;
use schedlab_backend::pipeline::{PipelineConfig, StageOptions, run_ir_stages_with};
use schedlab_backend::{JitCode, JitFunction, Target};
use schedlab_kernels::md5_mb::{self, GROUP_LANES, LANE_DESCRIPTOR_BYTES, MAX_GROUPS, MAX_SCALAR};
use schedlab_passes::deopt::SlowPathCall;

pub use schedlab_kernels::md5_mb::{state_index, state_words};

/// One lane as the kernel reads it (`LANE_DESCRIPTOR_BYTES` bytes: address, length, offset).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct LaneDescriptor {
    buf: *const u8,
    len: i32,
    ofs: i32,
}

const _: () = assert!(std::mem::size_of::<LaneDescriptor>() == LANE_DESCRIPTOR_BYTES as usize);

/// The kernel's machine-level type: `(state, lanes, blocks) -> blocks | OUT_OF_BOUNDS`.
type LanesFn = unsafe extern "C" fn(*mut u32, *const LaneDescriptor, i32) -> i32;

/// The kernel's slow path, called by its preheader test when it cannot prove every read in
/// bounds: the same semantics in Rust ([`md5_mb::java_compress_lanes`]).
///
/// # Safety
/// `lanes` is the lane count; `state` holds [`state_words`] words and `descriptors` one
/// descriptor per lane, each describing `len` readable bytes (as
/// [`MultiCompressor::compress_lanes`] builds them).
unsafe extern "C" fn run_slow_path(
    lanes: usize,
    state: *mut u32,
    descriptors: *const LaneDescriptor,
    blocks: i32,
) -> i32 {
    // SAFETY: per the contract above.
    let (state, descriptors) = unsafe {
        (
            std::slice::from_raw_parts_mut(state, state_words(lanes)),
            std::slice::from_raw_parts(descriptors, lanes),
        )
    };
    let inputs: Vec<md5_mb::LaneInput<'_>> = descriptors
        .iter()
        .map(|d| md5_mb::LaneInput {
            // SAFETY: `buf` is readable for `len` bytes (a slice's pointer, never null).
            buf: unsafe { std::slice::from_raw_parts(d.buf, usize::try_from(d.len).unwrap_or(0)) },
            len: d.len.max(0),
            ofs: d.ofs,
        })
        .collect();
    md5_mb::java_compress_lanes(state, &inputs, blocks)
}

/// The scheduling strategy of the lane kernels when the configuration names the default one:
/// it keeps the fewest vectors live around the word area's loads (`schedlab report --kernel
/// md5-mb --forward-stores off --strategy all`; `notes/md5-lanes.md`).
pub const LANE_STRATEGY: &str = "remat-loads";

/// The configuration the library compiles a lane kernel with: `config` without store-to-load
/// forwarding, which would fold the kernel's word area (its transposed message words, re-read
/// at each use) back into registers that then spill (see `schedlab_kernels::md5_mb`), with the
/// preheader's conjunction of per-lane range tests kept as a chain by the rewrites
/// (`keep_conditions`), and with [`LANE_STRATEGY`] in place of the default strategy (another
/// strategy stays as chosen).
///
/// Reassociated into a balanced tree, the preheader's 16 tests of eight lanes are live at once
/// beside the lanes' offsets and bounds; the register allocator then keeps the loop counter and
/// lane offsets in stack slots through the whole loop. Kept as a chain, the x8 kernel has no
/// spill on AArch64 and 16 / 38 on x86_64 instead of 9 / 18 and 28 / 48, and the loop keeps
/// every other rewrite (without the rewrites at all the block function is ≈ 20 % slower;
/// `notes/md5-lanes.md`).
pub fn lane_config(config: &PipelineConfig) -> PipelineConfig {
    lane_config_with(config, LANE_STRATEGY)
}

/// The scheduling strategy of the wider lane kernel ([`crate::WIDE_BATCH`]: three groups and a
/// scalar lane on x86_64) when the configuration names the default one: the builder's order.
/// Its loop is bound by dispatch and by the two vector pipes that shift on Zen 4, not by its
/// spills: in source order it spills more (loop 31 / 98 against 13 / 25 per 13 lane-blocks,
/// word area aside) and runs ≈ 2 % faster than with [`LANE_STRATEGY`] (`notes/md5-lanes.md`).
pub const WIDE_LANE_STRATEGY: &str = "source";

/// [`lane_config`] for the wider lane kernel: [`WIDE_LANE_STRATEGY`] in place of the default
/// strategy.
pub fn wide_lane_config(config: &PipelineConfig) -> PipelineConfig {
    lane_config_with(config, WIDE_LANE_STRATEGY)
}

/// [`lane_config`] with `strategy` in place of the default strategy.
fn lane_config_with(config: &PipelineConfig, strategy: &str) -> PipelineConfig {
    let default_strategy = config.strategy_entry.is_none()
        && config.strategy == schedlab_backend::pipeline::DEFAULT_STRATEGY;
    PipelineConfig {
        forward_stores: false,
        keep_conditions: true,
        strategy: if default_strategy {
            strategy.to_string()
        } else {
            config.strategy.clone()
        },
        ..config.clone()
    }
}

/// One lane's input to [`MultiCompressor::compress_lanes`]: a buffer and the offset of the
/// lane's first block.
#[derive(Clone, Copy, Debug)]
pub struct Lane<'a> {
    /// The lane's bytes (seen as at most `i32::MAX` bytes, like a Java array).
    pub buf: &'a [u8],
    /// Offset of the first block to compress.
    pub ofs: i32,
}

/// A JIT-compiled `md5-mb` kernel with `lanes()` lanes.
pub struct MultiCompressor {
    entry: LanesFn,
    groups: usize,
    scalar: usize,
    from_cache: bool,
    _jit: JitCode,
}

impl std::fmt::Debug for MultiCompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiCompressor")
            .field("lanes", &self.lanes())
            .finish_non_exhaustive()
    }
}

impl MultiCompressor {
    /// Builds the kernel with `groups` (1 to 4) four-lane groups, runs the pipeline's IR stages
    /// with `config` and JIT-compiles it. Only the check-free loop is compiled; ranges the
    /// preheader test cannot prove in bounds run the Rust model of the kernel.
    pub fn compile(config: &PipelineConfig, groups: usize) -> Result<Self, crate::BuildError> {
        Self::compile_with_cache(config, groups, &CodeCache::off())
    }

    /// [`MultiCompressor::compile`], the machine code kept in `cache`
    /// ([`JitFunction::compile_cached`]): a later process of the same program on the same
    /// host loads it instead of compiling. Loaded code is checked against the Rust model on
    /// every lane and on its slow path before it is used; code that disagrees is compiled
    /// afresh. A configuration with a strategy given as a function (not by name) is never
    /// cached: its recipe could not name it.
    pub fn compile_with_cache(
        config: &PipelineConfig,
        groups: usize,
        cache: &CodeCache,
    ) -> Result<Self, crate::BuildError> {
        Self::compile_hybrid_with_cache(config, groups, 0, cache)
    }

    /// [`MultiCompressor::compile`] of the hybrid kernel: `groups` four-lane groups and
    /// `scalar` (0 to 3) lanes in the general registers after them
    /// (`schedlab_kernels::md5_mb::compress_hybrid_lanes`).
    pub fn compile_hybrid(
        config: &PipelineConfig,
        groups: usize,
        scalar: usize,
    ) -> Result<Self, crate::BuildError> {
        Self::compile_hybrid_with_cache(config, groups, scalar, &CodeCache::off())
    }

    /// [`MultiCompressor::compile_with_cache`] of the hybrid kernel with `scalar` scalar lanes.
    pub fn compile_hybrid_with_cache(
        config: &PipelineConfig,
        groups: usize,
        scalar: usize,
        cache: &CodeCache,
    ) -> Result<Self, crate::BuildError> {
        if !(1..=MAX_GROUPS).contains(&groups) || scalar > MAX_SCALAR {
            return Err(crate::BuildError::Lanes(groups * GROUP_LANES + scalar));
        }
        let target = Target::host().ok_or(crate::BuildError::UnsupportedHost)?;
        let cache = if config.strategy_entry.is_some() {
            &CodeCache::off()
        } else {
            cache
        };
        let kernel = Self::compile_from(config, groups, scalar, target, cache)?;
        if !kernel.from_cache || kernel.agrees_with_the_model() {
            return Ok(kernel);
        }
        Self::compile_from(config, groups, scalar, target, &CodeCache::off())
    }

    fn compile_from(
        config: &PipelineConfig,
        groups: usize,
        scalar: usize,
        target: Target,
        cache: &CodeCache,
    ) -> Result<Self, crate::BuildError> {
        // The checked loop is not compiled: a failing preheader test calls the Rust model
        // (the context is the lane count). Valid input never takes it.
        let callee = run_slow_path as *const () as usize as u64;
        let slow_path = SlowPathCall {
            callee,
            context: (groups * GROUP_LANES + scalar) as u64,
            call_conv: CallConv::triple_default(&target.triple()),
        };
        let shape = if scalar == 0 {
            format!("groups={groups}")
        } else {
            format!("groups={groups} scalar={scalar}")
        };
        let recipe = format!("md5-mb {shape} {config:?} {:?}", slow_path.call_conv);
        let (jit, from_cache) = JitFunction::compile_cached(
            cache,
            &recipe,
            &[callee],
            md5_mb::compress_hybrid_lanes(groups, scalar),
            |func| {
                run_ir_stages_with(func, target, config, &StageOptions::jit(Some(slow_path)))?;
                // The configuration is checked first (its errors name what to fix); then the
                // host.
                if target == Target::Riscv64 {
                    return Err(crate::BuildError::NoSimd(target));
                }
                Ok(())
            },
        )?;
        // SAFETY: the JIT compiled a function with exactly `LanesFn`'s signature in the host's
        // default (C) calling convention; the code lives for the process.
        let entry = unsafe { std::mem::transmute::<*const u8, LanesFn>(jit.code_ptr()) };
        Ok(Self {
            entry,
            groups,
            scalar,
            from_cache,
            _jit: jit,
        })
    }

    /// Whether the code came from the code cache rather than the compiler.
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }

    /// Whether the kernel gives the Rust model's states and result on a few blocks of distinct
    /// data in every lane, and on input its preheader test sends to the slow path.
    fn agrees_with_the_model(&self) -> bool {
        let lanes = self.lanes();
        let data: Vec<Vec<u8>> = (0..lanes)
            .map(|l| (0..256).map(|i| (i * 7 + l * 31) as u8).collect())
            .collect();
        // Two blocks from offset 64 fit; three from offset 192 do not (the slow path).
        [(64, 2), (192, 3)].iter().all(|&(ofs, blocks)| {
            let initial: Vec<u32> = (0..state_words(lanes) as u32)
                .map(|w| w.wrapping_mul(0x9e37_79b9))
                .collect();
            let (mut ours, mut model) = (initial.clone(), initial);
            let inputs: Vec<Lane<'_>> = data.iter().map(|d| Lane { buf: d, ofs }).collect();
            let got = self.compress_lanes(&mut ours, &inputs, blocks);
            let model_inputs: Vec<md5_mb::LaneInput<'_>> = data
                .iter()
                .map(|d| md5_mb::LaneInput {
                    buf: d,
                    len: d.len() as i32,
                    ofs,
                })
                .collect();
            let expected = md5_mb::java_compress_lanes(&mut model, &model_inputs, blocks);
            got == expected && ours == model
        })
    }

    /// Lanes per call: four per vector group and one per scalar lane.
    pub fn lanes(&self) -> usize {
        self.groups * GROUP_LANES + self.scalar
    }

    /// The MD5 of every message, in order, through this kernel's lanes (refilled as messages
    /// finish); the few lanes left busy at the end, and messages of 1 GiB or more, finish on
    /// the default engine's single-stream path. Identical to `Md5::digest` of each.
    pub fn digest_many(&self, messages: &[&[u8]]) -> Vec<digest::Output<crate::Md5>> {
        let engine = crate::TieredEngine::default_instance();
        let single = |state: &mut [u32; 4], data: &[u8]| engine.compress_blocks(state, data);
        crate::batch::digest_many_with(self, &single, messages)
            .into_iter()
            .map(digest::Output::<crate::Md5>::from)
            .collect()
    }

    /// The raw entry point with Java semantics: compresses `blocks` blocks of every lane, lane
    /// `l`'s starting at `lanes[l].ofs`; `state` holds four words per lane in the kernel's layout
    /// ([`state_index`], [`state_words`] words).
    ///
    /// Returns `max(blocks, 0)`, or [`crate::OUT_OF_BOUNDS`] if some lane's read would leave its
    /// buffer — then every lane's state holds exactly the blocks completed before that one.
    /// Never reads outside a lane's buffer: the kernel bounds-checks every read.
    ///
    /// # Panics
    /// If `lanes` or `state` does not match [`MultiCompressor::lanes`].
    pub fn compress_lanes(&self, state: &mut [u32], lanes: &[Lane<'_>], blocks: i32) -> i32 {
        assert_eq!(lanes.len(), self.lanes(), "one input per lane");
        assert_eq!(
            state.len(),
            state_words(self.lanes()),
            "four state words per lane, in groups of four lanes"
        );
        let mut descriptors = [LaneDescriptor {
            buf: std::ptr::null(),
            len: 0,
            ofs: 0,
        }; MAX_GROUPS * GROUP_LANES + MAX_SCALAR];
        for (d, lane) in descriptors.iter_mut().zip(lanes) {
            *d = LaneDescriptor {
                buf: lane.buf.as_ptr(),
                len: i32::try_from(lane.buf.len()).unwrap_or(i32::MAX),
                ofs: lane.ofs,
            };
        }
        // SAFETY: `state` holds four words per lane; each descriptor describes `len` readable
        // bytes of a live slice, and the kernel bounds-checks every read against `len`.
        unsafe { (self.entry)(state.as_mut_ptr(), descriptors.as_ptr(), blocks) }
    }
}
