//! What the forwarding pass knows about one memory access: where it points (a base and a
//! constant offset), how many bytes it touches, and whether two accesses may overlap.
//!
//! The aliasing rules are deliberately conservative; two accesses are *disjoint* only when
//!
//! 1. they use the same base (the same SSA value, or the same stack slot) at constant byte
//!    ranges that do not overlap;
//! 2. they address two different stack slots;
//! 3. one addresses a stack slot whose address never escapes (see [`SlotEscapes`]) and the
//!    other goes through an SSA pointer: a pointer the function did not derive from the slot
//!    cannot point into the slot's frame memory, which no one else knows about;
//! 4. both carry an alias region and the regions differ: Cranelift documents that "two memory
//!    operations in different alias regions are known not to alias" (`ir::memflags`), so the
//!    region is a fact the IR states, not a guess from Java types.
//!
//! Everything else may alias: two different SSA bases, even of different Java types, unless
//! rule 4 applies.

use cranelift_codegen::ir::{
    AliasRegion, Endianness, Function, Inst, InstructionData, MemFlagsData, Opcode, StackSlot,
    Type, Value, ValueDef, types,
};
use rustc_hash::FxHashSet;

/// What an address is relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    /// An SSA pointer value (an argument, a loaded pointer, computed arithmetic).
    Pointer(Value),
    /// A stack slot of this function (through `stack_addr`).
    Slot(StackSlot),
}

/// One load or store the pass understands: `base + offset`, `bytes` wide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// What the address is relative to.
    pub base: Base,
    /// Constant byte offset from the base (the `stack_addr` offset folded in).
    pub offset: i64,
    /// Bytes touched.
    pub bytes: i64,
    /// The type read or written (for `load`/`store`; narrow forms carry their memory width).
    pub ty: Type,
    /// Explicit endianness of the access (`None`: native).
    pub endianness: Option<Endianness>,
    /// The alias region the flags name, if any.
    pub region: Option<AliasRegion>,
}

/// How an instruction touches memory, as far as the pass is concerned.
#[derive(Clone, Copy, Debug)]
pub enum Effect {
    /// No memory effect and no call: ignored.
    None,
    /// A plain `load` (a forwarding candidate) with its result.
    Load(Access, Value),
    /// A read the pass does not forward (`uload8`, `sload16`, …): it changes nothing.
    OtherRead(Access),
    /// A plain `store` of `value` (a forwarding source).
    Store(Access, Value),
    /// A narrow store (`istore8`, …): kills what it overlaps, forwards nothing.
    OtherStore(Access),
    /// A call, an atomic, a fence or anything else with unknown memory effects: kills all.
    Unknown,
}

/// The memory width of a narrow load or store opcode, if `opcode` is one.
fn narrow_bytes(opcode: Opcode) -> Option<i64> {
    Some(match opcode {
        Opcode::Uload8 | Opcode::Sload8 | Opcode::Istore8 => 1,
        Opcode::Uload16 | Opcode::Sload16 | Opcode::Istore16 => 2,
        Opcode::Uload32 | Opcode::Sload32 | Opcode::Istore32 => 4,
        _ => return None,
    })
}

/// The base and offset of address `addr` plus the instruction's constant `offset`: a
/// `stack_addr ss, k` result becomes `(Slot(ss), k + offset)`.
pub fn locate(func: &Function, addr: Value, offset: i64) -> (Base, i64) {
    let addr = func.dfg.resolve_aliases(addr);
    if let ValueDef::Result(def, 0) = func.dfg.value_def(addr)
        && let InstructionData::StackAddr {
            stack_slot,
            offset: slot_offset,
            ..
        } = func.dfg.insts[def]
    {
        return (
            Base::Slot(stack_slot),
            i64::from(i32::from(slot_offset)) + offset,
        );
    }
    (Base::Pointer(addr), offset)
}

