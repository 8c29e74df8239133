//! png: encode an RGBA gradient, decode it back (the decoder is what image viewers run).
fn main() {
    let (w, h) = (97u32, 61u32);
    let pixels: Vec<u8> = (0..w * h * 4).map(|i| (i * 7 % 251) as u8).collect();
    let mut file = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut file, w, h);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        match encoder.write_header().and_then(|mut writer| writer.write_image_data(&pixels)) {
            Ok(()) => {}
            Err(e) => eprintln!("encode: {e}"),
        }
    }
    let decoder = png::Decoder::new(std::io::Cursor::new(&file));
    match decoder.read_info() {
        Ok(mut reader) => {
            let mut out = vec![0; reader.output_buffer_size().unwrap_or(0)];
            match reader.next_frame(&mut out) {
                Ok(info) => println!("{}x{} {:?}, same: {}", info.width, info.height, info.color_type, out == pixels),
                Err(e) => eprintln!("decode: {e}"),
            }
        }
        Err(e) => eprintln!("header: {e}"),
    }
}
