//! The control-flow edges between a function's emitted blocks, each attributed to the block
//! it leaves.
//!
//! Cranelift 0.135.8's `machine_code_cfg_info` emits cold blocks (trap blocks and the edge
//! blocks into them) after all the others and records each emitted block's start by *emission
//! position*, but when it lists every block's edges it reads those starts by *lowering index*
//! (`VCode::emit`). Where a cold block is not already last in the lowering order, the edges of
//! lowered block `b` carry the start of the block emitted at position `b`, and the edges of a
//! block whose position branch simplification removed are dropped. The targets are right
//! (resolved labels). [`attribute`] rebuilds the emission order from the VCode listing's
//! block labels and gives each edge its real source; where it cannot tell (which positions
//! were removed is ambiguous), the blocks' edges are reported unknown rather than guessed.

/// Block edges with their real sources, and the blocks whose edges are not known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttributedEdges {
    /// (start of the source block, target offset), sorted by source.
    pub edges: Vec<(u32, u32)>,
    /// Starts of emitted blocks whose edges Cranelift did not record or that could not be
    /// attributed, sorted: a jump table's dispatch in one of them has unknown targets.
    pub unknown: Vec<u32>,
}

/// The most sets of removed positions [`attribute`] checks before calling the edges unknown.
const MAX_HYPOTHESES: u64 = 4096;

/// The largest table of partial counts (positions × removed positions) [`attribute`] fills.
const MAX_TABLE: usize = 1 << 22;

/// `raw` (Cranelift's `bb_edges`) attributed to the blocks they leave, given `starts`
/// (Cranelift's `bb_starts`: the starts of the emitted blocks that survived branch
/// simplification, ascending) and `listing`, the VCode listing that names each block
/// (`blockN:`) in emission order. With the lowering order emitted as is, Cranelift's edges
/// are right and returned unchanged. Otherwise the removed positions are found among the
/// blocks that hold nothing but unconditional jumps: of the sets of them that fit the
/// recorded edges block by block, the one under which every label a block names can reach
/// that block's recorded targets is taken if it is the only one.
pub fn attribute(listing: &str, starts: &[u32], raw: &[(u32, u32)]) -> AttributedEdges {
    if raw.is_empty() {
        return AttributedEdges::default();
    }
    let all_unknown = || AttributedEdges {
        edges: Vec::new(),
        unknown: starts.to_vec(),
    };
    let blocks = listed_blocks(listing);
    if blocks.is_empty() {
        return all_unknown();
    }
    let order: Vec<usize> = blocks.iter().map(|b| b.index).collect();
    if order.iter().enumerate().all(|(p, &b)| p == b) {
        return AttributedEdges {
            edges: raw.to_vec(),
            unknown: Vec::new(),
        };
    }
    let n = order.len();
    let mut position_of = vec![usize::MAX; n];
    for (p, &b) in order.iter().enumerate() {
        if b >= n || position_of[b] != usize::MAX {
            return all_unknown();
        }
        position_of[b] = p;
    }
    let Some(removed) = n.checked_sub(starts.len()) else {
        return all_unknown();
    };
    let groups: Vec<&[(u32, u32)]> = raw.chunk_by(|a, b| a.0 == b.0).collect();
    let group_at: std::collections::HashMap<u32, usize> = groups
        .iter()
        .enumerate()
        .map(|(g, e)| (e[0].0, g))
        .collect();
    let layout = Layout {
        blocks: &blocks,
        position_of: &position_of,
        starts,
        group_of_rank: starts.iter().map(|s| group_at.get(s).copied()).collect(),
        group_at,
        groups: &groups,
    };
    let Some(hypotheses) = layout.locally_consistent(removed) else {
        return all_unknown();
    };
    let mut consistent = hypotheses.into_iter().filter(|h| layout.targets_agree(h));
    match (consistent.next(), consistent.next()) {
        (Some(by_position), None) => layout.attributed(&by_position),
        _ => all_unknown(),
    }
}

/// One block of the VCode listing: its lowering index, the labels its instructions name,
/// whether it holds nothing but unconditional jumps (so that branch simplification may remove
/// it whole, or send its label to the jump's target) and whether it returns.
struct ListedBlock {
    index: usize,
    labels: Vec<usize>,
    branches_only: bool,
    returns: bool,
    distinct_labels: usize,
}

