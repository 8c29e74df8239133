//! What bounds-check elimination does to each kernel, counted: MD5 16 → 1 → 0, the `int[]`
//! sum 8 → 1 → 0, and a function with no mergeable or provable check left unchanged.
#![allow(missing_docs)]

use cranelift_codegen::ir::{Function, Opcode};
use schedlab_kernels::{int_sum, md5};
use schedlab_passes::bce::{self, BceLevel, BceStats};

fn run(build: fn() -> Function, level: BceLevel) -> (Function, BceStats) {
    let mut func = build();
    let stats = bce::run(&mut func, level).expect("bce runs");
    (func, stats)
}

/// The block with the most loads: the body of the hot loop.
fn hot_body(func: &Function) -> (usize, usize, Opcode) {
    func.layout
        .blocks()
        .map(|b| {
            let loads = func
                .layout
                .block_insts(b)
                .filter(|&i| func.dfg.insts[i].opcode() == Opcode::Load)
                .count();
            let insts = func.layout.block_insts(b).count();
            let term = func
                .layout
                .last_inst(b)
                .map_or(Opcode::Nop, |i| func.dfg.insts[i].opcode());
            (loads, insts, term)
        })
        .max_by_key(|&(loads, _, _)| loads)
        .expect("has blocks")
}

#[test]
fn md5_sixteen_one_zero() {
    let expected = [
        (BceLevel::Off, 16, 16),
        (BceLevel::Merge, 1, 1),
        (BceLevel::Predicate, 0, 1),
    ];
    for (level, per_block, total) in expected {
        let (func, stats) = run(md5::compress_multi_block, level);
        assert_eq!(stats.level, level);
        assert_eq!(stats.checks_per_block_unoptimized, 16, "{level}");
        assert_eq!(stats.checks_per_block, per_block, "{level}");
        assert_eq!(stats.checks_before, 16, "{level}");
        assert_eq!(stats.checks_after, total, "{level}");
        assert_eq!(bce::count_checks(&func), total, "{level}");
    }
}

#[test]
fn md5_hot_body_is_one_block_with_all_loads_and_steps() {
    for level in [BceLevel::Merge, BceLevel::Predicate] {
        let (func, stats) = run(md5::compress_multi_block, level);
        let (loads, insts, term) = hot_body(&func);
        assert_eq!(loads, 16, "{level}: the 16 message loads share one block");
        assert!(
            insts > 64 * 5,
            "{level}: and so do the 64 steps ({insts} insts)"
        );
        assert_eq!(
            term,
            Opcode::Jump,
            "{level}: the body ends in the back edge"
        );
        assert_eq!(
            stats.blocks_fused,
            if level == BceLevel::Merge { 15 } else { 16 }
        );
    }
}

#[test]
fn md5_predicate_versions_one_loop() {
    let (_, stats) = run(md5::compress_multi_block, BceLevel::Predicate);
    assert_eq!(stats.groups_merged, 1);
    assert_eq!(stats.checks_merged_away, 15);
    assert_eq!(stats.loops_versioned, 1);
    assert_eq!(stats.checks_predicated, 1);
    let copies: Vec<_> = stats
        .loops
        .iter()
        .map(|l| (l.checks, l.unchecked_copy))
        .collect();
    assert_eq!(
        copies,
        [(0, true), (1, false)],
        "fast copy first, checked fallback kept"
    );
}

#[test]
fn int_sum_eight_one_zero() {
    for (level, per_block) in [
        (BceLevel::Off, 8),
        (BceLevel::Merge, 1),
        (BceLevel::Predicate, 0),
    ] {
        let (func, stats) = run(int_sum::multi_block, level);
        assert_eq!(stats.checks_per_block_unoptimized, 8);
        assert_eq!(stats.checks_per_block, per_block, "{level}");
        if level != BceLevel::Off {
            let (loads, _, term) = hot_body(&func);
            assert_eq!((loads, term), (8, Opcode::Jump), "{level}");
        }
    }
}

#[test]
fn unmergeable_is_left_unchanged_at_every_level() {
    let original = int_sum::unmergeable().display().to_string();
    for level in BceLevel::ALL {
        let (func, stats) = run(int_sum::unmergeable, level);
        assert_eq!(func.display().to_string(), original, "{level} changed it");
        assert_eq!((stats.checks_before, stats.checks_after), (3, 3));
        assert_eq!(
            stats.groups_merged + stats.loops_versioned + stats.blocks_fused,
            0
        );
    }
}

#[test]
fn off_changes_nothing() {
    let original = md5::compress_multi_block().display().to_string();
    let (func, _) = run(md5::compress_multi_block, BceLevel::Off);
    assert_eq!(func.display().to_string(), original);
}

#[test]
fn running_again_finds_nothing_more() {
    for level in [BceLevel::Merge, BceLevel::Predicate] {
        let (mut func, _) = run(md5::compress_multi_block, level);
        let once = func.display().to_string();
        let stats = bce::run(&mut func, BceLevel::Merge).expect("bce");
        assert_eq!(func.display().to_string(), once, "{level}");
        assert_eq!(stats.groups_merged, 0);
    }
}

