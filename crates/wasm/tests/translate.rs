//! Translating a real (small) module: names, both bounds-check modes, the baseline ISA, and
//! the errors a bad module gives.

use cranelift_codegen::ir::Function;
use schedlab_backend::Target;
use schedlab_backend::compile::compile_with_isa;
use schedlab_backend::target::OptLevel;
use schedlab_wasm::{BoundsChecks, WasmError, heap_checks, translate};

const SMALL: &[u8] = include_bytes!("fixtures/small.wasm");

fn function<'a>(t: &'a schedlab_wasm::Translation, name: &str) -> &'a Function {
    let f = t
        .functions
        .iter()
        .find(|f| f.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("{name} is defined"));
    f.func
        .as_ref()
        .unwrap_or_else(|e| panic!("{name} parses: {e}"))
}

#[test]
fn every_defined_function_is_translated_with_its_name() {
    let t = translate(SMALL, BoundsChecks::GuardPages).expect("the fixture translates");
    for name in ["sum_table", "fill_table", "mix", "checksum"] {
        function(&t, name);
    }
    let mut indices: Vec<u32> = t.functions.iter().map(|f| f.index).collect();
    indices.dedup();
    assert_eq!(indices.len(), t.functions.len(), "one entry per function");
    // `mix` needs nothing but its arguments: vmctx and the caller's vmctx, then a, b, c.
    assert_eq!(function(&t, "mix").signature.params.len(), 5);
}

#[test]
fn explicit_mode_checks_every_memory_access_and_guard_pages_none() {
    let guard = translate(SMALL, BoundsChecks::GuardPages).expect("guard pages");
    let explicit = translate(SMALL, BoundsChecks::Explicit).expect("explicit checks");
    for name in ["sum_table", "fill_table"] {
        let (g, e) = (
            heap_checks(function(&guard, name)),
            heap_checks(function(&explicit, name)),
        );
        assert_eq!(g.total, 0, "{name}: guard pages cover a 32-bit memory");
        assert!(
            e.innermost_loops > Some(0),
            "{name}: {e:?}\n{}",
            function(&explicit, name).display()
        );
    }
    for t in [&guard, &explicit] {
        let mix = heap_checks(function(t, "mix"));
        assert_eq!(mix.total, 0, "mix touches no memory");
        assert_eq!(mix.innermost_loops, None, "mix has no loop");
    }
}

#[test]
fn wasmtimes_flags_compile_every_function_for_both_report_targets() {
    for mode in BoundsChecks::ALL {
        let t = translate(SMALL, mode).expect("translates");
        for target in [Target::X86_64, Target::Aarch64] {
            for opt in [OptLevel::None, OptLevel::Speed] {
                let isa = schedlab_wasm::isa(target, mode, opt).expect("ISA");
                for f in &t.functions {
                    let func = f.func.as_ref().expect("parses").clone();
                    compile_with_isa(func, target, isa.as_ref(), false).unwrap_or_else(|e| {
                        panic!("{} {target} {opt:?} {}: {e}", mode.name(), f.display_name())
                    });
                }
            }
        }
    }
}

#[test]
fn malformed_and_truncated_modules_are_errors_not_panics() {
    for bytes in [&b"not wasm"[..], &SMALL[..SMALL.len() / 2], &[][..]] {
        match translate(bytes, BoundsChecks::GuardPages) {
            Err(WasmError::Module(reason)) => assert!(!reason.is_empty()),
            other => panic!("expected a module error, got {other:?}"),
        }
    }
}

#[test]
fn modes_have_names_and_unknown_ones_are_refused() {
    for mode in BoundsChecks::ALL {
        assert_eq!(mode.name().parse::<BoundsChecks>(), Ok(mode));
    }
    let err = "fast".parse::<BoundsChecks>().expect_err("unknown");
    assert!(err.contains("guard, explicit"), "{err}");
}

#[test]
fn a_cached_translation_is_wasmtimes_translation() {
    use schedlab_wasm::{TranslationCache, translate_cached};
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = TranslationCache::at(dir.path());
    for mode in BoundsChecks::ALL {
        let fresh = translate_cached(SMALL, mode, &cache).expect("translates");
        let cached = translate_cached(SMALL, mode, &cache).expect("reads back");
        assert!(!fresh.from_cache && cached.from_cache, "{mode:?}");
        let alone = translate(SMALL, mode).expect("translates");
        assert!(!alone.from_cache);
        for t in [&fresh, &cached] {
            assert_eq!(t.functions.len(), alone.functions.len());
            for (f, g) in t.functions.iter().zip(&alone.functions) {
                assert_eq!(
                    (f.index, &f.name, f.body_digest),
                    (g.index, &g.name, g.body_digest)
                );
                let text = |f: &schedlab_wasm::WasmFunction| f.func.as_ref().unwrap().to_string();
                assert_eq!(text(f), text(g));
            }
        }
    }
    // One entry per mode.
    assert_eq!(std::fs::read_dir(dir.path()).expect("the cache").count(), 2);
}
