//! mm/vmstat.c's views of the buddy allocator: /proc/buddyinfo, /proc/pagetypeinfo,
//! and the fragmentation measures behind /sys/kernel/debug/extfrag/{unusable_index,
//! extfrag_index} that compaction also asks (`fill_contig_page_info`,
//! `__fragmentation_index`, `unusable_free_index`, `extfrag_for_order`).
//! kernel-reference §1.3, §7.3.

use super::zone::*;
use super::Mm;
use std::fmt::Write;

/// A zone's NUMA allocation counters (`enum numa_stat_item`), which /proc/vmstat sums
/// over the zones and /sys/devices/system/node/nodeN/numastat over a node's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NumaStats {
    /// NUMA_HIT: allocated from the node the zonelist preferred.
    pub numa_hit: u64,
    /// NUMA_MISS: allocated here though another node was preferred.
    pub numa_miss: u64,
    /// NUMA_FOREIGN: preferred here, allocated on another node.
    pub numa_foreign: u64,
    /// NUMA_LOCAL / NUMA_OTHER: on the allocating CPU's node or not.
    pub local_node: u64,
    pub other_node: u64,
    /// NUMA_INTERLEAVE_HIT: an interleaved allocation got the node it aimed at.
    pub interleave_hit: u64,
}

/// `struct contig_page_info`: a zone's free memory as seen by a request of one order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContigPageInfo {
    pub free_pages: u64,
    /// Free blocks of any order.
    pub free_blocks_total: u64,
    /// Free blocks that could serve the request, in units of its order.
    pub free_blocks_suitable: u64,
}

/// `fill_contig_page_info` from the per-order free block counts (`nr_free`).
pub fn fill_contig_page_info(
    nr_free: &[u64; NR_PAGE_ORDERS],
    suitable_order: usize,
) -> ContigPageInfo {
    let mut info = ContigPageInfo::default();
    for (order, &blocks) in nr_free.iter().enumerate() {
        info.free_blocks_total += blocks;
        info.free_pages += blocks << order;
        if order >= suitable_order {
            info.free_blocks_suitable += blocks << (order - suitable_order);
        }
    }
    info
}

/// `__fragmentation_index`, in thousandths: towards 0 a failure of this order would be
/// for lack of memory, towards 1000 for fragmentation; -1000 when it would succeed;
/// 0 with no free blocks at all.
pub fn fragmentation_index(order: usize, info: &ContigPageInfo) -> i64 {
    if info.free_blocks_total == 0 {
        return 0;
    }
    if info.free_blocks_suitable > 0 {
        return -1000;
    }
    let requested = 1u64 << order;
    1000 - ((1000 + info.free_pages * 1000 / requested) / info.free_blocks_total) as i64
}

/// `unusable_free_index`, in thousandths: the share of free memory in blocks too small
/// for the order (1000 when nothing is free).
pub fn unusable_free_index(order: usize, info: &ContigPageInfo) -> u64 {
    if info.free_pages == 0 {
        return 1000;
    }
    (info.free_pages - (info.free_blocks_suitable << order)) * 1000 / info.free_pages
}

/// `extfrag_for_order`: the same share in percent (0 when nothing is free), what
/// proactive compaction compares with its thresholds.
pub fn extfrag_for_order(order: usize, info: &ContigPageInfo) -> u64 {
    if info.free_pages == 0 {
        return 0;
    }
    (info.free_pages - (info.free_blocks_suitable << order)) * 100 / info.free_pages
}

fn nr_free(z: &Zone) -> [u64; NR_PAGE_ORDERS] {
    std::array::from_fn(|o| z.free_area[o].nr_free)
}

/// The views `--proc` writes at every sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcFile {
    Buddyinfo,
    Pagetypeinfo,
    UnusableIndex,
    ExtfragIndex,
    Zoneinfo,
}

impl ProcFile {
    pub const ALL: [ProcFile; 5] = [
        ProcFile::Buddyinfo,
        ProcFile::Pagetypeinfo,
        ProcFile::UnusableIndex,
        ProcFile::ExtfragIndex,
        ProcFile::Zoneinfo,
    ];

