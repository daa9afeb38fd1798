//! Memory tiers (mm/memory-tiers.c as of v6.18): each node with memory has an
//! abstract distance (`adistance`), from its performance relative to the default DRAM
//! nodes' (`mt_perf_to_adistance`: what the HMAT and CXL drivers register); nodes whose
//! distances fall in one chunk of `MEMTIER_CHUNK_SIZE` share a tier. Reclaim demotes a
//! node's pages to its `preferred` nodes in the next slower tier (the nearest by SLIT
//! distance, `establish_demotion_targets`), falling back to any slower node
//! (`lower_tier_mask`). NUMA balancing's memory-tiering mode promotes pages from nodes
//! that are not top tier (`node_is_toptier`).

use crate::mempolicy::Nodemask;
use crate::{NodeConfig, NodePerf};

/// `MEMTIER_CHUNK_BITS`: a tier spans 1024 units of abstract distance.
pub const MEMTIER_CHUNK_BITS: u32 = 10;
pub const MEMTIER_CHUNK_SIZE: u32 = 1 << MEMTIER_CHUNK_BITS;
/// `MEMTIER_ADISTANCE_DRAM`: the default DRAM type's distance (tier 4: four faster
/// tiers are left for HBM and the like).
pub const MEMTIER_ADISTANCE_DRAM: u32 = 4 * MEMTIER_CHUNK_SIZE + (MEMTIER_CHUNK_SIZE >> 1);

/// `mt_perf_to_adistance`: distance grows with latency and shrinks with bandwidth,
/// relative to the default DRAM's, in the kernel's integer order of operations.
pub fn mt_perf_to_adistance(perf: NodePerf, dram: NodePerf) -> u32 {
    let (lat, bw) = (2 * perf.latency_ns, 2 * perf.bandwidth_mbps);
    let (dram_lat, dram_bw) = (2 * dram.latency_ns, 2 * dram.bandwidth_mbps);
    if lat == 0 || dram_lat == 0 {
        return MEMTIER_ADISTANCE_DRAM;
    }
    let adist = MEMTIER_ADISTANCE_DRAM as u64 * lat / dram_lat;
    // A bandwidth not given (0) on either side leaves the latency ratio alone.
    let adist = if bw == 0 || dram_bw == 0 {
        adist
    } else {
        adist * dram_bw / bw
    };
    adist.min(u32::MAX as u64) as u32
}

/// The node of CPUs nearest `n` (HMAT's best initiator; `n` itself if it has CPUs).
fn initiator(nodes: &[NodeConfig], n: usize) -> Option<usize> {
    (0..nodes.len())
        .filter(|&c| !nodes[c].cpus.is_empty())
        .min_by_key(|&c| (nodes[n].distance[c], c))
}

/// Per (CPU node c, memory node n), c-major: what a load from node n's memory costs
/// beyond `access_ns` (a local DRAM miss, what the hit loops charge): its HMAT
/// latency, scaled by SLIT distance from a CPU farther than its nearest (`latency ×
/// distance(c, n) / distance(initiator, n)`; a node with CPUs is its own initiator,
/// so remote DRAM costs `latency × distance / 10`). Nodes with no performance given
/// cost nothing extra. Empty when nothing costs extra.
pub fn access_extra_ns(nodes: &[NodeConfig], access_ns: u64) -> Vec<u64> {
    let nr = nodes.len();
    let mut extra = vec![0u64; nr * nr];
    for n in 0..nr {
        let Some(perf) = nodes[n].perf else {
            continue;
        };
        let Some(init) = initiator(nodes, n) else {
            continue;
        };
        let base = nodes[init].distance[n].max(1) as u64;
        for c in (0..nr).filter(|&c| !nodes[c].cpus.is_empty()) {
            let ns = perf.latency_ns * nodes[c].distance[n] as u64 / base;
            extra[c * nr + n] = ns.saturating_sub(access_ns);
        }
    }
    if extra.iter().all(|&e| e == 0) {
        return Vec::new();
    }
    extra
}

/// The nodes some CPU pays extra to reach, from [`access_extra_ns`]' table of `nr`
/// nodes.
pub fn slow_nodes(extra: &[u64], nr: usize) -> Nodemask {
    (0..nr)
        .filter(|&n| (0..nr).any(|c| extra.get(c * nr + n).is_some_and(|&e| e > 0)))
        .fold(0, |m, n| m | 1 << n)
}

