//! Host execution: the units and trampolines in a JIT module, called from a forked child so
//! that a trap (a signal) ends the child, never this process.
//!
//! The argument buffers and the arrays' bytes live in one shared anonymous mapping with a
//! progress counter in front. The child runs the calls in order and advances the counter
//! before each; per call it maps every array on its own between guard pages
//! ([`super::guarded`]), copies the bytes in, puts the pointers into the buffer (and into
//! the arrays' pointer slots), calls, and
//! copies the bytes back into the shared mapping. When the child dies of a signal, the call the
//! counter names trapped, and a new child continues after it. The child never allocates (the
//! parent may have other threads, whose locks a forked child must not wait for).

use super::guarded::{GuardedLayout, map_anonymous, page_size};
use super::link::Linked;
use super::{CALL_TIMEOUT, ExecError, RawOutcome, Request, SLOT_BYTES};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_jit::{JITBuilder, JITModule};
use std::time::Duration;

/// The child's exit status when it cannot map an array.
const MAP_FAILED_STATUS: i32 = 3;

/// The child's exit status when a throw through [`super::THROW_ENTRY`] found no handler; the
/// shared mapping's report word says more ([`report`]).
pub(super) const UNCAUGHT_THROW_STATUS: i32 = 4;

/// The report word an uncaught throw leaves in the shared mapping: its tag in the low 32 bits
/// and one of the flags.
pub(super) mod report {
    /// No frame between the throwing frame and the entry frame has a handler for the tag.
    pub const NO_HANDLER: u64 = 1 << 32;
    /// The throw's frame pointers delimit no frames (zero, misaligned, entry below exit).
    pub const BAD_FRAMES: u64 = 1 << 33;

    /// The failure of the call that ended with `word`.
    pub fn message(word: u64) -> String {
        let tag = word & 0xffff_ffff;
        let entry = super::super::THROW_ENTRY;
        if word & BAD_FRAMES != 0 {
            format!(
                "%{entry} was called with tag {tag} and frame pointers that delimit no frames \
                 (entry_fp and exit_fp must be non-zero, 16-byte aligned, entry_fp >= exit_fp)"
            )
        } else if word & NO_HANDLER != 0 {
            format!(
                "uncaught exception: the throw of tag {tag} through %{entry} found no \
                 handler for it (nor a catch-all) between the throwing frame and the entry frame"
            )
        } else {
            format!("the child ended as after a throw through %{entry}, but left no report")
        }
    }
}

/// The exception tables [`super::THROW_ENTRY`] reads (x86_64 hosts; nothing elsewhere).
#[cfg(target_arch = "x86_64")]
use super::throw::ThrowTables;
#[cfg(not(target_arch = "x86_64"))]
struct ThrowTables;

/// Runs `requests` natively. With `sample`, each call that returned is then repeated, the count
/// doubling until one run of repeats takes at least `sample`, and that run's nanoseconds per
/// call come back beside the outcome (arrays the call wrote are restored to the call's inputs
/// before every repeat, so each repeat does the first call's work).
pub(crate) fn run(
    isa: &OwnedTargetIsa,
    linked: &Linked,
    requests: &[Request],
    sample: Option<Duration>,
) -> Result<Vec<(RawOutcome, Option<f64>)>, ExecError> {
    let mut builder = JITBuilder::with_isa(isa.clone(), cranelift_module::default_libcall_names());
    add_runtime_libcalls(&mut builder);
    let mut module = JITModule::new(builder);
    let ids = linked.define_in(&mut module).map_err(ExecError::Host)?;
    module
        .finalize_definitions()
        .map_err(|e| ExecError::Host(format!("finalising the JIT module: {e}")))?;
    let throw_tables = throw_tables(&module, linked, &ids).map_err(ExecError::Host)?;
    let entries: Vec<Option<*const u8>> = requests
        .iter()
        .map(|r| {
            linked
                .trampolines
                .get(r.trampoline)
                .map(|&k| module.get_finalized_function(ids[k]))
        })
        .collect();
    let result = run_forked(&entries, requests, sample, throw_tables.as_ref());
    // SAFETY: no pointer into the module's memory outlives this function (the children that
    // used them have exited).
    unsafe { module.free_memory() };
    result
}

/// The exception tables of the linked functions, built before the fork (the child must not
/// allocate), when some function refers to [`super::THROW_ENTRY`].
#[cfg(target_arch = "x86_64")]
fn throw_tables(
    module: &JITModule,
    linked: &Linked,
    ids: &[cranelift_module::FuncId],
) -> Result<Option<ThrowTables>, String> {
    if !linked.uses_throw_entry {
        return Ok(None);
    }
    let functions = linked
        .functions
        .iter()
        .zip(ids)
        .map(|(f, &id)| (module.get_finalized_function(id), &f.compiled));
    ThrowTables::new(functions).map(Some)
}

