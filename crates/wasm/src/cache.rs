//! Translations kept on disk between runs.
//!
//! Wasmtime's translation of a module is a pure function of the module's bytes, the
//! bounds-check mode, Wasmtime's version and the configuration [`crate::translate`] gives it;
//! it does not depend on the host. It is also the costliest step of a `.wasm` kernel source
//! that does not depend on schedlab's own passes: Wasmtime compiles every function and writes
//! its IR text unbuffered, a system call per formatted fragment. A sharded corpus run
//! translates each module once per shard, and a researcher re-runs reports on the same
//! corpus many times; the cache makes every translation after the first a read.
//!
//! An entry is one file per module and mode, named by the SHA-256 of everything the
//! translation depends on ([`TranslationCache::key`]): the module's bytes, the mode,
//! Wasmtime's version, the `Debug` text of Wasmtime's configuration (every flag and tunable)
//! and [`FORMAT`]. It holds each defined function's index and IR text, deflate-compressed. An
//! entry is written to a temporary file in the cache directory and renamed into place, so
//! concurrent runs (the shards of one corpus) never read a partial entry; an entry that cannot
//! be read whole is a miss, and the translation runs as without a cache.

use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The version of Wasmtime that translates (the workspace pins it; a test checks `Cargo.lock`).
pub const WASMTIME_VERSION: &str = "48.0.8";

/// The entry format and the translation's own steps (custom sections dropped, the flags set);
/// raised whenever either changes.
const FORMAT: &str = "schedlab-wasm-ir 1";

/// The environment variable that places the cache: unset, the user's cache directory
/// (`$XDG_CACHE_HOME/schedlab/wasm`, else `$HOME/.cache/schedlab/wasm`); `off`, no cache;
/// anything else, that directory.
pub const CACHE_VARIABLE: &str = schedlab_backend::code_cache::CACHE_VARIABLE;

/// Where translations are kept, or that they are not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranslationCache {
    dir: Option<PathBuf>,
}

impl TranslationCache {
    /// No cache: every translation runs Wasmtime.
    pub fn off() -> Self {
        TranslationCache { dir: None }
    }

    /// A cache in `dir` (created when the first entry is written).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        TranslationCache {
            dir: Some(dir.into()),
        }
    }

    /// The cache [`CACHE_VARIABLE`] names; off when it is unset and there is no home
    /// directory.
    pub fn from_env() -> Self {
        Self::located(
            std::env::var_os(CACHE_VARIABLE),
            std::env::var_os("XDG_CACHE_HOME"),
            std::env::var_os("HOME"),
        )
    }

    /// The cache for the values of [`CACHE_VARIABLE`], `XDG_CACHE_HOME` and `HOME` (an empty
    /// value counts as unset).
    fn located(setting: Option<OsString>, xdg: Option<OsString>, home: Option<OsString>) -> Self {
        TranslationCache {
            dir: schedlab_backend::code_cache::cache_dir("wasm", setting, xdg, home),
        }
    }

    /// The directory, if the cache is on.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The entry's name for a translation of `bytes` under `config_text` (the `Debug` text of
    /// Wasmtime's configuration, which includes the mode's settings).
    pub(crate) fn key(bytes: &[u8], config_text: &str) -> String {
        let mut hasher = Sha256::new();
        for part in [FORMAT, WASMTIME_VERSION, config_text] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.update(Sha256::digest(bytes));
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{key}.ir")))
    }

    /// The functions of the entry `key` (index and IR text), `None` on a miss or an entry
    /// that cannot be read whole.
    pub(crate) fn load(&self, key: &str) -> Option<Vec<(u32, String)>> {
        let file = std::fs::File::open(self.path(key)?).ok()?;
        read_entry(BufReader::new(file)).ok()
    }

    /// Writes the entry `key`; the cache is an optimisation, so a directory that cannot be
    /// written is an error for the caller to drop.
    pub(crate) fn store(&self, key: &str, functions: &[(u32, String)]) -> std::io::Result<()> {
        let Some(path) = self.path(key) else {
            return Ok(());
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut temp = tempfile::Builder::new().prefix(".entry").tempfile_in(dir)?;
        write_entry(BufWriter::new(temp.as_file_mut()), functions)?;
        temp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }
}

