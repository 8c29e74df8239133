//! `schedlab bench --kernel md5-streams`: many MD5 streams at once through the library's
//! streaming lane engine ([`LaneEngine`]), against OpenSSL's single-stream `MD5()` timed in the
//! same repetition.
//!
//! A `xL/N streams` sample opens `N` hashers of one engine whose lane kernel has `L` lanes
//! (`lanes/N streams`: the library's default engine and kernel), feeds each its message in
//! pieces of [`PIECE`] bytes, round-robin over the streams (as concurrent uploads arrive), then
//! finalizes them in order; it counts all `N` messages' bytes. Beside them: `library (1
//! stream)`, the default `Md5` hasher fed the same pieces (the reference for the engine's
//! one-stream row), and `block fn xL`, the lane kernel alone (`MultiCompressor::compress_lanes`
//! over `L` buffers of the row's size in whole blocks: no padding, no engine), and `block fn
//! xL regs`, the same kernel with store-to-load forwarding on (its transposed message words in
//! registers instead of the word area the library re-reads), and `block fn xL reassociated
//! tests`, the library's kernel with its preheader's range tests reassociated by the rewrites
//! (the setting before `keep_conditions`). Also by name only: `block fn xL distinct`, `… distinct
//! placed` and `… copied` ([`BlockInput`]: the kernel on separate messages, and the engine's copy
//! and kernel without its rounds), and `block fn xL by STRATEGY`, the kernel scheduled with
//! another strategy, `lanes/N streams in SIZE updates`, the library's engine fed pieces of
//! another size, and `lanes/N streams in random order` (also `… in SIZE updates in random
//! order`), the pieces fed in a shuffled order instead of in turns (a fixed seed: every sample
//! and every run the same order). `L` is a kernel shape: `x8` (two `i32x4` groups) or a hybrid
//! `x8+s2` (two groups and two scalar lanes in the general registers, ten lanes). Every kernel is
//! JIT-compiled with the default configuration before timing, as the library compiles it
//! ([`wide_lane_config`] of it for [`WIDE_BATCH`]'s shape, [`lane_config`] for the others).
//! Ratios are aggregate MB/s over OpenSSL's MB/s for one message of the same size, per
//! repetition, then the median.
//! After the table (and as `lane_use` in JSON): each engine row's [`LaneStats`] from its
//! untimed digest check — kernel calls, blocks per lane per call, lane slots filled.

use super::aggregate::{self, RowsThenOpenssl};
use super::impls::{buffer, hex, openssl_digest};
use super::{BenchArgs, Budgets, Format, parse_sizes};
use crate::CliError;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use schedlab_backend::pipeline::PipelineConfig;
use schedlab_bench::measure::time_loop;
use schedlab_digests::{
    Backend, DEFAULT_HOLD_BACK_BLOCKS, Digest, Lane, LaneEngine, LaneStats, Md5, MultiCompressor,
    TieredEngine, WIDE_BATCH, lane_config, ring_start, state_index, state_words, wide_lane_config,
};
use serde_json::json;
use std::hint::black_box;
use std::time::Duration;

/// Bytes per `update` call of a stream (the engine's default hold-back).
pub const PIECE: usize = 16 << 10;

/// Stream counts timed by default.
const STREAM_COUNTS: [usize; 5] = [1, 4, 8, 16, 64];

/// Shapes of the lane kernels timed beside the library's: four-lane vector groups and scalar
/// lanes in the general registers (`x8`, `x8+s1`, …).
const SHAPES: [(usize, usize); 8] = [
    (1, 0),
    (2, 0),
    (3, 0),
    (4, 0),
    (2, 1),
    (2, 2),
    (3, 1),
    (3, 2),
];

/// A kernel shape's row label: `x8` (two vector groups), `x8+s2` (and two scalar lanes).
fn shape_label(groups: usize, scalar: usize) -> String {
    if scalar == 0 {
        format!("x{}", 4 * groups)
    } else {
        format!("x{}+s{scalar}", 4 * groups)
    }
}