#[cfg(not(target_arch = "x86_64"))]
fn throw_tables(
    _: &JITModule,
    _: &Linked,
    _: &[cranelift_module::FuncId],
) -> Result<Option<ThrowTables>, String> {
    Ok(None)
}

/// The runtime helpers Cranelift's own runner provides to the code it runs: `pshufb`'s
/// fallback, which x86_64 code calls for `shuffle`/`swizzle` without SSSE3, and the
/// exception-throw entry ([`super::THROW_ENTRY`]).
fn add_runtime_libcalls(builder: &mut JITBuilder) {
    #[cfg(target_arch = "x86_64")]
    builder.symbol("__cranelift_x86_pshufb", x86_pshufb as *const u8);
    #[cfg(target_arch = "x86_64")]
    builder.symbol(super::THROW_ENTRY, super::throw::throw_entry as *const u8);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = builder;
}

/// `pshufb`: lane `i` of the result is `a[b[i] & 15]`, or 0 when `b[i]`'s top bit is set.
/// `__m128i` is passed in an XMM register by the System V ABI on every x86_64 (SSE2 is part of
/// the architecture), which is how Cranelift's code calls it; the lint does not know that.
#[cfg(target_arch = "x86_64")]
#[allow(improper_ctypes_definitions)]
extern "C" fn x86_pshufb(
    a: std::arch::x86_64::__m128i,
    b: std::arch::x86_64::__m128i,
) -> std::arch::x86_64::__m128i {
    use std::arch::x86_64::__m128i;
    // SAFETY: `__m128i` and `[u8; 16]` are 16 bytes with no invalid bit patterns.
    let (a, b) = unsafe {
        (
            std::mem::transmute::<__m128i, [u8; 16]>(a),
            std::mem::transmute::<__m128i, [u8; 16]>(b),
        )
    };
    let lanes = pshufb_lanes(&a, &b);
    // SAFETY: as above.
    unsafe { std::mem::transmute::<[u8; 16], __m128i>(lanes) }
}

/// [`x86_pshufb`] on byte arrays.
#[cfg(target_arch = "x86_64")]
fn pshufb_lanes(a: &[u8; 16], b: &[u8; 16]) -> [u8; 16] {
    std::array::from_fn(|i| {
        if b[i] & 0x80 != 0 {
            0
        } else {
            a[usize::from(b[i] & 0x0f)]
        }
    })
}

/// Where one request's bytes are in the shared mapping.
struct Placed<'a> {
    request: &'a Request,
    /// Offset of the trampoline buffer.
    buffer: usize,
    /// Offset of each array's bytes.
    arrays: Vec<usize>,
    /// Each array's layout in its own mapping.
    layouts: Vec<GuardedLayout>,
    /// Offset of the call's timing word: nanoseconds per call as `f64` bits, 0 when untimed.
    timing: usize,
}

/// The shared mapping: a progress counter, then every request's buffer and arrays at
/// 16-byte-aligned offsets.
struct Shared<'a> {
    base: *mut u8,
    len: usize,
    placed: Vec<Placed<'a>>,
}

impl<'a> Shared<'a> {
    fn new(requests: &'a [Request]) -> Result<Self, ExecError> {
        let page = page_size();
        let mut placed = Vec::with_capacity(requests.len());
        let mut len = SLOT_BYTES;
        for request in requests {
            let timing = len;
            len += SLOT_BYTES;
            let buffer = len;
            len += request.buffer.len().next_multiple_of(SLOT_BYTES);
            let mut arrays = Vec::with_capacity(request.arrays.len());
            for array in &request.arrays {
                arrays.push(len);
                len += array.len().next_multiple_of(SLOT_BYTES);
            }
            let layouts = request
                .arrays
                .iter()
                .map(|a| GuardedLayout::new(a.len(), page, request.placement))
                .collect();
            placed.push(Placed {
                request,
                buffer,
                arrays,
                layouts,
                timing,
            });
        }
        let base = map_anonymous(len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED)
            .map_err(|e| ExecError::Host(format!("mmap of {len} bytes: {e}")))?;
        let shared = Shared {
            base: base.cast(),
            len,
            placed,
        };
        for p in &shared.placed {
            // SAFETY: every offset plus its length lies inside the mapping by construction.
            unsafe {
                copy_in(shared.base, p.buffer, &p.request.buffer);
                for (&off, bytes) in p.arrays.iter().zip(&p.request.arrays) {
                    copy_in(shared.base, off, bytes);
                }
            }
        }
        Ok(shared)
    }

