//! Executing the multi-buffer MD5 kernel (`md5-mb`) for any target: linked with
//! `harness/md5mb_harness.c` (natively on the host, under qemu-user elsewhere), every lane's
//! buffer ending at a guard page.

use crate::emulate::{EmulateError, Harness, run_harness, toolchain_status};
use crate::object::emit_object;
use crate::target::Target;
use cranelift_codegen::ir::Function;
use schedlab_kernels::md5_mb::{LaneInput, java_compress_lanes};
use std::fmt::Write as _;

/// The multi-buffer harness.
pub const MD5_MB_HARNESS: Harness = Harness {
    name: "md5mb_harness",
    source: include_str!("../harness/md5mb_harness.c"),
};

/// One call of the kernel: the state (four words per lane, the kernel's layout), each lane's
/// buffer, Java length and first offset, and the block count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MbCase {
    /// Four `u32` words per lane ([`schedlab_kernels::md5_mb::state_index`]).
    pub state: Vec<u32>,
    /// Per lane: the buffer, its Java length (at most the buffer's), the first offset.
    pub lanes: Vec<(Vec<u8>, i32, i32)>,
    /// Blocks to compress in every lane.
    pub blocks: i32,
}

/// What a call returned and left in the state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MbOutcome {
    /// The kernel's return value.
    pub ret: i32,
    /// The state afterwards.
    pub state: Vec<u32>,
}

impl MbCase {
    /// The outcome of the Rust model ([`java_compress_lanes`]).
    pub fn expected(&self) -> MbOutcome {
        let mut state = self.state.clone();
        let lanes: Vec<LaneInput<'_>> = self
            .lanes
            .iter()
            .map(|(buf, len, ofs)| LaneInput {
                buf,
                len: *len,
                ofs: *ofs,
            })
            .collect();
        let ret = java_compress_lanes(&mut state, &lanes, self.blocks);
        MbOutcome { ret, state }
    }

    fn check(&self, index: usize) -> Result<(), EmulateError> {
        let bad = |message: &str| EmulateError::BadCase {
            index,
            message: message.to_string(),
        };
        if self.state.len() != 4 * self.lanes.len() {
            return Err(bad("four state words per lane"));
        }
        if self
            .lanes
            .iter()
            .any(|(buf, len, _)| usize::try_from(*len).map_or(true, |l| l > buf.len()))
        {
            return Err(bad("a lane's len is negative or exceeds its buffer"));
        }
        Ok(())
    }
}

/// Runs `func` (an `md5-mb` kernel after the pipeline's IR stages) compiled for `target` on
/// every case through the harness.
pub fn run_mb_cases(
    func: &Function,
    target: Target,
    cases: &[MbCase],
) -> Result<Vec<MbOutcome>, EmulateError> {
    toolchain_status(target)?;
    for (i, case) in cases.iter().enumerate() {
        case.check(i)?;
    }
    let object = emit_object(func, target)?;
    let mut input = String::new();
    for case in cases {
        let _ = write!(input, "{} {}", case.lanes.len(), case.blocks);
        for w in &case.state {
            let _ = write!(input, " {w}");
        }
        for (buf, len, ofs) in &case.lanes {
            let _ = write!(input, " {len} {ofs} ");
            if buf.is_empty() {
                input.push('-');
            }
            for byte in buf {
                let _ = write!(input, "{byte:02x}");
            }
        }
        input.push('\n');
    }
    let output = run_harness(&object, &MD5_MB_HARNESS, &input)?;
    let bad = |line: usize, text: &str| EmulateError::Output {
        target,
        harness: MD5_MB_HARNESS.name.to_string(),
        line,
        text: text.to_string(),
    };
    let mut outcomes = Vec::with_capacity(cases.len());
    for (i, (text, case)) in output.lines().zip(cases).enumerate() {
        let mut fields = text.split_whitespace();
        let ret: i32 = fields
            .next()
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| bad(i + 1, text))?;
        let state: Vec<u32> = fields
            .map(|f| f.parse().map_err(|_| bad(i + 1, text)))
            .collect::<Result<_, _>>()?;
        if state.len() != case.state.len() {
            return Err(bad(i + 1, text));
        }
        outcomes.push(MbOutcome { ret, state });
    }
    if outcomes.len() != cases.len() {
        return Err(bad(
            0,
            &format!("{} result lines for {} cases", outcomes.len(), cases.len()),
        ));
    }
    Ok(outcomes)
}
