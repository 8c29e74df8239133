//! image: decode stdin (or a generated image) in whatever format it is — PNG, JPEG, GIF, BMP,
//! TIFF, WebP, ICO — convert it to grey and re-encode it as BMP.
use std::io::{Cursor, Read};

fn main() {
    let mut data = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut data);
    if data.is_empty() {
        let img = image::RgbImage::from_fn(64, 48, |x, y| image::Rgb([x as u8 * 4, y as u8 * 5, (x ^ y) as u8]));
        let mut bmp = Cursor::new(Vec::new());
        if let Err(e) = img.write_to(&mut bmp, image::ImageFormat::Bmp) {
            eprintln!("encode: {e}");
        }
        data = bmp.into_inner();
    }
    match image::load_from_memory(&data) {
        Ok(img) => {
            let grey = img.grayscale();
            let mut out = Cursor::new(Vec::new());
            match grey.write_to(&mut out, image::ImageFormat::Bmp) {
                Ok(()) => println!("{}x{} -> {} bytes", img.width(), img.height(), out.get_ref().len()),
                Err(e) => eprintln!("encode: {e}"),
            }
        }
        Err(e) => eprintln!("decode: {e}"),
    }
}
