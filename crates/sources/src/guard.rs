//! Running foreign input through Cranelift without letting a panic end the process: a panic
//! inside [`catch`] becomes an error message for that one piece of work, and the panic hook
//! prints nothing for it (no backtrace on the terminal). Panics elsewhere are reported as usual.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Whether this thread is inside [`catch`].
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// Where the last caught panic happened.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) {
                let location = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                LOCATION.with(|l| *l.borrow_mut() = location);
            } else {
                default(info);
            }
        }));
    });
}

/// Runs `f`; a panic becomes `Err("panicked at FILE:LINE: message")`.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    let outer = CATCHING.with(|c| c.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(outer));
    result.map_err(|payload| {
        let message = schedlab_backend::exec::panic_message(&*payload);
        match LOCATION.with(|l| l.borrow_mut().take()) {
            Some(at) => format!("panicked at {at}: {message}"),
            None => format!("panicked: {message}"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_and_the_next_call_works() {
        let err = catch(|| -> u32 { panic!("no rule matched") }).unwrap_err();
        assert!(err.contains("no rule matched"), "{err}");
        assert_eq!(catch(|| 7), Ok(7));
    }
}
