//! `schedlab check`: runs each target's machine code (natively on the host, under qemu-user
//! elsewhere) on test vectors and random inputs, against the reference.

use crate::CliError;
use crate::kernel::{self, Kernel, KernelKind};
use rand::{Rng, SeedableRng, rngs::StdRng};
use schedlab_backend::Target;
use schedlab_backend::emulate::{Md5Case, run_md5_cases};
use schedlab_backend::emulate_bigint::{
    Layout, hostile_mul_add_cases, hostile_square_cases, random_mul_add_cases, random_square_cases,
    run_cases,
};
use schedlab_backend::pipeline::{PipelineConfig, run_ir_stages};
use schedlab_kernels::bigint::Entry;
use schedlab_kernels::md5::{INITIAL_STATE, pad_message};

/// Arguments of `schedlab check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Kernel(s): md5, md5-mb, muladd, square-to-len, `.clif` files or directories of them
    /// (comma-separated); a `.clif` file's run lines are its checks.
    #[arg(long, default_value = "md5")]
    kernel: String,
    /// Scheduling strategies, comma-separated, or `all`.
    #[arg(long)]
    strategy: Option<String>,
    /// Targets, comma-separated (x86_64, aarch64, s390x, riscv64), or `all`.
    #[arg(long)]
    target: Option<String>,
    /// Random cases per kernel × strategy × target.
    #[arg(long, default_value_t = 24)]
    random: usize,
    /// Seed of the random cases.
    #[arg(long, default_value_t = 1321)]
    seed: u64,
    /// Bounds-check elimination: off, merge (one check per block) or predicate (none in the
    /// hot loop, with a checked fallback loop).
    #[arg(long, default_value = "predicate", value_parser = parse_bce)]
    bce: schedlab_passes::bce::BceLevel,
    /// Print only failures and the summary.
    #[arg(long, short)]
    quiet: bool,
}

use schedlab_kernels::md5::RFC1321_SUITE as RFC1321;