/// What a row hashes.
#[derive(Clone, Copy, Debug)]
enum RowKind {
    /// `streams` concurrent hashers of one lane engine (with `kernel`, or the library's), fed
    /// as `feed` says.
    Engine {
        streams: usize,
        kernel: Option<&'static MultiCompressor>,
        feed: Feed,
    },
    /// One default `Md5` hasher.
    Library,
    /// The lane kernel alone, its lanes reading `input`.
    BlockFunction {
        kernel: &'static MultiCompressor,
        input: BlockInput,
    },
}

/// How an engine row's streams get their messages: `piece`-byte `update`s, in turns or in a
/// shuffled order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Feed {
    piece: usize,
    shuffled: bool,
}

impl Feed {
    /// [`PIECE`]-byte updates in turns, as the default rows feed.
    const TURNS: Feed = Feed {
        piece: PIECE,
        shuffled: false,
    };

    /// The stream each `update` of `streams` streams with `len`-byte messages goes to, in order:
    /// round-robin, or those turns shuffled with a fixed seed.
    fn sequence(self, streams: usize, len: usize) -> Vec<usize> {
        let pieces = len.div_ceil(self.piece).max(1);
        let mut sequence: Vec<usize> = (0..pieces).flat_map(|_| 0..streams).collect();
        if self.shuffled {
            sequence.shuffle(&mut StdRng::seed_from_u64(SHUFFLE_SEED));
        }
        sequence
    }
}

/// The seed of the shuffled rows' order.
const SHUFFLE_SEED: u64 = 35;

/// Where a block-function row's lanes read the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockInput {
    /// Every lane reads the one message buffer (`block fn S`).
    Shared,
    /// Every lane reads a copy of its own, each in an allocation of its own, as separate
    /// messages are (`block fn S distinct`): large allocations begin at one offset within a
    /// page, so block `j` of every lane falls in one L1 set.
    Distinct,
    /// Every lane reads a copy of its own, lane `i`'s beginning `5 i` lines into a page, as the
    /// engine places pending blocks (`block fn S distinct placed`).
    Placed,
    /// The message in [`PIECE`]-byte pieces, each copied into every lane's placed buffer and
    /// then compressed by one kernel call (`block fn S copied`): the engine's copy and kernel
    /// without its rounds.
    Copied,
}

