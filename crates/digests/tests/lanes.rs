//! The streaming lane engine against the `md-5` crate: interleaved streams with random splits of
//! `update`, many threads, hostile sizes fed a byte at a time, clones, resets and drops mid-stream,
//! a lone stream on the single-stream path and a JIT that cannot compile. Inputs stay small:
//! these tests also run under qemu (scripts/test-hosts).

use digest::Digest;
use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng, rngs::StdRng};
use schedlab_digests::{Backend, LaneEngine, LaneStats, Md5, Md5Builder, TieredEngine};
use std::sync::OnceLock;

/// The default tiered engine with both kernels compiled (once per test binary).
fn ready_tiered() -> &'static TieredEngine {
    static READY: OnceLock<&'static TieredEngine> = OnceLock::new();
    READY.get_or_init(|| {
        let tiered = TieredEngine::default_instance();
        let (single, batch) = tiered.wait_for_jit();
        assert_eq!(single, Backend::Jit);
        if cfg!(target_arch = "riscv64") {
            assert!(matches!(batch, Backend::Failed(_)), "{batch:?}");
        } else {
            assert_eq!(batch, Backend::Jit);
        }
        tiered
    })
}

/// Whether this host runs the lane kernel (RV64GC has no SIMD lowering for it).
fn host_has_lanes() -> bool {
    !cfg!(target_arch = "riscv64")
}

fn message(len: usize, seed: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(131) ^ seed.wrapping_mul(7919) ^ (i >> 8)) as u8)
        .collect()
}

/// Splits `len` bytes into pieces of random sizes up to `most`.
fn pieces(rng: &mut StdRng, len: usize, most: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < len {
        let n = rng.random_range(1..=most).min(len - at);
        out.push(at..at + n);
        at += n;
    }
    out
}

/// Hashes `messages` as concurrent streams of `engine`: their pieces interleaved in a random
/// order, each stream finalized right after its last piece.
fn hash_interleaved(
    engine: &LaneEngine,
    messages: &[Vec<u8>],
    seed: u64,
    most: usize,
) -> Vec<[u8; 16]> {
    let mut rng = StdRng::seed_from_u64(seed);
    let plans: Vec<Vec<std::ops::Range<usize>>> = messages
        .iter()
        .map(|m| pieces(&mut rng, m.len(), most))
        .collect();
    let mut order: Vec<usize> = plans
        .iter()
        .enumerate()
        .flat_map(|(s, plan)| std::iter::repeat_n(s, plan.len()))
        .collect();
    order.shuffle(&mut rng);
    let mut hashers: Vec<Option<Md5>> = messages.iter().map(|_| Some(engine.hasher())).collect();
    let mut next = vec![0usize; messages.len()];
    let mut out = vec![[0u8; 16]; messages.len()];
    for s in order {
        let range = plans[s][next[s]].clone();
        next[s] += 1;
        if let Some(h) = hashers[s].as_mut() {
            h.update(&messages[s][range]);
        }
        if next[s] == plans[s].len()
            && let Some(h) = hashers[s].take()
        {
            out[s] = h.finalize().into();
        }
    }
    // Empty messages have no pieces.
    for (s, h) in hashers.iter_mut().enumerate() {
        if let Some(h) = h.take() {
            out[s] = h.finalize().into();
        }
    }
    out
}

fn check_all(messages: &[Vec<u8>], got: &[[u8; 16]], what: &str) {
    for (s, (m, g)) in messages.iter().zip(got).enumerate() {
        let want: [u8; 16] = md5::Md5::digest(m).into();
        assert_eq!(*g, want, "{what}: stream {s} of {} bytes", m.len());
    }
}

