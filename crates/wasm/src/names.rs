//! Function names from a module's `name` custom section.

use std::collections::HashMap;
use wasmparser::{KnownCustom, Name, Parser, Payload};

/// The function names a module's name section gives, by function index. A module without a
/// name section has none; a malformed name section is ignored (it is only a debugging aid, and
/// Wasmtime ignores it too), but a module that cannot be parsed at all is an error.
pub fn function_names(bytes: &[u8]) -> Result<HashMap<u32, String>, String> {
    let mut names = HashMap::new();
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| e.to_string())?;
        let Payload::CustomSection(reader) = payload else {
            continue;
        };
        let KnownCustom::Name(section) = reader.as_known() else {
            continue;
        };
        for subsection in section {
            let Ok(Name::Function(map)) = subsection else {
                continue;
            };
            for naming in map.into_iter().flatten() {
                names.insert(naming.index, naming.name.to_string());
            }
        }
    }
    Ok(names)
}

/// The smallest declared minimum size in bytes of the memories a module defines or imports
/// (0 without a memory): a lower bound on every memory's current length, which Wasmtime
/// relies on when it checks an access as `index > bound - (offset + size)`.
pub fn smallest_memory_minimum(bytes: &[u8]) -> Result<u64, String> {
    let mut smallest: Option<u64> = None;
    let mut note = |m: wasmparser::MemoryType| {
        let page = 1u64 << m.page_size_log2.unwrap_or(16);
        let size = m.initial.saturating_mul(page);
        smallest = Some(smallest.map_or(size, |s| s.min(size)));
    };
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(|e| e.to_string())? {
            Payload::MemorySection(reader) => {
                for memory in reader {
                    note(memory.map_err(|e| e.to_string())?);
                }
            }
            Payload::ImportSection(reader) => {
                for import in reader.into_imports() {
                    if let wasmparser::TypeRef::Memory(m) = import.map_err(|e| e.to_string())?.ty {
                        note(m);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(smallest.unwrap_or(0))
}
