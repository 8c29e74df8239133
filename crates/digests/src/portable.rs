//! The portable tier: MD5's compression in plain Rust, used until the JIT's code is ready and
//! for good when it cannot be compiled; and [`compress_lanes`], several streams' blocks
//! stepped together while the multi-buffer kernel compiles.

use crate::multi::Lane;
use schedlab_kernels::md5::{SHIFTS, SINES, message_words};
use schedlab_kernels::md5_mb::state_index;

/// Streams [`compress_lanes`] steps together: one `[u32; 4]` per MD5 word, which the
/// compiler keeps in one 128-bit register per word on every target schedlab has.
pub const PORTABLE_LANES: usize = 4;

/// Compresses every whole 64-byte block of `data` (a multiple of 64 bytes) into `state`.
pub fn compress_blocks(state: &mut [u32; 4], data: &[u8]) {
    debug_assert_eq!(data.len() % 64, 0);
    for block in data.chunks_exact(64) {
        compress_block(state, block);
    }
}

/// One block, with the round function fixed per loop of 16 steps so that the compiler can
/// unroll each round completely (the message order and rotations become constants).
fn compress_block(state: &mut [u32; 4], block: &[u8]) {
    let x = message_words(block);
    let [mut a, mut b, mut c, mut d] = *state;
    macro_rules! round {
        ($round:expr, $word:expr, $f:expr) => {
            for i in 0..16 {
                let f: fn(u32, u32, u32) -> u32 = $f;
                let k = 16 * $round + i;
                let sum = a
                    .wrapping_add(f(b, c, d))
                    .wrapping_add(x[$word(i)])
                    .wrapping_add(SINES[k]);
                let new_a = sum
                    .rotate_left(SHIFTS[$round][i % 4] as u32)
                    .wrapping_add(b);
                (a, b, c, d) = (d, new_a, b, c);
            }
        };
    }
    round!(0, |i: usize| i, |b, c, d| d ^ (b & (c ^ d)));
    round!(1, |i: usize| (5 * i + 1) % 16, |b, c, d| c ^ (d & (b ^ c)));
    round!(2, |i: usize| (3 * i + 5) % 16, |b, c, d| b ^ c ^ d);
    round!(3, |i: usize| (7 * i) % 16, |b, c, d| c ^ (b | !d));
    for (s, v) in state.iter_mut().zip([a, b, c, d]) {
        *s = s.wrapping_add(v);
    }
}

