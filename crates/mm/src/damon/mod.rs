//! DAMON (Data Access MONitor) and DAMOS (DAMON-based Operation Schemes), with the
//! DAMON_RECLAIM module built on them (mm/damon/, kernel-reference §6).
//!
//! A kdamond is a kernel thread of its own (task `kdamond.N`), running one monitoring
//! context: it samples one page per region every `sample_us` through the accessed bits
//! the workloads set, counts per region how many samples found it accessed
//! (`nr_accesses`), and every `aggr_us` merges similar neighbours, ages the regions,
//! applies its schemes and splits regions at random to look for finer differences.
//! The cost is per region, never per page: a 64 GiB machine is watched through at most
//! `max_nr_regions` sampled pages. Schemes act on the regions whose access pattern
//! matches (page out, deactivate, prioritise), under a quota charged in bytes and in
//! the kdamond's own CPU time, coldest regions first, while free memory is between
//! the watermarks.
//!
//! Layout as the kernel's: [`core`] is the kdamond loop and the regions (core.c),
//! [`damos`] the schemes' quotas, watermarks, filters and application (core.c's DAMOS
//! half), [`ops_common`] the scores and the PG_idle/PG_young bookkeeping
//! (ops-common.c, page_idle.c), [`paddr`] and [`vaddr`] the two operation sets, and
//! [`reclaim`] DAMON_RECLAIM (reclaim.c).

pub mod core;
pub mod damos;
pub mod ops_common;
pub mod paddr;
pub mod reclaim;
pub mod vaddr;

pub use self::core::{Ctx, Region, Target};
pub use damos::{Scheme, SchemeStat};

/// `DAMON_MIN_REGION`: regions are page-aligned.
pub const DAMON_MIN_REGION: u64 = 4096;

/// The operation set of a context (`operations`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ops {
    /// A workload's virtual address space (its anonymous mappings).
    Vaddr,
    /// Physical memory.
    Paddr,
}

/// `struct damon_attrs`, in the sysfs units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attrs {
    pub sample_us: u64,
    pub aggr_us: u64,
    pub ops_update_us: u64,
    pub min_nr_regions: u64,
    pub max_nr_regions: u64,
}

impl Attrs {
    /// `damon_max_nr_accesses`: samples per aggregation window.
    pub fn max_nr_accesses(&self) -> u32 {
        (self.aggr_us / self.sample_us.max(1)).max(1) as u32
    }
}

/// DAMOS actions this model has (kernel-reference §6.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Pageout,
    Cold,
    LruPrio,
    LruDeprio,
    /// v6.11's DAMOS_MIGRATE_HOT and DAMOS_MIGRATE_COLD (paddr): move the region's
    /// pages to the scheme's `target_nid`, hottest or coldest regions first.
    MigrateHot,
    MigrateCold,
    Stat,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Pageout => "pageout",
            Action::Cold => "cold",
            Action::LruPrio => "lru_prio",
            Action::LruDeprio => "lru_deprio",
            Action::MigrateHot => "migrate_hot",
            Action::MigrateCold => "migrate_cold",
            Action::Stat => "stat",
        }
    }
}

/// `struct damos_access_pattern`: inclusive ranges of region size (bytes),
/// nr_accesses (samples per window) and age (aggregation intervals).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessPattern {
    pub min_sz: u64,
    pub max_sz: u64,
    pub min_nr_accesses: u32,
    pub max_nr_accesses: u32,
    pub min_age: u32,
    pub max_age: u32,
}

/// A quota goal's metric (`damos_quota_goal_metric`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoalMetric {
    /// The user writes `current_value`.
    UserInput,
    /// System-wide "some" memory PSI, µs accumulated since the last quota reset.
    SomeMemPsiUs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaGoal {
    pub metric: GoalMetric,
    pub target_value: u64,
    pub current_value: u64,
}

/// `struct damos_quota`'s user part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    pub ms: u64,
    pub sz: u64,
    pub reset_interval_ms: u64,
    pub weight_sz: u64,
    pub weight_nr_accesses: u64,
    pub weight_age: u64,
    pub goals: Vec<QuotaGoal>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WmarkMetric {
    None,
    /// Free memory per thousand of total RAM.
    FreeMemRate,
}

/// `struct damos_watermarks`'s user part (per thousand, µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watermarks {
    pub metric: WmarkMetric,
    pub interval_us: u64,
    pub high: u64,
    pub mid: u64,
    pub low: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterKind {
    /// Anonymous pages (ops-handled).
    Anon,
    /// Pages charged to this memcg (ops-handled).
    Memcg(usize),
    /// An address range `[start, end)` in bytes (core-handled).
    Addr(u64, u64),
}

/// `struct damos_filter` (v6.3–v6.13 semantics: memory for which "matches the filter"
/// equals `matching` is filtered out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filter {
    pub kind: FilterKind,
    pub matching: bool,
}

/// One scheme as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemeConfig {
    pub action: Action,
    /// 0: every aggregation interval.
    pub apply_interval_us: u64,
    pub pattern: AccessPattern,
    pub quota: Quota,
    pub wmarks: Watermarks,
    pub filters: Vec<Filter>,
    /// `target_nid`: where the migrate actions move pages (None: NUMA_NO_NODE, so
    /// they move nothing).
    pub target_nid: Option<usize>,
}

