//! `digest_many` through the multi-buffer kernel: differential against `md-5` for batches of
//! random sizes and counts, RFC 1321 vectors in every lane position, guard pages behind every
//! message, for both lane counts. Not on riscv64, whose RV64GC target has no SIMD lowering for
//! the lane kernel: there `tests/tiered.rs` checks that batches stay correct on the
//! single-stream path and `lanes_say_they_need_simd` (below) that compiling says why.
#![cfg_attr(target_arch = "riscv64", allow(dead_code, unused_imports))]

mod common;

use common::GuardedBuffer;
use digest::Digest;
use proptest::prelude::*;
use schedlab_backend::pipeline::PipelineConfig;
use schedlab_digests::{MultiCompressor, lane_config};
use schedlab_kernels::md5::RFC1321_SUITE;
use std::sync::OnceLock;

/// The 4- and 8-lane kernels as the library compiles them (word area in memory), compiled once
/// for the binary.
/// The x4 and x8 kernels and the hybrid x8+s1 (its ninth lane in the general registers).
fn kernels() -> &'static [MultiCompressor; 3] {
    static KERNELS: OnceLock<[MultiCompressor; 3]> = OnceLock::new();
    KERNELS.get_or_init(|| {
        [(1, 0), (2, 0), (2, 1)].map(|(groups, scalar)| {
            let config = lane_config(&PipelineConfig::default());
            MultiCompressor::compile_hybrid(&config, groups, scalar).unwrap_or_else(|e| {
                panic!("md5-mb with {groups} groups and {scalar} scalar lanes: {e}")
            })
        })
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(not(target_arch = "riscv64"))]
proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn batches_match_md5_crate(
        sizes in prop::collection::vec(0usize..=5000, 1..=20),
        seed in any::<u8>(),
        which in 0usize..3,
    ) {
        let data: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(k, &n)| (0..n).map(|i| (i * 31 + k * 7) as u8 ^ seed).collect())
            .collect();
        let refs: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
        let got = kernels()[which].digest_many(&refs);
        prop_assert_eq!(got.len(), refs.len());
        for (m, g) in refs.iter().zip(&got) {
            let want = md5::Md5::digest(m);
            prop_assert_eq!(g.as_slice(), want.as_slice(), "{} bytes", m.len());
        }
    }
}

#[cfg(not(target_arch = "riscv64"))]
#[test]
fn rfc1321_in_every_lane_position() {
    for kernel in kernels() {
        let lanes = kernel.lanes();
        for (message, digest) in RFC1321_SUITE {
            for position in 0..lanes {
                // Same-size neighbours keep every lane busy in the same call.
                let filler: Vec<Vec<u8>> = (0..lanes)
                    .map(|l| vec![b'a' + l as u8; message.len()])
                    .collect();
                let mut batch: Vec<&[u8]> = filler.iter().map(Vec::as_slice).collect();
                batch[position] = message.as_bytes();
                let got = kernel.digest_many(&batch);
                assert_eq!(
                    hex(&got[position]),
                    *digest,
                    "{message:?} in lane {position}/{lanes}"
                );
                for (l, (m, g)) in batch.iter().zip(&got).enumerate() {
                    assert_eq!(g.as_slice(), md5::Md5::digest(m).as_slice(), "lane {l}");
                }
            }
        }
    }
}

#[cfg(not(target_arch = "riscv64"))]
#[test]
fn every_lane_reads_up_to_its_guard_page_and_no_further() {
    let sizes = [
        0usize, 1, 55, 56, 63, 64, 65, 119, 120, 128, 1000, 4096, 4097, 9000,
    ];
    let buffers: Vec<GuardedBuffer> = sizes
        .iter()
        .map(|&n| GuardedBuffer::new(n, |i| (i * 5 + n) as u8))
        .collect();
    let refs: Vec<&[u8]> = buffers.iter().map(GuardedBuffer::bytes).collect();
    for kernel in kernels() {
        for (m, g) in refs.iter().zip(kernel.digest_many(&refs)) {
            assert_eq!(
                g.as_slice(),
                md5::Md5::digest(m).as_slice(),
                "{} bytes",
                m.len()
            );
        }
    }
}

#[cfg(not(target_arch = "riscv64"))]
#[test]
fn hostile_raw_lanes_fail_without_reading_outside_and_keep_completed_blocks() {
    use schedlab_digests::{Lane, OUT_OF_BOUNDS, state_words};
    use schedlab_kernels::md5_mb::{LaneInput, java_compress_lanes};
    for kernel in kernels() {
        let lanes = kernel.lanes();
        for (blocks, short_lane, shortfall, ofs) in [
            (3, 0, 1, 0),
            (2, lanes - 1, 16, 5),
            (1, 1, 0, -16),
            (4, 2, 64, 0),
            (0, 0, 64, 0),
        ] {
            let buffers: Vec<GuardedBuffer> = (0..lanes)
                .map(|l| {
                    let mut n = 64 * blocks as usize + ofs.max(0) as usize;
                    if l == short_lane {
                        n -= shortfall.min(n);
                    }
                    GuardedBuffer::new(n, |i| (i + l) as u8)
                })
                .collect();
            let inputs: Vec<Lane<'_>> = buffers
                .iter()
                .enumerate()
                .map(|(l, b)| Lane {
                    buf: b.bytes(),
                    ofs: if l == short_lane { ofs } else { ofs.max(0) },
                })
                .collect();
            let mut state: Vec<u32> = (0..state_words(lanes) as u32)
                .map(|i| i * 0x01010101)
                .collect();
            let mut want_state = state.clone();
            let model: Vec<LaneInput<'_>> = inputs
                .iter()
                .map(|l| LaneInput {
                    buf: l.buf,
                    len: l.buf.len() as i32,
                    ofs: l.ofs,
                })
                .collect();
            let want = java_compress_lanes(&mut want_state, &model, blocks);
            let got = kernel.compress_lanes(&mut state, &inputs, blocks);
            assert_eq!(
                got, want,
                "blocks {blocks}, lane {short_lane} short by {shortfall}"
            );
            assert_eq!(state, want_state);
            if shortfall > 0 && blocks > 0 {
                assert_eq!(got, OUT_OF_BOUNDS);
            }
        }
    }
}

#[cfg(target_arch = "riscv64")]
#[test]
fn lanes_say_they_need_simd() {
    for groups in [1, 2] {
        match MultiCompressor::compile(&PipelineConfig::default(), groups) {
            Ok(_) => panic!("md5-mb with {groups} groups compiled on RV64GC"),
            Err(err) => assert!(err.to_string().contains("needs SIMD"), "{err}"),
        }
    }
}