/// Compresses `blocks` blocks of each of `lanes` (at most [`PORTABLE_LANES`]; lane `l` reads
/// `buf[ofs..]`, its chaining value at [`state_index`]`(l, w)` of `state`) in portable code,
/// the lanes' steps interleaved so that the core overlaps the independent chains.
pub fn compress_lanes(state: &mut [u32], lanes: &[Lane<'_>], blocks: usize) {
    debug_assert!(lanes.len() <= PORTABLE_LANES);
    let mut chaining = [[0u32; 4]; PORTABLE_LANES];
    for (l, words) in chaining.iter_mut().enumerate().take(lanes.len()) {
        *words = std::array::from_fn(|w| state[state_index(l, w)]);
    }
    for block in 0..blocks {
        // Unused lanes repeat lane 0's block; their results are not written back.
        let words: [[u32; 16]; PORTABLE_LANES] = std::array::from_fn(|l| {
            let lane = lanes.get(l).unwrap_or(&lanes[0]);
            let start = lane.ofs as usize + block * 64;
            message_words(&lane.buf[start..start + 64])
        });
        compress_interleaved(&mut chaining, &words);
    }
    for (l, words) in chaining.iter().enumerate().take(lanes.len()) {
        for (w, &word) in words.iter().enumerate() {
            state[state_index(l, w)] = word;
        }
    }
}

/// Four streams' values of one MD5 word.
type Word = [u32; PORTABLE_LANES];

/// `f` on every lane (straight-line code the compiler turns into vector operations).
#[inline(always)]
fn lanewise(a: Word, b: Word, c: Word, f: impl Fn(u32, u32, u32) -> u32) -> Word {
    std::array::from_fn(|l| f(a[l], b[l], c[l]))
}

/// One block per lane: the single-stream steps, each on `PORTABLE_LANES` independent values,
/// every step written out so that message index, constant and rotation are constants.
#[inline(never)]
fn compress_interleaved(
    chaining: &mut [[u32; 4]; PORTABLE_LANES],
    x: &[[u32; 16]; PORTABLE_LANES],
) {
    let word = |w: usize| -> Word { std::array::from_fn(|l| chaining[l][w]) };
    let (mut a, mut b, mut c, mut d) = (word(0), word(1), word(2), word(3));
    macro_rules! step {
        ($round:expr, $i:expr, $word:expr, $f:expr) => {{
            let k = 16 * $round + $i;
            let m: usize = $word($i);
            let shift = SHIFTS[$round][$i % 4] as u32;
            let mixed = lanewise(b, c, d, $f);
            let new_a: Word = std::array::from_fn(|l| {
                a[l].wrapping_add(mixed[l])
                    .wrapping_add(x[l][m])
                    .wrapping_add(SINES[k])
                    .rotate_left(shift)
                    .wrapping_add(b[l])
            });
            (a, b, c, d) = (d, new_a, b, c);
        }};
    }
    macro_rules! round {
        ($round:expr, $word:expr, $f:expr) => {
            step!($round, 0, $word, $f);
            step!($round, 1, $word, $f);
            step!($round, 2, $word, $f);
            step!($round, 3, $word, $f);
            step!($round, 4, $word, $f);
            step!($round, 5, $word, $f);
            step!($round, 6, $word, $f);
            step!($round, 7, $word, $f);
            step!($round, 8, $word, $f);
            step!($round, 9, $word, $f);
            step!($round, 10, $word, $f);
            step!($round, 11, $word, $f);
            step!($round, 12, $word, $f);
            step!($round, 13, $word, $f);
            step!($round, 14, $word, $f);
            step!($round, 15, $word, $f);
        };
    }
    round!(0, |i: usize| i, |b, c, d| d ^ (b & (c ^ d)));
    round!(1, |i: usize| (5 * i + 1) % 16, |b, c, d| c ^ (d & (b ^ c)));
    round!(2, |i: usize| (3 * i + 5) % 16, |b, c, d| b ^ c ^ d);
    round!(3, |i: usize| (7 * i) % 16, |b, c, d| c ^ (b | !d));
    for (l, words) in chaining.iter_mut().enumerate() {
        for (w, v) in words.iter_mut().zip([a[l], b[l], c[l], d[l]]) {
            *w = w.wrapping_add(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_kernels::md5::{INITIAL_STATE, MESSAGE_ORDER, reference_compress};

    #[test]
    fn message_order_formulas_match_the_table() {
        let formulas: [fn(usize) -> usize; 4] = [
            |i| i,
            |i| (5 * i + 1) % 16,
            |i| (3 * i + 5) % 16,
            |i| (7 * i) % 16,
        ];
        for (table, formula) in MESSAGE_ORDER.iter().zip(formulas) {
            let computed: Vec<usize> = (0..16).map(formula).collect();
            assert_eq!(table.as_slice(), computed.as_slice());
        }
    }

    #[test]
    fn matches_the_reference_compression() {
        let data: Vec<u8> = (0..640u32).map(|i| (i * 31 + 7) as u8).collect();
        let mut want = INITIAL_STATE;
        for block in data.chunks_exact(64) {
            reference_compress(&mut want, block.try_into().expect("64 bytes"));
        }
        let mut got = INITIAL_STATE;
        compress_blocks(&mut got, &data);
        assert_eq!(got, want);
    }

    #[test]
    fn lanes_match_each_stream_alone() {
        let data: Vec<u8> = (0..64 * 40u32).map(|i| (i * 131 + 17) as u8).collect();
        for used in 1..=PORTABLE_LANES {
            let lanes: Vec<Lane<'_>> = (0..used)
                .map(|l| Lane {
                    buf: &data[..64 * (10 + 7 * l)],
                    ofs: (64 * (3 + 2 * l)) as i32,
                })
                .collect();
            let mut state = vec![0u32; 16];
            for l in 0..used {
                for w in 0..4 {
                    state[state_index(l, w)] = INITIAL_STATE[w] ^ (l as u32 * 0x0101_0101);
                }
            }
            let before = state.clone();
            compress_lanes(&mut state, &lanes, 7);
            for (l, lane) in lanes.iter().enumerate() {
                let mut want: [u32; 4] = std::array::from_fn(|w| before[state_index(l, w)]);
                let start = lane.ofs as usize;
                compress_blocks(&mut want, &lane.buf[start..start + 7 * 64]);
                let got: [u32; 4] = std::array::from_fn(|w| state[state_index(l, w)]);
                assert_eq!(got, want, "lane {l} of {used}");
            }
            for (i, (&after, &was)) in state.iter().zip(&before).enumerate() {
                let lane = (0..used).any(|l| (0..4).any(|w| state_index(l, w) == i));
                assert!(
                    lane || after == was,
                    "word {i} outside the lanes was written"
                );
            }
        }
    }
}
