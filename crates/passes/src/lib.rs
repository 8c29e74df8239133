//! Passes over Cranelift IR: bounds-check elimination (`bce`), in-block scheduling (`sched`)
//! and critical-path rewrites. Each pass is a free function over `ir::Function` that returns a
//! plain statistics struct.
#![deny(missing_docs)]
pub mod bce;
pub mod deopt;
pub mod rewrite;
pub mod sched;
pub mod testgen;
