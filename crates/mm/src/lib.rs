//! The Linux kernel's memory management as a deterministic model: a machine's nodes,
//! frames, zones, LRUs, swap, page cache, memory cgroups and the reclaim machinery, one module
//! per kernel file (`vmscan`, `memcontrol`, `workingset`, `lru_gen`, `compaction`,
//! `damon/`, ...), so `shrink_lruvec` is where a kernel developer looks for it. It
//! depends on no other crate of reclaimsim: a driver builds it from [`Config`] and runs
//! it.
//!
//! # What a node holds
//!
//! [`Mm`] is the whole of it: a frame table ([`page::Frame`], one 28-byte `struct
//! page` per 4 KiB page), the zones ([`zone::Zone`]: DMA32 and Normal, each with its
//! buddy free lists, watermarks and lowmem reserves), a lruvec per memory cgroup
//! ([`lru::Lruvec`]: the classic active/inactive lists, or MGLRU's generations), the
//! cgroup tree ([`memcontrol::MemcgTree`]: page counters, protection, statistics),
//! the address spaces ([`Space`]: an anonymous mapping's page table or a file's page
//! cache, as flat arrays of PTEs), the swap device ([`swap::SwapDevice`]: zram, a disk
//! or a ramdisk) and the storage device ([`blk_mq::Device`]), the VFS caches (`fs`),
//! the slab caches, the writeback state, and the counters `/proc/vmstat` shows
//! ([`vm_event_item`]) with the tracepoints ([`trace`]).
//!
//! A machine may have several nodes ([`Config::nodes`]), each a pgdat as the kernel
//! has it: their memory lies one after the other in the frame table; each has its
//! zones (node n's are zone ids `n * MAX_NR_ZONES ..`; a frame's `zone` is the zone's
//! type), a lruvec per memcg ([`Mm::mem_cgroup_lruvec`]: node-major, so node 0's
//! lruvec of memcg m is index m), a memcg LRU, a kswapd and a kcompactd
//! ([`Current::Kswapd`]`(nid)`). An allocation walks the zonelist of its preferred
//! node ([`page_alloc::build_all_zonelists`], the task's memory policy in
//! [`mempolicy`]); it wakes the kswapd of each node in it, and direct reclaim
//! shrinks those nodes in that order (`shrink_zones`). A page's lruvec is its memcg's
//! on its node ([`Mm::folio_lruvec`]), and its shadow entry names both. The reclaim
//! throttles' wait queues are one for the machine.
//!
//! # How an access reaches a fault and reclaim
//!
//! A user access is a load of the space's PTE. A present, young entry is a hit and
//! never enters this crate's code: the driver's hit loops read [`Space::pte`] and set
//! the accessed bit themselves, as the MMU does. Anything else is a page fault:
//! `handle_anon_fault` (`do_anonymous_page`, `do_swap_page`), `do_read_fault` and
//! `filemap_read` for files. A fault allocates ([`page_alloc`]: `get_page_from_freelist`
//! against the watermarks, then the slow path), charges the memcg (`try_charge`, which
//! reclaims the memcg over its memory.high or memory.max), and adds the folio to an LRU.
//! An allocation that finds a zone below its low watermark wakes kswapd; one below min
//! reclaims directly (`try_to_free_pages` → `shrink_node` → `shrink_lruvec` →
//! `shrink_folio_list` in [`vmscan`], or MGLRU's `try_to_shrink_lruvec` in
//! [`lru_gen`]), compacts (`compaction`), throttles (`throttle`), and in the end calls
//! the OOM killer (`oom_kill`). Evicted pages leave shadow entries ([`workingset`]); a
//! later fault on one is a refault.
//!
//! # Time, tasks and the kernel threads
//!
//! The model has no clock of its own. Its code runs "in kernel context" for the task
//! the driver has made current ([`Mm::current`], [`Current`]) at [`Mm::now`], and
//! charges the CPU time it spends to that task ([`Mm::charge`], read back from
//! [`Mm::cpu_ns`]); nothing it does takes zero time. When it must sleep (a full device
//! queue, a reclaim throttle) it sets [`Mm::blocked_until`] and returns; the driver
//! resumes the task then. What it needs of the driver, wake-ups and kills, it pushes to
//! [`Mm::out`] ([`Out`]).
//!
//! The kernel threads are state machines the driver runs as tasks of their own, each
//! a step at a time: kswapd ([`Mm::kswapd_run`] with a CPU budget, returning
//! [`kswapd::KswapdNext`]: run again, nap, or sleep until woken), kcompactd
//! ([`Mm::kcompactd_run`]), each kdamond ([`Mm::kdamond_run`]: a sampling interval's
//! work, then the time of the next) and the flusher ([`Mm::wb_writeback`]). A thread
//! sleeps until an [`Out`] wake-up or the time its last step returned.
//!
//! The driver also owns the user side: which pages a workload touches and when. Given
//! the same [`Config`] and the same calls in the same order, the model does the same
//! thing, byte for byte: its only randomness ([`rng`]) is seeded from
//! [`Config::seed`].

/// `Mm::trace` of tracepoint `$tp` with its fields formatted from the rest, the
/// arguments evaluated only while the event is on: the hot paths that carry
/// tracepoints (readahead, reclaim's lists) pay a flag test, not the formatting's
/// set-up.
macro_rules! trace_event {
    ($mm:expr, $tp:expr, $($fields:tt)+) => {{
        let tp = $tp;
        if $mm.tracing(tp) {
            $mm.trace(tp, format_args!($($fields)+));
        }
    }};
}

pub mod bitmap;
pub mod blk_mq;
pub mod check;
pub mod compact_status;
pub mod compaction;
pub mod damon;
pub mod filemap;
pub mod fork;
pub mod fs;
pub mod gup;
pub mod hint;
pub mod huge_memory;
pub mod kcompactd;
pub mod kswapd;
pub mod list;
pub mod lru;
pub mod lru_gen;
pub mod lru_policy;
pub mod madvise;
pub mod memcontrol;
pub mod memory;
pub mod memory_tiers;
pub mod mempolicy;
pub mod migrate;
pub mod mlock;
pub mod node_reclaim;
pub mod numa_balancing;
pub mod oom_kill;
pub mod page;
pub mod page_alloc;
pub mod page_counter;
pub mod pcp;
pub mod readahead;
pub mod rng;
pub mod shrinker;
pub mod slab;
pub mod swap;
#[cfg(test)]
pub(crate) mod test_util;
pub mod throttle;
pub mod tlbflush;
pub mod trace;
pub mod vm_event_item;
pub mod vmscan;
pub mod vmstat;
pub mod workingset;
pub mod writeback;
pub mod zone;

use crate::trace::{Tp, Tracer};
use crate::vm_event_item::{Ev, VmStat};
use blk_mq::Device;
use list::ListHead;
use page::{Frame, Pfn, Pte};
use zone::{Zone, MAX_NR_ZONES, ZONE_DMA32, ZONE_NORMAL};

/// `THREAD_SIZE_ORDER` on x86-64: 16 KiB kernel stacks.
pub const THREAD_SIZE_ORDER: usize = 2;

