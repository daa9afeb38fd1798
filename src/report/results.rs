//! `Results`: everything a run reports, the same data as results.json (schema in
//! docs/results.md). Maps are BTreeMaps so the JSON is byte-identical run to run.

use crate::mm::memcontrol::PageState;
use crate::mm::memcontrol::{MemcgEvents, PeakFile};
use crate::mm::memory_tiers::{TierStat, MEMCG_TIER_STATS, TIER_STAT_NAMES};
use crate::mm::page::lru;
use crate::scenario::units::PAGE_SIZE;
use crate::sim::{Simulation, TaskKind};
use crate::stats::psi::Pressure;
use crate::stats::vmstat::EV_NAMES;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped on any incompatible change to the JSON layout.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    pub schema_version: u32,
    pub reclaimsim_version: String,
    pub seed: u64,
    pub duration_ns: u64,
    /// /proc/vmstat: event counters and, at the end of the run, state counters.
    pub vmstat: BTreeMap<String, u64>,
    pub workloads: BTreeMap<String, WorkloadResult>,
    /// Per task CPU time: user (the workload's own work) and system (kernel work done
    /// for it: faults, direct reclaim; all of kswapd's and the flusher's).
    pub tasks: BTreeMap<String, TaskResult>,
    pub reclaim: ReclaimResult,
    pub psi: PsiResult,
    pub swap: SwapResult,
    /// The system's memory footprint, as /proc/meminfo shows it.
    #[serde(default)]
    pub memory: MemoryResult,
    /// Per zone, by name (`Normal`); on a machine of several nodes by node and name
    /// (`node1/Normal`), as /proc/zoneinfo's `Node 1, zone Normal`.
    pub zones: BTreeMap<String, ZoneResult>,
    /// Per node (`node0`, `node1`, ...) on a machine of several nodes:
    /// /sys/devices/system/node/nodeN/vmstat and numastat, and its kswapd. Empty (and
    /// absent from results.json) on one node.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes: BTreeMap<String, NodeResult>,
    /// Per cgroup (memory.current, memory.stat, memory.events); empty until memcg lands.
    pub cgroups: BTreeMap<String, serde_json::Value>,
    /// Reclaim throttling: per reason (VMSCAN_THROTTLE_*) or legacy sleep
    /// (writeback_congestion_wait, writeback_wait_iff_congested, msleep_too_many_isolated),
    /// or throttle_direct_reclaim's wait on pfmemalloc_wait: how many sleeps, how they ended, and the usec_delayed histogram.
    #[serde(default)]
    pub reclaim_throttle: BTreeMap<String, ThrottleResult>,
    /// DAMON, when the scenario configures it: each kdamond's state, CPU and scheme
    /// stats, and DAMON_RECLAIM's read-only parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damon: Option<DamonResult>,
    /// OOM kills and failed forks, in time order.
    pub events: Vec<EventRecord>,
    /// Timed actions applied, in time order.
    pub actions: Vec<ActionRecord>,
    /// The run was stopped (Ctrl-C) before the scenario's duration: everything above
    /// covers `duration_ns`, the virtual time reached.
    #[serde(default)]
    pub interrupted: bool,
    /// What was run: enough to rerun it, and to tell whether it is stale.
    #[serde(default)]
    pub provenance: Provenance,
}

/// Where a result came from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// The scenario file as named on the command line, and its text.
    pub scenario_file: String,
    pub scenario_text: String,
    /// `--set` overrides in the order applied (a sweep point's values last).
    pub sets: Vec<String>,
    pub seed: u64,
    pub reclaimsim_version: String,
    /// SHA-256 of the fully resolved scenario (`scenario::resolved_hash`).
    pub scenario_hash: String,
    /// When the periodic memcg statistics flush first ran (`run.memcg_stats_flush_first`,
    /// drawn from the seed unless set): where in its 2 s period the run started.
    #[serde(default)]
    pub memcg_stats_flush_first_ns: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkloadResult {
    pub ops: u64,
    /// Operations per second over the time the workload ran.
    pub throughput: f64,
    pub bytes_per_sec: f64,
    pub latency_ns: Latency,
    pub killed_at_ns: Option<u64>,
    /// Its process could not be forked as it started (ENOMEM: its memcg at its limit
    /// with nothing to reclaim or kill, or no memory): it never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_failed_at_ns: Option<u64>,
    /// `phases`: time from start until every thread finished its steps (null if they
    /// did not finish within the run).
    #[serde(default)]
    pub runtime_ns: Option<u64>,
    /// `highalloc`: attempts (`ops`) that got their block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc_success: Option<u64>,
    /// A workload of several `processes`, or one whose `lifetime` replaced its process:
    /// the processes forked over the run, the first ones included (each later one
    /// replaced one that exited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forks: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub mean: f64,
    pub stddev: f64,
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    /// The latency distribution: (value in ns, fraction of operations at or below it)
    /// at fixed quantiles, for CDF plots.
    #[serde(default)]
    pub cdf: Vec<(u64, f64)>,
}

