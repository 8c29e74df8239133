//! `schedlab report`, `check` and `dump` as a user runs them.

mod common;

use common::{
    json, rows, schedlab, schedlab_plotting, stderr, stdout, success_stdout, temp_file,
    untimed_rows,
};

const KEYS: [&str; 11] = [
    "kernel",
    "strategy",
    "target",
    "spills",
    "reloads",
    "frame_bytes",
    "insts",
    "code_bytes",
    "max_pressure",
    "checks_per_block",
    "checks_per_block_unoptimized",
];

#[test]
fn json_has_every_strategy_on_four_targets() {
    let out = schedlab(&["report", "--format", "json"]);
    let doc = json(&out);
    let rows = rows(&doc);
    let strategies = schedlab_passes::sched::strategy_names();
    assert_eq!(rows.len(), strategies.len() * 4);
    for row in rows {
        for key in KEYS {
            assert!(row.get(key).is_some(), "missing {key} in {row}");
        }
        assert_eq!(row["checks_per_block_unoptimized"], 16, "{row}");
        assert_eq!(row["checks_per_block"], 0, "{row}");
    }
    let spills = |strategy: &str, target: &str| {
        rows.iter()
            .find(|r| r["strategy"] == strategy && r["target"] == target)
            .and_then(|r| r["spills"].as_u64())
            .expect("row present")
    };
    // Graal's placement spills on x86_64; load rematerialisation removes AArch64's spills.
    assert!(spills("hoist-loads", "x86_64") > 0);
    assert_eq!(spills("remat-loads", "aarch64"), 0);
    assert!(spills("remat-loads", "x86_64") < spills("hoist-loads", "x86_64"));
}

/// The lines of `report ARGS --summary --format csv`, checked to be one rectangular table: one
/// header line (starting with `header_start`) and rows of as many fields.
fn summary_csv(args: &[&str], header_start: &str) -> Vec<String> {
    one_csv_table(&[args, &["--summary"]].concat(), header_start)
}

/// `report ARGS --format csv`: one header line starting `header_start`, every line as many
/// fields, no rows' table after another; its lines.
fn one_csv_table(args: &[&str], header_start: &str) -> Vec<String> {
    let mut full = vec!["report"];
    full.extend_from_slice(args);
    full.extend(["--format", "csv"]);
    let out = schedlab(&full);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header = lines.first().expect("a header line");
    assert!(header.starts_with(header_start), "{text}");
    let fields = header.split(',').count();
    for line in &lines[1..] {
        assert_eq!(line.split(',').count(), fields, "not rectangular:\n{text}");
        assert!(!line.starts_with(header_start), "a second header:\n{text}");
        assert!(!line.starts_with("kernel,"), "the rows' table too:\n{text}");
    }
    lines
}

#[test]
fn summary_csv_is_one_table() {
    let targets = ["--target", "x86_64,aarch64"];
    let strategies = ["--strategy", "source,hoist-loads"];
    let lines = summary_csv(
        &[&targets[..], &strategies[..]].concat(),
        "target,strategy,",
    );
    assert_eq!(lines.len(), 1 + 2 * 2, "a row per target and strategy");
    // Against stock: a row per program, target and strategy (stock's own included).
    let lines = summary_csv(
        &[&targets[..], &strategies[..], &["--baseline"]].concat(),
        "program,target,strategy,",
    );
    for target in ["x86_64", "aarch64"] {
        for strategy in ["source", "hoist-loads", "cranelift-speed"] {
            let cells = format!(",{target},{strategy},");
            assert!(
                lines.iter().any(|l| l.contains(&cells)),
                "no row {cells}: {lines:?}"
            );
        }
    }
}

#[test]
fn optimum_summary_csv_is_one_table() {
    // With `--optimum` the one table is the distances from the optimum: no rows, no prose.
    let lines = summary_csv(
        &[
            "--kernel",
            "muladd",
            "--target",
            "x86_64,aarch64",
            "--strategy",
            "source,optimal",
            "--optimum",
        ],
        "target,strategy,blocks,pressure gap %,",
    );
    assert_eq!(lines.len(), 1 + 2 * 2, "a row per target and strategy");
    // Without `--summary` the one table is the optimum per block.
    let lines = one_csv_table(
        &[
            "--kernel",
            "muladd",
            "--target",
            "x86_64",
            "--strategy",
            "source,optimal",
            "--optimum",
        ],
        "kernel,target,block,nodes,",
    );
    assert!(lines.len() > 1, "a row per block");
    assert!(lines[1..].iter().all(|l| l.starts_with("muladd,x86_64,")));
}

