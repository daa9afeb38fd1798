//! The one place a scenario becomes the kernel model's settings: TOML → validated
//! [`Scenario`] → [`Config`] (sysctls, costs, MGLRU, DAMON's kdamonds, the LRU
//! policy), and the scenario's enums turned into the model's.
//!
//! The research replacement policies meet the kernel here too: `kernel.lru` naming a
//! policy of [`crate::cache`] gets an adapter to the model's [`PagePolicy`] hook, so
//! neither the model nor the cache simulator imports the other.

use super::{
    KswapdCompaction, LruKind, Machine, MemcgReclaim, MemcgStatsFlush, MempolicyCfg, MempolicyMode,
    Scenario,
};
use crate::cache::{self, Policy};
use crate::mm::blk_mq::{BlockDeviceConfig, DeviceConfig};
use crate::mm::huge_memory::{ThpDefrag, ThpEnabled};
use crate::mm::lru_policy::{PagePolicy, PolicyFactory};
use crate::mm::memcontrol::PeakFile;
use crate::mm::pcp::PcpVersion;
use crate::mm::throttle::ReclaimThrottle;
use crate::mm::vmscan::ProtectionMode;
use crate::mm::zone::MAX_NR_ZONES;
use crate::mm::{
    lru_gen, Advice, Config, Costs, MemcgConfig, PeakFdConfig, SwapConfig, SwapKind, WorkloadConfig,
};

/// `[[machine.node]]` as the model's nodes: a missing SLIT row is 10 to the node
/// itself and 20 (REMOTE_DISTANCE) to the others. None: one node.
fn node_configs(m: &Machine, access_ns: u64) -> Vec<crate::mm::NodeConfig> {
    let n = m.nodes.len();
    m.nodes
        .iter()
        .enumerate()
        .map(|(i, node)| crate::mm::NodeConfig {
            memory_pages: node.memory.pages(),
            cpus: node.cpus.clone(),
            distance: node.distance.clone().unwrap_or_else(|| {
                (0..n)
                    .map(|j| {
                        if j == i {
                            crate::mm::LOCAL_DISTANCE
                        } else {
                            crate::mm::REMOTE_DISTANCE
                        }
                    })
                    .collect()
            }),
            perf: node_perf(m, i, access_ns),
        })
        .collect()
}

/// A node's HMAT performance: none unless some node gives a latency or bandwidth;
/// then every node with memory has one, the latency defaulting to `costs.access` and
/// the bandwidth to node 0's (or unknown: 0).
fn node_perf(m: &Machine, i: usize, access_ns: u64) -> Option<crate::mm::NodePerf> {
    if m.nodes
        .iter()
        .all(|n| n.latency.is_none() && n.bandwidth.is_none())
    {
        return None;
    }
    let node = &m.nodes[i];
    let mibps = |b: Option<crate::units::Bytes>| b.map(|b| b.0 >> 20);
    Some(crate::mm::NodePerf {
        latency_ns: node.latency.map_or(access_ns, |l| l.0),
        bandwidth_mbps: mibps(node.bandwidth)
            .or(mibps(m.nodes[0].bandwidth))
            .unwrap_or(0),
    })
}

/// A workload's `mempolicy` as the model's.
fn mempolicy(p: &MempolicyCfg) -> crate::mm::mempolicy::Mempolicy {
    use crate::mm::mempolicy::Mempolicy;
    let mask = p.nodes.iter().fold(0u64, |m, &n| m | 1 << n);
    match p.mode {
        MempolicyMode::Default | MempolicyMode::Local => Mempolicy::Local,
        MempolicyMode::Bind => Mempolicy::Bind { nodes: mask },
        MempolicyMode::Preferred => Mempolicy::Preferred {
            node: p.nodes[0] as usize,
        },
        MempolicyMode::Interleave => Mempolicy::Interleave { nodes: mask },
        MempolicyMode::WeightedInterleave => Mempolicy::WeightedInterleave {
            nodes: mask,
            weights: p.weights.iter().map(|&w| w as u8).collect(),
        },
    }
}

