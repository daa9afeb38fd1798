//! The scenario as written in TOML: machine, kernel settings, costs, workloads, actions.
//!
//! Every table denies unknown keys, so a typo is an error that names the key rather than a
//! silently ignored setting. Keys under `[kernel]` use the kernel's sysctl spelling
//! (`vm.swappiness = 60` is the dotted TOML key `kernel.vm.swappiness`).

use super::units::{Bytes, Nanos};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub run: Run,
    pub machine: Machine,
    #[serde(default)]
    pub kernel: Kernel,
    #[serde(default)]
    pub costs: Costs,
    #[serde(default, rename = "workload")]
    pub workloads: Vec<Workload>,
    #[serde(default, rename = "action")]
    pub actions: Vec<Action>,
    /// The cgroup tree below the root (`/`).
    #[serde(default, rename = "cgroup")]
    pub cgroups: Vec<Cgroup>,
    /// DAMON through its sysfs interface: kdamonds, contexts, targets, schemes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damon: Option<super::damon::Damon>,
    /// The DAMON_RECLAIM module's parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damon_reclaim: Option<super::damon::DamonReclaim>,
    /// A parameter sweep (`reclaimsim sweep`); ignored by `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
    /// Where the scenario came from (not a scenario key): results.json's provenance.
    #[serde(skip)]
    pub source: Source,
}

/// The file and overrides a scenario was loaded from, recorded with its results so a
/// result can be rerun and recognised as stale.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Source {
    /// The scenario file as named on the command line.
    pub file: String,
    pub text: String,
    /// `--set KEY=VALUE` overrides in the order applied, a sweep point's values last.
    pub sets: Vec<String>,
}

/// `[sweep]`: every combination of the `[[sweep.param]]` values is a point, run as its
/// own deterministic simulation.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// Columns of sweep.csv after the swept keys: paths into results.json, e.g.
    /// `vmstat.pgscan_direct` or `workloads.db.latency_ns.p99`.
    #[serde(default = "default_metrics")]
    pub metrics: Vec<String>,
    #[serde(default, rename = "param")]
    pub params: Vec<SweepParam>,
    /// An extra table: `metric` with a row per value of one swept key and a column per
    /// value of another, plus each column as a percentage of the `baseline` column.
    #[serde(default)]
    pub pivot: Option<Pivot>,
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pivot {
    /// The swept key whose values are the rows.
    pub rows: String,
    /// The swept key whose values are the columns.
    pub columns: String,
    /// The results.json path shown in each cell (averaged over any other swept keys).
    pub metric: String,
    #[schemars(with = "serde_json::Value")]
    /// The value of `columns` the other columns are shown as a percentage of.
    pub baseline: toml::Value,
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepParam {
    /// A dotted scenario key, as `--set` takes it.
    #[serde(default)]
    pub key: String,
    /// Instead of `key`: a name for a dimension that sets only its `with` keys (a
    /// worker count that sets two workloads' thread counts).
    #[serde(default)]
    pub name: Option<String>,
    #[schemars(with = "Vec<serde_json::Value>")]
    /// The values the key takes: each is a point (with every combination of the other keys' values).
    pub values: Vec<toml::Value>,
    /// Keys set together with this one, value for value (not a dimension of their own):
    /// `with = { "workload.2.threads" = [1, 3, 5] }` next to `values = [2, 4, 6]`.
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, Vec<serde_json::Value>>")]
    pub with: std::collections::BTreeMap<String, Vec<toml::Value>>,
}

impl SweepParam {
    /// The parameter's column in sweep.csv and point.json: its key, or its name.
    pub fn column(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.key)
    }
}