/// Feeds each of `messages` to a hasher of its own from `engine` in `piece`-byte `update`s, one
/// piece at a time to the streams `order` names (every stream once per turn when `None`),
/// finalizes them in order and checks every digest against `md-5` (`what` names the case);
/// returns the engine's counters.
fn hash_in_pieces(
    engine: &LaneEngine,
    messages: &[Vec<u8>],
    piece: usize,
    order: Option<&[usize]>,
    what: &str,
) -> LaneStats {
    let turns = messages.iter().map(|m| m.len().div_ceil(piece)).max();
    let in_turns: Vec<usize> = (0..turns.unwrap_or(0))
        .flat_map(|_| 0..messages.len())
        .collect();
    let mut hashers: Vec<(Md5, usize)> = messages.iter().map(|_| (engine.hasher(), 0)).collect();
    for &s in order.unwrap_or(&in_turns) {
        let (h, at) = &mut hashers[s];
        let end = (*at + piece).min(messages[s].len());
        h.update(&messages[s][*at..end]);
        *at = end;
    }
    let got: Vec<[u8; 16]> = hashers
        .into_iter()
        .map(|(h, _)| h.finalize().into())
        .collect();
    check_all(messages, &got, what);
    engine.stats()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn interleaved_streams_match_md5_crate(
        sizes in prop::collection::vec(0usize..=1500, 1..=12),
        hold_back in 1usize..=12,
        most in 1usize..=700,
        seed in any::<u64>(),
    ) {
        let engine = LaneEngine::with_tiered(ready_tiered(), hold_back);
        let messages: Vec<Vec<u8>> =
            sizes.iter().enumerate().map(|(k, &n)| message(n, k + seed as usize)).collect();
        let got = hash_interleaved(&engine, &messages, seed, most);
        for (s, (m, g)) in messages.iter().zip(&got).enumerate() {
            let want: [u8; 16] = md5::Md5::digest(m).into();
            prop_assert_eq!(*g, want, "stream {} of {} bytes", s, m.len());
        }
        prop_assert_eq!(engine.streams(), 0);
    }
}

#[test]
fn interleaved_streams_share_lanes() {
    let engine = LaneEngine::with_tiered(ready_tiered(), 16);
    let messages: Vec<Vec<u8>> = (0..8).map(|s| message(64 * 40 + s, s)).collect();
    let got = hash_interleaved(&engine, &messages, 7, 512);
    check_all(&messages, &got, "8 streams");
    let stats = engine.stats();
    let total: u64 = messages.iter().map(|m| m.len() as u64 / 64 + 1).sum();
    assert_eq!(stats.lane_blocks + stats.single_blocks, total, "{stats:?}");
    if host_has_lanes() {
        assert!(
            stats.lane_blocks > total / 2,
            "most blocks in lanes: {stats:?}"
        );
    } else {
        assert_eq!(stats.lane_rounds, 0, "{stats:?}");
    }
}

#[test]
fn more_streams_than_lanes_fill_every_lane() {
    let tiered = ready_tiered();
    let Some(kernel) = tiered.batch_compressor() else {
        assert!(!host_has_lanes());
        return;
    };
    let lanes = kernel.lanes();
    let hold_back = 16;
    let engine = LaneEngine::with_tiered(tiered, hold_back);
    let messages: Vec<Vec<u8>> = (0..lanes + 2)
        .map(|s| message(64 * hold_back * 20, s))
        .collect();
    let stats = hash_in_pieces(
        &engine,
        &messages,
        64 * hold_back,
        None,
        "lanes + 2 streams",
    );
    assert!(
        stats.lane_blocks * 10 >= stats.lane_slots * 9,
        "at least 90% of {lanes} lanes filled: {stats:?}"
    );
}

#[test]
fn streams_taking_turns_run_long_full_rounds() {
    // Three streams more than lanes, each fed a hold-back's worth at a time in turn: a round
    // leaves three streams out, and when one of them next needs room the others must have
    // refilled, or the round after it finds too few partners.
    let hold_back = 16;
    let Some((engine, lanes)) = fixed_lane_engine(hold_back) else {
        return;
    };
    let piece = 64 * hold_back;
    let messages: Vec<Vec<u8>> = (0..lanes + 3)
        .map(|s| message(piece * 24 + 5 * s, s))
        .collect();
    let stats = hash_in_pieces(&engine, &messages, piece, None, "streams taking turns");
    // Partners chosen among equals by id left the next round the three skipped streams (about
    // three quarters of the slots filled); a quarter of the hold-back per round to spare them
    // filled the slots in rounds of a quarter as many blocks.
    assert!(
        stats.lane_blocks * 20 >= stats.lane_slots * 19
            && stats.round_blocks * 2 >= stats.lane_rounds * hold_back as u64,
        "at least 95% of the lane slots filled, at least half a hold-back per round: {stats:?}"
    );
}