/// The counters of demotion and promotion (node stat items and the NUMA balancing
/// events), kept per lruvec as `mod_lruvec_state` keeps them since v6.13 ("mm,memcg:
/// provide per-cgroup counters for NUMA balancing operations"): a node's value sums
/// its lruvecs, a memcg's its subtree's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum TierStat {
    PgpromoteSuccess,
    PgpromoteCandidate,
    PgpromoteCandidateNrl,
    PgdemoteKswapd,
    PgdemoteDirect,
    PgdemoteKhugepaged,
    PgdemoteProactive,
    NumaPteUpdates,
    NumaHintFaults,
    NumaHintFaultsLocal,
    NumaPagesMigrated,
}

pub const NR_TIER_STATS: usize = 11;

impl TierStat {
    /// Every counter, in `TIER_STAT_NAMES`' order.
    pub const ALL: [TierStat; NR_TIER_STATS] = [
        TierStat::PgpromoteSuccess,
        TierStat::PgpromoteCandidate,
        TierStat::PgpromoteCandidateNrl,
        TierStat::PgdemoteKswapd,
        TierStat::PgdemoteDirect,
        TierStat::PgdemoteKhugepaged,
        TierStat::PgdemoteProactive,
        TierStat::NumaPteUpdates,
        TierStat::NumaHintFaults,
        TierStat::NumaHintFaultsLocal,
        TierStat::NumaPagesMigrated,
    ];
}

/// /proc/vmstat's names, by `TierStat as usize`.
pub const TIER_STAT_NAMES: [&str; NR_TIER_STATS] = [
    "pgpromote_success",
    "pgpromote_candidate",
    "pgpromote_candidate_nrl",
    "pgdemote_kswapd",
    "pgdemote_direct",
    "pgdemote_khugepaged",
    "pgdemote_proactive",
    "numa_pte_updates",
    "numa_hint_faults",
    "numa_hint_faults_local",
    "numa_pages_migrated",
];

/// The ones memory.stat shows (v6.13+), in its order.
pub const MEMCG_TIER_STATS: [TierStat; 8] = [
    TierStat::PgpromoteSuccess,
    TierStat::PgdemoteKswapd,
    TierStat::PgdemoteDirect,
    TierStat::PgdemoteKhugepaged,
    TierStat::PgdemoteProactive,
    TierStat::NumaPagesMigrated,
    TierStat::NumaPteUpdates,
    TierStat::NumaHintFaults,
];

/// The tiers as `memory_tier_late_init` and `establish_demotion_targets` leave them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryTiers {
    /// Each node's abstract distance (0: no memory, no tier).
    pub adistance: Vec<u32>,
    /// The tiers, fastest first: (adistance_start, nodes).
    pub tiers: Vec<(u32, Nodemask)>,
    /// `node_demotion[nid].preferred`: the nearest nodes of the next slower tier.
    pub preferred: Vec<Nodemask>,
    /// Each node's tier's `lower_tier_mask`: every node of every slower tier.
    pub lower_tier_mask: Vec<Nodemask>,
    /// `top_tier_adistance`: the last distance of the slowest tier with a CPU.
    pub top_tier_adistance: u32,
}

