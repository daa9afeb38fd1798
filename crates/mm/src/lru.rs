//! The classic LRU lists of an lruvec and how pages enter and move on them
//! (include/linux/mm_inline.h, mm/swap.c; kernel-reference §2.1, §2.12).

use super::list::LruList;
use super::page::{lru, on, pg, Pfn};
use super::zone::MAX_NR_ZONES;
use super::Mm;
use crate::vm_event_item::Ev;

/// `struct lruvec` (classic part): five lists, their sizes per zone, the anon/file
/// reclaim costs and the workingset clock.
#[derive(Debug, Default)]
pub struct Lruvec {
    /// The lruvec of its memcg's parent on the same node (None for the root's), and
    /// the id of its node's first zone: fixed at boot, read on every size update.
    pub parent: Option<usize>,
    pub zone_base: usize,
    pub lists: [LruList; lru::NR_LRU_LISTS],
    /// Pages of each list in each zone (`lruvec_lru_size` sums zones up to reclaim_idx).
    pub zone_size: [[u64; MAX_NR_ZONES]; lru::NR_LRU_LISTS],
    /// Pages of each list in this memcg and its descendants (`lruvec_page_state`).
    pub hier: [u64; lru::NR_LRU_LISTS],
    /// `lru_note_cost` accumulators that balance anon against file scanning.
    pub anon_cost: u64,
    pub file_cost: u64,
    /// The non-resident clock (`nonresident_age`): evictions plus activations.
    pub nonresident_age: u64,
    /// WORKINGSET_ACTIVATE_{ANON,FILE} on this lruvec, and their values at the last
    /// `snapshot_refaults` (index 0 anon, 1 file).
    pub workingset_activate: [u64; 2],
    pub refaults: [u64; 2],
    /// The rstat-flushed copies of `hier` and `workingset_activate` (what
    /// `lruvec_page_state` returns under `memcg_stats_flush = "rstat"`), and the
    /// updates to this memcg's subtree since its last flush (`vmstats->stats_updates`).
    pub hier_flushed: [u64; lru::NR_LRU_LISTS],
    pub activate_flushed: [u64; 2],
    pub stats_updates: u64,
    /// LRUVEC_NODE_CONGESTED (set by kswapd) and LRUVEC_CGROUP_CONGESTED (set by
    /// cgroup reclaim): every dirty page reclaim met was already under writeback and
    /// tagged for immediate reclaim.
    pub node_congested: bool,
    pub cgroup_congested: bool,
    /// The multi-gen LRU's generations (`lruvec->lrugen`), used when it is enabled.
    pub lrugen: super::lru_gen::LruGenFolio,
    /// A research policy's state (`kernel.lru = "lru"` etc.), made at the first page.
    pub policy: Option<Box<super::lru_policy::LruvecPolicy>>,
}

impl Lruvec {
    /// `lruvec_lru_size(lruvec, lru, zone_idx)`: pages on `l` in zones 0..=zone_idx.
    pub fn lru_size(&self, l: usize, reclaim_idx: usize) -> u64 {
        self.zone_size[l][..=reclaim_idx].iter().sum()
    }

    /// All pages on the four evictable lists, with descendants.
    pub fn evictable_pages(&self) -> u64 {
        lru::EVICTABLE.iter().map(|&l| self.hier[l]).sum()
    }
}

/// The list a page's flags select (`folio_lru_list`).
#[inline]
fn lru_list_of(f: &super::page::Frame) -> usize {
    if f.test(pg::UNEVICTABLE) {
        lru::UNEVICTABLE
    } else {
        lru::of(f.is_file_lru(), f.test(pg::ACTIVE))
    }
}

impl Mm {
    /// `folio_lru_list`.
    pub fn folio_lru_list(&self, pfn: Pfn) -> usize {
        lru_list_of(&self.frames[pfn as usize])
    }

    fn lru_account(&mut self, pfn: Pfn, l: usize, add: bool) {
        let (zi, lv) = (
            self.frames[pfn as usize].zone as usize,
            self.folio_lruvec(pfn),
        );
        self.update_lru_size(lv, l, zi, if add { 1 } else { -1 });
    }

    /// `update_lru_size`: the zone's, lruvec `lv`'s and its ancestors' (on the same
    /// node) counters of list `l` in zone type `zi` (the multi-gen LRU keeps these for
    /// its two youngest generations as "active", the others as "inactive").
    pub fn update_lru_size(&mut self, lv: usize, l: usize, zi: usize, delta: i64) {
        // Once here, so the fixed-size arrays below need no check of their own.
        assert!(l < lru::NR_LRU_LISTS && zi < MAX_NR_ZONES);
        let add = |x: &mut u64| *x = x.wrapping_add_signed(delta);
        let zone = self.lruvecs[lv].zone_base + zi;
        add(&mut self.zones[zone].lru_pages[l]);
        add(&mut self.lruvecs[lv].zone_size[l][zi]);
        let mut m = Some(lv);
        while let Some(c) = m {
            let v = &mut self.lruvecs[c];
            add(&mut v.hier[l]);
            // memcg_rstat_updated: the update is pending up the tree.
            v.stats_updates += delta.unsigned_abs();
            m = v.parent;
        }
    }

