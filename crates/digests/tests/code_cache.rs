//! The lane kernel's machine code kept between processes (`schedlab_backend::code_cache`):
//! a kernel loaded from the cache hashes exactly as one compiled, on every lane and on its slow
//! path, and a damaged entry is compiled afresh. Only x86_64 hosts keep code.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_imports))]

use schedlab_backend::code_cache::CodeCache;
use schedlab_backend::pipeline::PipelineConfig;
use schedlab_digests::{Lane, MultiCompressor, OUT_OF_BOUNDS, lane_config, state_words};

/// States and results of `kernel` on random lanes, in bounds and out of bounds.
fn outcomes(kernel: &MultiCompressor) -> Vec<(i32, Vec<u32>)> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let lanes = kernel.lanes();
    let data: Vec<Vec<u8>> = (0..lanes)
        .map(|_| (0..64 * 40).map(|_| rng.random()).collect())
        .collect();
    [(0, 40), (64, 17), (640, 30), (128, 39)]
        .iter()
        .map(|&(ofs, blocks)| {
            let mut state: Vec<u32> = (0..state_words(lanes)).map(|_| rng.random()).collect();
            let inputs: Vec<Lane<'_>> = data.iter().map(|d| Lane { buf: d, ofs }).collect();
            let result = kernel.compress_lanes(&mut state, &inputs, blocks);
            (result, state)
        })
        .collect()
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_cached_kernel_hashes_as_the_compiled_one() {
    let dir = tempfile::tempdir().unwrap();
    let cache = CodeCache::at(dir.path());
    let config = lane_config(&PipelineConfig::default());
    let compiled = MultiCompressor::compile_with_cache(&config, 2, &cache).unwrap();
    assert!(!compiled.from_cache());
    let entries = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(entries, 1, "the compile wrote one entry");
    let loaded = MultiCompressor::compile_with_cache(&config, 2, &cache).unwrap();
    assert!(loaded.from_cache(), "the second compile loads the entry");
    let (a, b) = (outcomes(&compiled), outcomes(&loaded));
    assert!(
        a.iter().any(|(r, _)| *r == OUT_OF_BOUNDS),
        "the slow path is exercised"
    );
    assert_eq!(a, b);
    let other = MultiCompressor::compile_with_cache(&config, 1, &cache).unwrap();
    assert!(!other.from_cache(), "four lanes are another recipe");
    let hybrid = MultiCompressor::compile_hybrid_with_cache(&config, 2, 1, &cache).unwrap();
    assert!(!hybrid.from_cache(), "a scalar lane is another recipe");
    let loaded = MultiCompressor::compile_hybrid_with_cache(&config, 2, 1, &cache).unwrap();
    assert!(loaded.from_cache(), "the hybrid kernel's entry loads");
    assert_eq!(outcomes(&hybrid), outcomes(&loaded));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_damaged_entry_is_compiled_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let cache = CodeCache::at(dir.path());
    let config = lane_config(&PipelineConfig::default());
    let compiled = MultiCompressor::compile_with_cache(&config, 2, &cache).unwrap();
    let entry = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&entry).unwrap();
    let last = bytes.len() - 100;
    bytes[last] ^= 0x40;
    std::fs::write(&entry, &bytes).unwrap();
    let again = MultiCompressor::compile_with_cache(&config, 2, &cache).unwrap();
    assert!(!again.from_cache());
    assert_eq!(outcomes(&compiled), outcomes(&again));
}

/// The variable that hands [`another_process_writes_the_entry`] its cache directory.
const CHILD_CACHE: &str = "SCHEDLAB_CODE_CACHE_TEST_DIR";

/// Run only as a child of [`an_entry_from_another_process_is_patched_for_this_one`]: compiles
/// the kernel into the cache its parent names.
#[test]
#[ignore = "a child process of an_entry_from_another_process_is_patched_for_this_one"]
fn another_process_writes_the_entry() {
    let Some(dir) = std::env::var_os(CHILD_CACHE) else {
        return;
    };
    let config = lane_config(&PipelineConfig::default());
    let kernel = MultiCompressor::compile_with_cache(&config, 2, &CodeCache::at(dir)).unwrap();
    assert!(!kernel.from_cache());
}

/// A test binary is position-independent, so the child's slow-path callee sits at another
/// address than this process's: the loaded code is only right if its call site was patched
/// (unpatched, the out-of-bounds rounds call into the void).
#[cfg(target_arch = "x86_64")]
#[test]
fn an_entry_from_another_process_is_patched_for_this_one() {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "another_process_writes_the_entry"])
        .env(CHILD_CACHE, dir.path())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let cache = CodeCache::at(dir.path());
    let config = lane_config(&PipelineConfig::default());
    let loaded = MultiCompressor::compile_with_cache(&config, 2, &cache).unwrap();
    assert!(loaded.from_cache(), "the child's entry is this process's");
    let fresh = MultiCompressor::compile_with_cache(&config, 2, &CodeCache::off()).unwrap();
    assert_eq!(outcomes(&loaded), outcomes(&fresh));
}

#[cfg(not(target_arch = "x86_64"))]
#[test]
fn other_hosts_keep_no_code() {
    let dir = tempfile::tempdir().unwrap();
    let config = lane_config(&PipelineConfig::default());
    for _ in 0..2 {
        match MultiCompressor::compile_with_cache(&config, 2, &CodeCache::at(dir.path())) {
            Ok(kernel) => assert!(!kernel.from_cache()),
            // riscv64 has no SIMD lowering for the lane kernel.
            Err(e) => assert!(e.to_string().contains("SIMD"), "{e}"),
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
