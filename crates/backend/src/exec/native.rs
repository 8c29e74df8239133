//! Host execution: the units and trampolines in a JIT module, called from a forked child so
//! that a trap (a signal) ends the child, never this process.
//!
//! The argument buffers live in one shared anonymous mapping with a progress counter in
//! front. The child runs the calls in order and advances the counter before each; when it dies
//! of a signal, the call the counter names trapped, and a new child continues after it.

use super::link::Linked;
use super::{CALL_TIMEOUT, ExecError, RawOutcome, SLOT_BYTES};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_jit::{JITBuilder, JITModule};

/// Runs `requests` (trampoline number, argument buffer) natively.
pub(crate) fn run(
    isa: &OwnedTargetIsa,
    linked: &Linked,
    requests: &[(usize, Vec<u8>)],
) -> Result<Vec<RawOutcome>, ExecError> {
    let mut module = JITModule::new(JITBuilder::with_isa(
        isa.clone(),
        cranelift_module::default_libcall_names(),
    ));
    let ids = linked.define_in(&mut module).map_err(ExecError::Host)?;
    module
        .finalize_definitions()
        .map_err(|e| ExecError::Host(format!("finalising the JIT module: {e}")))?;
    let entries: Vec<Option<*const u8>> = requests
        .iter()
        .map(|(t, _)| {
            linked
                .trampolines
                .get(*t)
                .map(|&k| module.get_finalized_function(ids[k]))
        })
        .collect();
    let result = run_forked(&entries, requests);
    // SAFETY: no pointer into the module's memory outlives this function (the children that
    // used them have exited).
    unsafe { module.free_memory() };
    result
}

/// The shared mapping: a progress counter, then the buffers at 16-byte-aligned offsets.
struct Shared {
    base: *mut u8,
    len: usize,
    offsets: Vec<usize>,
}

impl Shared {
    fn new(requests: &[(usize, Vec<u8>)]) -> Result<Self, ExecError> {
        let mut offsets = Vec::with_capacity(requests.len());
        let mut len = SLOT_BYTES;
        for (_, buf) in requests {
            offsets.push(len);
            len += buf.len().next_multiple_of(SLOT_BYTES);
        }
        // SAFETY: a fresh anonymous shared mapping; checked for failure below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(ExecError::Host(format!(
                "mmap of {len} bytes: {}",
                std::io::Error::last_os_error()
            )));
        }
        let shared = Shared {
            base: base.cast(),
            len,
            offsets,
        };
        for ((_, buf), &off) in requests.iter().zip(&shared.offsets) {
            // SAFETY: `off + buf.len()` lies inside the mapping by construction.
            unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), shared.base.add(off), buf.len()) };
        }
        Ok(shared)
    }

    fn progress(&self) -> *mut usize {
        self.base.cast()
    }

    fn buffer(&self, k: usize, len: usize) -> Vec<u8> {
        // SAFETY: buffer `k` was copied into the mapping at `offsets[k]` with this length.
        unsafe { std::slice::from_raw_parts(self.base.add(self.offsets[k]), len) }.to_vec()
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: the mapping was created by `Shared::new` with this length.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

fn run_forked(
    entries: &[Option<*const u8>],
    requests: &[(usize, Vec<u8>)],
) -> Result<Vec<RawOutcome>, ExecError> {
    let shared = Shared::new(requests)?;
    let n = requests.len();
    let mut outcomes: Vec<Option<RawOutcome>> = (0..n).map(|_| None).collect();
    for (k, e) in entries.iter().enumerate() {
        if e.is_none() {
            outcomes[k] = Some(RawOutcome::NotRun("no trampoline".into()));
        }
    }
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
            unsafe { child(&shared, entries, start) };
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
        for k in start..reached {
            if outcomes[k].is_none() {
                outcomes[k] = Some(RawOutcome::Returned(shared.buffer(k, requests[k].1.len())));
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
        } else {
            RawOutcome::NotRun(format!("the child exited with status {status}"))
        });
        start = reached + 1;
    }
    Ok(outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(|| RawOutcome::NotRun("not reached".into())))
        .collect())
}

/// The forked child: default signal dispositions (so a trap ends it with that signal), an
/// alarm per call, the calls from `start` on, then `_exit(0)`.
///
/// # Safety
/// Only called in a freshly forked child; `entries` point to trampolines of the live module.
unsafe fn child(shared: &Shared, entries: &[Option<*const u8>], start: usize) -> ! {
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
        if let Some(entry) = entry {
            // SAFETY: a trampoline compiled with the host's default calling convention, taking
            // one pointer to a buffer as large as the call's slots.
            let f: extern "C" fn(*mut u8) = unsafe { std::mem::transmute(*entry) };
            // SAFETY: `alarm` is async-signal-safe.
            unsafe { libc::alarm(secs) };
            // SAFETY: see above; the buffer lies inside the shared mapping.
            f(unsafe { shared.base.add(shared.offsets[k]) });
            // SAFETY: as above.
            unsafe { libc::alarm(0) };
        }
    }
    // SAFETY: as above.
    unsafe {
        shared.progress().write_volatile(entries.len());
        libc::_exit(0)
    }
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