fn default_metrics() -> Vec<String> {
    [
        "vmstat.pgscan_kswapd",
        "vmstat.pgscan_direct",
        "vmstat.pgsteal_kswapd",
        "vmstat.pgsteal_direct",
        "vmstat.pswpin",
        "vmstat.pswpout",
        "vmstat.workingset_refault_anon",
        "vmstat.workingset_refault_file",
        "vmstat.oom_kill",
        "psi.memory.some.total",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Run {
    /// Virtual time simulated.
    pub duration: Nanos,
    /// Seed of every random stream (each task derives its own from this and its name).
    pub seed: u64,
    /// Interval between timeseries samples.
    pub sample_interval: Nanos,
    /// Longest a task runs before the scheduler picks again (at most 100 us: the scheduler's granularity this model keeps).
    pub slice: Nanos,
    /// End the run when every workload has finished its work (a `phases` program's
    /// steps, fio's runtime, a `stop`) or was killed, instead of at `duration` (then
    /// the longest a run takes).
    pub stop_when_done: bool,
    /// How workloads' accesses are simulated (`each` or `skip`, below). Always in the
    /// resolved scenario: its default changed from `each` to `skip`, and a sweep must
    /// not take a point run under the old default for one under the new.
    pub access_sampling: AccessSampling,
    /// Read every cgroup's memory.stat at this interval, as a monitoring agent does
    /// (0, the default: never). Each read flushes that cgroup's statistics if enough
    /// updates are pending (`mem_cgroup_flush_stats`), which reclaim then sees.
    pub memory_stat_poll: Nanos,
    /// When the kernel's periodic rstat flush (`flush_memcg_stats_dwork`, every
    /// FLUSH_TIME = 2 s since the root memcg came online at boot) first runs after the
    /// run starts: in (0, 2s]. Reclaim's decisions read statistics that lag by up to a
    /// period, so where in it a workload starts can decide an outcome, on the kernel as
    /// here (docs/scenarios.md, "memcg statistics and the flusher's phase"). Left out, it is drawn
    /// from `seed`, as a run on a machine that has been up a while starts at an
    /// arbitrary point of the period; results.json records it
    /// (`provenance.memcg_stats_flush_first_ns`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memcg_stats_flush_first: Option<Nanos>,
}

/// `run.access_sampling`: `skip` (the default) draws how many accesses in a row would
/// change nothing (a present, young, dirty page) and simulates only those that would,
/// for uniform, hot/cold, zipf and sequential patterns (paced: uniform and zipf), `kv`
/// requests with uniform keys and fio's random reads (back to back); every other
/// access is taken one by one. The same random process as `each` (results equal in
/// distribution, not byte for byte; fio's reads byte for byte), many times faster
/// where most accesses hit settled pages. `each` simulates every access.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AccessSampling {
    Each,
    #[default]
    Skip,
}

impl Default for Run {
    fn default() -> Self {
        Run {
            duration: Nanos(10_000_000_000),
            seed: 1,
            sample_interval: Nanos(1_000_000_000),
            slice: Nanos(100_000),
            stop_when_done: false,
            access_sampling: AccessSampling::Skip,
            memory_stat_poll: Nanos(0),
            memcg_stats_flush_first: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    /// Physical memory (all nodes together); all of it is managed by the buddy
    /// allocator.
    pub memory: Bytes,
    #[serde(default = "default_nr_cpus")]
    /// Simulated CPUs (without `[[machine.node]]`: all on node 0).
    pub nr_cpus: u32,
    /// Size of ZONE_DMA32 (the memory below 4 GiB; x86-64 loses ~1 GiB of it to the PCI
    /// hole). Default: min(memory, 3G). The rest of memory is ZONE_NORMAL.
    #[serde(default)]
    pub dma32: Option<Bytes>,
    #[serde(default)]
    pub swap: Swap,
    /// The block device that holds files (page cache reads and writeback).
    #[serde(default = "Device::nvme")]
    pub storage: Device,
    /// The NUMA nodes (`[[machine.node]]`), lowest addresses first. None: one node
    /// with all the memory and CPUs.
    #[serde(default, rename = "node", skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<Node>,
}

/// A NUMA node: its memory (after the previous node's), its CPUs, and its row of the
/// SLIT distance table.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// This node's memory, placed after the previous node's.
    pub memory: Bytes,
    /// Its CPUs' ids (none: a CPU-less node, such as CXL memory).
    #[serde(default)]
    pub cpus: Vec<u32>,
    /// `node_distance` to each node, itself (10) included. Default: 10 to itself, 20
    /// to the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<Vec<u32>>,
    /// Its memory's load latency from its nearest CPUs (HMAT's read latency; for a
    /// CPU-less node, from the nearest node with CPUs). With `bandwidth` it sets the
    /// memory tier the node joins (`mt_perf_to_adistance`, against the first node with
    /// CPUs), and an access to a CPU-less node's page costs this latency (scaled by
    /// SLIT distance from farther CPUs) in place of `costs.access`. Default:
    /// `costs.access`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Nanos>,
    /// Its memory's bandwidth per second (HMAT's read bandwidth), for its tier. Default:
    /// node 0's, or unknown (the tier then follows latency alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<Bytes>,
}

/// A workload's memory policy (`set_mempolicy`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MempolicyCfg {
    /// The policy: `default`/`local`, `bind`, `preferred`, `interleave` or `weighted-interleave` (`set_mempolicy`'s MPOL_*).
    pub mode: MempolicyMode,
    /// bind, interleave, weighted-interleave: the nodes; preferred: the one node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<u32>,
    /// weighted-interleave: each node's weight, node 0 first
    /// (/sys/kernel/mm/mempolicy/weighted_interleave/nodeN; default 1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<u32>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MempolicyMode {
    /// MPOL_DEFAULT / MPOL_LOCAL: the CPU's node first.
    Default,
    Local,
    Bind,
    Preferred,
    Interleave,
    WeightedInterleave,
}

fn default_nr_cpus() -> u32 {
    1
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum SwapKind {
    #[default]
    None,
    Zram,
    Disk,
    /// A brd ramdisk (`/dev/ram0`): pages written to it take RAM (no discard on swap
    /// free), reads and writes are a memory copy in the submitter's context.
    Ramdisk,
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Swap {
    #[serde(rename = "type")]
    /// The swap device: none, zram (compressed in RAM), a disk (`device`), or a ramdisk.
    pub kind: SwapKind,
    /// Swap capacity (zram: `disksize`, the uncompressed capacity).
    pub size: Bytes,
    /// zram: uncompressed / compressed size (typical anonymous data: 2 to 4).
    pub compression_ratio: f64,
    /// zram: CPU time to compress one 4 KiB page (lzo-rle at ~700 MB/s: ~6 us).
    pub compress_time: Nanos,
    /// zram: CPU time to decompress one 4 KiB page (lzo-rle at ~2 GB/s: ~2 us).
    pub decompress_time: Nanos,
    /// zram: cap on the pool's memory (`mem_limit`); 0 = none.
    pub mem_limit: Bytes,
    /// disk: the device swap pages go to.
    pub device: Device,
}

impl Default for Swap {
    fn default() -> Self {
        Swap {
            kind: SwapKind::None,
            size: Bytes(0),
            compression_ratio: 3.0,
            compress_time: Nanos(6_000),
            decompress_time: Nanos(2_000),
            mem_limit: Bytes(0),
            device: Device::nvme(),
        }
    }
}

/// A block device: fixed latency per request plus transfer time at its bandwidth, with at
/// most `queue_depth` requests in service at once.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Device {
    /// "block" (a queued device with these latencies and bandwidths) or "ramdisk" (the
    /// brd driver: every page of the files on it is RAM charged to no cgroup, and an
    /// I/O is a memory copy of `costs.copy_page` per page, nothing queued).
    #[serde(rename = "type", default)]
    pub kind: DeviceKind,
    #[serde(default = "Device::default_read_latency")]
    /// Service time of a read request, before its bytes move at `read_bandwidth`.
    pub read_latency: Nanos,
    #[serde(default = "Device::default_write_latency")]
    /// Service time of a write request, before its bytes move at `write_bandwidth`.
    pub write_latency: Nanos,
    /// Bytes per second.
    #[serde(default = "Device::default_bandwidth")]
    pub read_bandwidth: Bytes,
    /// Bytes per second.
    #[serde(default = "Device::default_bandwidth")]
    pub write_bandwidth: Bytes,
    #[serde(default = "Device::default_queue_depth")]
    /// Requests in service at once; the request pool holds twice as many (`nr_requests`).
    pub queue_depth: u32,
    /// /sys/block/DEV/queue/read_ahead_kb: the readahead window's maximum (the bdi's
    /// `ra_pages`). 128 KiB, the kernel's VM_READAHEAD_PAGES.
    #[serde(default = "Device::default_read_ahead_kb")]
    pub read_ahead_kb: u64,
    /// /sys/block/DEV/queue/max_sectors_kb: the largest request (the bdi's `io_pages`),
    /// how far a read bigger than read_ahead_kb may read ahead. 1280 KiB, the block
    /// layer's BLK_DEF_MAX_SECTORS_CAP.
    #[serde(default = "Device::default_max_sectors_kb")]
    pub max_sectors_kb: u64,
}

impl Device {
    /// A datacentre NVMe SSD: ~80 us 4K read, ~20 us write (into its cache), 2 GB/s.
    pub fn nvme() -> Device {
        Device {
            kind: DeviceKind::Block,
            read_latency: Self::default_read_latency(),
            write_latency: Self::default_write_latency(),
            read_bandwidth: Self::default_bandwidth(),
            write_bandwidth: Self::default_bandwidth(),
            queue_depth: Self::default_queue_depth(),
            read_ahead_kb: Self::default_read_ahead_kb(),
            max_sectors_kb: Self::default_max_sectors_kb(),
        }
    }
    fn default_read_latency() -> Nanos {
        Nanos(80_000)
    }
    fn default_write_latency() -> Nanos {
        Nanos(20_000)
    }
    fn default_bandwidth() -> Bytes {
        Bytes(2 << 30)
    }
    fn default_queue_depth() -> u32 {
        32
    }
    fn default_read_ahead_kb() -> u64 {
        128
    }
    fn default_max_sectors_kb() -> u64 {
        1280
    }
}

impl Default for Device {
    fn default() -> Self {
        Device::nvme()
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    #[default]
    Block,
    Ramdisk,
}

/// Kernel settings under their sysctl names. Later issues add behaviour switches here.
#[derive(Debug, Clone, Deserialize, Serialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Kernel {
    pub vm: Vm,
    /// Tick rate; jiffy-based timeouts (kswapd's HZ/10 nap) follow it.
    #[serde(rename = "HZ")]
    pub hz: Hz,
    /// How memory.min/low protection scales reclaim of a memcg above it: "cliff" (before
    /// "mm, memcg: proportional memory.{low,min} reclaim"), "seed" (that patch's first
    /// formula), "proportional" (today's, the default).
    pub memcg_protection: MemcgProtection,
    /// The cgroup2 mount option `memory_recursiveprot`.
    pub memory_recursiveprot: bool,
    /// How reclaim waits for writeback and for other reclaimers: "congestion_wait"
    /// (≤ v5.15), "throttle" (reclaim_throttle as merged in v5.16), "throttle-current"
    /// (today's: the CONGESTED reason, 1-jiffy no-progress sleeps).
    pub reclaim_throttle: ReclaimThrottle,
    /// Which LRU reclaim uses: "classic" (the two-list active/inactive LRU) or "mglru"
    /// (the multi-gen LRU, CONFIG_LRU_GEN_ENABLED); `lru_gen` tunes the latter.
    pub lru: LruKind,
    /// /sys/kernel/mm/lru_gen/*.
    pub lru_gen: LruGen,
    /// Who compacts for a high-order request kswapd was woken for: "kswapd" (≤ v4.5:
    /// balance_pgdat compacts by itself, behind its `nr_attempted` test) or "kcompactd"
    /// (v4.6+, "mm, kswapd: replace kswapd compaction with waking up kcompactd": kswapd
    /// balances order-0 watermarks, then wakes kcompactd; the default).
    pub kswapd_compaction: KswapdCompaction,
    /// /sys/kernel/mm/transparent_hugepage/{enabled,defrag}.
    pub transparent_hugepage: TransparentHugepage,
    /// /sys/kernel/debug/fault_around_bytes: a read fault on a file mapping maps the
    /// cached pages of this aligned window around it (`do_fault_around`); 4096 turns
    /// fault-around off.
    pub fault_around_bytes: FaultAroundBytes,
    /// Where reclaim and workingset detection read a memcg's LRU sizes and refault
    /// counters: "rstat" (the kernel's since v6.12, "memcg: use ratelimited stats
    /// flush in the reclaim": copies flushed every 2 s, by memory.stat reads and by
    /// the ratelimited flush; the default) or "exact" (the live counters: close to
    /// the synchronous, thresholded flush prepare_scan_control did before v6.12,
    /// which under reclaim's stream of updates flushed nearly every time).
    pub memcg_stats_flush: MemcgStatsFlush,
    /// Kernel memory charged to memcgs (page tables, kernel stacks, slab objects):
    /// true, the kernel's default; false is the boot option `cgroup.memory=nokmem`
    /// (the memory is still allocated, but charged to no memcg).
    pub memcg_kmem: MemcgKmem,
    /// Which kernel's per-CPU page lists (mm/page_alloc.c's `per_cpu_pages`): "v4.5"
    /// (order-0 only, high = 6 × batch; to v5.12), "v5.14" (small orders and THP too,
    /// high from the low watermark split over the CPUs, lowered while kswapd
    /// reclaims; to v6.6), "v6.7" (high auto-tuned between high_min and high_max;
    /// today's, the default), or "off" (no per-CPU lists: every page straight to and
    /// from the buddy).
    pub pcp: Pcp,
    /// /sys/kernel/mm/numa/.
    #[serde(skip_serializing_if = "Numa::is_default")]
    pub numa: Numa,
    /// `kernel.numa_balancing`: 0 (off, the default) or 2 (memory tiering: hint
    /// faults promote hot pages of slower tiers to the faulting CPU's node). 1 and 3
    /// (normal balancing, task placement) are not modelled.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub numa_balancing: u32,
    /// `kernel.numa_balancing_promote_rate_limit_MBps` (default 65536).
    #[serde(
        rename = "numa_balancing_promote_rate_limit_MBps",
        skip_serializing_if = "Option::is_none"
    )]
    pub numa_balancing_promote_rate_limit_mbps: Option<u64>,
    /// /sys/kernel/debug/sched/numa_balancing/hot_threshold_ms (default 1000): a
    /// page touched sooner than this after its scan is hot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numa_balancing_hot_threshold_ms: Option<u64>,
    /// /sys/kernel/debug/sched/numa_balancing/scan_period_min_ms (default 1000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numa_balancing_scan_period_min_ms: Option<u64>,
    /// /sys/kernel/debug/sched/numa_balancing/scan_period_max_ms (default 60000;
    /// also how often the hot threshold is adjusted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numa_balancing_scan_period_max_ms: Option<u64>,
    /// /sys/kernel/debug/sched/numa_balancing/scan_size_mb (default 256).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numa_balancing_scan_size_mb: Option<u64>,
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// /sys/kernel/mm/numa/ (memory tiering, mm/memory-tiers.c).
#[derive(Debug, Clone, Deserialize, Serialize, Default, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Numa {
    /// `demotion_enabled`: reclaim on a node with a slower memory tier below it
    /// migrates its cold pages there (`demote_folio_list`) instead of swapping or
    /// dropping them. Default false, as the kernel's.
    pub demotion_enabled: bool,
}

