//! `sink-loads`: each load right before its first use, everything else in source order.
//!
//! A load's key is the source position of its first in-block user; a load used only in later
//! blocks keeps its own position (sinking it to the block's end cannot bring it next to its
//! use, and would lengthen its address operands' live ranges instead: an address operand
//! whose last use is the load then stays live across the rest of the block). A pure
//! instruction that only feeds sunk loads (their address computation) moves with them. The list scheduler then places nodes by key, so the DAG still
//! has the last word: a load never passes a store it depends on.

use crate::sched::dag::{EdgeKind, Effect};
use crate::sched::registry::StrategyEntry;
use crate::sched::{DepDag, NodeId, Pick, ReadySet, Reason, SchedView, Strategy};

/// Placement key: (position of the anchor, 0 if sunk else 1, own position).
pub type SinkKey = (u32, u8, u32);

/// Computes every node's placement key.
pub fn sink_keys(dag: &DepDag) -> Vec<SinkKey> {
    let n = dag.len() as u32;
    let mut keys: Vec<SinkKey> = (0..n).map(|i| (i, 1, i)).collect();
    for id in (0..n).rev().map(NodeId) {
        let users = dag
            .succs(id)
            .filter(|(_, e)| e.kind == EdgeKind::Data)
            .map(|(s, _)| s);
        let i = id.0;
        if dag.is_load(id) {
            if let Some(first_user) = users.min() {
                keys[id.index()] = (first_user.0, 0, i);
            }
        } else if dag.node(id).effect == Effect::Pure {
            // Moves with its users when it has some and every one of them is sunk.
            let mut anchor = None;
            for u in users {
                let key = keys[u.index()];
                if key.1 != 0 {
                    anchor = None;
                    break;
                }
                anchor = Some(anchor.map_or(key.0, |a: u32| a.min(key.0)));
            }
            if let Some(anchor) = anchor {
                keys[id.index()] = (anchor, 0, i);
            }
        }
    }
    keys
}

/// Each key's position among all `keys` (as sorting them would give), in linear time: a
/// key is either a node's own `(i, 1, i)` or `(anchor, 0, i)` for a node moved to `anchor`, so
/// the sorted order is, anchor by anchor, the nodes moved there by position, then the anchor
/// itself if it was not moved.
fn ranks_of(keys: &[SinkKey]) -> Vec<u32> {
    let n = keys.len();
    // first[a]: the rank of the first key with anchor `a` (a counting sort by anchor).
    let mut first = vec![0u32; n + 1];
    for &(anchor, _, _) in keys {
        first[anchor as usize + 1] += 1;
    }
    for a in 0..n {
        first[a + 1] += first[a];
    }
    let mut moved_in = vec![0u32; n];
    for &(anchor, sunk, _) in keys {
        if sunk == 0 {
            moved_in[anchor as usize] += 1;
        }
    }
    let mut rank = vec![0u32; n];
    let mut next_moved = vec![0u32; n];
    for (i, &(anchor, sunk, _)) in keys.iter().enumerate() {
        let a = anchor as usize;
        rank[i] = if sunk == 0 {
            next_moved[a] += 1;
            first[a] + next_moved[a] - 1
        } else {
            first[a] + moved_in[a]
        };
    }
    debug_assert!({
        let mut by_key: Vec<usize> = (0..n).collect();
        by_key.sort_unstable_by_key(|&i| keys[i]);
        by_key
            .iter()
            .enumerate()
            .all(|(r, &i)| rank[i] as usize == r)
    });
    rank
}

/// Loads next to their uses.
#[derive(Debug, Default)]
pub struct SinkLoads {
    keys: Vec<SinkKey>,
    /// Per node: its key's position among all keys (keys are distinct: they end in the node's
    /// own position), so a pick compares one integer per candidate.
    rank: Vec<u32>,
}

impl SinkLoads {
    fn reason(&self, node: usize) -> Reason {
        if self.keys[node].1 == 0 {
            Reason::SinkToUse
        } else {
            Reason::SourceOrder
        }
    }
}

impl Strategy for SinkLoads {
    fn init_block(&mut self, view: &SchedView<'_>) {
        self.keys = sink_keys(view.dag);
        self.rank = ranks_of(&self.keys);
    }

    fn pick(&mut self, ready: &ReadySet, _view: &SchedView<'_>) -> Pick {
        let node = ready
            .min_by_key(|n| self.rank[n.index()])
            .expect("the driver never offers an empty ready set");
        Pick::new(node, self.reason(node.index()))
    }

    fn static_priority(&self) -> Option<Vec<(u32, Reason)>> {
        Some(
            (0..self.rank.len())
                .map(|i| (self.rank[i], self.reason(i)))
                .collect(),
        )
    }
}

/// Registry entry.
pub const ENTRY: StrategyEntry = StrategyEntry {
    name: "sink-loads",
    summary: "each load (and its address computation) right before its first use",
    make: |_| Box::new(SinkLoads::default()),
};
