//! DAMON_RECLAIM (mm/damon/reclaim.c, ~v6.9–v6.10): a kdamond on physical memory
//! with one `pageout` scheme for regions not accessed for `min_age`, under a time and
//! size quota, coldest first, while free memory is between the watermarks.

use super::{
    AccessPattern, Action, Attrs, Filter, FilterKind, GoalMetric, KdamondConfig, Ops, Quota,
    QuotaGoal, SchemeConfig, TargetConfig, Watermarks, WmarkMetric,
};

/// The module's parameters (/sys/module/damon_reclaim/parameters/), kernel units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    pub enabled: bool,
    pub min_age_us: u64,
    pub quota_ms: u64,
    pub quota_sz: u64,
    pub quota_reset_interval_ms: u64,
    pub quota_mem_pressure_us: u64,
    pub quota_autotune_feedback: u64,
    pub wmarks_interval_us: u64,
    pub wmarks_high: u64,
    pub wmarks_mid: u64,
    pub wmarks_low: u64,
    pub sample_interval_us: u64,
    pub aggr_interval_us: u64,
    pub min_nr_regions: u64,
    pub max_nr_regions: u64,
    /// Physical range in bytes; both 0 = the biggest System RAM resource.
    pub monitor_region_start: u64,
    pub monitor_region_end: u64,
    pub skip_anon: bool,
    /// Not a module parameter: the score weights of the scheme it installs (the
    /// module's are nr_accesses 0, age 1). All 0 turns prioritisation off, which is
    /// how the seed's evaluation compared with and without it.
    pub weight_nr_accesses: u64,
    pub weight_age: u64,
}

/// `damon_reclaim_new_scheme` and the context `damon_reclaim_apply_parameters` builds.
pub fn kdamond_config(p: &Params) -> KdamondConfig {
    let attrs = Attrs {
        sample_us: p.sample_interval_us,
        aggr_us: p.aggr_interval_us,
        // DAMON_RECLAIM sets ops_update_us 0.
        ops_update_us: 0,
        min_nr_regions: p.min_nr_regions,
        max_nr_regions: p.max_nr_regions,
    };
    let mut goals = Vec::new();
    if p.quota_mem_pressure_us > 0 {
        goals.push(QuotaGoal {
            metric: GoalMetric::SomeMemPsiUs,
            target_value: p.quota_mem_pressure_us,
            current_value: 0,
        });
    }
    if p.quota_autotune_feedback > 0 {
        goals.push(QuotaGoal {
            metric: GoalMetric::UserInput,
            target_value: 10_000,
            current_value: p.quota_autotune_feedback,
        });
    }
    let mut filters = Vec::new();
    if p.skip_anon {
        filters.push(Filter {
            kind: FilterKind::Anon,
            matching: true,
        });
    }
    let scheme = SchemeConfig {
        action: Action::Pageout,
        apply_interval_us: 0,
        pattern: AccessPattern {
            min_sz: 4096,
            max_sz: u64::MAX,
            min_nr_accesses: 0,
            max_nr_accesses: 0,
            min_age: (p.min_age_us / p.aggr_interval_us.max(1)).min(u32::MAX as u64) as u32,
            max_age: u32::MAX,
        },
        quota: Quota {
            ms: p.quota_ms,
            sz: p.quota_sz,
            reset_interval_ms: p.quota_reset_interval_ms,
            weight_sz: 0,
            weight_nr_accesses: p.weight_nr_accesses,
            weight_age: p.weight_age,
            goals,
        },
        wmarks: Watermarks {
            metric: WmarkMetric::FreeMemRate,
            interval_us: p.wmarks_interval_us,
            high: p.wmarks_high,
            mid: p.wmarks_mid,
            low: p.wmarks_low,
        },
        filters,
        target_nid: None,
    };
    let regions = if p.monitor_region_start == 0 && p.monitor_region_end == 0 {
        Vec::new()
    } else {
        vec![(p.monitor_region_start, p.monitor_region_end)]
    };
    KdamondConfig {
        on: p.enabled,
        ops: Ops::Paddr,
        attrs,
        targets: vec![TargetConfig {
            workload: None,
            regions,
            node: None,
        }],
        schemes: vec![scheme],
        reclaim_module: true,
    }
}
