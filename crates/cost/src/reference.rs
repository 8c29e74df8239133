//! Hand-written reference loops: what an intrinsic built on a CPU's cryptographic extension
//! needs per iteration, costed by llvm-mca beside schedlab's compiled kernels.
//!
//! OpenJDK answers `-XX:+UseSHA256Intrinsics` with stubs built on the SHA instructions of the
//! CPU (AArch64's FEAT_SHA256, x86's SHA extensions). schedlab cannot run those stubs, but it
//! can cost the same instruction shape: each reference is one iteration of a block loop written
//! for schedlab from the instructions' architectural definitions (`reference/*.s`, with their
//! register conventions in the header comments). A test runs every reference on its target
//! (natively or under qemu) against the `sha2` crate, so a figure here always belongs to code
//! that computes the real function.
//!
//! schedlab's own model ([`crate::loop_cost`]) has no latencies for these instructions, so the
//! figures come from llvm-mca only, on the cores that implement the extension.

use crate::mca::{McaError, mca_cost_source};
use schedlab_backend::target::Target;

/// One hand-written reference loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The registered kernel (`schedlab list`) whose function this loop computes.
    pub kernel: &'static str,
    /// Short name, e.g. `sha256-ce`.
    pub name: &'static str,
    /// The target whose instructions it uses.
    pub target: Target,
    /// The ISA extension it needs.
    pub extension: &'static str,
    /// What it stands for.
    pub stands_for: &'static str,
    /// What one iteration of the loop processes.
    pub iteration: &'static str,
    /// The llvm-mca CPU models it is costed on: the cores that have the extension.
    pub cpus: &'static [&'static str],
    /// The llvm-mca `-mattr` that enables the extension where a CPU model leaves it optional.
    pub mattr: Option<&'static str>,
    /// The loop body in llvm-mca's assembly syntax, ending in its back edge.
    pub source: &'static str,
    /// Assembly before the loop that makes it a C-callable function (its signature is in the
    /// file's header) and after it (storing the state back).
    pub entry: &'static str,
    /// See [`Reference::entry`].
    pub exit: &'static str,
    /// The function's symbol.
    pub symbol: &'static str,
}

/// Every reference loop, in report order.
pub const REFERENCES: [Reference; 2] = [
    Reference {
        kernel: "sha256",
        name: "sha256-ce",
        target: Target::Aarch64,
        extension: "FEAT_SHA256 (Armv8 cryptographic extension)",
        stands_for: "HotSpot's AArch64 SHA-256 stub (-XX:+UseSHA256Intrinsics)",
        iteration: "one 64-byte block",
        cpus: &["thunderx2t99", "cortex-a72", "neoverse-n1", "neoverse-v2"],
        // Armv9 makes FEAT_SHA256 optional, so LLVM's neoverse-v2 model needs it named.
        mattr: Some("+sha2"),
        source: include_str!("reference/aarch64_sha256_ce.s"),
        entry: include_str!("reference/aarch64_sha256_ce_entry.s"),
        exit: include_str!("reference/aarch64_sha256_ce_exit.s"),
        symbol: "schedlab_reference_sha256_ce",
    },
    Reference {
        kernel: "sha256",
        name: "sha256-ni",
        target: Target::X86_64,
        extension: "SHA extensions (SHA-NI)",
        stands_for: "HotSpot's and OpenSSL's x86_64 SHA-NI code paths",
        iteration: "one 64-byte block",
        // Skylake has no SHA extensions; Zen (all) and Ice Lake and later do.
        cpus: &["znver3", "znver4", "sapphirerapids"],
        mattr: None,
        source: include_str!("reference/x86_64_sha256_ni.s"),
        entry: include_str!("reference/x86_64_sha256_ni_entry.s"),
        exit: include_str!("reference/x86_64_sha256_ni_exit.s"),
        symbol: "schedlab_reference_sha256_ni",
    },
];

