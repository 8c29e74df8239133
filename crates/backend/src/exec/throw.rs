//! The exception-throw entry Cranelift's runner gives `try_call` code ([`super::THROW_ENTRY`]),
//! for native code on an x86_64 host.
//!
//! Before the fork the parent builds one exception table per linked function that has
//! `try_call` sites with handlers (Wasmtime's format, `ExceptionTableBuilder`), keyed by the
//! function's address range in the JIT module ([`ThrowTables`]). The forked child points a
//! thread-local at them ([`ThrowTables::activate`]); [`throw_entry`] walks the frame-pointer
//! chain from the throwing frame up to the entry frame with Wasmtime's unwinder, looks each
//! return address up in those tables, and resumes at the first handler of the tag (or a
//! catch-all) with the two payloads in the `tail` convention's exception registers. Nothing on
//! that path allocates (the child of a process with threads must not). A throw that finds no
//! handler writes its tag into the shared report word and ends the child with
//! [`super::native::UNCAUGHT_THROW_STATUS`]; the parent turns that into the call's failure.

use super::native::{UNCAUGHT_THROW_STATUS, report};
use crate::compile::Compiled;
use cranelift_codegen::{FinalizedMachCallSite, FinalizedMachExceptionHandler};
use std::cell::Cell;
use wasmtime_internal_unwinder::{
    ExceptionTable, ExceptionTableBuilder, Frame, Handler, UnwindHost,
};

/// One linked function's code range and its serialised exception table (offsets from
/// `start`).
struct FunctionTable {
    start: usize,
    end: usize,
    table: Vec<u8>,
}

/// The exception tables of every linked function that has handlers, sorted by address.
pub(crate) struct ThrowTables {
    functions: Vec<FunctionTable>,
}

thread_local! {
    /// The tables and the report word of the running child ([`ThrowTables::activate`]).
    static ACTIVE: Cell<(*const ThrowTables, *mut u64)> =
        const { Cell::new((std::ptr::null(), std::ptr::null_mut())) };
}

impl ThrowTables {
    /// The tables of `functions`: each linked function's address in the finalised module and
    /// its compiled code.
    pub fn new<'a>(
        functions: impl Iterator<Item = (*const u8, &'a Compiled)>,
    ) -> Result<Self, String> {
        let mut tables = Vec::new();
        for (address, compiled) in functions {
            if compiled.exception_sites.is_empty() {
                continue;
            }
            // Cranelift's runner matches a handler by its static tag alone, so the dynamic
            // contexts are left out (Wasmtime's format cannot hold one kept in a register).
            let handlers: Vec<Vec<FinalizedMachExceptionHandler>> = compiled
                .exception_sites
                .iter()
                .map(|site| {
                    site.handlers
                        .iter()
                        .filter(|h| !matches!(h, FinalizedMachExceptionHandler::Context(_)))
                        .copied()
                        .collect()
                })
                .collect();
            let sites = compiled
                .exception_sites
                .iter()
                .zip(&handlers)
                .map(|(site, handlers)| FinalizedMachCallSite {
                    ret_addr: site.ret_addr,
                    frame_offset: site.frame_offset,
                    exception_handlers: handlers,
                });
            let mut builder = ExceptionTableBuilder::default();
            builder
                .add_func(0, sites)
                .map_err(|e| format!("the exception table of {}: {e}", compiled.func.name))?;
            let start = address as usize;
            tables.push(FunctionTable {
                start,
                end: start + compiled.code.len(),
                table: builder.to_vec(),
            });
        }
        tables.sort_by_key(|t| t.start);
        Ok(ThrowTables { functions: tables })
    }

    /// Makes these tables (and `report`, where an uncaught throw writes its tag) the ones
    /// [`throw_entry`] uses on this thread.
    ///
    /// # Safety
    /// Only in the forked child, which ends (`_exit`) while `self` and `report` are alive.
    pub unsafe fn activate(&self, report: *mut u64) {
        ACTIVE.set((self, report));
    }

    /// The handler of `tag` at `frame`'s return address, if one of the tables has it: the
    /// handler's pc and the stack pointer to resume with. Does not allocate.
    fn handler_at(&self, frame: &Frame, tag: u32) -> Option<(usize, usize)> {
        let pc = frame.pc();
        let after = self.functions.partition_point(|t| t.start < pc);
        let function = self.functions.get(after.checked_sub(1)?)?;
        if pc > function.end {
            return None;
        }
        let table = ExceptionTable::parse(&function.table).ok()?;
        let offset = u32::try_from(pc - function.start).ok()?;
        let (frame_offset, mut handlers) = table.lookup_pc(offset);
        let handler = handlers.find(|h| h.tag == Some(tag) || h.tag.is_none())?;
        let sp = frame
            .fp()
            .wrapping_sub(usize::try_from(frame_offset.unwrap_or(0)).ok()?);
        let pc = function
            .start
            .checked_add(usize::try_from(handler.handler_offset).ok()?)?;
        Some((pc, sp))
    }
}

/// `%__cranelift_throw(entry_fp, exit_fp, exit_pc, tag, payload1, payload2)`: resumes at the
/// first handler of `tag` (or a catch-all) in the frames from `exit_fp` (whose return address
/// is `exit_pc`) up to, not including, the frame at `entry_fp`, as Cranelift's runner does.
/// Never returns: without a handler (or with frame pointers that delimit no frames: zero,
/// misaligned, or the entry below the exit) the child ends with [`UNCAUGHT_THROW_STATUS`].
pub(crate) extern "C" fn throw_entry(
    entry_fp: usize,
    exit_fp: usize,
    exit_pc: usize,
    tag: u32,
    payload1: usize,
    payload2: usize,
) -> ! {
    let (tables, report_word) = ACTIVE.get();
    let aligned = |fp: usize| fp != 0 && fp.is_multiple_of(16);
    let walkable = aligned(entry_fp) && aligned(exit_fp) && exit_pc != 0 && exit_fp <= entry_fp;
    if !tables.is_null() && walkable {
        // SAFETY: `activate` set the pointer in this child; the tables outlive it.
        let tables = unsafe { &*tables };
        // SAFETY: the frame pointers delimit frames of Cranelift code compiled with frame
        // pointers (the run line's code passes its own `get_frame_pointer` values, as under
        // Cranelift's runner); a garbage chain faults (a signal, reported as the call's trap).
        let handler = unsafe {
            Handler::find(
                &UnwindHost,
                |frame| tables.handler_at(frame, tag),
                exit_pc,
                exit_fp,
                entry_fp,
            )
        };
        if let Some(handler) = handler {
            // SAFETY: the handler is a `try_call`'s handler block in a live frame below the
            // entry frame; no Rust frame between here and it has a destructor.
            unsafe { handler.resume_tailcc(payload1, payload2) }
        }
    }
    let word = u64::from(tag)
        | if walkable {
            report::NO_HANDLER
        } else {
            report::BAD_FRAMES
        };
    if !report_word.is_null() {
        // SAFETY: the report word lies in the shared mapping (`activate`'s caller).
        unsafe { report_word.write_volatile(word) };
    }
    // SAFETY: ending the child.
    unsafe { libc::_exit(UNCAUGHT_THROW_STATUS) }
}
