//! /proc/vmstat event counters (`enum vm_event_item` and the node counters that count
//! events), under their kernel names. State counters (nr_free_pages, LRU sizes, ...) are
//! read off the live structures when a report is made, not kept here.

macro_rules! vm_events {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// One /proc/vmstat counter.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(usize)]
        pub enum Ev { $($variant),* }

        /// Counter names, indexed by `Ev as usize`.
        pub const EV_NAMES: &[&str] = &[$($name),*];
    };
}

vm_events! {
    PgallocDma32 => "pgalloc_dma32",
    PgallocNormal => "pgalloc_normal",
    Pgfree => "pgfree",
    Pgactivate => "pgactivate",
    Pgdeactivate => "pgdeactivate",
    Pgfault => "pgfault",
    Pgmajfault => "pgmajfault",
    Pgrefill => "pgrefill",
    Pgrotated => "pgrotated",
    PgstealKswapd => "pgsteal_kswapd",
    PgstealDirect => "pgsteal_direct",
    PgstealProactive => "pgsteal_proactive",
    PgscanKswapd => "pgscan_kswapd",
    PgscanDirect => "pgscan_direct",
    PgscanProactive => "pgscan_proactive",
    PgscanDirectThrottle => "pgscan_direct_throttle",
    PgscanAnon => "pgscan_anon",
    PgscanFile => "pgscan_file",
    PgstealAnon => "pgsteal_anon",
    PgstealFile => "pgsteal_file",
    PgskipDma32 => "pgskip_dma32",
    PgskipNormal => "pgskip_normal",
    Pageoutrun => "pageoutrun",
    KswapdLowWmarkHitQuickly => "kswapd_low_wmark_hit_quickly",
    KswapdHighWmarkHitQuickly => "kswapd_high_wmark_hit_quickly",
    AllocstallDma32 => "allocstall_dma32",
    AllocstallNormal => "allocstall_normal",
    Pswpin => "pswpin",
    Pswpout => "pswpout",
    PgmigrateSuccess => "pgmigrate_success",
    NrTlbRemoteFlush => "nr_tlb_remote_flush",
    NrTlbRemoteFlushReceived => "nr_tlb_remote_flush_received",
    NrTlbLocalFlushAll => "nr_tlb_local_flush_all",
    NrTlbLocalFlushOne => "nr_tlb_local_flush_one",
    PgmigrateFail => "pgmigrate_fail",
    CompactMigrateScanned => "compact_migrate_scanned",
    CompactFreeScanned => "compact_free_scanned",
    CompactIsolated => "compact_isolated",
    CompactStall => "compact_stall",
    CompactFail => "compact_fail",
    CompactSuccess => "compact_success",
    CompactDaemonWake => "compact_daemon_wake",
    CompactDaemonMigrateScanned => "compact_daemon_migrate_scanned",
    CompactDaemonFreeScanned => "compact_daemon_free_scanned",
    ThpFaultAlloc => "thp_fault_alloc",
    ThpFaultFallback => "thp_fault_fallback",
    ThpFaultFallbackCharge => "thp_fault_fallback_charge",
    ThpSplitPage => "thp_split_page",
    DropPagecache => "drop_pagecache",
    DropSlab => "drop_slab",
    SlabsScanned => "slabs_scanned",
    WorkingsetRefaultAnon => "workingset_refault_anon",
    WorkingsetRefaultFile => "workingset_refault_file",
    WorkingsetActivateAnon => "workingset_activate_anon",
    WorkingsetActivateFile => "workingset_activate_file",
    WorkingsetRestoreAnon => "workingset_restore_anon",
    WorkingsetRestoreFile => "workingset_restore_file",
    NrVmscanWrite => "nr_vmscan_write",
    NrVmscanImmediateReclaim => "nr_vmscan_immediate_reclaim",
    NrWritten => "nr_written",
    NrDirtied => "nr_dirtied",
    OomKill => "oom_kill",
    SwapRa => "swap_ra",
    SwapRaHit => "swap_ra_hit",
    PgpgIn => "pgpgin",
    PgpgOut => "pgpgout",
    UnevictablePgsCulled => "unevictable_pgs_culled",
    UnevictablePgsScanned => "unevictable_pgs_scanned",
    UnevictablePgsRescued => "unevictable_pgs_rescued",
    UnevictablePgsMlocked => "unevictable_pgs_mlocked",
    UnevictablePgsMunlocked => "unevictable_pgs_munlocked",
    UnevictablePgsCleared => "unevictable_pgs_cleared",
    UnevictablePgsStranded => "unevictable_pgs_stranded",
}

pub const NR_EVENTS: usize = EV_NAMES.len();

#[derive(Debug, Clone)]
pub struct VmStat {
    pub ev: [u64; NR_EVENTS],
}

impl Default for VmStat {
    fn default() -> Self {
        VmStat { ev: [0; NR_EVENTS] }
    }
}

impl VmStat {
    #[inline]
    pub fn count(&mut self, e: Ev, n: u64) {
        self.ev[e as usize] += n;
    }
    pub fn get(&self, e: Ev) -> u64 {
        self.ev[e as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_line_up() {
        assert_eq!(EV_NAMES[Ev::PgscanKswapd as usize], "pgscan_kswapd");
        assert_eq!(EV_NAMES[Ev::PgpgOut as usize], "pgpgout");
        assert_eq!(
            EV_NAMES[Ev::UnevictablePgsCulled as usize],
            "unevictable_pgs_culled"
        );
        assert_eq!(
            EV_NAMES[Ev::UnevictablePgsStranded as usize],
            "unevictable_pgs_stranded"
        );
        assert_eq!(NR_EVENTS, Ev::UnevictablePgsStranded as usize + 1);
    }
}