/// The kernel model's settings from a validated scenario.
pub fn mm_config(sc: &Scenario) -> Config {
    let vm = &sc.kernel.vm;
    let memory_pages = sc.machine.memory.pages();
    // The kernel's array starts at ZONE_DMA, which the simulator does not have.
    let ratio_at = |i: usize, dflt: u32| vm.lowmem_reserve_ratio.get(i).copied().unwrap_or(dflt);
    let lowmem_reserve_ratio: [u32; MAX_NR_ZONES] = [ratio_at(1, 256), ratio_at(2, 32)];
    Config {
        memory_pages,
        dma32_pages: sc
            .machine
            .dma32
            .map(|b| b.pages())
            .unwrap_or((3u64 << 30) / 4096)
            .min(memory_pages),
        nodes: node_configs(&sc.machine, sc.costs.access.0),
        swap: swap_config(&sc.machine.swap),
        storage: device_config(&sc.machine.storage, sc.costs.copy_page.0.max(1)),
        memcgs: sc
            .cgroups
            .iter()
            .map(|cg| {
                let m = &cg.memory;
                MemcgConfig {
                    path: cg.path.clone(),
                    min_pages: m.min.map_or(0, |b| b.pages()),
                    low_pages: m.low.map_or(0, |b| b.pages()),
                    high_pages: m.high.pages(),
                    max_pages: m.max.pages(),
                    swap_max_pages: m.swap.max.pages(),
                    oom_group: m.oom.group == 1,
                }
            })
            .collect(),
        peak_fds: peak_fds(sc),
        workloads: sc
            .processes()
            .into_iter()
            .map(|(w, _)| &sc.workloads[w])
            .map(|w| WorkloadConfig {
                memcg: w.cgroup.clone(),
                oom_score_adj: w.oom_score_adj.unwrap_or(0),
                madvise_hugepage: w.madvise_hugepage.unwrap_or(false),
                page_tables: w.page_tables.unwrap_or(true),
                mempolicy: w.mempolicy.as_ref().map(mempolicy).unwrap_or_default(),
            })
            .collect(),
        seed: sc.run.seed,
        swappiness: vm.swappiness as u64,
        min_free_kbytes: vm.min_free_kbytes,
        lowmem_reserve_ratio,
        watermark_scale_factor: vm.watermark_scale_factor as u64,
        watermark_boost_factor: vm.watermark_boost_factor as u64,
        dirty_background_ratio: vm.dirty_background_ratio as u64,
        dirty_ratio: vm.dirty_ratio as u64,
        dirty_bytes: vm.dirty_bytes.0,
        dirty_background_bytes: vm.dirty_background_bytes.0,
        dirty_expire_ns: vm.dirty_expire_centisecs as u64 * 10_000_000,
        dirty_writeback_interval_ns: vm.dirty_writeback_centisecs as u64 * 10_000_000,
        page_cluster: vm.page_cluster,
        hz: sc.kernel.hz.0 as u64,
        lru_gen: {
            let g = &sc.kernel.lru_gen;
            let bits = g.enabled.0;
            lru_gen::LruGenConfig {
                enabled: sc.kernel.lru == LruKind::Mglru && bits & 1 != 0,
                mm_walk: bits & 2 != 0,
                nonleaf_young: bits & 4 != 0,
                min_ttl_jiffies: lru_gen::msecs_to_jiffies(g.min_ttl_ms, sc.kernel.hz.0 as u64),
                memcg_reclaim: match g.memcg_reclaim {
                    MemcgReclaim::Iter => lru_gen::MemcgReclaim::Iter,
                    MemcgReclaim::Seed => lru_gen::MemcgReclaim::Seed,
                    MemcgReclaim::MemcgLru => lru_gen::MemcgReclaim::MemcgLru,
                },
            }
        },
        lru_policy: kernel_policy(sc.kernel.lru.name()),
        damon: damon_configs(sc),
        extfrag_threshold: vm.extfrag_threshold as i64,
        compaction_proactiveness: vm.compaction_proactiveness as u64,
        compact_unevictable_allowed: vm.compact_unevictable_allowed != 0,
        kswapd_compacts: sc.kernel.kswapd_compaction == KswapdCompaction::Kswapd,
        thp_enabled: match sc.kernel.transparent_hugepage.enabled {
            super::ThpEnabled::Always => ThpEnabled::Always,
            super::ThpEnabled::Madvise => ThpEnabled::Madvise,
            super::ThpEnabled::Never => ThpEnabled::Never,
        },
        thp_defrag: match sc.kernel.transparent_hugepage.defrag {
            super::ThpDefrag::Always => ThpDefrag::Always,
            super::ThpDefrag::Defer => ThpDefrag::Defer,
            super::ThpDefrag::DeferMadvise => ThpDefrag::DeferMadvise,
            super::ThpDefrag::Madvise => ThpDefrag::Madvise,
            super::ThpDefrag::Never => ThpDefrag::Never,
        },
        ra_pages: (sc.machine.storage.read_ahead_kb / 4) as u32,
        io_pages: (sc.machine.storage.max_sectors_kb / 4).max(1) as u32,
        memcg_stats_rstat: sc.kernel.memcg_stats_flush == MemcgStatsFlush::Rstat,
        memcg_kmem: sc.kernel.memcg_kmem.0,
        vfs_cache_pressure: vm.vfs_cache_pressure as u64,
        zone_reclaim_mode: vm.zone_reclaim_mode,
        min_unmapped_ratio: vm.min_unmapped_ratio as u64,
        min_slab_ratio: vm.min_slab_ratio as u64,
        nr_cpus: sc.machine.nr_cpus as u64,
        fault_around_pages: {
            let pages = (sc.kernel.fault_around_bytes.0 / 4096).max(1);
            1 << pages.ilog2()
        },
        // At least 1ns each: validation rejects 0, and should a path bypass it no
        // work may take zero virtual time (a task would loop at one instant).
        costs: Costs {
            access_ns: sc.costs.access.0.max(1),
            minor_fault_ns: sc.costs.minor_fault.0.max(1),
            major_fault_ns: sc.costs.major_fault.0.max(1),
            scan_page_ns: sc.costs.scan_page.0.max(1),
            reclaim_page_ns: sc.costs.reclaim_page.0.max(1),
            rmap_walk_ns: sc.costs.rmap_walk.0.max(1),
            syscall_ns: sc.costs.syscall.0.max(1),
            copy_page_ns: sc.costs.copy_page.0.max(1),
            walk_pte_ns: sc.costs.walk_pte.0.max(1),
            walk_young_ns: sc.costs.walk_young.0.max(1),
            damon_check_ns: sc.costs.damon_check.0.max(1),
            shrink_object_ns: sc.costs.shrink_object.0.max(1),
            tlb_flush_ns: sc.costs.tlb_flush.0.max(1),
            tlb_ipi_ns: sc.costs.tlb_ipi.0.max(1),
            compress_ns: sc.machine.swap.compress_time.0,
            decompress_ns: sc.machine.swap.decompress_time.0,
        },
        memcg_protection: match sc.kernel.memcg_protection {
            super::MemcgProtection::Cliff => ProtectionMode::Cliff,
            super::MemcgProtection::Seed => ProtectionMode::Seed,
            super::MemcgProtection::Proportional => ProtectionMode::Proportional,
        },
        memory_recursiveprot: sc.kernel.memory_recursiveprot,
        pcp: match sc.kernel.pcp {
            super::Pcp::Off => PcpVersion::Off,
            super::Pcp::V4_5 => PcpVersion::V4_5,
            super::Pcp::V5_14 => PcpVersion::V5_14,
            super::Pcp::V6_7 => PcpVersion::V6_7,
        },
        percpu_pagelist_fraction: vm.percpu_pagelist_fraction as u64,
        percpu_pagelist_high_fraction: vm.percpu_pagelist_high_fraction as u64,
        demotion_enabled: sc.kernel.numa.demotion_enabled,
        numa_balancing: numa_balancing(&sc.kernel),
        reclaim_throttle: match sc.kernel.reclaim_throttle {
            super::ReclaimThrottle::CongestionWait => ReclaimThrottle::CongestionWait,
            super::ReclaimThrottle::Throttle => ReclaimThrottle::Throttle,
            super::ReclaimThrottle::ThrottleCurrent => ReclaimThrottle::ThrottleCurrent,
        },
    }
}

