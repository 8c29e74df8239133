//! Passes over Cranelift IR: bounds-check elimination (`bce`, with slow paths outlined for a
//! JIT by `deopt`), induction-variable strength reduction in its check-free loops (`iv`),
//! store-to-load forwarding with dead scratch-store elimination (`forward`), in-block scheduling
//! (`sched`), loop-invariant loads and value numbering (`hoist`, with unsigned division by
//! constants as multiplication from `divide`), critical-path rewrites
//! (`rewrite`) and loop rotation (`rotate`: a test at the bottom of each loop instead of the
//! top). Each pass is a free function over `ir::Function` that returns a plain statistics
//! struct.
#![deny(missing_docs)]
pub mod bce;
pub mod deopt;
pub mod divide;
mod edges;
pub mod forward;
pub mod hoist;
pub mod iv;
pub mod rewrite;
pub mod rotate;
pub mod sched;
pub mod testgen;