/// Everything the kernel model is built from: the machine (memory, zones, devices),
/// the cgroup tree, the processes, and the kernel's knobs, in the kernel's names and
/// units. [`Mm::new`] reads it all; [`Mm::apply_kernel_settings`] re-reads the knobs
/// when a sysctl is written at run time (the machine, the tree and the processes are
/// fixed at boot and ignored there).
#[derive(Debug, Clone)]
pub struct Config {
    /// RAM in pages, and how many of them (the lowest) are ZONE_DMA32; the rest is
    /// ZONE_NORMAL.
    pub memory_pages: u64,
    pub dma32_pages: u64,
    /// The NUMA nodes, lowest PFNs first: each one's memory, CPUs and SLIT row. Empty:
    /// one node with all of the memory and CPUs ([`Config::node_layout`]).
    pub nodes: Vec<NodeConfig>,
    /// The swap area (`swapon`), if any.
    pub swap: Option<SwapConfig>,
    /// The block device the file systems live on.
    pub storage: blk_mq::DeviceConfig,
    /// The cgroups below the root, each after its parent.
    pub memcgs: Vec<MemcgConfig>,
    /// The peak files opened before the run, by name.
    pub peak_fds: Vec<PeakFdConfig>,
    /// One per workload: its process.
    pub workloads: Vec<WorkloadConfig>,
    /// Seeds the kernel's own random choices (memcg LRU bins, DAMON's sampling).
    pub seed: u64,
    pub swappiness: u64,
    /// `vm.min_free_kbytes`; None: `calculate_min_free_kbytes` from the lowmem pages.
    pub min_free_kbytes: Option<u64>,
    /// `vm.lowmem_reserve_ratio` for DMA32 and Normal.
    pub lowmem_reserve_ratio: [u32; MAX_NR_ZONES],
    pub watermark_scale_factor: u64,
    /// `vm.watermark_boost_factor`.
    pub watermark_boost_factor: u64,
    pub dirty_background_ratio: u64,
    pub dirty_ratio: u64,
    /// `vm.dirty_bytes` and `vm.dirty_background_bytes` (0 = use the ratio).
    pub dirty_bytes: u64,
    pub dirty_background_bytes: u64,
    pub dirty_expire_ns: u64,
    pub dirty_writeback_interval_ns: u64,
    /// `vm.page-cluster`: swap readahead reads 2^page_cluster pages.
    pub page_cluster: u32,
    pub hz: u64,
    pub costs: Costs,
    /// `kernel.lru` and `kernel.lru_gen.*`.
    pub lru_gen: lru_gen::LruGenConfig,
    /// `kernel.lru` naming a research policy: what decides which pages reclaim takes.
    pub lru_policy: Option<lru_policy::PolicyFactory>,
    /// The kdamonds: `[damon]`'s, then DAMON_RECLAIM's if configured.
    pub damon: Vec<damon::KdamondConfig>,
    /// `vm.extfrag_threshold`.
    pub extfrag_threshold: i64,
    /// `vm.compaction_proactiveness`.
    pub compaction_proactiveness: u64,
    /// `vm.compact_unevictable_allowed`.
    pub compact_unevictable_allowed: bool,
    /// `kernel.kswapd_compaction`: v4.5's kswapd compacts by itself (true) or v4.6+'s
    /// kcompactd does.
    pub kswapd_compacts: bool,
    /// `transparent_hugepage.enabled` / `.defrag`.
    pub thp_enabled: huge_memory::ThpEnabled,
    pub thp_defrag: huge_memory::ThpDefrag,
    /// The storage device's `read_ahead_kb` and `max_sectors_kb` in pages (the bdi's
    /// `ra_pages` and `io_pages`).
    pub ra_pages: u32,
    pub io_pages: u32,
    /// `fault_around_pages`: `fault_around_bytes` rounded down to a power of two, in
    /// pages (1: fault-around off).
    pub fault_around_pages: u32,
    /// `kernel.memcg_stats_flush = "rstat"`: reclaim reads flushed memcg statistics.
    pub memcg_stats_rstat: bool,
    /// `kernel.memcg_kmem`: kernel memory is charged to memcgs.
    pub memcg_kmem: bool,
    /// `vm.vfs_cache_pressure`.
    pub vfs_cache_pressure: u64,
    pub nr_cpus: u64,
    /// How memory.min/low protect: the switch between the cliff, the seed's and
    /// today's proportional protection.
    pub memcg_protection: vmscan::ProtectionMode,
    /// The cgroup2 mount option `memory_recursiveprot`.
    pub memory_recursiveprot: bool,
    /// `kernel.reclaim_throttle`.
    pub reclaim_throttle: throttle::ReclaimThrottle,
    /// `kernel.pcp`: which kernel's per-CPU page lists.
    pub pcp: pcp::PcpVersion,
    /// `vm.percpu_pagelist_fraction` (v4.5 to v5.13; 0: unset).
    pub percpu_pagelist_fraction: u64,
    /// `vm.percpu_pagelist_high_fraction` (v5.14+; 0: unset).
    pub percpu_pagelist_high_fraction: u64,
    /// /sys/kernel/mm/numa/demotion_enabled: reclaim demotes to a slower tier.
    pub demotion_enabled: bool,
    /// `kernel.numa_balancing` (memory-tiering mode) and its tunables.
    pub numa_balancing: numa_balancing::NumaBalancingConfig,
    /// `vm.zone_reclaim_mode` (0: off; else RECLAIM_ZONE | RECLAIM_WRITE |
    /// RECLAIM_UNMAP bits, [`node_reclaim`]).
    pub zone_reclaim_mode: u32,
    /// `vm.min_unmapped_ratio` and `vm.min_slab_ratio` (percent of a node's managed
    /// pages): node reclaim's thresholds.
    pub min_unmapped_ratio: u64,
    pub min_slab_ratio: u64,
}

/// A NUMA node as firmware describes it: its memory (a contiguous PFN range after the
/// previous node's), its CPUs, and its row of the SLIT distance table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConfig {
    pub memory_pages: u64,
    /// The ids of its CPUs (each CPU on one node; a node may have none: CXL memory).
    pub cpus: Vec<u32>,
    /// `node_distance(this, n)` for every node n: 10 to itself (LOCAL_DISTANCE).
    pub distance: Vec<u32>,
    /// Its memory's latency and bandwidth as HMAT reports them (None: the default
    /// DRAM type's): the memory tier it joins, and what an access to it costs.
    pub perf: Option<NodePerf>,
}

/// A node's memory performance as HMAT reports it for its best initiator
/// (`struct access_coordinate`, read and write taken alike): load latency and
/// bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodePerf {
    pub latency_ns: u64,
    pub bandwidth_mbps: u64,
}

/// Nodes' memory comes in 4 MiB steps (a scenario's `[[machine.node]]` memory is a
/// multiple of it): the granule of [`Mm::pfn_to_nid`]'s table.
pub const NODE_BLOCK_PAGES: u64 = 1024;

/// `LOCAL_DISTANCE`: a node's distance to itself in the SLIT.
pub const LOCAL_DISTANCE: u32 = 10;
/// `REMOTE_DISTANCE`: another node's, when firmware gives no SLIT.
pub const REMOTE_DISTANCE: u32 = 20;

/// A process the model runs (one per workload).
#[derive(Debug, Clone, Default)]
pub struct WorkloadConfig {
    /// The cgroup it runs in (a path of [`Config::memcgs`]); None: the root.
    pub memcg: Option<String>,
    pub oom_score_adj: i32,
    /// It madvised its memory MADV_HUGEPAGE.
    pub madvise_hugepage: bool,
    /// Its page tables are accounted.
    pub page_tables: bool,
    /// Its tasks' memory policy (`set_mempolicy`).
    pub mempolicy: mempolicy::Mempolicy,
}

/// What backs the swap area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapKind {
    /// A zram device: pages are compressed into RAM (drivers/block/zram).
    Zram,
    /// A block device with its own latencies and queue.
    Disk,
    /// A brd ramdisk (`/dev/ram0`): pages written to it take RAM (no discard on swap
    /// free), reads and writes are a memory copy in the submitter's context.
    Ramdisk,
}

/// A swap area (`swapon`): its device and size.
#[derive(Debug, Clone, PartialEq)]
pub struct SwapConfig {
    pub kind: SwapKind,
    pub size_pages: u64,
    /// zram: original size over compressed size.
    pub compression_ratio: f64,
    /// zram's `mem_limit` in bytes (0: none).
    pub mem_limit_bytes: u64,
    /// A disk's latencies, bandwidths and queue.
    pub device: blk_mq::BlockDeviceConfig,
}

/// A cgroup below the root as it is created (`mkdir`, then its memory.* files
/// written), in pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemcgConfig {
    /// Its path below the root (`a/b`); its parent comes before it.
    pub path: String,
    pub min_pages: u64,
    pub low_pages: u64,
    pub high_pages: u64,
    pub max_pages: u64,
    /// memory.swap.max.
    pub swap_max_pages: u64,
    /// memory.oom.group.
    pub oom_group: bool,
}

impl MemcgConfig {
    /// Cgroup `path` as `mkdir` makes it: no protection, no limits.
    pub fn new(path: &str) -> MemcgConfig {
        use page_counter::PAGE_COUNTER_MAX;
        MemcgConfig {
            path: path.to_string(),
            min_pages: 0,
            low_pages: 0,
            high_pages: PAGE_COUNTER_MAX,
            max_pages: PAGE_COUNTER_MAX,
            swap_max_pages: PAGE_COUNTER_MAX,
            oom_group: false,
        }
    }
}

/// A peak file opened before the run and kept open under `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeakFdConfig {
    pub name: String,
    /// The cgroup's path.
    pub memcg: String,
    pub file: memcontrol::PeakFile,
}

impl Config {
    /// A machine of `memory_pages` (DMA32 up to 3 GiB, the rest Normal) with one CPU,
    /// an NVMe-like disk, no swap, no cgroups and no processes, every knob at its
    /// default in today's kernel (the classic LRU, HZ=1000, THP off). The scenario's
    /// defaults are these: a test of the top crate holds the two equal.
    pub fn new(memory_pages: u64) -> Config {
        Config {
            memory_pages,
            dma32_pages: ((3u64 << 30) / 4096).min(memory_pages),
            nodes: Vec::new(),
            swap: None,
            storage: blk_mq::DeviceConfig::Block(blk_mq::BlockDeviceConfig {
                read_latency_ns: 80_000,
                write_latency_ns: 20_000,
                read_bytes_per_s: 2 << 30,
                write_bytes_per_s: 2 << 30,
                queue_depth: 32,
            }),
            memcgs: Vec::new(),
            peak_fds: Vec::new(),
            workloads: Vec::new(),
            seed: 1,
            swappiness: 60,
            min_free_kbytes: None,
            lowmem_reserve_ratio: [256, 32],
            watermark_scale_factor: 10,
            watermark_boost_factor: 15_000,
            dirty_background_ratio: 10,
            dirty_ratio: 20,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirty_expire_ns: 30_000_000_000,
            dirty_writeback_interval_ns: 5_000_000_000,
            page_cluster: 3,
            hz: 1000,
            costs: Costs::default(),
            lru_gen: lru_gen::LruGenConfig {
                enabled: false,
                mm_walk: true,
                nonleaf_young: true,
                min_ttl_jiffies: 0,
                memcg_reclaim: lru_gen::MemcgReclaim::MemcgLru,
            },
            lru_policy: None,
            damon: Vec::new(),
            extfrag_threshold: 500,
            compaction_proactiveness: 20,
            compact_unevictable_allowed: true,
            kswapd_compacts: false,
            thp_enabled: huge_memory::ThpEnabled::Never,
            thp_defrag: huge_memory::ThpDefrag::Madvise,
            ra_pages: 32,
            io_pages: 320,
            fault_around_pages: 16,
            memcg_stats_rstat: true,
            memcg_kmem: true,
            vfs_cache_pressure: 100,
            nr_cpus: 1,
            memcg_protection: vmscan::ProtectionMode::Proportional,
            memory_recursiveprot: false,
            reclaim_throttle: throttle::ReclaimThrottle::Throttle,
            pcp: pcp::PcpVersion::V6_7,
            percpu_pagelist_fraction: 0,
            percpu_pagelist_high_fraction: 0,
            demotion_enabled: false,
            numa_balancing: Default::default(),
            zone_reclaim_mode: 0,
            min_unmapped_ratio: 1,
            min_slab_ratio: 5,
        }
    }