#[test]
fn csv_markdown_and_mca_columns() {
    let out = schedlab(&[
        "report",
        "--strategy",
        "source",
        "--target",
        "x86_64,aarch64",
        "--format",
        "csv",
        "--mca",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let header = text.lines().next().expect("header");
    assert!(
        header.starts_with("kernel,strategy,target,spills"),
        "{header}"
    );
    assert!(
        header.contains("mca_znver3") && header.contains("mca_thunderx2t99"),
        "{header}"
    );
    assert_eq!(text.lines().count(), 3);
    let md = schedlab(&["report", "--strategy", "source", "--format", "markdown"]);
    assert!(
        stdout(&md)
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("| ---"))
    );
}

#[test]
fn lazy_slow_path_reports_the_function_the_jit_compiles() {
    let row = |slow: &str, target: &str| {
        let out = schedlab(&[
            "report",
            "--format",
            "json",
            "--strategy",
            "remat-loads",
            "--target",
            target,
            "--slow-path",
            slow,
        ]);
        json(&out)["rows"][0].clone()
    };
    for target in ["x86_64", "aarch64", "s390x", "riscv64"] {
        let (eager, lazy) = (row("eager", target), row("lazy", target));
        let insts = |r: &serde_json::Value| r["insts"].as_u64().expect("insts");
        // Without the checked loop copy the function is about half as long.
        assert!(
            insts(&lazy) * 10 < insts(&eager) * 7,
            "{target}: {lazy} vs {eager}"
        );
        assert!(
            lazy["spills"].as_u64() <= eager["spills"].as_u64(),
            "{target}"
        );
        assert_eq!(lazy["checks_per_block"], 0);
    }
    let dump = schedlab(&["dump", "--stage", "bce", "--slow-path", "lazy"]);
    assert!(dump.status.success(), "{}", stderr(&dump));
    assert_eq!(stdout(&dump).matches("call_indirect").count(), 1);
}

#[test]
fn plot_writes_an_svg() {
    let args = ["report", "--target", "x86_64,aarch64"];
    let (out, svg) = schedlab_plotting(&args, "--plot", "spills.svg");
    assert!(out.status.success(), "{}", stderr(&out));
    let svg = svg.expect("svg written");
    assert!(
        svg.starts_with("<svg") && svg.contains("remat-loads"),
        "{}",
        &svg[..200.min(svg.len())]
    );
}

#[test]
fn bad_input_is_exit_2_with_a_message_never_a_panic() {
    let (_dir, bad) = temp_file("bad.clif", "function %f() {\nblock0:\n  v0 = iadd 1\n}\n");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["report".into(), "--kernel".into(), bad.clone()],
            "bad.clif:3:",
        ),
        (
            vec!["report".into(), "--strategy".into(), "nope".into()],
            "valid strategies: source",
        ),
        (
            vec!["report".into(), "--target".into(), "mips".into()],
            "valid targets: x86_64",
        ),
        (
            vec!["report".into(), "--kernel".into(), "sha1".into()],
            "valid kernels: md5",
        ),
        (
            vec!["report".into(), "--bce".into(), "most".into()],
            "valid levels: off",
        ),
        (
            vec!["dump".into(), "--stage".into(), "ir".into()],
            "possible values",
        ),
        (
            vec!["check".into(), "--kernel".into(), bad.clone()],
            "bad.clif:3:",
        ),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = schedlab(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "{err}"
        );
    }
}

#[test]
fn a_clif_file_is_reported_with_its_functions() {
    let (_dir, path) = temp_file(
        "two.clif",
        "function %add(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n  v2 = iadd v0, v1\n  return v2\n}\n\
         function %mul(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n  v2 = imul v0, v1\n  return v2\n}\n",
    );
    let out = schedlab(&[
        "report",
        "--kernel",
        &path,
        "--strategy",
        "source,shuffle",
        "--format",
        "json",
    ]);
    assert_eq!(rows(&json(&out)).len(), 2 * 2 * 4);
}

#[test]
fn dump_shows_each_stage() {
    let clif = stdout(&schedlab(&["dump", "--stage", "clif"]));
    let bce = stdout(&schedlab(&["dump", "--stage", "bce"]));
    let asm = stdout(&schedlab(&[
        "dump", "--stage", "asm", "--target", "aarch64",
    ]));
    assert_eq!(clif.matches("icmp ult").count(), 16, "16 checks as built");
    assert!(bce.matches("icmp ult").count() < 16, "fewer after BCE");
    assert!(
        asm.contains("ldr") && asm.contains("ret"),
        "{}",
        &asm[..300.min(asm.len())]
    );
}

