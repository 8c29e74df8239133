//! Test helpers shared by the digests crate's integration tests.
#![allow(dead_code)]

use schedlab_backend::exec::GuardedRegion;
use schedlab_kernels::case::Placement;

/// `len` readable bytes ending exactly at an inaccessible page.
pub struct GuardedBuffer(GuardedRegion);

impl GuardedBuffer {
    /// `len` bytes filled by `fill(index)`.
    pub fn new(len: usize, fill: impl Fn(usize) -> u8) -> Self {
        let region = GuardedRegion::new(len, Placement::End, libc::PROT_READ | libc::PROT_WRITE, 0)
            .expect("mmap failed");
        // SAFETY: the region's `len` bytes are writable.
        let bytes = unsafe { std::slice::from_raw_parts_mut(region.as_mut_ptr(), len) };
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = fill(i);
        }
        Self(region)
    }

    /// The readable bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: readable, initialised, ends right before the guard page.
        unsafe { std::slice::from_raw_parts(self.0.as_mut_ptr(), self.0.len()) }
    }
}