impl Numa {
    /// Left out of the canonical scenario (and its hash) while at the defaults, so a
    /// scenario that does not name it hashes as before it existed.
    fn is_default(&self) -> bool {
        *self == Numa::default()
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
pub enum Pcp {
    #[serde(rename = "off")]
    Off,
    #[serde(rename = "v4.5")]
    V4_5,
    #[serde(rename = "v5.14")]
    V5_14,
    #[default]
    #[serde(rename = "v6.7")]
    V6_7,
}

/// `kernel.memcg_kmem` (default true).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(transparent)]
pub struct MemcgKmem(pub bool);
impl Default for MemcgKmem {
    fn default() -> Self {
        MemcgKmem(true)
    }
}

/// `kernel.memcg_stats_flush`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum MemcgStatsFlush {
    #[default]
    Rstat,
    Exact,
}

/// `fault_around_bytes` (default 65536, the kernel's).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(transparent)]
pub struct FaultAroundBytes(pub u64);
impl Default for FaultAroundBytes {
    fn default() -> Self {
        FaultAroundBytes(65536)
    }
}

/// Access advice, as madvise(2) gives it for a mapping (MADV_NORMAL, MADV_RANDOM,
/// MADV_SEQUENTIAL) and posix_fadvise(2) for a file (POSIX_FADV_NORMAL, _RANDOM,
/// _SEQUENTIAL, _NOREUSE).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Advice {
    #[default]
    Normal,
    Random,
    Sequential,
    Noreuse,
}

/// Transparent huge pages for anonymous memory (kernel-reference §1, §7.9).
#[derive(Debug, Clone, Deserialize, Serialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TransparentHugepage {
    /// "always", "madvise" (only `madvise_hugepage` workloads) or "never". Default
    /// "never", the simulator's behaviour before THP (the kernel's Kconfig default is
    /// always; many distributions ship madvise).
    pub enabled: ThpEnabled,
    /// How a THP fault that finds no free 2 MiB block tries: "always" (direct reclaim
    /// and compaction), "defer" (wake kswapd and kcompactd, fall back at once),
    /// "defer+madvise", "madvise" (the default: direct for madvised memory, else fall
    /// back) or "never".
    pub defrag: ThpDefrag,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ThpEnabled {
    Always,
    Madvise,
    #[default]
    Never,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
pub enum ThpDefrag {
    #[serde(rename = "always")]
    Always,
    #[serde(rename = "defer")]
    Defer,
    #[serde(rename = "defer+madvise")]
    DeferMadvise,
    #[default]
    #[serde(rename = "madvise")]
    Madvise,
    #[serde(rename = "never")]
    Never,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum KswapdCompaction {
    Kswapd,
    #[default]
    Kcompactd,
}

/// `kernel.lru`: the kernel's LRUs, or a research policy of `crate::cache`'s registry
/// (any name it lists: a new policy needs no change here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LruKind {
    #[default]
    Classic,
    Mglru,
    /// A research policy (`"lru"`, `"fifo"`, `"clock"`, `"sieve"`, `"s3fifo"`, `"arc"`)
    /// deciding which pages reclaim takes; the rest stays the kernel's (see
    /// `mm::lru_policy`).
    Policy(&'static str),
}

impl LruKind {
    /// The name the scenario gives it.
    pub fn name(self) -> &'static str {
        match self {
            LruKind::Classic => "classic",
            LruKind::Mglru => "mglru",
            LruKind::Policy(name) => name,
        }
    }

    /// A research policy rather than one of the kernel's LRUs.
    pub fn is_research(self) -> bool {
        matches!(self, LruKind::Policy(_))
    }
}

impl Serialize for LruKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for LruKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        match name.as_str() {
            "classic" => Ok(LruKind::Classic),
            "mglru" => Ok(LruKind::Mglru),
            other => match crate::cache::POLICIES.iter().find(|(n, _)| *n == other) {
                Some(&(n, _)) => Ok(LruKind::Policy(n)),
                None => {
                    let names: Vec<&str> = ["classic", "mglru"]
                        .into_iter()
                        .chain(crate::cache::POLICIES.iter().map(|(n, _)| *n))
                        .collect();
                    Err(serde::de::Error::custom(format!(
                        "unknown variant `{other}`, expected one of `{}`",
                        names.join("`, `")
                    )))
                }
            },
        }
    }
}