/// `[machine.swap]` as a swap area (None: no swap).
fn swap_config(s: &super::Swap) -> Option<SwapConfig> {
    let kind = match s.kind {
        super::SwapKind::None => return None,
        super::SwapKind::Zram => SwapKind::Zram,
        super::SwapKind::Disk => SwapKind::Disk,
        super::SwapKind::Ramdisk => SwapKind::Ramdisk,
    };
    Some(SwapConfig {
        kind,
        size_pages: s.size.pages(),
        compression_ratio: s.compression_ratio,
        mem_limit_bytes: s.mem_limit.0,
        device: block_device_config(&s.device),
    })
}

/// The peak files the timed actions name with an `fd`: opened before the run, the
/// first action's file under each name.
fn peak_fds(sc: &Scenario) -> Vec<PeakFdConfig> {
    let mut out: Vec<PeakFdConfig> = Vec::new();
    for a in &sc.actions {
        let (Some(name), Some(cg)) = (&a.fd, &a.cgroup) else {
            continue;
        };
        let file = a.write.as_deref().or(a.read.as_deref());
        let Some(file) = file.and_then(PeakFile::from_name) else {
            continue;
        };
        out.push(PeakFdConfig {
            name: name.clone(),
            memcg: cg.clone(),
            file,
        });
    }
    out
}

