//! Experiment: MB/s of the sha256 kernel under pipeline configuration variants, interleaved.
use schedlab_backend::pipeline::PipelineConfig;
use schedlab_bench::measure::{effective_clock_ghz, time_loop};
use schedlab_bench::sha256::Sha256Kernel;
use schedlab_kernels::sha256::Schedule;
use std::hint::black_box;

fn main() {
    let mut variants: Vec<(String, PipelineConfig, Schedule)> = Vec::new();
    let arg = Schedule::Argument;
    let local = Schedule::Private;
    let only: Vec<String> = std::env::args().skip(1).collect();
    for s in ["balanced", "latency-pressure", "source", "remat-loads", "list-latency", "pressure", "hoist-loads"] {
        variants.push((s.to_string(), PipelineConfig::with_strategy(s), arg));
        let mut c = PipelineConfig::with_strategy(s);
        c.forward_stores = true;
        variants.push((format!("{s}+fwd"), c.clone(), arg));
        variants.push((format!("{s}+fwd/local"), c, local));
        variants.push((format!("{s}/local"), PipelineConfig::with_strategy(s), local));
    }
    variants.retain(|(n, _, _)| only.is_empty() || only.iter().any(|o| n.starts_with(o.as_str())));
    let kernels: Vec<_> = variants
        .iter()
        .map(|(n, c, w)| {
            let k = Sha256Kernel::compile_kernel(c, *w).expect("compile");
            eprintln!("{n}: spills {}/{} loop {:?}", k.spills, k.reloads, k.loop_spills);
            k
        })
        .collect();
    let data = vec![0x5au8; 1 << 20];
    let want = kernels[0].digest(&data);
    for k in &kernels {
        assert_eq!(k.digest(&data), want);
    }
    let reps = 25;
    let mut mbs = vec![Vec::new(); kernels.len()];
    for _ in 0..reps {
        for (i, k) in kernels.iter().enumerate() {
            let t0 = thread_cpu();
            let _ = time_loop(|| k.digest(black_box(&data)), 3);
            let t = thread_cpu() - t0;
            mbs[i].push(3.0 * data.len() as f64 / t / 1e6);
        }
    }
    let ghz = effective_clock_ghz().unwrap_or(f64::NAN);
    let base = {
        let mut v = mbs[0].clone();
        v.sort_by(f64::total_cmp);
        v[v.len() - 1]
    };
    for (i, (n, _, _)) in variants.iter().enumerate() {
        let mut v = mbs[i].clone();
        v.sort_by(f64::total_cmp);
        let m = v[v.len() - 1];
        println!(
            "{n:28} {m:7.1} MB/s  {:.3}x  {:.0} cyc/block @{ghz:.2}",
            m / base,
            64.0 / (m * 1e6) * ghz * 1e9
        );
    }
}

/// This thread's CPU time in seconds (descheduled time excluded).
fn thread_cpu() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
