//! Random straight-line functions for differential tests of passes (the scheduler's property
//! test, and the input a fuzz target would use): a pass must not change what the function
//! computes.
//!
//! Every generated function has the signature `(i64, i64, i32, i32) -> (i64, i32)` and three
//! blocks:
//!
//! ```text
//! block0(a, b, c, d):    fill a 64-byte read-write buffer (alias region "buf") and a 32-byte
//!                        input buffer (region "ro") from the arguments; jump block1
//! block1(a, b, c, d):    the body under test: random i32/i64 arithmetic, conversions,
//!                        compare/select, divisions by non-zero values, a never-taken trapnz,
//!                        loads and stores at in-bounds, aligned offsets of "buf" (with and
//!                        without alias region, trapping or `notrap`), loads of "ro" (some
//!                        `readonly`), repeated loads of the same address; it folds a random
//!                        subset of its values into the two results
//! block2(x, y):          fold every word of "buf" into x; return x, y
//! ```
//!
//! The buffers are stack slots, so the functions run unchanged in `cranelift-interpreter` and
//! in the JIT. "ro" is written only in block0, before any of its loads can execute; no pass
//! moves code across blocks, so its `readonly` loads read constant memory as far as the body
//! is concerned.

use cranelift_codegen::ir::{
    AbiParam, AliasRegion, AliasRegionData, Function, InstBuilder, MemFlagsData, Signature,
    StackSlot, StackSlotData, StackSlotKind, TrapCode, Type, UserFuncName, Value, condcodes::IntCC,
    types,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use rand::Rng;

/// Bytes of the read-write buffer.
pub const BUF_BYTES: u32 = 64;
/// Bytes of the read-only input buffer.
pub const RO_BYTES: u32 = 32;
/// Name of every generated function.
pub const FUNCTION_NAME: &str = "testgen";

/// Size of the generated bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenConfig {
    /// Fewest random operations in the body.
    pub min_ops: usize,
    /// Most random operations in the body.
    pub max_ops: usize,
}

impl Default for GenConfig {
    fn default() -> Self {
        Self {
            min_ops: 4,
            max_ops: 40,
        }
    }
}

/// Arguments of one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// `a` and `b`.
    pub wide: [i64; 2],
    /// `c` and `d`.
    pub narrow: [i32; 2],
}

/// Random arguments.
pub fn random_inputs(rng: &mut impl Rng) -> Inputs {
    Inputs {
        wide: [rng.random(), rng.random()],
        narrow: [rng.random(), rng.random()],
    }
}

/// The signature `(i64, i64, i32, i32) -> (i64, i32)`.
pub fn signature() -> Signature {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params
        .extend([types::I64, types::I64, types::I32, types::I32].map(AbiParam::new));
    sig.returns
        .extend([types::I64, types::I32].map(AbiParam::new));
    sig
}

struct Mem {
    buf: StackSlot,
    ro: StackSlot,
    buf_region: AliasRegion,
    ro_region: AliasRegion,
}

/// A previous access, for repeated loads of the same address.
#[derive(Clone, Copy)]
struct Access {
    ty: Type,
    addr: Value,
    offset: i32,
    flags: MemFlagsData,
}

/// The memory a load reads.
#[derive(Clone, Copy)]
enum Area {
    /// The read-write buffer (stores go there too).
    Buf,
    /// The read-only area.
    ReadOnly,
}

struct Body<'a, 'b, R: Rng> {
    b: &'a mut FunctionBuilder<'b>,
    rng: &'a mut R,
    mem: &'a Mem,
    wide: Vec<Value>,
    narrow: Vec<Value>,
    buf_base: Value,
    ro_base: Value,
    buf_loads: Vec<Access>,
    ro_loads: Vec<Access>,
}

impl<R: Rng> Body<'_, '_, R> {
    fn pick(&mut self, ty: Type) -> Value {
        let pool = if ty == types::I64 {
            &self.wide
        } else {
            &self.narrow
        };
        // Favour recent values so that dependence chains form.
        let n = pool.len();
        let i = if self.rng.random_bool(0.6) {
            n - 1 - self.rng.random_range(0..n.min(4))
        } else {
            self.rng.random_range(0..n)
        };
        pool[i]
    }

    fn push(&mut self, v: Value) {
        if self.b.func.dfg.value_type(v) == types::I64 {
            self.wide.push(v);
        } else {
            self.narrow.push(v);
        }
    }

    fn int_type(&mut self) -> Type {
        if self.rng.random_bool(0.5) {
            types::I64
        } else {
            types::I32
        }
    }

    fn buf_flags(&mut self) -> MemFlagsData {
        let region = Some(self.mem.buf_region);
        match self.rng.random_range(0..4) {
            0 => MemFlagsData::trusted().with_alias_region(region),
            1 => MemFlagsData::new().with_alias_region(region),
            2 => MemFlagsData::trusted(),
            _ => MemFlagsData::new()
                .with_notrap()
                .with_endianness(cranelift_codegen::ir::Endianness::Little)
                .with_alias_region(region),
        }
    }

