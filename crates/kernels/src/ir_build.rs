//! IR-building helpers every kernel shares: the front-end configuration, signatures, jumps with block
//! arguments, a checked loop's blocks and loop test ([`LoopBlocks`]), and the digest kernels'
//! `implCompressMultiBlock` loop skeleton ([`DigestLoop`]: its blocks, loop test, feed-forward,
//! state stores and out-of-bounds exit).

use crate::java::OUT_OF_BOUNDS;
use cranelift_codegen::ir::{
    AbiParam, AliasRegion, Block, BlockArg, Endianness, Function, InstBuilder, MemFlagsData,
    Signature, Type, UserFuncName, Value, condcodes::IntCC, types,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use target_lexicon::PointerWidth;

/// Bytes of one message block of the digest kernels (MD5 and SHA-256 alike).
const DIGEST_BLOCK_BYTES: i64 = 64;

/// The blocks of a digest kernel's `DigestBase.implCompressMultiBlock` loop (MD5 and SHA-256
/// alike). The header's parameters are the offset, then the chaining words; the body's the
/// chaining words, then the offset; the exit's as the header's; the out-of-bounds exit's the
/// chaining words of the completed blocks.
pub struct DigestLoop {
    /// The entry, loop test, compression body, exit and out-of-bounds exit.
    pub blocks: LoopBlocks,
}

impl DigestLoop {
    /// Creates the loop's blocks and their parameters for `words` chaining words.
    pub fn create(b: &mut FunctionBuilder, words: usize) -> Self {
        let blocks = LoopBlocks::create(b);
        b.append_block_param(blocks.header, types::I32); // ofs
        b.append_block_param(blocks.exit, types::I32);
        for block in [blocks.header, blocks.body, blocks.exit, blocks.oob] {
            for _ in 0..words {
                b.append_block_param(block, types::I32);
            }
        }
        b.append_block_param(blocks.body, types::I32);
        Self { blocks }
    }

    /// Loads `words` chaining words from `state` (in the current block, the entry).
    pub fn load_state(
        b: &mut FunctionBuilder,
        state: Value,
        flags: MemFlagsData,
        words: i32,
    ) -> Vec<Value> {
        (0..words)
            .map(|i| b.ins().load(types::I32, flags, state, 4 * i))
            .collect()
    }

    /// Ends the entry with the jump to the loop test, passing `ofs` and the chaining words.
    pub fn enter(&self, b: &mut FunctionBuilder, ofs: Value, chain: &[Value]) {
        let mut args = vec![ofs];
        args.extend(chain);
        jump(b, self.blocks.header, &args);
    }

    /// The loop test `for (; ofs <= limit; ofs += 64)`, then switches to the body; returns the
    /// body's `N` chaining words and its block offset.
    pub fn test_and_enter_body<const N: usize>(
        &self,
        b: &mut FunctionBuilder,
        limit: Value,
    ) -> ([Value; N], Value) {
        b.switch_to_block(self.blocks.header);
        let hp = b.block_params(self.blocks.header).to_vec();
        let more = b.ins().icmp(IntCC::SignedLessThanOrEqual, hp[0], limit);
        let body_args: Vec<BlockArg> = hp[1..]
            .iter()
            .chain(&hp[..1])
            .map(|&v| BlockArg::Value(v))
            .collect();
        let exit_args: Vec<BlockArg> = hp.iter().map(|&v| BlockArg::Value(v)).collect();
        b.ins().brif(
            more,
            self.blocks.body,
            &body_args,
            self.blocks.exit,
            &exit_args,
        );

        b.switch_to_block(self.blocks.body);
        b.seal_block(self.blocks.body);
        let bp = b.block_params(self.blocks.body);
        (std::array::from_fn(|i| bp[i]), bp[N])
    }

    /// Ends the body: the feed-forward (each word of `chain_in` plus the compression's
    /// `chain_out`) and the jump back with the offset advanced by one 64-byte block; the exit
    /// stores the state and returns the offset; the out-of-bounds exit stores the completed
    /// blocks' state and returns [`OUT_OF_BOUNDS`].
    pub fn close(
        &self,
        b: &mut FunctionBuilder,
        block_ofs: Value,
        chain_in: &[Value],
        chain_out: &[Value],
        state: Value,
        state_flags: MemFlagsData,
    ) {
        let next_ofs = b.ins().iadd_imm_s(block_ofs, DIGEST_BLOCK_BYTES);
        let mut next = vec![next_ofs];
        for (old, new) in chain_in.iter().zip(chain_out) {
            next.push(b.ins().iadd(*old, *new));
        }
        jump(b, self.blocks.header, &next);
        b.seal_block(self.blocks.header);

        // exit: store the state, return the offset after the last block.
        b.switch_to_block(self.blocks.exit);
        b.seal_block(self.blocks.exit);
        let ep = b.block_params(self.blocks.exit).to_vec();
        store_state(b, state, state_flags, &ep[1..]);
        b.ins().return_(&[ep[0]]);

        // out of bounds: commit the completed blocks, then report the exception.
        b.switch_to_block(self.blocks.oob);
        b.seal_block(self.blocks.oob);
        let op = b.block_params(self.blocks.oob).to_vec();
        store_state(b, state, state_flags, &op);
        let status = b.ins().iconst(types::I32, i64::from(OUT_OF_BOUNDS));
        b.ins().return_(&[status]);
    }
}

/// The blocks of a kernel's checked loop: the entry, the loop test, the body, the exit and the
/// out-of-bounds exit, created in that order.
#[derive(Clone, Copy)]
pub struct LoopBlocks {
    /// Takes the function's parameters.
    pub entry: Block,
    /// The loop test.
    pub header: Block,
    /// One iteration.
    pub body: Block,
    /// After the last iteration.
    pub exit: Block,
    /// A failed bounds check.
    pub oob: Block,
}

impl LoopBlocks {
    /// Creates the five blocks; the entry takes the function's parameters.
    pub fn create(b: &mut FunctionBuilder) -> Self {
        let blocks = Self {
            entry: b.create_block(),
            header: b.create_block(),
            body: b.create_block(),
            exit: b.create_block(),
            oob: b.create_block(),
        };
        b.append_block_params_for_function_params(blocks.entry);
        blocks
    }

    /// The loop test: while the header's parameter `counter` compares `cond` to `limit`, on to
    /// the body, else to the exit, each passed all the header's parameters; then switches to
    /// the body and returns its parameters.
    pub fn test_and_enter_body(
        &self,
        b: &mut FunctionBuilder,
        cond: IntCC,
        counter: usize,
        limit: Value,
    ) -> Vec<Value> {
        b.switch_to_block(self.header);
        let hp = b.block_params(self.header).to_vec();
        let more = b.ins().icmp(cond, hp[counter], limit);
        let args: Vec<BlockArg> = hp.iter().map(|&v| BlockArg::Value(v)).collect();
        b.ins().brif(more, self.body, &args, self.exit, &args);

        b.switch_to_block(self.body);
        b.seal_block(self.body);
        b.block_params(self.body).to_vec()
    }
}

/// The flags of a digest kernel's message reads: a Java `byte[]` read as little-endian words,
/// checked before each access (so it never traps), in `region`.
pub fn message_flags(region: AliasRegion) -> MemFlagsData {
    MemFlagsData::new()
        .with_endianness(Endianness::Little)
        .with_notrap()
        .with_readonly()
        .with_alias_region(Some(region))
}

/// The first `N` parameters of `block`.
pub fn param_array<const N: usize>(b: &FunctionBuilder, block: Block) -> [Value; N] {
    let params = b.block_params(block);
    std::array::from_fn(|i| params[i])
}

/// A `jump` to `to` passing `args`.
pub fn jump(b: &mut FunctionBuilder, to: Block, args: &[Value]) {
    let args: Vec<BlockArg> = args.iter().map(|&v| BlockArg::Value(v)).collect();
    b.ins().jump(to, &args);
}

/// Stores `words` as consecutive 32-bit words at `state`.
fn store_state(b: &mut FunctionBuilder, state: Value, flags: MemFlagsData, words: &[Value]) {
    for (i, &w) in (0i32..).zip(words) {
        b.ins().store(flags, w, state, 4 * i);
    }
}

/// The function `name` with signature `signature`: `body` emits its blocks with a fresh
/// builder, which is then finalised.
pub fn build_function(
    name: &str,
    signature: Signature,
    body: impl FnOnce(&mut FunctionBuilder),
) -> Function {
    let mut func = Function::with_name_signature(UserFuncName::testcase(name), signature);
    let mut fn_ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fn_ctx);
    body(&mut b);
    b.finalize(frontend_config());
    func
}

/// The SystemV signature taking `params` and returning `returns`.
pub fn system_v_signature(params: &[Type], returns: &[Type]) -> Signature {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.extend(params.iter().copied().map(AbiParam::new));
    sig.returns
        .extend(returns.iter().copied().map(AbiParam::new));
    sig
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
