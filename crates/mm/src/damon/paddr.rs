//! The physical address space operations (mm/damon/paddr.c, ~v6.3–v6.5): sampling
//! through the rmap, and the `pageout`, `lru_prio` and `lru_deprio` actions with the
//! anon and memcg filters.

use super::core::{evenly_split, Ctx, Region};
use super::damos::Scheme;
use super::{Action, Attrs, FilterKind, TargetConfig, DAMON_MIN_REGION};
use crate::page::{on, pg, Pfn};
use crate::vmscan::ScanControl;
use crate::Mm;

impl Mm {
    /// The initial regions: the configured ranges, or all of RAM (DAMON_RECLAIM's
    /// "biggest System RAM resource"; this machine has one), as one region each; the
    /// adaptive split then grows them toward `min_nr_regions` and beyond.
    pub(super) fn damon_pa_init_regions(&self, t: &TargetConfig, _attrs: &Attrs) -> Vec<Region> {
        let ram = self.frames.len() as u64 * DAMON_MIN_REGION;
        if let Some(nid) = t.node {
            // damo's --numa_node: the node's physical range.
            let (start, end) = (self.node_start_pfn[nid], self.node_start_pfn[nid + 1]);
            return evenly_split(
                start as u64 * DAMON_MIN_REGION,
                end as u64 * DAMON_MIN_REGION,
                1,
            );
        }
        if t.regions.is_empty() {
            return evenly_split(0, ram, 1);
        }
        t.regions
            .iter()
            .map(|&(s, e)| (s.min(ram), e.min(ram)))
            .filter(|(s, e)| e > s)
            .map(|(s, e)| Region::new(s, e))
            .collect()
    }

    /// `damon_get_folio`: the frame at a physical address, if it is on an LRU.
    fn damon_get_folio(&self, addr: u64) -> Option<Pfn> {
        let pfn = (addr / DAMON_MIN_REGION) as Pfn;
        let f = self.frames.get(pfn as usize)?;
        (f.test(pg::LRU) && f.list != on::ISOLATED).then_some(pfn)
    }

    /// `damon_pa_prepare_access_checks`: pick each region's sampling page and make it
    /// old (`damon_pa_mkold`: through the rmap if mapped, else just PG_idle).
    pub(super) fn damon_pa_prepare_access_checks(&mut self, ctx: &mut Ctx) {
        let n = ctx.nr_regions();
        self.charge(n * self.cfg.costs.damon_check_ns);
        for ti in 0..ctx.targets.len() {
            for ri in 0..ctx.targets[ti].regions.len() {
                let r = ctx.targets[ti].regions[ri];
                let addr = Self::damon_rand_addr(ctx.rng(), &r);
                ctx.targets[ti].regions[ri].sampling_addr = addr;
                let Some(pfn) = self.damon_get_folio(addr) else {
                    continue;
                };
                match self.damon_pte_of(pfn) {
                    Some((space, idx)) => {
                        self.charge(self.cfg.costs.rmap_walk_ns);
                        self.damon_ptep_mkold(pfn, space, idx);
                    }
                    None => self
                        .damon
                        .page_idle
                        .as_mut()
                        .expect("running")
                        .set_idle(pfn),
                }
            }
        }
    }

    /// `damon_pa_check_accesses`: was each region's sampled page accessed since it was
    /// made old? A region whose sampled page shares the previous one's frame reuses
    /// its answer. Returns the highest nr_accesses.
    pub(super) fn damon_pa_check_accesses(&mut self, ctx: &mut Ctx) -> u32 {
        let n = ctx.nr_regions();
        self.charge(n * self.cfg.costs.damon_check_ns);
        let mut max_nr_accesses = 0;
        let mut last: Option<(Pfn, bool)> = None;
        for t in &mut ctx.targets {
            for r in &mut t.regions {
                let pfn = (r.sampling_addr / DAMON_MIN_REGION) as Pfn;
                let young = match last {
                    Some((p, y)) if p == pfn => y,
                    _ => {
                        let y = match self.damon_get_folio(r.sampling_addr) {
                            None => false,
                            Some(pfn) => match self.damon_pte_of(pfn) {
                                Some((space, idx)) => {
                                    self.charge(self.cfg.costs.rmap_walk_ns);
                                    self.damon_pte_young(pfn, space, idx)
                                }
                                None => !self
                                    .damon
                                    .page_idle
                                    .as_ref()
                                    .expect("running")
                                    .test_idle(pfn),
                            },
                        };
                        last = Some((pfn, y));
                        y
                    }
                };
                if young {
                    r.nr_accesses += 1;
                }
                max_nr_accesses = max_nr_accesses.max(r.nr_accesses);
            }
        }
        max_nr_accesses
    }

    /// The ops-handled filters (anon, memcg) on one page: filtered out if "matches"
    /// equals the filter's `matching`.
    fn damos_pa_filter_out(&self, s: &Scheme, pfn: Pfn) -> bool {
        let f = &self.frames[pfn as usize];
        s.cfg.filters.iter().any(|flt| {
            let matched = match flt.kind {
                FilterKind::Anon => f.test(pg::SWAPBACKED),
                FilterKind::Memcg(m) => f.memcg as usize == m,
                FilterKind::Addr(..) => return false,
            };
            matched == flt.matching
        })
    }

    /// `damon_pa_apply_scheme`: the action on every LRU page of the region. Returns
    /// the bytes it applied to.
    pub(super) fn damon_pa_apply_scheme(&mut self, r: &Region, s: &Scheme) -> u64 {
        match s.cfg.action {
            Action::Pageout => self.damon_pa_pageout(r, s),
            Action::LruPrio | Action::LruDeprio => self.damon_pa_mark_accessed_or_deactivate(r, s),
            Action::MigrateHot | Action::MigrateCold => self.damon_pa_migrate(r, s),
            // Rejected at load time for paddr; nothing to do for stat.
            Action::Cold | Action::Stat => 0,
        }
    }

