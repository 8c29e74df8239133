//! brotli: compress stdin (or built-in text) at several qualities and decompress it back.
use std::io::{Read, Write};

fn main() {
    let mut data = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut data);
    if data.is_empty() {
        data = b"the quick brown fox jumps over the lazy dog; ".repeat(500);
    }
    for quality in [1u32, 5, 9, 11] {
        let mut packed = Vec::new();
        {
            let mut writer = brotli::CompressorWriter::new(&mut packed, 4096, quality, 22);
            if let Err(e) = writer.write_all(&data) {
                eprintln!("compress: {e}");
            }
        }
        let mut back = Vec::new();
        let ok = brotli::Decompressor::new(packed.as_slice(), 4096).read_to_end(&mut back).is_ok();
        println!("quality {quality}: {} bytes, round trip {}", packed.len(), ok && back == data);
    }
}