    /// The nodes as built: [`Config::nodes`], or one node holding all of
    /// `memory_pages` and every CPU.
    pub fn node_layout(&self) -> Vec<NodeConfig> {
        if !self.nodes.is_empty() {
            return self.nodes.clone();
        }
        vec![NodeConfig {
            memory_pages: self.memory_pages,
            cpus: (0..self.nr_cpus.max(1) as u32).collect(),
            distance: vec![LOCAL_DISTANCE],
            perf: None,
        }]
    }

    /// One jiffy in nanoseconds.
    pub fn jiffy_ns(&self) -> u64 {
        1_000_000_000 / self.hz
    }
}

/// CPU costs in nanoseconds (the scenario's `[costs]` documents where each default
/// comes from).
#[derive(Debug, Clone, Copy)]
pub struct Costs {
    pub access_ns: u64,
    pub minor_fault_ns: u64,
    pub major_fault_ns: u64,
    pub scan_page_ns: u64,
    pub reclaim_page_ns: u64,
    pub rmap_walk_ns: u64,
    pub syscall_ns: u64,
    pub copy_page_ns: u64,
    pub walk_pte_ns: u64,
    pub walk_young_ns: u64,
    pub damon_check_ns: u64,
    pub shrink_object_ns: u64,
    pub compress_ns: u64,
    pub decompress_ns: u64,
    pub tlb_flush_ns: u64,
    pub tlb_ipi_ns: u64,
}

