//! schedlab's one measurement loop, shared by every benchmark (MD5, BigInteger, multi-buffer
//! MD5, the cost-model validation): a [`Workload`] says how to time `n` iterations of one row
//! at one size; [`run`] calibrates every row and size to a per-sample budget (which doubles as
//! warm-up), then times every row once per size in each repetition, in an order rotated per
//! repetition so that drift and order effects fall on every row alike, and lets the caller add
//! out-of-process rows (a JVM) between repetitions. [`Samples`] keeps every sample, so a ratio
//! is taken between two rows *of the same repetition* before the median is.
//!
//! The workloads and their comparison implementations live here too: [`md5`] (schedlab per
//! pipeline configuration, `md-5`, OpenSSL), [`bigint`] (schedlab, `num-bigint`), [`jvm`]
//! (HotSpot with and without its intrinsics, one process per variant), [`sha256`] (schedlab per
//! strategy, OpenSSL with and without its SHA extensions, `sha2` default and portable, HotSpot)
//! and [`compile_time`]; [`calls`] times any executable function (a registered kernel on its
//! cases, a `.clif` function on its run lines) per configuration against stock Cranelift.
//! [`command`] is the `schedlab bench` command behind its arguments: the dedicated drivers (MD5,
//! multi-buffer MD5, streams, SHA-256, BigInteger), any kernel's rows, `--validate-model`,
//! `--callgrind`, and the rendering of their results; the command line only parses arguments.
//!
//! Time only: no figure here is converted with a nominal clock. Cycles come from
//! [`measure::effective_clock_ghz`], probed in the same run.
#![deny(missing_docs)]

pub mod bigint;
pub mod calls;
pub mod command;
pub mod compile_time;
pub mod host;
pub mod jvm;
pub mod md5;
pub mod measure;
mod openssl;
mod runner;
pub mod sha256;
pub mod stats;
pub mod text_table;

pub use runner::{Budgets, External, Grid, Samples, Workload, rotated, run, run_external_rows};
pub use schedlab_sources::CliError;

// The `bench` command's drivers (`command`) came from the command-line crate and name this
// crate and the kernel plumbing by the paths they had there.
extern crate self as schedlab_bench;
use schedlab_sources::kernel;