/// Emulator-dependent: skipped with a message unless every target's cross gcc, C library and
/// qemu are present; failed, naming the Debian packages, under `SCHEDLAB_REQUIRE_TOOLS=1`.
fn emulators_ready() -> bool {
    use schedlab_backend::{Target, emulate::toolchain_status, tools::test_can_use};
    Target::ALL
        .into_iter()
        .all(|target| test_can_use(toolchain_status(target)))
}

#[test]
fn check_passes_for_every_strategy_on_every_target() {
    if !emulators_ready() {
        return;
    }
    let out = schedlab(&["check", "--random", "6", "--quiet"]);
    let text = success_stdout(&out);
    let summary = text.lines().last().expect("summary line");
    // Every case of the registry entry, flush against the guard page at its end and at its start.
    use schedlab_kernels::registry::{CaseOptions, Kernel};
    let options = CaseOptions {
        seed: 1321,
        random: 6,
    };
    let per_target = 2 * schedlab_kernels::md5::KERNEL.cases(&options).len();
    let expected = schedlab_passes::sched::strategy_names().len() * 4 * per_target;
    assert_eq!(summary, format!("{expected} passed, 0 failed"));
}

#[test]
fn check_runs_the_biginteger_kernels_on_every_target() {
    if !emulators_ready() {
        return;
    }
    let out = schedlab(&[
        "check",
        "--kernel",
        "muladd,square-to-len",
        "--strategy",
        "remat-loads",
        "--random",
        "8",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).trim_end().ends_with("0 failed"));
}

/// Whether llvm-mca and llvm-objdump (Debian `llvm-14`) and `llvm-mca-19` (`llvm-19`) are
/// installed; a missing one fails under `SCHEDLAB_REQUIRE_TOOLS=1` (CI), else skips.
fn llvm_tools_ready() -> bool {
    [
        ("llvm-mca-14", "llvm-14"),
        ("llvm-objdump-14", "llvm-14"),
        ("llvm-mca-19", "llvm-19"),
    ]
    .into_iter()
    .all(|(program, package)| common::tool_usable(program, package))
}

#[test]
fn no_mca_figure_is_below_the_bound_unless_marked() {
    if !llvm_tools_ready() {
        return;
    }
    let out = schedlab(&[
        "report",
        "--format",
        "json",
        "--mca",
        "--target",
        "x86_64,aarch64,s390x",
        "--slow-path",
        "lazy",
        "--strategy",
        "list-latency,source,remat-loads",
    ]);
    let rows = common::json(&out);
    let rows = rows["rows"].as_array().expect("the rows");
    assert_eq!(rows.len(), 9);
    // s390x is costed by schedlab's own z15 model too, not by llvm-mca alone.
    for row in rows.iter().filter(|r| r["target"] == "s390x") {
        let z15 = row["model"]["z15"].as_f64();
        assert!(z15.is_some_and(|v| v > 0.0), "no z15 model figure: {row}");
    }
    // On x86_64 the lead is the schedule simulation, which `--mca` runs: somewhere it is
    // above its core's bound.
    let simulated_above_bound = rows.iter().filter(|r| r["target"] == "x86_64").any(|row| {
        row["model"].as_object().is_some_and(|model| {
            model
                .iter()
                .any(|(cpu, v)| v.as_f64() > row["model_bound"][cpu.as_str()].as_f64())
        })
    });
    assert!(simulated_above_bound, "no simulated figure above its bound");
    let mut marked = 0;
    for row in rows {
        let bound = row["recurrence_bound"].as_f64().expect("a bound per row");
        // The kernels' hot code is their loop.
        assert_eq!(row["hot_code_is_loop"], true, "{row}");
        let model = row["model"].as_object().expect("own model per core");
        let mca = row["mca"].as_object().expect("llvm-mca per core");
        let below: Vec<&str> = row["mca_below_bound"]
            .as_array()
            .expect("flag list")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        let core_bounds = row["model_bound"].as_object().expect("own bound per core");
        // The lead figure (the own model: the simulation on x86_64) is never below the row's
        // bound, nor below its own core's bound.
        for (cpu, v) in model {
            let v = v.as_f64().expect("number");
            assert!(v >= bound, "{cpu}: {row}");
            let core = core_bounds.get(cpu).and_then(|b| b.as_f64());
            assert!(core.is_some_and(|b| v >= b), "{cpu}: {row}");
        }
        for (cpu, v) in mca {
            let v = v.as_f64().expect("number");
            let core_bound = core_bounds
                .get(cpu)
                .and_then(|b| b.as_f64())
                .unwrap_or(bound);
            if v < core_bound {
                assert!(
                    below.contains(&cpu.as_str()),
                    "{cpu} {v} < {core_bound} unmarked: {row}"
                );
                marked += 1;
            } else {
                assert!(
                    !below.contains(&cpu.as_str()),
                    "{cpu} marked but {v} >= {core_bound}"
                );
            }
        }
        let loop_spills = row["loop_spills"].as_u64().expect("loop_spills");
        let loop_reloads = row["loop_reloads"].as_u64().expect("loop_reloads");
        assert!(
            loop_spills <= row["spills"].as_u64().expect("spills"),
            "{row}"
        );
        assert!(
            loop_reloads <= row["reloads"].as_u64().expect("reloads"),
            "{row}"
        );
    }
    eprintln!("{marked} llvm-mca figures marked below their bound");
    // The table marks what JSON flags, and explains the mark.
    let table = schedlab(&[
        "report",
        "--mca",
        "--target",
        "x86_64",
        "--slow-path",
        "lazy",
        "--strategy",
        "list-latency,remat-loads",
    ]);
    let text = success_stdout(&table);
    let header = text.lines().next().expect("header");
    assert!(
        header.contains("loop sp/rl") && header.contains("bound"),
        "{header}"
    );
    if text.contains('*') {
        assert!(text.contains("* llvm-mca figure below"), "{text}");
    }
}

