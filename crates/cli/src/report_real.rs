//! The report columns real programs need beside the kernel columns: whether the e-graph ran
//! before scheduling, Wasm heap bounds checks in innermost loops before → after, and compile
//! time per stage (the timed compile that fills them: [`crate::compile`]).

use cranelift_codegen::ir::Function;
use serde::Serialize;

/// Columns every report row has (JSON: flattened into the row; CSV: the last columns).
#[derive(Serialize, serde::Deserialize, Debug, Clone, Default, PartialEq)]
pub struct RealColumns {
    /// Cranelift's e-graph optimiser ran before scheduling (`--optimize`; always for the
    /// stock `cranelift-speed` row).
    pub optimized: bool,
    /// Wasm heap bounds checks (conditional `heap_oob` traps) in innermost-loop blocks of the
    /// function as given; `None` without a loop.
    pub loop_heap_checks_before: Option<usize>,
    /// The same in what code generation received.
    pub loop_heap_checks: Option<usize>,
    /// Microseconds in schedlab's IR stages (for `.wasm` functions without the verifier, as
    /// [`measuring_options`] says); `None` for the stock row, whose e-graph runs inside code
    /// generation, and without `--baseline` (rows then repeat byte for byte).
    pub ir_us: Option<u64>,
    /// Microseconds in code generation (Cranelift's `compile`: for the stock row, with its
    /// e-graph; lowering, register allocation, emission); `None` without `--baseline`.
    pub codegen_us: Option<u64>,
}

/// The CSV header of [`RealColumns`], in [`RealColumns::csv_cells`] order.
pub const CSV_HEADER: &str = "optimized,loop_heap_checks_before,loop_heap_checks,ir_us,codegen_us";

impl RealColumns {
    /// The census of `before` and `after` with the given flags and times.
    pub fn measure(
        optimized: bool,
        before: &Function,
        after: &Function,
        ir_us: Option<u64>,
        codegen_us: Option<u64>,
    ) -> Self {
        Self {
            optimized,
            loop_heap_checks_before: schedlab_wasm::heap_checks(before).innermost_loops,
            loop_heap_checks: schedlab_wasm::heap_checks(after).innermost_loops,
            ir_us,
            codegen_us,
        }
    }

    /// The CSV cells (empty for `None`).
    pub fn csv_cells(&self) -> String {
        let opt = |v: Option<usize>| v.map_or(String::new(), |v| v.to_string());
        let us = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        format!(
            "{},{},{},{},{}",
            self.optimized,
            opt(self.loop_heap_checks_before),
            opt(self.loop_heap_checks),
            us(self.ir_us),
            us(self.codegen_us)
        )
    }

    /// Total compile microseconds (IR stages + code generation).
    pub fn compile_us(&self) -> Option<u64> {
        self.codegen_us.map(|c| c + self.ir_us.unwrap_or(0))
    }
}
