//! Where an array sits in the mapping that holds it for one call: one `PROT_NONE` guard page,
//! the data pages, another guard page. [`Placement::End`] puts the data's last byte right
//! before the upper guard page, [`Placement::Start`] its first byte right after the lower one;
//! an empty array has no data pages and points at the upper guard page, so any access to it
//! traps. The foreign harness (`harness/exec_harness.c`) computes the same layout.

use schedlab_kernels::case::Placement;

/// The layout of one guarded array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GuardedLayout {
    /// Bytes to map: both guard pages and the data pages.
    pub map_len: usize,
    /// Pages between the guard pages (readable and writable).
    pub data_pages: usize,
    /// Offset of the array's first byte from the start of the mapping.
    pub data_offset: usize,
}

impl GuardedLayout {
    /// The layout of `len` bytes with pages of `page` bytes.
    pub fn new(len: usize, page: usize, placement: Placement) -> Self {
        let data_pages = len.div_ceil(page);
        let data_offset = page
            + match placement {
                Placement::End => data_pages * page - len,
                Placement::Start => 0,
            };
        GuardedLayout {
            map_len: (data_pages + 2) * page,
            data_pages,
            data_offset,
        }
    }
}

/// A fresh anonymous mapping of `len` bytes with protection `prot` (`PROT_*`) and `flags`
/// (`MAP_PRIVATE` or `MAP_SHARED`, and any other `MAP_*` beyond `MAP_ANONYMOUS`, which is
/// always set). The caller owns it and unmaps it with `munmap(map, len)`.
pub fn map_anonymous(len: usize, prot: i32, flags: i32) -> std::io::Result<*mut libc::c_void> {
    // SAFETY: a new anonymous mapping at an address of the kernel's choosing aliases nothing.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            prot,
            flags | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(map)
    }
}

/// `len` bytes between two `PROT_NONE` guard pages, in a private anonymous mapping of their own
/// (at least one data page, so that even an empty region has a page between the guards),
/// placed against a guard page by a [`Placement`]: a buffer on which the first access past
/// either end traps. Unmapped on drop.
#[derive(Debug)]
pub struct GuardedRegion {
    map: *mut u8,
    map_len: usize,
    data: *mut u8,
    len: usize,
}

impl GuardedRegion {
    /// Maps `len` bytes with protection `prot` (`PROT_*`) placed by `placement`; `extra_flags`
    /// are `MAP_*` flags beyond `MAP_PRIVATE` (such as `MAP_NORESERVE` for a large read-only
    /// region of zeros).
    pub fn new(
        len: usize,
        placement: Placement,
        prot: i32,
        extra_flags: i32,
    ) -> std::io::Result<Self> {
        let page = page_size();
        let data_pages = len.div_ceil(page).max(1);
        let map_len = (data_pages + 2) * page;
        let map = map_anonymous(map_len, prot, libc::MAP_PRIVATE | extra_flags)?.cast::<u8>();
        let first = page
            + match placement {
                Placement::End => data_pages * page - len,
                Placement::Start => 0,
            };
        let region = GuardedRegion {
            map,
            map_len,
            // SAFETY: `first + len` is at most the upper guard page's offset, inside the mapping.
            data: unsafe { map.add(first) },
            len,
        };
        for guard in [0, (data_pages + 1) * page] {
            // SAFETY: both guard pages lie inside the mapping and are page-aligned.
            if unsafe { libc::mprotect(map.add(guard).cast(), page, libc::PROT_NONE) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(region)
    }

    /// The region's first byte.
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.data
    }

    /// The region's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for GuardedRegion {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `new` made, which nothing else owns.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

/// The system's page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page)
        .ok()
        .filter(|&p| p > 0)
        .unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_placement_ends_at_the_upper_guard_page() {
        let l = GuardedLayout::new(10, 4096, Placement::End);
        assert_eq!(l.data_pages, 1);
        assert_eq!(l.data_offset + 10, 2 * 4096);
        assert_eq!(l.map_len, 3 * 4096);
    }

    #[test]
    fn start_placement_begins_after_the_lower_guard_page() {
        let l = GuardedLayout::new(4097, 4096, Placement::Start);
        assert_eq!(l.data_pages, 2);
        assert_eq!(l.data_offset, 4096);
    }

    #[test]
    fn a_guarded_region_is_writable_and_flush_against_its_guard_page() {
        let page = page_size();
        for (len, placement) in [(10, Placement::End), (page + 3, Placement::Start)] {
            let region = GuardedRegion::new(len, placement, libc::PROT_READ | libc::PROT_WRITE, 0)
                .expect("mmap");
            assert_eq!(region.len(), len);
            let edge = match placement {
                Placement::End => region.as_mut_ptr() as usize + len,
                Placement::Start => region.as_mut_ptr() as usize,
            };
            assert_eq!(edge % page, 0, "{placement:?}");
            // SAFETY: `len` writable bytes.
            let bytes = unsafe { std::slice::from_raw_parts_mut(region.as_mut_ptr(), len) };
            bytes.fill(7);
            assert!(bytes.iter().all(|&b| b == 7));
        }
    }

    #[test]
    fn an_empty_array_points_at_the_upper_guard_page() {
        for placement in Placement::ALL {
            let l = GuardedLayout::new(0, 4096, placement);
            assert_eq!((l.data_pages, l.data_offset, l.map_len), (0, 4096, 8192));
        }
    }
}
