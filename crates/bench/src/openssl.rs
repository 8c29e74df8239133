//! OpenSSL's one-shot digest functions, which openssl-sys links (libcrypto) but does not bind.

unsafe extern "C" {
    /// OpenSSL's one-shot MD5 (`crypto/md5/md5_one.c`): init, update, final.
    pub(crate) fn MD5(d: *const u8, n: usize, md: *mut u8) -> *mut u8;
    /// OpenSSL's one-shot SHA-256 (`crypto/sha/sha256.c`): init, update, final.
    pub(crate) fn SHA256(d: *const u8, n: usize, md: *mut u8) -> *mut u8;
}

/// The signature of OpenSSL's one-shot digests: `(data, length, digest out)`.
pub(crate) type OneShot = unsafe extern "C" fn(*const u8, usize, *mut u8) -> *mut u8;

/// The `N`-byte digest of `data` by `digest`, one of this module's functions (each writes
/// exactly its digest's length).
#[inline]
pub(crate) fn one_shot<const N: usize>(digest: OneShot, data: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    // SAFETY: `data` is readable for `data.len()` bytes and `out` has room for the `N`-byte
    // digest `digest` writes; it keeps no pointer after returning.
    unsafe { digest(data.as_ptr(), data.len(), out.as_mut_ptr()) };
    out
}
