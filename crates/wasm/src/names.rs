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