    /// The name `--proc` takes and the file's stem in the run directory.
    pub fn name(self) -> &'static str {
        match self {
            ProcFile::Buddyinfo => "buddyinfo",
            ProcFile::Pagetypeinfo => "pagetypeinfo",
            ProcFile::UnusableIndex => "unusable_index",
            ProcFile::ExtfragIndex => "extfrag_index",
            ProcFile::Zoneinfo => "zoneinfo",
        }
    }

    pub fn parse(name: &str) -> Option<ProcFile> {
        ProcFile::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// Migratetype names as /proc/pagetypeinfo prints them (`migratetype_names`); the
/// two after Reclaimable have no pages here but keep the file's columns.
const MIGRATETYPE_NAMES: [&str; 5] = [
    "Unmovable",
    "Movable",
    "Reclaimable",
    "HighAtomic",
    "Isolate",
];

/// A value in thousandths as `printk("%d.%03d")` spells it (C's truncating division
/// and remainder: -1 is "0.-01", as the kernel's files show it); `width` pads the
/// whole part (extfrag_index uses "%2d").
fn thousandths(v: i64, width: usize) -> String {
    format!("{:>width$}.{:03}", v / 1000, v % 1000)
}

impl Mm {
    /// The text of one view, as the kernel prints it (every node's zones).
    pub fn proc_show(&self, file: ProcFile) -> String {
        let mut out = String::new();
        let zones = self.zones.iter().filter(|z| z.is_managed());
        match file {
            ProcFile::Buddyinfo => {
                for z in zones {
                    let _ = write!(out, "Node {}, zone {:>8} ", z.node, z.name());
                    for n in nr_free(z) {
                        let _ = write!(out, "{n:>6} ");
                    }
                    out.push('\n');
                }
            }
            ProcFile::UnusableIndex | ProcFile::ExtfragIndex => {
                for z in zones {
                    let _ = write!(out, "Node {}, zone {:>8} ", z.node, z.name());
                    for order in 0..NR_PAGE_ORDERS {
                        let info = fill_contig_page_info(&nr_free(z), order);
                        let text = match file {
                            ProcFile::UnusableIndex => {
                                thousandths(unusable_free_index(order, &info) as i64, 0)
                            }
                            _ => thousandths(fragmentation_index(order, &info), 2),
                        };
                        let _ = write!(out, "{text} ");
                    }
                    out.push('\n');
                }
            }
            ProcFile::Pagetypeinfo => self.pagetypeinfo(&mut out),
            ProcFile::Zoneinfo => self.zoneinfo(&mut out),
        }
        out
    }

    /// /proc/zoneinfo, the lines the model has (`zoneinfo_show_print`): free pages,
    /// watermarks, sizes, protection, and each CPU's per-CPU list (`pagesets`).
    fn zoneinfo(&self, out: &mut String) {
        for (zi, z) in self
            .zones
            .iter()
            .enumerate()
            .filter(|(_, z)| z.is_managed())
        {
            let _ = writeln!(out, "Node {}, zone {:>8}", z.node, z.name());
            // The zone's counter: what the CPUs' diffs hold is not in it.
            let _ = writeln!(out, "  pages free     {}", self.zone_page_state_free(zi));
            let _ = writeln!(out, "        boost    {}", z.watermark_boost);
            for (name, w) in ["min", "low", "high"].iter().zip(z.watermark) {
                let _ = writeln!(out, "        {name:<8} {}", w + z.watermark_boost);
            }
            let spanned = u64::from(z.end_pfn - z.start_pfn);
            let _ = writeln!(out, "        spanned  {spanned}");
            let _ = writeln!(out, "        present  {spanned}");
            let _ = writeln!(out, "        managed  {}", z.managed_pages);
            let protection: Vec<String> = z.lowmem_reserve.iter().map(u64::to_string).collect();
            let _ = writeln!(out, "        protection: ({})", protection.join(", "));
            let _ = writeln!(out, "  pagesets");
            let cpus = self.pcp.iter().skip(zi).step_by(self.zones.len());
            for (cpu, p) in cpus.enumerate() {
                let _ = writeln!(out, "    cpu: {cpu}");
                let _ = writeln!(out, "              count:    {}", p.count);
                let _ = writeln!(out, "              high:     {}", p.high);
                let _ = writeln!(out, "              batch:    {}", p.batch);
                let _ = writeln!(out, "  vm stats threshold: {}", self.stat_threshold(zi));
            }
            let _ = writeln!(out, "  start_pfn:           {}", z.start_pfn);
        }
    }

    /// /proc/pagetypeinfo: free blocks per order and migratetype, then pageblocks per
    /// migratetype.
    fn pagetypeinfo(&self, out: &mut String) {
        let _ = writeln!(out, "Page block order: {PAGEBLOCK_ORDER}");
        let _ = writeln!(out, "Pages per block:  {PAGEBLOCK_NR_PAGES}\n");
        let _ = write!(out, "{:<43}", "Free pages count per migrate type at order");
        for order in 0..NR_PAGE_ORDERS {
            let _ = write!(out, "{order:>6} ");
        }
        out.push('\n');
        let zones: Vec<&Zone> = self.zones.iter().filter(|z| z.is_managed()).collect();
        for z in &zones {
            for (mt, name) in MIGRATETYPE_NAMES.iter().enumerate() {
                let _ = write!(
                    out,
                    "Node {:>4}, zone {:>8}, type {name:>12} ",
                    z.node,
                    z.name()
                );
                for order in 0..NR_PAGE_ORDERS {
                    let mut n = if mt < MIGRATE_PCPTYPES {
                        z.free_area[order].free_list[mt].len
                    } else {
                        0
                    };
                    // The deferred max-order blocks are the movable list's tail.
                    if order == MAX_PAGE_ORDER && mt == DEFERRED_MT {
                        n += z.nr_deferred_blocks();
                    }
                    let _ = write!(out, "{n:>6} ");
                }
                out.push('\n');
            }
        }
        let _ = write!(out, "\n{:<24}", "Number of blocks type");
        for name in MIGRATETYPE_NAMES {
            let _ = write!(out, "{name:>12} ");
        }
        out.push('\n');
        for z in &zones {
            let mut count = [0u64; MIGRATETYPE_NAMES.len()];
            let mut pfn = z.start_pfn;
            while pfn < z.end_pfn {
                count[z.pageblock_migratetype(pfn)] += 1;
                pfn = pfn.saturating_add(PAGEBLOCK_NR_PAGES as u32);
            }
            let _ = write!(out, "Node {}, zone {:>8} ", z.node, z.name());
            for n in count {
                let _ = write!(out, "{n:>12} ");
            }
            out.push('\n');
        }
    }
}

/// `fls`: the 1-based index of the highest bit set (0 for 0).
fn fls(x: u64) -> u64 {
    64 - u64::from(x.leading_zeros())
}

/// `calculate_normal_threshold`: how far a CPU's NR_FREE_PAGES diff may stray before
/// it is folded into the zone's counter: 2·fls(CPUs)·(1 + fls(zone MiB / 128)),
/// at most 125.
pub fn calculate_normal_threshold(managed_pages: u64, nr_cpus: u64) -> i64 {
    let mem_128m = managed_pages >> (27 - 12);
    (2 * fls(nr_cpus) * (1 + fls(mem_128m))).min(125) as i64
}

/// `calculate_pressure_threshold`, in force while kswapd is awake: the gap between
/// the low and min watermarks shared out over the CPUs, so that the drift cannot hide
/// a zone's fall through min (1 to 125).
pub fn calculate_pressure_threshold(low: u64, min: u64, nr_cpus: u64) -> i64 {
    (low.saturating_sub(min) / nr_cpus.max(1)).clamp(1, 125) as i64
}

/// The per-CPU counter drift of NR_FREE_PAGES (mm/vmstat.c). Each CPU keeps a diff
/// (`vm_stat_diff`) that is folded into the zone's counter when it passes the
/// threshold, and by `refresh_cpu_vm_stats` every `vm.stat_interval`; the watermark
/// checks of the allocator, kswapd and compaction read the zone's counter
/// (`zone_page_state`), `should_reclaim_retry` and `compaction_zonelist_suitable`
/// add the diffs in (`zone_page_state_snapshot`), and kswapd's balance checks do so
/// below `percpu_drift_mark` (`zone_watermark_ok_safe`). `Zone::nr_free_pages` is
/// the exact count (the snapshot); changes are attributed to the CPU that made them
/// as that CPU hands over (a slice is one CPU's, one `__mod_zone_page_state`).
impl Mm {
    /// The threshold in force: kswapd sets the pressure one as it wakes and the
    /// normal one as it goes to sleep for good ([`Mm::set_pgdat_percpu_threshold`]).
    #[inline]
    pub fn stat_threshold(&self, zi: usize) -> i64 {
        self.stat_threshold_now[zi]
    }

    /// `set_pgdat_percpu_threshold` (`kswapd_try_to_sleep`): node `nid`'s zones take
    /// their pressure thresholds (kswapd awake) or their normal ones (asleep).
    pub fn set_pgdat_percpu_threshold(&mut self, nid: usize, pressure: bool) {
        for zi in self.node_zones(nid) {
            self.stat_threshold_now[zi] = self.stat_thresholds[zi][pressure as usize];
        }
    }

    /// `refresh_zone_stat_thresholds`, at boot and when the watermarks change: each
    /// zone's normal and pressure thresholds.
    /// The per-CPU diffs start empty at boot (`setup_vm_stats`).
    pub fn refresh_zone_stat_thresholds(&mut self) {
        let nr_cpus = self.cfg.nr_cpus.max(1);
        let nr_zones = self.zones.len();
        if self.free_diff.is_empty() {
            self.free_diff = vec![0; nr_cpus as usize * nr_zones];
            self.free_diff_sum = vec![0; nr_zones];
            self.free_attributed = self.zones.iter().map(|z| z.nr_free_pages).collect();
            self.stat_thresholds = vec![[1; 2]; nr_zones];
            self.stat_threshold_now = vec![1; nr_zones];
        }
        for zi in 0..nr_zones {
            let z = &self.zones[zi];
            self.stat_thresholds[zi] = [
                calculate_normal_threshold(z.managed_pages, nr_cpus),
                calculate_pressure_threshold(
                    z.watermark[WMARK_LOW],
                    z.watermark[WMARK_MIN],
                    nr_cpus,
                ),
            ];
        }
        for nid in 0..self.nr_nodes() {
            let awake = !matches!(self.kswapd[nid].state, super::kswapd::KswapdState::Sleeping);
            self.set_pgdat_percpu_threshold(nid, awake);
        }
    }

    /// `percpu_drift_mark` (`refresh_zone_stat_thresholds`): when the CPUs together
    /// may drift further than the gap between low and min, the high watermark plus
    /// that drift; 0 (none) otherwise.
    pub fn percpu_drift_mark(&self, zi: usize) -> u64 {
        let z = &self.zones[zi];
        let max_drift = self.cfg.nr_cpus.max(1) * self.stat_thresholds[zi][0] as u64;
        let tolerate = z.watermark[WMARK_LOW].saturating_sub(z.watermark[WMARK_MIN]);
        if max_drift > tolerate {
            z.watermark[WMARK_HIGH] + max_drift
        } else {
            0
        }
    }

    /// The running CPU's diff for zone `zi` with what it changed since it last
    /// handed over, as `__mod_zone_page_state` leaves it (0 once past the threshold:
    /// folded).
    #[inline]
    fn own_free_diff(&self, zi: usize) -> i64 {
        let i = self.current_cpu * self.zones.len() + zi;
        let pending = self.zones[zi].nr_free_pages as i64 - self.free_attributed[zi] as i64;
        let own = i64::from(self.free_diff[i]) + pending;
        if own.abs() > self.stat_threshold(zi) {
            0
        } else {
            own
        }
    }

    /// `zone_page_state(zone, NR_FREE_PAGES)`: the zone's counter, without what the
    /// CPUs hold in their diffs.
    #[inline]
    pub fn zone_page_state_free(&self, zi: usize) -> u64 {
        let own_committed = i64::from(self.free_diff[self.current_cpu * self.zones.len() + zi]);
        let others = self.free_diff_sum[zi] - own_committed;
        (self.zones[zi].nr_free_pages as i64 - others - self.own_free_diff(zi)).max(0) as u64
    }

    /// The free pages `zone_watermark_ok_safe` checks: the counter, or the exact
    /// count (`zone_page_state_snapshot`) when the counter is below
    /// `percpu_drift_mark`.
    pub fn zone_free_safe(&self, zi: usize) -> u64 {
        let free = self.zone_page_state_free(zi);
        let mark = self.percpu_drift_mark(zi);
        if mark > 0 && free < mark {
            self.zones[zi].nr_free_pages
        } else {
            free
        }
    }

    /// The running CPU hands over (its slice ends, another begins on `cpu`): what it
    /// changed goes into its diff, folded if past the threshold.
    pub fn set_current_cpu(&mut self, cpu: usize) {
        let nr_zones = self.zones.len();
        for zi in 0..nr_zones {
            let own = self.own_free_diff(zi);
            let d = &mut self.free_diff[self.current_cpu * nr_zones + zi];
            self.free_diff_sum[zi] += own - i64::from(*d);
            *d = own as i32;
            self.free_attributed[zi] = self.zones[zi].nr_free_pages;
        }
        self.current_cpu = cpu;
    }

    /// `refresh_cpu_vm_stats` on every CPU (`vmstat_update`, each
    /// `vm.stat_interval`): every diff folded in.
    pub fn fold_vm_stat_diffs(&mut self) {
        self.free_diff.fill(0);
        self.free_diff_sum.fill(0);
        for (a, z) in self.free_attributed.iter_mut().zip(&self.zones) {
            *a = z.nr_free_pages;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Free lists of a zone: 10 order-0 blocks, 4 order-2, 1 order-4.
    fn free() -> [u64; NR_PAGE_ORDERS] {
        let mut nr = [0; NR_PAGE_ORDERS];
        nr[0] = 10;
        nr[2] = 4;
        nr[4] = 1;
        nr
    }

    #[test]
    fn contig_page_info_by_hand() {
        // free pages 10 + 4·4 + 16 = 42; 15 blocks. Order 2: suitable = 4 + 1·4 = 8.
        let info = fill_contig_page_info(&free(), 2);
        assert_eq!(
            info,
            ContigPageInfo {
                free_pages: 42,
                free_blocks_total: 15,
                free_blocks_suitable: 8
            }
        );
        // Order 5: nothing suitable.
        assert_eq!(fill_contig_page_info(&free(), 5).free_blocks_suitable, 0);
    }

    #[test]
    fn fragmentation_index_by_hand() {
        // Order 2 would succeed: -1000.
        assert_eq!(
            fragmentation_index(2, &fill_contig_page_info(&free(), 2)),
            -1000
        );
        // Order 5 (32 pages): 1000 - (1000 + 42000/32) / 15 = 1000 - (1000 + 1312) / 15
        // = 1000 - 154 = 846: mostly fragmentation.
        assert_eq!(
            fragmentation_index(5, &fill_contig_page_info(&free(), 5)),
            846
        );
        // One order-0 page free, order 9: 1000 - (1000 + 1000/512) / 1 = 1000 - 1001
        // = -1: lack of memory (the kernel's arithmetic gives just below 0).
        let mut one = [0; NR_PAGE_ORDERS];
        one[0] = 1;
        assert_eq!(fragmentation_index(9, &fill_contig_page_info(&one, 9)), -1);
        // No free blocks: 0.
        assert_eq!(fragmentation_index(9, &ContigPageInfo::default()), 0);
    }

    #[test]
    fn unusable_index_by_hand() {
        // Order 2: (42 - 8·4) · 1000 / 42 = 10000 / 42 = 238; in percent 23.
        let info = fill_contig_page_info(&free(), 2);
        assert_eq!(unusable_free_index(2, &info), 238);
        assert_eq!(extfrag_for_order(2, &info), 23);
        // Order 0: everything usable. Order 5: nothing.
        assert_eq!(
            unusable_free_index(0, &fill_contig_page_info(&free(), 0)),
            0
        );
        assert_eq!(
            unusable_free_index(5, &fill_contig_page_info(&free(), 5)),
            1000
        );
        assert_eq!(unusable_free_index(5, &ContigPageInfo::default()), 1000);
        assert_eq!(extfrag_for_order(5, &ContigPageInfo::default()), 0);
    }

    #[test]
    fn thousandths_print_as_the_kernel_does() {
        assert_eq!(thousandths(-1000, 2), "-1.000");
        assert_eq!(thousandths(846, 2), " 0.846");
        assert_eq!(thousandths(238, 0), "0.238");
        assert_eq!(thousandths(1000, 0), "1.000");
        // C: printf("%d.%03d", -1 / 1000, -1 % 1000) is "0.-01".
        assert_eq!(thousandths(-1, 0), "0.-01");
    }

    /// By hand from mm/vmstat.c: 4 CPUs and a 1 GiB zone (262,144 pages = 8 × 128
    /// MiB): 2·fls(4)·(1 + fls(8)) = 2·3·5 = 30. One CPU and 256 MiB: 2·1·(1 + 2) = 6.
    /// 64 CPUs and 16 GiB: 2·7·(1 + fls(128) = 9) = 126, capped at 125. Pressure:
    /// (low − min) / CPUs = (1,286 − 1,024) / 4 = 65; at least 1.
    #[test]
    fn stat_thresholds_by_hand() {
        assert_eq!(calculate_normal_threshold(262_144, 4), 30);
        assert_eq!(calculate_normal_threshold(65_536, 1), 6);
        assert_eq!(calculate_normal_threshold(4_194_304, 64), 125);
        assert_eq!(calculate_pressure_threshold(1_286, 1_024, 4), 65);
        assert_eq!(calculate_pressure_threshold(1_024, 1_024, 4), 1);
        assert_eq!(calculate_pressure_threshold(100_000, 0, 2), 125);
    }

    /// A CPU's allocations stay in its diff, unseen by the zone's counter, until they
    /// pass the threshold (30 here); other CPUs' diffs stay as they were;
    /// `vmstat_update` folds them all. Four CPUs on 1 GiB drift at most 4 × 30 = 120
    /// pages, less than low − min: no drift mark. 72 CPUs on 16 GiB have one.
    #[test]
    fn free_pages_drift_per_cpu_until_folded() {
        use crate::page_alloc::GFP_HIGHUSER_MOVABLE;
        use crate::test_util::{config, task_mm};
        let mut cfg = config(1024);
        cfg.nr_cpus = 4;
        cfg.pcp = crate::pcp::PcpVersion::Off;
        let mut mm = task_mm(cfg);
        let zi = (0..MAX_NR_ZONES)
            .rev()
            .find(|&z| mm.zones[z].is_managed())
            .unwrap();
        assert_eq!(mm.stat_threshold(zi), 30);
        assert_eq!(mm.percpu_drift_mark(zi), 0);
        let exact = |mm: &Mm| mm.zones[zi].nr_free_pages;
        let alloc = |mm: &mut Mm, n: usize| {
            for _ in 0..n {
                mm.alloc_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap();
            }
        };
        assert_eq!(mm.zone_page_state_free(zi), exact(&mm));
        alloc(&mut mm, 20);
        assert_eq!(mm.zone_page_state_free(zi), exact(&mm) + 20);
        mm.set_current_cpu(1);
        alloc(&mut mm, 20);
        assert_eq!(mm.zone_page_state_free(zi), exact(&mm) + 40);
        // CPU 1 passes 30: its diff is folded, CPU 0's is not.
        alloc(&mut mm, 11);
        assert_eq!(mm.zone_page_state_free(zi), exact(&mm) + 20);
        mm.vmstat_update();
        assert_eq!(mm.zone_page_state_free(zi), exact(&mm));
        // Many CPUs on a big zone may drift past low − min: a drift mark. 72 CPUs,
        // 16 GiB: DMA32 is 3 GiB (24 × 128 MiB), 2·fls(72)·(1 + fls(24)) = 2·7·6 =
        // 84 a CPU, 6,048 in all.
        let mut big = config(16 << 10);
        big.nr_cpus = 72;
        let mm = task_mm(big);
        let z = &mm.zones[ZONE_DMA32];
        assert_eq!(z.managed_pages >> 15, 24);
        assert_eq!(calculate_normal_threshold(z.managed_pages, 72), 84);
        assert!(z.watermark[WMARK_LOW] - z.watermark[WMARK_MIN] < 6_048);
        assert_eq!(
            mm.percpu_drift_mark(ZONE_DMA32),
            z.watermark[WMARK_HIGH] + 6_048
        );
    }
}