    /// A load from `area`: sometimes an earlier load's access again (the same address and
    /// flags), else a fresh one at a random position.
    fn load(&mut self, area: Area) {
        let (earlier, repeat) = match area {
            Area::Buf => (self.buf_loads.len(), 0.3),
            Area::ReadOnly => (self.ro_loads.len(), 0.4),
        };
        let access = if earlier > 0 && self.rng.random_bool(repeat) {
            let i = self.rng.random_range(0..earlier);
            self.loads(area)[i]
        } else {
            self.fresh_access(area)
        };
        self.loads(area).push(access);
        let v = self
            .b
            .ins()
            .load(access.ty, access.flags, access.addr, access.offset);
        self.push(v);
    }

    /// The accesses of earlier loads from `area`.
    fn loads(&mut self, area: Area) -> &mut Vec<Access> {
        match area {
            Area::Buf => &mut self.buf_loads,
            Area::ReadOnly => &mut self.ro_loads,
        }
    }

    /// A new `int_type` access at a random position of `area`, with its flags: the buffer's
    /// random ones, or the read-only area's region, mostly marked `readonly`.
    fn fresh_access(&mut self, area: Area) -> Access {
        let ty = self.int_type();
        let (base, bytes) = match area {
            Area::Buf => (self.buf_base, BUF_BYTES),
            Area::ReadOnly => (self.ro_base, RO_BYTES),
        };
        let (addr, offset) = self.address(base, bytes, ty);
        let flags = match area {
            Area::Buf => self.buf_flags(),
            Area::ReadOnly => {
                let flags = MemFlagsData::trusted().with_alias_region(Some(self.mem.ro_region));
                if self.rng.random_bool(0.7) {
                    flags.with_readonly()
                } else {
                    flags
                }
            }
        };
        Access {
            ty,
            addr,
            offset,
            flags,
        }
    }

    /// An address and offset for an aligned `ty` access at a random in-bounds position.
    fn address(&mut self, base: Value, bytes: u32, ty: Type) -> (Value, i32) {
        let size = ty.bytes();
        let offset = (self.rng.random_range(0..bytes / size) * size) as i32;
        if self.rng.random_bool(0.5) {
            (base, offset)
        } else {
            (self.b.ins().iadd_imm_s(base, i64::from(offset)), 0)
        }
    }

    fn op(&mut self) {
        match self.rng.random_range(0..100) {
            0..=29 => {
                let ty = self.int_type();
                let (x, y) = (self.pick(ty), self.pick(ty));
                let ins = self.b.ins();
                let v = match self.rng.random_range(0..11) {
                    0 => ins.iadd(x, y),
                    1 => ins.isub(x, y),
                    2 => ins.imul(x, y),
                    3 => ins.band(x, y),
                    4 => ins.bor(x, y),
                    5 => ins.bxor(x, y),
                    6 => ins.ishl(x, y),
                    7 => ins.ushr(x, y),
                    8 => ins.sshr(x, y),
                    9 => ins.rotl(x, y),
                    _ => ins.rotr(x, y),
                };
                self.push(v);
            }
            30..=37 => {
                let ty = self.int_type();
                let x = self.pick(ty);
                let k: i64 = self.rng.random_range(-1000..1000);
                let v = match self.rng.random_range(0..3) {
                    0 => self.b.ins().iadd_imm_s(x, k),
                    1 => self.b.ins().bxor_imm_s(x, k),
                    _ => self.b.ins().rotl_imm_s(x, k & 63),
                };
                self.push(v);
            }
            38..=42 => {
                let ty = self.int_type();
                let x = self.pick(ty);
                let v = match self.rng.random_range(0..3) {
                    0 => self.b.ins().bnot(x),
                    1 => self.b.ins().ineg(x),
                    _ => self.b.ins().popcnt(x),
                };
                self.push(v);
            }
            43..=48 => {
                let v = match self.rng.random_range(0..3) {
                    0 => {
                        let x = self.pick(types::I64);
                        self.b.ins().ireduce(types::I32, x)
                    }
                    1 => {
                        let x = self.pick(types::I32);
                        self.b.ins().uextend(types::I64, x)
                    }
                    _ => {
                        let x = self.pick(types::I32);
                        self.b.ins().sextend(types::I64, x)
                    }
                };
                self.push(v);
            }
            49..=52 => {
                let ty = self.int_type();
                let (x, y) = (self.pick(ty), self.pick(ty));
                let cc = [
                    IntCC::Equal,
                    IntCC::SignedLessThan,
                    IntCC::UnsignedGreaterThan,
                ][self.rng.random_range(0..3)];
                let c = self.b.ins().icmp(cc, x, y);
                let v = self.b.ins().select(c, x, y);
                self.push(v);
            }
            53..=55 => {
                // Division by a value forced odd: may trap in principle, never does.
                let ty = self.int_type();
                let (x, y) = (self.pick(ty), self.pick(ty));
                let d = self.b.ins().bor_imm_s(y, 1);
                let v = if self.rng.random_bool(0.5) {
                    self.b.ins().udiv(x, d)
                } else {
                    self.b.ins().urem(x, d)
                };
                self.push(v);
            }
            56..=57 => {
                // A guard that never fires: `x <u 0` is false.
                let ty = self.int_type();
                let x = self.pick(ty);
                let never = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, x, 0);
                self.b.ins().trapnz(never, TrapCode::unwrap_user(1));
            }
            58..=73 => self.load(Area::Buf),
            74..=85 => self.load(Area::ReadOnly),
            _ => {
                let ty = self.int_type();
                let x = self.pick(ty);
                let (addr, offset) = self.address(self.buf_base, BUF_BYTES, ty);
                let flags = self.buf_flags();
                self.b.ins().store(flags, x, addr, offset);
            }
        }
    }

    fn fold(&mut self, ty: Type) -> Value {
        let pool = if ty == types::I64 {
            self.wide.clone()
        } else {
            self.narrow.clone()
        };
        let mut acc = pool[pool.len() - 1];
        for &v in &pool[..pool.len() - 1] {
            if self.rng.random_bool(0.5) {
                let r = self.b.ins().rotl_imm_s(acc, 5);
                acc = self.b.ins().bxor(r, v);
            }
        }
        acc
    }
}

