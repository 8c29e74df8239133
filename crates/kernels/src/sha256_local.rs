//! `sha256-local`: the [`crate::sha256`] kernel with a private message schedule.
//!
//! `W` is a 256-byte stack slot of the compiled function instead of `SHA2`'s instance field,
//! as the `sha2` crate's portable backend and OpenSSL keep it, so the signature is `sha256`'s
//! minus `w`:
//!
//! ```text
//! function %sha256_local_compress_multi_block(i64 state, i64 buf, i32 len, i32 ofs, i32 limit) -> i32
//! ```
//!
//! Every access of `W` is still the same checked `int[64]` access; since nothing outside the
//! call can read the slot, the pipeline's store-to-load forwarding (`schedlab_passes::forward`)
//! may keep the whole schedule in SSA values and drop every store. The model is
//! [`crate::sha256`]'s without the `W` effect.

use crate::case::{Arg, Case, Effect};
use crate::registry::{CaseOptions, Kernel, KernelInfo};
use crate::sha256::{self, SCHEDULE_WORDS, Schedule, Sha256Kernel};

/// The registry entry of the private-`W` variant (`sha256-local`).
pub static KERNEL: Sha256LocalKernel = Sha256LocalKernel;

/// `sha256-local`: see the module documentation.
#[derive(Clone, Copy, Debug)]
pub struct Sha256LocalKernel;

impl Kernel for Sha256LocalKernel {
    fn info(&self) -> KernelInfo {
        KernelInfo {
            name: "sha256-local",
            summary: "sha256 with W a private 256-byte stack slot (as the sha2 crate and OpenSSL keep it): no sixth argument, no W effect",
            aliases: &[],
            build: || sha256::compress_multi_block_with(Schedule::Private),
        }
    }

    /// `sha256`'s cases without their `W` argument (the stale `W` contents they carry cannot
    /// matter here).
    fn cases(&self, options: &CaseOptions) -> Vec<Case> {
        Sha256Kernel
            .cases(options)
            .into_iter()
            .map(|case| {
                let mut args = case.args;
                args.truncate(5);
                Case::new(case.label, args)
            })
            .collect()
    }

    fn expected(&self, case: &Case) -> Result<Effect, String> {
        if case.args.len() != 5 {
            return Err(format!(
                "sha256-local takes 5 arguments, the case has {}",
                case.args.len()
            ));
        }
        // The visible-W model on a scratch W, whose final contents are dropped.
        let mut args = case.args.clone();
        args.push(Arg::Array(crate::case::ArrayArg::words(
            &[0u32; SCHEDULE_WORDS],
        )));
        let mut effect = Sha256Kernel.expected(&Case::new(case.label.clone(), args))?;
        effect.arrays.truncate(2);
        Ok(effect)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::settings;

    #[test]
    fn verifies_with_a_private_schedule_and_five_parameters() {
        let func = KERNEL.build();
        let flags = settings::Flags::new(settings::builder());
        cranelift_codegen::verify_function(&func, &flags).expect("kernel verifies");
        assert_eq!(func.signature.params.len(), 5);
        assert_eq!(func.sized_stack_slots.len(), 1);
        let slot = func.sized_stack_slots.values().next().expect("one slot");
        assert_eq!(slot.size as usize, 4 * SCHEDULE_WORDS);
    }

    #[test]
    fn the_model_is_sha256_without_w() {
        let options = CaseOptions { seed: 5, random: 4 };
        let local = KERNEL.cases(&options);
        let visible = Sha256Kernel.cases(&options);
        assert_eq!(local.len(), visible.len());
        for (l, v) in local.iter().zip(&visible) {
            let le = KERNEL.expected(l).expect("well-formed");
            let ve = Sha256Kernel.expected(v).expect("well-formed");
            assert_eq!(le.returns, ve.returns, "{}", l.label);
            assert_eq!(le.arrays[..], ve.arrays[..2], "{}", l.label);
            assert_eq!(le.arrays.len(), 2);
        }
    }
}