    /// A page moving from list `from` to list `to` of the same lruvec and zone: the
    /// two `update_lru_size` calls (−1, +1) in one walk up the tree.
    pub fn move_lru_size(&mut self, lv: usize, from: usize, to: usize, zi: usize) {
        assert!(from < lru::NR_LRU_LISTS && to < lru::NR_LRU_LISTS && zi < MAX_NR_ZONES);
        let zone = self.lruvecs[lv].zone_base + zi;
        let z = &mut self.zones[zone].lru_pages;
        z[from] = z[from].wrapping_sub(1);
        z[to] = z[to].wrapping_add(1);
        let v = &mut self.lruvecs[lv].zone_size;
        v[from][zi] = v[from][zi].wrapping_sub(1);
        v[to][zi] = v[to][zi].wrapping_add(1);
        let mut m = Some(lv);
        while let Some(c) = m {
            let v = &mut self.lruvecs[c];
            v.hier[from] = v.hier[from].wrapping_sub(1);
            v.hier[to] = v.hier[to].wrapping_add(1);
            v.stats_updates += 2;
            m = v.parent;
        }
    }

    /// `lruvec_add_folio`: onto the head of the list its flags select; sets PG_lru.
    pub fn lruvec_add_folio(&mut self, pfn: Pfn) {
        self.lruvec_add(pfn, false);
    }

    /// `lruvec_add_folio_tail`.
    pub fn lruvec_add_folio_tail(&mut self, pfn: Pfn) {
        self.lruvec_add(pfn, true);
    }

    fn lruvec_add(&mut self, pfn: Pfn, tail: bool) {
        if self.lru_gen_enabled() && self.lru_gen_add_folio(pfn, tail) {
            return;
        }
        if self.cfg.lru_policy.is_some() {
            // Under a research policy nothing is active: its order is the policy's.
            self.frames[pfn as usize].clear(pg::ACTIVE);
        }
        let l = self.folio_lru_list(pfn);
        let lv = self.folio_lruvec(pfn);
        let list = &mut self.lruvecs[lv].lists[l];
        if tail {
            list.add_tail(&mut self.frames, pfn);
        } else {
            list.add_head(&mut self.frames, pfn);
        }
        let f = &mut self.frames[pfn as usize];
        f.set(pg::LRU);
        f.list = l as u8;
        self.lru_account(pfn, l, true);
        if self.cfg.lru_policy.is_some() && l != lru::UNEVICTABLE {
            self.policy_add_folio(pfn);
        }
    }

    /// A research policy hears of a page joining its lruvec (made with the memcg's
    /// reach: its and its ancestors' memory.max, at most the node's memory).
    fn policy_add_folio(&mut self, pfn: Pfn) {
        let f = self.frames[pfn as usize];
        let memcg = f.memcg as usize;
        let lv = self.folio_lruvec(pfn);
        if self.lruvecs[lv].policy.is_none() {
            let mut capacity = self.node_managed_pages(self.lruvec_pgdat(lv));
            let mut m = Some(memcg);
            while let Some(c) = m {
                capacity = capacity.min(self.memcg.counters.c[c].max);
                m = self.memcg.cgs[c].parent;
            }
            let factory = self.cfg.lru_policy.as_ref().expect("a research policy");
            // At least 64 pages: S3-FIFO's small queue (10 %) must take a page.
            let p = super::lru_policy::LruvecPolicy::new(factory, capacity.max(64));
            self.lruvecs[lv].policy = Some(Box::new(p));
        }
        let key = super::lru_policy::page_key(f.mapping, f.index);
        let p = self.lruvecs[lv].policy.as_mut().expect("made above");
        p.add(f.is_file_lru(), key, pfn);
    }

    /// A research policy hears of an access to a page on its LRU (an isolated or
    /// unevictable page is not in the policy).
    pub fn policy_access(&mut self, pfn: Pfn) {
        let f = &self.frames[pfn as usize];
        if !f.test(pg::LRU) || f.test(pg::UNEVICTABLE) {
            return;
        }
        let key = super::lru_policy::page_key(f.mapping, f.index);
        let lv = self.folio_lruvec(pfn);
        if let Some(p) = self.lruvecs[lv].policy.as_mut() {
            p.access(f.is_file_lru(), key);
        }
    }

