//! Test support shared by the backend's test binaries: `int[]`s between guard pages, the
//! BigInteger kernels' machine-level types, and whether a target's code can run here.
#![allow(dead_code)] // each test binary uses its own part

use schedlab_backend::Target;
use schedlab_backend::emulate::toolchain_status;
use schedlab_backend::exec::{map_anonymous, page_size};
use schedlab_backend::tools::test_can_use;
use schedlab_kernels::case::Placement as Layout;

/// Whether `target`'s code can run here (natively or under qemu); panics, naming the Debian
/// packages, when `SCHEDLAB_REQUIRE_TOOLS=1` (as in CI) and it cannot.
pub fn runnable(target: Target) -> bool {
    test_can_use(toolchain_status(target))
}

/// `n` ints between two inaccessible pages.
pub struct Guarded {
    map: *mut libc::c_void,
    map_len: usize,
    /// The first element.
    pub data: *mut i32,
    n: usize,
}

impl Guarded {
    pub fn new(values: &[i32], layout: Layout) -> Self {
        let page = page_size();
        let bytes = values.len() * 4;
        let data_pages = bytes.div_ceil(page).max(1);
        let map_len = (data_pages + 2) * page;
        let map = map_anonymous(map_len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE)
            .expect("mmap failed");
        let base = map.cast::<u8>();
        // SAFETY: both guard pages lie inside the mapping and are page-aligned.
        unsafe {
            assert_eq!(libc::mprotect(base.cast(), page, libc::PROT_NONE), 0);
            let upper = base.add((data_pages + 1) * page);
            assert_eq!(libc::mprotect(upper.cast(), page, libc::PROT_NONE), 0);
        }
        let first = page
            + match layout {
                Layout::Start => 0,
                Layout::End => data_pages * page - bytes,
            };
        // SAFETY: `first .. first + bytes` lies in the writable pages.
        let data = unsafe { base.add(first) }.cast::<i32>();
        // SAFETY: as above; 4-byte aligned because page and bytes are multiples of 4.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), data, values.len()) };
        Self {
            map,
            map_len,
            data,
            n: values.len(),
        }
    }

    pub fn len(&self) -> i32 {
        i32::try_from(self.n).expect("small arrays")
    }

    pub fn to_vec(&self) -> Vec<i32> {
        // SAFETY: `n` initialised ints.
        unsafe { std::slice::from_raw_parts(self.data, self.n) }.to_vec()
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `new` mapped.
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}

/// `%bigint_mul_add` as the JIT compiles it.
pub type MulAddFn = unsafe extern "C" fn(*mut i32, i32, *const i32, i32, i32, i32, i32) -> i64;
/// `%bigint_square_to_len` as the JIT compiles it.
pub type SquareFn = unsafe extern "C" fn(*const i32, i32, i32, *mut i32, i32, i32) -> i32;
