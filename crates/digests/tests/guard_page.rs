//! The raw compression entry point under hostile arguments, with the buffer's last byte
//! against a `PROT_NONE` page: any read past the end crashes the test process.

use schedlab_backend::pipeline::PipelineConfig;
use schedlab_digests::{Compressor, SlowPath};
use schedlab_kernels::md5::{INITIAL_STATE, java_compress_multi_block};

mod common;
use common::GuardedBuffer;

fn check(compressor: &Compressor, len: usize, ofs: i32, limit: i32) {
    let buf = GuardedBuffer::new(len, |i| (i * 7 + 3) as u8);
    let mut expected_state = INITIAL_STATE;
    let java_len = i32::try_from(len).expect("test buffers are small");
    let expected =
        java_compress_multi_block(&mut expected_state, buf.bytes(), java_len, ofs, limit);
    let mut state = INITIAL_STATE;
    let got = compressor.compress_multi_block(&mut state, buf.bytes(), ofs, limit);
    let slow = compressor.slow_path();
    assert_eq!(
        got, expected,
        "{slow:?}: return value for len={len} ofs={ofs} limit={limit}"
    );
    assert_eq!(
        state, expected_state,
        "{slow:?}: state for len={len} ofs={ofs} limit={limit}"
    );
}

/// Hostile and boundary arguments: (len, ofs, limit).
pub fn hostile_cases() -> Vec<(usize, i32, i32)> {
    let max = i32::MAX;
    vec![
        (128, 0, 64),         // exact fit, two blocks
        (64, 0, 0),           // exact fit, one block
        (127, 0, 64),         // ofs + 64 = len + 1 on the second block
        (63, 0, 0),           // one byte short
        (130, 2, 66),         // unaligned, exact fit
        (129, 2, 66),         // unaligned, one byte short
        (256, -4, 60),        // negative ofs
        (256, -64, 128),      // negative ofs, a whole block before the buffer
        (256, i32::MIN, 0),   // most negative ofs
        (256, 128, 64),       // limit < ofs: no block, returns ofs
        (256, -5, -100),      // limit < ofs, both negative
        (64, 0, max),         // limit = i32::MAX: second block is out of bounds
        (256, max - 10, max), // ofs + 63 overflows a Java int
        (256, max - 63, max), // ofs + 63 = i32::MAX
        (256, max - 64, max), // the last block that does not overflow
        (4096, 4032, 4032),   // last block of a page-sized buffer
        (4096, 4033, 4033),   // one past it
        (0, 0, 0),            // empty buffer
        (3, 0, 0),            // shorter than one word
    ]
}

/// The library's compressor (slow path compiled lazily) and one with both loops compiled.
fn both_slow_paths() -> [Compressor; 2] {
    [SlowPath::Lazy, SlowPath::Eager].map(|slow| {
        Compressor::compile_timed(&PipelineConfig::default(), slow)
            .expect("the host compiles the default configuration")
            .0
    })
}

#[test]
fn hostile_arguments_give_java_results_and_never_read_outside() {
    for compressor in &both_slow_paths() {
        for (len, ofs, limit) in hostile_cases() {
            check(compressor, len, ofs, limit);
        }
    }
}

#[test]
fn every_short_length_and_offset() {
    for compressor in &both_slow_paths() {
        for len in 0..=200 {
            for ofs in -3..=140 {
                check(compressor, len, ofs, ofs + 64);
            }
        }
    }
}

#[test]
fn the_slow_path_is_compiled_on_the_first_call_that_needs_it() {
    let [lazy, eager] = both_slow_paths();
    assert!(eager.slow_path_compiled());
    assert!(!lazy.slow_path_compiled());
    // In-bounds input never leaves the fast loop.
    let mut state = INITIAL_STATE;
    lazy.compress_blocks(&mut state, &[0x5a; 64 * 33]);
    assert!(!lazy.slow_path_compiled());
    // Two blocks, the second one byte short: the first is compressed, then the check fails.
    check(&lazy, 127, 0, 64);
    assert!(lazy.slow_path_compiled());
    check(&lazy, 130, 2, 66);
}

#[test]
fn the_lazy_kernel_compiles_only_the_fast_loop() {
    let [lazy, eager] = both_slow_paths();
    let (fast, both) = (
        lazy.jit().compiled().code.len(),
        eager.jit().compiled().code.len(),
    );
    // The checked loop is as large as the fast one; without it the code is about half.
    assert!(
        fast * 10 < both * 7,
        "lazy {fast} bytes, eager {both} bytes"
    );
}
