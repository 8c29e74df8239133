//! Work done once for functions that are the same IR: a program's functions repeat across the
//! programs of one toolchain (its standard library, allocator, formatting), and a kernel whose
//! [`ContentKey`] an earlier kernel has gets that kernel's results, renamed, instead of going
//! through every strategy again.
//!
//! The unit is a job (one result: a report row), kernels' jobs in a fixed order: the jobs of
//! a twin are its first kernel's, one for one, when both have the same targets.

use crate::kernel::{ContentKey, Kernel};
use schedlab_backend::Target;
use std::collections::HashMap;

/// Which jobs copy an earlier job's result, built kernel by kernel as the jobs are listed.
#[derive(Default)]
pub struct TwinPlan {
    /// The first job of the first kernel with each key and target list.
    first_job: HashMap<(ContentKey, Vec<Target>), usize>,
    /// Per job listed so far, the job whose result it copies.
    origins: Vec<Option<usize>>,
}

impl TwinPlan {
    /// Records `jobs` more jobs of kernel `k` on `targets`, listed after every earlier
    /// kernel's: copies when an earlier kernel had its key and targets.
    pub fn add_kernel(&mut self, k: &Kernel, targets: &[Target], jobs: usize) {
        let start = self.origins.len();
        let twin = k.content.and_then(|key| {
            let first = *self
                .first_job
                .entry((key, targets.to_vec()))
                .or_insert(start);
            (first != start).then_some(first)
        });
        self.origins
            .extend((0..jobs).map(|offset| twin.map(|first| first + offset)));
    }

    /// The plan as the results are taken ([`Twins::take`]).
    pub fn into_twins<T>(self) -> Twins<T> {
        let mut copies_left = vec![0; self.origins.len()];
        for origin in self.origins.iter().flatten() {
            copies_left[*origin] += 1;
        }
        Twins {
            origins: self.origins,
            copies_left,
            kept: HashMap::new(),
        }
    }
}

/// Results taken in job order: each job's own, or its origin's, kept only until its last copy
/// has taken it.
pub struct Twins<T> {
    origins: Vec<Option<usize>>,
    copies_left: Vec<usize>,
    kept: HashMap<usize, T>,
}

impl<T: Clone> Twins<T> {
    /// Whether job `job` copies an earlier job's result (and is not to be computed).
    pub fn is_copy(&self, job: usize) -> bool {
        self.origins[job].is_some()
    }

    /// How many jobs copy an earlier one's result.
    pub fn copies(&self) -> usize {
        self.origins.iter().flatten().count()
    }

    /// The result of `job`, jobs taken in order: for a job that is not a copy, the next of
    /// `computed` (the results of the jobs that are not copies, in order); for a copy, its
    /// origin's.
    pub fn take(&mut self, job: usize, computed: &mut impl Iterator<Item = T>) -> T {
        match self.origins[job] {
            None => {
                let result = computed.next().expect("a result for every computed job");
                if self.copies_left[job] > 0 {
                    self.kept.insert(job, result.clone());
                }
                result
            }
            Some(origin) => {
                self.copies_left[origin] -= 1;
                if self.copies_left[origin] == 0 {
                    self.kept
                        .remove(&origin)
                        .expect("the origin is taken first")
                } else {
                    self.kept[&origin].clone()
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_passes::bce::heap::HeapFacts;
    use schedlab_wasm::BoundsChecks;

    fn kernel(name: &str, digest: Option<u8>) -> Kernel {
        Kernel {
            name: name.to_string(),
            builtin: None,
            func: cranelift_codegen::ir::Function::new(),
            clif: None,
            load_error: None,
            content: digest.map(|d| ContentKey {
                body_digest: [d; 32],
                mode: BoundsChecks::GuardPages,
                heap_facts: HeapFacts::default(),
            }),
        }
    }

    #[test]
    fn twins_take_their_first_kernels_results_one_for_one() {
        let both = [Target::X86_64, Target::Aarch64];
        let mut plan = TwinPlan::default();
        plan.add_kernel(&kernel("a", Some(1)), &both, 2); // jobs 0, 1
        plan.add_kernel(&kernel("b", Some(2)), &both, 2); // jobs 2, 3
        plan.add_kernel(&kernel("c", Some(1)), &both, 2); // jobs 4, 5: a's
        plan.add_kernel(&kernel("d", Some(1)), &[Target::X86_64], 1); // other targets: own
        plan.add_kernel(&kernel("e", None), &both, 2); // no key: own
        plan.add_kernel(&kernel("f", Some(1)), &both, 2); // jobs 9, 10: a's
        let mut twins = plan.into_twins::<String>();
        assert_eq!(twins.copies(), 4);
        let own: Vec<usize> = (0..11).filter(|&j| !twins.is_copy(j)).collect();
        assert_eq!(own, [0, 1, 2, 3, 6, 7, 8]);
        let mut computed = own.iter().map(|j| format!("job {j}"));
        let taken: Vec<String> = (0..11).map(|j| twins.take(j, &mut computed)).collect();
        assert_eq!(
            taken,
            [0, 1, 2, 3, 0, 1, 6, 7, 8, 0, 1].map(|j| format!("job {j}"))
        );
        assert!(twins.kept.is_empty(), "nothing is kept after its last copy");
    }
}
