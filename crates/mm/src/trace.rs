//! Tracepoints: ftrace-style lines under the kernel's event names and fields, as
//! `trace_pipe` would show them, bounded by a line limit with a closing "dropped" line.

use std::fmt::Write as _;

macro_rules! trace_events {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// A tracepoint.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u32)]
        pub enum Tp { $($variant),* }

        /// Event names, indexed by `Tp as usize`.
        pub const TP_NAMES: &[&str] = &[$($name),*];
        const ALL: &[Tp] = &[$(Tp::$variant),*];
    };
}

trace_events! {
    KswapdWake => "mm_vmscan_kswapd_wake",
    KswapdSleep => "mm_vmscan_kswapd_sleep",
    WakeupKswapd => "mm_vmscan_wakeup_kswapd",
    DirectReclaimBegin => "mm_vmscan_direct_reclaim_begin",
    DirectReclaimEnd => "mm_vmscan_direct_reclaim_end",
    NodeReclaimBegin => "mm_vmscan_node_reclaim_begin",
    NodeReclaimEnd => "mm_vmscan_node_reclaim_end",
    LruShrinkInactive => "mm_vmscan_lru_shrink_inactive",
    LruShrinkActive => "mm_vmscan_lru_shrink_active",
    LruIsolate => "mm_vmscan_lru_isolate",
    WriteFolio => "mm_vmscan_write_folio",
    BalanceDirtyPages => "balance_dirty_pages",
    BdiDirtyRatelimit => "bdi_dirty_ratelimit",
    MarkVictim => "mark_victim",
    VmscanThrottled => "mm_vmscan_throttled",
    WritebackCongestionWait => "writeback_congestion_wait",
    WritebackWaitIffCongested => "writeback_wait_iff_congested",
    DamonAggregated => "damon_aggregated",
    PageAllocExtfrag => "mm_page_alloc_extfrag",
    PagePcpuDrain => "mm_page_pcpu_drain",
    CompactionBegin => "mm_compaction_begin",
    CompactionEnd => "mm_compaction_end",
    CompactionIsolateMigratepages => "mm_compaction_isolate_migratepages",
    CompactionIsolateFreepages => "mm_compaction_isolate_freepages",
    CompactionTryToCompactPages => "mm_compaction_try_to_compact_pages",
    CompactionDeferred => "mm_compaction_deferred",
    CompactionDeferCompaction => "mm_compaction_defer_compaction",
    CompactionDeferReset => "mm_compaction_defer_reset",
    CompactionWakeupKcompactd => "mm_compaction_wakeup_kcompactd",
    CompactionKcompactdWake => "mm_compaction_kcompactd_wake",
    CompactionKcompactdSleep => "mm_compaction_kcompactd_sleep",
    PageCacheSyncRa => "page_cache_sync_ra",
    PageCacheAsyncRa => "page_cache_async_ra",
    PageCacheRaUnbounded => "page_cache_ra_unbounded",
    FilemapFault => "mm_filemap_fault",
    FilemapMapPages => "mm_filemap_map_pages",
    ShrinkSlabStart => "mm_shrink_slab_start",
    ShrinkSlabEnd => "mm_shrink_slab_end",
}

/// Default cap on trace lines.
pub const DEFAULT_LIMIT: usize = 1_000_000;

#[derive(Debug, Clone)]
pub struct Tracer {
    enabled: u64,
    limit: usize,
    /// Lines with their timestamps: slices run one after another, so lines come in
    /// out of time order across tasks and are merged by time at the end, as ftrace
    /// merges its per-CPU buffers.
    lines: Vec<(u64, String)>,
    pub dropped: u64,
}

impl Tracer {
    /// From `--trace EVENT,...` (`all` for every event).
    pub fn parse(list: &str, limit: usize) -> Result<Tracer, String> {
        let mut enabled = 0u64;
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if name == "all" {
                enabled = u64::MAX;
                continue;
            }
            match TP_NAMES.iter().position(|n| *n == name) {
                Some(i) => enabled |= 1 << i,
                None => {
                    return Err(format!(
                        "unknown event `{name}` (known: all, {})",
                        TP_NAMES.join(", ")
                    ));
                }
            }
        }
        if enabled == 0 {
            return Err("no events given".into());
        }
        Ok(Tracer {
            enabled,
            limit,
            lines: Vec::new(),
            dropped: 0,
        })
    }

    #[inline]
    pub fn on(&self, tp: Tp) -> bool {
        self.enabled >> (tp as u32) & 1 == 1
    }

    /// Appends one line: `comm-pid [cpu] ..... seconds: event: fields`.
    pub fn emit(
        &mut self,
        comm: &str,
        pid: usize,
        cpu: usize,
        now_ns: u64,
        tp: Tp,
        fields: std::fmt::Arguments,
    ) {
        if self.lines.len() >= self.limit {
            self.dropped += 1;
            return;
        }
        let mut line = String::with_capacity(160);
        let _ = writeln!(
            line,
            "{:>16}-{:<7} [{:03}] ..... {:>5}.{:06}: {}: {}",
            comm,
            pid,
            cpu,
            now_ns / 1_000_000_000,
            now_ns % 1_000_000_000 / 1000,
            TP_NAMES[tp as usize],
            fields
        );
        self.lines.push((now_ns, line));
    }

    /// The whole trace, with the note of dropped events if the limit was hit.
    pub fn finish(&self) -> String {
        let mut s = format!(
            "# tracer: reclaimsim\n# events: {}\n",
            self.enabled_names().join(",")
        );
        let mut lines: Vec<&(u64, String)> = self.lines.iter().collect();
        lines.sort_by_key(|(t, _)| *t); // stable: same-time lines keep their order
        for (_, l) in lines {
            s.push_str(l);
        }
        if self.dropped > 0 {
            let _ = writeln!(
                s,
                "# dropped {} events: the limit of {} lines was reached",
                self.dropped, self.limit
            );
        }
        s
    }

    fn enabled_names(&self) -> Vec<&'static str> {
        ALL.iter()
            .filter(|t| self.on(**t))
            .map(|t| TP_NAMES[*t as usize])
            .collect()
    }
}

/// `trace_reclaim_flags`: which side and that reclaim writes asynchronously.
pub fn reclaim_flags(file: bool) -> &'static str {
    if file {
        "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
    } else {
        "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_bound() {
        assert!(Tracer::parse("mm_vmscan_kswapd_wake,nope", 10)
            .unwrap_err()
            .contains("unknown event `nope`"));
        let mut t = Tracer::parse("mm_vmscan_kswapd_wake", 2).unwrap();
        assert!(t.on(Tp::KswapdWake) && !t.on(Tp::KswapdSleep));
        for i in 0..5 {
            t.emit(
                "kswapd0",
                2,
                1,
                1_500_000_000 + i,
                Tp::KswapdWake,
                format_args!("nid=0 zid=1 order=0"),
            );
        }
        let s = t.finish();
        assert!(s.contains("         kswapd0-2       [001] .....     1.500000: mm_vmscan_kswapd_wake: nid=0 zid=1 order=0\n"), "{s}");
        assert_eq!(
            s.lines()
                .filter(|l| l.contains("mm_vmscan_kswapd_wake:"))
                .count(),
            2
        );
        assert!(s.ends_with("# dropped 3 events: the limit of 2 lines was reached\n"));
        assert!(Tracer::parse("all", 1).unwrap().on(Tp::MarkVictim));
    }
}