impl schemars::JsonSchema for LruKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "LruKind".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = ["classic", "mglru"]
            .into_iter()
            .chain(crate::cache::POLICIES.iter().map(|(n, _)| *n))
            .collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

super::units::notation_schema!(
    LruGenEnabled,
    ["integer", "string", "boolean"],
    "bits: 0 to 7, `\"0x0007\"`, `\"y\"` or `\"n\"`"
);
super::units::notation_schema!(Limit, ["string", "integer"], "size, or `\"max\"`");

/// The multi-gen LRU's knobs (kernel-reference §4.1, §4.14).
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LruGen {
    /// `/sys/kernel/mm/lru_gen/enabled`: 0x0001 main switch, 0x0002 page-table walks,
    /// 0x0004 non-leaf PMD young bits; an integer, "0x0007", "y" (all) or "n" (none).
    /// Default 0x0007, as CONFIG_LRU_GEN_ENABLED boots on x86.
    pub enabled: LruGenEnabled,
    /// `/sys/kernel/mm/lru_gen/min_ttl_ms`: working-set protection; 0 = off.
    pub min_ttl_ms: u64,
    /// How global reclaim picks memcgs: "iter" (MGLRU before "optimize multiple
    /// memcgs": mem_cgroup_iter, kswapd ages everyone), "seed" (v6.1: lazy aging and
    /// should_abort_scan), "memcg-lru" (v6.3+: the per-node memcg LRU).
    pub memcg_reclaim: MemcgReclaim,
}

impl Default for LruGen {
    fn default() -> Self {
        LruGen {
            enabled: LruGenEnabled(7),
            min_ttl_ms: 0,
            memcg_reclaim: MemcgReclaim::MemcgLru,
        }
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum MemcgReclaim {
    Iter,
    Seed,
    #[default]
    MemcgLru,
}

/// The `enabled` bitmask as sysfs accepts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LruGenEnabled(pub u32);

impl<'de> Deserialize<'de> for LruGenEnabled {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bad = |what: String| {
            serde::de::Error::custom(format!(
                "expected 0 to 7, \"0x0007\", \"y\" or \"n\" (the lru_gen/enabled bits), got {what}"
            ))
        };
        match toml::Value::deserialize(d)? {
            toml::Value::Integer(n) if (0..=7).contains(&n) => Ok(LruGenEnabled(n as u32)),
            toml::Value::Integer(n) => Err(bad(n.to_string())),
            toml::Value::Boolean(b) => Ok(LruGenEnabled(if b { 7 } else { 0 })),
            toml::Value::String(s) => {
                let t = s.trim();
                match t {
                    "y" | "Y" => return Ok(LruGenEnabled(7)),
                    "n" | "N" => return Ok(LruGenEnabled(0)),
                    _ => {}
                }
                let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                    Some(h) => u32::from_str_radix(h, 16).ok(),
                    None => t.parse::<u32>().ok(),
                };
                match v {
                    Some(v) if v <= 7 => Ok(LruGenEnabled(v)),
                    _ => Err(bad(format!("\"{s}\""))),
                }
            }
            other => Err(bad(other.type_str().to_string())),
        }
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ReclaimThrottle {
    #[serde(rename = "congestion_wait")]
    CongestionWait,
    #[default]
    Throttle,
    ThrottleCurrent,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum MemcgProtection {
    Cliff,
    Seed,
    #[default]
    Proportional,
}

/// A memory.* limit: a size, or "max".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Limit(pub Option<Bytes>);

impl Limit {
    pub const MAX: Limit = Limit(None);
    /// In pages; "max" is u64::MAX / 2 (PAGE_COUNTER_MAX).
    pub fn pages(self) -> u64 {
        self.0.map_or(u64::MAX / 2, |b| b.pages())
    }
}

impl Default for Limit {
    fn default() -> Self {
        Limit::MAX
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Not an untagged enum: its error ("data did not match any variant") says
        // nothing of what a limit is.
        match toml::Value::deserialize(d)? {
            toml::Value::String(s) if s == "max" => Ok(Limit::MAX),
            toml::Value::String(s) => super::units::parse_size(&s)
                .map(|b| Limit(Some(Bytes(b))))
                .map_err(serde::de::Error::custom),
            toml::Value::Integer(n) if n >= 0 => Ok(Limit(Some(Bytes(n as u64)))),
            toml::Value::Integer(n) => {
                Err(serde::de::Error::custom(format!("size {n} is negative")))
            }
            other => Err(serde::de::Error::custom(format!(
                "expected a size such as \"2G\", or \"max\", got {}",
                match other {
                    toml::Value::Array(_) => "an array",
                    toml::Value::Table(_) => "a table",
                    toml::Value::Boolean(_) => "a boolean",
                    toml::Value::Float(_) => "a number with a fraction",
                    _ => "a date",
                }
            ))),
        }
    }
}

impl Serialize for Limit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => s.serialize_str("max"),
            Some(b) => b.serialize(s),
        }
    }
}

