//! Java-semantics building blocks shared by the kernels: checked array reads and writes, and
//! status codes.
//!
//! A checked access (read or write) has one fixed shape, which the bounds-check-elimination pass
//! recognises:
//!
//! ```text
//! block_n:
//!     idx  = iadd_imm base, k          ; Java `int` arithmetic, wraps at 32 bits (omitted when k = 0)
//!     wide = sextend.i64 idx           ; an int index becomes a 64-bit offset by sign extension
//!     ok   = icmp ult wide, bound      ; bound = max(length - (access_bytes - 1), 0), as i64
//!     brif ok, block_n+1, oob(...)     ; a failed check leaves through the shared exit
//! block_n+1:
//!     addr = iadd array_base, wide (scaled for element arrays)
//!     x    = load ...                  ; (or `store`) never executed unless the check passed
//! ```
//!
//! A negative index sign-extends to a huge unsigned value, so one unsigned comparison covers
//! both `index < 0` and `index + access_bytes > length`, exactly like
//! `java.util.Objects.checkIndex(index, length - (access_bytes - 1))`.

use cranelift_codegen::ir::{
    AliasRegion, AliasRegionData, Block, BlockArg, InstBuilder, MemFlagsData, Type, Value,
    condcodes::IntCC, types,
};
use cranelift_frontend::FunctionBuilder;

/// Status a kernel returns when a bounds check fails (Java's `ArrayIndexOutOfBoundsException`).
///
/// No kernel returns `i32::MIN` otherwise: a normal return is an offset or a count that a
/// successful bounds check has already limited to `0..=i32::MAX`, or an argument that is
/// strictly greater than another `i32`.
pub const OUT_OF_BOUNDS: i32 = i32::MIN;

/// Status a kernel returns when a Java wrapper's argument check fails (the
/// `IllegalArgumentException` of e.g. `BigInteger.implMulAddCheck`), distinct from
/// [`OUT_OF_BOUNDS`]. Like it, no kernel returns this value otherwise.
pub const ILLEGAL_ARGUMENT: i32 = i32::MIN + 1;

/// Creates (or reuses) a named alias region so that alias analysis can tell memory apart.
pub fn alias_region(
    builder: &mut FunctionBuilder,
    user_id: u32,
    name: &'static str,
) -> AliasRegion {
    builder.func.dfg.alias_regions.insert(AliasRegionData {
        user_id,
        description: name.into(),
    })
}

/// A Java array as compiled code sees it: a base pointer, the bound its checks compare against,
/// and the memory flags of its element reads.
#[derive(Clone, Copy, Debug)]
pub struct CheckedArray {
    /// Address of element 0 (`i64`).
    pub base: Value,
    /// `max(length - (access_bytes - 1), 0)` as `i64`: a read at index `i` is in bounds iff
    /// `sextend(i) <u bound`.
    pub bound: Value,
    /// Log2 of the distance in bytes between consecutive indices (0 for a `byte[]` view).
    pub index_shift: u8,
    /// Flags of the reads: `notrap` because the check guards them, `readonly` when the kernel
    /// never writes the array, and the array's alias region.
    pub flags: MemFlagsData,
}

impl CheckedArray {
    /// Describes an array of `length` (an `i32` Java length) whose reads are `access_bytes` wide
    /// and whose consecutive indices are `1 << index_shift` bytes apart.
    ///
    /// Emits the bound computation at the builder's current position (once per function).
    pub fn new(
        builder: &mut FunctionBuilder,
        base: Value,
        length: Value,
        access_bytes: i64,
        index_shift: u8,
        flags: MemFlagsData,
    ) -> Self {
        let wide_len = builder.ins().sextend(types::I64, length);
        let last_start = builder.ins().iadd_imm_s(wide_len, -(access_bytes - 1));
        let zero = builder.ins().iconst(types::I64, 0);
        let bound = builder.ins().smax(last_start, zero);
        Self {
            base,
            bound,
            index_shift,
            flags,
        }
    }

    /// Emits a bounds-checked read of `ty` at index `index + k` (32-bit wrapping add, as Java).
    ///
    /// Ends the current block with the check; on failure control goes to `oob` with `oob_args`.
    /// The read is placed at the top of a fresh block that the builder is switched to.
    pub fn checked_load(
        &self,
        builder: &mut FunctionBuilder,
        ty: Type,
        index: Value,
        k: i64,
        oob: Block,
        oob_args: &[Value],
    ) -> Value {
        let wide = self.check(builder, index, k, oob, oob_args);
        let addr = self.address(builder, wide);
        builder.ins().load(ty, self.flags, addr, 0)
    }

    /// Emits a bounds-checked store of `value` at index `index + k` (32-bit wrapping add, as
    /// Java's `iastore`), with the same check shape as [`CheckedArray::checked_load`].
    ///
    /// The array's `flags` must not be `readonly` (an array the kernel writes).
    pub fn checked_store(
        &self,
        builder: &mut FunctionBuilder,
        value: Value,
        index: Value,
        k: i64,
        oob: Block,
        oob_args: &[Value],
    ) {
        let wide = self.check(builder, index, k, oob, oob_args);
        let addr = self.address(builder, wide);
        builder.ins().store(self.flags, value, addr, 0);
    }

    /// Emits the bounds check of index `index + k` and switches to the block it guards.
    /// Returns the sign-extended index for address computation.
    pub fn check(
        &self,
        builder: &mut FunctionBuilder,
        index: Value,
        k: i64,
        oob: Block,
        oob_args: &[Value],
    ) -> Value {
        let idx = if k == 0 {
            index
        } else {
            builder.ins().iadd_imm_s(index, k)
        };
        let wide = builder.ins().sextend(types::I64, idx);
        let in_bounds = builder
            .ins()
            .icmp(IntCC::UnsignedLessThan, wide, self.bound);
        let guarded = builder.create_block();
        let oob_args: Vec<BlockArg> = oob_args.iter().map(|&v| BlockArg::Value(v)).collect();
        builder.ins().brif(in_bounds, guarded, &[], oob, &oob_args);
        builder.switch_to_block(guarded);
        builder.seal_block(guarded);
        wide
    }

    /// The address of the element at the (already checked, sign-extended) index `wide`.
    pub fn address(&self, builder: &mut FunctionBuilder, wide: Value) -> Value {
        let offset = if self.index_shift == 0 {
            wide
        } else {
            builder.ins().ishl_imm_u(wide, i64::from(self.index_shift))
        };
        builder.ins().iadd(self.base, offset)
    }
}
