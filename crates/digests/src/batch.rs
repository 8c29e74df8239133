//! Hashing many messages at once: the lane scheduler over the multi-buffer kernel.
//!
//! Every lane hashes one message at a time. A lane first compresses its message's whole blocks
//! straight from the caller's buffer, then its padded tail (one or two blocks built in the
//! lane's own scratch buffer). Each kernel call compresses as many blocks as the lane with the
//! fewest left in its current phase has; a lane whose message is done yields its digest and is
//! refilled with the next message. Lanes without a message repeat an active lane's input (the
//! kernel has no idle lanes) and their results are ignored. When the queue is empty and at
//! most [`SCALAR_FINISH_LANES`] lanes are still busy, they finish on the single-stream path,
//! which is then faster than a mostly idle vector kernel.

use crate::multi::{Lane, MultiCompressor, state_index, state_words};
use schedlab_kernels::digest::split_padded;
use schedlab_kernels::md5::INITIAL_STATE;

/// Busy lanes at or below which, with no message left to start, the batch finishes on the
/// single-stream compressor.
pub const SCALAR_FINISH_LANES: usize = 2;

/// Messages at least this long go through the single-stream path (a lane's offsets are Java
/// `int`s).
const MAX_LANE_MESSAGE: usize = 1 << 30;

/// The single-stream compression the batch falls back to: `(state, whole blocks)`.
pub type BlockFn<'f> = &'f dyn Fn(&mut [u32; 4], &[u8]);

/// Where a lane is in its message.
struct LaneJob {
    message: usize,
    /// Offset of the next block in the current phase's buffer.
    ofs: usize,
    /// Blocks left in the current phase.
    blocks_left: usize,
    /// Still in the message's own bytes (else in the padded tail).
    in_body: bool,
}

/// The padded tail of `message` (the bytes after its last whole block, `0x80`, zeros, the bit
/// length): writes 64 or 128 bytes into `tail` and returns how many blocks that is.
pub fn padded_tail(message: &[u8], tail: &mut [u8; 128]) -> usize {
    let (_, padded, len) = split_padded(message, u64::to_le_bytes);
    *tail = padded;
    len / 64
}

/// The MD5 of every message, in order, computed `kernel.lanes()` at a time; `single` finishes
/// what is left when few lanes are busy and hashes overlong messages.
pub fn digest_many_with(
    kernel: &MultiCompressor,
    single: BlockFn<'_>,
    messages: &[&[u8]],
) -> Vec<[u8; 16]> {
    let lanes = kernel.lanes();
    let mut out = vec![[0u8; 16]; messages.len()];
    let mut state = vec![0u32; state_words(lanes)];
    let mut tails = vec![[0u8; 128]; lanes];
    let mut jobs: Vec<Option<LaneJob>> = (0..lanes).map(|_| None).collect();
    let mut queue = 0..messages.len();
    loop {
        // Refill idle lanes.
        for lane in 0..lanes {
            if jobs[lane].is_some() {
                continue;
            }
            let Some(message) = next_lane_message(&mut queue, messages, single, &mut out) else {
                break;
            };
            for (w, word) in INITIAL_STATE.into_iter().enumerate() {
                state[state_index(lane, w)] = word;
            }
            let body_blocks = messages[message].len() / 64;
            let mut job = LaneJob {
                message,
                ofs: 0,
                blocks_left: body_blocks,
                in_body: true,
            };
            if body_blocks == 0 {
                job.blocks_left = padded_tail(messages[message], &mut tails[lane]);
                job.in_body = false;
            }
            jobs[lane] = Some(job);
        }
        let busy: Vec<usize> = (0..lanes).filter(|&l| jobs[l].is_some()).collect();
        let Some(&first) = busy.first() else {
            return out;
        };
        if queue.is_empty() && busy.len() <= SCALAR_FINISH_LANES {
            for &lane in &busy {
                if let Some(job) = jobs[lane].take() {
                    finish_single(job, lane, &state, messages, single, &mut out);
                }
            }
            return out;
        }
        let step = busy
            .iter()
            .filter_map(|&l| jobs[l].as_ref().map(|j| j.blocks_left))
            .min()
            .unwrap_or(1)
            .min(i32::MAX as usize / 64);
        let inputs: Vec<Lane<'_>> = (0..lanes)
            .map(|lane| {
                let busy_lane = if jobs[lane].is_some() { lane } else { first };
                input_of(&jobs, busy_lane, messages, &tails)
            })
            .collect();
        let done = kernel.compress_lanes(&mut state, &inputs, step as i32);
        debug_assert_eq!(done, step as i32, "in-bounds lanes never fail");
        for lane in 0..lanes {
            let Some(job) = jobs[lane].as_mut() else {
                continue;
            };
            job.ofs += 64 * step;
            job.blocks_left -= step;
            if job.blocks_left > 0 {
                continue;
            }
            if job.in_body {
                job.in_body = false;
                job.ofs = 0;
                job.blocks_left = padded_tail(messages[job.message], &mut tails[lane]);
            } else {
                out[job.message] = lane_digest(&state, lane);
                jobs[lane] = None;
            }
        }
    }
}