/// A cgroup v2 memory cgroup: `[[cgroup]]` with a path like `workload.slice/app` (parents
/// must be listed too) and its interface files as `memory.low = "2G"` keys.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cgroup {
    /// Its path below the root (`workload.slice/app`); a parent is listed before its children.
    pub path: String,
    #[serde(default)]
    pub memory: CgroupMemory,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CgroupMemory {
    /// Hard protection: reclaim leaves the cgroup's memory below its effective min
    /// alone (0 when unset).
    pub min: Option<Bytes>,
    /// Best-effort protection: reclaim passes over memory below the effective low
    /// while others have reclaimable memory (0 when unset).
    pub low: Option<Bytes>,
    /// Throttle limit: above it the cgroup's tasks reclaim on return to user space
    /// and are delayed.
    pub high: Limit,
    /// Hard limit: a charge above it reclaims the cgroup, then calls the memcg OOM
    /// killer.
    pub max: Limit,
    /// `memory.swap.max`.
    pub swap: CgroupSwap,
    /// `memory.oom.group`.
    #[serde(skip_serializing_if = "CgroupOom::is_default")]
    pub oom: CgroupOom,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CgroupOom {
    /// `memory.oom.group` (0 or 1): the OOM killer kills every process of the cgroup
    /// and its descendants together, or none (mm/memcontrol.c
    /// `mem_cgroup_get_oom_group`).
    pub group: u32,
}

impl CgroupOom {
    fn is_default(&self) -> bool {
        self.group == 0
    }
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CgroupSwap {
    pub max: Limit,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Hz(pub u32);
impl Default for Hz {
    fn default() -> Self {
        Hz(1000)
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Vm {
    pub swappiness: u32,
    /// Default: computed as the kernel does at boot (`calculate_min_free_kbytes`).
    pub min_free_kbytes: Option<u64>,
    pub watermark_scale_factor: u32,
    /// `vm.watermark_boost_factor`: how far (in 1/10000 of the high watermark) a
    /// fragmenting fallback may boost a zone's watermarks; 0 turns boosting off.
    pub watermark_boost_factor: u32,
    /// Per zone, lowest first: DMA, DMA32, NORMAL (the simulator has no DMA zone, but the
    /// kernel's three-entry spelling is accepted; the DMA entry is ignored).
    pub lowmem_reserve_ratio: Vec<u32>,
    pub dirty_background_ratio: u32,
    pub dirty_ratio: u32,
    /// `vm.dirty_bytes`: the dirty threshold as a size; 0 (the default) = use
    /// `dirty_ratio`. When non-zero it takes precedence over the ratio, as the kernel's
    /// `domain_dirty_limits` does (writing either sysctl zeroes the other there).
    pub dirty_bytes: Bytes,
    /// `vm.dirty_background_bytes`: likewise for the background threshold.
    pub dirty_background_bytes: Bytes,
    pub dirty_expire_centisecs: u32,
    pub dirty_writeback_centisecs: u32,
    /// Swap readahead window is 2^page-cluster pages.
    #[serde(rename = "page-cluster")]
    pub page_cluster: u32,
    /// `vm.extfrag_threshold` (0..=1000): a costly-order compaction is skipped when
    /// the fragmentation index says a failure would be for lack of memory (index at
    /// or below this).
    pub extfrag_threshold: u32,
    /// `vm.compaction_proactiveness` (0..=100): how hard kcompactd compacts in the
    /// background (v5.9+); 0 turns proactive compaction off.
    pub compaction_proactiveness: u32,
    /// `vm.compact_unevictable_allowed` (0 or 1): compaction may move mlocked pages.
    pub compact_unevictable_allowed: u32,
    /// `vm.vfs_cache_pressure`: how hard reclaim shrinks the dentry and inode caches
    /// against the page cache (100: "fair"; 0: never; above 100: harder).
    pub vfs_cache_pressure: u32,
    /// `vm.percpu_pagelist_fraction` (`kernel.pcp = "v4.5"` only): each CPU's list
    /// holds at most this fraction of the zone (0: the default 6 × batch; else ≥ 8).
    pub percpu_pagelist_fraction: u32,
    /// `vm.percpu_pagelist_high_fraction` (v5.14+): each CPU's `high` is this fraction
    /// of the zone split over the CPUs, and v6.7's auto-tuning is off (0: the
    /// default, from the low watermark; else ≥ 8).
    pub percpu_pagelist_high_fraction: u32,
    /// `vm.zone_reclaim_mode`: 0 (off), or bits 1 (reclaim a node before allocating
    /// off it), 2 (and write dirty pages), 4 (and unmap mapped pages, swapping anon).
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub zone_reclaim_mode: u32,
    /// `vm.min_unmapped_ratio` (percent of a node's pages, default 1): node reclaim
    /// runs only while the node's unmapped page cache exceeds it.
    #[serde(skip_serializing_if = "is_default_min_unmapped_ratio")]
    pub min_unmapped_ratio: u32,
    /// `vm.min_slab_ratio` (percent, default 5): or while its reclaimable slab does.
    #[serde(skip_serializing_if = "is_default_min_slab_ratio")]
    pub min_slab_ratio: u32,
}

/// Node reclaim's knobs at their defaults are left out of the canonical scenario (and
/// its hash), as before they existed.
fn is_default_min_unmapped_ratio(v: &u32) -> bool {
    *v == 1
}

fn is_default_min_slab_ratio(v: &u32) -> bool {
    *v == 5
}

impl Default for Vm {
    fn default() -> Self {
        Vm {
            swappiness: 60,
            min_free_kbytes: None,
            watermark_scale_factor: 10,
            watermark_boost_factor: 15_000,
            lowmem_reserve_ratio: vec![256, 256, 32],
            dirty_background_ratio: 10,
            dirty_ratio: 20,
            dirty_bytes: Bytes(0),
            dirty_background_bytes: Bytes(0),
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            page_cluster: 3,
            extfrag_threshold: 500,
            compaction_proactiveness: 20,
            compact_unevictable_allowed: 1,
            vfs_cache_pressure: 100,
            percpu_pagelist_fraction: 0,
            percpu_pagelist_high_fraction: 0,
            zone_reclaim_mode: 0,
            min_unmapped_ratio: 1,
            min_slab_ratio: 5,
        }
    }
}

/// CPU costs of the work the simulator charges to tasks. Each default says where it
/// comes from; all are per 4 KiB page unless said otherwise.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Costs {
    /// A workload's access to a resident page (user time): a DRAM miss, ~100 ns.
    pub access: Nanos,
    /// Anonymous zero-fill fault: exception entry, page allocation, clear_page
    /// (~0.5-1 us on current x86-64).
    pub minor_fault: Nanos,
    /// Kernel side of a major fault apart from the I/O wait or decompression.
    pub major_fault: Nanos,
    /// Reclaim per page scanned (isolate, flag checks, putback): shrink_inactive_list
    /// runs at a few million pages per second per core, ~150 ns a page.
    pub scan_page: Nanos,
    /// Reclaim per page freed beyond the scan (__remove_mapping, the free; the TLB
    /// flush is `tlb_flush` and `tlb_ipi`): ~300 ns.
    pub reclaim_page: Nanos,
    /// One reverse-map walk to a mapped folio's PTE (`rmap_walk` from
    /// folio_referenced or try_to_unmap): take the anon_vma or i_mmap lock, search its
    /// interval tree, then page_vma_mapped_walk from the pgd down, four or five
    /// dependent cache misses on a large address space: ~500 ns. Unmapped page cache
    /// needs none, which is why classic reclaim of mapped memory costs more than
    /// dropping clean cache and why MGLRU walks page tables instead.
    pub rmap_walk: Nanos,
    /// A read() or write() system call beyond its page copies.
    pub syscall: Nanos,
    /// Copying one 4 KiB page between page cache and user buffer (~10 GB/s): ~400 ns.
    pub copy_page: Nanos,
    /// MGLRU's page-table walk per PTE examined: a sequential read, eight PTEs to a
    /// cache line (~10 ns). Also what a DAMOS action pays per PTE (vaddr) or frame
    /// (paddr) it looks at, before the page it finds costs a `scan_page`.
    pub walk_pte: Nanos,
    /// MGLRU's page-table walk per young PTE: clear the bit, look up the folio and
    /// update its generation, a cache miss on the struct page (~50 ns).
    pub walk_young: Nanos,
    /// DAMON, per region and sampling interval, each of preparing and checking the
    /// sampled page: a random address, the page-table walk or pfn_to_page, the page
    /// reference and lock, two or three cache misses (~100 ns). A mapped page under
    /// paddr also costs an rmap walk (`rmap_walk`) each time.
    pub damon_check: Nanos,
    /// A shrinker's work per object it scans (`list_lru_walk_one`'s isolate callback:
    /// the dentry's or inode's lock and flags, a cache miss or two; freeing it):
    /// ~100 ns.
    pub shrink_object: Nanos,
    /// A full TLB flush on one CPU, with the refills it causes (a CR3 write or
    /// INVPCID, then page walks for the entries lost): ~500 ns. Paid by the CPU that
    /// unmaps for its own flush, and by each CPU a shootdown IPI interrupts.
    pub tlb_flush: Nanos,
    /// Per CPU a TLB shootdown interrupts, what the initiator spends sending the IPI
    /// and waiting for its acknowledgement (`flush_tlb_multi`): ~1 us.
    pub tlb_ipi: Nanos,
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            access: Nanos(100),
            minor_fault: Nanos(1_000),
            major_fault: Nanos(2_000),
            scan_page: Nanos(150),
            reclaim_page: Nanos(300),
            rmap_walk: Nanos(500),
            syscall: Nanos(500),
            copy_page: Nanos(400),
            walk_pte: Nanos(10),
            walk_young: Nanos(50),
            damon_check: Nanos(100),
            shrink_object: Nanos(100),
            tlb_flush: Nanos(500),
            tlb_ipi: Nanos(1_000),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// An anonymous working set (private anonymous memory) accessed by `pattern`.
    Anon,
    /// Buffered read() of a set of files (or loads through mmap with `mmap = true`).
    FileRead,
    /// Buffered write() over a set of files.
    FileWrite,
    /// A memcached/memtier-like key-value store: `keys` values of `value_size` in
    /// anonymous memory; each request reads (get) or writes (set) one value's pages.
    Kv,
    /// fio with buffered I/O (ioengine=psync): one file of `size` per job.
    Fio,
    /// mmtests' stutterp latency worker: map `size` of anonymous memory, fault it in
    /// 4 KiB at a time, unmap; one operation per mapping.
    MmapLatency,
    /// `stress --vm-keep`: keep `size` of anonymous memory and write it page by page,
    /// over and over; with `grow_by`/`grow_every` the region grows step by step.
    AnonHog,
    /// A program whose working set changes: `[[workload.phase]]` steps run in order;
    /// reports the runtime to complete them.
    Phases,
    /// masim (DAMON's evaluation workload): memory regions and timed phases of
    /// weighted sequential or random accesses, from a masim `config` file.
    Masim,
    /// Kernel objects (slab): `object_size` objects allocated at `rate` per second per
    /// thread, each freed after `lifetime`; unmovable or reclaimable memory that
    /// fragments the page allocator.
    Slab,
    /// High-order allocation attempts (mmtests' stress-highalloc): blocks of `order`
    /// pages with the `gfp` flags, `rate` attempts per second per thread, up to
    /// `count` each; what succeeds is kept.
    Highalloc,
    /// Replays the page or object requests of a `trace` file (libCacheSim
    /// oracleGeneral or CSV, text, valgrind lackey, damo record; zstd-compressed or
    /// not) in anonymous memory or, with `backing = "file"`, through read()/write() of
    /// a file; one request is one operation.
    Trace,
}

/// What a replayed trace's pages are.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Backing {
    /// Private anonymous memory: a request's pages are loads (stores for writes).
    #[default]
    Anon,
    /// A file's page cache: a request is a buffered read() (write()) of its pages.
    File,
}

/// When a replayed trace issues its requests.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum TracePacing {
    /// Back to back (or at `rate`).
    #[default]
    None,
    /// Each request not before its timestamp (× `time_unit`) after the first's.
    Timestamps,
}

/// A slab workload's object lifetimes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LifetimeDist {
    /// Every object lives exactly `lifetime`.
    Fixed,
    /// Exponentially distributed with mean `lifetime`.
    Exponential,
}

/// A slab workload's page migratetype.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SlabType {
    Unmovable,
    /// A cache with SLAB_RECLAIM_ACCOUNT (dentries, inodes).
    Reclaimable,
}