    /// The walk each action makes over a region: every frame looked at
    /// (`pfn_to_online_page` and a flag test, `walk_pte` each), and `f` on each LRU
    /// page that passes the scheme's filters (`scan_page` each, taken or not).
    fn damon_pa_for_each_folio(&mut self, r: &Region, s: &Scheme, mut f: impl FnMut(&mut Mm, Pfn)) {
        let (first, last) = (r.start / DAMON_MIN_REGION, r.end / DAMON_MIN_REGION);
        self.charge((last - first) * self.cfg.costs.walk_pte_ns);
        for pfn in first..last {
            let Some(pfn) = self.damon_get_folio(pfn * DAMON_MIN_REGION) else {
                continue;
            };
            self.charge(self.cfg.costs.scan_page_ns);
            if !self.damos_pa_filter_out(s, pfn) {
                f(self, pfn);
            }
        }
    }

    /// Takes LRU page `pfn` off its list (`folio_isolate_lru`) onto `list`.
    fn damon_pa_isolate(&mut self, pfn: Pfn, list: &mut Vec<Pfn>) {
        self.lruvec_del_folio(pfn);
        self.frames[pfn as usize].list = on::ISOLATED;
        list.push(pfn);
    }

    /// `damon_pa_pageout`: isolate every LRU page of the region (references and
    /// PG_young cleared: DAMON decided it is cold) and `reclaim_pages` them.
    fn damon_pa_pageout(&mut self, r: &Region, s: &Scheme) -> u64 {
        let mut list = Vec::new();
        self.damon_pa_for_each_folio(r, s, |mm, pfn| {
            mm.folio_changed(pfn);
            mm.frames[pfn as usize].clear(pg::REFERENCED);
            mm.folio_test_clear_young(pfn);
            if !mm.frames[pfn as usize].test(pg::UNEVICTABLE) {
                mm.damon_pa_isolate(pfn, &mut list);
            }
        });
        self.reclaim_pages(list) * DAMON_MIN_REGION
    }

    /// `damon_pa_mark_accessed` / `damon_pa_deactivate_pages`.
    fn damon_pa_mark_accessed_or_deactivate(&mut self, r: &Region, s: &Scheme) -> u64 {
        let mut applied = 0;
        let prio = s.cfg.action == Action::LruPrio;
        self.damon_pa_for_each_folio(r, s, |mm, pfn| {
            if prio {
                mm.folio_mark_accessed(pfn);
            } else {
                mm.folio_deactivate(pfn);
            }
            applied += DAMON_MIN_REGION;
        });
        applied
    }

    /// `damon_pa_migrate` (v6.11): isolate every LRU page of the region that passes
    /// the filters and `damon_pa_migrate_pages` them to the scheme's `target_nid`.
    /// Returns the bytes moved.
    fn damon_pa_migrate(&mut self, r: &Region, s: &Scheme) -> u64 {
        let Some(target) = s.cfg.target_nid.filter(|&n| n < self.nr_nodes()) else {
            return 0;
        };
        let mut list = Vec::new();
        self.damon_pa_for_each_folio(r, s, |mm, pfn| mm.damon_pa_isolate(pfn, &mut list));
        self.damon_pa_migrate_pages(list, target) * DAMON_MIN_REGION
    }

    /// `damon_pa_migrate_pages` → `__damon_pa_migrate_folio_list`: pages already on
    /// `target` stay; the others move there with `migrate_pages` (MIGRATE_ASYNC,
    /// MR_DAMON) into pages `alloc_migrate_folio` takes on `target` only, without
    /// reclaim (waking its kswapd when low). Whatever does not move goes back on its
    /// LRU. Returns the pages moved.
    fn damon_pa_migrate_pages(&mut self, list: Vec<Pfn>, target: usize) -> u64 {
        let mut moved = 0;
        let mut failed = false;
        for pfn in list {
            let dst = if failed || self.pfn_to_nid(pfn) == target {
                None
            } else {
                self.alloc_migrate_folio(target, 0)
            };
            let back = match dst {
                Some(dst) => match self.migrate_folio(pfn, dst) {
                    Ok(()) => {
                        moved += 1;
                        dst
                    }
                    Err(_) => {
                        self.free_pages(dst, 0);
                        pfn
                    }
                },
                None => {
                    // The target is out of free pages: the rest stay where they are
                    // (each one's allocation would fail as this one did).
                    failed |= self.pfn_to_nid(pfn) != target;
                    pfn
                }
            };
            self.frames[back as usize].list = on::NONE;
            self.lruvec_add_folio(back);
        }
        self.try_to_unmap_flush();
        moved
    }

    /// `reclaim_pages`: `shrink_folio_list` on isolated pages ignoring references
    /// (the caller already judged them cold), everything not freed put back.
    /// Returns the pages freed.
    pub fn reclaim_pages(&mut self, list: Vec<Pfn>) -> u64 {
        if list.is_empty() {
            return 0;
        }
        let mut sc = ScanControl::new(list.len() as u64, crate::zone::MAX_NR_ZONES - 1, 0);
        sc.no_demotion = true;
        let (nr_reclaimed, _stat, survivors) = self.shrink_folio_list(list, &mut sc, 0, true);
        for pfn in survivors {
            self.frames[pfn as usize].list = on::NONE;
            self.lruvec_add_folio(pfn);
        }
        nr_reclaimed
    }
}
