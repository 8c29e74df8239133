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
    fn an_empty_array_points_at_the_upper_guard_page() {
        for placement in Placement::ALL {
            let l = GuardedLayout::new(0, 4096, placement);
            assert_eq!((l.data_pages, l.data_offset, l.map_len), (0, 4096, 8192));
        }
    }
}
