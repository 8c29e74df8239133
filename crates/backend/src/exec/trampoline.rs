//! The call trampoline: `fn(buf: ptr)` loads the callee's arguments from 16-byte slots of
//! `buf`, calls it, and stores its results into the slots after the arguments. Every access
//! is little-endian, so the buffer has the same bytes on every target.

use super::SLOT_BYTES;
use cranelift_codegen::ir::{
    AbiParam, Endianness, ExtFuncData, ExternalName, Function, InstBuilder, MemFlagsData,
    Signature, UserExternalName, UserFuncName, types,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

/// Builds the trampoline for a callee with `signature`, reached through `callee` (an external
/// name the linker resolves).
pub(crate) fn build_trampoline(
    signature: &Signature,
    callee: UserExternalName,
    call_conv: CallConv,
    frontend: TargetFrontendConfig,
) -> Function {
    let mut tramp_sig = Signature::new(call_conv);
    tramp_sig.params.push(AbiParam::new(types::I64));
    let mut func = Function::with_name_signature(UserFuncName::testcase("trampoline"), tramp_sig);
    let callee_sig = func.import_signature(signature.clone());
    let callee_name = func.declare_imported_user_function(callee);
    let callee_ref = func.import_function(ExtFuncData {
        name: ExternalName::user(callee_name),
        signature: callee_sig,
        colocated: false,
        patchable: false,
    });
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    let block = b.create_block();
    b.append_block_params_for_function_params(block);
    b.switch_to_block(block);
    b.seal_block(block);
    let buf = b.block_params(block)[0];
    let flags = MemFlagsData::trusted().with_endianness(Endianness::Little);
    let offset = |i: usize| i32::try_from(i * SLOT_BYTES).unwrap_or(i32::MAX);
    let args: Vec<_> = signature
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| b.ins().load(p.value_type, flags, buf, offset(i)))
        .collect();
    let call = b.ins().call(callee_ref, &args);
    let results = b.inst_results(call).to_vec();
    let first = signature.params.len();
    for (j, r) in results.into_iter().enumerate() {
        b.ins().store(flags, r, buf, offset(first + j));
    }
    b.ins().return_(&[]);
    b.finalize(frontend);
    func
}
