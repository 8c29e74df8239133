//! The block-level MD5 core that the `digest` crate wraps into [`crate::Md5`].

use crate::compressor::Compressor;
use crate::core_traits::message_bits;
use crate::lanes::LaneStream;
use crate::tiered_engine::TieredEngine;
use digest::{
    Output,
    block_api::{Block, Buffer, FixedOutputCore, Reset, UpdateCore},
};
use schedlab_kernels::md5::INITIAL_STATE;

/// What compresses a core's blocks.
#[derive(Clone)]
enum Engine {
    /// One compiled configuration.
    Fixed(&'static Compressor),
    /// Portable code until the background compile is done ([`TieredEngine`]).
    Tiered(&'static TieredEngine),
    /// A stream of a [`crate::LaneEngine`], which keeps its chaining value.
    Lanes(LaneStream),
}

impl Engine {
    fn compress_blocks(&self, state: &mut [u32; 4], data: &[u8]) {
        match self {
            Engine::Fixed(compressor) => compressor.compress_blocks(state, data),
            Engine::Tiered(engine) => engine.compress_blocks(state, data),
            Engine::Lanes(stream) => stream.update(data),
        }
    }
}

/// Block-level MD5 state: the chaining value, the number of blocks so far, and the engine
/// that compresses its blocks.
#[derive(Clone)]
pub struct Md5Core {
    state: [u32; 4],
    blocks: u64,
    engine: Engine,
}

impl Md5Core {
    /// A fresh core that compresses with `compressor`.
    pub fn with_compressor(compressor: &'static Compressor) -> Self {
        Self::with(Engine::Fixed(compressor))
    }

    /// A fresh core that compresses with a tiered engine.
    pub fn with_engine(engine: &'static TieredEngine) -> Self {
        Self::with(Engine::Tiered(engine))
    }

    /// A fresh core whose blocks go through a lane engine.
    pub(crate) fn with_lanes(stream: LaneStream) -> Self {
        Self::with(Engine::Lanes(stream))
    }

    fn with(engine: Engine) -> Self {
        Self {
            state: INITIAL_STATE,
            blocks: 0,
            engine,
        }
    }
}

impl Default for Md5Core {
    /// Compresses with [`TieredEngine::default_instance`]: never waits for the JIT.
    fn default() -> Self {
        Self::with_engine(TieredEngine::default_instance())
    }
}

block_core_traits!(Md5Core, digest::typenum::U16, "Md5");

impl UpdateCore for Md5Core {
    fn update_blocks(&mut self, blocks: &[Block<Self>]) {
        self.blocks = self.blocks.wrapping_add(blocks.len() as u64);
        let bytes = digest::array::Array::slice_as_flattened(blocks);
        self.engine.compress_blocks(&mut self.state, bytes);
    }
}

impl FixedOutputCore for Md5Core {
    fn finalize_fixed_core(&mut self, buffer: &mut Buffer<Self>, out: &mut Output<Self>) {
        let bit_len = message_bits(self.blocks, buffer.get_pos());
        let mut state = self.state;
        if let Engine::Lanes(stream) = &self.engine {
            // The padded tail joins the stream's pending blocks; the engine drains them.
            let mut tail = [0u8; 128];
            let mut used = 0;
            buffer.len64_padding_le(bit_len, |block| {
                tail[used..used + 64].copy_from_slice(block);
                used += 64;
            });
            state = stream.finish(&tail[..used]);
        } else {
            let engine = &self.engine;
            buffer.len64_padding_le(bit_len, |block| engine.compress_blocks(&mut state, block));
        }
        for (chunk, word) in out.chunks_exact_mut(4).zip(state) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
    }
}

impl Reset for Md5Core {
    fn reset(&mut self) {
        self.state = INITIAL_STATE;
        self.blocks = 0;
        if let Engine::Lanes(stream) = &self.engine {
            stream.reset();
        }
    }
}