/// fio's `rw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FioRw {
    Read,
    Randread,
    Write,
    Randwrite,
    Randrw,
}

/// One step of a `phases` workload: `duration` is the step's work measured as time at
/// full speed (accesses = duration / costs.access); it takes longer when it faults.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// The step's work as time at full speed (accesses = duration / `costs.access`).
    pub duration: Nanos,
    /// The step's range of the program's memory.
    pub size: Bytes,
    /// Where the step's range starts in the program's memory (so steps can work on
    /// different parts of it: input, a hot set, a table revisited now and then).
    #[serde(default)]
    pub offset: Bytes,
    #[serde(default = "default_pattern")]
    /// How the step picks pages in its range (default uniform).
    pub pattern: Pattern,
    #[serde(default)]
    /// zipf: the exponent s (p(k) ∝ 1/k^s).
    pub skew: Option<f64>,
    #[serde(default)]
    /// The share of the step's accesses that write.
    pub write_ratio: Option<f64>,
    /// hotcold: the share of the step's range that is hot (0.2) and the share of
    /// accesses that go to it (0.8).
    #[serde(default)]
    pub hot_fraction: Option<f64>,
    #[serde(default)]
    /// hotcold: the share of accesses that go to the hot part (0.8).
    pub hot_probability: Option<f64>,
    /// hotcold: after this many of the step's accesses the hot set moves to the
    /// middle of the range (default: never).
    #[serde(default)]
    pub phase_change: Option<u64>,
}

/// A `phases` program from a file (`config`): its steps, and how often the steps from
/// `repeat_from` on run.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseProgram {
    #[serde(default)]
    pub repeat: Option<u32>,
    #[serde(default)]
    pub repeat_from: Option<u32>,
    #[serde(rename = "phase")]
    pub phases: Vec<Phase>,
}

/// The file a workload's `config` names, as loaded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum LoadedConfig {
    Masim(super::masim::MasimConfig),
    Phases(PhaseProgram),
    Trace(LoadedTrace),
}

/// A trace workload's file, scanned: what identifies it in the resolved scenario (its
/// digest and extent) and where its requests land.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadedTrace {
    pub digest: String,
    pub requests: u64,
    pub pages: u64,
    /// The file, resolved against the scenario's directory.
    #[serde(skip)]
    pub path: std::path::PathBuf,
    #[serde(skip)]
    pub format: crate::trace::Format,
    /// One unit of the trace's timestamps, in ns.
    #[serde(skip)]
    pub time_unit_ns: f64,
    #[serde(skip)]
    pub layout: std::sync::Arc<crate::trace::layout::Layout>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    Sequential,
    Uniform,
    Zipf,
    /// `hot_fraction` of the pages get `hot_probability` of the accesses; at
    /// `phase_change` the hot set moves to a different part of the range.
    Hotcold,
}