impl BlockInput {
    /// The row-name suffix that selects this input (`--impl "block fn x12+s1 copied"`).
    const NAMED: [(BlockInput, &'static str); 3] = [
        (BlockInput::Distinct, "distinct"),
        (BlockInput::Placed, "distinct placed"),
        (BlockInput::Copied, "copied"),
    ];
}

struct Row {
    name: String,
    kind: RowKind,
}

impl Row {
    /// Messages one sample hashes.
    fn messages(&self) -> usize {
        match self.kind {
            RowKind::Engine { streams, .. } => streams,
            RowKind::Library => 1,
            RowKind::BlockFunction { kernel, .. } => kernel.lanes(),
        }
    }
}

/// Runs the streaming bench.
pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    openssl_sys::init();
    let sizes = parse_sizes(args.size.as_deref().unwrap_or("4k,1m"))?;
    let budgets = Budgets::new(args.quick, args.reps)?;
    let tiered = TieredEngine::default_instance();
    let (single, batch) = tiered.wait_for_jit();
    let wide = tiered.wait_for_wide_jit().unwrap_or(Backend::Jit);
    let kernel = match (&single, &batch, &wide) {
        (Backend::Jit, Backend::Jit, Backend::Jit) => tiered
            .batch_compressor()
            .ok_or_else(|| CliError::failure("the lane kernel is compiled but not ready"))?,
        _ => {
            return Err(CliError::failure(format!(
                "the kernels did not compile: single-stream {single:?}, lanes {batch:?}, \
                 wide lanes {wide:?}"
            )));
        }
    };
    let wanted: Option<Vec<String>> = args
        .impls
        .as_deref()
        .map(|s| crate::kernel::split_list(s).map(str::to_string).collect());
    let selected = |name: &str| wanted.as_ref().is_none_or(|w| w.iter().any(|n| n == name));
    let named = |name: &str| wanted.as_ref().is_some_and(|w| w.iter().any(|n| n == name));
    let mut rows: Vec<Row> = STREAM_COUNTS
        .iter()
        .map(|&streams| Row {
            name: format!("lanes/{streams} streams"),
            kind: RowKind::Engine {
                streams,
                kernel: None,
                feed: Feed::TURNS,
            },
        })
        .collect();
    rows.push(Row {
        name: "library (1 stream)".into(),
        kind: RowKind::Library,
    });
    for (groups, scalar) in SHAPES {
        let lanes = 4 * groups + scalar;
        let shape = shape_label(groups, scalar);
        let names: Vec<String> = STREAM_COUNTS
            .iter()
            .map(|n| format!("{shape}/{n} streams"))
            .chain([format!("block fn {shape}")])
            .collect();
        let reassociated = format!("block fn {shape} reassociated tests");
        if named(&reassociated) {
            let config = PipelineConfig {
                keep_conditions: false,
                ..lane_config(&PipelineConfig::default())
            };
            rows.push(Row {
                kind: RowKind::BlockFunction {
                    kernel: compile_lanes(&config, groups, scalar)?,
                    input: BlockInput::Shared,
                },
                name: reassociated,
            });
        }
        // `block fn S by STRATEGY`: the shape's kernel scheduled with another strategy.
        let by = format!("block fn {shape} by ");
        for name in wanted.iter().flatten().filter(|n| n.starts_with(&by)) {
            let strategy = &name[by.len()..];
            rows.push(Row {
                kind: RowKind::BlockFunction {
                    kernel: compile_lanes(
                        &lane_config(&PipelineConfig::with_strategy(strategy)),
                        groups,
                        scalar,
                    )?,
                    input: BlockInput::Shared,
                },
                name: name.clone(),
            });
        }
        let regs = format!("block fn {shape} regs");
        if selected(&regs) {
            let config = PipelineConfig::default();
            rows.push(Row {
                kind: RowKind::BlockFunction {
                    kernel: compile_lanes(&config, groups, scalar)?,
                    input: BlockInput::Shared,
                },
                name: regs,
            });
        }
        let inputs_named = BlockInput::NAMED
            .iter()
            .any(|(_, suffix)| named(&format!("block fn {shape} {suffix}")));
        if !inputs_named && !names.iter().any(|n| selected(n)) {
            continue;
        }
        let compiled = if lanes == kernel.lanes() {
            kernel
        } else if Some((groups, scalar)) == WIDE_BATCH {
            compile_lanes(
                &wide_lane_config(&PipelineConfig::default()),
                groups,
                scalar,
            )?
        } else {
            compile_lanes(&lane_config(&PipelineConfig::default()), groups, scalar)?
        };
        for (&streams, name) in STREAM_COUNTS.iter().zip(&names) {
            rows.push(Row {
                name: name.clone(),
                kind: RowKind::Engine {
                    streams,
                    kernel: Some(compiled),
                    feed: Feed::TURNS,
                },
            });
        }
        rows.push(Row {
            name: format!("block fn {shape}"),
            kind: RowKind::BlockFunction {
                kernel: compiled,
                input: BlockInput::Shared,
            },
        });
        for (input, suffix) in BlockInput::NAMED {
            let name = format!("block fn {shape} {suffix}");
            if named(&name) {
                rows.push(Row {
                    name,
                    kind: RowKind::BlockFunction {
                        kernel: compiled,
                        input,
                    },
                });
            }
        }
    }
    // `lanes/N streams in SIZE updates`, `… in random order`: the library's engine fed
    // another way.
    for name in wanted.iter().flatten() {
        if let Some((streams, feed)) = other_feed(name)? {
            rows.push(Row {
                name: name.clone(),
                kind: RowKind::Engine {
                    streams,
                    kernel: None,
                    feed,
                },
            });
        }
    }
    rows.retain(|row| selected(&row.name));
    if rows.is_empty() {
        return Err(CliError::usage(
            "no md5-streams row selected (rows: lanes/N streams and S/N streams for N in \
             1,4,8,16,64 and S in x4,x8,x12,x16,x8+s1,x8+s2,x12+s1,x12+s2, library (1 stream), \
             block fn S, block fn S regs, and by name only block fn S reassociated tests, block fn S \
             distinct, block fn S distinct placed, block fn S copied, block fn S by STRATEGY, \
             lanes/N streams in SIZE updates, lanes/N streams [in SIZE updates] in random order)",
        ));
    }
    let buffers: Vec<Vec<u8>> = sizes.iter().map(|&size| buffer(size)).collect();
    let lane_use = check_digests(&rows, &buffers, kernel.lanes())?;