/// Generates one random function (see the module documentation).
pub fn random_function(rng: &mut impl Rng, cfg: &GenConfig) -> Function {
    let mut func =
        Function::with_name_signature(UserFuncName::testcase(FUNCTION_NAME), signature());
    let mem = Mem {
        buf: func.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            BUF_BYTES,
            3,
        )),
        ro: func.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            RO_BYTES,
            3,
        )),
        buf_region: func.dfg.alias_regions.insert(AliasRegionData {
            user_id: 1,
            description: "buf".into(),
        }),
        ro_region: func.dfg.alias_regions.insert(AliasRegionData {
            user_id: 2,
            description: "ro".into(),
        }),
    };
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    let entry = b.create_block();
    let body = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    for ty in [types::I64, types::I64, types::I32, types::I32] {
        b.append_block_param(body, ty);
    }
    b.append_block_param(exit, types::I64);
    b.append_block_param(exit, types::I32);

    // block0: fill both buffers from the arguments.
    b.switch_to_block(entry);
    b.seal_block(entry);
    let params = b.block_params(entry).to_vec();
    let (a, bb) = (params[0], params[1]);
    let init = MemFlagsData::trusted().with_alias_region(Some(mem.buf_region));
    let init_ro = MemFlagsData::trusted().with_alias_region(Some(mem.ro_region));
    let buf = b.ins().stack_addr(types::I64, mem.buf, 0);
    let ro = b.ins().stack_addr(types::I64, mem.ro, 0);
    let mut w = a;
    for i in 0..(BUF_BYTES / 8) as i32 {
        let m = b.ins().imul_imm_s(w, 0x9E37_79B9_7F4A_7C15u64 as i64);
        w = b.ins().bxor(m, bb);
        b.ins().store(init, w, buf, 8 * i);
    }
    for i in 0..(RO_BYTES / 8) as i32 {
        let r = b.ins().rotl_imm_s(w, 13);
        w = b.ins().iadd(r, a);
        b.ins().store(init_ro, w, ro, 8 * i);
    }
    let args: Vec<_> = params.iter().map(|&v| v.into()).collect::<Vec<_>>();
    b.ins().jump(body, &args);

    // block1: the body under test.
    b.switch_to_block(body);
    b.seal_block(body);
    let p = b.block_params(body).to_vec();
    let buf_base = b.ins().stack_addr(types::I64, mem.buf, 0);
    let ro_base = b.ins().stack_addr(types::I64, mem.ro, 0);
    let ops = rng.random_range(cfg.min_ops..=cfg.max_ops.max(cfg.min_ops));
    let (x, y) = {
        let mut body_gen = Body {
            b: &mut b,
            rng,
            mem: &mem,
            wide: vec![p[0], p[1]],
            narrow: vec![p[2], p[3]],
            buf_base,
            ro_base,
            buf_loads: Vec::new(),
            ro_loads: Vec::new(),
        };
        for _ in 0..ops {
            body_gen.op();
        }
        (body_gen.fold(types::I64), body_gen.fold(types::I32))
    };
    b.ins().jump(exit, &[x.into(), y.into()]);

    // block2: fold the buffer into the result.
    b.switch_to_block(exit);
    b.seal_block(exit);
    let ep = b.block_params(exit).to_vec();
    let base = b.ins().stack_addr(types::I64, mem.buf, 0);
    let mut acc = ep[0];
    for i in 0..(BUF_BYTES / 8) as i32 {
        let word = b.ins().load(types::I64, init, base, 8 * i);
        let r = b.ins().rotl_imm_s(acc, 7);
        acc = b.ins().iadd(r, word);
    }
    b.ins().return_(&[acc, ep[1]]);
    b.finalize(frontend_config());
    func
}

/// The frontend configuration used for generated functions (64-bit, SystemV).
pub fn frontend_config() -> cranelift_codegen::isa::TargetFrontendConfig {
    cranelift_codegen::isa::TargetFrontendConfig {
        default_call_conv: CallConv::SystemV,
        pointer_width: target_lexicon::PointerWidth::U64,
        page_size_align_log2: 12,
    }
}
