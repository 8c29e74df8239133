//! Differential tests against the `md-5` crate.

use rand::{Rng, SeedableRng, rngs::StdRng};
use schedlab_digests::{Digest, Md5};

fn random_bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rng.fill(v.as_mut_slice());
    v
}

#[test]
fn every_length_up_to_2000_in_random_chunks() {
    let mut rng = StdRng::seed_from_u64(0x5c4ed1ab);
    for len in 0..=2000 {
        let data = random_bytes(&mut rng, len);
        let expected = md5::Md5::digest(&data);
        let mut h = Md5::new();
        let mut rest = data.as_slice();
        while !rest.is_empty() {
            let take = rng.random_range(1..=rest.len().min(200));
            h.update(&rest[..take]);
            rest = &rest[take..];
        }
        assert_eq!(h.finalize(), expected, "length {len}");
    }
}

#[test]
fn sixteen_mebibytes() {
    let mut rng = StdRng::seed_from_u64(16);
    let data = random_bytes(&mut rng, 16 << 20);
    assert_eq!(Md5::digest(&data), md5::Md5::digest(&data));
}

#[test]
fn eight_threads_hash_at_once() {
    let handles: Vec<_> = (0..8u64)
        .map(|t| {
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(100 + t);
                for _ in 0..50 {
                    let len = rng.random_range(0..5000);
                    let data = random_bytes(&mut rng, len);
                    assert_eq!(
                        Md5::digest(&data),
                        md5::Md5::digest(&data),
                        "thread {t}, len {len}"
                    );
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("hashing thread panicked");
    }
}