    let mut work = RowsThenOpenssl {
        rows: &rows,
        buffers: &buffers,
        time_row,
    };
    let messages: Vec<usize> = rows.iter().map(Row::messages).collect();
    let (samples, rates) = aggregate::measure(&mut work, &budgets, &sizes, &messages);
    // One stream through the engine against the library, per repetition.
    let one = rows.iter().position(|r| {
        matches!(
            r.kind,
            RowKind::Engine {
                streams: 1,
                kernel: None,
                ..
            }
        )
    });
    let library = rows.iter().position(|r| matches!(r.kind, RowKind::Library));
    let engine_vs_library: Vec<Option<f64>> = (0..sizes.len())
        .map(|si| samples.speedup(one?, library?, si))
        .collect();
    let machine = super::cpu_model().unwrap_or_else(|| "unknown CPU".into());
    let reps = budgets.reps;
    match args.format {
        Format::Json => {
            let out = aggregate::json_rows(
                &sizes,
                &rates,
                "messages",
                |r| json!({ "impl": rows[r].name, "messages": rows[r].messages() }),
            );
            aggregate::print_json(&json!({
                "kernel": "md5-streams",
                "machine": machine,
                "repetitions": reps,
                "piece_bytes": PIECE,
                "library_lanes": kernel.lanes(),
                "one_stream_engine_over_library": engine_vs_library,
                "rows": out,
                "lane_use": lane_use.iter().map(LaneUse::json).collect::<Vec<_>>(),
            }))?;
        }
        Format::Table | Format::Markdown => {
            println!(
                "md5 streams: aggregate MB/s (ratio to OpenSSL MD5() single-stream, same \
                 repetition); {machine}; {reps} repetitions; {PIECE}-byte updates round-robin \
                 unless a row says otherwise"
            );
            let sizes_header = aggregate::size_headers(&sizes, "stream", 24);
            println!("{:<48}{sizes_header}", "impl");
            for (r, row) in rows.iter().enumerate() {
                let cells = aggregate::rate_cells(&rates.mbs[r], &rates.ratios[r], 24);
                println!("{:<48}{cells}", row.name);
            }
            let cells = aggregate::openssl_cells(&rates.mbs[rows.len()], 24);
            println!("{:<48}{cells}", "openssl (1 stream)");
            let mut line = format!("{:<48}", "1 stream: engine/lib");
            for x in &engine_vs_library {
                let cell = x.map_or("-".into(), |x| format!("{x:.3}x"));
                line.push_str(&format!(" {cell:>24}"));
            }
            println!("{line}");
            if !lane_use.is_empty() {
                println!(
                    "lane use of the engine rows (their digest check, one pass): kernel calls, \
                     blocks per lane per call, lane slots holding a stream's block"
                );
                for used in &lane_use {
                    println!("{}", used.line());
                }
            }
        }
    }
    Ok(())
}

