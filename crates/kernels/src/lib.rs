//! Kernels built as Cranelift IR with Java semantics.
//!
//! Each kernel is a plain [`cranelift_codegen::ir::Function`] so that later passes (bounds-check
//! elimination, scheduling, reassociation) can transform it before a backend compiles it. Array
//! reads follow what a JVM front end emits: every access is bounds-checked and a failed check
//! branches to an exit that returns [`java::OUT_OF_BOUNDS`] instead of trapping.
#![deny(missing_docs)]

pub mod bigint;
pub mod case;
pub mod digest;
pub mod int_sum;
pub mod ir_build;
pub mod ir_checks;
pub mod java;
pub mod md5;
pub mod md5_mb;
pub mod registry;
pub mod sha256;
pub mod sha256_local;

pub use java::OUT_OF_BOUNDS;