impl MemoryTiers {
    /// `memory_tier_late_init` over `nodes`: each node with memory gets a distance from
    /// its `perf` (None: the default DRAM type). The default DRAM performance is the
    /// first node's with CPUs and memory; if another such node differs from it by more
    /// than 10 % (`mt_set_default_dram_perf`), the kernel disables the algorithm and
    /// every node is DRAM.
    pub fn new(nodes: &[NodeConfig], perf: &[Option<NodePerf>]) -> MemoryTiers {
        let n = nodes.len();
        let dram_nodes: Vec<usize> = (0..n)
            .filter(|&i| nodes[i].memory_pages > 0 && !nodes[i].cpus.is_empty())
            .collect();
        let reference = dram_nodes.iter().find_map(|&i| perf[i]);
        let mismatch = reference.is_some_and(|r| {
            dram_nodes.iter().filter_map(|&i| perf[i]).any(|p| {
                p.latency_ns.abs_diff(r.latency_ns) * 10 > r.latency_ns
                    || p.bandwidth_mbps.abs_diff(r.bandwidth_mbps) * 10 > r.bandwidth_mbps
            })
        });
        let adistance: Vec<u32> = (0..n)
            .map(|i| {
                if nodes[i].memory_pages == 0 {
                    return 0;
                }
                match (perf[i], reference) {
                    (Some(p), Some(r)) if !mismatch => mt_perf_to_adistance(p, r),
                    _ => MEMTIER_ADISTANCE_DRAM,
                }
            })
            .collect();
        let mut tiers: Vec<(u32, Nodemask)> = Vec::new();
        for (i, &a) in adistance.iter().enumerate() {
            if a == 0 {
                continue;
            }
            let start = a & !(MEMTIER_CHUNK_SIZE - 1);
            match tiers.iter_mut().find(|t| t.0 == start) {
                Some(t) => t.1 |= 1 << i,
                None => tiers.push((start, 1 << i)),
            }
        }
        tiers.sort_by_key(|t| t.0);
        let tier_of = |i: usize| tiers.iter().position(|t| t.1 >> i & 1 == 1);
        // establish_demotion_targets: the next slower tier's nodes at the least
        // distance.
        let preferred = (0..n)
            .map(|i| {
                let Some(t) = tier_of(i) else { return 0 };
                let Some(&(_, next)) = tiers.get(t + 1) else {
                    return 0;
                };
                let best = (0..n)
                    .filter(|&j| next >> j & 1 == 1)
                    .map(|j| nodes[i].distance[j])
                    .min();
                (0..n)
                    .filter(|&j| next >> j & 1 == 1 && Some(nodes[i].distance[j]) == best)
                    .fold(0, |m, j| m | 1 << j)
            })
            .collect();
        let lower_tier_mask = (0..n)
            .map(|i| match tier_of(i) {
                Some(t) => tiers[t + 1..].iter().fold(0, |m, t| m | t.1),
                None => 0,
            })
            .collect();
        // The slowest tier holding a node with CPUs, and every faster one, are top
        // tier.
        let top_tier_adistance = tiers
            .iter()
            .rev()
            .find(|t| (0..n).any(|j| t.1 >> j & 1 == 1 && !nodes[j].cpus.is_empty()))
            .map_or(0, |t| t.0 + MEMTIER_CHUNK_SIZE - 1);
        MemoryTiers {
            adistance,
            tiers,
            preferred,
            lower_tier_mask,
            top_tier_adistance,
        }
    }

    /// `node_is_toptier`: a node without memory (no tier) counts as top tier.
    pub fn node_is_toptier(&self, nid: usize) -> bool {
        let a = self.adistance[nid];
        a == 0 || (a & !(MEMTIER_CHUNK_SIZE - 1)) <= self.top_tier_adistance
    }

    /// `node_get_allowed_targets`: where a demotion from `nid` may go at all.
    pub fn node_get_allowed_targets(&self, nid: usize) -> Nodemask {
        self.lower_tier_mask[nid]
    }

