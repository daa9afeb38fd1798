//! The timeseries written to timeseries.csv: one row per sample interval.

use crate::mm::memcontrol::{MemcgEvents, PeakFile};
use crate::mm::page::lru;
use crate::mm::Mm;
use crate::stats::vmstat::{Ev, NR_EVENTS};

/// Columns, in order. Rates are per second over the interval that ends at `time_s`.
pub const COLUMNS: &[&str] = &[
    "time_s",
    "nr_free_pages",
    "nr_inactive_anon",
    "nr_active_anon",
    "nr_inactive_file",
    "nr_active_file",
    "nr_unevictable",
    "nr_dirty",
    "nr_writeback",
    "swap_used_pages",
    "zram_pool_pages",
    "pgscan_kswapd_per_s",
    "pgscan_direct_per_s",
    "pgsteal_kswapd_per_s",
    "pgsteal_direct_per_s",
    "pswpin_per_s",
    "pswpout_per_s",
    "workingset_refault_anon_per_s",
    "workingset_refault_file_per_s",
    "pgmajfault_per_s",
    "psi_some_pct",
    "psi_full_pct",
];

#[derive(Debug, Clone, Default)]
pub struct TimeSeries {
    pub rows: Vec<Vec<f64>>,
    last_ev: Option<[u64; NR_EVENTS]>,
    last_t_ns: u64,
    /// Extra columns after `COLUMNS`, in pages: `memory.current:<path>` per cgroup,
    /// then `memory.peak:<path>` and `memory.swap.peak:<path>` per cgroup (what a
    /// freshly opened file shows: the peak since the run began), then
    /// `memory.events.local.<key>:<path>` per key and cgroup (counts so far), then
    /// `memory.peak[FD]:<path>` and `memory.swap.peak[FD]:<path>` per named open file
    /// (what a read through it shows); then, on a machine of several nodes, per node
    /// `nodeN/nr_free_pages` and its LRU sizes (pages), and its
    /// `nodeN/pgdemote_per_s` (kswapd and direct, from the node) and
    /// `nodeN/pgpromote_success_per_s` (to the node).
    pub cgroup_columns: Vec<String>,
    /// Each node's demotions and promotions at the last row.
    last_tier: Vec<[u64; 2]>,
}

/// The per-node columns' names after `nodeN/`, in order.
const NODE_COLUMNS: [&str; 7] = [
    "nr_free_pages",
    "nr_inactive_anon",
    "nr_active_anon",
    "nr_inactive_file",
    "nr_active_file",
    "pgdemote_per_s",
    "pgpromote_success_per_s",
];

/// A node's demotions (kswapd and direct) and promotions so far.
fn node_tier(mm: &Mm, nid: usize) -> [u64; 2] {
    use crate::mm::memory_tiers::TierStat;
    [
        mm.node_tier_stat(nid, TierStat::PgdemoteKswapd)
            + mm.node_tier_stat(nid, TierStat::PgdemoteDirect),
        mm.node_tier_stat(nid, TierStat::PgpromoteSuccess),
    ]
}