/// The streams and feed of a row named `lanes/N streams in SIZE updates` (`SIZE` as `--size`
/// takes it: `64k`), `lanes/N streams in random order` or `lanes/N streams in SIZE updates in
/// random order`; `None` for other names.
fn other_feed(name: &str) -> Result<Option<(usize, Feed)>, CliError> {
    let Some(rest) = name.strip_prefix("lanes/") else {
        return Ok(None);
    };
    let (rest, shuffled) = match rest.strip_suffix(" in random order") {
        Some(rest) => (rest, true),
        None => (rest, false),
    };
    let (streams, size) = match rest.split_once(" streams in ") {
        Some((streams, rest)) => match rest.strip_suffix(" updates") {
            Some(size) => (streams, Some(size)),
            None => return Ok(None),
        },
        None => match rest.strip_suffix(" streams") {
            Some(streams) if shuffled => (streams, None),
            _ => return Ok(None),
        },
    };
    let streams: usize = streams.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
        CliError::usage(format!("{name}: the stream count is a positive integer"))
    })?;
    let piece = match size.map(parse_sizes).transpose()?.as_deref() {
        None => PIECE,
        Some([piece]) if *piece > 0 => *piece,
        Some(_) => {
            return Err(CliError::usage(format!(
                "{name}: one positive update size, such as 64k"
            )));
        }
    };
    Ok(Some((streams, Feed { piece, shuffled })))
}

/// What an engine row's lanes did hashing one size once.
struct LaneUse {
    row: String,
    size: usize,
    lanes: usize,
    stats: LaneStats,
}

impl LaneUse {
    /// Lane slots of the kernel calls that held a stream's block.
    fn filled(&self) -> f64 {
        if self.stats.lane_slots == 0 {
            0.0
        } else {
            self.stats.lane_blocks as f64 / self.stats.lane_slots as f64
        }
    }

    /// Blocks each lane stepped per kernel call, on average.
    fn blocks_per_round(&self) -> f64 {
        self.stats.round_blocks as f64 / self.stats.lane_rounds.max(1) as f64
    }

    fn line(&self) -> String {
        let s = &self.stats;
        format!(
            "{:<22} {:>8} B: {} lanes, {} calls ({} wide), {:.1} blocks/call, {:.1}% of lane slots \
             filled, {} lane blocks, {} single-stream blocks",
            self.row,
            self.size,
            self.lanes,
            s.lane_rounds,
            s.wide_rounds,
            self.blocks_per_round(),
            100.0 * self.filled(),
            s.lane_blocks,
            s.single_blocks
        )
    }

    fn json(&self) -> serde_json::Value {
        let s = &self.stats;
        json!({
            "impl": self.row,
            "size": self.size,
            "lanes": self.lanes,
            "lane_rounds": s.lane_rounds,
            "round_blocks": s.round_blocks,
            "lane_slots": s.lane_slots,
            "wide_rounds": s.wide_rounds,
            "lane_blocks": s.lane_blocks,
            "idle_lanes": s.idle_lanes,
            "single_blocks": s.single_blocks,
            "lane_slots_filled": self.filled(),
        })
    }
}

/// The lane kernel of `groups` vector groups and `scalar` scalar lanes compiled with `config`,
/// kept for the process like the library's own kernels.
fn compile_lanes(
    config: &PipelineConfig,
    groups: usize,
    scalar: usize,
) -> Result<&'static MultiCompressor, CliError> {
    let compiled = MultiCompressor::compile_hybrid(config, groups, scalar).map_err(|e| {
        CliError::failure(format!(
            "cannot compile {}: {e}",
            shape_label(groups, scalar)
        ))
    })?;
    Ok(Box::leak(Box::new(compiled)))
}

