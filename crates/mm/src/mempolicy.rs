//! Memory policies (mm/mempolicy.c, v6.9+): which node a task's allocations start
//! from and which nodes they may use, on a machine of several nodes.
//!
//! A workload's policy (`set_mempolicy`) applies to every allocation its tasks make
//! (`alloc_pages` → `get_task_policy`); kernel threads allocate locally. The policy
//! gives the allocation its node (`policy_nodemask`'s `nid`, whose zonelist is walked)
//! and, for MPOL_BIND, the nodes it may take pages from. An interleaved anonymous
//! fault picks its node from the page's offset in the mapping (`interleave_nid`, the
//! VMA's interleave index); any other interleaved allocation takes the task's next
//! node in turn (`interleave_nodes`, `current->il_prev`).

use super::Mm;

/// A bit per node.
pub type Nodemask = u64;

/// Every node: no nodemask.
pub const NODE_MASK_ALL: Nodemask = u64::MAX;

/// A task's memory policy (`struct mempolicy`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Mempolicy {
    /// MPOL_DEFAULT (and MPOL_LOCAL): the node of the CPU the task runs on, then
    /// the others by distance.
    #[default]
    Local,
    /// MPOL_BIND: only the nodes of the mask, starting from the local node's
    /// zonelist.
    Bind { nodes: Nodemask },
    /// MPOL_PREFERRED: this node's zonelist, so the others by distance after it.
    Preferred { node: usize },
    /// MPOL_INTERLEAVE: page by page over the mask's nodes in order.
    Interleave { nodes: Nodemask },
    /// MPOL_WEIGHTED_INTERLEAVE: as interleave, node n taking `weights[n]` pages in
    /// turn (/sys/kernel/mm/mempolicy/weighted_interleave/nodeN; 1 by default).
    WeightedInterleave { nodes: Nodemask, weights: Vec<u8> },
}

/// A task's interleave state: the node it last interleaved onto (`il_prev`) and,
/// weighted, what is left of that node's weight (`il_weight`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IlState {
    pub prev: usize,
    pub weight: u8,
}

impl Default for IlState {
    /// `do_set_mempolicy` leaves `il_prev` at the last node, so the first interleaved
    /// allocation goes to the mask's first node.
    fn default() -> IlState {
        IlState {
            prev: Nodemask::BITS as usize - 1,
            weight: 0,
        }
    }
}

/// `next_node_in`: the mask's first node after `n`, wrapping round (None: empty).
fn next_node_in(n: usize, mask: Nodemask) -> Option<usize> {
    if mask == 0 {
        return None;
    }
    let above = if n + 1 >= Nodemask::BITS as usize {
        0
    } else {
        mask & (Nodemask::MAX << (n + 1))
    };
    let m = if above != 0 { above } else { mask };
    Some(m.trailing_zeros() as usize)
}

/// `interleave_nid`: the (ilx mod weight(mask))-th node of the mask.
fn interleave_nid(mask: Nodemask, ilx: u64) -> Option<usize> {
    let nnodes = u64::from(mask.count_ones());
    if nnodes == 0 {
        return None;
    }
    let mut m = mask;
    for _ in 0..ilx % nnodes {
        m &= m - 1;
    }
    Some(m.trailing_zeros() as usize)
}

/// `get_il_weight`: node `n`'s weight (1 where none is set).
fn il_weight(weights: &[u8], n: usize) -> u8 {
    weights.get(n).copied().unwrap_or(1).max(1)
}

/// `weighted_interleave_nid`: the node whose share of the weights' cycle holds
/// `ilx mod total weight`, nodes in order.
fn weighted_interleave_nid(mask: Nodemask, weights: &[u8], ilx: u64) -> Option<usize> {
    let weight = |n: usize| u64::from(il_weight(weights, n));
    let total: u64 = (0..Nodemask::BITS as usize)
        .filter(|&n| mask >> n & 1 == 1)
        .map(weight)
        .sum();
    if total == 0 {
        return None;
    }
    let mut target = ilx % total;
    let mut nid = mask.trailing_zeros() as usize;
    loop {
        let w = weight(nid);
        if target < w {
            return Some(nid);
        }
        target -= w;
        nid = next_node_in(nid, mask)?;
    }
}

