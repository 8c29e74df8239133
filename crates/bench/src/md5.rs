//! The in-process MD5 implementations `schedlab bench` times: schedlab per pipeline
//! configuration, `md-5` (pure Rust) and OpenSSL's hand-written `MD5()`.
//!
//! Self-contained (only external crates), so `benches/md5.rs` includes this file too and the
//! criterion benches time exactly the rows the CLI does.

use digest::Digest;
use schedlab_backend::pipeline::PipelineConfig;
use schedlab_digests::{Md5Builder, Md5Engine};
use schedlab_kernels::digest::split_padded;
use schedlab_passes::bce::BceLevel;
use schedlab_passes::rewrite::ConstantPlacement;
use schedlab_passes::sched;

/// Where a row's code comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// schedlab's JIT-compiled Java-semantics kernel.
    Schedlab,
    /// The `md-5` crate: portable Rust compiled by rustc/LLVM.
    PureRust,
    /// OpenSSL's `MD5()`: hand-written md5-x86_64 assembly in the system libcrypto.
    HandWritten,
    /// HotSpot's `MessageDigest("MD5")`, measured in a separate JVM process.
    Jvm,
    /// The kernel as built, compiled by stock Cranelift (`opt_level=speed`, no schedlab pass).
    StockCranelift,
}

impl Kind {
    /// The name used in reports and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Schedlab => "schedlab",
            Kind::PureRust => "pure-rust",
            Kind::HandWritten => "hand-written",
            Kind::Jvm => "jvm",
            Kind::StockCranelift => "stock-cranelift",
        }
    }
}

/// A pipeline configuration with the row name it is reported under.
#[derive(Clone, Debug)]
pub struct NamedConfig {
    /// Row name, `schedlab/<what differs from the default>`.
    pub name: String,
    /// The configuration.
    pub config: PipelineConfig,
}

/// Every schedlab configuration the bench times: the `Md5` library's default first, then that
/// default with one setting changed — each registered scheduling strategy (but `shuffle`,
/// which exists to test correctness), each bounds-check level, the e-graph and rewrite
/// switches. New strategies and levels appear here without code changes. Duplicates dropped.
pub fn configurations() -> Vec<NamedConfig> {
    configurations_around(library_default())
}

/// `default` as `schedlab/default`, then `default` with one setting changed, as
/// [`configurations`] lists them around the `Md5` library's default.
pub fn configurations_around(default: PipelineConfig) -> Vec<NamedConfig> {
    let mut rows = vec![NamedConfig {
        name: "schedlab/default".into(),
        config: default.clone(),
    }];
    let with = |f: &dyn Fn(&mut PipelineConfig)| {
        let mut c = default.clone();
        f(&mut c);
        c
    };
    for strategy in sched::strategy_names() {
        if strategy != "shuffle" {
            let config = with(&|c| c.strategy = strategy.to_string());
            push_unique(&mut rows, strategy, config);
        }
    }
    for level in BceLevel::ALL {
        push_unique(&mut rows, &format!("bce-{level}"), with(&|c| c.bce = level));
    }
    for (name, on) in [("egraph", true), ("no-egraph", false)] {
        push_unique(&mut rows, name, with(&|c| c.optimize = on));
    }
    for (name, on) in [("rewrites", true), ("no-rewrites", false)] {
        push_unique(&mut rows, name, with(&|c| c.rewrites = on));
    }
    for placement in ConstantPlacement::ALL {
        let name = format!("constants-{}", placement.name());
        push_unique(&mut rows, &name, with(&|c| c.constants = placement));
    }
    rows
}

/// `default` with each named strategy, as `schedlab/<name>` rows (`bench --strategy`), added to
/// `rows` unless a row of that name is already there.
pub fn add_strategy_rows(rows: &mut Vec<NamedConfig>, default: &PipelineConfig, names: &[String]) {
    for strategy in names {
        let name = format!("schedlab/{strategy}");
        if rows.iter().all(|r| r.name != name) {
            rows.push(NamedConfig {
                name,
                config: PipelineConfig {
                    strategy: strategy.clone(),
                    ..default.clone()
                },
            });
        }
    }
}

/// One line describing a configuration's settings.
pub fn describe(config: &PipelineConfig) -> String {
    let on = |b: bool| if b { "on" } else { "off" };
    format!(
        "strategy {}, bce {}, rewrites {} (constants {}), e-graph {}",
        config.strategy,
        config.bce,
        on(config.rewrites),
        config.constants.name(),
        on(config.optimize)
    )
}

