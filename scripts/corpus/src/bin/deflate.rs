//! miniz_oxide: deflate stdin (or built-in data) at every level, inflate it back, compare.
use std::io::Read;

fn main() {
    let mut data = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut data);
    if data.is_empty() {
        data = (0..65536u32).map(|i| (i.wrapping_mul(2654435761) >> 27) as u8).collect();
    }
    for level in 0..=10u8 {
        let packed = miniz_oxide::deflate::compress_to_vec_zlib(&data, level);
        let same = miniz_oxide::inflate::decompress_to_vec_zlib(&packed).is_ok_and(|d| d == data);
        println!("level {level}: {} bytes, round trip {same}", packed.len());
    }
}