impl Default for Costs {
    fn default() -> Costs {
        Costs {
            access_ns: 100,
            minor_fault_ns: 1_000,
            major_fault_ns: 2_000,
            scan_page_ns: 150,
            reclaim_page_ns: 300,
            rmap_walk_ns: 500,
            syscall_ns: 500,
            copy_page_ns: 400,
            walk_pte_ns: 10,
            walk_young_ns: 50,
            damon_check_ns: 100,
            shrink_object_ns: 100,
            compress_ns: 6_000,
            decompress_ns: 2_000,
            tlb_flush_ns: 500,
            tlb_ipi_ns: 1_000,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpaceKind {
    Anon,
    File,
}

/// An address space: an anonymous mapping's page table, or a file's page cache.
/// Both are flat arrays of [`Pte`] indexed by page offset, allocated on the first entry
/// written (a file nobody opened, a mapping nobody touched, costs no table), and dropped
/// whole when the space is zapped, as the kernel frees page-table pages on unmap.
#[derive(Debug, Clone)]
pub struct Space {
    pub kind: SpaceKind,
    pub name: String,
    /// Empty until [`Space::pte_mut`] or [`Space::table_mut`] first needs it; then
    /// `nr_pages` entries.
    entries: Vec<Pte>,
    nr_pages: u32,
    /// One past the highest entry ever written since the table was allocated: entries
    /// at and above it are none, so walks of the whole space (zap, the checker) stop
    /// there, as a page-table walk skips unpopulated tables.
    hi: u32,
    /// A bit per page-table page (512 entries) ever written: the ones a page-table walk
    /// descends into (the kernel skips pmd_none entries at once).
    pmd_map: Vec<u64>,
    /// The accessed bit of each PMD entry (non-leaf, pointing at a page-table page),
    /// one per 512 entries. x86's page walker sets it as it passes through on the way
    /// to a PTE whose accessed bit it sets, so every simulated access sets both; only
    /// MGLRU's walk (with `lru_gen.enabled` bit 0x4) tests and clears it. A byte each,
    /// not a bit: the hit loops set it with one store, no read-modify-write.
    pmd_young: Vec<bool>,
    /// Per page table, how many changes [`Space::log_change`] saw under it (an entry
    /// written, its PMD accessed bit cleared), logged or not, and the table taken away
    /// (`take_table`): a sequential hit loop that saw a table settled knows it still
    /// is while this has not moved. Kept across tables, so it never goes back.
    pmd_gen: Vec<u64>,
    /// The workload that owns it (anon spaces only; files outlive their users).
    pub owner: Option<usize>,
    /// A file's mapper: the workload that mmaps it (each file has one user), whose
    /// page tables over it are `pt_pages`.
    pub mapper: Option<usize>,
    /// Page-table pages allocated for it (a workload's `page_tables`), freed at zap.
    pub pt_pages: Vec<Pfn>,
    /// A file mapping's page tables: a bit per 512-page range that has one (the
    /// page cache's own `pmd_map` says which ranges hold pages, mapped or not).
    pub file_pt_map: Vec<u64>,
    /// Pages present (resident) and swapped out, for OOM badness.
    pub nr_present: u64,
    pub nr_swap: u64,
    /// Set when the owner was OOM-killed: the space no longer exists.
    pub dead: bool,
    /// VM_LOCKED (mmap with MAP_LOCKED, or mlock2): its pages are mlocked as they are
    /// faulted in and munlocked when unmapped (mm/mlock.c).
    pub vm_locked: bool,
    /// Back the table with the host's huge pages (it spans no more pages than the
    /// machine has, so the host memory this can commit beyond what is written is at
    /// most 8 bytes per simulated page; a sparse 1 TiB mapping keeps 4 KiB pages).
    huge_table: bool,
    /// Entries possibly written since logging began (a PMD entry's accessed bit cleared
    /// is logged as [`PMD_CHANGE`] | its index), for the hit loops that skip accesses
    /// which would change nothing (`workload::skip`): they must hear of every entry
    /// that may have turned old, clean or not present. Positions count from the
    /// first entry ever logged; `change_log[0]` is position `log_start`.
    change_log: Vec<u64>,
    log_start: u64,
    logging: bool,
    /// madvise/fadvise advice on the mapping or file.
    pub advice: Advice,
    /// Every user access traps into the kernel (`--record-accesses`, and research
    /// policies that must see each access): the hit loops get this all-none table
    /// instead of `entries`, so each access takes the fault path, which finds the page
    /// present ([`Mm::access_present`]). Never written, so the host commits none of it.
    trap: Option<(Vec<Pte>, Vec<bool>)>,
    /// A file's `struct file_ra_state` (one open file per space, shared by the threads
    /// of the workload that reads it).
    pub ra: readahead::FileRaState,
    /// Reads in flight into this file's page cache: pages `[first, end)` are locked
    /// and not uptodate until `done_ns` (what a reader of them waits for).
    pub reads: Vec<readahead::PendingRead>,
    /// The run of pages readahead is adding (locked, not yet submitted): `[first,
    /// end)`. Only inside `page_cache_ra_unbounded`.
    pub adding: Option<(u32, u32)>,
}

/// Access advice on a mapping or file (madvise/fadvise): `Random` is VM_RAND_READ or
/// FMODE_RANDOM, `Sequential` VM_SEQ_READ (and a doubled readahead window for
/// read()), `NoReuse` FMODE_NOREUSE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Advice {
    #[default]
    Normal,
    Random,
    Sequential,
    NoReuse,
}

impl Space {
    /// `vma_has_recency`: whether reclaim heeds the accessed bits of this mapping's
    /// page table (a file's mmap here). MADV_RANDOM and MADV_SEQUENTIAL mappings and
    /// FMODE_NOREUSE files have none: their pages age first-in first-out.
    pub fn vma_has_recency(&self) -> bool {
        self.advice == Advice::Normal
    }
}

/// Marks a logged change as a PMD entry's (all 512 entries under it).
pub const PMD_CHANGE: u64 = 1 << 63;

impl Space {
    /// Starts logging changes (once a skipping hit loop reads this space); returns
    /// the log's end.
    pub fn watch_changes(&mut self) -> u64 {
        self.logging = true;
        self.log_end()
    }

    /// Stops logging changes (its one reader will reread the table before it reads
    /// the log again): a reader that has stopped following the space should not
    /// have every entry the kernel writes pushed on a log nobody reads.
    pub fn unwatch_changes(&mut self) {
        self.drop_changes();
        self.logging = false;
    }

    /// Position after the last logged change.
    pub fn log_end(&self) -> u64 {
        self.log_start + self.change_log.len() as u64
    }

    /// The changes logged from position `from` on, or None if some were dropped
    /// (the reader must look at every entry again).
    pub fn changes_since(&self, from: u64) -> Option<&[u64]> {
        let i = from.checked_sub(self.log_start)?;
        self.change_log.get(i as usize..)
    }

    #[inline]
    fn log_change(&mut self, c: u64) {
        let pmd = if c & PMD_CHANGE != 0 {
            c & !PMD_CHANGE
        } else {
            c / lru_gen::PTRS_PER_PTE as u64
        };
        if let Some(g) = self.pmd_gen.get_mut(pmd as usize) {
            *g += 1;
        }
        if self.logging {
            // Readers catch up at their next slice; past this many changes a reader
            // rereads the table (O(pages)) instead, at most once per this many.
            let cap = (self.nr_pages as usize / 16).max(4096);
            if self.change_log.len() >= cap {
                self.drop_changes();
            }
            self.change_log.push(c);
        }
    }

    /// Logs a change to the folio cached at `idx` (its LRU state: active, referenced,
    /// generation, tier), if a reader follows this space.
    #[inline]
    pub fn log_folio_change(&mut self, idx: u32) {
        if self.logging {
            self.log_change(idx as u64);
        }
    }

    /// Forgets the logged changes: every reader rereads the table.
    fn drop_changes(&mut self) {
        // One position beyond the end, so a reader at the end also rereads.
        self.log_start += self.change_log.len() as u64 + 1;
        self.change_log.clear();
    }

    /// Whether the PMD entry over `idx` is young (false without a table).
    #[inline]
    pub fn pmd_young(&self, idx: u32) -> bool {
        self.pmd_young
            .get((idx / lru_gen::PTRS_PER_PTE) as usize)
            .copied()
            .unwrap_or(false)
    }

    /// Pages the space spans (its mapping's or file's size).
    #[inline]
    pub fn nr_pages(&self) -> u32 {
        self.nr_pages
    }

    /// The entry at `idx`: none where the table was never written.
    #[inline]
    pub fn pte(&self, idx: u32) -> Pte {
        debug_assert!(idx < self.nr_pages);
        self.entries
            .get(idx as usize)
            .copied()
            .unwrap_or(page::pte::NONE)
    }

    /// Starts loading the cache line of the entry at `idx` (nothing if the table was
    /// never allocated).
    #[inline]
    pub fn prefetch_entry(&self, idx: u32) {
        if let Some(e) = self.entries.get(idx as usize) {
            crate::hint::prefetch(e);
        }
    }

    /// The entry at `idx` to write, allocating the table on first use.
    #[inline]
    pub fn pte_mut(&mut self, idx: u32) -> &mut Pte {
        self.log_change(idx as u64);
        let i = idx as usize;
        if i < self.entries.len() && self.entries[i] != page::pte::NONE {
            // Written before (an entry other than none got there through here): the table,
            // `hi` and the PMD entry already cover it.
            return &mut self.entries[i];
        }
        self.hi = self.hi.max(idx + 1);
        self.populate_pmd(idx);
        &mut self.table_mut()[idx as usize]
    }

    /// Sets `bits` (young, dirty) on an entry the caller saw present: the access paths'
    /// hit, with none of `pte_mut`'s bookkeeping (a present entry was written before).
    /// The hardware access also makes the PMD entry young.
    #[inline]
    pub fn set_bits(&mut self, idx: u32, bits: Pte) {
        debug_assert!(page::pte::is_present(self.pte(idx)));
        self.entries[idx as usize] |= bits;
        mark_pmd_young(&mut self.pmd_young, idx);
    }

    /// A fault installs `e` (young) at `idx`; the access it retries walks through the
    /// PMD entry, as a new PMD entry is also born accessed on x86 (`_PAGE_TABLE`).
    #[inline]
    pub fn install_accessed(&mut self, idx: u32, e: Pte) {
        *self.pte_mut(idx) = e;
        mark_pmd_young(&mut self.pmd_young, idx);
    }

    /// Whether the page-table page covering `idx` exists (the PMD entry is not none):
    /// some entry in its 512 was ever written.
    pub fn pmd_populated(&self, idx: u32) -> bool {
        let p = idx / lru_gen::PTRS_PER_PTE;
        self.pmd_map
            .get((p / 64) as usize)
            .is_some_and(|w| w >> (p % 64) & 1 != 0)
    }

    /// `pmd_populate`: the PMD entry over `idx` points at a (still empty) page table.
    pub fn populate_pmd(&mut self, idx: u32) {
        let p = idx / lru_gen::PTRS_PER_PTE;
        let w = (p / 64) as usize;
        if w >= self.pmd_map.len() {
            self.pmd_map.resize(w + 1, 0);
        }
        self.pmd_map[w] |= 1 << (p % 64);
    }

    /// `pmdp_test_and_clear_young` on the PMD entry of page-table page `pmd`.
    pub fn pmd_test_and_clear_young(&mut self, pmd: u32) -> bool {
        let young = self
            .pmd_young
            .get_mut(pmd as usize)
            .is_some_and(std::mem::take);
        if young {
            self.log_change(PMD_CHANGE | pmd as u64);
        }
        young
    }

    /// The whole table, allocated if it was not; for the workloads' hit loops, which
    /// only set bits on present entries (so `hi` still bounds what is not none).
    #[inline]
    pub fn table_mut(&mut self) -> &mut [Pte] {
        if self.entries.is_empty() && self.nr_pages > 0 {
            // vec![0; n] is a zeroed allocation: the host commits its pages as they
            // are written.
            self.entries = vec![page::pte::NONE; self.nr_pages as usize];
            if self.huge_table {
                crate::hint::advise_huge_pages(&self.entries);
            }
            let pmds = self.nr_pages.div_ceil(lru_gen::PTRS_PER_PTE);
            self.pmd_young = vec![false; pmds as usize];
            if self.pmd_gen.is_empty() {
                self.pmd_gen = vec![0; pmds as usize];
            }
        }
        &mut self.entries
    }

    /// [`Space::hw_table_mut`] with each page table's change count (None for a
    /// trapping space, whose hit loops see no entries).
    #[inline]
    pub fn hw_table_gens_mut(&mut self) -> Option<(&mut [Pte], &mut [bool], &[u64])> {
        self.table_mut();
        if self.trap.is_some() {
            return None;
        }
        Some((&mut self.entries, &mut self.pmd_young, &self.pmd_gen))
    }

    /// The table and the PMD accessed bits, for hit loops that set both
    /// (through [`mark_pmd_young`]).
    #[inline]
    pub fn hw_table_mut(&mut self) -> (&mut [Pte], &mut [bool]) {
        self.table_mut();
        match &mut self.trap {
            Some((entries, pmd_young)) => (entries, pmd_young),
            None => (&mut self.entries, &mut self.pmd_young),
        }
    }

    /// The workload (mm) whose page tables map this space: an anon space's owner, a
    /// file's mapper (a space has one or the other).
    pub fn mm(&self) -> Option<usize> {
        self.owner.or(self.mapper)
    }

    /// Makes every user access of this space trap (see `trap`).
    pub fn set_trap(&mut self) {
        if self.trap.is_none() {
            let pmds = self.nr_pages.div_ceil(lru_gen::PTRS_PER_PTE) as usize;
            self.trap = Some((
                vec![page::pte::NONE; self.nr_pages as usize],
                vec![false; pmds],
            ));
        }
    }

    /// Whether every user access of this space traps.
    #[inline]
    pub fn traps(&self) -> bool {
        self.trap.is_some()
    }

    /// The page-table pages (PMD ranges of 512 entries) ever written, in order.
    pub fn populated_pmds(&self) -> impl Iterator<Item = u32> + '_ {
        self.pmd_map.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits >> b & 1 == 1)
                .map(move |b| (w * 64 + b) as u32)
        })
    }

    /// The entries that may be other than none, with their offsets' start at 0.
    pub fn written(&self) -> &[Pte] {
        &self.entries[..(self.hi as usize).min(self.entries.len())]
    }

    /// Takes the written entries and leaves the space with no table (every entry none).
    pub fn take_table(&mut self) -> Vec<Pte> {
        self.drop_changes();
        let mut t = std::mem::take(&mut self.entries);
        t.truncate(self.hi as usize);
        self.hi = 0;
        self.pmd_map = Vec::new();
        self.pmd_young = Vec::new();
        // Every table's entries went: none is settled any more.
        self.pmd_gen.iter_mut().for_each(|g| *g += 1);
        t
    }
}

/// The hardware's side of an access to entry `idx`: the PMD entry above it turns young.
/// `pmd_young` covers the whole space once its table exists (every access is to one).
#[inline(always)]
pub fn mark_pmd_young(pmd_young: &mut [bool], idx: u32) {
    pmd_young[(idx / lru_gen::PTRS_PER_PTE) as usize] = true;
}

