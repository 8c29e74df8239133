//! What one call of a kernel looks like to an executor, on any target: scalar arguments,
//! Java arrays (each placed flush against a `PROT_NONE` guard page, so a read one element
//! past either end traps), and what the call left behind.
//!
//! Array contents are kept in one canonical byte order (little-endian elements of
//! [`ArrayArg::elem_bytes`] bytes); an executor stores them in the target's byte order before
//! the call and reads them back in canonical order after it. A kernel's reference model and
//! its cases therefore never depend on the target.

use cranelift_codegen::data_value::DataValue;

/// Where an executor places an array relative to its guard pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Placement {
    /// The array ends right before a guard page: a read at index `length` traps.
    End,
    /// The array begins right after a guard page: a read at index -1 traps.
    Start,
}

impl Placement {
    /// Both placements, `End` first.
    pub const ALL: [Placement; 2] = [Placement::End, Placement::Start];

    /// The placement's name in labels (`end`, `start`).
    pub fn name(self) -> &'static str {
        match self {
            Placement::End => "end",
            Placement::Start => "start",
        }
    }
}

/// An array argument: the callee receives a pointer to its first element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayArg {
    /// Bytes per element: 1, 2, 4 or 8 (decides how the bytes are swapped on a big-endian
    /// target).
    pub elem_bytes: usize,
    /// The elements, little-endian.
    pub bytes: Vec<u8>,
    /// Places in `bytes` where the executor writes another array's address (a descriptor
    /// table such as multi-buffer MD5's lanes). Empty for plain Java arrays.
    pub pointers: Vec<PointerSlot>,
}

/// An address stored inside an array: at byte `offset`, a pointer-sized word (8 bytes on
/// every target schedlab has, in the target's byte order) holding the address of the array
/// numbered `array` in [`Case::all_arrays`] order. The executor overwrites those bytes before
/// the call; after it they read back as zero in [`Effect::arrays`] (addresses differ per run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerSlot {
    /// Byte offset in the containing array (a multiple of 8).
    pub offset: usize,
    /// The addressed array: an index into [`Case::all_arrays`].
    pub array: usize,
}

impl ArrayArg {
    /// A `byte[]`.
    pub fn bytes(bytes: Vec<u8>) -> Self {
        Self {
            elem_bytes: 1,
            bytes,
            pointers: Vec::new(),
        }
    }

    /// An `int[]` (or any array of 32-bit words).
    pub fn ints(words: &[i32]) -> Self {
        Self {
            elem_bytes: 4,
            bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
            pointers: Vec::new(),
        }
    }

    /// An array of unsigned 32-bit words.
    pub fn words(words: &[u32]) -> Self {
        Self {
            elem_bytes: 4,
            bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
            pointers: Vec::new(),
        }
    }

    /// The elements as 32-bit words (for `elem_bytes == 4`; trailing bytes are ignored).
    pub fn to_words(bytes: &[u8]) -> Vec<u32> {
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    /// The bytes in a target's order: each element reversed when `big_endian`.
    pub fn target_bytes(&self, big_endian: bool) -> Vec<u8> {
        swap_elements(&self.bytes, self.elem_bytes, big_endian)
    }

    /// The canonical (little-endian) bytes of `target_bytes` read back from a target.
    pub fn canonical_bytes(&self, target_bytes: &[u8], big_endian: bool) -> Vec<u8> {
        swap_elements(target_bytes, self.elem_bytes, big_endian)
    }
}

fn swap_elements(bytes: &[u8], elem_bytes: usize, swap: bool) -> Vec<u8> {
    if !swap || elem_bytes <= 1 {
        return bytes.to_vec();
    }
    let mut out = bytes.to_vec();
    for chunk in out.chunks_exact_mut(elem_bytes) {
        chunk.reverse();
    }
    out
}

/// One argument of a call.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A scalar of the parameter's type.
    Value(DataValue),
    /// A pointer (of the target's pointer width) to a fresh copy of this array.
    Array(ArrayArg),
    /// The same pointer as the earlier [`Arg::Array`] at this argument index (Java's `in ==
    /// out` aliasing).
    SameArray(usize),
}

