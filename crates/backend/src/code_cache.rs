//! Machine code of JIT-compiled kernels kept on disk between processes.
//!
//! A short-lived program that hashes a few megabytes (`md5sum` over a directory) spends a
//! good part of its run compiling its kernel: the IR stages and Cranelift's code generation
//! take milliseconds, and until they finish the program hashes with slower portable code. The
//! machine code of a kernel is a pure function of the compiling program and the host's ISA
//! settings, so a second run can load the bytes the first one made.
//!
//! **The key** of an entry is the SHA-256 of [`FORMAT`], the identity of the running
//! executable (device, inode, size and modification time of `/proc/self/exe`: a rebuilt or
//! replaced binary never meets the entries of another; under a loader that runs another
//! binary, such as valgrind, the cache is off), the target ISA's triple and every
//! shared and ISA-specific flag (the host's detected features included), and the caller's
//! *recipe* (the kernel, its configuration). Only Linux has `/proc/self/exe`; elsewhere the
//! cache is off.
//!
//! **Process-specific words.** Code may embed an address that differs from process to
//! process (a slow path's Rust callee, moved by address-space layout randomisation). The
//! caller names those words; an entry is written only when each occurs exactly once in the
//! code, as its 8 little-endian bytes or — a value below 2³¹, which x86_64 encodes as a 32-bit
//! immediate — as 4, and a load writes the current process's values there (a value that no
//! longer fits its site is a miss). That is x86_64's encoding; other hosts (AArch64 builds a
//! constant from 16-bit pieces, s390x is big-endian) keep no code.
//!
//! **An entry** holds the code, those sites and the code's SHA-256; it is written to a
//! temporary file and renamed into place, and one that cannot be read whole or whose digest
//! does not match is a miss. Entries are trusted as the user's own files, as any compiler's
//! cache is: the directory must not be writable by others.

use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The entry format; raised whenever it or the meaning of a key changes.
pub const FORMAT: &str = "schedlab-jit-code 1";

/// The environment variable that places schedlab's caches: unset, the user's cache directory
/// (`$XDG_CACHE_HOME/schedlab/<kind>`, else `$HOME/.cache/schedlab/<kind>`); `off`, no cache;
/// anything else, that directory.
pub const CACHE_VARIABLE: &str = "SCHEDLAB_CACHE";

/// The directory of one kind of schedlab cache (`wasm`, `jit`) for the values of
/// [`CACHE_VARIABLE`], `XDG_CACHE_HOME` and `HOME` (an empty value counts as unset); `None`
/// when the cache is off or there is nowhere to put it.
pub fn cache_dir(
    kind: &str,
    setting: Option<OsString>,
    xdg: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty());
    match set(setting) {
        Some(v) if v == "off" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => set(xdg)
            .map(PathBuf::from)
            .or_else(|| set(home).map(|home| Path::new(&home).join(".cache")))
            .map(|base| base.join("schedlab").join(kind)),
    }
}

/// Where compiled kernels are kept, or that they are not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeCache {
    dir: Option<PathBuf>,
}

/// One entry's contents: the code and where its process-specific words sit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachedCode {
    /// The machine code as compiled (the sites hold the writing process's values).
    pub code: Vec<u8>,
    /// Where each process-specific word sits, in the caller's order.
    pub sites: Vec<WordSite>,
}

/// Where a process-specific word sits in the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WordSite {
    /// Offset of its first byte.
    pub offset: u32,
    /// Bytes it takes: 8, or 4 for a value below 2³¹.
    pub width: u8,
}

impl CodeCache {
    /// No cache.
    pub fn off() -> Self {
        CodeCache { dir: None }
    }