/// Who the kernel code is running for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Current {
    /// A workload task (index into the simulator's task table).
    Task(usize),
    /// Node n's kswapd (kswapdN).
    Kswapd(usize),
    Flusher,
    /// Kdamond `k` (its index in `Mm::damon.kdamonds`).
    Kdamond(usize),
    /// Node n's kcompactd (kcompactdN).
    Kcompactd(usize),
    /// A timed action writing a cgroup file (no simulated task does the work).
    Admin,
}

/// Requests from kernel code to the simulator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    /// `wake_up_interruptible(&pgdat->kswapd_wait)` of node `nid`.
    WakeKswapd { nid: usize, at: u64 },
    /// `wakeup_flusher_threads`.
    WakeFlusher { at: u64 },
    /// A task asleep in a reclaim throttle is woken (`wake_up(&pgdat->reclaim_wait[..])`).
    WakeTask { task: usize, at: u64 },
    /// The OOM killer chose this workload; its tasks must exit.
    OomKill { workload: usize },
    /// Kdamond `k` was turned on: start its thread.
    WakeKdamond { k: usize, at: u64 },
    /// `wake_up_interruptible(&pgdat->kcompactd_wait)` of node `nid`.
    WakeKcompactd { nid: usize, at: u64 },
    /// A TLB shootdown's IPI interrupts `cpus` at `at`: each one's running task spends
    /// `ns` handling it (`flush_tlb_func`).
    TlbShootdown { cpus: Vec<u32>, at: u64, ns: u64 },
}

/// An OOM kill, reported in results.
#[derive(Debug, Clone)]
pub struct OomEvent {
    pub time_ns: u64,
    pub workload: usize,
    pub rss_pages: u64,
    pub swap_pages: u64,
}

pub struct Mm {
    /// Virtual time of the code running now.
    pub now: u64,
    /// CPU time charged to `current` since the simulator last read it.
    pub cpu_ns: u64,
    /// Of `cpu_ns`, the part spent stalled on memory (PSI memstall: reclaim, refaults).
    pub stall_ns: u64,
    pub current: Current,
    /// The workload `current` belongs to (for the OOM killer's "did it pick me").
    pub current_workload: Option<usize>,
    /// PF_MEMALLOC: inside direct reclaim (allocations skip watermarks, never recurse).
    pub in_reclaim: bool,
    pub cfg: Config,
    pub frames: Vec<Frame>,
    pub zones: Vec<Zone>,
    /// The lruvecs, one per memcg per node ([`Mm::mem_cgroup_lruvec`]): node 0's
    /// first, each node's in memcg order (index 0 is the root's on node 0).
    pub lruvecs: Vec<lru::Lruvec>,
    /// The memcg tree: counters, stats, events.
    pub memcg: memcontrol::MemcgTree,
    /// Each workload's memcg.
    pub workload_memcg: Vec<usize>,
    /// Each workload's process's `oom_score_adj`.
    pub workload_oom_score_adj: Vec<i32>,
    /// `kernel.memcg_protection` and `memory_recursiveprot`.
    pub protection_mode: vmscan::ProtectionMode,
    pub recursiveprot: bool,
    pub spaces: Vec<Space>,
    pub swap: Option<swap::SwapDevice>,
    pub storage: Device,
    pub wb: writeback::Writeback,
    /// Each node's kswapd and kcompactd (`pgdat->kswapd`, `pgdat->kcompactd` and
    /// their state in the pgdat), by node id.
    pub kswapd: Vec<kswapd::Kswapd>,
    pub kcompactd: Vec<kcompactd::Kcompactd>,
    /// Per workload: its threads' kernel stacks (order-2 blocks), freed if it is
    /// killed.
    pub kernel_stacks: Vec<Vec<Pfn>>,
    pub workingset: workingset::Workingset,
    pub zram_pool: ListHead,
    /// Emptied page lists reclaim's batches reuse (`take_pfn_vec`).
    pfn_vecs: Vec<Vec<Pfn>>,
    /// Kernel object caches (`slab` workloads), and their pages: [unreclaimable,
    /// reclaimable] (NR_SLAB_UNRECLAIMABLE, NR_SLAB_RECLAIMABLE).
    pub kmem_caches: Vec<slab::KmemCache>,
    pub slab_pages: [u64; 2],
    /// Per node, its reclaimable slab pages (the node's NR_SLAB_RECLAIMABLE_B, in
    /// pages): what node reclaim weighs against `min_slab_ratio`.
    pub node_slab_reclaimable_pages: Vec<u64>,
    /// The caches of fork's objects, and per workload the objects its process holds.
    pub fork_caches: fork::ForkCaches,
    pub workload_objs: Vec<Vec<(u32, slab::Obj)>>,
    /// The dentries and inodes of files, the superblock's LRUs.
    pub vfs: crate::fs::Vfs,
    /// Pages held by kernel callers outside any cache (`highalloc` blocks).
    pub kernel_pages: u64,
    /// The brd pages holding the files of a ramdisk `[machine.storage]`: RAM charged
    /// to no cgroup, never reclaimed.
    pub brd_pool: ListHead,
    pub vmstat: VmStat,
    pub out: Vec<Out>,
    pub oom_events: Vec<OomEvent>,
    /// Workloads whose process is gone: exited, or killed by the OOM killer.
    pub workload_dead: Vec<bool>,
    /// Whose process has been forked (`copy_process` done): the OOM killer sees no
    /// other (a child is not on the task list until its fork succeeds).
    pub workload_forked: Vec<bool>,
    /// CPU time spent in direct reclaim, all tasks.
    pub direct_reclaim_ns: u64,
    /// `kernel.reclaim_throttle`.
    pub throttle_mode: throttle::ReclaimThrottle,
    /// Reclaim throttling's wait queues and records.
    pub reclaim_wait: throttle::ReclaimWait,
    /// Set when `current` went to sleep in a reclaim throttle (until this time): an
    /// operation that then completes anyway finishes only after the sleep.
    pub throttled_until: Option<u64>,
    /// Set when kernel code running for `current` must sleep until this time (a full
    /// device queue, a reclaim throttle). The code returns at once; kswapd resumes
    /// where it stopped, a faulting task retries its fault after the sleep.
    pub blocked_until: Option<u64>,
    /// Writes queued under a block plug, submitted together by `flush_plug` (one
    /// merged request per device): (page, to the swap device?).
    pub plug: Vec<(Pfn, bool)>,
    /// Per task: the allocator's no-progress loops carried across a sleep and retry,
    /// so a task that keeps sleeping in reclaim still reaches the OOM decision.
    pub alloc_no_progress: Vec<u32>,
    /// Per task: pages charged over a memory.high not yet settled
    /// (`current->memcg_nr_pages_over_high`).
    pub over_high: Vec<u64>,
    /// Tracepoints (`--trace`), and what their lines show: the task running (its name,
    /// pid = index + 1), its CPU, and each workload's first task (the OOM victim's pid).
    pub trace: Option<Tracer>,
    pub task_names: Vec<String>,
    pub current_task: usize,
    pub current_cpu: usize,
    pub workload_task: Vec<usize>,
    /// `current->in_lru_fault`: the running code is a page fault (MGLRU adds the
    /// pages it brings in to the youngest generation).
    pub in_lru_fault: bool,
    /// A reader that skips the reads which would change nothing follows some file's
    /// folios (`workload::skip_fio`): paths that change a file folio's LRU state
    /// outside a read log its index ([`Mm::folio_changed`]). Never cleared.
    pub watching_folios: bool,
    /// Some space traps every user access ([`Space::set_trap`]): the fault path's
    /// first question, asked of this hot flag before any space.
    pub any_trap: bool,
    /// `apply_kernel_settings` ran once (later runs may switch the LRU).
    pub cfg_applied: bool,
    /// Each node's memcg LRU (MGLRU global reclaim, memcg-lru).
    pub memcg_lru: Vec<lru_gen::MemcgLru>,
    /// Picks memcg LRU bins (`get_random_u32_below`), seeded from the run's seed.
    pub lru_gen_rng: rand_pcg::Pcg64Mcg,
    /// The memory tiers and each node's demotion targets.
    pub tiers: memory_tiers::MemoryTiers,
    /// Per lruvec, the demotion and promotion counters; empty on one node.
    pub tier_stats: Vec<[u64; memory_tiers::NR_TIER_STATS]>,
    /// Picks among equally near demotion targets (`next_demotion_node`'s
    /// `node_random`), seeded from the run's seed.
    pub demotion_rng: rand_pcg::Pcg64Mcg,
    /// The nodes whose pages are mapped with [`page::pte::SLOW`] (CPU-less nodes
    /// slower than `costs.access` from some CPU): their accesses leave the hit loops
    /// and pay [`Mm::access_extra_ns`].
    pub slow_nodes: mempolicy::Nodemask,
    /// Per (CPU node, page node), CPU-node-major: what an access costs beyond
    /// `costs.access` (see [`memory_tiers::access_extra_ns`]).
    pub access_extra: Vec<u64>,
    /// Some present PTE may carry `SLOW` or `NUMA`: the access path's question,
    /// asked of this flag before any entry.
    pub any_marked_pte: bool,
    /// NUMA balancing's promotion state (memory-tiering mode).
    pub numa_balancing: numa_balancing::NumaBalancing,
    /// Per workload (its mm): the spaces its page tables map, which MGLRU's aging
    /// walks, and a bit per node: it ran since that node's last walk
    /// (`mm->lru_gen.bitmap`).
    pub mm_spaces: Vec<Vec<u32>>,
    pub mm_ran: Vec<u64>,
    /// DAMON: the kdamonds and the idle page bits.
    pub damon: damon::Damon,
    /// Seeds each kdamond's sampling and splitting (`damon_rand`).
    pub damon_seed: u64,
    /// When the root's statistics were last flushed (`flush_last_time`).
    pub memcg_flush_last_ns: u64,
    /// The per-CPU page lists, `nr_cpus` × the zones, CPU-major.
    pub pcp: Vec<pcp::PerCpuPages>,
    /// Per CPU and zone (CPU-major), the NR_FREE_PAGES diff not yet folded into the
    /// zone's counter (`vm_stat_diff`), and each zone's exact count when the running
    /// CPU's changes were last put into its diff (see `vmstat.rs`).
    pub free_diff: Vec<i32>,
    pub free_attributed: Vec<u64>,
    /// The sum of each zone's diffs over the CPUs.
    pub free_diff_sum: Vec<i64>,
    /// Each zone's stat threshold: [normal, pressure] (kswapd asleep, awake), and the
    /// one in force (`set_pgdat_percpu_threshold`).
    pub stat_thresholds: Vec<[i64; 2]>,
    pub stat_threshold_now: Vec<i64>,
    /// Each node's first PFN, and one past the last node's last: node n holds
    /// `[node_start_pfn[n], node_start_pfn[n + 1])`.
    pub node_start_pfn: Vec<Pfn>,
    /// On a machine of several nodes, the node of each 4 MiB block of PFNs (nodes are
    /// laid out in 4 MiB steps): `page_to_nid` in one load, as the kernel reads it
    /// from the page's flags. Empty on one node.
    node_of_block: Vec<u8>,
    /// Each CPU's node (`cpu_to_node`).
    pub cpu_to_node: Vec<usize>,
    /// Each node's fallback list (`pgdat->node_zonelists[ZONELIST_FALLBACK]`): zone
    /// ids, the nodes by distance and each node's zones highest first.
    pub zonelists: Vec<page_alloc::Zonelist>,
    /// Per zone, the NUMA allocation counters (`zone_statistics`).
    pub numa_stats: Vec<vmstat::NumaStats>,
    /// Per node, the page states memory.stat also counts per memcg
    /// (`node_page_state`: NR_FILE_MAPPED, NR_FILE_DIRTY, ...), indexed by
    /// [`memcontrol::PageState`].
    pub node_page_state: Vec<[u64; memcontrol::NR_PAGE_STATE]>,
    /// Per node, node reclaim's thresholds (`vm.zone_reclaim_mode`), and its events.
    pub node_reclaim: Vec<node_reclaim::PgdatReclaim>,
    pub node_reclaim_events: node_reclaim::NodeReclaimEvents,
    /// The allocation under way (`struct alloc_context`): the node whose zonelist it
    /// walks and the nodes it may use, from the task's memory policy; None outside
    /// `alloc_pages` (the running CPU's node, every node).
    pub alloc_ctx: Option<(usize, mempolicy::Nodemask)>,
    /// Per task, its interleave state (`il_prev`, `il_weight`).
    pub il_state: Vec<mempolicy::IlState>,
    /// Per workload, the CPUs its mm has run on (`mm_cpumask`, a bit per CPU).
    pub mm_cpumask: Vec<Vec<u64>>,
    /// The deferred TLB flush of the unmapping under way (`current->tlb_ubc`).
    pub tlb_ubc: tlbflush::TlbUnmapBatch,
    /// Per CPU, until when it runs a user task (not in lazy TLB mode, so a shootdown
    /// IPIs it: `cpu_tlbstate_shared.is_lazy` clear); the driver sets it per slice.
    pub cpu_user_until: Vec<u64>,
}