/// One `[[workload]]`. Keys that do not apply to its `kind` are rejected by validation.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Its name: in results, tracepoints, `start_after` and `pid_target`.
    pub name: String,
    /// What it runs (each kind takes the keys whose descriptions name it).
    pub kind: WorkloadKind,
    /// Number of tasks running this workload (they share its memory).
    #[serde(default = "one")]
    pub threads: u32,
    /// anon, anon-hog, mmap-latency, phases: the workload is this many processes at
    /// once, each with `threads` threads and a mm of its own (its mappings, page
    /// tables, VMAs, `mm_struct`, `task_struct`s and kernel stacks), as `make -jN`
    /// runs N compilers. Their results add up under the workload's name. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u32>,
    #[serde(default)]
    /// When its first thread starts (default at once).
    pub start: Nanos,
    /// Start when workload `start_after` has finished (all its threads done: its
    /// work finished, its `stop` passed, or OOM-killed), or at `start` if later. A
    /// workload whose predecessor never finishes never starts.
    #[serde(default)]
    pub start_after: Option<String>,
    /// Stop after exactly this many operations (all threads together; a hit loop's
    /// accesses are operations), then the workload is finished. Several `processes`
    /// split them evenly, each process (and those that replace it) doing its share.
    #[serde(default)]
    pub ops: Option<u64>,
    /// When the workload stops issuing operations (default: end of run). A thread
    /// asleep between operations then (pacing, think time) exits at once; one blocked
    /// in the kernel exits when it wakes.
    #[serde(default)]
    pub stop: Option<Nanos>,
    /// Default: uniform.
    #[serde(default)]
    pub pattern: Option<Pattern>,
    /// Zipf exponent s (p(k) ∝ 1/k^s).
    #[serde(default)]
    pub skew: Option<f64>,
    #[serde(default)]
    /// hotcold: the share of the pages that is hot (0.2).
    pub hot_fraction: Option<f64>,
    #[serde(default)]
    /// hotcold: the share of accesses that go to the hot pages (0.8).
    pub hot_probability: Option<f64>,
    #[serde(default)]
    /// hotcold: when the hot set moves to another part of the range (default: never).
    pub phase_change: Option<Nanos>,
    /// Fraction of anon accesses that write.
    #[serde(default)]
    pub write_ratio: Option<f64>,
    /// `madvise(MADV_HUGEPAGE)` on the workload's anonymous memory: transparent huge
    /// pages under `transparent_hugepage.enabled = "madvise"`, and the `madvise`
    /// defrag modes' direct compaction.
    #[serde(default)]
    pub madvise_hugepage: Option<bool>,
    /// Access advice: "normal", "random" or "sequential" for an anonymous mapping
    /// (madvise) and a file's (madvise on an mmap, else fadvise), plus "noreuse" for
    /// files. fio's default is its `fadvise_hint=1`: random for random I/O,
    /// sequential otherwise.
    #[serde(default)]
    pub advice: Option<Advice>,
    /// anon: write every page once, in order, before the pattern starts (as most
    /// benchmarks initialise their memory); threads split the range.
    #[serde(default)]
    pub init: Option<bool>,
    /// anon, kv, anon-hog, mmap-latency: the anonymous mapping is made with
    /// MAP_POPULATE: the mmap call faults every page in (`__mm_populate`), each charged
    /// (with limit reclaim) and its CPU the task's. The call is the first thread's
    /// first operation, before anything else it does and not counted in its
    /// statistics; the other threads start when it returns (mmap-latency: every
    /// mapping, each thread its own). Default: what `mlock` says. (Left out of the
    /// resolved scenario when not given, as `mlock` is, so scenarios without them keep
    /// their resolved hash.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub populate: Option<bool>,
    /// anon, kv, anon-hog, mmap-latency: the anonymous mapping is locked (MAP_LOCKED,
    /// VM_LOCKED): its pages are mlocked, on the unevictable list, never reclaimed,
    /// until it is unmapped (exit, an OOM kill, mmap-latency's munmap). Populated at the
    /// mapping call unless `populate = false`, which is mlock2's MLOCK_ONFAULT: each
    /// page mlocked as it is first faulted in. RLIMIT_MEMLOCK is not modelled (the
    /// workloads run as root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mlock: Option<bool>,
    /// Model the workload's page tables: a page-table page (unmovable kernel memory,
    /// charged to its memcg) for each 2 MiB of anonymous memory it touches, freed when
    /// the memory is unmapped. On by default, as the kernel has them.
    #[serde(default)]
    pub page_tables: Option<bool>,
    /// Where its tasks' memory comes from on a machine of several nodes
    /// (`set_mempolicy`): `{ mode = "interleave", nodes = [0, 1] }`. Default: local.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mempolicy: Option<MempolicyCfg>,
    /// Its tasks run only on these nodes' CPUs (`numactl --cpunodebind`; their
    /// local allocations go to the node of the CPU they run on). Default: any CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpunodebind: Option<Vec<u32>>,
    /// A 16 KiB kernel stack (an order-2 unmovable block, charged to its memcg) per
    /// thread, from its fork (when the workload starts). On by default.
    #[serde(default)]
    pub kernel_stacks: Option<bool>,
    /// Operations per second per thread (paced); default: as fast as possible.
    #[serde(default)]
    pub rate: Option<f64>,
    /// Idle time after each operation.
    #[serde(default)]
    pub think_time: Option<Nanos>,
    /// anon: size of the working set.
    #[serde(default)]
    pub size: Option<Bytes>,
    /// file-read / file-write: the number of files.
    #[serde(default)]
    pub nr_files: Option<u32>,
    #[serde(default)]
    /// file-read / file-write: the size of each file.
    pub file_size: Option<Bytes>,
    /// file-read / file-write: bytes per read()/write() call (one operation).
    #[serde(default)]
    pub io_size: Option<Bytes>,
    /// file-read: access the files through mmap instead of read().
    #[serde(default)]
    pub mmap: Option<bool>,
    /// The cgroup the workload's tasks run in (a `[[cgroup]]` path; default the root).
    #[serde(default)]
    pub cgroup: Option<String>,
    /// `/proc/PID/oom_score_adj` of the workload's process, -1000..=1000 (default
    /// 0): its OOM badness moves by that many thousandths of the memory the OOM
    /// killer weighs against; -1000 (OOM_SCORE_ADJ_MIN) is never killed, not even by
    /// memory.oom.group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_score_adj: Option<i32>,
    /// kv: the number of keys.
    #[serde(default)]
    pub keys: Option<u64>,
    #[serde(default)]
    /// kv: bytes per value.
    pub value_size: Option<Bytes>,
    #[serde(default)]
    /// kv: the share of requests that are sets (writes).
    pub set_ratio: Option<f64>,
    #[serde(default)]
    /// kv: requests a client sends before waiting for the replies.
    pub pipeline: Option<u32>,
    /// kv: memtier's load phase first (`--ratio=1:0 --key-pattern=P:P`): the threads set
    /// every key once in order, each its share; these requests are not counted.
    #[serde(default)]
    pub fill: Option<bool>,
    #[serde(default)]
    /// kv: the server's CPU time per request.
    pub request_time: Option<Nanos>,
    /// fio: the access mode (`read`, `write`, `randread`, `randwrite`, `randrw`).
    #[serde(default)]
    pub rw: Option<FioRw>,
    #[serde(default)]
    /// fio: block size (bytes per read or write).
    pub bs: Option<Bytes>,
    #[serde(default)]
    /// fio: jobs, each a thread with its own file of `size`.
    pub numjobs: Option<u32>,
    #[serde(default)]
    /// fio: I/Os a job keeps in flight.
    pub iodepth: Option<u32>,
    #[serde(default)]
    /// fio: how long the jobs run.
    pub runtime: Option<Nanos>,
    #[serde(default)]
    /// fio: time before the statistics start (the ramp's I/O is not counted).
    pub ramp_time: Option<Nanos>,
    #[serde(default)]
    /// fio randrw: the share of reads, in percent.
    pub rwmixread: Option<u32>,
    /// anon-hog: grow the kept region by `grow_by` every `grow_every`, from `size`...
    #[serde(default)]
    pub grow_by: Option<Bytes>,
    #[serde(default)]
    /// anon-hog: how often the kept region grows by `grow_by`.
    pub grow_every: Option<Nanos>,
    /// ...up to `max_size`.
    #[serde(default)]
    pub max_size: Option<Bytes>,
    /// slab: the object size, how long each lives (`lifetime_dist`: exponential by
    /// default, or fixed), and the cache's type (unmovable by default). anon,
    /// anon-hog, mmap-latency, phases: how long each process lives; it then exits
    /// (`do_exit`: its memory, page tables and kernel objects freed) and a new one is
    /// forked in its place (`copy_process`), until the workload stops. The first
    /// processes' lives are staggered (process k of N first exits at
    /// `lifetime`·(k+1)/N), as in a build already under way.
    #[serde(default)]
    pub object_size: Option<Bytes>,
    #[serde(default)]
    /// slab: an object's life; anon, anon-hog, mmap-latency, phases: a process's life (see `object_size`).
    pub lifetime: Option<Nanos>,
    #[serde(default)]
    pub lifetime_dist: Option<LifetimeDist>,
    #[serde(default)]
    pub slab_type: Option<SlabType>,
    /// highalloc: the order of each attempt (a block of 2^order pages).
    #[serde(default)]
    pub order: Option<u32>,
    #[serde(default)]
    /// highalloc: the GFP flags of each attempt (`GFP_NOWAIT|__GFP_HIGH|__GFP_COMP`).
    pub gfp: Option<String>,
    #[serde(default)]
    /// highalloc: attempts per thread (default: until `stop`).
    pub count: Option<u64>,
    /// phases: the steps.
    #[serde(default, rename = "phase", skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
    /// phases: the steps from `repeat_from` (0-based, default 0) on run `repeat` times
    /// (default 1); the ones before it once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// phases: the first step (0-based) of those `repeat` runs again.
    pub repeat_from: Option<u32>,
    /// masim: its access-pattern configuration file (masim's own format); phases: a
    /// TOML file of `[[phase]]` steps (and `repeat`, `repeat_from`). Relative to the
    /// scenario file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// trace: the trace file (relative to the scenario file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// trace: the file's format (default from its name: `oracleGeneral`, `csv`, `lackey`, `damo`, else `text`).
    pub trace_format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// trace, CSV: libCacheSim's column options (`obj-id-col=2,obj-size-col=3,time-col=1`).
    pub trace_options: Option<String>,
    /// trace: anonymous memory (default) or a file's page cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing: Option<Backing>,
    /// trace: back to back (default) or by the trace's timestamps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<TracePacing>,
    /// trace: what one unit of the trace's timestamps is (default: 1s for
    /// oracleGeneral and CSV, 1ns for damo records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_unit: Option<Nanos>,
    /// trace: start over at the end (timestamps shifted by the trace's span).
    #[serde(default, rename = "loop", skip_serializing_if = "Option::is_none")]
    pub loop_: Option<bool>,
    /// trace: every object is one page (sizes ignored; keys are page numbers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_obj_size: Option<bool>,
    /// The file `config` (or a trace workload's `trace`) names, as loaded (not a key:
    /// filled in by the loader, and part of the resolved scenario, so an edited file
    /// makes earlier results stale).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub loaded: Option<LoadedConfig>,
}

