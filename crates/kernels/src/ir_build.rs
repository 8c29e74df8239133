//! IR-building helpers every kernel shares: the front-end configuration, jumps with block
//! arguments, and the digest kernels' `implCompressMultiBlock` loop skeleton (feed-forward,
//! state stores, the out-of-bounds exit).

use crate::java::OUT_OF_BOUNDS;
use cranelift_codegen::ir::{BlockArg, InstBuilder, MemFlagsData, Value, types};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::FunctionBuilder;
use target_lexicon::PointerWidth;

/// Bytes of one message block of the digest kernels (MD5 and SHA-256 alike).
const DIGEST_BLOCK_BYTES: i64 = 64;

/// The blocks of a `DigestBase.implCompressMultiBlock` loop that [`close_multi_block_loop`]
/// completes.
pub struct LoopBlocks {
    /// The loop test; its parameters are the offset, then the chaining words.
    pub header: cranelift_codegen::ir::Block,
    /// After the last block; parameters as the header's.
    pub exit: cranelift_codegen::ir::Block,
    /// A failed bounds check; its parameters are the chaining words of the completed blocks.
    pub oob: cranelift_codegen::ir::Block,
}

/// Ends the body of a block loop shared by the digest kernels: the feed-forward (each word of
/// `chain_in` plus the compression's `chain_out`) and the jump back with the offset advanced by
/// one 64-byte block; the exit stores the state and returns the offset; the out-of-bounds exit stores
/// the completed blocks' state and returns [`OUT_OF_BOUNDS`].
pub fn close_multi_block_loop(
    b: &mut FunctionBuilder,
    blocks: LoopBlocks,
    block_ofs: Value,
    chain_in: &[Value],
    chain_out: &[Value],
    state: Value,
    state_flags: MemFlagsData,
) {
    let LoopBlocks { header, exit, oob } = blocks;
    let next_ofs = b.ins().iadd_imm_s(block_ofs, DIGEST_BLOCK_BYTES);
    let mut next = vec![next_ofs];
    for (old, new) in chain_in.iter().zip(chain_out) {
        next.push(b.ins().iadd(*old, *new));
    }
    jump(b, header, &next);
    b.seal_block(header);

    // exit: store the state, return the offset after the last block.
    b.switch_to_block(exit);
    b.seal_block(exit);
    let ep = b.block_params(exit).to_vec();
    store_state(b, state, state_flags, &ep[1..]);
    b.ins().return_(&[ep[0]]);

    // out of bounds: commit the completed blocks, then report the exception.
    b.switch_to_block(oob);
    b.seal_block(oob);
    let op = b.block_params(oob).to_vec();
    store_state(b, state, state_flags, &op);
    let status = b.ins().iconst(types::I32, i64::from(OUT_OF_BOUNDS));
    b.ins().return_(&[status]);
}

/// The first `N` parameters of `block`.
pub fn param_array<const N: usize>(
    b: &FunctionBuilder,
    block: cranelift_codegen::ir::Block,
) -> [Value; N] {
    let params = b.block_params(block);
    std::array::from_fn(|i| params[i])
}

/// A `jump` to `to` passing `args`.
pub fn jump(b: &mut FunctionBuilder, to: cranelift_codegen::ir::Block, args: &[Value]) {
    let args: Vec<BlockArg> = args.iter().map(|&v| BlockArg::Value(v)).collect();
    b.ins().jump(to, &args);
}

/// Stores `words` as consecutive 32-bit words at `state`.
fn store_state(b: &mut FunctionBuilder, state: Value, flags: MemFlagsData, words: &[Value]) {
    for (i, &w) in (0i32..).zip(words) {
        b.ins().store(flags, w, state, 4 * i);
    }
}

/// The frontend configuration of a 64-bit SystemV target; the kernels use no stack maps, so
/// nothing here depends on the eventual target.
pub fn frontend_config() -> TargetFrontendConfig {
    TargetFrontendConfig {
        default_call_conv: CallConv::SystemV,
        pointer_width: PointerWidth::U64,
        page_size_align_log2: 12,
    }
}