    fn progress(&self) -> *mut usize {
        self.base.cast()
    }

    /// The word after the counter, where an uncaught throw leaves its [`report`].
    fn throw_report(&self) -> *mut u64 {
        // SAFETY: the header is `SLOT_BYTES` (16) long: the counter, then this word.
        unsafe { self.base.add(8).cast() }
    }

    fn bytes(&self, offset: usize, len: usize) -> Vec<u8> {
        // SAFETY: `offset .. offset + len` was laid out inside the mapping by `Shared::new`.
        unsafe { std::slice::from_raw_parts(self.base.add(offset), len) }.to_vec()
    }

    /// The nanoseconds per call the child wrote for request `k`, if it timed it.
    fn nanos_per_call(&self, k: usize) -> Option<f64> {
        // SAFETY: the timing word lies inside the mapping (`Shared::new`), 16-byte aligned.
        let bits = unsafe {
            self.base
                .add(self.placed[k].timing)
                .cast::<u64>()
                .read_volatile()
        };
        (bits != 0).then(|| f64::from_bits(bits))
    }

    /// What request `k` left in the mapping.
    fn returned(&self, k: usize) -> RawOutcome {
        let p = &self.placed[k];
        RawOutcome::Returned {
            buffer: self.bytes(p.buffer, p.request.buffer.len()),
            arrays: p
                .arrays
                .iter()
                .zip(&p.request.arrays)
                .map(|(&off, a)| self.bytes(off, a.len()))
                .collect(),
        }
    }
}

/// Copies `bytes` to `base + offset`.
///
/// # Safety
/// `offset + bytes.len()` must lie inside the writable mapping at `base`.
unsafe fn copy_in(base: *mut u8, offset: usize, bytes: &[u8]) {
    // SAFETY: the caller's promise.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(offset), bytes.len()) };
}