/// Every row hashes every size as OpenSSL does (the block-function row: whole blocks only, in
/// every lane); returns what the engine rows' lanes did (`library_lanes`: the default kernel's).
fn check_digests(
    rows: &[Row],
    buffers: &[Vec<u8>],
    library_lanes: usize,
) -> Result<Vec<LaneUse>, CliError> {
    let mut lane_use = Vec::new();
    for data in buffers {
        let want = hex(&openssl_digest(data));
        let whole = &data[..data.len() - data.len() % 64];
        for row in rows {
            let got: Vec<String> = match row.kind {
                RowKind::Engine {
                    streams,
                    kernel,
                    feed,
                } => {
                    let engine = engine_of(kernel);
                    let sequence = feed.sequence(streams, data.len());
                    let digests = hash_streams(&engine, streams, feed.piece, &sequence, data);
                    lane_use.push(LaneUse {
                        row: row.name.clone(),
                        size: data.len(),
                        lanes: kernel.map_or(library_lanes, MultiCompressor::lanes),
                        stats: engine.stats(),
                    });
                    digests.iter().map(|d| hex(d)).collect()
                }
                RowKind::Library => vec![hex(&hash_library(data))],
                RowKind::BlockFunction { kernel, input } => {
                    let mut state = vec![0u32; state_words(kernel.lanes())];
                    BlockRun::new(kernel, input, whole).run(&mut state, whole);
                    let mut want_state = schedlab_kernels::md5::INITIAL_STATE;
                    for block in whole.chunks_exact(64) {
                        let block: &[u8; 64] = block.try_into().map_err(|_| {
                            CliError::failure("a whole block is 64 bytes".to_string())
                        })?;
                        schedlab_kernels::md5::reference_compress(&mut want_state, block);
                    }
                    let wrong_lane = (0..kernel.lanes()).any(|lane| {
                        let got: [u32; 4] = std::array::from_fn(|w| state[state_index(lane, w)]);
                        got != want_state
                    });
                    if wrong_lane {
                        return Err(CliError::failure(format!(
                            "{} compresses {} bytes wrongly",
                            row.name,
                            whole.len()
                        )));
                    }
                    continue;
                }
            };
            if let Some(bad) = got.iter().find(|g| **g != want) {
                return Err(CliError::failure(format!(
                    "{} hashes {} bytes to {bad}, OpenSSL to {want}",
                    row.name,
                    data.len()
                )));
            }
        }
    }
    Ok(lane_use)
}

/// A fresh engine with `kernel`'s lanes, or the library's default engine.
fn engine_of(kernel: Option<&'static MultiCompressor>) -> LaneEngine {
    match kernel {
        Some(kernel) => LaneEngine::with_kernel(
            TieredEngine::default_instance(),
            kernel,
            DEFAULT_HOLD_BACK_BLOCKS,
        ),
        None => LaneEngine::new(),
    }
}

/// `streams` hashers of `engine`, each fed `data` in `piece`-byte pieces, one `update` of the
/// stream `sequence` names after another ([`Feed::sequence`]), then finalized in order.
fn hash_streams(
    engine: &LaneEngine,
    streams: usize,
    piece: usize,
    sequence: &[usize],
    data: &[u8],
) -> Vec<[u8; 16]> {
    let mut scratch = StreamScratch::default();
    hash_streams_into(engine, streams, piece, sequence, data, &mut scratch);
    scratch.digests
}

/// The hashers and digests of [`hash_streams_into`], kept from one sample to the next so that
/// a timed sample allocates nothing the library row's does not (two short vectors are ≈ 1 % of
/// one stream's 4 KiB message).
#[derive(Default)]
struct StreamScratch {
    hashers: Vec<(Md5, usize)>,
    digests: Vec<[u8; 16]>,
}

/// [`hash_streams`] into `scratch.digests`, reusing its vectors.
fn hash_streams_into(
    engine: &LaneEngine,
    streams: usize,
    piece: usize,
    sequence: &[usize],
    data: &[u8],
    scratch: &mut StreamScratch,
) {
    let StreamScratch { hashers, digests } = scratch;
    hashers.clear();
    hashers.extend((0..streams).map(|_| (engine.hasher(), 0)));
    for &stream in sequence {
        let (h, at) = &mut hashers[stream];
        let end = (*at + piece).min(data.len());
        h.update(&data[*at..end]);
        *at = end;
    }
    digests.clear();
    digests.extend(
        hashers
            .drain(..)
            .map(|(h, _)| -> [u8; 16] { h.finalize().into() }),
    );
}

/// The default hasher fed `data` in [`PIECE`]-byte pieces.
fn hash_library(data: &[u8]) -> [u8; 16] {
    let mut h = Md5::new();
    for piece in data.chunks(PIECE) {
        h.update(piece);
    }
    h.finalize().into()
}

/// Bytes of the span within which a line's offset picks its L1 set.
const PAGE: usize = 4096;

