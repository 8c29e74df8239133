//! `Md5Builder`: every registered strategy by name, and a clear error for an unknown one.

use schedlab_digests::{Digest, Md5Builder};

#[test]
fn every_strategy_hashes_correctly() {
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 31 + 7) as u8).collect();
    let expected = md5::Md5::digest(&data);
    for name in schedlab_passes::sched::strategy_names() {
        let engine = Md5Builder::new()
            .strategy(name)
            .build()
            .expect("registered strategy");
        assert_eq!(engine.digest(&data), expected, "strategy {name}");
        assert_eq!(engine.compressor().config().strategy, name);
        let mut h = engine.hasher();
        h.update(&data[..1000]);
        h.update(&data[1000..]);
        assert_eq!(h.finalize(), expected, "incremental, strategy {name}");
    }
}

#[test]
fn an_unknown_strategy_lists_the_valid_ones() {
    let err = Md5Builder::new()
        .strategy("fastest")
        .build()
        .expect_err("unknown strategy");
    let message = err.to_string();
    assert!(message.contains("fastest"), "{message}");
    for name in schedlab_passes::sched::strategy_names() {
        assert!(message.contains(name), "{message} should list {name}");
    }
}

#[test]
fn equal_configurations_share_one_engine() {
    let a = Md5Builder::new()
        .strategy("sink-loads")
        .build()
        .expect("builds");
    let b = Md5Builder::new()
        .strategy("sink-loads")
        .build()
        .expect("builds");
    assert!(std::ptr::eq(a.compressor(), b.compressor()));
}
