//! The in-process MD5 implementations `schedlab bench` times: schedlab per pipeline
//! configuration, `md-5` (pure Rust) and OpenSSL's hand-written `MD5()`.
//!
//! Self-contained (only external crates), so `benches/md5.rs` includes this file too and the
//! criterion benches time exactly the rows the CLI does.

use digest::Digest;
use schedlab_backend::pipeline::PipelineConfig;
use schedlab_md5::{Md5Builder, Md5Engine};
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
}

impl Kind {
    /// The name used in reports and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Schedlab => "schedlab",
            Kind::PureRust => "pure-rust",
            Kind::HandWritten => "hand-written",
            Kind::Jvm => "jvm",
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

/// The configuration `schedlab_md5::Md5` uses (its builder's default), or the pipeline's
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
        }
    }
}

/// Name of the OpenSSL row, the reference every ratio is taken against.
pub const OPENSSL: &str = "openssl";
/// Name of the `md-5` row.
pub const MD5_CRATE: &str = "md-5";

/// Every in-process row name, in report order.
pub fn rust_impl_names() -> Vec<String> {
    let mut names: Vec<String> = configurations().into_iter().map(|c| c.name).collect();
    names.extend([MD5_CRATE.to_string(), OPENSSL.to_string()]);
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

/// `md-5`'s one-shot digest.
#[inline]
pub fn md5_crate_digest(data: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out.copy_from_slice(&md5::Md5::digest(data));
    out
}

mod ffi {
    // openssl-sys links libcrypto but binds no `MD5()`; declare the one-shot function here.
    unsafe extern "C" {
        /// OpenSSL's one-shot MD5 (`crypto/md5/md5_one.c`): init, update, final.
        pub fn MD5(d: *const u8, n: usize, md: *mut u8) -> *mut u8;
    }
}

/// OpenSSL's one-shot `MD5()`.
#[inline]
pub fn openssl_digest(data: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    // SAFETY: `data` is readable for `data.len()` bytes and `out` has room for the 16-byte
    // digest MD5() writes; MD5() keeps no pointer after returning.
    unsafe { ffi::MD5(data.as_ptr(), data.len(), out.as_mut_ptr()) };
    out
}

/// The benchmark buffer of `size` bytes, identical on the Rust and the JVM side.
pub fn buffer(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i.wrapping_mul(131) + 7) as u8).collect()
}

/// Lower-case hex of a digest.
pub fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