/// Classifies `inst`'s memory effect.
pub fn effect(func: &Function, inst: Inst) -> Effect {
    let data = &func.dfg.insts[inst];
    let opcode = data.opcode();
    let access = |addr: Value, offset: i64, ty: Type| {
        let flags = data.memflags_data(&func.dfg).unwrap_or(MemFlagsData::new());
        let (base, offset) = locate(func, addr, offset);
        Access {
            base,
            offset,
            bytes: i64::from(ty.bytes()),
            ty,
            endianness: flags.explicit_endianness(),
            region: flags.alias_region(),
        }
    };
    match *data {
        InstructionData::Load {
            opcode: Opcode::Load,
            arg,
            offset,
            ..
        } => {
            let result = func.dfg.first_result(inst);
            let ty = func.dfg.value_type(result);
            Effect::Load(access(arg, i64::from(i32::from(offset)), ty), result)
        }
        InstructionData::Load { arg, offset, .. } => match narrow_bytes(opcode) {
            Some(bytes) => {
                let ty = types::Type::int_with_byte_size(bytes as u16).unwrap_or(types::I8);
                Effect::OtherRead(access(arg, i64::from(i32::from(offset)), ty))
            }
            // Another load-format instruction (e.g. a vector load-extend): reads only.
            None => Effect::OtherRead(Access {
                bytes: i64::MAX / 4,
                ..access(arg, 0, types::I8)
            }),
        },
        InstructionData::Store {
            opcode: Opcode::Store,
            args: [value, addr],
            offset,
            ..
        } => {
            let ty = func.dfg.value_type(value);
            Effect::Store(access(addr, i64::from(i32::from(offset)), ty), value)
        }
        InstructionData::Store {
            args: [_, addr],
            offset,
            ..
        } => match narrow_bytes(opcode) {
            Some(bytes) => {
                let ty = types::Type::int_with_byte_size(bytes as u16).unwrap_or(types::I8);
                Effect::OtherStore(access(addr, i64::from(i32::from(offset)), ty))
            }
            None => Effect::Unknown,
        },
        _ if opcode.is_call()
            || opcode.can_store()
            || opcode.can_load()
            || opcode.other_side_effects() =>
        {
            Effect::Unknown
        }
        _ => Effect::None,
    }
}

/// The stack slots whose address leaves the function's view: used anywhere but as the
/// address operand of a load or store (stored as a value, passed to a call or a block,
/// used in arithmetic, compared, returned).
#[derive(Clone, Debug, Default)]
pub struct SlotEscapes {
    escaping: FxHashSet<StackSlot>,
}

impl SlotEscapes {
    /// Scans every instruction of `func`.
    pub fn of(func: &Function) -> Self {
        // Only a `stack_addr` result can escape, and it needs a slot.
        if func.sized_stack_slots.is_empty() {
            return Self::default();
        }
        let slot_of = |v: Value| match func.dfg.value_def(func.dfg.resolve_aliases(v)) {
            ValueDef::Result(def, _) => match func.dfg.insts[def] {
                InstructionData::StackAddr { stack_slot, .. } => Some(stack_slot),
                _ => None,
            },
            _ => None,
        };
        let mut escaping = FxHashSet::default();
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                let data = &func.dfg.insts[inst];
                let address_only = match *data {
                    InstructionData::Load { arg, .. } => Some(arg),
                    InstructionData::Store {
                        args: [_, addr], ..
                    } => Some(addr),
                    _ => None,
                };
                for (i, v) in func.dfg.inst_values(inst).enumerate() {
                    // The address operand of a load or store is the one harmless use; a
                    // store's stored value (operand 0) is not.
                    let is_address = match *data {
                        InstructionData::Load { .. } => i == 0,
                        InstructionData::Store { .. } => i == 1,
                        _ => false,
                    };
                    if is_address && Some(v) == address_only {
                        continue;
                    }
                    if let Some(slot) = slot_of(v) {
                        escaping.insert(slot);
                    }
                }
            }
        }
        Self { escaping }
    }

    /// Whether `slot`'s address escapes.
    pub fn escapes(&self, slot: StackSlot) -> bool {
        self.escaping.contains(&slot)
    }
}

/// Whether `a` and `b` may touch a common byte (see the module documentation for the rules).
pub fn may_alias(a: &Access, b: &Access, escapes: &SlotEscapes) -> bool {
    if let (Some(ra), Some(rb)) = (a.region, b.region)
        && ra != rb
    {
        return false;
    }
    match (a.base, b.base) {
        (x, y) if x == y => overlaps(a, b),
        (Base::Slot(_), Base::Slot(_)) => false,
        (Base::Slot(slot), Base::Pointer(_)) | (Base::Pointer(_), Base::Slot(slot)) => {
            escapes.escapes(slot)
        }
        (Base::Pointer(_), Base::Pointer(_)) => true,
    }
}

/// Whether the byte ranges of two accesses to the same base overlap.
fn overlaps(a: &Access, b: &Access) -> bool {
    let a_end = a.offset.saturating_add(a.bytes);
    let b_end = b.offset.saturating_add(b.bytes);
    a.offset < b_end && b.offset < a_end
}