fn hex_digest(state: [u32; 4]) -> String {
    state
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A labelled case with its expected outcome, printed on one line.
pub(crate) struct Verdict {
    pub(crate) label: String,
    pub(crate) ok: bool,
    pub(crate) detail: String,
}

/// Tallies results and prints one line per case.
struct Tally {
    passed: usize,
    failed: usize,
    quiet: bool,
}

impl Tally {
    fn record(&mut self, prefix: &str, v: Verdict) {
        if v.ok {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        if !v.ok || !self.quiet {
            let status = if v.ok { "ok" } else { "MISMATCH" };
            println!("{prefix} {:<28} {status} {}", v.label, v.detail);
        }
    }
}

/// Runs `schedlab check`.
pub fn run(args: CheckArgs) -> Result<(), CliError> {
    let (clif_kernels, kernels): (Vec<Kernel>, Vec<Kernel>) = kernel::resolve_list(&args.kernel)?
        .into_iter()
        .partition(|k| k.kind == KernelKind::Clif);
    // `off` (no IR stages) is always part of a `.clif` check; accept it by name too.
    let strategy_spec = args.strategy.as_deref().map(|s| {
        kernel::split_list(s)
            .filter(|n| *n != crate::check_clif::OFF)
            .collect::<Vec<_>>()
            .join(",")
    });
    let strategies = match strategy_spec.as_deref() {
        Some("") => Vec::new(),
        spec => kernel::strategies(spec)?,
    };
    let targets = kernel::targets(args.target.as_deref())?;
    let clif_result = if clif_kernels.is_empty() {
        Ok(())
    } else {
        let mut files: Vec<std::sync::Arc<crate::clif::ClifFile>> = Vec::new();
        for (file, _) in clif_kernels.iter().filter_map(|k| k.clif.as_ref()) {
            if !files.iter().any(|f| std::sync::Arc::ptr_eq(f, file)) {
                files.push(std::sync::Arc::clone(file));
            }
        }
        let check = crate::check_clif::ClifCheck {
            strategies: strategies.clone(),
            targets: targets.clone(),
            bce: args.bce,
            quiet: args.quiet,
        };
        crate::check_clif::run(&files, &check)
    };
    if kernels.is_empty() {
        return clif_result;
    }
    let mut tally = Tally {
        passed: 0,
        failed: 0,
        quiet: args.quiet,
    };
    let mut errors = Vec::new();
    for k in &kernels {
        for strategy in &strategies {
            for &target in &targets {
                let prefix = format!("{} {strategy} {target}", k.name);
                if let Err(e) = check_one(k, strategy, target, &args, &prefix, &mut tally) {
                    println!("{prefix} ERROR {e}");
                    errors.push(format!("{prefix}: {e}"));
                }
            }
        }
    }
    println!(
        "{} passed, {} failed",
        tally.passed,
        tally.failed + errors.len()
    );
    if tally.failed > 0 || !errors.is_empty() {
        return Err(CliError::failure(format!(
            "{} mismatches, {} errors",
            tally.failed,
            errors.len()
        )));
    }
    clif_result
}

fn check_one(
    k: &Kernel,
    strategy: &str,
    target: Target,
    args: &CheckArgs,
    prefix: &str,
    tally: &mut Tally,
) -> Result<(), String> {
    let mut func = k.func.clone();
    let config = PipelineConfig {
        bce: args.bce,
        ..PipelineConfig::with_strategy(strategy)
    };
    run_ir_stages(&mut func, target, &config).map_err(|e| e.to_string())?;
    match k.kind {
        KernelKind::Md5 => check_md5(&func, target, args, prefix, tally),
        KernelKind::Md5Mb => crate::check_mb::check(&func, target, args.random, args.seed, prefix)
            .map(|verdicts| verdicts.into_iter().for_each(|v| tally.record(prefix, v))),
        KernelKind::MulAdd => {
            let mut cases = random_mul_add_cases(args.seed, 1..=args.random.max(1));
            cases.extend(hostile_mul_add_cases(args.seed));
            for layout in Layout::ALL {
                let got = run_cases(&func, target, layout, &cases).map_err(|e| e.to_string())?;
                for (i, (case, out)) in cases.iter().zip(got).enumerate() {
                    let want = case.expected(Entry::Wrapper);
                    tally.record(prefix, verdict(format!("case {i} {layout:?}"), &want, &out));
                }
            }
            Ok(())
        }
        KernelKind::SquareToLen => {
            let mut cases = random_square_cases(args.seed, 1..=args.random.max(1));
            cases.extend(hostile_square_cases(args.seed));
            for layout in Layout::ALL {
                let got = run_cases(&func, target, layout, &cases).map_err(|e| e.to_string())?;
                for (i, (case, out)) in cases.iter().zip(got).enumerate() {
                    let want = case.expected(Entry::Wrapper);
                    tally.record(prefix, verdict(format!("case {i} {layout:?}"), &want, &out));
                }
            }
            Ok(())
        }
        KernelKind::Clif => Ok(()),
    }
}

fn verdict<T: PartialEq + std::fmt::Debug>(label: String, want: &T, got: &T) -> Verdict {
    let ok = want == got;
    Verdict {
        label,
        ok,
        detail: if ok {
            String::new()
        } else {
            format!("expected {want:?}, got {got:?}")
        },
    }
}

fn check_md5(
    func: &cranelift_codegen::ir::Function,
    target: Target,
    args: &CheckArgs,
    prefix: &str,
    tally: &mut Tally,
) -> Result<(), String> {
    let mut cases: Vec<(String, Md5Case)> = RFC1321
        .iter()
        .map(|(msg, _)| {
            (
                format!("rfc1321 {:?}", truncate(msg)),
                Md5Case::whole_blocks(INITIAL_STATE, pad_message(msg.as_bytes()), 0),
            )
        })
        .collect();
    let mut rng = StdRng::seed_from_u64(args.seed);
    for i in 0..args.random {
        let len = rng.random_range(0..600usize);
        let mut buf = vec![0u8; len];
        rng.fill(buf.as_mut_slice());
        let state: [u32; 4] = rng.random();
        // Mostly in-bounds block runs, sometimes hostile offsets and limits.
        let (ofs, limit) = if i % 3 == 2 {
            (
                rng.random_range(-80..len as i32 + 80),
                rng.random_range(-80..len as i32 + 80),
            )
        } else {
            let ofs = rng.random_range(0..=len.min(70) as i32);
            (ofs, len as i32 - 64)
        };
        let case = Md5Case {
            state,
            buf,
            len: len as i32,
            ofs,
            limit,
        };
        cases.push((
            format!("random {i} len={len} ofs={ofs} limit={limit}"),
            case,
        ));
    }
    let just_cases: Vec<Md5Case> = cases.iter().map(|(_, c)| c.clone()).collect();
    let outcomes = run_md5_cases(func, target, &just_cases).map_err(|e| e.to_string())?;
    for (i, ((label, case), got)) in cases.iter().zip(outcomes).enumerate() {
        let want = case.expected();
        let mut v = verdict(label.clone(), &want, &got);
        if let Some((_, digest)) = RFC1321.get(i) {
            // The RFC's digest itself, not only the reference implementation.
            let rfc_ok = got.ret == case.len && hex_digest(got.state) == *digest;
            if !rfc_ok {
                v.ok = false;
                v.detail = format!("digest {} != RFC {digest}", hex_digest(got.state));
            } else {
                v.detail = digest.to_string();
            }
        }
        tally.record(prefix, v);
    }
    Ok(())
}

fn truncate(s: &str) -> String {
    if s.len() > 12 {
        format!("{}…", &s[..12])
    } else {
        s.to_string()
    }
}

fn parse_bce(s: &str) -> Result<schedlab_passes::bce::BceLevel, String> {
    s.parse()
        .map_err(|e: schedlab_passes::bce::BceError| e.to_string())
}
