//! SHA-256 whose compression function is schedlab's `sha256` kernel, JIT-compiled once per
//! process with the default pipeline configuration.
//!
//! [`Sha256`] implements the RustCrypto [`digest`] traits like `sha2::Sha256`. Unlike [`Md5`]
//! it is not tiered: the first block compiles the kernel (the checked fallback loop in the same
//! function), and if the JIT cannot compile on this host every block runs the portable FIPS
//! 180-4 transcription instead ([`Sha256::jit_error`] says why). Each hasher owns the 64-word
//! message schedule the kernel writes, as OpenJDK's `SHA2` owns its `int[] W`.
//!
//! [`Md5`]: crate::Md5

use crate::core_traits::message_bits;
use digest::{
    Output,
    block_api::{Block, Buffer, FixedOutputCore, Reset, UpdateCore},
};
use schedlab_backend::pipeline::{PipelineConfig, StageOptions, run_ir_stages_with};
use schedlab_backend::{JitFunction, JitOptions, Target};
use schedlab_kernels::sha256::{INITIAL_STATE, SCHEDULE_WORDS, reference_compress};
use std::sync::OnceLock;

/// The kernel's machine-level type: `(state, buf, len, ofs, limit, w) -> offset | status`.
type KernelFn = unsafe extern "C" fn(*mut u32, *const u8, i32, i32, i32, *mut u32) -> i32;

/// The compiled kernel, kept for the life of the process.
struct Compiled {
    entry: KernelFn,
    _jit: JitFunction,
}

/// The process's kernel, or why it could not be compiled.
fn compiled() -> Result<&'static Compiled, &'static str> {
    static KERNEL: OnceLock<Result<Compiled, String>> = OnceLock::new();
    KERNEL.get_or_init(compile).as_ref().map_err(String::as_str)
}

fn compile() -> Result<Compiled, String> {
    let target = Target::host().ok_or("the host architecture has no schedlab backend")?;
    let mut func = schedlab_kernels::sha256::compress_multi_block();
    let config = PipelineConfig::default();
    run_ir_stages_with(&mut func, target, &config, &StageOptions::jit(None))
        .map_err(|e| e.to_string())?;
    let options = JitOptions {
        verify: false,
        listing: false,
    };
    let jit = JitFunction::compile_with(func, &options).map_err(|e| e.to_string())?;
    // SAFETY: the JIT compiled a function with exactly `KernelFn`'s signature in the host's
    // default (C) calling convention; the code lives as long as `_jit`, i.e. the process.
    let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(jit.code_ptr()) };
    Ok(Compiled { entry, _jit: jit })
}

/// Compresses every whole 64-byte block of `data` into `state`, with `w` as the schedule.
fn compress_blocks(state: &mut [u32; 8], w: &mut [u32; SCHEDULE_WORDS], data: &[u8]) {
    assert_eq!(data.len() % 64, 0, "compress_blocks takes whole blocks");
    let Ok(kernel) = compiled() else {
        for block in data.chunks_exact(64) {
            if let Ok(block) = block.try_into() {
                reference_compress(state, block);
            }
        }
        return;
    };
    // Stay below i32::MAX so offsets cannot overflow a Java int.
    const CHUNK: usize = (i32::MAX as usize / 64 - 1) * 64;
    for chunk in data.chunks(CHUNK) {
        let len = chunk.len() as i32;
        // SAFETY: `state` is eight writable words, `w` 64 writable words; the kernel reads at
        // most `len` bytes of `chunk` because every read is bounds-checked against `len`.
        let end = unsafe {
            (kernel.entry)(
                state.as_mut_ptr(),
                chunk.as_ptr(),
                len,
                0,
                len - 64,
                w.as_mut_ptr(),
            )
        };
        assert_eq!(
            end, len,
            "JIT-compiled SHA-256 kernel stopped early ({end})"
        );
    }
}

/// Block-level SHA-256 state: the chaining value, the number of blocks so far and the message
/// schedule the kernel writes.
#[derive(Clone)]
pub struct Sha256Core {
    state: [u32; 8],
    blocks: u64,
    schedule: [u32; SCHEDULE_WORDS],
}

impl Default for Sha256Core {
    fn default() -> Self {
        Self {
            state: INITIAL_STATE,
            blocks: 0,
            schedule: [0; SCHEDULE_WORDS],
        }
    }
}

block_core_traits!(Sha256Core, digest::typenum::U32, "Sha256");

impl UpdateCore for Sha256Core {
    fn update_blocks(&mut self, blocks: &[Block<Self>]) {
        self.blocks = self.blocks.wrapping_add(blocks.len() as u64);
        let bytes = digest::array::Array::slice_as_flattened(blocks);
        compress_blocks(&mut self.state, &mut self.schedule, bytes);
    }
}

impl FixedOutputCore for Sha256Core {
    fn finalize_fixed_core(&mut self, buffer: &mut Buffer<Self>, out: &mut Output<Self>) {
        let bit_len = message_bits(self.blocks, buffer.get_pos());
        let mut state = self.state;
        let schedule = &mut self.schedule;
        buffer.len64_padding_be(bit_len, |block| {
            compress_blocks(&mut state, schedule, block);
        });
        for (chunk, word) in out.chunks_exact_mut(4).zip(state) {
            chunk.copy_from_slice(&word.to_be_bytes());
        }
    }
}

impl Reset for Sha256Core {
    fn reset(&mut self) {
        *self = Self::default();
    }
}

digest::buffer_fixed!(
    /// SHA-256 hasher whose blocks are compressed by the JIT-compiled `sha256` kernel (see the
    /// module docs).
    pub struct Sha256(Sha256Core);
    impl: BaseFixedTraits AlgorithmName Default Clone HashMarker Reset FixedOutputReset;
);

impl Sha256 {
    /// Why the kernel could not be JIT-compiled on this host (every block then runs portable
    /// code), or `None` when the hashers run the compiled kernel. Compiles it if needed.
    pub fn jit_error() -> Option<&'static str> {
        compiled().err()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use digest::Digest;
    use rand::{Rng, SeedableRng, rngs::StdRng};

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn the_kernel_compiles_on_the_host() {
        if Target::host().is_some() {
            assert_eq!(Sha256::jit_error(), None);
        }
    }

    #[test]
    fn fips_180_4_examples() {
        for (message, digest) in schedlab_kernels::sha256::FIPS180_EXAMPLES {
            assert_eq!(hex(&Sha256::digest(message.as_bytes())), digest);
        }
    }

    #[test]
    fn agrees_with_sha2_in_pieces_of_random_sizes() {
        let mut rng = StdRng::seed_from_u64(256);
        for _ in 0..40 {
            let mut message = vec![0u8; rng.random_range(0..=2000usize)];
            rng.fill(message.as_mut_slice());
            let mut hasher = Sha256::new();
            let mut rest = message.as_slice();
            while !rest.is_empty() {
                let (piece, tail) = rest.split_at(rng.random_range(1..=rest.len().min(300)));
                hasher.update(piece);
                rest = tail;
            }
            let expected = sha2::Sha256::digest(&message);
            assert_eq!(
                hasher.finalize()[..],
                expected[..],
                "length {}",
                message.len()
            );
        }
    }
}