impl Mm {
    pub fn new(cfg: Config) -> Mm {
        let total_pages = cfg.memory_pages;
        let nodes = cfg.node_layout();
        // Node n's memory follows node n-1's; ZONE_DMA32 is the first 4 GiB of
        // physical memory, so only node 0 has one (cut at `dma32_pages`).
        let mut node_start_pfn = vec![0 as Pfn];
        let mut zones = Vec::with_capacity(nodes.len() * MAX_NR_ZONES);
        for (nid, n) in nodes.iter().enumerate() {
            let start = *node_start_pfn.last().unwrap();
            let end = start + n.memory_pages as Pfn;
            let dma32_end = if nid == 0 {
                cfg.dma32_pages.min(n.memory_pages) as Pfn
            } else {
                start
            };
            zones.push(Zone::new(ZONE_DMA32, start, dma32_end).on_node(nid));
            zones.push(Zone::new(ZONE_NORMAL, dma32_end, end).on_node(nid));
            node_start_pfn.push(end);
        }
        debug_assert_eq!(*node_start_pfn.last().unwrap() as u64, total_pages);
        assert!(
            nodes.len() == 1 || nodes.iter().all(|n| n.memory_pages % NODE_BLOCK_PAGES == 0),
            "a node's memory is a multiple of 4 MiB"
        );
        let access_extra = memory_tiers::access_extra_ns(&nodes, cfg.costs.access_ns);
        let slow_nodes = memory_tiers::slow_nodes(&access_extra, nodes.len());
        let mut cpu_to_node = vec![0; cfg.nr_cpus.max(1) as usize];
        for (nid, n) in nodes.iter().enumerate() {
            for &c in &n.cpus {
                cpu_to_node[c as usize] = nid;
            }
        }
        let zonelists = page_alloc::build_all_zonelists(&nodes, &zones);
        let nr_zones = zones.len();
        let numa_stats = vec![vmstat::NumaStats::default(); nr_zones];
        // Zeroed, so the host commits the table only as blocks are initialised.
        let mut frames: Vec<Frame> = bytemuck::zeroed_vec(total_pages as usize);
        crate::hint::advise_huge_pages(&frames);
        for z in zones.iter_mut() {
            page_alloc::init_free_area(z, &mut frames);
        }
        let swap = cfg.swap.as_ref().map(swap::SwapDevice::new);
        let nr_workloads = cfg.workloads.len();
        let mut mm = Mm {
            now: 0,
            cpu_ns: 0,
            stall_ns: 0,
            current: Current::Kswapd(0),
            current_workload: None,
            in_reclaim: false,
            frames,
            zones,
            lruvecs: Vec::new(),
            memcg: memcontrol::MemcgTree::new(&cfg),
            protection_mode: vmscan::ProtectionMode::Proportional,
            recursiveprot: false,
            spaces: Vec::new(),
            swap,
            storage: Device::from_config(&cfg.storage),
            brd_pool: ListHead::default(),
            wb: writeback::Writeback::new(nr_zones),
            kswapd: (0..nodes.len()).map(|_| Default::default()).collect(),
            kcompactd: (0..nodes.len()).map(|_| Default::default()).collect(),
            kernel_stacks: Vec::new(),
            workingset: workingset::Workingset::new(total_pages),
            zram_pool: ListHead::default(),
            pfn_vecs: Vec::new(),
            kmem_caches: Vec::new(),
            slab_pages: [0; 2],
            node_slab_reclaimable_pages: vec![0; nodes.len()],
            fork_caches: fork::ForkCaches::default(),
            workload_objs: Vec::new(),
            vfs: crate::fs::Vfs::default(),
            kernel_pages: 0,
            vmstat: VmStat::default(),
            out: Vec::new(),
            oom_events: Vec::new(),
            workload_dead: vec![false; nr_workloads],
            workload_forked: vec![false; nr_workloads],
            workload_oom_score_adj: cfg.workloads.iter().map(|w| w.oom_score_adj).collect(),
            direct_reclaim_ns: 0,
            throttle_mode: Default::default(),
            reclaim_wait: throttle::ReclaimWait::new(nodes.len()),
            throttled_until: None,
            blocked_until: None,
            plug: Vec::new(),
            alloc_no_progress: Vec::new(),
            over_high: Vec::new(),
            trace: None,
            task_names: Vec::new(),
            current_task: 0,
            current_cpu: 0,
            workload_task: Vec::new(),
            in_lru_fault: false,
            watching_folios: false,
            any_trap: false,
            cfg_applied: false,
            memcg_lru: vec![lru_gen::MemcgLru::default(); nodes.len()],
            lru_gen_rng: crate::rng::task_rng(cfg.seed, "memcg_lru"),
            tiers: memory_tiers::MemoryTiers::new(
                &nodes,
                &nodes.iter().map(|n| n.perf).collect::<Vec<_>>(),
            ),
            tier_stats: Vec::new(),
            demotion_rng: crate::rng::task_rng(cfg.seed, "demotion"),
            slow_nodes,
            any_marked_pte: slow_nodes != 0,
            access_extra,
            numa_balancing: Default::default(),
            damon: damon::Damon::default(),
            damon_seed: cfg.seed ^ 0xda30_0000,
            memcg_flush_last_ns: 0,
            pcp: Vec::new(),
            free_diff: Vec::new(),
            free_attributed: Vec::new(),
            free_diff_sum: Vec::new(),
            stat_thresholds: Vec::new(),
            stat_threshold_now: Vec::new(),
            node_of_block: if nodes.len() > 1 {
                (0..total_pages.div_ceil(NODE_BLOCK_PAGES))
                    .map(|b| {
                        let pfn = (b * NODE_BLOCK_PAGES) as Pfn;
                        node_start_pfn[1..].partition_point(|&end| end <= pfn) as u8
                    })
                    .collect()
            } else {
                Vec::new()
            },
            node_start_pfn,
            cpu_to_node,
            zonelists,
            numa_stats,
            node_page_state: vec![[0; memcontrol::NR_PAGE_STATE]; nodes.len()],
            node_reclaim: vec![Default::default(); nodes.len()],
            node_reclaim_events: Default::default(),
            alloc_ctx: None,
            il_state: Vec::new(),
            mm_cpumask: vec![Vec::new(); nr_workloads],
            tlb_ubc: Default::default(),
            cpu_user_until: vec![0; cfg.nr_cpus.max(1) as usize],
            mm_spaces: vec![Vec::new(); nr_workloads],
            mm_ran: vec![!0; nr_workloads],
            workload_memcg: Vec::new(),
            cfg: cfg.clone(),
        };
        let nr_memcgs = mm.memcg.cgs.len();
        mm.lruvecs = (0..nr_memcgs * mm.nr_nodes())
            .map(|lv| {
                let (nid, memcg) = (lv / nr_memcgs, lv % nr_memcgs);
                lru::Lruvec {
                    parent: mm.memcg.cgs[memcg].parent.map(|p| nid * nr_memcgs + p),
                    zone_base: nid * MAX_NR_ZONES,
                    ..Default::default()
                }
            })
            .collect();
        if mm.nr_nodes() > 1 {
            mm.tier_stats = vec![[0; memory_tiers::NR_TIER_STATS]; mm.lruvecs.len()];
        }
        mm.numa_balancing_init();
        mm.workload_memcg = cfg
            .workloads
            .iter()
            .map(|w| {
                w.memcg
                    .as_deref()
                    .and_then(|p| mm.memcg.id_of(p))
                    .unwrap_or(0)
            })
            .collect();
        // mem_cgroup_css_online: every memcg joins the memcg LRU, root first.
        for memcg in mm.memcg.subtree(0) {
            mm.lru_gen_online_memcg(memcg);
        }
        mm.apply_kernel_settings(cfg);
        mm.kmem_caches_init();
        mm
    }

