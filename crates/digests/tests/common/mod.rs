//! Test helpers shared by the digests crate's integration tests.
#![allow(dead_code)]

use schedlab_backend::exec::{map_anonymous, page_size};

/// `len` readable bytes ending exactly at an inaccessible page.
pub struct GuardedBuffer {
    page: usize,
    map: *mut libc::c_void,
    map_len: usize,
    len: usize,
}

impl GuardedBuffer {
    /// `len` bytes filled by `fill(index)`.
    pub fn new(len: usize, fill: impl Fn(usize) -> u8) -> Self {
        let page = page_size();
        let data_pages = len.div_ceil(page).max(1);
        let map_len = (data_pages + 1) * page;
        let map = map_anonymous(
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE,
        )
        .expect("mmap failed");
        // SAFETY: the last page lies inside the mapping.
        let guard = unsafe { map.cast::<u8>().add(data_pages * page) };
        // SAFETY: as above; page-aligned.
        let rc = unsafe { libc::mprotect(guard.cast(), page, libc::PROT_NONE) };
        assert_eq!(rc, 0, "mprotect failed");
        let buf = Self {
            page,
            map,
            map_len,
            len,
        };
        // SAFETY: the slice lies in the writable part of the mapping.
        let bytes = unsafe { std::slice::from_raw_parts_mut(buf.start(), len) };
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = fill(i);
        }
        buf
    }

    fn start(&self) -> *mut u8 {
        // SAFETY: `len` bytes before the guard page are inside the mapping.
        unsafe {
            self.map
                .cast::<u8>()
                .add(self.map_len - self.page - self.len)
        }
    }

    /// The readable bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: readable, initialised, ends right before the guard page.
        unsafe { std::slice::from_raw_parts(self.start(), self.len) }
    }
}

impl Drop for GuardedBuffer {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `new` mapped.
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}