    /// A cache in `dir` (created when the first entry is written).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        CodeCache {
            dir: Some(dir.into()),
        }
    }

    /// The cache [`CACHE_VARIABLE`] places (kind `jit`); off when it says `off`, when there
    /// is no home directory, and on systems without `/proc/self/exe`.
    pub fn from_env() -> Self {
        if executable_identity().is_none() {
            return Self::off();
        }
        CodeCache {
            dir: cache_dir(
                "jit",
                std::env::var_os(CACHE_VARIABLE),
                std::env::var_os("XDG_CACHE_HOME"),
                std::env::var_os("HOME"),
            ),
        }
    }

    /// The directory, if the cache is on.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The entry name of `recipe` compiled for an ISA described by `isa_text`, by this
    /// executable; `None` when the executable cannot be identified.
    pub fn key(recipe: &str, isa_text: &str) -> Option<String> {
        Some(key_of(&executable_identity()?, isa_text, recipe))
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{key}.code")))
    }

    /// The entry `key`, `None` on a miss or an entry that cannot be read whole or whose code
    /// does not match its digest.
    pub fn load(&self, key: &str) -> Option<CachedCode> {
        let mut bytes = Vec::new();
        std::fs::File::open(self.path(key)?)
            .ok()?
            .read_to_end(&mut bytes)
            .ok()?;
        decode_entry(&bytes)
    }

    /// Writes the entry `key`. The cache is an optimisation: an error is the caller's to drop.
    pub fn store(&self, key: &str, entry: &CachedCode) -> std::io::Result<()> {
        let Some(path) = self.path(key) else {
            return Ok(());
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut temp = tempfile::Builder::new().prefix(".entry").tempfile_in(dir)?;
        temp.as_file_mut().write_all(&encode_entry(entry))?;
        temp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Where each of `words` sits in `code`: its 8 little-endian bytes occurring exactly once,
/// else (a value below 2³¹) its 4 occurring exactly once; `None` when some word has no such
/// site (the code cannot be patched safely).
pub fn word_sites(code: &[u8], words: &[u64]) -> Option<Vec<WordSite>> {
    let only = |bytes: &[u8]| {
        let mut hits = code
            .windows(bytes.len())
            .enumerate()
            .filter(|(_, window)| *window == bytes)
            .map(|(at, _)| at);
        let first = hits.next()?;
        if hits.next().is_some() {
            return None;
        }
        u32::try_from(first).ok()
    };
    words
        .iter()
        .map(|&w| {
            let wide = w.to_le_bytes();
            if let Some(offset) = only(&wide) {
                return Some(WordSite { offset, width: 8 });
            }
            (w < 1 << 31)
                .then(|| only(&wide[..4]))?
                .map(|offset| WordSite { offset, width: 4 })
        })
        .collect()
}

/// `code` with `words` written at their `sites` (the current process's values); `None` when
/// the counts differ, a site lies outside the code or a value does not fit its site.
pub fn patched(mut code: Vec<u8>, sites: &[WordSite], words: &[u64]) -> Option<Vec<u8>> {
    if sites.len() != words.len() {
        return None;
    }
    for (site, &word) in sites.iter().zip(words) {
        let at = site.offset as usize;
        let width = usize::from(site.width);
        if width != 8 && !(width == 4 && word < 1 << 31) {
            return None;
        }
        code.get_mut(at..at + width)?
            .copy_from_slice(&word.to_le_bytes()[..width]);
    }
    Some(code)
}

/// Device, inode, size and modification time of the running executable's file; `None` when
/// the file the process runs (`/proc/self/exe` as the kernel resolves it) is not the one its
/// name now leads to: a binary replaced since the process started, or a program run by a
/// loader that presents another executable (valgrind runs its own binary and reports the
/// client's name), whose identity would say nothing about the code.
#[cfg(target_os = "linux")]
fn executable_identity() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let running = std::fs::metadata("/proc/self/exe").ok()?;
    let named = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
    if (running.dev(), running.ino()) != (named.dev(), named.ino()) {
        return None;
    }
    Some(format!(
        "{}:{}:{}:{}.{}",
        running.dev(),
        running.ino(),
        running.size(),
        running.mtime(),
        running.mtime_nsec()
    ))
}

#[cfg(not(target_os = "linux"))]
fn executable_identity() -> Option<String> {
    None
}

fn key_of(executable: &str, isa_text: &str, recipe: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [FORMAT, executable, isa_text, recipe] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn encode_entry(entry: &CachedCode) -> Vec<u8> {
    let mut out = Vec::with_capacity(entry.code.len() + 64);
    out.extend_from_slice(FORMAT.as_bytes());
    out.extend_from_slice(&(entry.sites.len() as u32).to_le_bytes());
    for site in &entry.sites {
        out.extend_from_slice(&site.offset.to_le_bytes());
        out.push(site.width);
    }
    out.extend_from_slice(&(entry.code.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(&entry.code));
    out.extend_from_slice(&entry.code);
    out
}

fn decode_entry(bytes: &[u8]) -> Option<CachedCode> {
    let rest = bytes.strip_prefix(FORMAT.as_bytes())?;
    let (count, mut rest) = rest.split_first_chunk::<4>()?;
    let mut sites = Vec::new();
    for _ in 0..u32::from_le_bytes(*count) {
        let (at, tail) = rest.split_first_chunk::<5>()?;
        sites.push(WordSite {
            offset: u32::from_le_bytes([at[0], at[1], at[2], at[3]]),
            width: at[4],
        });
        rest = tail;
    }
    let (len, rest) = rest.split_first_chunk::<8>()?;
    let (digest, code) = rest.split_first_chunk::<32>()?;
    if code.len() as u64 != u64::from_le_bytes(*len) || Sha256::digest(code)[..] != digest[..] {
        return None;
    }
    Some(CachedCode {
        code: code.to_vec(),
        sites,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> CachedCode {
        CachedCode {
            code: (0u8..=200).collect(),
            sites: vec![
                WordSite {
                    offset: 3,
                    width: 8,
                },
                WordSite {
                    offset: 40,
                    width: 4,
                },
            ],
        }
    }

    #[test]
    fn an_entry_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CodeCache::at(dir.path());
        cache.store("k", &entry()).unwrap();
        assert_eq!(cache.load("k"), Some(entry()));
        assert_eq!(cache.load("other"), None);
    }

    #[test]
    fn a_damaged_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CodeCache::at(dir.path());
        cache.store("k", &entry()).unwrap();
        let path = dir.path().join("k.code");
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.load("k"), None, "a flipped code byte");
        std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
        assert_eq!(cache.load("k"), None, "a cut entry");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_test_process_has_an_identity() {
        let identity = executable_identity().expect("the test binary is its own executable");
        assert_eq!(identity.split(':').count(), 4, "{identity}");
    }

    #[test]
    fn the_key_depends_on_every_input() {
        let base = key_of("exe", "isa", "recipe");
        assert_eq!(base, key_of("exe", "isa", "recipe"));
        assert_ne!(base, key_of("exe2", "isa", "recipe"));
        assert_ne!(base, key_of("exe", "isa2", "recipe"));
        assert_ne!(base, key_of("exe", "isa", "recipe2"));
        // Parts are length-prefixed: moving a boundary changes the key.
        assert_ne!(key_of("ab", "c", "d"), key_of("a", "bc", "d"));
    }

    #[test]
    fn a_word_is_patched_only_where_it_occurs_once() {
        let word = 0x1122_3344_5566_7788u64;
        let mut code = vec![0x90u8; 32];
        code[5..13].copy_from_slice(&word.to_le_bytes());
        let sites = word_sites(&code, &[word]).unwrap();
        assert_eq!(
            sites,
            vec![WordSite {
                offset: 5,
                width: 8
            }]
        );
        let new = 0x0102_0304_0506_0708u64;
        let moved = patched(code.clone(), &sites, &[new]).unwrap();
        assert_eq!(&moved[5..13], &new.to_le_bytes());
        assert_eq!(word_sites(&moved, &[word]), None, "the old word is gone");
        code[20..28].copy_from_slice(&word.to_le_bytes());
        assert_eq!(word_sites(&code, &[word]), None, "two occurrences");
        assert_eq!(patched(vec![0; 4], &sites, &[new]), None, "out of the code");
    }

    #[test]
    fn a_small_word_sits_in_four_bytes_and_stays_small() {
        let word = 0x0046_4800u64;
        let mut code = vec![0x90u8; 16];
        code[2..6].copy_from_slice(&(word as u32).to_le_bytes());
        let sites = word_sites(&code, &[word]).unwrap();
        assert_eq!(
            sites,
            vec![WordSite {
                offset: 2,
                width: 4
            }]
        );
        let moved = patched(code.clone(), &sites, &[0x0050_0000]).unwrap();
        assert_eq!(&moved[2..6], &0x0050_0000u32.to_le_bytes());
        assert_eq!(moved[6], 0x90, "only four bytes written");
        assert_eq!(
            patched(code.clone(), &sites, &[1 << 31]),
            None,
            "too large for the site"
        );
        assert_eq!(word_sites(&code, &[1 << 40]), None, "absent");
    }

    #[test]
    fn the_variable_places_the_cache_or_turns_it_off() {
        let os = |s: &str| Some(OsString::from(s));
        assert_eq!(cache_dir("jit", os("off"), os("/x"), os("/h")), None);
        assert_eq!(
            cache_dir("jit", os("/c"), os("/x"), os("/h")),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            cache_dir("jit", None, os("/x"), os("/h")),
            Some(PathBuf::from("/x/schedlab/jit"))
        );
        assert_eq!(
            cache_dir("wasm", os(""), os(""), os("/h")),
            Some(PathBuf::from("/h/.cache/schedlab/wasm"))
        );
        assert_eq!(cache_dir("jit", None, None, None), None);
    }
}
