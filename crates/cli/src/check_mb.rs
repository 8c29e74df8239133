//! `schedlab check --kernel md5-mb`: the multi-buffer kernel against its Rust model, every
//! lane's buffer ending at a guard page (`md5mb_harness.c`).

use crate::check::Verdict;
use crate::kernel::{Kernel, KernelKind};
use rand::{Rng, SeedableRng, rngs::StdRng};
use schedlab_backend::Target;
use schedlab_backend::emulate_mb::{MbCase, run_mb_cases};
use schedlab_kernels::md5::{INITIAL_STATE, RFC1321_SUITE, pad_message};
use schedlab_kernels::md5_mb::{self, GROUP_LANES, state_index};

/// The `md5-mb` kernels with the given group counts (1: four lanes, 2: eight).
pub fn kernels(groups: &[usize]) -> Vec<Kernel> {
    groups
        .iter()
        .map(|&g| Kernel {
            name: format!("md5-mb-x{}", g * GROUP_LANES),
            kind: KernelKind::Md5Mb,
            func: md5_mb::compress_lanes(g),
            clif: None,
        })
        .collect()
}

/// Why `target` cannot compile a kernel of `kind`, if it cannot (only `md5-mb` on riscv64).
pub fn unsupported(kind: KernelKind, target: Target) -> Option<String> {
    (kind == KernelKind::Md5Mb && target == Target::Riscv64).then(|| {
        "md5-mb needs SIMD: schedlab's riscv64 target is RV64GC, and Cranelift lowers i32x4 \
         only with the V extension (not enabled for this target); unsupported"
            .to_string()
    })
}

/// Runs the cases for `func` (after the IR stages) on `target`; one verdict per case. A
/// target without the SIMD support the kernel needs is reported (`prefix UNSUPPORTED why`)
/// and has no cases.
pub fn check(
    func: &cranelift_codegen::ir::Function,
    target: Target,
    random: usize,
    seed: u64,
    prefix: &str,
) -> Result<Vec<Verdict>, String> {
    if let Some(reason) = unsupported(KernelKind::Md5Mb, target) {
        println!("{prefix} UNSUPPORTED {reason}");
        return Ok(Vec::new());
    }
    let lanes = lanes_of(func)?;
    let mut labelled = rfc_cases(lanes);
    labelled.extend(random_cases(lanes, random, seed));
    let cases: Vec<MbCase> = labelled.iter().map(|(_, c)| c.clone()).collect();
    let outcomes = run_mb_cases(func, target, &cases).map_err(|e| e.to_string())?;
    Ok(labelled
        .iter()
        .zip(outcomes)
        .map(|((label, case), got)| {
            let want = case.expected();
            let ok = want == got;
            Verdict {
                label: label.clone(),
                ok,
                detail: if ok {
                    String::new()
                } else {
                    format!("expected {want:?}, got {got:?}")
                },
            }
        })
        .collect())
}

fn lanes_of(func: &cranelift_codegen::ir::Function) -> Result<usize, String> {
    let name = func.name.to_string();
    for groups in [1, 2] {
        if name.ends_with(&md5_mb::function_name(groups)) {
            return Ok(groups * GROUP_LANES);
        }
    }
    Err(format!("{name} is not an md5-mb kernel"))
}

fn initial_state(lanes: usize) -> Vec<u32> {
    let mut state = vec![0u32; 4 * lanes];
    for lane in 0..lanes {
        for (w, word) in INITIAL_STATE.into_iter().enumerate() {
            state[state_index(lane, w)] = word;
        }
    }
    state
}

/// Every RFC 1321 message of at most one padded block in every lane position (the others
/// hashing other suite messages of the same block count).
fn rfc_cases(lanes: usize) -> Vec<(String, MbCase)> {
    let padded: Vec<Vec<u8>> = RFC1321_SUITE
        .iter()
        .map(|(m, _)| pad_message(m.as_bytes()))
        .collect();
    let mut cases = Vec::new();
    for blocks in [1usize, 2] {
        let same: Vec<&Vec<u8>> = padded.iter().filter(|p| p.len() == 64 * blocks).collect();
        for (i, msg) in same.iter().enumerate() {
            for position in 0..lanes {
                let lanes_data = (0..lanes)
                    .map(|l| {
                        let m = if l == position {
                            *msg
                        } else {
                            same[(i + l + 1) % same.len()]
                        };
                        (m.clone(), m.len() as i32, 0)
                    })
                    .collect();
                cases.push((
                    format!("rfc1321 #{i}/{blocks} in lane {position}"),
                    MbCase {
                        state: initial_state(lanes),
                        lanes: lanes_data,
                        blocks: blocks as i32,
                    },
                ));
            }
        }
    }
    cases
}

/// Random in-bounds runs and, every third case, hostile lengths and offsets in one lane.
fn random_cases(lanes: usize, count: usize, seed: u64) -> Vec<(String, MbCase)> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|i| {
            let blocks = rng.random_range(0..5i32);
            let hostile = i % 3 == 2;
            let bad_lane = rng.random_range(0..lanes);
            let lanes_data = (0..lanes)
                .map(|l| {
                    let ofs = rng.random_range(0..70i32);
                    let mut len = (ofs + 64 * blocks) as usize;
                    let mut ofs = ofs;
                    if hostile && l == bad_lane {
                        len = len.saturating_sub(rng.random_range(1..20));
                        if rng.random_bool(0.3) {
                            ofs = rng.random_range(-80..0);
                        }
                    }
                    let mut buf = vec![0u8; len];
                    rng.fill(buf.as_mut_slice());
                    (buf, len as i32, ofs)
                })
                .collect();
            let state = (0..4 * lanes).map(|_| rng.random()).collect();
            (
                format!(
                    "random {i} blocks={blocks}{}",
                    if hostile { " hostile" } else { "" }
                ),
                MbCase {
                    state,
                    lanes: lanes_data,
                    blocks,
                },
            )
        })
        .collect()
}