/// The blocks of a VCode listing in emission order.
fn listed_blocks(listing: &str) -> Vec<ListedBlock> {
    let mut blocks: Vec<ListedBlock> = Vec::new();
    for line in listing.lines() {
        if let Some(index) = line
            .strip_prefix("block")
            .and_then(|rest| rest.strip_suffix(':'))
            .and_then(|n| n.parse().ok())
        {
            blocks.push(ListedBlock {
                index,
                labels: Vec::new(),
                branches_only: true,
                returns: false,
                distinct_labels: 0,
            });
            continue;
        }
        let Some(block) = blocks.last_mut() else {
            continue;
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let named = labels_named(text);
        block.branches_only &= is_unconditional_jump(text, &named);
        block.returns = text.starts_with("ret") || text == "br %r14";
        block.labels.extend(named);
    }
    for block in &mut blocks {
        let mut named = block.labels.clone();
        named.sort_unstable();
        named.dedup();
        block.distinct_labels = named.len();
    }
    blocks
}

/// Whether a listing line is one unconditional jump (`jmp`, `b`, `j`, `jg` to one label): the
/// only instruction branch simplification removes, and a block made of it alone the only one
/// whose label it may redirect to the jump's target.
fn is_unconditional_jump(text: &str, named: &[usize]) -> bool {
    let mnemonic = text.split_whitespace().next().unwrap_or("");
    named.len() == 1 && !text.contains(';') && matches!(mnemonic, "jmp" | "b" | "j" | "jg")
}

/// The block indices of the `labelN` words in one listing line.
fn labels_named(line: &str) -> Vec<usize> {
    line.split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|word| word.strip_prefix("label")?.parse().ok())
        .collect()
}

/// What a hypothesis about removed positions is checked against.
struct Layout<'a> {
    blocks: &'a [ListedBlock],
    position_of: &'a [usize],
    starts: &'a [u32],
    groups: &'a [&'a [(u32, u32)]],
    /// The group whose source is each recorded start.
    group_at: std::collections::HashMap<u32, usize>,
    /// The group whose source is the recorded start of each rank (`starts[r]`).
    group_of_rank: Vec<Option<usize>>,
}