impl Reference {
    /// llvm-mca's cycles per iteration of this loop on `cpu`, which must be one of
    /// [`Reference::cpus`].
    pub fn cycles(&self, cpu: &str) -> Result<f64, McaError> {
        if !self.cpus.contains(&cpu) {
            return Err(McaError::UnknownCpu {
                cpu: cpu.to_string(),
                target: self.target,
                valid: self.cpus.to_vec(),
            });
        }
        mca_cost_source(self.target, cpu, self.mattr, self.source).map(|(cycles, _ipc)| cycles)
    }

    /// The loop as a C-callable function: entry, body, exit (one assembly file for the
    /// target's GNU assembler).
    pub fn callable(&self) -> String {
        format!("{}{}\n{}", self.entry, self.source, self.exit)
    }

    /// How many lines of the loop body use `mnemonic` (comments and labels excluded).
    pub fn count(&self, mnemonic: &str) -> usize {
        self.instructions()
            .filter(|line| line.split_whitespace().next() == Some(mnemonic))
            .count()
    }

    /// The instruction lines of the loop body.
    pub fn instructions(&self) -> impl Iterator<Item = &'static str> {
        self.source.lines().map(str::trim).filter(|line| {
            !line.is_empty()
                && !line.starts_with("//")
                && !line.starts_with('#')
                && !line.starts_with('.')
        })
    }
}

/// The x86_64 SHA-NI reference loop linked into this program, to time it natively beside the
/// llvm-mca figure (`schedlab bench --kernel sha256`).
#[cfg(target_arch = "x86_64")]
// The loop's files name `.intel_syntax` because gcc's assembler and llvm-mca read them too,
// where AT&T syntax is the default.
#[allow(bad_asm_style)]
pub mod native {
    use schedlab_kernels::sha256::ROUND_CONSTS;

    std::arch::global_asm!(concat!(
        include_str!("reference/x86_64_sha256_ni_entry.s"),
        include_str!("reference/x86_64_sha256_ni.s"),
        include_str!("reference/x86_64_sha256_ni_exit.s"),
    ));

    /// The round constants, 16-byte aligned: SSE's `paddd xmm, m128` faults on anything less.
    #[repr(C, align(16))]
    struct AlignedConstants([u32; 64]);

    static ROUND_CONSTS_ALIGNED: AlignedConstants = AlignedConstants(ROUND_CONSTS);

    unsafe extern "C" {
        fn schedlab_reference_sha256_ni(
            state: *mut u32,
            msg: *const u8,
            end: *const u8,
            k: *const u32,
        );
    }

    /// Whether this CPU can run the SHA-NI reference.
    pub fn sha256_ni_available() -> bool {
        std::arch::is_x86_feature_detected!("sha") && std::arch::is_x86_feature_detected!("sse4.1")
    }

    /// Runs the SHA-NI reference loop over `blocks` (whole 64-byte blocks) from `state`.
    /// Errors (never runs) when the CPU lacks the extension or `blocks` is not whole blocks.
    pub fn sha256_ni_compress(state: &mut [u32; 8], blocks: &[u8]) -> Result<(), String> {
        if !sha256_ni_available() {
            return Err("this CPU has no SHA extensions (sha, sse4.1)".to_string());
        }
        if !blocks.len().is_multiple_of(64) {
            return Err(format!(
                "{} bytes are not whole 64-byte blocks",
                blocks.len()
            ));
        }
        if blocks.is_empty() {
            return Ok(());
        }
        let range = blocks.as_ptr_range();
        // SAFETY: the CPU has the instructions (checked above); the loop reads exactly
        // `blocks` (a non-empty multiple of 64 bytes, `end` is one past its last byte) and the
        // 64 round constants (16-byte aligned, as its `paddd` needs), and writes only the
        // eight words of `state`.
        unsafe {
            schedlab_reference_sha256_ni(
                state.as_mut_ptr(),
                range.start,
                range.end,
                ROUND_CONSTS_ALIGNED.0.as_ptr(),
            )
        };
        Ok(())
    }
}
