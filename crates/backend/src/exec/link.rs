//! Compiling the units and their trampolines, and turning them into a module (JIT or object)
//! whose relocations connect calls between functions.

use super::trampoline::build_trampoline;
use super::{Call, THROW_ENTRY, Unit, provides_throw_entry};
use crate::compile::{Compiled, compile_with_isa};
use crate::target::Target;
use cranelift_codegen::ir::{ExternalName, Function, UserExternalName, UserFuncName};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_module::{FuncId, Linkage, Module, ModuleReloc, ModuleRelocTarget};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The external-name namespace that refers to a function of the same unit by its index.
const UNIT_NAMESPACE: u32 = 1;

/// The external-name namespace of the executor's own entries (index 0: [`THROW_ENTRY`]).
const HOST_NAMESPACE: u32 = 2;

/// One compiled function ready to be defined in a module.
pub(crate) struct LinkFn {
    /// The module symbol.
    pub symbol: String,
    /// The unit whose functions its calls refer to.
    pub unit: usize,
    /// Machine code and relocations.
    pub compiled: Compiled,
}

/// Everything compiled for one [`super::execute`] call.
pub(crate) struct Linked {
    /// Functions that compiled (with all their callees), then trampolines.
    pub functions: Vec<LinkFn>,
    /// `(unit, function)` → index in `functions`.
    pub unit_functions: HashMap<(usize, usize), usize>,
    /// Trampoline number → index in `functions`.
    pub trampolines: Vec<usize>,
    /// `(unit, function)` → trampoline number.
    trampoline_numbers: HashMap<(usize, usize), usize>,
    /// `(unit, function)` → why it (or a function it calls) cannot run.
    pub errors: HashMap<(usize, usize), String>,
    /// Whether some linked function refers to [`THROW_ENTRY`] (then the module imports it).
    pub uses_throw_entry: bool,
}

impl Linked {
    /// Why `call` cannot be made, if it cannot.
    pub fn call_error(&self, call: &Call) -> Option<&String> {
        self.errors.get(&(call.unit, call.function))
    }

    /// The trampoline number of `call`'s function (when [`Linked::call_error`] is `None`).
    pub fn trampoline_of(&self, call: &Call) -> usize {
        self.trampoline_numbers
            .get(&(call.unit, call.function))
            .copied()
            .unwrap_or(usize::MAX)
    }

    /// Declares and defines every function in `module`; returns the ids (same order as
    /// `functions`).
    pub fn define_in<M: Module>(&self, module: &mut M) -> Result<Vec<FuncId>, String> {
        let throw_entry = if self.uses_throw_entry {
            let signature = throw_entry_signature(module.isa().default_call_conv());
            Some(
                module
                    .declare_function(THROW_ENTRY, Linkage::Import, &signature)
                    .map_err(|e| format!("declaring {THROW_ENTRY}: {e}"))?,
            )
        } else {
            None
        };
        let mut ids = Vec::with_capacity(self.functions.len());
        for f in &self.functions {
            let id = module
                .declare_function(&f.symbol, Linkage::Export, &f.compiled.func.signature)
                .map_err(|e| format!("declaring {}: {e}", f.symbol))?;
            ids.push(id);
        }
        let alignment = u64::from(module.isa().function_alignment().preferred);
        for (f, &id) in self.functions.iter().zip(&ids) {
            let mut relocs = Vec::with_capacity(f.compiled.relocs.len());
            for r in &f.compiled.relocs {
                relocs.push(self.module_reloc(r, f, id, &ids, throw_entry)?);
            }
            module
                .define_function_bytes(id, alignment, &f.compiled.code, &relocs)
                .map_err(|e| format!("defining {}: {e}", f.symbol))?;
        }
        Ok(ids)
    }