impl Mm {
    /// `policy_nodemask` for an allocation now: the node whose zonelist it walks,
    /// the nodes it may use, and whether it interleaves (for NUMA_INTERLEAVE_HIT).
    /// `ilx` is an anonymous fault's interleave index (its page offset over the
    /// allocation's pages), None for any other allocation.
    /// The current task allocates by the default (local) policy, as every kernel
    /// thread does.
    #[inline]
    pub(crate) fn task_policy_is_local(&self) -> bool {
        match (self.current, self.current_workload) {
            (super::Current::Task(_), Some(w)) => self
                .cfg
                .workloads
                .get(w)
                .is_none_or(|c| matches!(c.mempolicy, Mempolicy::Local)),
            _ => true,
        }
    }

    pub(crate) fn policy_node(&mut self, ilx: Option<u64>) -> (usize, Nodemask, bool) {
        let local = self.numa_node_id();
        let (super::Current::Task(task), Some(w)) = (self.current, self.current_workload) else {
            return (local, NODE_MASK_ALL, false);
        };
        let Some(pol) = self.cfg.workloads.get(w).map(|c| &c.mempolicy) else {
            return (local, NODE_MASK_ALL, false);
        };
        match pol {
            Mempolicy::Local => (local, NODE_MASK_ALL, false),
            Mempolicy::Bind { nodes } => (local, *nodes, false),
            Mempolicy::Preferred { node } => (*node, NODE_MASK_ALL, false),
            Mempolicy::Interleave { nodes } => {
                let nid = match ilx {
                    Some(i) => interleave_nid(*nodes, i),
                    // interleave_nodes: the task's next node in turn.
                    None => {
                        let il = &mut self.il_state[task];
                        let n = next_node_in(il.prev, *nodes);
                        if let Some(n) = n {
                            il.prev = n;
                        }
                        n
                    }
                };
                (nid.unwrap_or(local), NODE_MASK_ALL, true)
            }
            Mempolicy::WeightedInterleave { nodes, weights } => {
                let nid = match ilx {
                    Some(i) => weighted_interleave_nid(*nodes, weights, i),
                    // weighted_interleave_nodes: the task's node until its weight is
                    // spent, then the next.
                    None => {
                        let il = &mut self.il_state[task];
                        if il.weight == 0 || *nodes >> il.prev & 1 == 0 {
                            if let Some(n) = next_node_in(il.prev, *nodes) {
                                il.prev = n;
                                il.weight = il_weight(weights, n);
                            }
                        }
                        il.weight = il.weight.saturating_sub(1);
                        (*nodes >> il.prev & 1 == 1).then_some(il.prev)
                    }
                };
                (nid.unwrap_or(local), NODE_MASK_ALL, true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_alloc::GFP_HIGHUSER_MOVABLE;
    use crate::test_util::{config, task_mm};
    use crate::SpaceKind;

    /// `test_util::two_nodes` (64 MiB each, a CPU each, no per-CPU lists; node 0's
    /// zone is id 0, node 1's id 3); workload 0's task runs on CPU 0 (node 0) under
    /// `pol`.
    fn two_nodes(pol: Mempolicy) -> Mm {
        let mut cfg = config(128);
        crate::test_util::two_nodes(&mut cfg);
        cfg.workloads[0].mempolicy = pol;
        let mut mm = task_mm(cfg);
        mm.current_workload = Some(0);
        mm
    }

    /// Nodes of `n` pages allocated by the task, as a kernel caller holds them.
    fn alloc_nodes(mm: &mut Mm, n: usize) -> Vec<usize> {
        (0..n)
            .map(|_| {
                let p = mm.alloc_kernel_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap();
                mm.pfn_to_nid(p)
            })
            .collect()
    }

    /// MPOL_BIND to node 1 from node 0's CPU: every page on node 1, each a hit (the
    /// preferred zone is the first of the mask's) and other_node (not the CPU's).
    #[test]
    fn bind_keeps_pages_on_the_masks_nodes() {
        let mut mm = two_nodes(Mempolicy::Bind { nodes: 0b10 });
        assert!(alloc_nodes(&mut mm, 1000).iter().all(|&n| n == 1));
        let s = mm.numa_stats[3];
        assert_eq!(
            (s.numa_hit, s.other_node, s.numa_miss, s.local_node),
            (1000, 1000, 0, 0)
        );
        assert_eq!(mm.numa_stats[0], Default::default());
        mm.check_invariants().unwrap();
    }

    /// MPOL_PREFERRED node 1: node 1's pages first; once node 1 is at its low
    /// watermark (226 pages, as page_alloc's spill test works out) node 0's, as
    /// misses: the preferred node's zonelist goes on to node 0.
    #[test]
    fn preferred_starts_from_its_node_and_falls_back() {
        let mut mm = two_nodes(Mempolicy::Preferred { node: 1 });
        let nodes = alloc_nodes(&mut mm, 17_000);
        let on1 = nodes.iter().take_while(|&&n| n == 1).count();
        assert!(nodes[on1..].iter().all(|&n| n == 0));
        assert!((16384 - 226 - 8..=16384 - 226 + 8).contains(&on1), "{on1}");
        assert_eq!(mm.numa_stats[0].numa_miss, (17_000 - on1) as u64);
        assert_eq!(mm.numa_stats[3].numa_foreign, (17_000 - on1) as u64);
        // The task runs on node 0: its node-0 pages are local, node 1's other.
        assert_eq!(mm.numa_stats[0].local_node, (17_000 - on1) as u64);
        assert_eq!(mm.numa_stats[3].other_node, on1 as u64);
    }

    /// MPOL_INTERLEAVE over both nodes: an anonymous fault's page goes by its offset
    /// (even offsets node 0, odd node 1), every one an interleave hit; other
    /// allocations take turns from node 0, the first fault's page table among them.
    #[test]
    fn interleave_places_faults_by_offset_and_the_rest_in_turn() {
        let mut mm = two_nodes(Mempolicy::Interleave { nodes: 0b11 });
        let space = mm.add_space(SpaceKind::Anon, "il".into(), 64, Some(0));
        for vpn in [5, 2, 7, 0, 3] {
            mm.handle_anon_fault(space, vpn, true);
            let pfn = crate::page::pte::pfn(mm.spaces[space as usize].pte(vpn));
            assert_eq!(mm.pfn_to_nid(pfn), vpn as usize % 2, "offset {vpn}");
        }
        // Five pages and the mapping's one page table (node 0: the task's first turn).
        let hits: u64 = mm.numa_stats.iter().map(|s| s.interleave_hit).sum();
        assert_eq!(hits, 6);
        mm.check_invariants().unwrap();
        assert_eq!(alloc_nodes(&mut mm, 5), [1, 0, 1, 0, 1]);
    }

    /// MPOL_WEIGHTED_INTERLEAVE with weights 2 and 1: a task's allocations go
    /// 0, 0, 1 in turn.
    #[test]
    fn weighted_interleave_takes_turns_by_weight() {
        let mut mm = two_nodes(Mempolicy::WeightedInterleave {
            nodes: 0b11,
            weights: vec![2, 1],
        });
        assert_eq!(alloc_nodes(&mut mm, 7), [0, 0, 1, 0, 0, 1, 0]);
    }

    #[test]
    fn next_node_in_wraps_round_the_mask() {
        assert_eq!(next_node_in(63, 0b1010), Some(1));
        assert_eq!(next_node_in(1, 0b1010), Some(3));
        assert_eq!(next_node_in(3, 0b1010), Some(1));
        assert_eq!(next_node_in(0, 0), None);
    }

    /// Nodes {0, 2, 3}: offsets 0, 1, 2, 3 go to 0, 2, 3, 0.
    #[test]
    fn interleave_nid_counts_the_masks_nodes() {
        let got: Vec<_> = (0..4).map(|i| interleave_nid(0b1101, i).unwrap()).collect();
        assert_eq!(got, [0, 2, 3, 0]);
    }

    /// Weights 3 (node 0) and 1 (node 1): a cycle of four, three on node 0.
    #[test]
    fn weighted_interleave_nid_follows_the_weights() {
        let got: Vec<_> = (0..8)
            .map(|i| weighted_interleave_nid(0b11, &[3, 1], i).unwrap())
            .collect();
        assert_eq!(got, [0, 0, 0, 1, 0, 0, 0, 1]);
    }
}