impl TimeSeries {
    /// Adds the row for time `t_ns`, with the stall times (ns) PSI's totals grew by
    /// since the last row.
    pub fn sample(&mut self, mm: &Mm, t_ns: u64, psi_some_ns: u64, psi_full_ns: u64) {
        let prev = self.last_ev.unwrap_or([0; NR_EVENTS]);
        let dt_s = (t_ns - self.last_t_ns) as f64 / 1e9;
        let rate = |e: Ev| {
            if dt_s > 0.0 {
                (mm.vmstat.get(e) - prev[e as usize]) as f64 / dt_s
            } else {
                0.0
            }
        };
        let pct = |ns: u64| {
            if dt_s > 0.0 {
                ns as f64 / 1e7 / dt_s
            } else {
                0.0
            }
        };
        let swap_used = mm.swap.as_ref().map_or(0, |s| s.nr_used_slots());
        let t = &mm.memcg;
        if self.cgroup_columns.is_empty() {
            for file in ["memory.current", "memory.peak", "memory.swap.peak"] {
                self.cgroup_columns
                    .extend(t.cgs.iter().skip(1).map(|c| format!("{file}:{}", c.path)));
            }
            for (key, _) in MemcgEvents::default().items() {
                self.cgroup_columns.extend(
                    t.cgs
                        .iter()
                        .skip(1)
                        .map(|c| format!("memory.events.local.{key}:{}", c.path)),
                );
            }
            self.cgroup_columns.extend(
                t.peak_fds
                    .iter()
                    .map(|f| format!("{}[{}]:{}", f.file.name(), f.name, t.cgs[f.memcg].path)),
            );
            if mm.nr_nodes() > 1 {
                for nid in 0..mm.nr_nodes() {
                    self.cgroup_columns
                        .extend(NODE_COLUMNS.iter().map(|c| format!("node{nid}/{c}")));
                }
            }
        }
        let mut nodes = Vec::new();
        if mm.nr_nodes() > 1 {
            self.last_tier.resize(mm.nr_nodes(), [0; 2]);
            for nid in 0..mm.nr_nodes() {
                let now = node_tier(mm, nid);
                let prev = self.last_tier[nid];
                let per_s = |i: usize| {
                    if dt_s > 0.0 {
                        (now[i] - prev[i]) as f64 / dt_s
                    } else {
                        0.0
                    }
                };
                nodes.push(mm.node_free_pages(nid) as f64);
                for l in [
                    lru::INACTIVE_ANON,
                    lru::ACTIVE_ANON,
                    lru::INACTIVE_FILE,
                    lru::ACTIVE_FILE,
                ] {
                    nodes.push(mm.node_lru_pages(nid, l) as f64);
                }
                nodes.push(per_s(0));
                nodes.push(per_s(1));
                self.last_tier[nid] = now;
            }
        }
        let cgroups = (1..t.cgs.len())
            .map(|m| t.counters.c[m].usage)
            .chain((1..t.cgs.len()).map(|m| t.peak_show(m, PeakFile::Memory, None)))
            .chain((1..t.cgs.len()).map(|m| t.peak_show(m, PeakFile::Swap, None)))
            .chain(
                (0..MemcgEvents::default().items().len())
                    .flat_map(|k| (1..t.cgs.len()).map(move |m| t.cgs[m].events.items()[k].1)),
            )
            .chain((0..t.peak_fds.len()).map(|fd| {
                let f = &t.peak_fds[fd];
                t.peak_show(f.memcg, f.file, Some(fd))
            }))
            .map(|pages| pages as f64);
        self.rows.push(vec![
            t_ns as f64 / 1e9,
            mm.nr_free_pages() as f64,
            mm.global_lru_pages(lru::INACTIVE_ANON) as f64,
            mm.global_lru_pages(lru::ACTIVE_ANON) as f64,
            mm.global_lru_pages(lru::INACTIVE_FILE) as f64,
            mm.global_lru_pages(lru::ACTIVE_FILE) as f64,
            mm.global_lru_pages(lru::UNEVICTABLE) as f64,
            mm.wb.nr_dirty as f64,
            mm.wb.nr_writeback as f64,
            swap_used as f64,
            mm.zram_pages() as f64,
            rate(Ev::PgscanKswapd),
            rate(Ev::PgscanDirect),
            rate(Ev::PgstealKswapd),
            rate(Ev::PgstealDirect),
            rate(Ev::Pswpin),
            rate(Ev::Pswpout),
            rate(Ev::WorkingsetRefaultAnon),
            rate(Ev::WorkingsetRefaultFile),
            rate(Ev::Pgmajfault),
            pct(psi_some_ns),
            pct(psi_full_ns),
        ]);
        let row = self.rows.last_mut().expect("pushed");
        row.extend(cgroups);
        row.extend(nodes);
        self.last_ev = Some(mm.vmstat.ev);
        self.last_t_ns = t_ns;
    }

    /// The CSV text: a header, then one line per row (integers where exact).
    pub fn to_csv(&self) -> String {
        let mut s = COLUMNS.join(",");
        for c in &self.cgroup_columns {
            s.push(',');
            s.push_str(c);
        }
        s.push('\n');
        for r in &self.rows {
            let cells: Vec<String> = r
                .iter()
                .map(|v| {
                    if v.fract() == 0.0 && v.abs() < 1e15 {
                        format!("{}", *v as i64)
                    } else {
                        format!("{v:.3}")
                    }
                })
                .collect();
            s.push_str(&cells.join(","));
            s.push('\n');
        }
        s
    }
}
