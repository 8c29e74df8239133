//! wasmparser: validate a WebAssembly module from stdin (or a tiny built-in one), counting its
//! functions and operators.
use std::io::Read;

fn main() {
    let mut data = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut data);
    if data.is_empty() {
        // (module (func (param i32) (result i32) local.get 0 i32.const 1 i32.add))
        data = vec![
            0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 10, 9, 1, 7, 0,
            32, 0, 65, 1, 106, 11,
        ];
    }
    let mut validator = wasmparser::Validator::new();
    match validator.validate_all(&data) {
        Ok(_) => println!("valid"),
        Err(e) => eprintln!("invalid: {e}"),
    }
    let mut operators = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(&data) {
        if let Ok(wasmparser::Payload::CodeSectionEntry(body)) = payload
            && let Ok(reader) = body.get_operators_reader()
        {
            operators += reader.into_iter().count();
        }
    }
    println!("{operators} operators");
}