    /// `lruvec_del_folio`: off whatever LRU list it is on; clears PG_lru.
    pub fn lruvec_del_folio(&mut self, pfn: Pfn) {
        if self.frames[pfn as usize].list & 0xf0 == on::LRU_GEN {
            self.lru_gen_del_folio(pfn, false);
            return;
        }
        let (l, lv) = (
            self.frames[pfn as usize].list as usize,
            self.folio_lruvec(pfn),
        );
        debug_assert!(l < lru::NR_LRU_LISTS, "pfn {pfn} not on an LRU");
        self.lruvecs[lv].lists[l].del(&mut self.frames, pfn);
        let f = &mut self.frames[pfn as usize];
        f.clear(pg::LRU);
        f.list = on::NONE;
        self.lru_account(pfn, l, false);
        if self.cfg.lru_policy.is_none() {
            return;
        }
        if let Some(p) = self.lruvecs[lv].policy.as_mut() {
            let f = &self.frames[pfn as usize];
            p.remove(
                f.is_file_lru(),
                super::lru_policy::page_key(f.mapping, f.index),
            );
        }
    }

    /// `move_folios_to_lru`: isolated pages back onto the lists their flags select, in
    /// order, at the heads; one found unevictable goes through `folio_putback_lru`
    /// (culled to the unevictable list). The kernel updates the list sizes per folio under the
    /// lruvec's lock; nothing reads them in between, so here each (memcg, list, zone)
    /// gets the batch's sum at once. Under MGLRU or a research policy, page by page.
    pub fn move_folios_to_lru(&mut self, pfns: &[Pfn]) {
        if self.lru_gen_enabled() || self.cfg.lru_policy.is_some() {
            for &pfn in pfns {
                if !self.folio_evictable(pfn) {
                    self.lru_add_evictability(pfn);
                }
                self.lruvec_add_folio(pfn);
            }
            return;
        }
        let mut added = [[0i64; MAX_NR_ZONES]; lru::NR_LRU_LISTS];
        let mut batch_lruvec = None;
        for &pfn in pfns {
            if !self.folio_evictable(pfn) {
                self.lru_add_evictability(pfn);
            }
            let lv = self.folio_lruvec(pfn);
            let f = &mut self.frames[pfn as usize];
            let l = lru_list_of(f);
            f.set(pg::LRU);
            f.list = l as u8;
            let zi = f.zone as usize;
            if batch_lruvec != Some(lv) {
                if let Some(m) = batch_lruvec {
                    self.add_lru_sizes(m, &mut added);
                }
                batch_lruvec = Some(lv);
            }
            self.lruvecs[lv].lists[l].add_head(&mut self.frames, pfn);
            added[l][zi] += 1;
        }
        if let Some(m) = batch_lruvec {
            self.add_lru_sizes(m, &mut added);
        }
    }

    /// `update_lru_size` for each list and zone of lruvec `lv` with pages added;
    /// zeroes `added`.
    fn add_lru_sizes(&mut self, lv: usize, added: &mut [[i64; MAX_NR_ZONES]; lru::NR_LRU_LISTS]) {
        for (l, zones) in added.iter_mut().enumerate() {
            for (zi, n) in zones.iter_mut().enumerate() {
                if *n != 0 {
                    self.update_lru_size(lv, l, zi, *n);
                    *n = 0;
                }
            }
        }
    }

    /// `folio_add_lru`: a new page joins the LRU (inactive unless marked active).
    /// Under MGLRU a page added in a page fault (outside reclaim) is active: it goes
    /// to the youngest generation.
    pub fn folio_add_lru(&mut self, pfn: Pfn) {
        if self.lru_gen_enabled()
            && self.in_lru_fault
            && !self.in_reclaim
            && !self.frames[pfn as usize].test(pg::UNEVICTABLE)
        {
            self.frames[pfn as usize].set(pg::ACTIVE);
        }
        self.lruvec_add_folio(pfn);
    }

    /// `folio_activate` / `lru_activate`: move an inactive page to the active list.
    pub fn folio_activate(&mut self, pfn: Pfn) {
        let f = &self.frames[pfn as usize];
        if self.cfg.lru_policy.is_some()
            || !f.test(pg::LRU)
            || f.test(pg::ACTIVE)
            || f.test(pg::UNEVICTABLE)
        {
            return;
        }
        self.lruvec_del_folio(pfn);
        self.frames[pfn as usize].set(pg::ACTIVE);
        self.lruvec_add_folio(pfn);
        let memcg = self.frames[pfn as usize].memcg as usize;
        self.count_memcg(memcg, Ev::Pgactivate, 1);
    }