/// Quantiles sampled into `Latency::cdf`.
pub const CDF_QUANTILES: [f64; 20] = [
    0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999,
    0.9995, 0.9999, 1.0,
];

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TaskResult {
    pub user_ns: u64,
    pub system_ns: u64,
    /// Workload threads: operations completed (each access of an access loop counts),
    /// and when the last one completed (null if none did).
    #[serde(default)]
    pub ops: u64,
    #[serde(default)]
    pub last_op_ns: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReclaimResult {
    /// CPU time of the kswapds, summed over the nodes.
    pub kswapd_cpu_ns: u64,
    pub direct_reclaim_cpu_ns: u64,
    /// The kswapds' wake-ups, summed over the nodes.
    pub kswapd_wakeups: u64,
    /// `kswapd_failures` at the end: the highest of the nodes'.
    pub kswapd_failures: u32,
    /// Time kswapd spent awake: from a wake-up to its next nap or sleep (running, or
    /// blocked inside reclaim), summed over the nodes.
    #[serde(default)]
    pub kswapd_awake_ns: u64,
    /// Time kcompactd spent awake (its runs: compaction and the proactive checks),
    /// summed over the nodes.
    #[serde(default)]
    pub kcompactd_awake_ns: u64,
    /// kcompactd's wake-ups with work (`compact_daemon_wake`).
    #[serde(default)]
    pub kcompactd_wakeups: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ThrottleResult {
    pub count: u64,
    /// Ended by a wake-up before the timeout.
    pub woken_early: u64,
    /// Slept the whole timeout.
    pub timed_out: u64,
    /// usec_delayed (as the tracepoint reports it, whole jiffies) → number of sleeps.
    pub usec_delayed: BTreeMap<u64, u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PsiResult {
    pub memory: PsiResource,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PsiResource {
    pub some: PsiLine,
    pub full: PsiLine,
}

/// One line of /proc/pressure/memory: averages in percent, total in microseconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PsiLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    pub total: u64,
}

/// MemTotal and MemTotal - MemFree over the run: its mean over the samples (each
/// standing for the `run.sample_interval` up to it, the last for the rest of the run)
/// and its peak, the "system memory footprint" DAMON_RECLAIM's evaluation sampled. A
/// zram pool is memory used.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MemoryResult {
    pub total_bytes: u64,
    pub mean_used_bytes: u64,
    pub max_used_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SwapResult {
    pub kind: String,
    pub total_pages: u64,
    pub used_pages: u64,
    /// zram mm_stat: uncompressed bytes stored, compressed bytes, pool memory.
    pub orig_data_size: u64,
    pub compr_data_size: u64,
    pub mem_used_total: u64,
}

/// One node of a machine of several.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeResult {
    /// Its pages (the zones' managed pages, MemTotal of nodeN/meminfo).
    pub managed: u64,
    /// nodeN/vmstat's state counters at the end of the run: nr_free_pages, the LRU
    /// lists (nr_inactive_anon ... nr_unevictable), nr_mlock.
    pub vmstat: BTreeMap<String, u64>,
    /// nodeN/numastat: numa_hit, numa_miss, numa_foreign, interleave_hit,
    /// local_node, other_node (summed over its zones).
    pub numastat: BTreeMap<String, u64>,
    /// Its kswapd: CPU time, wake-ups, `kswapd_failures` at the end.
    pub kswapd_cpu_ns: u64,
    pub kswapd_wakeups: u64,
    pub kswapd_failures: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ZoneResult {
    pub managed: u64,
    pub free: u64,
    pub min: u64,
    pub low: u64,
    pub high: u64,
    /// /proc/zoneinfo `protection:` (lowmem_reserve).
    pub protection: Vec<u64>,
    /// /proc/zoneinfo `pagesets`: the pages on every CPU's per-CPU lists (not in
    /// `free`), and the lists' `batch`, `high_min` and `high_max` (v4.5 and v5.14:
    /// both are `high`; all 0 with `kernel.pcp = "off"`). Absent from the results of
    /// runs before the per-CPU lists (read as 0).
    #[serde(default)]
    pub pcp_count: u64,
    #[serde(default)]
    pub pcp_batch: u64,
    #[serde(default)]
    pub pcp_high_min: u64,
    #[serde(default)]
    pub pcp_high_max: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DamonResult {
    /// By thread name (`kdamond.0`, ...).
    pub kdamonds: BTreeMap<String, KdamondResult>,
    /// /sys/module/damon_reclaim/parameters/ (the read-only ones and `enabled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damon_reclaim: Option<DamonReclaimResult>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KdamondResult {
    /// "on" or "off" at the end of the run.
    pub state: String,
    pub operations: String,
    /// The kdamond's CPU time (system).
    pub cpu_ns: u64,
    /// Regions at the end (0 once off).
    pub nr_regions: u64,
    pub schemes: Vec<SchemeResult>,
}

/// `schemes/<N>/stats/` plus the action, for reading.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SchemeResult {
    pub action: String,
    pub nr_tried: u64,
    pub sz_tried: u64,
    pub nr_applied: u64,
    pub sz_applied: u64,
    pub qt_exceeds: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DamonReclaimResult {
    pub enabled: bool,
    pub kdamond_pid: i64,
    pub nr_reclaim_tried_regions: u64,
    pub bytes_reclaim_tried_regions: u64,
    pub nr_reclaimed_regions: u64,
    pub bytes_reclaimed_regions: u64,
    pub nr_quota_exceeds: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EventRecord {
    pub time_ns: u64,
    pub event: String,
    pub workload: String,
    pub rss_pages: u64,
    pub swap_pages: u64,
}

/// The engine's record of a timed action, as results.json lists it.
pub use crate::sim::ActionRecord;

/// State counters reported in `vmstat` besides the event counters.
pub const STATE_COUNTERS: [&str; 16] = [
    "nr_inactive_anon",
    "nr_active_anon",
    "nr_inactive_file",
    "nr_active_file",
    "nr_unevictable",
    "nr_mlock",
    "nr_free_pages",
    "nr_file_pages",
    "nr_slab_reclaimable",
    "nr_slab_unreclaimable",
    "nr_page_table_pages",
    "nr_kernel_stack",
    "nr_dirty",
    "nr_writeback",
    "nr_dirty_background_threshold",
    "nr_dirty_threshold",
];

/// Every name results.json's `vmstat` holds.
pub fn vmstat_names() -> impl Iterator<Item = &'static str> {
    EV_NAMES.iter().copied().chain(STATE_COUNTERS)
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// The LRU lists' state counters, as vmstat names them (the machine's and each
/// node's).
const LRU_STATE: [(&str, usize); 5] = [
    ("nr_inactive_anon", lru::INACTIVE_ANON),
    ("nr_active_anon", lru::ACTIVE_ANON),
    ("nr_inactive_file", lru::INACTIVE_FILE),
    ("nr_active_file", lru::ACTIVE_FILE),
    ("nr_unevictable", lru::UNEVICTABLE),
];

/// numastat's counters summed over `stats` (zones).
fn numastat(stats: &[crate::mm::vmstat::NumaStats]) -> BTreeMap<String, u64> {
    let sum = |f: fn(&crate::mm::vmstat::NumaStats) -> u64| stats.iter().map(f).sum::<u64>();
    [
        ("numa_hit", sum(|s| s.numa_hit)),
        ("numa_miss", sum(|s| s.numa_miss)),
        ("numa_foreign", sum(|s| s.numa_foreign)),
        ("interleave_hit", sum(|s| s.interleave_hit)),
        ("local_node", sum(|s| s.local_node)),
        ("other_node", sum(|s| s.other_node)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Each node's results on a machine of several (none on one).
fn node_results(mm: &crate::mm::Mm, kswapd_cpu_ns: &[u64]) -> BTreeMap<String, NodeResult> {
    if mm.nr_nodes() == 1 {
        return BTreeMap::new();
    }
    (0..mm.nr_nodes())
        .map(|nid| {
            let zones = mm.node_zones(nid);
            let mut vmstat = BTreeMap::new();
            vmstat.insert("nr_free_pages".to_string(), mm.node_free_pages(nid));
            for (name, l) in LRU_STATE {
                vmstat.insert(name.to_string(), mm.node_lru_pages(nid, l));
            }
            let mlock = mm.zones[zones.clone()].iter().map(|z| z.nr_mlock).sum();
            vmstat.insert("nr_mlock".to_string(), mlock);
            // The page states node reclaim weighs.
            let state = &mm.node_page_state[nid];
            vmstat.insert("nr_file_pages".to_string(), mm.node_file_pages(nid));
            vmstat.insert(
                "nr_mapped".to_string(),
                state[PageState::FileMapped as usize],
            );
            vmstat.insert("nr_dirty".to_string(), state[PageState::FileDirty as usize]);
            vmstat.insert(
                "nr_slab_reclaimable".to_string(),
                mm.node_slab_reclaimable_pages[nid],
            );
            for (i, name) in TIER_STAT_NAMES.iter().enumerate() {
                vmstat.insert(name.to_string(), mm.node_tier_stat(nid, TierStat::ALL[i]));
            }
            let k = &mm.kswapd[nid];
            (
                format!("node{nid}"),
                NodeResult {
                    managed: mm.node_managed_pages(nid),
                    vmstat,
                    numastat: numastat(&mm.numa_stats[zones]),
                    kswapd_cpu_ns: kswapd_cpu_ns[nid],
                    kswapd_wakeups: k.wakeups,
                    kswapd_failures: k.failures,
                },
            )
        })
        .collect()
}

impl Results {
    pub fn collect(sim: &Simulation) -> Results {
        let mm = &sim.mm;
        let end = sim.end_ns();
        let mut vmstat: BTreeMap<String, u64> = EV_NAMES
            .iter()
            .zip(mm.vmstat.ev.iter())
            .map(|(n, v)| (n.to_string(), *v))
            .collect();
        for (name, l) in LRU_STATE {
            vmstat.insert(name.into(), mm.global_lru_pages(l));
        }
        vmstat.insert("nr_mlock".into(), mm.nr_mlock());
        // A NUMA kernel's /proc/vmstat also has the allocation counters.
        if mm.nr_nodes() > 1 {
            for (name, n) in numastat(&mm.numa_stats) {
                vmstat.insert(name, n);
            }
            // And the tiering counters, summed over the nodes.
            for (i, name) in TIER_STAT_NAMES.iter().enumerate() {
                let n = (0..mm.nr_nodes())
                    .map(|nid| mm.node_tier_stat(nid, TierStat::ALL[i]))
                    .sum();
                vmstat.insert(name.to_string(), n);
            }
        }
        // Node reclaim's events: a NUMA kernel's, shown on several nodes or once
        // `vm.zone_reclaim_mode` is in play (a one-node run's list stays as it was).
        let nr = mm.node_reclaim_events;
        if mm.nr_nodes() > 1 || mm.cfg.zone_reclaim_mode != 0 || nr.success + nr.failed > 0 {
            vmstat.insert("zone_reclaim_success".into(), nr.success);
            vmstat.insert("zone_reclaim_failed".into(), nr.failed);
        }
        vmstat.insert("nr_free_pages".into(), mm.nr_free_pages());
        vmstat.insert("nr_slab_reclaimable".into(), mm.slab_pages[1]);
        vmstat.insert("nr_slab_unreclaimable".into(), mm.slab_pages[0]);
        vmstat.insert("nr_page_table_pages".into(), mm.nr_page_table_pages());
        // In KiB, as the kernel reports it.
        vmstat.insert("nr_kernel_stack".into(), mm.nr_kernel_stack_pages() * 4);
        vmstat.insert(
            "nr_file_pages".into(),
            mm.global_lru_pages(lru::INACTIVE_FILE) + mm.global_lru_pages(lru::ACTIVE_FILE),
        );
        vmstat.insert("nr_dirty".into(), mm.wb.nr_dirty);
        vmstat.insert("nr_writeback".into(), mm.wb.nr_writeback);
        let (bg, thresh) = mm.dirty_thresholds();
        vmstat.insert("nr_dirty_background_threshold".into(), bg);
        vmstat.insert("nr_dirty_threshold".into(), thresh);

        let mut workloads = BTreeMap::new();
        // A workload of several processes is one engine workload each: their
        // operations and latencies add up, over the time any of them ran.
        let nr_groups = sim.workloads.iter().map(|w| w.group + 1).max().unwrap_or(0);
        for g in 0..nr_groups {
            let procs: Vec<_> = sim.workloads.iter().filter(|w| w.group == g).collect();
            let first = procs[0];
            // Rates are over the measured time: from the end of any ramp to the stop,
            // the OOM kill, or the end of the work, whichever came first.
            let ran_until = procs
                .iter()
                .map(|w| {
                    w.killed_at
                        .or(w.finished_at)
                        .unwrap_or(w.stop_ns)
                        .min(end)
                        .max(w.stats_from_ns)
                })
                .max()
                .unwrap_or(0);
            let secs = (ran_until - first.stats_from_ns) as f64 / 1e9;
            let merged;
            let stats = if procs.len() == 1 {
                &first.stats
            } else {
                let mut m = first.stats.clone();
                for w in &procs[1..] {
                    m.merge(&w.stats);
                }
                merged = m;
                &merged
            };
            let h = &stats.latency;
            let latency_ns = if stats.ops == 0 {
                Latency {
                    mean: 0.0,
                    stddev: 0.0,
                    min: 0,
                    p50: 0,
                    p90: 0,
                    p99: 0,
                    max: 0,
                    cdf: Vec::new(),
                }
            } else {
                Latency {
                    mean: round3(h.mean()),
                    stddev: round3(h.stdev()),
                    min: h.min(),
                    p50: h.value_at_quantile(0.5),
                    p90: h.value_at_quantile(0.9),
                    p99: h.value_at_quantile(0.99),
                    max: h.max(),
                    cdf: CDF_QUANTILES
                        .iter()
                        .map(|&q| (h.value_at_quantile(q), q))
                        .collect(),
                }
            };
            let earliest = |f: fn(&crate::workload::Workload) -> Option<u64>| {
                procs.iter().filter_map(|w| f(w)).min()
            };
            // phases: done when the last process finished.
            let finished_at = procs
                .iter()
                .map(|w| w.finished_at)
                .try_fold(0, |m, at| at.map(|a| a.max(m)));
            let churns = procs.len() > 1 || procs.iter().any(|w| w.respawns > 0);
            workloads.insert(
                first.name.clone(),
                WorkloadResult {
                    ops: stats.ops,
                    throughput: if secs > 0.0 {
                        round3(stats.ops as f64 / secs)
                    } else {
                        0.0
                    },
                    bytes_per_sec: if secs > 0.0 {
                        round3(stats.bytes as f64 / secs)
                    } else {
                        0.0
                    },
                    latency_ns,
                    killed_at_ns: earliest(|w| w.killed_at),
                    fork_failed_at_ns: earliest(|w| w.fork_failed_at),
                    runtime_ns: finished_at.map(|t| t - first.start_ns),
                    alloc_success: first.is_highalloc().then_some(stats.alloc_success),
                    forks: churns.then(|| {
                        procs
                            .iter()
                            .map(|w| w.forked_at.is_some() as u64 + w.respawns)
                            .sum()
                    }),
                },
            );
        }

        let mut tasks = BTreeMap::new();
        let mut kswapd_cpu_ns = 0;
        let mut node_kswapd_cpu_ns = vec![0; mm.nr_nodes()];
        for t in &sim.tasks {
            if let TaskKind::Kswapd(nid) = t.kind {
                kswapd_cpu_ns += t.system_ns;
                node_kswapd_cpu_ns[nid] += t.system_ns;
            }
            let thread = match t.kind {
                TaskKind::Worker { thread, .. } => Some(sim.thread(thread)),
                _ => None,
            };
            tasks.insert(
                t.name.clone(),
                TaskResult {
                    user_ns: t.user_ns,
                    system_ns: t.system_ns,
                    ops: thread.map_or(0, |th| th.ops),
                    last_op_ns: thread.and_then(|th| th.last_op_ns),
                },
            );
        }

        let resource = |p: Pressure| {
            let line = |s: usize| PsiLine {
                avg10: p.avg_pct[s][0],
                avg60: p.avg_pct[s][1],
                avg300: p.avg_pct[s][2],
                total: p.total_us[s],
            };
            PsiResource {
                some: line(0),
                full: line(1),
            }
        };
        let swap = match &mm.swap {
            None => SwapResult {
                kind: "none".into(),
                total_pages: 0,
                used_pages: 0,
                orig_data_size: 0,
                compr_data_size: 0,
                mem_used_total: 0,
            },
            Some(s) => SwapResult {
                kind: format!("{:?}", s.kind).to_lowercase(),
                total_pages: s.nr_slots as u64,
                used_pages: s.nr_used_slots(),
                orig_data_size: s.stored_pages * PAGE_SIZE,
                compr_data_size: s.stored_bytes,
                mem_used_total: mm.zram_pages() * PAGE_SIZE,
            },
        };
        // CPU 0's lists of a zone (every CPU's have the same sizes).
        let pageset = |zi: usize| {
            (mm.cfg.pcp != crate::mm::pcp::PcpVersion::Off)
                .then(|| mm.pcp.get(zi))
                .flatten()
        };
        let numa = mm.nr_nodes() > 1;
        let zone_id = |z: &crate::mm::zone::Zone| z.node * crate::mm::zone::MAX_NR_ZONES + z.idx;
        let zones = mm
            .zones
            .iter()
            .filter(|z| z.is_managed())
            .map(|z| {
                (
                    if numa {
                        format!("node{}/{}", z.node, z.name())
                    } else {
                        z.name().to_string()
                    },
                    ZoneResult {
                        managed: z.managed_pages,
                        free: z.nr_free_pages,
                        min: z.watermark[0],
                        low: z.watermark[1],
                        high: z.watermark[2],
                        protection: z.lowmem_reserve.to_vec(),
                        pcp_count: mm.pcp_pages(zone_id(z)),
                        pcp_batch: pageset(zone_id(z)).map_or(0, |p| p.batch.into()),
                        pcp_high_min: pageset(zone_id(z)).map_or(0, |p| p.high_min.into()),
                        pcp_high_max: pageset(zone_id(z)).map_or(0, |p| p.high_max.into()),
                    },
                )
            })
            .collect();
        let mut events: Vec<EventRecord> = mm
            .oom_events
            .iter()
            .map(|e| EventRecord {
                time_ns: e.time_ns,
                event: "oom_kill".into(),
                workload: sim.workloads[e.workload].name.clone(),
                rss_pages: e.rss_pages,
                swap_pages: e.swap_pages,
            })
            .collect();
        events.extend(sim.workloads.iter().filter_map(|w| {
            Some(EventRecord {
                time_ns: w.fork_failed_at?,
                event: "fork_failed".into(),
                workload: w.name.clone(),
                rss_pages: 0,
                swap_pages: 0,
            })
        }));
        // Stable: kills at one instant stay in the order they happened.
        events.sort_by_key(|e| e.time_ns);
        let secs = end as f64 / 1e9;
        let cgroups = (1..mm.memcg.cgs.len())
            .map(|m| {
                let c = &mm.memcg.counters.c[m];
                let limit = |v: u64| {
                    if v >= crate::mm::page_counter::PAGE_COUNTER_MAX {
                        serde_json::Value::from("max")
                    } else {
                        serde_json::Value::from(v * PAGE_SIZE)
                    }
                };
                let stat: serde_json::Map<String, serde_json::Value> =
                    mm.memory_stat(m).into_iter().map(|(k, v)| (k.to_string(), v.into())).collect();
                // memory.events (the subtree's) with memory.events.local (this
                // cgroup's own) under it: `memory.events.local.oom` as a path.
                let mut events = events_json(mm.memcg.events_hier(m));
                events["local"] = events_json(mm.memcg.cgs[m].events);
                let pgscan = stat.get("pgscan").and_then(|v| v.as_u64()).unwrap_or(0);
                let pressure = resource(sim.pressure(m));
                let mut memory = serde_json::json!({
                    "current": c.usage * PAGE_SIZE,
                    "peak": mm.memcg.peak_show(m, PeakFile::Memory, None) * PAGE_SIZE,
                    "min": c.min * PAGE_SIZE,
                    "low": c.low * PAGE_SIZE,
                    "high": limit(c.high),
                    "max": limit(c.max),
                    "stat": stat,
                    "events": events,
                    "pressure": pressure,
                    "swap": {
                        "current": mm.memcg.swap.c[m].usage * PAGE_SIZE,
                        "max": limit(mm.memcg.swap.c[m].max),
                        "peak": mm.memcg.peak_show(m, PeakFile::Swap, None) * PAGE_SIZE,
                    },
                });
                if mm.nr_nodes() > 1 {
                    // memory.numa_stat: `anon N0=... N1=...` as {"anon": {"N0": ...}}.
                    let numa: serde_json::Map<String, serde_json::Value> = mm
                        .memory_numa_stat(m)
                        .into_iter()
                        .map(|(k, per_node)| {
                            let nodes: serde_json::Map<String, serde_json::Value> = per_node
                                .into_iter()
                                .enumerate()
                                .map(|(n, v)| (format!("N{n}"), v.into()))
                                .collect();
                            (k.to_string(), nodes.into())
                        })
                        .collect();
                    memory["numa_stat"] = numa.into();
                    // memory.stat's tiering counters (v6.13+), a NUMA kernel's.
                    for item in MEMCG_TIER_STATS {
                        let name = TIER_STAT_NAMES[item as usize];
                        memory["stat"][name] = mm.memcg_tier_stat(m, item).into();
                    }
                }
                // What a read through each named open file shows at the end.
                for file in [PeakFile::Memory, PeakFile::Swap] {
                    let by_fd: serde_json::Map<String, serde_json::Value> = (0..mm.memcg.peak_fds.len())
                        .filter(|&fd| mm.memcg.peak_fds[fd].memcg == m && mm.memcg.peak_fds[fd].file == file)
                        .map(|fd| {
                            let shown = mm.memcg.peak_show(m, file, Some(fd)) * PAGE_SIZE;
                            (mm.memcg.peak_fds[fd].name.clone(), shown.into())
                        })
                        .collect();
                    if by_fd.is_empty() {
                        continue;
                    }
                    let at = match file {
                        PeakFile::Memory => &mut memory,
                        PeakFile::Swap => &mut memory["swap"],
                    };
                    at["peak_by_fd"] = by_fd.into();
                }
                (
                    mm.memcg.cgs[m].path.clone(),
                    serde_json::json!({
                        "memory": memory,
                        "pgscan_per_sec": if secs > 0.0 { round3(pgscan as f64 / secs) } else { 0.0 },
                    }),
                )
            })
            .collect();
        Results {
            schema_version: SCHEMA_VERSION,
            reclaimsim_version: env!("CARGO_PKG_VERSION").to_string(),
            seed: sim.scenario.run.seed,
            duration_ns: end,
            vmstat,
            workloads,
            tasks,
            reclaim: ReclaimResult {
                kswapd_cpu_ns,
                direct_reclaim_cpu_ns: mm.direct_reclaim_ns,
                kswapd_wakeups: mm.kswapd.iter().map(|k| k.wakeups).sum(),
                kswapd_failures: mm.kswapd.iter().map(|k| k.failures).max().unwrap_or(0),
                kswapd_awake_ns: sim.kswapd_awake_ns(),
                kcompactd_awake_ns: sim.kcompactd_awake_ns,
                kcompactd_wakeups: mm.vmstat.get(crate::stats::vmstat::Ev::CompactDaemonWake),
            },
            psi: PsiResult {
                memory: resource(sim.pressure(0)),
            },
            swap,
            memory: {
                let (mean, max) = sim.memory_used_pages();
                MemoryResult {
                    total_bytes: mm.managed_pages() * 4096,
                    mean_used_bytes: (mean * 4096.0).round() as u64,
                    max_used_bytes: max * 4096,
                }
            },
            zones,
            nodes: node_results(mm, &node_kswapd_cpu_ns),
            cgroups,
            reclaim_throttle: mm
                .reclaim_wait
                .stats
                .iter()
                .map(|(k, st)| {
                    (
                        k.name().to_string(),
                        ThrottleResult {
                            count: st.count,
                            woken_early: st.woken_early,
                            timed_out: st.timed_out,
                            usec_delayed: st.usec_delayed.clone(),
                        },
                    )
                })
                .collect(),
            damon: damon_result(sim),
            events,
            actions: sim.actions().to_vec(),
            interrupted: sim.interrupted(),
            provenance: Provenance {
                scenario_file: sim.scenario.source.file.clone(),
                scenario_text: sim.scenario.source.text.clone(),
                sets: sim.scenario.source.sets.clone(),
                seed: sim.scenario.run.seed,
                reclaimsim_version: env!("CARGO_PKG_VERSION").to_string(),
                scenario_hash: sim.scenario_hash().to_string(),
                memcg_stats_flush_first_ns: sim.memcg_stats_flush_first_ns,
            },
        }
    }

    pub fn vm(&self, name: &str) -> u64 {
        self.vmstat.get(name).copied().unwrap_or(0)
    }
}

/// memory.events' keys, as the kernel prints them.
fn events_json(e: MemcgEvents) -> serde_json::Value {
    e.items()
        .into_iter()
        .map(|(key, n)| (key.to_string(), serde_json::Value::from(n)))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// The shape of results.json for a scenario, as a JSON value holding every path a run
/// of it can report, numbers as 0: built by [`Results::collect`] itself on the
/// scenario's simulation before it runs, so the schema is the results type, defined
/// once. Optional numbers (`killed_at_ns`) are present as 0, and every throttling
/// reason is listed, though a run reports only the reasons that slept.
pub fn schema(sc: &crate::scenario::Scenario) -> serde_json::Value {
    let mut sc = sc.clone();
    sc.sweep = None;
    let sim = Simulation::new(sc);
    let mut r = Results::collect(&sim);
    for s in crate::mm::throttle::Sleep::ALL {
        r.reclaim_throttle
            .insert(s.name().to_string(), ThrottleResult::default());
    }
    let mut v = serde_json::to_value(&r).expect("results serialise");
    fn nulls_to_zero(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Null => *v = serde_json::Value::from(0),
            serde_json::Value::Object(m) => m.values_mut().for_each(nulls_to_zero),
            serde_json::Value::Array(a) => a.iter_mut().for_each(nulls_to_zero),
            _ => {}
        }
    }
    nulls_to_zero(&mut v);
    v
}

/// A metric path's value in a results.json value: the number at a dotted path. Keys may
/// contain dots themselves (a cgroup `workload.slice/app`): at each level the longest
/// run of segments that names a key wins.
pub fn metric(results: &serde_json::Value, path: &str) -> Option<f64> {
    let segs: Vec<&str> = path.split('.').collect();
    resolve(results, &segs)
        .ok()
        .and_then(serde_json::Value::as_f64)
}

/// Walks `segs` down `v`; on failure returns how many segments resolved and the value
/// reached there.
fn resolve<'a>(
    v: &'a serde_json::Value,
    segs: &[&str],
) -> Result<&'a serde_json::Value, (usize, &'a serde_json::Value)> {
    if segs.is_empty() {
        return Ok(v);
    }
    let mut deepest = (0, v);
    for n in (1..=segs.len()).rev() {
        if let Some(next) = v.get(segs[..n].join(".")) {
            match resolve(next, &segs[n..]) {
                Ok(found) => return Ok(found),
                Err((k, at)) if n + k > deepest.0 => deepest = (n + k, at),
                Err(_) => {}
            }
        }
    }
    Err(deepest)
}

/// Checks that `path` names a number in results.json's `schema` (from [`schema`]);
/// the message says what is there instead.
pub fn check_metric(schema: &serde_json::Value, path: &str) -> Result<(), String> {
    let segs: Vec<&str> = path.split('.').collect();
    let keys_of = |v: &serde_json::Value| -> String {
        let keys: Vec<&String> = v
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        let shown: Vec<String> = keys.iter().take(12).map(|k| format!("`{k}`")).collect();
        let more = keys.len().saturating_sub(shown.len());
        if more > 0 {
            format!("{} and {more} more", shown.join(", "))
        } else {
            shown.join(", ")
        }
    };
    match resolve(schema, &segs) {
        Ok(v) if v.is_number() => Ok(()),
        Ok(v) if v.is_object() => Err(format!(
            "`{path}` is a table, not a number: add one of {}",
            keys_of(v)
        )),
        Ok(_) => Err(format!("`{path}` is not a number")),
        Err((0, v)) => Err(format!(
            "results.json has no `{}`; its top-level keys are {}",
            segs[0],
            keys_of(v)
        )),
        Err((n, v)) => {
            // `n` segments resolved; name what follows them.
            let here = segs[..n].join(".");
            if v.is_object() {
                Err(format!(
                    "`{here}` has no `{}`; it has {}",
                    segs[n..].join("."),
                    keys_of(v)
                ))
            } else {
                Err(format!("`{here}` is a number: nothing is under it"))
            }
        }
    }
}

/// results.json's `damon`: None when the scenario has no DAMON.
fn damon_result(sim: &Simulation) -> Option<DamonResult> {
    let d = &sim.mm.damon;
    if d.kdamonds.is_empty() {
        return None;
    }
    let mut kdamonds = BTreeMap::new();
    let mut damon_reclaim = None;
    for (k, kd) in d.kdamonds.iter().enumerate() {
        let (ti, task) = sim
            .tasks
            .iter()
            .enumerate()
            .find(|(_, t)| t.kind == TaskKind::Kdamond(k))
            .expect("a task per kdamond");
        let stats: Vec<crate::mm::damon::SchemeStat> = match &kd.ctx {
            Some(ctx) => ctx.schemes.iter().map(|s| s.stat).collect(),
            None => kd.last_stats.clone(),
        };
        let schemes: Vec<SchemeResult> = kd
            .cfg
            .schemes
            .iter()
            .enumerate()
            .map(|(i, sc)| {
                let st = stats.get(i).copied().unwrap_or_default();
                SchemeResult {
                    action: sc.action.name().to_string(),
                    nr_tried: st.nr_tried,
                    sz_tried: st.sz_tried,
                    nr_applied: st.nr_applied,
                    sz_applied: st.sz_applied,
                    qt_exceeds: st.qt_exceeds,
                }
            })
            .collect();
        let running = kd.ctx.is_some();
        if kd.cfg.reclaim_module {
            let st = stats.first().copied().unwrap_or_default();
            damon_reclaim = Some(DamonReclaimResult {
                enabled: running,
                kdamond_pid: if running { ti as i64 + 1 } else { -1 },
                nr_reclaim_tried_regions: st.nr_tried,
                bytes_reclaim_tried_regions: st.sz_tried,
                nr_reclaimed_regions: st.nr_applied,
                bytes_reclaimed_regions: st.sz_applied,
                nr_quota_exceeds: st.qt_exceeds,
            });
        }
        kdamonds.insert(
            task.name.clone(),
            KdamondResult {
                state: if running { "on" } else { "off" }.to_string(),
                operations: match kd.cfg.ops {
                    crate::mm::damon::Ops::Paddr => "paddr",
                    crate::mm::damon::Ops::Vaddr => "vaddr",
                }
                .to_string(),
                cpu_ns: task.system_ns,
                nr_regions: kd.ctx.as_ref().map_or(0, |c| c.nr_regions()),
                schemes,
            },
        );
    }
    Some(DamonResult {
        kdamonds,
        damon_reclaim,
    })
}

/// A results.json with nothing in it, for the report modules' tests.
#[cfg(test)]
pub(crate) fn minimal_results(duration_ns: u64) -> Results {
    serde_json::from_value(serde_json::json!({
        "schema_version": 1, "reclaimsim_version": "t", "seed": 1,
        "duration_ns": duration_ns, "vmstat": {}, "workloads": {}, "tasks": {},
        "reclaim": {"kswapd_cpu_ns": 0, "direct_reclaim_cpu_ns": 0,
                    "kswapd_wakeups": 0, "kswapd_failures": 0},
        "psi": {"memory": {
            "some": {"avg10": 0.0, "avg60": 0.0, "avg300": 0.0, "total": 0},
            "full": {"avg10": 0.0, "avg60": 0.0, "avg300": 0.0, "total": 0}}},
        "swap": {"kind": "zram", "total_pages": 0, "used_pages": 0, "orig_data_size": 0,
                 "compr_data_size": 0, "mem_used_total": 0},
        "zones": {}, "cgroups": {}, "events": [], "actions": [],
        "provenance": {"scenario_file": "", "scenario_text": "", "sets": [], "seed": 1,
                       "reclaimsim_version": "t", "scenario_hash": ""}
    }))
    .expect("a minimal results.json")
}

/// A workload's results with `ops` and a runtime, the rest zero.
#[cfg(test)]
pub(crate) fn minimal_workload(ops: u64, runtime_ns: Option<u64>) -> WorkloadResult {
    serde_json::from_value(serde_json::json!({
        "ops": ops, "throughput": 0.0, "bytes_per_sec": 0.0, "runtime_ns": runtime_ns,
        "latency_ns": {"mean": 0.0, "stddev": 0.0, "min": 0, "p50": 0, "p90": 0, "p99": 0, "max": 0}
    }))
    .expect("a workload result")
}