    fn module_reloc(
        &self,
        reloc: &cranelift_codegen::FinalizedMachReloc,
        f: &LinkFn,
        id: FuncId,
        ids: &[FuncId],
        throw_entry: Option<FuncId>,
    ) -> Result<ModuleReloc, String> {
        use cranelift_codegen::FinalizedRelocTarget;
        if let FinalizedRelocTarget::ExternalName(ExternalName::TestCase(name)) = &reloc.target {
            return Err(format!("{}: unresolved reference to {name}", f.symbol));
        }
        let mut r = ModuleReloc::from_mach_reloc(reloc, &f.compiled.func, id);
        if let ModuleRelocTarget::User { namespace, index } = r.name {
            if let (HOST_NAMESPACE, 0, Some(entry)) = (namespace, index, throw_entry) {
                r.name = ModuleRelocTarget::from(entry);
                return Ok(r);
            }
            if namespace != UNIT_NAMESPACE {
                return Err(format!(
                    "{}: reference to an unknown function u{namespace}:{index}",
                    f.symbol
                ));
            }
            let k = self
                .unit_functions
                .get(&(f.unit, index as usize))
                .ok_or_else(|| format!("{}: callee {index} did not compile", f.symbol))?;
            r.name = ModuleRelocTarget::from(ids[*k]);
        }
        Ok(r)
    }
}

/// Compiles every function of every unit and one trampoline per called function. A function
/// that fails (an error or a panic in code generation) is recorded, and so is every function
/// that calls it; the others are linked.
pub(crate) fn compile_units(
    target: Target,
    isa: &OwnedTargetIsa,
    units: &[Unit],
    calls: &[Call],
) -> Linked {
    let mut linked = Linked {
        functions: Vec::new(),
        unit_functions: HashMap::new(),
        trampolines: Vec::new(),
        trampoline_numbers: HashMap::new(),
        errors: HashMap::new(),
        uses_throw_entry: false,
    };
    let throw_entry = provides_throw_entry(target);
    for (u, unit) in units.iter().enumerate() {
        let results: Vec<Result<(LinkFn, Vec<usize>), String>> = (0..unit.functions.len())
            .map(|i| compile_function(target, isa, u, unit, i, throw_entry))
            .collect();
        let errors = propagate_errors(&results);
        let mut called: Vec<usize> = calls
            .iter()
            .filter(|c| c.unit == u)
            .map(|c| c.function)
            .collect();
        called.sort_unstable();
        called.dedup();
        let mut signatures = HashMap::new();
        for (i, (result, error)) in results.into_iter().zip(errors).enumerate() {
            match (result, error) {
                (Ok((f, _)), None) => {
                    linked.uses_throw_entry |= refers_to_throw_entry(&f.compiled);
                    signatures.insert(i, f.compiled.func.signature.clone());
                    linked.unit_functions.insert((u, i), linked.functions.len());
                    linked.functions.push(f);
                }
                (_, Some(e)) | (Err(e), None) => {
                    linked.errors.insert((u, i), e);
                }
            }
        }
        for i in called {
            let Some(signature) = signatures.get(&i) else {
                continue;
            };
            let tramp = build_trampoline(
                signature,
                UserExternalName::new(UNIT_NAMESPACE, i as u32),
                isa.default_call_conv(),
                isa.frontend_config(),
            );
            match guarded_compile(tramp, target, isa) {
                Ok(compiled) => {
                    linked
                        .trampoline_numbers
                        .insert((u, i), linked.trampolines.len());
                    linked.trampolines.push(linked.functions.len());
                    linked.functions.push(LinkFn {
                        symbol: format!("schedlab_u{u}_t{i}"),
                        unit: u,
                        compiled,
                    });
                }
                Err(e) => {
                    let name = &unit.functions[i].name;
                    linked
                        .errors
                        .insert((u, i), format!("the call trampoline of {name}: {e}"));
                }
            }
        }
    }
    linked
}

/// Compiles function `i` of `unit` on its own; returns it with the indices of its callees.
fn compile_function(
    target: Target,
    isa: &OwnedTargetIsa,
    u: usize,
    unit: &Unit,
    i: usize,
    throw_entry: bool,
) -> Result<(LinkFn, Vec<usize>), String> {
    // Calling conventions stay as written (a `tail` function keeps `return_call`) but for
    // `fast`, the reader's default, which becomes the target's ([`compile_in_context`]); the
    // trampoline, in the target's default convention, calls the function in its own.
    let mut func = unit.functions[i].clone();
    let name = func.name.to_string();
    let callees = resolve_calls(&mut func, &unit.functions, throw_entry)
        .map_err(|e| format!("{name}: {e}"))?;
    let default_conv = isa.default_call_conv();
    let written_or_default = |sig: &mut cranelift_codegen::ir::Signature| {
        if sig.call_conv == CallConv::Fast {
            sig.call_conv = default_conv;
        }
    };
    written_or_default(&mut func.signature);
    func.dfg
        .signatures
        .values_mut()
        .for_each(written_or_default);
    let compiled = guarded_compile(func, target, isa).map_err(|e| format!("{name}: {e}"))?;
    Ok((
        LinkFn {
            symbol: format!("schedlab_u{u}_f{i}"),
            unit: u,
            compiled,
        },
        callees,
    ))
}