    /// Re-reads the sysctls (at start, and after a timed action wrote one), recomputing
    /// what the kernel recomputes on a write: watermarks and lowmem reserves.
    pub fn apply_kernel_settings(&mut self, cfg: Config) {
        let old_dirty = (self.cfg.dirty_ratio, self.cfg.dirty_bytes);
        let was_lru_gen = self.cfg.lru_gen.enabled;
        let old_proactiveness = self.cfg.compaction_proactiveness;
        let was_rstat = self.cfg.memcg_stats_rstat;
        let old_pcp = if self.cfg_applied {
            self.cfg.pcp
        } else {
            cfg.pcp
        };
        self.cfg = cfg;
        // Switched to flushed statistics mid-run: they start from a flush.
        if self.cfg_applied && !was_rstat && self.cfg.memcg_stats_rstat {
            self.do_flush_stats(0);
        }
        // compaction_proactiveness_sysctl_handler: a write of a non-zero value runs
        // kcompactd's proactive compaction now.
        let p = self.cfg.compaction_proactiveness;
        if self.cfg_applied && p != old_proactiveness && p != 0 && !self.cfg.kswapd_compacts {
            for nid in 0..self.nr_nodes() {
                self.kcompactd[nid].proactive_trigger = true;
                self.out.push(Out::WakeKcompactd {
                    nid,
                    at: self.clock(),
                });
            }
        }
        self.damon_apply_configs();
        if self.cfg_applied && was_lru_gen != self.cfg.lru_gen.enabled {
            self.lru_gen_change_state(self.cfg.lru_gen.enabled);
        }
        self.cfg_applied = true;
        self.protection_mode = self.cfg.memcg_protection;
        self.recursiveprot = self.cfg.memory_recursiveprot;
        self.throttle_mode = self.cfg.reclaim_throttle;
        let lowmem_pages = self.managed_pages();
        let min_free_kbytes = self
            .cfg
            .min_free_kbytes
            .unwrap_or_else(|| zone::calculate_min_free_kbytes(lowmem_pages));
        zone::setup_per_zone_wmarks(
            &mut self.zones,
            min_free_kbytes,
            self.cfg.watermark_scale_factor,
        );
        zone::setup_per_zone_lowmem_reserve(&mut self.zones, &self.cfg.lowmem_reserve_ratio);
        self.setup_node_reclaim();
        self.refresh_zone_stat_thresholds();
        self.setup_pcp(old_pcp);
        // At boot, and when the dirty threshold's sysctl is written with a new value.
        let first = self.wb.throttle.ratelimit_pages == 0;
        if first || old_dirty != (self.cfg.dirty_ratio, self.cfg.dirty_bytes) {
            self.writeback_set_ratelimit(self.cfg.nr_cpus);
        }
    }

    /// Sizes the per-task state (called once the simulator knows its tasks).
    pub fn set_nr_tasks(&mut self, n: usize) {
        self.alloc_no_progress = vec![0; n];
        self.over_high = vec![0; n];
        self.il_state = vec![mempolicy::IlState::default(); n];
        self.reclaim_wait.set_nr_tasks(n);
        self.wb.throttle.task = vec![writeback::TaskDirty::default(); n];
    }

    /// Runs `f` as a timed action's write (a cgroup file, debugfs): no simulated task is
    /// current, and a sleep the kernel code asks for does not outlive it.
    pub fn as_admin<R>(&mut self, f: impl FnOnce(&mut Mm) -> R) -> R {
        let saved = (self.current, self.current_workload);
        self.current = Current::Admin;
        self.current_workload = None;
        let r = f(self);
        self.blocked_until = None;
        (self.current, self.current_workload) = saved;
        r
    }

    /// A kernel thread's slice begins at `now`: it is current, on no workload's behalf,
    /// with no CPU time, stall or sleep carried over from whoever ran before.
    pub fn enter_kthread(&mut self, who: Current, now: u64) {
        self.current = who;
        self.current_workload = None;
        self.now = now;
        self.cpu_ns = 0;
        self.stall_ns = 0;
        self.blocked_until = None;
    }

    /// Asks `current` to sleep until `t` (the earliest request wins).
    pub fn block_until(&mut self, t: u64) {
        self.blocked_until = Some(self.blocked_until.map_or(t, |b| b.min(t)));
    }

    /// The current context's time: where it entered the kernel plus the CPU time it
    /// has used since.
    #[inline]
    pub fn clock(&self) -> u64 {
        self.now + self.cpu_ns
    }

    /// Whether a tracepoint is on (to skip building costly fields).
    #[inline]
    pub fn tracing(&self, tp: Tp) -> bool {
        self.trace.as_ref().is_some_and(|t| t.on(tp))
    }

    /// Emits a tracepoint line for the current task if the event is on.
    pub fn trace(&mut self, tp: Tp, fields: std::fmt::Arguments) {
        let Mm {
            trace: Some(t),
            task_names,
            current_task,
            current_cpu,
            now,
            cpu_ns,
            ..
        } = self
        else {
            return;
        };
        if t.on(tp) {
            let comm = task_names.get(*current_task).map_or("?", String::as_str);
            t.emit(
                comm,
                *current_task + 1,
                *current_cpu,
                *now + *cpu_ns,
                tp,
                fields,
            );
        }
    }

    #[inline]
    pub fn charge(&mut self, ns: u64) {
        self.cpu_ns += ns;
    }

    /// A file folio's LRU or dirty state changed outside a read or write of it
    /// (isolated for reclaim, deactivated, aged, its referenced bit taken, cleaned for
    /// writeback): a job skipping the reads or writes that would change nothing must
    /// look at it again. No kernel counterpart; a flag test when no job follows any
    /// file.
    #[inline]
    pub fn folio_changed(&mut self, pfn: Pfn) {
        if !self.watching_folios {
            return;
        }
        let f = &self.frames[pfn as usize];
        if f.test(page::pg::SWAPBACKED) {
            return;
        }
        let (mapping, index) = (f.mapping, f.index);
        if let Some(s) = self.spaces.get_mut(mapping as usize) {
            if s.kind == SpaceKind::File {
                s.log_folio_change(index);
            }
        }
    }

    #[inline]
    pub fn count(&mut self, e: Ev, n: u64) {
        self.vmstat.count(e, n);
    }

    pub fn is_kswapd(&self) -> bool {
        matches!(self.current, Current::Kswapd(_))
    }