#[test]
fn baseline_rows_pressure_plot_and_isa_choice() {
    let args = [
        "report",
        "--strategy",
        "hoist-loads,remat-loads",
        "--target",
        "x86_64,aarch64",
        "--slow-path",
        "lazy",
        "--baseline",
        "--format",
        "json",
    ];
    let (out, plot) = schedlab_plotting(&args, "--plot-pressure", "pressure.svg");
    let doc = json(&out);
    let rows = rows(&doc);
    assert_eq!(
        rows.len(),
        2 * 2 + 2,
        "two strategies and the baseline on two targets"
    );
    let baseline: Vec<_> = rows
        .iter()
        .filter(|r| r["strategy"] == "cranelift-speed")
        .collect();
    assert_eq!(baseline.len(), 2);
    for r in baseline {
        assert!(r["insts"].as_u64().is_some_and(|n| n > 0), "{r}");
    }
    let text = plot.expect("the plot was written");
    assert!(
        text.contains("register budget (14)"),
        "x86_64's budget line"
    );
    assert!(
        text.contains("register budget (26)"),
        "AArch64's budget line"
    );

    // The named level is the default and gives the same rows as asking for it; `native`
    // is accepted (on a non-x86_64 host it changes nothing).
    let level = schedlab(&["report", "--strategy", "remat-loads", "--target", "x86_64"]);
    let named = schedlab(&[
        "report",
        "--strategy",
        "remat-loads",
        "--target",
        "x86_64",
        "--isa",
        "level",
    ]);
    assert!(level.status.success() && named.status.success());
    assert_eq!(stdout(&level), stdout(&named));
    let native = schedlab(&["report", "--target", "x86_64", "--isa", "native"]);
    assert!(native.status.success(), "{}", stderr(&native));
}

#[test]
fn rows_that_share_code_get_the_figures_they_get_alone() {
    // Strategies often agree on a schedule, or disagree only where code generation erases the
    // difference: such rows are costed once. Each strategy reported alone shares with none.
    const STRATEGIES: [&str; 8] = [
        "source",
        "hoist-loads",
        "sink-loads",
        "remat-loads",
        "list-latency",
        "pressure",
        "latency-pressure",
        "balanced",
    ];
    let report = |strategies: &str| {
        untimed_rows(&schedlab(&[
            "report",
            "--kernel",
            "md5,muladd",
            "--strategy",
            strategies,
            "--optimize-both",
            "--target",
            "x86_64,aarch64",
            "--format",
            "jsonl",
        ]))
    };
    let together = report(&STRATEGIES.join(","));
    for strategy in STRATEGIES {
        let egraph = format!("{strategy}+egraph");
        let shared: Vec<serde_json::Value> = together
            .iter()
            .filter(|r| r["strategy"] == strategy || r["strategy"] == egraph.as_str())
            .cloned()
            .collect();
        assert_eq!(shared, report(strategy), "{strategy}");
    }
}