/// A monitoring target: a workload (vaddr) or physical ranges (paddr), with the
/// initial regions in bytes (empty: the whole of it, or of `node`'s memory).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TargetConfig {
    pub workload: Option<usize>,
    pub regions: Vec<(u64, u64)>,
    /// paddr: monitor node `node`'s physical memory (damo's `--numa_node`).
    pub node: Option<usize>,
}

/// A kdamond and its one context, as configured (sysfs allows one context per
/// kdamond).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KdamondConfig {
    /// `state` on.
    pub on: bool,
    pub ops: Ops,
    pub attrs: Attrs,
    pub targets: Vec<TargetConfig>,
    pub schemes: Vec<SchemeConfig>,
    /// Started by DAMON_RECLAIM rather than through sysfs.
    pub reclaim_module: bool,
}

/// What a kdamond does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KdamondNext {
    /// Sleep until this time (a sampling interval, or a watermark check interval).
    SleepUntil(u64),
    /// The kdamond stopped (turned off, or every vaddr target is gone).
    Stop,
}

/// A kdamond: its configuration and, while it runs, its context.
#[derive(Debug, Clone)]
pub struct Kdamond {
    pub cfg: KdamondConfig,
    pub ctx: Option<Ctx>,
    /// Scheme stats survive a stop (DAMON_RECLAIM reports them after disabling).
    pub last_stats: Vec<SchemeStat>,
}

/// DAMON's whole state in the `Mm`.
#[derive(Debug, Clone, Default)]
pub struct Damon {
    pub kdamonds: Vec<Kdamond>,
    /// PG_idle and PG_young (page_ext bits), allocated when a kdamond first runs.
    pub page_idle: Option<ops_common::PageIdle>,
    /// The system's "some" memory PSI total (µs), as the simulator last told it.
    pub psi_some_total_us: u64,
    /// `--damon-record`: what the damon_aggregated tracepoint showed (not kernel state).
    pub recording: Option<Recording>,
}

/// Every target's regions at every aggregation, as `damo record` collects them from the
/// `damon_aggregated` tracepoint: one record per kdamond target (a new one if the
/// monitoring intervals change).
#[derive(Debug, Clone, Default)]
pub struct Recording {
    pub records: Vec<RecordedTarget>,
}

#[derive(Debug, Clone)]
pub struct RecordedTarget {
    pub kdamond: usize,
    /// The target's index in its context.
    pub target: usize,
    pub attrs: Attrs,
    pub snapshots: Vec<RecordedSnapshot>,
}

/// One aggregation window of one target.
#[derive(Debug, Clone)]
pub struct RecordedSnapshot {
    pub start_ns: u64,
    pub end_ns: u64,
    pub regions: Vec<RecordedRegion>,
}

#[derive(Debug, Clone, Copy)]
pub struct RecordedRegion {
    pub start: u64,
    pub end: u64,
    pub nr_accesses: u32,
    /// Aggregation intervals.
    pub age: u32,
}

impl Recording {
    /// Appends target `target` of kdamond `k`'s regions for the window `start_ns..end_ns`.
    pub fn add(&mut self, k: usize, target: usize, attrs: Attrs, snapshot: RecordedSnapshot) {
        let i = match self
            .records
            .iter()
            .rposition(|r| r.kdamond == k && r.target == target)
        {
            Some(i) if self.records[i].attrs == attrs => i,
            _ => {
                self.records.push(RecordedTarget {
                    kdamond: k,
                    target,
                    attrs,
                    snapshots: Vec::new(),
                });
                self.records.len() - 1
            }
        };
        self.records[i].snapshots.push(snapshot);
    }
}

impl crate::Mm {
    /// After the settings were (re)read: kdamonds turned on start (and ask for their
    /// thread to be woken), those turned off stop, running ones take the new
    /// parameters (a `commit`). The set of kdamonds is fixed at boot; the first call
    /// only creates them, off.
    pub fn damon_apply_configs(&mut self) {
        let cfgs = self.cfg.damon.clone();
        if self.damon.kdamonds.len() != cfgs.len() {
            // Boot: every kdamond exists, off, until the simulator has made the
            // workloads' address spaces and calls this again.
            self.damon.kdamonds = cfgs
                .iter()
                .map(|c| Kdamond {
                    cfg: KdamondConfig {
                        on: false,
                        ..c.clone()
                    },
                    ctx: None,
                    last_stats: Vec::new(),
                })
                .collect();
            return;
        }
        for (k, cfg) in cfgs.iter().enumerate().take(self.damon.kdamonds.len()) {
            let running = self.damon.kdamonds[k].ctx.is_some();
            match (running, cfg.on) {
                (false, true) => {
                    self.damon.kdamonds[k].cfg = cfg.clone();
                    self.kdamond_start(k);
                    let at = self.clock();
                    self.out.push(crate::Out::WakeKdamond { k, at });
                }
                (true, false) => {
                    self.kdamond_stop(k);
                    self.damon.kdamonds[k].cfg = cfg.clone();
                }
                (true, true) => {
                    if self.damon.kdamonds[k].cfg != *cfg {
                        self.kdamond_commit(k, cfg);
                        self.damon.kdamonds[k].cfg = cfg.clone();
                    }
                }
                (false, false) => self.damon.kdamonds[k].cfg = cfg.clone(),
            }
        }
    }
}