#[test]
fn streams_holding_more_than_the_hold_back_finish_in_full_rounds() {
    // Each stream's whole message in one `update` (eight hold-backs, which it may hold), then
    // every stream finalized in turn: all the blocks are compressed by the finalizing streams,
    // with three streams more than lanes.
    let hold_back = 16;
    let Some((engine, lanes)) = fixed_lane_engine(hold_back) else {
        return;
    };
    let messages: Vec<Vec<u8>> = (0..lanes + 3)
        .map(|s| message(64 * 8 * hold_back + 9 * s, s))
        .collect();
    let whole = messages.iter().map(Vec::len).max().unwrap_or(1);
    let stats = hash_in_pieces(
        &engine,
        &messages,
        whole,
        None,
        "whole messages, then finalized in turn",
    );
    // Rounds as long as their members allow drain a lane's worth of streams at once and
    // leave the other three to rounds of a few busy lanes (about 60% of the slots filled).
    assert!(
        stats.lane_blocks * 10 >= stats.lane_slots * 9,
        "at least 90% of the lane slots filled: {stats:?}"
    );
}

#[test]
fn streams_fed_in_no_set_order_hold_on_for_partners() {
    // Three streams more than lanes, each fed a hold-back's worth at a time, in a shuffled
    // order: a stream fed twice before the others had their turn may hold on (the slack)
    // rather than run a round with the few that have blocks pending.
    let hold_back = 16;
    let Some((engine, lanes)) = fixed_lane_engine(hold_back) else {
        return;
    };
    let piece = 64 * hold_back;
    let pieces = 24;
    let messages: Vec<Vec<u8>> = (0..lanes + 3).map(|s| message(piece * pieces, s)).collect();
    let mut order: Vec<usize> = (0..pieces).flat_map(|_| 0..messages.len()).collect();
    order.shuffle(&mut StdRng::seed_from_u64(35));
    let stats = hash_in_pieces(
        &engine,
        &messages,
        piece,
        Some(&order),
        "streams fed in a shuffled order",
    );
    // Rounds run as soon as a stream needs room fill about half the slots (51% on x86_64's
    // nine lanes, 48% on eight lanes); holding on, 75% and 67%.
    assert!(
        stats.lane_blocks * 5 >= stats.lane_slots * 3,
        "at least 60% of the lane slots filled: {stats:?}"
    );
}

#[test]
fn many_streams_take_the_wide_kernel_while_they_fill_it() {
    let tiered = ready_tiered();
    let Some(wide) = tiered.wait_for_wide_jit() else {
        return;
    };
    assert_eq!(wide, Backend::Jit);
    let hold_back = 16;
    let engine = LaneEngine::with_tiered(tiered, hold_back);
    // 16 streams: more than the wide kernel's lanes, fewer than two narrow rounds' worth.
    let messages: Vec<Vec<u8>> = (0..16)
        .map(|s| message(64 * hold_back * 12 + 7 * s, s))
        .collect();
    let stats = hash_in_pieces(
        &engine,
        &messages,
        64 * hold_back,
        None,
        "16 streams, wide and narrow rounds",
    );
    assert!(
        stats.wide_rounds > 0 && stats.wide_rounds < stats.lane_rounds,
        "wide rounds while 13 streams are pending, narrow ones to drain: {stats:?}"
    );
    assert!(
        stats.lane_blocks * 10 >= stats.lane_slots * 9,
        "at least 90% of the lane slots filled: {stats:?}"
    );
}

#[test]
fn a_lone_stream_uses_the_single_stream_kernel() {
    let engine = LaneEngine::with_tiered(ready_tiered(), 4);
    let data = message(10_000, 3);
    let mut h = engine.hasher();
    for piece in data.chunks(333) {
        h.update(piece);
    }
    assert_eq!(h.finalize(), md5::Md5::digest(&data));
    let stats = engine.stats();
    assert_eq!(stats.lane_rounds, 0, "{stats:?}");
    assert_eq!(stats.single_blocks, 10_000 / 64 + 1, "{stats:?}");
}