/// The configuration `schedlab_digests::Md5` uses (its builder's default), or the pipeline's
/// default if the host cannot compile (building the rows then reports why).
pub fn library_default() -> PipelineConfig {
    Md5Builder::new()
        .build()
        .map(|engine| engine.compressor().config().clone())
        .unwrap_or_default()
}

/// Adds `config` as `schedlab/<name>` unless an equal configuration is already listed.
fn push_unique(rows: &mut Vec<NamedConfig>, name: &str, config: PipelineConfig) {
    if rows.iter().all(|r| r.config != config) {
        rows.push(NamedConfig {
            name: format!("schedlab/{name}"),
            config,
        });
    }
}

/// How an implementation is called.
#[derive(Clone, Copy, Debug)]
pub enum Imp {
    /// A compiled schedlab configuration.
    Schedlab(Md5Engine),
    /// `md5::Md5` from the `md-5` crate.
    Md5Crate,
    /// OpenSSL's one-shot `MD5()`.
    OpenSsl,
    /// The kernel compiled by stock Cranelift ([`CRANELIFT_SPEED`]).
    Stock(StockMd5),
}

/// One in-process implementation.
#[derive(Clone, Debug)]
pub struct RustImpl {
    /// Row name.
    pub name: String,
    /// Where its code comes from.
    pub kind: Kind,
    /// How it is called.
    pub imp: Imp,
}

impl RustImpl {
    /// One-shot MD5 of `data` (including padding).
    pub fn digest(&self, data: &[u8]) -> [u8; 16] {
        match self.imp {
            Imp::Schedlab(engine) => schedlab_digest(&engine, data),
            Imp::Md5Crate => md5_crate_digest(data),
            Imp::OpenSsl => openssl_digest(data),
            Imp::Stock(stock) => stock.digest(data),
        }
    }
}

/// Name of the OpenSSL row, the reference every ratio is taken against.
pub const OPENSSL: &str = "openssl";
/// Name of the `md-5` row.
pub const MD5_CRATE: &str = "md-5";
/// Name of the stock-Cranelift row: the MD5 kernel as built (all 16 checks per block),
/// compiled by Cranelift at `opt_level=speed` with no schedlab pass — what a Cranelift user
/// gets without schedlab, the `cranelift-speed` row of `schedlab report --baseline`.
pub const CRANELIFT_SPEED: &str = "cranelift-speed";

/// Every in-process row name, in report order.
pub fn rust_impl_names() -> Vec<String> {
    let mut names: Vec<String> = configurations().into_iter().map(|c| c.name).collect();
    names.extend([
        CRANELIFT_SPEED.to_string(),
        MD5_CRATE.to_string(),
        OPENSSL.to_string(),
    ]);
    names
}

/// Compiles the configurations of [`configurations`] that `wanted` accepts and lists them with
/// `md-5` and OpenSSL (if accepted too).
pub fn rust_impls_matching(wanted: impl Fn(&str) -> bool) -> Result<Vec<RustImpl>, String> {
    rust_impls_of(configurations(), wanted)
}