#[test]
fn level_names() {
    for level in BceLevel::ALL {
        assert_eq!(level.name().parse::<BceLevel>().expect("parses"), level);
        assert_eq!(level.to_string(), level.name());
    }
    assert_eq!(
        "Predicate".parse::<BceLevel>().expect("case"),
        BceLevel::Predicate
    );
    assert_eq!(BceLevel::default(), BceLevel::Predicate);
    let err = "hoist"
        .parse::<BceLevel>()
        .expect_err("unknown")
        .to_string();
    assert!(
        err.contains("\"hoist\"") && err.contains("off, merge, predicate"),
        "{err}"
    );
}

#[test]
fn invalid_input_is_an_error_not_a_panic() {
    let mut func = md5::compress_multi_block();
    // Drop the entry block's terminator: the verifier rejects the function.
    let entry = func.layout.entry_block().expect("entry");
    let last = func.layout.last_inst(entry).expect("terminator");
    func.layout.remove_inst(last);
    let err = bce::run(&mut func, BceLevel::Predicate).expect_err("invalid input");
    assert!(err.to_string().contains("does not verify"), "{err}");
}

#[test]
fn stats_display_names_the_counters() {
    let (_, stats) = run(md5::compress_multi_block, BceLevel::Predicate);
    let line = stats.to_string();
    assert!(line.contains("checks_per_block=16->0"), "{line}");
    assert!(line.contains("loops_versioned=1"), "{line}");
}

/// The loops a front end emits for `BigInteger`: mulAdd's loop counts down (`j >= 0`) with a
/// second induction variable `o` in lockstep; squareToLen's squares loop steps `i` by 2 while
/// `j` steps by 1. All their checks leave the versioned copies.
#[test]
fn bigint_loops_counting_down_and_in_lockstep_are_predicated() {
    use schedlab_kernels::bigint::{self, Entry};
    for entry in [Entry::Wrapper, Entry::Impl] {
        let mul_add = || bigint::mul_add_with(entry);
        let mut func = mul_add();
        let stats = bce::run(&mut func, BceLevel::Predicate).expect("bce runs");
        // in[j], out[o] load, out[o] store: 3 per iteration, 0 in the fast copy.
        assert_eq!(stats.checks_per_block_unoptimized, 3, "{entry:?} {stats}");
        assert_eq!(stats.checks_per_block, 0, "{entry:?} {stats}");
        assert_eq!(stats.loops_versioned, 1, "{entry:?} {stats}");
        let fast: Vec<_> = stats.loops.iter().filter(|l| l.unchecked_copy).collect();
        assert_eq!(fast.len(), 1);
        assert_eq!(fast[0].checks, 0);
        // The checked fallback keeps its (merged) checks.
        assert_eq!(stats.checks_after, 2, "{entry:?} {stats}");

        let mut func = bigint::square_to_len_with(entry);
        let stats = bce::run(&mut func, BceLevel::Predicate).expect("bce runs");
        assert_eq!(stats.checks_per_block_unoptimized, 3, "{entry:?} {stats}");
        assert_eq!(stats.checks_per_block, 0, "{entry:?} {stats}");
        // The squares loop, the inlined mulAdd loop and primitiveLeftShift.
        assert_eq!(stats.loops_versioned, 3, "{entry:?} {stats}");
        assert!(
            stats
                .loops
                .iter()
                .filter(|l| l.unchecked_copy)
                .all(|l| l.checks == 0),
            "{entry:?} {:?}",
            stats.loops
        );
    }
}

/// The multi-buffer kernel: per block 16 checks per four-lane group (four 16-byte reads per
/// lane), none in the predicated hot loop. Merging does not reduce them: the kernel reads a
/// group quarter block by quarter block, four lanes at a time, and stores each quarter's words
/// to its word area before the next quarter's checks, so no two checks of one lane are
/// adjacent (the library predicates the loop; merging is only `--bce merge`).
#[test]
fn md5_mb_per_lane_checks_merge_then_vanish() {
    use schedlab_kernels::md5_mb;
    for groups in [1, 2] {
        let lanes = 4 * groups;
        let build = || md5_mb::compress_lanes(groups);
        for (level, per_block) in [
            (BceLevel::Off, 4 * lanes),
            (BceLevel::Merge, 4 * lanes),
            (BceLevel::Predicate, 0),
        ] {
            let mut func = build();
            let stats = bce::run(&mut func, level).expect("bce runs");
            assert_eq!(
                stats.checks_per_block_unoptimized,
                4 * lanes,
                "{lanes} lanes {level}"
            );
            assert_eq!(stats.checks_per_block, per_block, "{lanes} lanes {level}");
        }
        let mut func = build();
        let stats = bce::run(&mut func, BceLevel::Predicate).expect("bce runs");
        assert_eq!(
            stats.versioned.len(),
            1,
            "{lanes} lanes: the block loop is versioned"
        );
        let (loads, _, _) = hot_body(&func);
        // Four message rows per lane, per group the four chaining vectors loaded at the top of
        // the iteration and again for the feed-forward, and the 64 steps' message words read
        // back from the word area.
        assert_eq!(
            loads,
            4 * lanes + 8 * groups + 64 * groups,
            "{lanes} lanes: all reads in one check-free block"
        );
    }
}