#[test]
fn hostile_sizes_a_byte_at_a_time() {
    let sizes = [
        0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 121, 127, 128, 129, 191, 192,
    ];
    for hold_back in [1, 2, 3] {
        let engine = LaneEngine::with_tiered(ready_tiered(), hold_back);
        let messages: Vec<Vec<u8>> = sizes.iter().map(|&n| message(n, n)).collect();
        let got = hash_interleaved(&engine, &messages, hold_back as u64, 1);
        check_all(&messages, &got, &format!("hold-back {hold_back}"));
    }
}

/// Messages and their digests.
type Hashed = (Vec<Vec<u8>>, Vec<[u8; 16]>);

#[test]
fn many_threads_share_one_engine() {
    let engine = LaneEngine::with_tiered(ready_tiered(), 8);
    let threads = 4;
    let per_thread = 3;
    let results: Vec<Hashed> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let engine = engine.clone();
                scope.spawn(move || {
                    let messages: Vec<Vec<u8>> = (0..per_thread)
                        .map(|k| message(3000 + 97 * (t * per_thread + k), t * 10 + k))
                        .collect();
                    let got = hash_interleaved(&engine, &messages, t as u64, 400);
                    (messages, got)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("hashing thread"))
            .collect()
    });
    for (t, (messages, got)) in results.iter().enumerate() {
        check_all(messages, got, &format!("thread {t}"));
    }
    assert_eq!(engine.streams(), 0);
}

/// A stream of `engine` fed `data[..fed]`, opened after `others` streams that are then each
/// fed `data[..others_fed]`: the stream and the others.
fn stream_among_others(
    engine: &LaneEngine,
    data: &[u8],
    fed: usize,
    others: usize,
    others_fed: usize,
) -> (Md5, Vec<Md5>) {
    let mut busy: Vec<Md5> = (0..others).map(|_| engine.hasher()).collect();
    let mut stream = engine.hasher();
    stream.update(&data[..fed]);
    for other in &mut busy {
        other.update(&data[..others_fed]);
    }
    (stream, busy)
}

#[test]
fn a_stream_moves_between_threads() {
    let engine = LaneEngine::with_tiered(ready_tiered(), 2);
    let data = message(5000, 11);
    let (h, others) = stream_among_others(&engine, &data, 1000, 5, 700);
    let h = std::thread::spawn(move || {
        let mut h = h;
        h.update(&data[1000..]);
        (h.finalize(), data)
    });
    let (got, data) = h.join().expect("hashing thread");
    assert_eq!(got, md5::Md5::digest(&data));
    for o in others {
        assert_eq!(o.finalize(), md5::Md5::digest(&data[..700]));
    }
}

#[test]
fn clones_resets_and_drops_mid_stream() {
    let engine = LaneEngine::with_tiered(ready_tiered(), 3);
    let data = message(4000, 5);
    let (mut a, mut busy) = stream_among_others(&engine, &data, 1500, 4, 900);
    let mut b = a.clone();
    assert_eq!(engine.streams(), 6);
    a.update(&data[1500..]);
    b.update(b"tail");
    let mut expected_b = data[..1500].to_vec();
    expected_b.extend_from_slice(b"tail");
    // Dropping streams with pending blocks leaves the others right.
    busy.truncate(2);
    assert_eq!(engine.streams(), 4);
    assert_eq!(a.finalize_reset(), md5::Md5::digest(&data));
    a.update(b"abc");
    assert_eq!(
        a.finalize_reset(),
        md5::Md5::digest(b"abc"),
        "after finalize_reset"
    );
    assert_eq!(b.finalize(), md5::Md5::digest(&expected_b));
    for h in busy {
        assert_eq!(h.finalize(), md5::Md5::digest(&data[..900]));
    }
    drop(a);
    assert_eq!(engine.streams(), 0);
}

#[test]
fn streams_share_portable_rounds_until_the_lane_kernel_compiles() {
    // A configuration of its own, fed less than the compile threshold: the lane kernel is
    // never started, so every round is portable.
    let tiered = Md5Builder::new().strategy("sink-loads").tiered();
    let engine = LaneEngine::with_tiered(tiered, 16);
    let messages: Vec<Vec<u8>> = (0..7).map(|s| message(64 * 40 + 9 * s, s)).collect();
    let got = hash_interleaved(&engine, &messages, 5, 512);
    check_all(&messages, &got, "portable rounds");
    let stats = engine.stats();
    let total: u64 = messages.iter().map(|m| m.len() as u64 / 64 + 1).sum();
    assert_eq!(stats.lane_blocks + stats.single_blocks, total, "{stats:?}");
    assert_eq!(stats.portable_lane_blocks, stats.lane_blocks, "{stats:?}");
    assert!(
        stats.lane_blocks > total / 2,
        "most blocks in lanes: {stats:?}"
    );
    assert_eq!(tiered.batch_backend(), Backend::Portable);
}

