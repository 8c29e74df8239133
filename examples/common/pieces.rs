//! The read-ahead of `sum`'s file operands: a reader thread opens the regular files among the
//! operands, keeps a window of [`WINDOW`] of them open and reads them round-robin, one
//! [`PIECE`] at a time, into a pool of [`POOL`] recycled buffers; every piece goes to the hashing
//! thread as it is read. No file is held whole: the memory in flight is the pool, which stays
//! in the caches instead of faulting in fresh pages file after file.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::sync::mpsc::{Receiver, Sender};

/// Bytes read from a file per piece (one `read`).
pub const PIECE: usize = 64 << 10;
/// Files read at once, a piece from each in turn (a multiple of the lane kernel's 8 lanes, so
/// that a round of the lanes finds one piece pending in every lane).
pub const WINDOW: usize = 16;
/// Piece buffers in circulation between the reader and the hashing thread.
pub const POOL: usize = 16;
/// Bytes in the files opened so far (two at least) from which the lane kernel is worth
/// compiling.
const JIT_BYTES: u64 = 256 << 10;

/// A buffer of the pool.
pub type Buffer = Box<[u8]>;

/// What the reader found for one operand; an operand's events come in order and end with
/// [`Event::End`], [`Event::Failed`] or [`Event::Own`].
pub enum Event {
    /// The next bytes of the file: `buffer[..len]`. The buffer goes back to the reader.
    Piece {
        /// The pool buffer holding the piece.
        buffer: Buffer,
        /// Bytes of the piece.
        len: usize,
    },
    /// The end of the file: every piece has been sent.
    End,
    /// Opening or reading the file failed with this error (after any pieces sent before).
    Failed(io::Error),
    /// Not a regular file the reader opened (stdin, a FIFO, a directory, a name `stat` fails
    /// on): the hashing thread reads it itself when its turn comes, and reports what it finds.
    Own,
}

/// An [`Event`] for the operand at index `operand`.
pub struct Message {
    /// Index of the operand.
    pub operand: usize,
    /// What happened.
    pub event: Event,
}

/// How an operand is read.
enum Opening {
    /// A regular file of this many bytes (as `stat` says), opened.
    Regular(File, u64),
    /// Opening failed.
    Failed(io::Error),
    /// Left to the hashing thread.
    Own,
}

/// Opens `name` if it is a regular file. `stat` comes first, so that a FIFO is never opened
/// here (opening one blocks until a writer comes) and every other name is left to the
/// hashing thread, whose own `open` reports exactly what coreutils reports; so is a file the
/// process has no descriptor left for.
fn open_regular(name: &[u8]) -> Opening {
    if name == b"-" {
        return Opening::Own;
    }
    let path = OsStr::from_bytes(name);
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {}
        _ => return Opening::Own,
    }
    let file = match File::open(path) {
        Ok(file) => file,
        // Out of descriptors with the window open: the hashing thread, which opens one file
        // at a time as coreutils does, tries again when the file's turn comes.
        Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
            return Opening::Own;
        }
        Err(e) => return Opening::Failed(e),
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => Opening::Regular(file, meta.len()),
        // Replaced since the `stat`: read it like anything else.
        _ => Opening::Own,
    }
}

/// One `read` of at most `buffer.len()` bytes, retried when interrupted.
fn read_piece(file: &mut File, buffer: &mut [u8]) -> io::Result<usize> {
    loop {
        match file.read(buffer) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// An open file of the window.
struct Reading {
    operand: usize,
    file: File,
}

/// The reader thread's body: sends every operand's events to `pieces` (each operand's in
/// order, different operands' interleaved: a piece of each open file in turn); takes buffers
/// back from `spare` (allocating at most [`POOL`]). Calls `start_jit` once when the files
/// opened so far hold [`JIT_BYTES`]. Returns when every operand is done or the hashing thread
/// has gone.
pub fn read_operands(
    operands: &[Vec<u8>],
    pieces: &Sender<Message>,
    spare: &Receiver<Buffer>,
    start_jit: fn(),
) {
    let send = |operand, event| pieces.send(Message { operand, event }).is_ok();
    let mut window: VecDeque<Reading> = VecDeque::with_capacity(WINDOW);
    let mut next = 0;
    let mut allocated = 0;
    let mut idle: Option<Buffer> = None;
    let (mut opened, mut opened_bytes, mut jit_started) = (0, 0, false);
    loop {
        while window.len() < WINDOW && next < operands.len() {
            let operand = next;
            next += 1;
            let sent = match open_regular(&operands[operand]) {
                Opening::Regular(file, size) => {
                    opened += 1;
                    opened_bytes += size;
                    if !jit_started && opened >= 2 && opened_bytes >= JIT_BYTES {
                        jit_started = true;
                        start_jit();
                    }
                    window.push_back(Reading { operand, file });
                    true
                }
                Opening::Failed(e) => send(operand, Event::Failed(e)),
                Opening::Own => send(operand, Event::Own),
            };
            if !sent {
                return;
            }
        }
        let Some(mut reading) = window.pop_front() else {
            return;
        };
        let buffer = match idle.take().or_else(|| spare.try_recv().ok()) {
            Some(buffer) => Some(buffer),
            None if allocated < POOL => {
                allocated += 1;
                Some(vec![0; PIECE].into_boxed_slice())
            }
            None => spare.recv().ok(),
        };
        let Some(mut buffer) = buffer else {
            return;
        };
        let operand = reading.operand;
        let sent = match read_piece(&mut reading.file, &mut buffer) {
            Ok(0) => {
                idle = Some(buffer);
                send(operand, Event::End)
            }
            Ok(len) => {
                window.push_back(reading);
                send(operand, Event::Piece { buffer, len })
            }
            Err(e) => {
                idle = Some(buffer);
                send(operand, Event::Failed(e))
            }
        };
        if !sent {
            return;
        }
    }
}