/// One call of a kernel: a label for reports and the arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// What the case is (`rfc1321 "abc"`, `random 3 len=70`, `hostile ofs=-1`).
    pub label: String,
    /// One per parameter of the kernel's function.
    pub args: Vec<Arg>,
    /// Arrays passed to no parameter, reachable only through [`PointerSlot`]s of other
    /// arrays (each one also against a guard page).
    pub memory: Vec<ArrayArg>,
}

impl Case {
    /// A case whose arrays are all arguments.
    pub fn new(label: impl Into<String>, args: Vec<Arg>) -> Self {
        Self {
            label: label.into(),
            args,
            memory: Vec::new(),
        }
    }

    /// The array arguments in argument order, then [`Case::memory`]: the order of
    /// [`Effect::arrays`] and of [`PointerSlot::array`].
    pub fn all_arrays(&self) -> impl Iterator<Item = &ArrayArg> {
        all_arrays(&self.args, &self.memory)
    }

    /// Argument `index` as a Java `int`.
    pub fn int(&self, index: usize) -> Result<i32, String> {
        match self.args.get(index) {
            Some(Arg::Value(DataValue::I32(v))) => Ok(*v),
            other => Err(format!("argument {index} is {other:?}, not an i32")),
        }
    }

    /// Argument `index` as an array (following [`Arg::SameArray`]).
    pub fn array(&self, index: usize) -> Result<&ArrayArg, String> {
        match self.args.get(index) {
            Some(Arg::Array(array)) => Ok(array),
            Some(Arg::SameArray(earlier)) if *earlier < index => self.array(*earlier),
            other => Err(format!("argument {index} is {other:?}, not an array")),
        }
    }
}

/// The [`Arg::Array`]s of `args` in order, then `memory`: the order of [`Effect::arrays`] and
/// of [`PointerSlot::array`] for a call with these arguments.
pub fn all_arrays<'a>(
    args: &'a [Arg],
    memory: &'a [ArrayArg],
) -> impl Iterator<Item = &'a ArrayArg> {
    args.iter()
        .filter_map(|a| match a {
            Arg::Array(array) => Some(array),
            _ => None,
        })
        .chain(memory)
}

/// What a call that returned left behind.
#[derive(Clone, Debug, PartialEq)]
pub struct Effect {
    /// The returned values.
    pub returns: Vec<DataValue>,
    /// Every array's canonical bytes after the call, in [`Case::all_arrays`] order (pointer
    /// slots read as zero).
    pub arrays: Vec<Vec<u8>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_through_a_big_endian_target() {
        let array = ArrayArg::words(&[0x0102_0304, 0xa0b0_c0d0]);
        let on_target = array.target_bytes(true);
        assert_eq!(on_target, [1, 2, 3, 4, 0xa0, 0xb0, 0xc0, 0xd0]);
        let back = array.canonical_bytes(&on_target, true);
        assert_eq!(ArrayArg::to_words(&back), [0x0102_0304, 0xa0b0_c0d0]);
    }

    #[test]
    fn bytes_are_never_swapped() {
        let array = ArrayArg::bytes(vec![1, 2, 3]);
        assert_eq!(array.target_bytes(true), [1, 2, 3]);
    }

    #[test]
    fn all_arrays_lists_array_arguments_then_memory() {
        let mut case = Case::new(
            "x",
            vec![
                Arg::Array(ArrayArg::ints(&[1])),
                Arg::Value(DataValue::I32(3)),
                Arg::SameArray(0),
                Arg::Array(ArrayArg::bytes(vec![9])),
            ],
        );
        assert_eq!(case.all_arrays().count(), 2);
        case.memory.push(ArrayArg::bytes(vec![1]));
        let sizes: Vec<usize> = case.all_arrays().map(|a| a.bytes.len()).collect();
        assert_eq!(sizes, [4, 1, 1]);
    }
}