/// A block-function row's lanes and their inputs, prepared before timing.
struct BlockRun {
    kernel: &'static MultiCompressor,
    input: BlockInput,
    /// Each lane's buffer (none for [`BlockInput::Shared`]) and where its blocks begin in it.
    copies: Vec<(Vec<u8>, usize)>,
}

impl BlockRun {
    /// Lanes of `kernel` reading `whole` (whole blocks) as `input` says.
    fn new(kernel: &'static MultiCompressor, input: BlockInput, whole: &[u8]) -> Self {
        let lanes = kernel.lanes();
        let copies = match input {
            BlockInput::Shared => Vec::new(),
            BlockInput::Distinct => (0..lanes).map(|_| (whole.to_vec(), 0)).collect(),
            BlockInput::Placed => (0..lanes).map(|lane| placed(lane, whole)).collect(),
            BlockInput::Copied => (0..lanes)
                .map(|lane| placed(lane, &vec![0; PIECE.min(whole.len())]))
                .collect(),
        };
        Self {
            kernel,
            input,
            copies,
        }
    }

    /// Every lane compresses `whole` from MD5's initial state.
    fn run(&mut self, state: &mut [u32], whole: &[u8]) {
        for lane in 0..self.kernel.lanes() {
            for (w, word) in schedlab_kernels::md5::INITIAL_STATE.into_iter().enumerate() {
                state[state_index(lane, w)] = word;
            }
        }
        if self.input != BlockInput::Copied {
            let lanes: Vec<Lane<'_>> = match self.input {
                BlockInput::Shared => (0..self.kernel.lanes())
                    .map(|_| Lane { buf: whole, ofs: 0 })
                    .collect(),
                _ => self.copies.iter().map(|(buf, at)| lane(buf, *at)).collect(),
            };
            self.kernel
                .compress_lanes(state, &lanes, (whole.len() / 64) as i32);
            return;
        }
        for piece in whole.chunks(PIECE) {
            for (buf, at) in &mut self.copies {
                buf[*at..*at + piece.len()].copy_from_slice(piece);
            }
            let lanes: Vec<Lane<'_>> = self
                .copies
                .iter()
                .map(|(buf, at)| lane(&buf[..at + piece.len()], *at))
                .collect();
            self.kernel
                .compress_lanes(state, &lanes, (piece.len() / 64) as i32);
        }
    }
}

/// A lane reading `buf` from byte `at`.
fn lane(buf: &[u8], at: usize) -> Lane<'_> {
    Lane {
        buf,
        ofs: at as i32,
    }
}

/// A copy of `bytes` placed within a page as the engine places stream `lane`'s pending blocks
/// ([`ring_start`]), and where it begins in the returned buffer.
fn placed(lane: usize, bytes: &[u8]) -> (Vec<u8>, usize) {
    let mut buf = Vec::with_capacity(PAGE + bytes.len());
    let at = ring_start(buf.as_ptr() as usize, lane);
    buf.resize(at, 0);
    buf.extend_from_slice(bytes);
    (buf, at)
}

/// Times `iterations` calls of `row` on a message of `data`.
fn time_row(row: &Row, data: &[u8], iterations: u64) -> Duration {
    match row.kind {
        RowKind::Engine {
            streams,
            kernel,
            feed,
        } => {
            let engine = engine_of(kernel);
            let sequence = feed.sequence(streams, data.len());
            let mut scratch = StreamScratch::default();
            time_loop(
                || {
                    let data = black_box(data);
                    hash_streams_into(&engine, streams, feed.piece, &sequence, data, &mut scratch);
                    scratch.digests.first().copied()
                },
                iterations,
            )
        }
        RowKind::Library => time_loop(|| hash_library(black_box(data)), iterations),
        RowKind::BlockFunction { kernel, input } => {
            let whole = &data[..data.len() - data.len() % 64];
            let mut state = vec![0u32; state_words(kernel.lanes())];
            let mut run = BlockRun::new(kernel, input, whole);
            time_loop(
                || run.run(black_box(&mut state), black_box(whole)),
                iterations,
            )
        }
    }
}