/// Compiles the configurations of `configs` that `wanted` accepts and lists them with `md-5`
/// and OpenSSL (if accepted too).
pub fn rust_impls_of(
    configs: Vec<NamedConfig>,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<RustImpl>, String> {
    openssl_sys::init();
    let mut impls = Vec::new();
    for named in configs {
        if !wanted(&named.name) {
            continue;
        }
        let engine = Md5Builder::new()
            .config(named.config)
            .build()
            .map_err(|e| format!("cannot compile {}: {e}", named.name))?;
        impls.push(RustImpl {
            name: named.name,
            kind: Kind::Schedlab,
            imp: Imp::Schedlab(engine),
        });
    }
    if wanted(CRANELIFT_SPEED) {
        impls.push(RustImpl {
            name: CRANELIFT_SPEED.into(),
            kind: Kind::StockCranelift,
            imp: Imp::Stock(StockMd5::compile()?),
        });
    }
    for (name, kind, imp) in [
        (MD5_CRATE, Kind::PureRust, Imp::Md5Crate),
        (OPENSSL, Kind::HandWritten, Imp::OpenSsl),
    ] {
        if wanted(name) {
            impls.push(RustImpl {
                name: name.into(),
                kind,
                imp,
            });
        }
    }
    Ok(impls)
}

/// schedlab's one-shot digest through the RustCrypto API.
#[inline]
pub fn schedlab_digest(engine: &Md5Engine, data: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out.copy_from_slice(&engine.digest(data));
    out
}

/// `compress_multi_block(state, buf, len, ofs, limit) -> status` (the kernel's ABI).
type KernelFn = unsafe extern "C" fn(*mut u32, *const u8, i32, i32, i32) -> i32;

/// The MD5 kernel compiled by stock Cranelift for the host ([`CRANELIFT_SPEED`]).
#[derive(Clone, Copy, Debug)]
pub struct StockMd5 {
    entry: KernelFn,
}

impl StockMd5 {
    /// Builds the kernel and JIT-compiles it at `opt_level=speed`, with no schedlab pass.
    pub fn compile() -> Result<Self, String> {
        Self::compile_timed().map(|(stock, _)| stock)
    }

    /// [`StockMd5::compile`], returning the time to build the IR and to compile it (µs).
    pub fn compile_timed() -> Result<(Self, [f64; 2]), String> {
        let t0 = std::time::Instant::now();
        let func = schedlab_kernels::md5::compress_multi_block();
        let t1 = std::time::Instant::now();
        // The pipeline's verifier does not run on this path: Cranelift's own does.
        let options = schedlab_backend::JitOptions {
            verify: true,
            listing: false,
        };
        let jit = schedlab_backend::JitFunction::compile_speed(func, &options)
            .map_err(|e| format!("cannot compile {CRANELIFT_SPEED}: {e}"))?;
        let t2 = std::time::Instant::now();
        // SAFETY: the kernel's signature is `KernelFn`'s in the host's default (C) calling
        // convention; the JIT never frees the code (`JitFunction`'s documentation).
        let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(jit.code_ptr()) };
        let us = |a: std::time::Instant, b: std::time::Instant| (b - a).as_secs_f64() * 1e6;
        Ok((Self { entry }, [us(t0, t1), us(t1, t2)]))
    }

    /// Compresses the whole 64-byte blocks of `blocks` (a multiple of 64 bytes, below 2 GiB).
    fn compress(&self, state: &mut [u32; 4], blocks: &[u8]) -> bool {
        let Ok(len) = i32::try_from(blocks.len()) else {
            return false;
        };
        if len < 64 {
            return len == 0;
        }
        // SAFETY: `state` is four writable words; the kernel bounds-checks every read of
        // `blocks` against `len`.
        let end = unsafe { (self.entry)(state.as_mut_ptr(), blocks.as_ptr(), len, 0, len - 64) };
        end == len
    }

    /// One-shot MD5 of `data`, padding included (RFC 1321). A kernel failure (impossible for
    /// valid input) yields the all-zero digest, which the bench's digest check rejects.
    pub fn digest(&self, data: &[u8]) -> [u8; 16] {
        let mut state = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
        let (whole, tail, padded) = split_padded(data, u64::to_le_bytes);
        let mut ok = whole
            .chunks(1 << 30)
            .all(|chunk| self.compress(&mut state, chunk));
        ok &= self.compress(&mut state, &tail[..padded]);
        let mut out = [0u8; 16];
        if ok {
            for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
                bytes.copy_from_slice(&word.to_le_bytes());
            }
        }
        out
    }
}

/// `md-5`'s one-shot digest.
#[inline]
pub fn md5_crate_digest(data: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out.copy_from_slice(&md5::Md5::digest(data));
    out
}

/// OpenSSL's one-shot `MD5()`.
#[inline]
pub fn openssl_digest(data: &[u8]) -> [u8; 16] {
    crate::openssl::one_shot(crate::openssl::MD5, data)
}

/// The benchmark buffer of `size` bytes, identical on the Rust and the JVM side.
pub fn buffer(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i.wrapping_mul(131) + 7) as u8).collect()
}

/// Lower-case hex of a digest.
pub fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stock_cranelift_row_hashes_like_md5_crate_at_every_padding_boundary() {
        let Ok(stock) = StockMd5::compile() else {
            // Only a host without a schedlab backend cannot compile it; say so.
            eprintln!("skipped: the host has no schedlab backend");
            return;
        };
        for len in [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1000, 4096] {
            let data = buffer(len);
            assert_eq!(
                hex(&stock.digest(&data)),
                hex(&md5_crate_digest(&data)),
                "{len} bytes"
            );
        }
    }

    #[test]
    fn stock_cranelift_row_is_listed_once() {
        let names = rust_impl_names();
        assert_eq!(names.iter().filter(|n| *n == CRANELIFT_SPEED).count(), 1);
    }
}