/// DAMON's settings (its own module: the model's DAMON types share names with the
/// scenario's, which this reads as `s::`).
mod damon {
    use crate::mm::damon::*;
    use crate::scenario::Scenario;

    /// The kdamonds a scenario configures: each `[[damon.kdamonds]]` (its one context),
    /// then DAMON_RECLAIM's if `[damon_reclaim]` is there. Names are resolved here
    /// (workloads, cgroups); validation has checked they exist.
    pub fn damon_configs(sc: &Scenario) -> Vec<KdamondConfig> {
        use crate::scenario::damon as s;
        let mut out = Vec::new();
        let workload_index = |name: &str| sc.workloads.iter().position(|w| w.name == name);
        let memcg_index = |path: &str| {
            let path = path.trim_matches('/');
            if path.is_empty() {
                Some(0)
            } else {
                sc.cgroups
                    .iter()
                    .position(|c| c.path == path)
                    .map(|i| i + 1)
            }
        };
        for kd in sc.damon.iter().flat_map(|d| &d.kdamonds) {
            let Some(c) = kd.contexts.first() else {
                continue;
            };
            let iv = &c.monitoring_attrs.intervals;
            let nr = &c.monitoring_attrs.nr_regions;
            let ops = match c.operations {
                s::Operations::Paddr => Ops::Paddr,
                s::Operations::Vaddr | s::Operations::Fvaddr => Ops::Vaddr,
            };
            let targets = c
                .targets
                .iter()
                .map(|t| TargetConfig {
                    workload: t.pid_target.as_deref().and_then(workload_index),
                    regions: t.regions.iter().map(|r| (r.start.0, r.end.0)).collect(),
                    node: t.numa_node.map(|n| n as usize),
                })
                .collect();
            let schemes = c
                .schemes
                .iter()
                .map(|sch| {
                    let p = &sch.access_pattern;
                    let u32_max = |m: s::UintOrMax| {
                        m.0.unwrap_or(u32::MAX as u64).min(u32::MAX as u64) as u32
                    };
                    SchemeConfig {
                        action: match sch.action {
                            s::DamosAction::Pageout => Action::Pageout,
                            s::DamosAction::Cold => Action::Cold,
                            s::DamosAction::LruPrio => Action::LruPrio,
                            s::DamosAction::LruDeprio => Action::LruDeprio,
                            s::DamosAction::MigrateHot => Action::MigrateHot,
                            s::DamosAction::MigrateCold => Action::MigrateCold,
                            // Validation rejects the others.
                            _ => Action::Stat,
                        },
                        apply_interval_us: sch.apply_interval_us,
                        pattern: AccessPattern {
                            min_sz: p.sz.min,
                            max_sz: p.sz.max.0.unwrap_or(u64::MAX),
                            min_nr_accesses: p.nr_accesses.min.min(u32::MAX as u64) as u32,
                            max_nr_accesses: u32_max(p.nr_accesses.max),
                            min_age: p.age.min.min(u32::MAX as u64) as u32,
                            max_age: u32_max(p.age.max),
                        },
                        quota: Quota {
                            ms: sch.quotas.ms,
                            sz: sch.quotas.bytes.0,
                            reset_interval_ms: sch.quotas.reset_interval_ms,
                            weight_sz: sch.quotas.weights.sz_permil,
                            weight_nr_accesses: sch.quotas.weights.nr_accesses_permil,
                            weight_age: sch.quotas.weights.age_permil,
                            goals: sch
                                .quotas
                                .goals
                                .iter()
                                .map(|g| QuotaGoal {
                                    metric: match g.target_metric {
                                        s::GoalMetric::UserInput => GoalMetric::UserInput,
                                        s::GoalMetric::SomeMemPsiUs => GoalMetric::SomeMemPsiUs,
                                    },
                                    target_value: g.target_value,
                                    current_value: g.current_value,
                                })
                                .collect(),
                        },
                        wmarks: Watermarks {
                            metric: match sch.watermarks.metric {
                                s::WmarkMetric::None => WmarkMetric::None,
                                s::WmarkMetric::FreeMemRate => WmarkMetric::FreeMemRate,
                            },
                            interval_us: sch.watermarks.interval_us,
                            high: sch.watermarks.high,
                            mid: sch.watermarks.mid,
                            low: sch.watermarks.low,
                        },
                        filters: sch
                            .filters
                            .iter()
                            .filter_map(|f| {
                                let kind = match f.kind {
                                    s::FilterType::Anon => FilterKind::Anon,
                                    s::FilterType::Memcg => {
                                        FilterKind::Memcg(memcg_index(f.memcg_path.as_deref()?)?)
                                    }
                                    s::FilterType::Addr => {
                                        FilterKind::Addr(f.addr_start.0, f.addr_end.0)
                                    }
                                    _ => return None,
                                };
                                Some(Filter {
                                    kind,
                                    matching: f.matching,
                                })
                            })
                            .collect(),
                        target_nid: sch.target_nid.map(|n| n as usize),
                    }
                })
                .collect();
            out.push(KdamondConfig {
                on: kd.state == s::KdamondState::On,
                ops,
                attrs: Attrs {
                    sample_us: iv.sample_us,
                    aggr_us: iv.aggr_us,
                    ops_update_us: iv.update_us,
                    min_nr_regions: nr.min,
                    max_nr_regions: nr.max,
                },
                targets,
                schemes,
                reclaim_module: false,
            });
        }
        if let Some(r) = &sc.damon_reclaim {
            out.push(reclaim::kdamond_config(&reclaim::Params {
                enabled: r.enabled,
                min_age_us: r.min_age,
                quota_ms: r.quota_ms,
                quota_sz: r.quota_sz.0,
                quota_reset_interval_ms: r.quota_reset_interval_ms,
                quota_mem_pressure_us: r.quota_mem_pressure_us,
                quota_autotune_feedback: r.quota_autotune_feedback,
                wmarks_interval_us: r.wmarks_interval,
                wmarks_high: r.wmarks_high,
                wmarks_mid: r.wmarks_mid,
                wmarks_low: r.wmarks_low,
                sample_interval_us: r.sample_interval,
                aggr_interval_us: r.aggr_interval,
                min_nr_regions: r.min_nr_regions,
                max_nr_regions: r.max_nr_regions,
                monitor_region_start: r.monitor_region_start.0,
                monitor_region_end: r.monitor_region_end.0,
                skip_anon: r.skip_anon,
                weight_nr_accesses: r.weights.nr_accesses_permil,
                weight_age: r.weights.age_permil,
            }));
        }
        out
    }
}

