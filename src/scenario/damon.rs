//! `[damon]` (the sysfs tree /sys/kernel/mm/damon/admin/kdamonds/, file names as keys)
//! and `[damon_reclaim]` (the DAMON_RECLAIM module's parameters), with their
//! kernel defaults.

use super::units::Bytes;
use serde::{Deserialize, Serialize};

/// A count that may be "max" (ULONG_MAX / UINT_MAX in sysfs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UintOrMax(pub Option<u64>);

impl Serialize for UintOrMax {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => s.serialize_str("max"),
            Some(v) => s.serialize_u64(v),
        }
    }
}

impl<'de> Deserialize<'de> for UintOrMax {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum V {
            N(i64),
            S(String),
        }
        match V::deserialize(d)? {
            V::N(n) if n >= 0 => Ok(UintOrMax(Some(n as u64))),
            V::N(n) => Err(serde::de::Error::custom(format!("must be >= 0, got {n}"))),
            V::S(s) if s == "max" => Ok(UintOrMax(None)),
            V::S(s) => Err(serde::de::Error::custom(format!(
                "expected a number or \"max\", got \"{s}\""
            ))),
        }
    }
}

super::units::notation_schema!(UintOrMax, ["integer", "string"], "a count, or `\"max\"`");

/// `[damon]`: `kdamonds/<N>/`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Damon {
    pub kdamonds: Vec<Kdamond>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum KdamondState {
    On,
    #[default]
    Off,
}

/// `kdamonds/<N>/`: `state` and its context (the kernel allows one).
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Kdamond {
    pub state: KdamondState,
    pub contexts: Vec<Context>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Operations {
    #[default]
    Vaddr,
    Paddr,
    /// Accepted by the kernel (fixed virtual ranges); not modelled here.
    Fvaddr,
}

/// `contexts/<N>/`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Context {
    pub operations: Operations,
    pub monitoring_attrs: MonitoringAttrs,
    pub targets: Vec<Target>,
    pub schemes: Vec<Scheme>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MonitoringAttrs {
    pub intervals: Intervals,
    pub nr_regions: MinMax,
}

/// `monitoring_attrs/intervals/` (µs), sysfs defaults.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Intervals {
    pub sample_us: u64,
    pub aggr_us: u64,
    pub update_us: u64,
}

impl Default for Intervals {
    fn default() -> Self {
        Intervals {
            sample_us: 5_000,
            aggr_us: 100_000,
            update_us: 1_000_000,
        }
    }
}

/// `monitoring_attrs/nr_regions/`: sysfs defaults 10 and 1000.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MinMax {
    pub min: u64,
    pub max: u64,
}

impl Default for MinMax {
    fn default() -> Self {
        MinMax { min: 10, max: 1000 }
    }
}

/// `targets/<N>/`: `pid_target` names a workload (vaddr: its address space);
/// `regions` are the initial monitoring ranges (bytes; paddr's default is all RAM,
/// vaddr's the workload's mappings).
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Target {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid_target: Option<String>,
    pub regions: Vec<AddrRange>,
    /// paddr: the initial region is node N's physical memory (damo's `--numa_node`;
    /// sysfs spells it as that node's address range in `regions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<u32>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AddrRange {
    pub start: Bytes,
    pub end: Bytes,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DamosAction {
    Willneed,
    Cold,
    Pageout,
    Hugepage,
    Nohugepage,
    LruPrio,
    LruDeprio,
    MigrateHot,
    MigrateCold,
    #[default]
    Stat,
}

/// `schemes/<N>/`; sysfs defaults (action stat, every range open, no quota, no
/// watermarks).
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Scheme {
    pub action: DamosAction,
    /// `target_nid` (v6.11): the node migrate_hot and migrate_cold move pages to
    /// (unset: NUMA_NO_NODE).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_nid: Option<u32>,
    pub apply_interval_us: u64,
    pub access_pattern: AccessPattern,
    pub quotas: Quotas,
    pub watermarks: Watermarks,
    pub filters: Vec<Filter>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AccessPattern {
    /// Bytes.
    pub sz: Range,
    /// Samples per aggregation interval.
    pub nr_accesses: Range,
    /// Aggregation intervals.
    pub age: Range,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Range {
    pub min: u64,
    pub max: UintOrMax,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Quotas {
    pub ms: u64,
    pub bytes: Bytes,
    pub reset_interval_ms: u64,
    pub weights: Weights,
    pub goals: Vec<Goal>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Weights {
    pub sz_permil: u64,
    pub nr_accesses_permil: u64,
    pub age_permil: u64,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum GoalMetric {
    #[default]
    UserInput,
    SomeMemPsiUs,
}

/// `quotas/goals/<N>/`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Goal {
    pub target_metric: GoalMetric,
    pub target_value: u64,
    pub current_value: u64,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum WmarkMetric {
    #[default]
    None,
    FreeMemRate,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Watermarks {
    pub metric: WmarkMetric,
    pub interval_us: u64,
    pub high: u64,
    pub mid: u64,
    pub low: u64,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FilterType {
    #[default]
    Anon,
    Memcg,
    Addr,
    /// Kernel filter types not modelled (rejected with a message).
    Young,
    Target,
    HugepageSize,
    Unmapped,
}

/// `filters/<N>/`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Filter {
    #[serde(rename = "type")]
    pub kind: FilterType,
    pub matching: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memcg_path: Option<String>,
    pub addr_start: Bytes,
    pub addr_end: Bytes,
}

/// `[damon_reclaim]`: /sys/module/damon_reclaim/parameters/, defaults as the module's.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DamonReclaim {
    pub enabled: bool,
    /// µs a region must stay unaccessed to be cold.
    pub min_age: u64,
    pub quota_ms: u64,
    pub quota_sz: Bytes,
    pub quota_reset_interval_ms: u64,
    pub quota_mem_pressure_us: u64,
    pub quota_autotune_feedback: u64,
    pub wmarks_interval: u64,
    pub wmarks_high: u64,
    pub wmarks_mid: u64,
    pub wmarks_low: u64,
    pub sample_interval: u64,
    pub aggr_interval: u64,
    pub min_nr_regions: u64,
    pub max_nr_regions: u64,
    pub monitor_region_start: Bytes,
    pub monitor_region_end: Bytes,
    pub skip_anon: bool,
    /// Not a module parameter (the module fixes nr_accesses 0, age 1): the scheme's
    /// score weights, per mille; all 0 turns prioritisation off.
    pub weights: ReclaimWeights,
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ReclaimWeights {
    pub nr_accesses_permil: u64,
    pub age_permil: u64,
}

impl Default for ReclaimWeights {
    fn default() -> Self {
        ReclaimWeights {
            nr_accesses_permil: 0,
            age_permil: 1,
        }
    }
}

impl Default for DamonReclaim {
    fn default() -> Self {
        DamonReclaim {
            enabled: false,
            min_age: 120_000_000,
            quota_ms: 10,
            quota_sz: Bytes(128 << 20),
            quota_reset_interval_ms: 1000,
            quota_mem_pressure_us: 0,
            quota_autotune_feedback: 0,
            wmarks_interval: 5_000_000,
            wmarks_high: 500,
            wmarks_mid: 400,
            wmarks_low: 200,
            sample_interval: 5_000,
            aggr_interval: 100_000,
            min_nr_regions: 10,
            max_nr_regions: 1000,
            monitor_region_start: Bytes(0),
            monitor_region_end: Bytes(0),
            skip_anon: false,
            weights: ReclaimWeights::default(),
        }
    }
}