/// The kernel input of busy lane `lane` (idle lanes repeat a busy lane's).
fn input_of<'a>(
    jobs: &[Option<LaneJob>],
    lane: usize,
    messages: &[&'a [u8]],
    tails: &'a [[u8; 128]],
) -> Lane<'a> {
    match &jobs[lane] {
        Some(job) if job.in_body => Lane {
            buf: messages[job.message],
            ofs: job.ofs as i32,
        },
        Some(job) => Lane {
            buf: &tails[lane],
            ofs: job.ofs as i32,
        },
        None => Lane { buf: &[], ofs: 0 },
    }
}

/// The next message for a lane; overlong ones are hashed on the single-stream path on the way.
fn next_lane_message(
    queue: &mut std::ops::Range<usize>,
    messages: &[&[u8]],
    single: BlockFn<'_>,
    out: &mut [[u8; 16]],
) -> Option<usize> {
    for message in queue.by_ref() {
        if messages[message].len() < MAX_LANE_MESSAGE {
            return Some(message);
        }
        out[message] = digest_single(
            INITIAL_STATE,
            messages[message],
            0,
            single,
            messages[message].len(),
        );
    }
    None
}

/// Finishes a lane's message on the single-stream path from the lane's current state.
fn finish_single(
    job: LaneJob,
    lane: usize,
    state: &[u32],
    messages: &[&[u8]],
    single: BlockFn<'_>,
    out: &mut [[u8; 16]],
) {
    let words: [u32; 4] = std::array::from_fn(|w| state[state_index(lane, w)]);
    let message = messages[job.message];
    let mut tail = [0u8; 128];
    out[job.message] = if job.in_body {
        digest_single(words, message, job.ofs, single, message.len())
    } else {
        // The tail is rebuilt (the lane's scratch is not passed along): same bytes.
        let blocks = padded_tail(message, &mut tail);
        let mut words = words;
        single(&mut words, &tail[job.ofs..64 * blocks]);
        to_bytes(words)
    };
}

/// Hashes `message[from..]` (from a block boundary) and its padded tail on the single-stream
/// path, starting from `state`; `len` is the whole message's length.
fn digest_single(
    mut state: [u32; 4],
    message: &[u8],
    from: usize,
    single: BlockFn<'_>,
    len: usize,
) -> [u8; 16] {
    let whole = len - len % 64;
    if whole > from {
        single(&mut state, &message[from..whole]);
    }
    let mut tail = [0u8; 128];
    let blocks = padded_tail(message, &mut tail);
    single(&mut state, &tail[..64 * blocks]);
    to_bytes(state)
}

fn lane_digest(state: &[u32], lane: usize) -> [u8; 16] {
    to_bytes(std::array::from_fn(|w| state[state_index(lane, w)]))
}

fn to_bytes(words: [u32; 4]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (chunk, word) in out.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_tail_has_the_rfc_layout() {
        let mut tail = [0u8; 128];
        assert_eq!(padded_tail(b"abc", &mut tail), 1);
        assert_eq!(&tail[..4], b"abc\x80");
        assert_eq!(tail[56], 24);
        let long = [7u8; 64 + 56];
        assert_eq!(padded_tail(&long, &mut tail), 2);
        assert_eq!(tail[56], 0x80);
        assert_eq!(&tail[120..128], &(120u64 * 8).to_le_bytes());
    }
}
