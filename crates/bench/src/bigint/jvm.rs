//! The HotSpot rows of the BigInteger benches: `benches/java/BigIntegerBench.java` (embedded in
//! the binary), one `java` process per variant and repetition, with HotSpot's `SquareToLen`
//! and `MulAdd` intrinsics both on or both off.

pub use crate::jvm::JvmVariant;
use crate::jvm::{JavaProgram, harness_field, no_results};
use std::time::Duration;

/// The harness source, the same file that lives in `benches/java/`.
const SOURCE: &str = include_str!("../../../../benches/java/BigIntegerBench.java");

/// `BigInteger.squareToLen` and `mulAdd` are private: the harness calls them through a
/// `MethodHandle`, which needs `java.math` opened to it.
const ADD_OPENS: [&str; 2] = ["--add-opens", "java.base/java.math=ALL-UNNAMED"];

/// HotSpot with both intrinsics, and without (C2-compiled `implSquareToLen`/`implMulAdd`).
pub const VARIANTS: [JvmVariant; 2] = [
    JvmVariant {
        name: "hotspot/intrinsic",
        flags: &[
            "-XX:+UnlockDiagnosticVMOptions",
            "-XX:+UseSquareToLenIntrinsic",
            "-XX:+UseMulAddIntrinsic",
        ],
        intrinsic: true,
    },
    JvmVariant {
        name: "hotspot/no-intrinsic",
        flags: &[
            "-XX:+UnlockDiagnosticVMOptions",
            "-XX:-UseSquareToLenIntrinsic",
            "-XX:-UseMulAddIntrinsic",
        ],
        intrinsic: false,
    },
];

/// Every option passed to `java` for `variant`: the module opening and its `-XX:` flags.
pub fn java_options(variant: &JvmVariant) -> Vec<&'static str> {
    ADD_OPENS.iter().chain(variant.flags).copied().collect()
}

/// One size and mode from one JVM process.
#[derive(Clone, Debug, PartialEq)]
pub struct JvmSample {
    /// Harness mode (`square-to-len`, `multiply`, `mul-add`).
    pub mode: String,
    /// The size as passed (`seed` or bits).
    pub size: String,
    /// Median nanoseconds per call over the harness's rounds.
    pub ns_per_op: f64,
    /// Java's `BigInteger.hashCode` of the result, in hex.
    pub digest: String,
}

/// What one JVM process reported.
#[derive(Clone, Debug, PartialEq)]
pub struct JvmRun {
    /// `java.version`.
    pub java_version: String,
    /// `UseSquareToLenIntrinsic` and `UseMulAddIntrinsic` as the VM saw them.
    pub flags: [String; 2],
    /// One sample per size and mode.
    pub samples: Vec<JvmSample>,
    /// Modes the harness could not run, with its reason.
    pub skipped: Vec<(String, String)>,
}

/// The compiled harness.
pub struct Harness {
    program: JavaProgram,
}

impl Harness {
    /// Writes and compiles the harness; `Err` says why the JVM rows are absent.
    pub fn prepare() -> Result<Self, String> {
        JavaProgram::prepare("BigIntegerBench", SOURCE).map(|program| Self { program })
    }

    /// Runs one JVM process of `variant` over `sizes` in `modes`.
    pub fn run(
        &self,
        variant: &JvmVariant,
        sizes: &[String],
        modes: &[&str],
        warmup: Duration,
        budget: Duration,
    ) -> Result<JvmRun, String> {
        let timed = u32::try_from(sizes.len() * modes.len()).unwrap_or(u32::MAX);
        let timeout = warmup + budget * timed + Duration::from_secs(60);
        let args = [
            sizes.join(","),
            warmup.as_millis().to_string(),
            budget.as_millis().to_string(),
            "5".to_string(),
            modes.join(","),
        ];
        let stdout = self
            .program
            .run(variant.name, &java_options(variant), &args, timeout)?;
        let run = parse(&stdout)?;
        let wanted = variant.intrinsic.to_string();
        for (flag, value) in ["UseSquareToLenIntrinsic", "UseMulAddIntrinsic"]
            .iter()
            .zip(&run.flags)
        {
            if value != "unknown" && *value != wanted {
                return Err(format!(
                    "{}: the VM reports {flag}={value} (wanted {wanted})",
                    variant.name
                ));
            }
        }
        Ok(run)
    }
}