pub use damon::damon_configs;

/// A `[machine.storage]` or swap device as the kernel model's block layer takes it
/// (a ramdisk copies a page in `copy_ns`).
pub fn device_config(d: &super::Device, copy_ns: u64) -> DeviceConfig {
    match d.kind {
        super::DeviceKind::Block => DeviceConfig::Block(block_device_config(d)),
        super::DeviceKind::Ramdisk => DeviceConfig::Ramdisk { copy_ns },
    }
}

/// A device's latencies, bandwidths and queue depth (a disk swap device is always
/// queued).
pub fn block_device_config(d: &super::Device) -> BlockDeviceConfig {
    BlockDeviceConfig {
        read_latency_ns: d.read_latency.0,
        write_latency_ns: d.write_latency.0,
        read_bytes_per_s: d.read_bandwidth.0,
        write_bytes_per_s: d.write_bandwidth.0,
        queue_depth: d.queue_depth,
    }
}

/// A file's `fadvise` advice as the kernel model names it.
pub fn advice(a: super::Advice) -> Advice {
    match a {
        super::Advice::Normal => Advice::Normal,
        super::Advice::Random => Advice::Random,
        super::Advice::Sequential => Advice::Sequential,
        super::Advice::Noreuse => Advice::NoReuse,
    }
}

/// A policy as the kernel model asks it ([`crate::mm::lru_policy`]): keys are pages
/// of size 1; a page joining is looked up first (a ghost hit is remembered for the
/// insert, as the simulator's miss path does), an eviction is the policy's victim as
/// if a one-page miss needed room.
struct KernelPolicy(Box<dyn Policy>);