    /// The tier id of a tier start (`memory_tierN` in sysfs).
    pub fn tier_id(adistance_start: u32) -> u32 {
        adistance_start >> MEMTIER_CHUNK_BITS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::node;

    const DRAM: NodePerf = NodePerf {
        latency_ns: 100,
        bandwidth_mbps: 40_000,
    };

    /// The adistance of a CXL node with 2.5× DRAM's latency and half its bandwidth:
    /// 4608 × 250 / 100 = 11520, × 40000 / 20000 = 23040, tier 22 (23040 >> 10).
    #[test]
    fn perf_to_adistance_by_hand() {
        let cxl = NodePerf {
            latency_ns: 250,
            bandwidth_mbps: 20_000,
        };
        assert_eq!(mt_perf_to_adistance(cxl, DRAM), 23_040);
        assert_eq!(MemoryTiers::tier_id(23_040 & !1023), 22);
        assert_eq!(mt_perf_to_adistance(DRAM, DRAM), MEMTIER_ADISTANCE_DRAM);
        assert_eq!(MemoryTiers::tier_id(MEMTIER_ADISTANCE_DRAM & !1023), 4);
    }

    /// The kernel's Example 1 (memory-tiers.c): nodes 0 and 1 are CPU + DRAM, 2 and 3
    /// PMEM; each DRAM node demotes to the PMEM node nearest it, PMEM nodes to none.
    #[test]
    fn example_one_two_sockets_with_pmem() {
        let nodes = [
            node(1, &[0], &[10, 20, 30, 40]),
            node(1, &[1], &[20, 10, 40, 30]),
            node(1, &[], &[30, 40, 10, 40]),
            node(1, &[], &[40, 30, 40, 10]),
        ];
        let pmem = Some(NodePerf {
            latency_ns: 300,
            bandwidth_mbps: 10_000,
        });
        let t = MemoryTiers::new(&nodes, &[Some(DRAM), Some(DRAM), pmem, pmem]);
        assert_eq!(t.tiers.len(), 2);
        assert_eq!(t.tiers[0].1, 0b0011);
        assert_eq!(t.tiers[1].1, 0b1100);
        assert_eq!(t.preferred, vec![0b0100, 0b1000, 0, 0]);
        assert_eq!(t.lower_tier_mask, vec![0b1100, 0b1100, 0, 0]);
        assert!(t.node_is_toptier(0) && t.node_is_toptier(1));
        assert!(!t.node_is_toptier(2) && !t.node_is_toptier(3));
    }

    /// Example 2: a CPU-less node of DRAM's performance shares DRAM's tier: no
    /// demotion anywhere, every node top tier.
    #[test]
    fn example_two_memory_only_dram() {
        let nodes = [
            node(1, &[0], &[10, 20, 30]),
            node(1, &[1], &[20, 10, 30]),
            node(1, &[], &[30, 30, 10]),
        ];
        let t = MemoryTiers::new(&nodes, &[None, None, None]);
        assert_eq!(t.tiers.len(), 1);
        assert_eq!(t.preferred, vec![0, 0, 0]);
        assert!((0..3).all(|i| t.node_is_toptier(i)));
    }

    /// Two CXL nodes equally near node 0 are both preferred (the kernel picks one at
    /// random per demotion batch).
    #[test]
    fn equal_distances_are_all_preferred() {
        let nodes = [
            node(1, &[0], &[10, 20, 20]),
            node(1, &[], &[20, 10, 30]),
            node(1, &[], &[20, 30, 10]),
        ];
        let cxl = Some(NodePerf {
            latency_ns: 250,
            bandwidth_mbps: 40_000,
        });
        let t = MemoryTiers::new(&nodes, &[Some(DRAM), cxl, cxl]);
        assert_eq!(t.preferred[0], 0b110);
        assert_eq!(t.top_tier_adistance, MEMTIER_ADISTANCE_DRAM & !1023 | 1023);
    }

    /// What an access costs beyond `costs.access` (100 ns): CXL node 2 (250 ns from
    /// its nearest CPUs, node 0's, at SLIT distance 20) costs node 0's CPUs
    /// 250 − 100 = 150 ns more, node 1's (distance 30) 250 × 30 / 20 − 100 = 275 ns;
    /// the DRAM nodes, which have CPUs, nothing. Only node 2 is marked slow.
    #[test]
    fn access_costs_by_hand() {
        let mut nodes = [
            node(1, &[0], &[10, 20, 20]),
            node(1, &[1], &[20, 10, 30]),
            node(1, &[], &[20, 30, 10]),
        ];
        nodes[2].perf = Some(NodePerf {
            latency_ns: 250,
            bandwidth_mbps: 20_000,
        });
        let extra = access_extra_ns(&nodes, 100);
        assert_eq!(extra, vec![0, 0, 150, 0, 0, 275, 0, 0, 0]);
        assert_eq!(
            slow_nodes(&access_extra_ns(&nodes, 100), nodes.len()),
            0b100
        );
        // No latency above an access: nothing is slow, and the table is empty.
        nodes[2].perf = Some(NodePerf {
            latency_ns: 50,
            bandwidth_mbps: 0,
        });
        assert!(access_extra_ns(&nodes, 100).is_empty());
        assert_eq!(slow_nodes(&access_extra_ns(&nodes, 100), nodes.len()), 0);
    }

    /// Two sockets of 100 ns DRAM at SLIT distance 21: a remote access costs
    /// 100 × 21 / 10 − 100 = 110 ns more, a local one nothing; both nodes are slow to
    /// the other's CPUs.
    #[test]
    fn remote_dram_costs_by_distance() {
        let dram = Some(NodePerf {
            latency_ns: 100,
            bandwidth_mbps: 0,
        });
        let mut nodes = [node(1, &[0], &[10, 21]), node(1, &[1], &[21, 10])];
        nodes[0].perf = dram;
        nodes[1].perf = dram;
        assert_eq!(access_extra_ns(&nodes, 100), vec![0, 110, 110, 0]);
        assert_eq!(slow_nodes(&access_extra_ns(&nodes, 100), nodes.len()), 0b11);
    }

    /// DRAM nodes whose performance differs by more than 10 %: the algorithm is off
    /// and every node, CXL included, is default DRAM.
    #[test]
    fn mismatched_dram_disables_the_algorithm() {
        let nodes = [
            node(1, &[0], &[10, 20, 20]),
            node(1, &[1], &[20, 10, 20]),
            node(1, &[], &[20, 20, 10]),
        ];
        let slow_dram = NodePerf {
            latency_ns: 120,
            bandwidth_mbps: 40_000,
        };
        let cxl = NodePerf {
            latency_ns: 250,
            bandwidth_mbps: 20_000,
        };
        let t = MemoryTiers::new(&nodes, &[Some(DRAM), Some(slow_dram), Some(cxl)]);
        assert_eq!(t.adistance, vec![MEMTIER_ADISTANCE_DRAM; 3]);
    }
}