impl Layout<'_> {
    /// Every assignment of starts to emission positions (`None`: removed) that removes
    /// `removed` positions, each of them a block of unconditional jumps only, and agrees with
    /// [`Layout::locally_consistent_at`] at every surviving position; `None` when there are
    /// more than [`MAX_HYPOTHESES`].
    fn locally_consistent(&self, removed: usize) -> Option<Vec<Vec<Option<u32>>>> {
        let n = self.blocks.len();
        let width = removed + 1;
        if (n + 1).saturating_mul(width) > MAX_TABLE {
            return None;
        }
        // ways[p * width + g]: the completions from position p with g positions removed
        // before it (and so p - g kept).
        let mut ways = vec![0u64; (n + 1) * width];
        ways[n * width + removed] = 1;
        for p in (0..n).rev() {
            for g in 0..width.min(p + 1) {
                let mut w = 0u64;
                if g < removed && self.blocks[p].branches_only {
                    w = w.saturating_add(ways[(p + 1) * width + g + 1]);
                }
                if self.locally_consistent_at(p, p - g) {
                    w = w.saturating_add(ways[(p + 1) * width + g]);
                }
                ways[p * width + g] = w;
            }
        }
        if ways[0] > MAX_HYPOTHESES {
            return None;
        }
        let mut all = Vec::new();
        let mut path = Vec::with_capacity(n);
        self.completions(&ways, width, 0, 0, &mut path, &mut all);
        Some(all)
    }

    /// Every completion of `path` (positions before `p`, `g` of them removed) that `ways`
    /// counts.
    fn completions(
        &self,
        ways: &[u64],
        width: usize,
        p: usize,
        g: usize,
        path: &mut Vec<Option<u32>>,
        all: &mut Vec<Vec<Option<u32>>>,
    ) {
        if p == self.blocks.len() {
            all.push(path.clone());
            return;
        }
        if g + 1 < width && self.blocks[p].branches_only && ways[(p + 1) * width + g + 1] > 0 {
            path.push(None);
            self.completions(ways, width, p + 1, g + 1, path, all);
            path.pop();
        }
        if self.locally_consistent_at(p, p - g) && ways[(p + 1) * width + g] > 0 {
            path.push(Some(self.starts[p - g]));
            self.completions(ways, width, p + 1, g, path, all);
            path.pop();
        }
    }

    /// Whether position `p` may start at the start of rank `r`: Cranelift recorded lowered
    /// block `p`'s edges there, so a block whose listing names labels (successors) has a group
    /// there with at least as many targets, and a block that returns has none.
    fn locally_consistent_at(&self, p: usize, r: usize) -> bool {
        let Some(&group) = self.group_of_rank.get(r) else {
            return false;
        };
        let block = &self.blocks[self.position_of[p]];
        match group {
            None => block.labels.is_empty(),
            Some(_) if block.returns => false,
            Some(g) => self.groups[g].len() >= block.distinct_labels,
        }
    }

    /// Whether every label a block with recorded edges names can resolve to one of its
    /// targets: a surviving block's label to its start; a block of unconditional jumps only
    /// may have been redirected to its jump's target, and a removed one's label may stay at
    /// the next surviving start. Every check holds for the true positions.
    fn targets_agree(&self, by_position: &[Option<u32>]) -> bool {
        by_position.iter().enumerate().all(|(p, start)| {
            let Some(&g) = start.and_then(|s| self.group_at.get(&s)) else {
                return true;
            };
            let group = self.groups[g];
            self.blocks[self.position_of[p]]
                .labels
                .iter()
                .all(|&label| {
                    let mut offsets = Vec::new();
                    self.label_offsets(label, by_position, 0, &mut offsets);
                    offsets
                        .iter()
                        .any(|o| group.iter().any(|&(_, to)| to == *o))
                })
        })
    }

    /// The offsets `label` may resolve to under `by_position` (see [`Layout::targets_agree`]).
    fn label_offsets(
        &self,
        label: usize,
        by_position: &[Option<u32>],
        depth: usize,
        out: &mut Vec<u32>,
    ) {
        let Some(&position) = self.position_of.get(label) else {
            return;
        };
        match by_position[position] {
            Some(start) => out.push(start),
            None => out.extend(by_position[position..].iter().flatten().next()),
        }
        let block = &self.blocks[position];
        if block.branches_only && depth < 8 {
            for &next in &block.labels {
                self.label_offsets(next, by_position, depth + 1, out);
            }
        }
    }

    /// The edges re-attributed under `by_position`.
    fn attributed(&self, by_position: &[Option<u32>]) -> AttributedEdges {
        let position_at: std::collections::HashMap<u32, usize> = by_position
            .iter()
            .enumerate()
            .filter_map(|(p, s)| Some(((*s)?, p)))
            .collect();
        let mut edges = Vec::new();
        for group in self.groups {
            let Some(&lowered) = position_at.get(&group[0].0) else {
                continue;
            };
            // A removed block's own edges lead nowhere that code can reach from it.
            if let Some(real) = by_position[self.position_of[lowered]] {
                edges.extend(group.iter().map(|&(_, to)| (real, to)));
            }
        }
        edges.sort_by_key(|&(from, _)| from);
        // Cranelift skipped the edges of lowered block `b` where position `b` was removed.
        let mut unknown: Vec<u32> = (0..by_position.len())
            .filter(|&b| by_position[b].is_none())
            .filter_map(|b| by_position[self.position_of[b]])
            .collect();
        unknown.sort_unstable();
        AttributedEdges { edges, unknown }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowering_order_emitted_as_is_keeps_the_edges() {
        let listing = "block0:\n  jnz label1; j label2\nblock1:\n  ret\nblock2:\n  ret\n";
        let raw = [(0, 10), (0, 20)];
        let got = attribute(listing, &[0, 10, 20], &raw);
        assert_eq!(got.edges, raw.to_vec());
        assert!(got.unknown.is_empty());
    }

    #[test]
    fn a_cold_block_moved_last_gives_the_edges_back_to_their_blocks() {
        // Lowered 0, 1 (cold), 2, 3; emitted 0, 2, 3, 1 at 0, 10, 20, 30.
        let listing = "block0:\n  mov\n  jnz label1; j label2\nblock2:\n  mov\n  jmp label3\n\
                       block3:\n  ret\nblock1:\n  ud2\n";
        // As Cranelift records them: lowered 0 at position 0's start, lowered 2 at position
        // 2's (20), lowered 1 has no edges.
        let raw = [(0, 30), (0, 10), (20, 20)];
        let got = attribute(listing, &[0, 10, 20, 30], &raw);
        assert_eq!(got.edges, vec![(0, 30), (0, 10), (10, 20)]);
        assert!(got.unknown.is_empty());
    }

    #[test]
    fn a_removed_jump_block_is_found_and_contradicting_edges_refused() {
        // Lowered 0, 1 (cold), 2 (only a jump, removed), 3; emitted 0, 2, 3, 1.
        let listing = "block0:\n  mov\n  jnz label1; j label2\nblock2:\n  jmp label3\n\
                       block3:\n  mov\n  jmp label0\nblock1:\n  ud2\n";
        // Positions 0, 1 (removed), 2, 3 start at 0, -, 10, 20. Lowered 2's edges were read
        // at position 2 (10); lowered 1's position survives but it has no edges; lowered 3's
        // position is 3 (20).
        let raw = [(0, 20), (0, 10), (10, 10), (20, 0)];
        let got = attribute(listing, &[0, 10, 20], &raw);
        // Lowered 2 is the removed block: its edge is dropped; lowered 3 starts at 10. Lowered
        // 1's edges were skipped with position 1: unknown (it has none, which nothing says).
        assert_eq!(got.edges, vec![(0, 20), (0, 10), (10, 0)]);
        assert_eq!(got.unknown, vec![20]);
        // Edges no set of removed blocks explains (the jump at position 2 does not reach the
        // block it names): refused, every block unknown.
        let contradicting = [(0, 20), (0, 10), (10, 0), (20, 0)];
        let got = attribute(listing, &[0, 10, 20], &contradicting);
        assert_eq!(got.edges, vec![]);
        assert_eq!(got.unknown, vec![0, 10, 20]);
    }

    #[test]
    fn a_listing_that_names_no_blocks_leaves_every_block_unknown() {
        let got = attribute("", &[0, 8], &[(0, 8), (8, 0)]);
        assert!(got.edges.is_empty());
        assert_eq!(got.unknown, vec![0, 8]);
    }
}