impl Drop for Shared<'_> {
    fn drop(&mut self) {
        // SAFETY: the mapping was created by `Shared::new` with this length.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

fn run_forked(
    entries: &[Option<*const u8>],
    requests: &[Request],
    sample: Option<Duration>,
    throw_tables: Option<&ThrowTables>,
) -> Result<Vec<(RawOutcome, Option<f64>)>, ExecError> {
    let shared = Shared::new(requests)?;
    let n = requests.len();
    let mut outcomes: Vec<Option<RawOutcome>> = (0..n).map(|_| None).collect();
    for (k, e) in entries.iter().enumerate() {
        if e.is_none() {
            outcomes[k] = Some(RawOutcome::NotRun("no trampoline".into()));
        }
    }
    // The child's record of its mappings (allocated here: the child must not allocate).
    let most_arrays = requests.iter().map(|r| r.arrays.len()).max().unwrap_or(0);
    let mut mappings: Vec<*mut u8> = vec![std::ptr::null_mut(); most_arrays];
    let mut start = 0;
    while start < n {
        // SAFETY: the counter is the mapping's first word.
        unsafe { shared.progress().write_volatile(start) };
        // SAFETY: the child only runs the JIT code on the shared buffers and `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(ExecError::Host(format!(
                "fork: {}",
                std::io::Error::last_os_error()
            )));
        }
        if pid == 0 {
            // SAFETY: in the child; see `child`.
            unsafe { child(&shared, entries, start, &mut mappings, sample, throw_tables) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
        if waited < 0 {
            return Err(ExecError::Host(format!(
                "waitpid: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: the child has exited; the counter is no longer written.
        let reached = unsafe { shared.progress().read_volatile() }.min(n);
        for (k, outcome) in outcomes.iter_mut().enumerate().take(reached).skip(start) {
            if outcome.is_none() {
                *outcome = Some(shared.returned(k));
            }
        }
        if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
            start = reached.max(start + 1).min(n);
            if reached >= n {
                break;
            }
            continue;
        }
        if reached >= n {
            break;
        }
        outcomes[reached] = Some(if libc::WIFSIGNALED(status) {
            RawOutcome::Trapped(signal_name(libc::WTERMSIG(status)))
        } else if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == MAP_FAILED_STATUS {
            RawOutcome::NotRun("mapping an array between guard pages failed".into())
        } else if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == UNCAUGHT_THROW_STATUS {
            // SAFETY: the child has exited; the word lies in the shared mapping.
            RawOutcome::NotRun(report::message(unsafe {
                shared.throw_report().read_volatile()
            }))
        } else {
            RawOutcome::NotRun(format!("the child exited with status {status}"))
        });
        start = reached + 1;
    }
    Ok(outcomes
        .into_iter()
        .enumerate()
        .map(|(k, o)| {
            let outcome = o.unwrap_or_else(|| RawOutcome::NotRun("not reached".into()));
            let timed = match outcome {
                RawOutcome::Returned { .. } => shared.nanos_per_call(k),
                _ => None,
            };
            (outcome, timed)
        })
        .collect())
}

/// The forked child: default signal dispositions (so a trap ends it with that signal), an
/// alarm per call, the calls from `start` on (each timed after its first run when `sample` is
/// given), then `_exit(0)`.
///
/// # Safety
/// Only called in a freshly forked child; `entries` point to trampolines of the live module;
/// `mappings` has room for the most arrays of any call; `throw_tables` are the live module's.
unsafe fn child(
    shared: &Shared,
    entries: &[Option<*const u8>],
    start: usize,
    mappings: &mut [*mut u8],
    sample: Option<Duration>,
    throw_tables: Option<&ThrowTables>,
) -> ! {
    #[cfg(target_arch = "x86_64")]
    if let Some(tables) = throw_tables {
        // SAFETY: this child `_exit`s while the tables and the shared mapping are alive.
        unsafe { tables.activate(shared.throw_report()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = throw_tables;
    for sig in [
        libc::SIGILL,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGFPE,
        libc::SIGTRAP,
        libc::SIGALRM,
        libc::SIGABRT,
    ] {
        // SAFETY: resetting a disposition is async-signal-safe.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    let secs = u32::try_from(CALL_TIMEOUT.as_secs()).unwrap_or(10);
    for (k, entry) in entries.iter().enumerate().skip(start) {
        // SAFETY: the counter is the mapping's first word.
        unsafe { shared.progress().write_volatile(k) };
        let Some(entry) = entry else { continue };
        let p = &shared.placed[k];
        // SAFETY: the buffer lies inside the shared mapping.
        let buffer = unsafe { shared.base.add(p.buffer) };
        for (j, layout) in p.layouts.iter().enumerate() {
            // SAFETY: maps fresh memory.
            let Some(map) = (unsafe { map_guarded(layout) }) else {
                // SAFETY: ending the child.
                unsafe { libc::_exit(MAP_FAILED_STATUS) }
            };
            mappings[j] = map;
        }
        // SAFETY: every array was mapped above.
        unsafe { fill_arrays(shared, p, mappings) };
        // SAFETY: a trampoline compiled with the host's default calling convention, taking one
        // pointer to a buffer as large as the call's slots.
        let f: extern "C" fn(*mut u8) = unsafe { std::mem::transmute(*entry) };
        // SAFETY: `alarm` is async-signal-safe.
        unsafe { libc::alarm(secs) };
        f(buffer);
        // SAFETY: as above.
        unsafe { libc::alarm(0) };
        if let Some(sample) = sample {
            // SAFETY: the arrays are mapped; the timing word lies inside the shared mapping.
            unsafe {
                let nanos = time_repeats(shared, p, mappings, f, buffer, sample, secs);
                shared
                    .base
                    .add(p.timing)
                    .cast::<u64>()
                    .write_volatile(nanos.to_bits());
            }
        }
        for (j, layout) in p.layouts.iter().enumerate() {
            // SAFETY: copying the array back into the shared mapping, then unmapping what
            // `map_guarded` mapped.
            unsafe {
                let len = p.request.arrays[j].len();
                let data = mappings[j].add(layout.data_offset);
                std::ptr::copy_nonoverlapping(data, shared.base.add(p.arrays[j]), len);
                libc::munmap(mappings[j].cast(), layout.map_len);
            }
        }
    }
    // SAFETY: as above.
    unsafe {
        shared.progress().write_volatile(entries.len());
        libc::_exit(0)
    }
}

/// Copies the call's input bytes into its mapped arrays and writes every pointer (into the
/// arrays' pointer slots and the trampoline buffer).
///
/// # Safety
/// `mappings[j]` holds a live mapping of `p.layouts[j]` for every array of the call.
unsafe fn fill_arrays(shared: &Shared, p: &Placed, mappings: &[*mut u8]) {
    // SAFETY: the buffer lies inside the shared mapping.
    let buffer = unsafe { shared.base.add(p.buffer) };
    for (j, layout) in p.layouts.iter().enumerate() {
        // SAFETY: `data_offset + len` lies in the data pages (see `GuardedLayout`); the source
        // lies inside the shared mapping.
        unsafe {
            let data = mappings[j].add(layout.data_offset);
            let len = p.request.arrays[j].len();
            std::ptr::copy_nonoverlapping(shared.base.add(p.arrays[j]), data, len);
        }
    }
    for &(container, offset, j) in &p.request.inner_pointers {
        // SAFETY: both arrays are mapped; the slot lies inside the container's data
        // (validated); the host is the target, so its byte order is the target's.
        unsafe {
            let pointer = mappings[j].add(p.layouts[j].data_offset) as u64;
            let bytes = pointer.to_ne_bytes();
            let at = mappings[container].add(p.layouts[container].data_offset + offset);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len());
        }
    }
    for &(slot, j) in &p.request.pointers {
        // SAFETY: `mappings[j]` is mapped; the slot lies inside the buffer.
        unsafe {
            let pointer = mappings[j].add(p.layouts[j].data_offset) as u64;
            let bytes = pointer.to_le_bytes();
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer.add(slot * SLOT_BYTES), 8);
        }
    }
}

/// Whether the call changed any of its arrays (so each repeat must start from the inputs).
///
/// # Safety
/// As [`fill_arrays`]; the shared mapping still holds the inputs.
unsafe fn wrote_arrays(shared: &Shared, p: &Placed, mappings: &[*mut u8]) -> bool {
    p.layouts.iter().enumerate().any(|(j, layout)| {
        let len = p.request.arrays[j].len();
        // SAFETY: both ranges lie inside live mappings (the caller's promise).
        let (now, input) = unsafe {
            (
                std::slice::from_raw_parts(mappings[j].add(layout.data_offset), len),
                std::slice::from_raw_parts(shared.base.add(p.arrays[j]), len),
            )
        };
        now != input
    })
}

/// Repeats the call, the count doubling until one run of repeats takes `sample`; that run's
/// nanoseconds per call. Arrays the call writes are restored before every repeat (the restore
/// is timed with the call). Time is the child's CPU time (`CLOCK_THREAD_CPUTIME_ID`), so a
/// shared machine's other processes do not count against the call. Never allocates.
///
/// # Safety
/// As [`fill_arrays`]; `f` is the call's trampoline and `buffer` its buffer.
unsafe fn time_repeats(
    shared: &Shared,
    p: &Placed,
    mappings: &[*mut u8],
    f: extern "C" fn(*mut u8),
    buffer: *mut u8,
    sample: Duration,
    secs: u32,
) -> f64 {
    // SAFETY: the caller's promise.
    let restore = unsafe { wrote_arrays(shared, p, mappings) };
    let mut count: u64 = 1;
    loop {
        // SAFETY: `alarm` is async-signal-safe.
        unsafe { libc::alarm(secs.saturating_mul(2)) };
        let started = thread_cpu_time();
        for _ in 0..count {
            if restore {
                // SAFETY: the caller's promise.
                unsafe { fill_arrays(shared, p, mappings) };
            }
            f(std::hint::black_box(buffer));
        }
        let elapsed = thread_cpu_time().saturating_sub(started);
        // SAFETY: as above.
        unsafe { libc::alarm(0) };
        if elapsed >= sample || count >= 1 << 40 {
            return (elapsed.as_nanos() as f64 / count as f64).max(f64::MIN_POSITIVE);
        }
        count *= 2;
    }
}

/// This thread's CPU time (async-signal-safe: a plain `clock_gettime`).
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes one `timespec`; the clock exists on every Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

/// Maps `layout.map_len` bytes, inaccessible but for the data pages.
///
/// # Safety
/// Plain system calls; the result is owned by the caller.
unsafe fn map_guarded(layout: &GuardedLayout) -> Option<*mut u8> {
    let map = map_anonymous(layout.map_len, libc::PROT_NONE, libc::MAP_PRIVATE)
        .ok()?
        .cast::<u8>();
    if layout.data_pages > 0 {
        let page = layout.map_len / (layout.data_pages + 2);
        // SAFETY: the data pages lie inside the mapping and are page-aligned.
        let protected = unsafe {
            libc::mprotect(
                map.add(page).cast(),
                layout.data_pages * page,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        if protected != 0 {
            return None;
        }
    }
    Some(map)
}

/// The conventional name of a signal; `SIGALRM` (the per-call alarm) is a timeout.
pub(crate) fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGILL => "SIGILL".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGTRAP => "SIGTRAP".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGALRM => "timeout".into(),
        other => format!("signal {other}"),
    }
}