#[test]
fn a_failing_jit_leaves_every_stream_right_and_alone() {
    let tiered = Md5Builder::new().strategy("no-such-strategy").tiered();
    let (_, batch) = tiered.wait_for_jit();
    assert!(matches!(batch, Backend::Failed(_)), "{batch:?}");
    let engine = LaneEngine::with_tiered(tiered, 4);
    let messages: Vec<Vec<u8>> = (0..6).map(|s| message(700 * s + 3, s)).collect();
    let got = hash_interleaved(&engine, &messages, 1, 300);
    check_all(&messages, &got, "no JIT");
    assert_eq!(engine.stats().lane_rounds, 0);
}

/// An engine whose rounds all run the library's lane kernel (no wider kernel to switch to)
/// holding back `hold_back` blocks, and the kernel's lanes; `None` where the host has none.
fn fixed_lane_engine(hold_back: usize) -> Option<(LaneEngine, usize)> {
    if !host_has_lanes() {
        return None;
    }
    let tiered = ready_tiered();
    let kernel = tiered
        .batch_compressor()
        .expect("the lane kernel is compiled");
    Some((
        LaneEngine::with_kernel(tiered, kernel, hold_back),
        kernel.lanes(),
    ))
}

#[test]
fn a_finalizing_stream_compresses_the_others_while_they_fill_every_lane() {
    let hold_back = 8;
    let Some((engine, lanes)) = fixed_lane_engine(hold_back) else {
        return;
    };
    let streams = 2 * lanes + 1;
    let messages: Vec<Vec<u8>> = (0..streams).map(|s| message(64 * hold_back, s)).collect();
    let mut hashers: Vec<Md5> = messages.iter().map(|_| engine.hasher()).collect();
    for (h, m) in hashers.iter_mut().zip(&messages) {
        h.update(m);
    }
    assert_eq!(
        engine.stats().lane_rounds,
        0,
        "every stream holds its blocks back"
    );
    let mut hashers = hashers.into_iter();
    let first: [u8; 16] = hashers.next().expect("a stream").finalize().into();
    let stats = engine.stats();
    // Stream 0's own rounds reach it and `lanes - 1` partners; the others, while at least
    // `lanes` of them have blocks, are compressed in full rounds too: fewer than `lanes`
    // streams' blocks remain.
    assert!(
        stats.lane_blocks as usize >= (streams - (lanes - 1)) * hold_back,
        "{stats:?}"
    );
    let mut got = vec![first];
    got.extend(hashers.map(|h| -> [u8; 16] { h.finalize().into() }));
    check_all(
        &messages,
        &got,
        "a finalize that drains others in full rounds",
    );
}

#[test]
fn updates_larger_than_the_hold_back_still_fill_the_lanes() {
    // Pieces of twice the hold-back to twice as many streams as the kernel has lanes: each
    // stream may hold one piece, so the others always have blocks to fill the lanes beside the
    // stream that needs room.
    let hold_back = 8;
    let Some((engine, lanes)) = fixed_lane_engine(hold_back) else {
        return;
    };
    let piece = 64 * 2 * hold_back;
    let messages: Vec<Vec<u8>> = (0..2 * lanes)
        .map(|s| message(piece * 10 + 3 * s, s))
        .collect();
    let stats = hash_in_pieces(
        &engine,
        &messages,
        piece,
        None,
        "updates of twice the hold-back",
    );
    // Held back to the hold-back only, the rounds pair two or three streams (a quarter of the
    // lane slots filled or less); holding a piece, they fill nearly every lane.
    assert!(
        stats.lane_blocks * 10 >= stats.lane_slots * 9
            && stats.single_blocks * 20 < stats.lane_blocks,
        "at least 90% of the lane slots filled, under 5% of the blocks alone: {stats:?}"
    );
}