    /// `folio_deactivate` / `lru_deactivate`: an active page (any page under MGLRU)
    /// goes to the inactive list's head, references cleared (MADV_COLD, DAMOS
    /// `cold` and `lru_deprio`).
    pub fn folio_deactivate(&mut self, pfn: Pfn) {
        let f = &self.frames[pfn as usize];
        if self.cfg.lru_policy.is_some()
            || !f.test(pg::LRU)
            || f.test(pg::UNEVICTABLE)
            || !(f.test(pg::ACTIVE) || self.lru_gen_enabled())
        {
            return;
        }
        self.folio_changed(pfn);
        self.lruvec_del_folio(pfn);
        let f = &mut self.frames[pfn as usize];
        f.clear(pg::ACTIVE);
        f.clear(pg::REFERENCED);
        self.lruvec_add_folio(pfn);
        let memcg = self.frames[pfn as usize].memcg as usize;
        self.count_memcg(memcg, Ev::Pgdeactivate, 1);
    }

    /// Whether [`Mm::folio_mark_accessed`] would change nothing on this folio, for a
    /// reader that skips such reads (`workload::skip_fio`). Classic: referenced, and
    /// active or unevictable. MGLRU (`lru_gen_inc_refs`): unevictable, or referenced
    /// with its counter saturated and PG_workingset set. Never under a research policy
    /// or page-idle tracking, which hear of every access.
    pub fn folio_access_settled(&self, pfn: Pfn) -> bool {
        if self.cfg.lru_policy.is_some() || self.damon.page_idle.is_some() {
            return false;
        }
        let f = &self.frames[pfn as usize];
        if self.lru_gen_enabled() {
            use super::lru_gen::{folio, LRU_REFS_WIDTH};
            return f.test(pg::UNEVICTABLE)
                || (f.test(pg::REFERENCED)
                    && f.test(pg::WORKINGSET)
                    && folio::refs_counter(f) == (1 << LRU_REFS_WIDTH) - 1);
        }
        f.test(pg::REFERENCED) && (f.test(pg::ACTIVE) || f.test(pg::UNEVICTABLE))
    }

    /// `folio_mark_accessed` (classic): a page touched through read() needs two touches
    /// to be activated; the activation ticks the workingset clock. The classic path
    /// also clears PG_idle; MGLRU's returns before that, as the kernel's does, so
    /// DAMON's paddr sampling does not see read() accesses under MGLRU.
    pub fn folio_mark_accessed(&mut self, pfn: Pfn) {
        if self.lru_gen_enabled() {
            self.lru_gen_inc_refs(pfn);
            return;
        }
        if self.cfg.lru_policy.is_some() {
            self.folio_clear_idle(pfn);
            self.policy_access(pfn);
            return;
        }
        self.folio_clear_idle(pfn);
        let f = &mut self.frames[pfn as usize];
        if !f.test(pg::REFERENCED) {
            f.set(pg::REFERENCED);
        } else if f.test(pg::UNEVICTABLE) {
        } else if !f.test(pg::ACTIVE) {
            self.folio_activate(pfn);
            self.frames[pfn as usize].clear(pg::REFERENCED);
            self.workingset_activation(pfn);
        }
    }

    /// `folio_rotate_reclaimable`: writeback finished on a page reclaim wanted gone;
    /// move it to the inactive tail so the next scan frees it.
    pub fn folio_rotate_reclaimable(&mut self, pfn: Pfn) {
        let f = &self.frames[pfn as usize];
        // A research policy keeps its own order: the page stays where it was put back.
        if self.cfg.lru_policy.is_some()
            || f.test(pg::DIRTY)
            || f.test(pg::UNEVICTABLE)
            || !f.test(pg::LRU)
        {
            return;
        }
        self.folio_changed(pfn);
        self.lruvec_del_folio(pfn);
        self.frames[pfn as usize].clear(pg::ACTIVE);
        self.lruvec_add_folio_tail(pfn);
        self.count(Ev::Pgrotated, 1);
    }

    /// `lru_note_cost`: charge reclaim cost (32 units per page of I/O, 1 per rotation)
    /// to one side, halving both sides once they exceed a quarter of the LRU. With
    /// memcg the walk also covers the ancestors' lruvecs on the same node.
    pub fn lru_note_cost(&mut self, lv: usize, file: bool, nr_io: u64, nr_rotated: u64) {
        let cost = nr_io * super::vmscan::SWAP_CLUSTER_MAX + nr_rotated;
        let mut m = Some(lv);
        while let Some(c) = m {
            let v = &mut self.lruvecs[c];
            if file {
                v.file_cost += cost;
            } else {
                v.anon_cost += cost;
            }
            let lrusize = v.evictable_pages();
            if v.file_cost + v.anon_cost > lrusize / 4 {
                v.file_cost /= 2;
                v.anon_cost /= 2;
            }
            m = self.parent_lruvec(c);
        }
    }
}