/// Parses the harness's `BIGINTBENCH` lines.
pub fn parse(stdout: &str) -> Result<JvmRun, String> {
    let mut run = JvmRun {
        java_version: String::new(),
        flags: ["unknown".into(), "unknown".into()],
        samples: Vec::new(),
        skipped: Vec::new(),
    };
    let mut saw_vm = false;
    for line in stdout.lines() {
        let field = |key: &str| harness_field(line, key);
        let bad = || format!("malformed harness line `{line}`");
        match line.split_whitespace().next() {
            Some("BIGINTBENCH-VM") => {
                saw_vm = true;
                run.java_version = field("java.version").unwrap_or_default();
                for (slot, key) in run
                    .flags
                    .iter_mut()
                    .zip(["UseSquareToLenIntrinsic", "UseMulAddIntrinsic"])
                {
                    *slot = field(key).unwrap_or_else(|| "unknown".into());
                }
            }
            Some("BIGINTBENCH") => {
                if field("check").as_deref() != Some("ok") {
                    return Err(format!("the JVM's own result check failed: `{line}`"));
                }
                run.samples.push(JvmSample {
                    mode: field("mode").ok_or_else(bad)?,
                    size: field("size").ok_or_else(bad)?,
                    ns_per_op: field("ns_per_call")
                        .and_then(|s| s.parse::<f64>().ok())
                        .filter(|x| x.is_finite() && *x > 0.0)
                        .ok_or_else(bad)?,
                    digest: field("digest").ok_or_else(bad)?,
                });
            }
            Some("BIGINTBENCH-SKIP") => {
                let mode = field("mode").ok_or_else(bad)?;
                let reason = field("reason").unwrap_or_default().replace('_', " ");
                run.skipped.push((mode, reason));
            }
            _ => {}
        }
    }
    if !saw_vm || (run.samples.is_empty() && run.skipped.is_empty()) {
        return Err(no_results(stdout));
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_harness_output() {
        let out = "BIGINTBENCH-VM java.version=17.0.15 UseSquareToLenIntrinsic=true \
                   UseMulAddIntrinsic=false\n\
                   BIGINTBENCH mode=square-to-len size=seed bits=1075 ints=34 calls=9 \
                   ns_per_call=213.5 samples=1,2 digest=841015d7 check=ok\n\
                   BIGINTBENCH-SKIP mode=mul-add reason=not_accessible\n";
        let run = parse(out).expect("parses");
        assert_eq!(run.java_version, "17.0.15");
        assert_eq!(run.flags, ["true".to_string(), "false".to_string()]);
        assert_eq!(
            run.samples,
            vec![JvmSample {
                mode: "square-to-len".into(),
                size: "seed".into(),
                ns_per_op: 213.5,
                digest: "841015d7".into(),
            }]
        );
        assert_eq!(
            run.skipped,
            vec![("mul-add".to_string(), "not accessible".to_string())]
        );
    }

    #[test]
    fn rejects_failed_checks_and_malformed_lines() {
        assert!(parse("").is_err());
        let vm = "BIGINTBENCH-VM java.version=17\n";
        assert!(parse(&format!("{vm}BIGINTBENCH mode=multiply size=256 check=ok")).is_err());
        assert!(
            parse(&format!(
                "{vm}BIGINTBENCH mode=multiply size=256 ns_per_call=1 digest=a check=FAILED"
            ))
            .is_err()
        );
    }

    #[test]
    fn the_embedded_harness_knows_every_mode_used() {
        for mode in ["multiply", "square-to-len", "mul-add"] {
            assert!(SOURCE.contains(&format!("\"{mode}\"")), "{mode}");
        }
    }
}