impl PagePolicy for KernelPolicy {
    fn add(&mut self, key: u64) {
        if !self.0.lookup(key, 1) {
            self.0.insert(key, 1);
        }
    }

    fn access(&mut self, key: u64) {
        self.0.lookup(key, 1);
    }

    fn remove(&mut self, key: u64) {
        self.0.remove(key);
    }

    fn evict(&mut self) -> Option<u64> {
        self.0.evict()
    }
}

/// The kernel model's constructor for research policy `name` (None for the kernel's
/// own LRUs, which are not in the registry).
fn kernel_policy(name: &'static str) -> Option<PolicyFactory> {
    let new = cache::policy(name)?;
    Some(PolicyFactory::new(name, move |c| {
        Box::new(KernelPolicy(new(c)))
    }))
}

/// `kernel.numa_balancing` and its tunables, the kernel's defaults where unset.
fn numa_balancing(k: &super::Kernel) -> crate::mm::numa_balancing::NumaBalancingConfig {
    let d = crate::mm::numa_balancing::NumaBalancingConfig::default();
    crate::mm::numa_balancing::NumaBalancingConfig {
        memory_tiering: k.numa_balancing & 2 != 0,
        promote_rate_limit_mbps: k
            .numa_balancing_promote_rate_limit_mbps
            .unwrap_or(d.promote_rate_limit_mbps),
        hot_threshold_ms: k
            .numa_balancing_hot_threshold_ms
            .unwrap_or(d.hot_threshold_ms),
        scan_period_min_ms: k
            .numa_balancing_scan_period_min_ms
            .unwrap_or(d.scan_period_min_ms),
        scan_period_max_ms: k
            .numa_balancing_scan_period_max_ms
            .unwrap_or(d.scan_period_max_ms),
        scan_size_mb: k.numa_balancing_scan_size_mb.unwrap_or(d.scan_size_mb),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mm::Config::new` is the kernel model's own default machine: a scenario that
    /// sets nothing but the memory (and the one process it needs) builds the same
    /// settings, field for field.
    #[test]
    fn the_scenarios_defaults_are_the_models() {
        for (memory, pages) in [("1G", 1u64 << 18), ("8G", 8 << 18)] {
            let text = format!(
                "[machine]\nmemory = \"{memory}\"\n\
                 [[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"4K\"\n"
            );
            let sc = crate::scenario::parse_str(&text, "t.toml", &[]).unwrap();
            let mut own = Config::new(pages);
            own.workloads.push(WorkloadConfig {
                page_tables: true,
                ..Default::default()
            });
            assert_eq!(format!("{:#?}", mm_config(&sc)), format!("{own:#?}"));
        }
    }

    /// A named `fd` on a peak file is opened before the run, once per name (the first
    /// action's file); an action on another file opens none.
    #[test]
    fn timed_actions_name_the_peak_files_opened_before_the_run() {
        let sc = crate::scenario::parse_str(
            "[machine]\nmemory = \"1G\"\n[[cgroup]]\npath = \"app\"\n\
             [[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"4K\"\n\
             [[action]]\nat = \"1s\"\ncgroup = \"app\"\nwrite = \"memory.peak\"\nfd = \"A\"\nvalue = \"x\"\n\
             [[action]]\nat = \"2s\"\ncgroup = \"app\"\nread = \"memory.swap.peak\"\nfd = \"B\"\n\
             [[action]]\nat = \"3s\"\ncgroup = \"app\"\nread = \"memory.peak\"\nfd = \"A\"\n\
             [[action]]\nat = \"4s\"\ncgroup = \"app\"\nwrite = \"memory.high\"\nvalue = \"1M\"\n",
            "t.toml",
            &[],
        )
        .unwrap();
        let fd = |name: &str, file| PeakFdConfig {
            name: name.into(),
            memcg: "app".into(),
            file,
        };
        let cfg = mm_config(&sc);
        assert_eq!(
            cfg.peak_fds,
            [
                fd("A", PeakFile::Memory),
                fd("B", PeakFile::Swap),
                fd("A", PeakFile::Memory)
            ]
        );
        let t = crate::mm::memcontrol::MemcgTree::new(&cfg);
        let names: Vec<_> = t
            .peak_fds
            .iter()
            .map(|f| (f.name.as_str(), f.file))
            .collect();
        assert_eq!(names, [("A", PeakFile::Memory), ("B", PeakFile::Swap)]);
    }
}
