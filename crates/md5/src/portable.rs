//! The portable tier: MD5's compression in plain Rust, used until the JIT's code is ready and
//! for good when it cannot be compiled.

use schedlab_kernels::md5::{SHIFTS, SINES, message_words};

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
}