/// Per function: its own error, or the first error of a function it reaches through calls.
fn propagate_errors(results: &[Result<(LinkFn, Vec<usize>), String>]) -> Vec<Option<String>> {
    let mut errors: Vec<Option<String>> =
        results.iter().map(|r| r.as_ref().err().cloned()).collect();
    loop {
        let mut changed = false;
        for (i, result) in results.iter().enumerate() {
            if errors[i].is_some() {
                continue;
            }
            if let Ok((_, callees)) = result
                && let Some(bad) = callees
                    .iter()
                    .find_map(|&c| errors.get(c).cloned().flatten())
            {
                errors[i] = Some(bad);
                changed = true;
            }
        }
        if !changed {
            return errors;
        }
    }
}

/// Code generation with a panic turned into an error (Cranelift asserts on some inputs it
/// cannot lower, e.g. an i128 argument without `enable_llvm_abi_extensions`).
fn guarded_compile(
    func: Function,
    target: Target,
    isa: &OwnedTargetIsa,
) -> Result<Compiled, String> {
    match catch_unwind(AssertUnwindSafe(|| {
        compile_with_isa(func, target, isa.as_ref(), false)
    })) {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(payload) => Err(format!(
            "code generation panicked: {}",
            panic_message(&*payload)
        )),
    }
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// The signature [`THROW_ENTRY`] is declared with (Cranelift's runner's: entry frame pointer,
/// exit frame pointer, exit pc, tag, two payloads).
fn throw_entry_signature(call_conv: CallConv) -> cranelift_codegen::ir::Signature {
    use cranelift_codegen::ir::{AbiParam, Signature, types};
    let mut signature = Signature::new(call_conv);
    for ty in [
        types::I64,
        types::I64,
        types::I64,
        types::I32,
        types::I64,
        types::I64,
    ] {
        signature.params.push(AbiParam::new(ty));
    }
    signature
}

/// Whether `compiled` has a relocation against [`THROW_ENTRY`].
fn refers_to_throw_entry(compiled: &Compiled) -> bool {
    use cranelift_codegen::FinalizedRelocTarget;
    compiled.relocs.iter().any(|r| match &r.target {
        FinalizedRelocTarget::ExternalName(ExternalName::User(u)) => {
            let name = &compiled.func.params.user_named_funcs()[*u];
            (name.namespace, name.index) == (HOST_NAMESPACE, 0)
        }
        _ => false,
    })
}

/// Renames every `%name` (and `uN:M`) reference to a function of the same unit to
/// `u1:<index>`, so the module can resolve it; with `throw_entry`, a reference to
/// `%__cranelift_throw` that no function of the unit defines becomes the executor's entry
/// (`u2:0`, bound to [`THROW_ENTRY`] when the module is linked).
fn resolve_calls(
    func: &mut Function,
    unit: &[Function],
    throw_entry: bool,
) -> Result<Vec<usize>, String> {
    let mut callees = Vec::new();
    let refs: Vec<_> = func.dfg.ext_funcs.keys().collect();
    for fref in refs {
        let target_name = match &func.dfg.ext_funcs[fref].name {
            ExternalName::TestCase(name) => UserFuncName::Testcase(name.clone()),
            ExternalName::User(r) => UserFuncName::User(func.params.user_named_funcs()[*r].clone()),
            ExternalName::LibCall(_) | ExternalName::KnownSymbol(_) => continue,
        };
        let Some(index) = unit.iter().position(|f| f.name == target_name) else {
            if throw_entry && target_name == UserFuncName::testcase(THROW_ENTRY) {
                let entry = func
                    .params
                    .ensure_user_func_name(UserExternalName::new(HOST_NAMESPACE, 0));
                func.dfg.ext_funcs[fref].name = ExternalName::User(entry);
                continue;
            }
            return Err(format!(
                "{} calls {target_name}, which is not a function of this file",
                func.name
            ));
        };
        let new_ref = func
            .params
            .ensure_user_func_name(UserExternalName::new(UNIT_NAMESPACE, index as u32));
        func.dfg.ext_funcs[fref].name = ExternalName::User(new_ref);
        callees.push(index);
    }
    Ok(callees)
}
