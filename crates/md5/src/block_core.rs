//! The block-level MD5 core that the `digest` crate wraps into [`crate::Md5`].

use crate::compressor::Compressor;
use digest::{
    HashMarker, Output,
    block_api::{
        AlgorithmName, Block, BlockSizeUser, Buffer, BufferKindUser, Eager, FixedOutputCore,
        OutputSizeUser, Reset, UpdateCore,
    },
    typenum::{U16, U64, Unsigned},
};
use schedlab_kernels::md5::INITIAL_STATE;
use std::fmt;

/// Block-level MD5 state: the chaining value, the number of blocks so far, and the compiled
/// compressor it uses.
#[derive(Clone)]
pub struct Md5Core {
    state: [u32; 4],
    blocks: u64,
    compressor: &'static Compressor,
}

impl Md5Core {
    /// A fresh core that compresses with `compressor`.
    pub fn with_compressor(compressor: &'static Compressor) -> Self {
        Self {
            state: INITIAL_STATE,
            blocks: 0,
            compressor,
        }
    }
}

impl Default for Md5Core {
    fn default() -> Self {
        Self::with_compressor(Compressor::default_instance())
    }
}

impl HashMarker for Md5Core {}

impl BlockSizeUser for Md5Core {
    type BlockSize = U64;
}

impl BufferKindUser for Md5Core {
    type BufferKind = Eager;
}

impl OutputSizeUser for Md5Core {
    type OutputSize = U16;
}

impl UpdateCore for Md5Core {
    fn update_blocks(&mut self, blocks: &[Block<Self>]) {
        self.blocks = self.blocks.wrapping_add(blocks.len() as u64);
        let bytes = digest::array::Array::slice_as_flattened(blocks);
        self.compressor.compress_blocks(&mut self.state, bytes);
    }
}

impl FixedOutputCore for Md5Core {
    fn finalize_fixed_core(&mut self, buffer: &mut Buffer<Self>, out: &mut Output<Self>) {
        let bit_len = self
            .blocks
            .wrapping_mul(Self::BlockSize::U64)
            .wrapping_add(buffer.get_pos() as u64)
            .wrapping_mul(8);
        let mut state = self.state;
        let compressor = self.compressor;
        buffer.len64_padding_le(bit_len, |block| {
            compressor.compress_blocks(&mut state, block)
        });
        for (chunk, word) in out.chunks_exact_mut(4).zip(state) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
    }
}

impl Reset for Md5Core {
    fn reset(&mut self) {
        *self = Self::with_compressor(self.compressor);
    }
}

impl AlgorithmName for Md5Core {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Md5")
    }
}

impl fmt::Debug for Md5Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Md5Core { ... }")
    }
}
