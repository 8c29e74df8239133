//! Merging's narrowed bounds and widened bases are sunk out of loops they are only live
//! through (`bce::sink`): squareToLen's `sext(zlen)` and the left shift's narrowed bound no
//! longer live across the nested `mulAdd` loops; MD5, with one loop, is left exactly as it was.
#![allow(missing_docs)]

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{Function, InstructionData, Opcode, ValueDef};
use cranelift_codegen::loop_analysis::LoopAnalysis;
use schedlab_kernels::{bigint, md5};
use schedlab_passes::bce::{self, BceLevel};

/// The blocks of `func`'s loops that contain another loop (loop nests' outer loops).
fn nest_headers(func: &Function) -> Vec<cranelift_codegen::ir::Block> {
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let mut loops = LoopAnalysis::new();
    loops.compute(func, &cfg, &domtree);
    loops
        .loops()
        .filter_map(|l| loops.loop_parent(l))
        .map(|p| loops.loop_header(p))
        .collect()
}

#[test]
fn square_to_len_sinks_merged_values_below_the_mul_add_nest() {
    let mut func = bigint::square_to_len();
    let stats = bce::run(&mut func, BceLevel::Predicate).expect("bce");
    assert!(stats.values_sunk > 0, "{stats:?}");
    // `sext(zlen)` (a widened base of the last accesses) is defined after the nest: the
    // entry block no longer defines any extension of the `zlen` parameter.
    let entry = func.layout.entry_block().expect("entry");
    let zlen = func.dfg.block_params(entry)[5];
    let cfg = ControlFlowGraph::with_function(&func);
    let domtree = DominatorTree::with_function(&func, &cfg);
    let nest = nest_headers(&func);
    assert!(!nest.is_empty(), "squareToLen has a loop nest");
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let InstructionData::Unary { opcode, arg } = func.dfg.insts[inst] else {
                continue;
            };
            if opcode == Opcode::Sextend && arg == zlen {
                assert_ne!(block, entry, "sext(zlen) still in the entry block");
                for &h in &nest {
                    assert!(
                        !domtree.block_dominates(block, h),
                        "sext(zlen) in {block} is defined before the nest at {h}"
                    );
                }
            }
        }
    }
    assert!(matches!(func.dfg.value_def(zlen), ValueDef::Param(..)));
}

#[test]
fn md5_is_left_as_it_was() {
    for slow_path in [false, true] {
        let mut func = md5::compress_multi_block();
        let stats = if slow_path {
            let call = schedlab_passes::deopt::SlowPathCall::placeholder(
                cranelift_codegen::isa::CallConv::SystemV,
            );
            bce::run(
                &mut func,
                bce::BceOptions {
                    slow_path: Some(&call),
                    ..BceLevel::Predicate.into()
                },
            )
            .expect("bce")
        } else {
            bce::run(&mut func, BceLevel::Predicate).expect("bce")
        };
        assert_eq!(stats.values_sunk, 0, "slow path outlined: {slow_path}");
    }
}