fn write_entry(out: impl Write, functions: &[(u32, String)]) -> std::io::Result<()> {
    let mut encoder = DeflateEncoder::new(out, Compression::fast());
    encoder.write_all(FORMAT.as_bytes())?;
    encoder.write_all(&(functions.len() as u64).to_le_bytes())?;
    for (index, text) in functions {
        encoder.write_all(&index.to_le_bytes())?;
        encoder.write_all(&(text.len() as u64).to_le_bytes())?;
        encoder.write_all(text.as_bytes())?;
    }
    encoder.finish()?.flush()
}

fn read_entry(input: impl Read) -> std::io::Result<Vec<(u32, String)>> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let mut decoder = DeflateDecoder::new(input);
    let mut format = vec![0; FORMAT.len()];
    decoder.read_exact(&mut format)?;
    if format != FORMAT.as_bytes() {
        return Err(bad("another entry format"));
    }
    let count = read_u64(&mut decoder)?;
    let mut functions = Vec::new();
    for _ in 0..count {
        let mut index = [0; 4];
        decoder.read_exact(&mut index)?;
        let len = read_u64(&mut decoder)?;
        let mut text = Vec::new();
        (&mut decoder).take(len).read_to_end(&mut text)?;
        if text.len() as u64 != len {
            return Err(bad("a truncated function"));
        }
        let text = String::from_utf8(text).map_err(|_| bad("text that is not UTF-8"))?;
        functions.push((u32::from_le_bytes(index), text));
    }
    if decoder.read(&mut [0])? != 0 {
        return Err(bad("bytes after the last function"));
    }
    Ok(functions)
}

fn read_u64(input: &mut impl Read) -> std::io::Result<u64> {
    let mut bytes = [0; 8];
    input.read_exact(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn functions() -> Vec<(u32, String)> {
        vec![
            (3, "function u0:3() {\nblock0:\n    return\n}\n".to_string()),
            (7, "function u0:7(i32) -> i32 {\n}\n".to_string()),
        ]
    }

    #[test]
    fn an_entry_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TranslationCache::at(dir.path().join("nested"));
        let key = TranslationCache::key(b"\0asm", "config");
        assert_eq!(cache.load(&key), None);
        cache.store(&key, &functions()).unwrap();
        assert_eq!(cache.load(&key), Some(functions()));
    }

    #[test]
    fn a_damaged_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TranslationCache::at(dir.path());
        let key = TranslationCache::key(b"\0asm", "config");
        cache.store(&key, &functions()).unwrap();
        let path = cache.path(&key).unwrap();
        let whole = std::fs::read(&path).unwrap();
        std::fs::write(&path, &whole[..whole.len() - 3]).unwrap();
        assert_eq!(cache.load(&key), None);
        std::fs::write(&path, b"not deflate at all").unwrap();
        assert_eq!(cache.load(&key), None);
    }

    #[test]
    fn the_key_depends_on_the_module_and_the_configuration() {
        let key = TranslationCache::key(b"\0asm\x01", "a");
        assert_ne!(key, TranslationCache::key(b"\0asm\x02", "a"));
        assert_ne!(key, TranslationCache::key(b"\0asm\x01", "b"));
        assert_eq!(key, TranslationCache::key(b"\0asm\x01", "a"));
    }

    #[test]
    fn the_variable_places_the_cache_or_turns_it_off() {
        let os = |s: &str| Some(OsString::from(s));
        let located = TranslationCache::located;
        assert_eq!(
            located(os("off"), os("/x"), os("/h")),
            TranslationCache::off()
        );
        assert_eq!(
            located(os("/c"), os("/x"), os("/h")),
            TranslationCache::at("/c")
        );
        assert_eq!(
            located(None, os("/x"), os("/h")),
            TranslationCache::at("/x/schedlab/wasm")
        );
        assert_eq!(
            located(os(""), os(""), os("/h")),
            TranslationCache::at("/h/.cache/schedlab/wasm")
        );
        assert_eq!(located(None, None, None), TranslationCache::off());
    }

    #[test]
    fn the_pinned_wasmtime_is_the_one_built() {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
                .unwrap();
        let entry = format!("name = \"wasmtime\"\nversion = \"{WASMTIME_VERSION}\"");
        assert!(
            lock.contains(&entry),
            "Cargo.lock does not hold wasmtime {WASMTIME_VERSION}: raise WASMTIME_VERSION"
        );
    }
}