    pub fn add_space(
        &mut self,
        kind: SpaceKind,
        name: String,
        nr_pages: u64,
        owner: Option<usize>,
    ) -> u32 {
        debug_assert!(nr_pages <= u32::MAX as u64, "page offsets are u32");
        let si = self.spaces.len() as u32;
        if let (SpaceKind::Anon, Some(w)) = (kind, owner) {
            if let Some(m) = self.mm_spaces.get_mut(w) {
                m.push(si);
            }
        }
        self.spaces.push(Space {
            kind,
            name,
            entries: Vec::new(),
            nr_pages: nr_pages as u32,
            hi: 0,
            pmd_map: Vec::new(),
            pmd_young: Vec::new(),
            pmd_gen: Vec::new(),
            change_log: Vec::new(),
            log_start: 0,
            logging: false,
            advice: Advice::Normal,
            ra: readahead::FileRaState::new(self.cfg.ra_pages),
            reads: Vec::new(),
            adding: None,
            trap: None,
            owner,
            mapper: None,
            pt_pages: Vec::new(),
            file_pt_map: Vec::new(),
            nr_present: 0,
            nr_swap: 0,
            dead: false,
            vm_locked: false,
            huge_table: nr_pages <= self.frames.len() as u64,
        });
        if self.cfg.lru_policy.is_some() {
            // A research policy sees every access: each one traps.
            self.spaces[si as usize].set_trap();
            self.any_trap = true;
        }
        (self.spaces.len() - 1) as u32
    }

    /// NR_PAGETABLE: the page-table pages of the workloads that account them.
    pub fn nr_page_table_pages(&self) -> u64 {
        self.spaces.iter().map(|s| s.pt_pages.len() as u64).sum()
    }

    /// NR_KERNEL_STACK_KB / 4: the kernel stacks' pages.
    pub fn nr_kernel_stack_pages(&self) -> u64 {
        self.kernel_stacks
            .iter()
            .map(|v| v.len() as u64 * (1 << THREAD_SIZE_ORDER))
            .sum()
    }

    /// Nodes of the machine.
    #[inline]
    pub fn nr_nodes(&self) -> usize {
        self.node_start_pfn.len() - 1
    }

    /// `page_to_nid`: the node whose memory holds `pfn`.
    #[inline]
    pub fn pfn_to_nid(&self, pfn: Pfn) -> usize {
        if self.nr_nodes() == 1 {
            return 0;
        }
        self.node_of_block[(pfn as u64 / NODE_BLOCK_PAGES) as usize] as usize
    }

    /// `page_zone`: the id of the zone holding `pfn` (its node's zones are ids
    /// `nid * MAX_NR_ZONES ..`; `Frame::zone` is the zone's type, `page_zonenum`).
    #[inline]
    pub fn page_zone_id(&self, pfn: Pfn) -> usize {
        self.pfn_to_nid(pfn) * MAX_NR_ZONES + self.frames[pfn as usize].zone as usize
    }

    /// `mem_cgroup_lruvec(memcg, NODE_DATA(nid))`: the index in [`Mm::lruvecs`] of
    /// `memcg`'s lruvec on node `nid`. Node-major, so node 0's lruvec of a memcg has
    /// the memcg's id and a machine of one node indexes them as before.
    #[inline]
    pub fn mem_cgroup_lruvec(&self, memcg: usize, nid: usize) -> usize {
        nid * self.memcg.cgs.len() + memcg
    }

    /// `folio_lruvec`: the lruvec of `pfn`'s memcg on `pfn`'s node.
    #[inline]
    pub fn folio_lruvec(&self, pfn: Pfn) -> usize {
        let memcg = self.frames[pfn as usize].memcg as usize;
        if self.nr_nodes() == 1 {
            return memcg;
        }
        self.mem_cgroup_lruvec(memcg, self.pfn_to_nid(pfn))
    }

    /// `lruvec_memcg`: the memcg an lruvec index belongs to.
    #[inline]
    pub fn lruvec_memcg(&self, lv: usize) -> usize {
        if self.nr_nodes() == 1 {
            return lv;
        }
        lv % self.memcg.cgs.len()
    }

    /// `lruvec_pgdat`: the node an lruvec index belongs to.
    #[inline]
    pub fn lruvec_pgdat(&self, lv: usize) -> usize {
        if self.nr_nodes() == 1 {
            return 0;
        }
        lv / self.memcg.cgs.len()
    }

    /// The lruvec of `lv`'s memcg's parent on the same node (None at the root).
    #[inline]
    pub fn parent_lruvec(&self, lv: usize) -> Option<usize> {
        self.lruvecs[lv].parent
    }

    /// `memcg`'s lruvecs, one per node.
    pub fn memcg_lruvecs(&self, memcg: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.nr_nodes()).map(move |nid| self.mem_cgroup_lruvec(memcg, nid))
    }

    /// `mk_pte`: the present entry of `pfn`, marked `SLOW` on a slow node.
    #[inline]
    pub fn mk_pte(&self, pfn: Pfn) -> page::Pte {
        let e = page::pte::present(pfn);
        if self.slow_nodes == 0 {
            return e;
        }
        let nid = self.pfn_to_nid(pfn);
        if self.slow_nodes >> nid & 1 == 0 {
            return e;
        }
        e | page::pte::SLOW | (nid as u64) << page::pte::NID_SHIFT
    }

    /// What the access just made to `pfn` costs beyond `costs.access`, from the CPU
    /// the current code runs on.
    #[inline]
    pub fn access_extra_ns(&self, pfn: Pfn) -> u64 {
        if self.access_extra.is_empty() {
            return 0;
        }
        self.access_extra[self.numa_node_id() * self.nr_nodes() + self.pfn_to_nid(pfn)]
    }

    /// `numa_node_id()`: the node of the CPU the current code runs on.
    #[inline]
    pub fn numa_node_id(&self) -> usize {
        self.cpu_to_node.get(self.current_cpu).copied().unwrap_or(0)
    }

    pub fn managed_pages(&self) -> u64 {
        self.zones.iter().map(|z| z.managed_pages).sum()
    }

    /// Pages node `nid`'s zones manage.
    pub fn node_managed_pages(&self, nid: usize) -> u64 {
        self.node_zones(nid)
            .map(|z| self.zones[z].managed_pages)
            .sum()
    }

    /// Node `nid`'s zone ids, lowest type first.
    #[inline]
    pub fn node_zones(&self, nid: usize) -> std::ops::Range<usize> {
        nid * MAX_NR_ZONES..(nid + 1) * MAX_NR_ZONES
    }

    pub fn nr_free_pages(&self) -> u64 {
        self.zones.iter().map(|z| z.nr_free_pages).sum()
    }

    /// /proc/vmstat's `nr_mlock`: NR_MLOCK summed over the zones.
    pub fn nr_mlock(&self) -> u64 {
        self.zones.iter().map(|z| z.nr_mlock).sum()
    }

    /// LRU list `l`'s pages on every node (`global_node_page_state(NR_LRU_BASE + lru)`).
    pub fn global_lru_pages(&self, l: usize) -> u64 {
        self.zones.iter().map(|z| z.lru_pages[l]).sum()
    }

    /// LRU list `l`'s pages on node `nid` (`node_page_state(pgdat, NR_LRU_BASE + lru)`).
    pub fn node_lru_pages(&self, nid: usize, l: usize) -> u64 {
        self.node_zones(nid)
            .map(|z| self.zones[z].lru_pages[l])
            .sum()
    }

    /// Node `nid`'s free pages (`sum_zone_node_page_state(nid, NR_FREE_PAGES)`).
    pub fn node_free_pages(&self, nid: usize) -> u64 {
        self.node_zones(nid)
            .map(|z| self.zones[z].nr_free_pages)
            .sum()
    }

    /// Swap is usable for anon reclaim (`can_reclaim_anon_pages`: free swap exists).
    pub fn can_reclaim_anon(&self) -> bool {
        self.swap.as_ref().is_some_and(|s| s.nr_free_slots() > 0)
    }

    /// Pages the zram pool holds (kernel memory outside the LRU).
    pub fn zram_pages(&self) -> u64 {
        self.zram_pool.len
    }

    /// A ramdisk storage device holds every page of every file on it (written when
    /// the files were laid out, before the run): take them from the buddy allocator.
    /// Returns the pages it could not get (0 unless the files exceed memory).
    pub fn brd_populate_files(&mut self) -> u64 {
        if !self.storage.is_ramdisk() {
            return 0;
        }
        let need: u64 = self
            .spaces
            .iter()
            .filter(|s| s.kind == SpaceKind::File)
            .map(|s| s.nr_pages() as u64)
            .sum();
        for i in 0..need {
            let flags = zone::AllocFlags {
                no_watermarks: true,
                ..Default::default()
            };
            let Some(p) = self.get_page_from_freelist(
                page_alloc::GFP_HIGHUSER_MOVABLE,
                0,
                zone::WMARK_MIN,
                flags,
            ) else {
                return need - i;
            };
            let f = &mut self.frames[p as usize];
            f.flags = 0;
            f.list = page::on::ZRAM;
            self.brd_pool.add_head(&mut self.frames, p);
        }
        0
    }
}
