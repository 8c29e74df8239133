//! Compiles the MD5 kernel N times exactly as the `Md5` library does (default configuration,
//! checked slow path on first need), for a profile of compile time:
//!
//! ```sh
//! cargo build --release -p schedlab-bench --example compile_profile
//! target/release/examples/compile_profile 300            # time: thread CPU, allocations
//! valgrind --tool=callgrind --callgrind-out-file=cg.out \
//!     target/release/examples/compile_profile 20         # deterministic instruction counts
//! callgrind_annotate --inclusive=yes cg.out | head -60
//! ```
//!
//! The argument is the number of compilations (default 20); a second argument names another
//! registered strategy. It prints, for the first compilation in the process (cold: caches,
//! allocator and code memory fresh) and for the later ones (median and minimum):
//!
//! - the *thread CPU time* of the whole compilation (`CLOCK_THREAD_CPUTIME_ID`: time this
//!   thread ran, so preemption by other processes on a shared machine does not count);
//! - the wall-clock phases the library measures itself (build, IR stages, codegen);
//! - the heap allocations and bytes allocated per compilation (a counting global allocator).
//!
//! Under callgrind the times mean nothing; the allocation counts stay exact.

use schedlab_backend::pipeline::PipelineConfig;
use schedlab_digests::{CompileTimings, Compressor, SlowPath};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// The system allocator, counting calls and bytes.
struct CountingAllocator;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static ALLOCATED_BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the counters are atomics.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc`/`realloc` above, i.e. from the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: as in `dealloc`; `new_size` is the caller's, checked by its contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// This thread's CPU time in microseconds.
fn thread_cpu_us() -> f64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; the clock id is a constant Linux knows.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if status != 0 {
        return f64::NAN;
    }
    now.tv_sec as f64 * 1e6 + now.tv_nsec as f64 / 1e3
}

/// One compilation's figures.
#[derive(Clone, Copy)]
struct Sample {
    cpu_us: f64,
    wall: CompileTimings,
    allocations: u64,
    bytes: u64,
}

fn compile_once(config: &PipelineConfig) -> Sample {
    let (allocations, bytes) = (
        ALLOCATIONS.load(Ordering::Relaxed),
        ALLOCATED_BYTES.load(Ordering::Relaxed),
    );
    let cpu = thread_cpu_us();
    match Compressor::compile_timed(config, SlowPath::Lazy) {
        Ok((_, wall)) => Sample {
            cpu_us: thread_cpu_us() - cpu,
            wall,
            allocations: ALLOCATIONS.load(Ordering::Relaxed) - allocations,
            bytes: ALLOCATED_BYTES.load(Ordering::Relaxed) - bytes,
        },
        Err(e) => {
            eprintln!("compile_profile: {e}");
            std::process::exit(1);
        }
    }
}

fn median_and_min(mut values: Vec<f64>) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    (values[values.len() / 2], values[0])
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = match args.next().map(|a| a.parse()) {
        None => 20,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("compile_profile: the number of compilations is not a number: {e}");
            std::process::exit(2);
        }
    };
    let config = match args.next() {
        Some(strategy) => PipelineConfig::with_strategy(&strategy),
        None => PipelineConfig::default(),
    };
    let first = compile_once(&config);
    // Output errors (a closed pipe) are ignored: the figures are only printed.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "first compilation of md5 ({}): cpu {:.0} us; wall {:.0} us = build {:.0} + passes {:.0} + codegen {:.0}; {} allocations, {} bytes",
        config.strategy,
        first.cpu_us,
        first.wall.total_us(),
        first.wall.build_us,
        first.wall.passes_us,
        first.wall.codegen_us,
        first.allocations,
        first.bytes
    );
    let later: Vec<Sample> = (1..runs.max(2)).map(|_| compile_once(&config)).collect();
    let (cpu_median, cpu_min) = median_and_min(later.iter().map(|s| s.cpu_us).collect());
    let mut by_total: Vec<&Sample> = later.iter().collect();
    by_total.sort_by(|a, b| a.wall.total_us().total_cmp(&b.wall.total_us()));
    let median = by_total[by_total.len() / 2];
    let phase =
        |f: fn(&CompileTimings) -> f64| median_and_min(later.iter().map(|s| f(&s.wall)).collect());
    let (build, build_min) = phase(|t| t.build_us);
    let (passes, passes_min) = phase(|t| t.passes_us);
    let (codegen, codegen_min) = phase(|t| t.codegen_us);
    let _ = writeln!(
        out,
        "{} later compilations: cpu median {cpu_median:.0} us, min {cpu_min:.0} us; wall median {:.0} us; phase medians (min) build {build:.0} ({build_min:.0}) + passes {passes:.0} ({passes_min:.0}) + codegen {codegen:.0} ({codegen_min:.0}); {} allocations, {} bytes",
        later.len(),
        median.wall.total_us(),
        median.allocations,
        median.bytes
    );
}