impl Scenario {
    /// The processes the workloads run, as (workload index, process number within
    /// it): each workload's first process first, in workload order (so a workload's
    /// index is its first process's), then the others of each workload in turn.
    pub fn processes(&self) -> Vec<(usize, u32)> {
        let firsts = (0..self.workloads.len()).map(|w| (w, 0));
        let others = self
            .workloads
            .iter()
            .enumerate()
            .flat_map(|(w, cfg)| (1..cfg.processes.unwrap_or(1)).map(move |k| (w, k)));
        firsts.chain(others).collect()
    }
}

impl Workload {
    /// How long each of its processes lives, if they come and go (a slab workload's
    /// `lifetime` is its objects').
    pub fn process_lifetime(&self) -> Option<Nanos> {
        self.lifetime.filter(|_| self.kind != WorkloadKind::Slab)
    }

    /// Several processes over the run (`processes` > 1, or a process `lifetime`): no
    /// one pid names it.
    pub fn is_several_processes(&self) -> bool {
        self.processes.unwrap_or(1) > 1 || self.process_lifetime().is_some()
    }

    /// A `phases` workload's steps and repeat (count, from), inline or from `config`.
    pub fn phase_program(&self) -> (&[Phase], u32, u32) {
        match &self.loaded {
            Some(LoadedConfig::Phases(p)) => {
                (&p.phases, p.repeat.unwrap_or(1), p.repeat_from.unwrap_or(0))
            }
            _ => (
                &self.phases,
                self.repeat.unwrap_or(1),
                self.repeat_from.unwrap_or(0),
            ),
        }
    }

    /// A `masim` workload's configuration, once loaded.
    pub fn masim(&self) -> Option<&super::masim::MasimConfig> {
        match &self.loaded {
            Some(LoadedConfig::Masim(m)) => Some(m),
            _ => None,
        }
    }

    pub fn loaded_trace(&self) -> Option<&LoadedTrace> {
        match &self.loaded {
            Some(LoadedConfig::Trace(t)) => Some(t),
            _ => None,
        }
    }
}

fn one() -> u32 {
    1
}
fn default_pattern() -> Pattern {
    Pattern::Uniform
}

/// A knob written at a simulated time, as an administrator or an agent would: a
/// scenario key (`set = "kernel.vm.swappiness"`), or a cgroup interface file
/// (`cgroup = "workload.slice"`, `write = "memory.reclaim"`), or a cgroup file read
/// (`read = "memory.peak"`: what it shows then is the action's outcome).
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// When the action is applied, in virtual time from the start.
    pub at: Nanos,
    /// Dotted scenario key, e.g. `kernel.vm.swappiness`.
    #[serde(default)]
    pub set: Option<String>,
    /// A cgroup path and the interface file written in it.
    #[serde(default)]
    pub cgroup: Option<String>,
    #[serde(default)]
    /// With `cgroup`: the interface file written (`memory.reclaim`, `memory.high`, ...).
    pub write: Option<String>,
    /// A cgroup interface file read (memory.current, memory.peak, memory.stat, ...: `CGROUP_READABLE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    /// The open file a memory.peak or memory.swap.peak write or read goes through,
    /// by a name of the scenario's choosing: the file stays open from its first use to
    /// the end of the run, and a write resets the peak that later reads through the
    /// same name see (v6.12's per-open-file reset). Without it, the action opens the
    /// file, writes or reads, and closes it again, as `echo`/`cat` do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd: Option<String>,
    /// A debugfs file written: "lru_gen" (MGLRU's `+ memcg node seq ...` age and
    /// `- memcg node seq ...` evict commands in `value`).
    #[serde(default)]
    pub debugfs: Option<String>,
    /// A write-only sysctl that does something when written: "vm.compact_memory"
    /// (value 1: compact every zone), "vm.drop_caches" (1: drop the clean page cache;
    /// 2: reclaimable slab, of which nothing here can be dropped; 3: both).
    #[serde(default)]
    pub sysctl: Option<String>,
    /// What is written; every action but a `read` has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub value: Option<toml::Value>,
}

/// The cgroup interface files an action can write.
pub const CGROUP_WRITABLE: [&str; 8] = [
    "memory.reclaim",
    "memory.min",
    "memory.low",
    "memory.high",
    "memory.max",
    "memory.peak",
    "memory.swap.peak",
    "memory.oom.group",
];

/// The cgroup interface files an action can read (the outcome is what `cat` prints:
/// bytes, or `max`).
pub const CGROUP_READABLE: [&str; 9] = [
    "memory.current",
    "memory.peak",
    "memory.min",
    "memory.low",
    "memory.high",
    "memory.max",
    "memory.swap.current",
    "memory.swap.peak",
    "memory.oom.group",
];

/// The files whose reads and writes go through an open file (`fd`) that remembers
/// something: memory.peak and memory.swap.peak (`struct cgroup_of_peak`).
pub const CGROUP_PER_FD: [&str; 2] = ["memory.peak", "memory.swap.peak"];
