//! The multi-buffer MD5 kernel's word area and store-to-load forwarding: as built, every step
//! loads its message word from the area (the library compiles it so, forwarding off); with
//! forwarding on, every one of those loads becomes the transposed value and the area's stores
//! and slot go (the register-resident form `bench --kernel md5-streams` times as `regs`).
#![allow(missing_docs)]

use cranelift_codegen::ir::{Function, InstructionData, Opcode};
use cranelift_codegen::settings;
use schedlab_kernels::md5_mb::{self, SCRATCH_REGION};
use schedlab_passes::forward;

/// (loads, stores) of the word area in `func`.
fn word_area_accesses(func: &Function) -> (usize, usize) {
    let (mut loads, mut stores) = (0, 0);
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let data = &func.dfg.insts[inst];
            let in_area = data
                .memflags_data(&func.dfg)
                .and_then(|f| f.alias_region())
                .is_some_and(|r| func.dfg.alias_regions[r].user_id == SCRATCH_REGION);
            if !in_area {
                continue;
            }
            match data {
                InstructionData::Load {
                    opcode: Opcode::Load,
                    ..
                } => loads += 1,
                InstructionData::Store {
                    opcode: Opcode::Store,
                    ..
                } => stores += 1,
                _ => {}
            }
        }
    }
    (loads, stores)
}

#[test]
fn every_step_reads_its_word_from_the_area_until_forwarding_folds_it_away() {
    for groups in 1..=md5_mb::MAX_GROUPS {
        let mut func = md5_mb::compress_lanes(groups);
        assert_eq!(
            word_area_accesses(&func),
            (64 * groups, 16 * groups),
            "{groups} groups as built: 64 loads and 16 stores per group"
        );
        let stats = forward::run(&mut func);
        assert_eq!(stats.loads_forwarded, 64 * groups, "{groups} groups");
        assert_eq!(stats.stores_removed, 16 * groups, "{groups} groups");
        assert_eq!(stats.slots_freed, 1, "{groups} groups");
        assert_eq!(word_area_accesses(&func), (0, 0), "{groups} groups");
        let flags = settings::Flags::new(settings::builder());
        cranelift_codegen::verify_function(&func, &flags)
            .unwrap_or_else(|e| panic!("{groups} groups after forwarding: {e}"));
    }
}
