//! Page migration (mm/migrate.c `migrate_pages` → `migrate_folio_move`), the step
//! compaction is made of: an isolated LRU folio's contents, state and mappings move
//! to a free page, and the old page goes back to the buddy allocator. kernel-reference
//! §7.2.

use super::page::{on, pg, pte, Frame, Pfn};
use super::Mm;

/// Why a folio was not migrated (`migrate_pages`' -EBUSY / -EAGAIN cases).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrateFail {
    /// Under writeback: MIGRATE_ASYNC and MIGRATE_SYNC_LIGHT do not wait for it.
    Writeback,
}

impl Mm {
    /// Migrates the isolated order-0 folio `src` (off its LRU, `on::ISOLATED`) into the
    /// free page `dst` taken off the buddy lists: `folio_copy`, `folio_migrate_mapping`
    /// (its page-cache or swap-cache slot), `folio_migrate_flags` (LRU, memcg, dirty,
    /// swap-cache state, DAMON's idle and young bits) and `remove_migration_ptes` (the
    /// PTE, its accessed and dirty bits kept). `dst` ends isolated, for the caller to put
    /// back on the LRU (`putback_movable_pages`); `src` is freed. Costs an rmap walk to
    /// unmap, a page copy, and a walk to remap.
    pub fn migrate_folio(&mut self, src: Pfn, dst: Pfn) -> Result<(), MigrateFail> {
        let f = self.frames[src as usize];
        debug_assert_eq!(f.list, on::ISOLATED, "pfn {src} not isolated");
        if f.test(pg::WRITEBACK) {
            self.count(crate::vm_event_item::Ev::PgmigrateFail, 1);
            return Err(MigrateFail::Writeback);
        }
        let mapped = f.mapping != u32::MAX && (self.spaces.get(f.mapping as usize)).is_some();
        self.charge(self.cfg.costs.copy_page_ns + 2 * self.cfg.costs.rmap_walk_ns);
        // The new frame takes everything but its place in memory.
        let zone = self.frames[dst as usize].zone;
        self.frames[dst as usize] = Frame {
            zone,
            prev: super::page::NIL,
            next: super::page::NIL,
            list: on::ISOLATED,
            ..f
        };
        if mapped {
            // remove_migration_ptes: a fresh entry for `dst` (its node's mark; a NUMA
            // hint's protection gone) keeping the accessed and dirty bits.
            let fresh = self.mk_pte(dst);
            let s = &mut self.spaces[f.mapping as usize];
            let e = s.pte(f.index);
            if pte::is_present(e) && pte::pfn(e) == src {
                *s.pte_mut(f.index) = fresh | e & (pte::YOUNG | pte::DIRTY);
                // try_to_migrate with TTU_BATCH_FLUSH: the caller flushes the batch.
                let mm = s.mm();
                self.tlb_unmap_pending(mm, false);
            }
        }
        if f.test(pg::SWAPCACHE) {
            if let Some(sw) = self.swap.as_mut() {
                sw.mark_swapcache(f.swap, dst);
            }
        }
        self.migrate_page_states(src, dst, &f);
        if let Some(pi) = self.damon.page_idle.as_mut() {
            if pi.test_idle(src) {
                pi.set_idle(dst);
                pi.clear_idle(src);
            }
            if pi.test_clear_young(src) {
                pi.set_young(dst);
            }
        }
        if f.test(pg::MLOCKED) {
            self.migrate_mlock(src, dst);
        }
        // The old page: nothing refers to it now; the memcg charge moved with the
        // frame (mem_cgroup_migrate), so it is freed uncharged.
        let old = &mut self.frames[src as usize];
        *old = Frame {
            zone: old.zone,
            ..Frame::EMPTY
        };
        // The old folio's last reference goes (folio_put): to this CPU's list.
        self.free_unref_or_buddy(src, 0, false);
        self.count(crate::vm_event_item::Ev::PgmigrateSuccess, 1);
        Ok(())
    }

    /// `folio_migrate_mapping`'s statistics: a dirty page-cache folio stays queued for
    /// the flusher and write-pending in its new zone, and the node page states it
    /// holds (NR_FILE_MAPPED, NR_FILE_DIRTY, NR_SWAPCACHE) go with it to a new node.
    fn migrate_page_states(&mut self, src: Pfn, dst: Pfn, f: &Frame) {
        use super::memcontrol::PageState;
        let file_dirty = f.test(pg::DIRTY) && f.is_file_lru();
        if file_dirty {
            let (from, to) = (self.page_zone_id(src), self.page_zone_id(dst));
            self.wb.nr_write_pending[from] -= 1;
            self.wb.nr_write_pending[to] += 1;
            self.requeue_dirty_folio(dst);
        }
        let (from, to) = (self.pfn_to_nid(src), self.pfn_to_nid(dst));
        if from == to {
            return;
        }
        for (held, item) in [
            (f.test(pg::MAPPED), PageState::FileMapped),
            (file_dirty, PageState::FileDirty),
            (f.test(pg::SWAPCACHE), PageState::SwapCache),
        ] {
            if held {
                self.node_page_state[from][item as usize] -= 1;
                self.node_page_state[to][item as usize] += 1;
            }
        }
    }

    /// What moving an mlocked page counts (v6.x): unmapping `src` munlocks it
    /// (`try_to_migrate_one` → `munlock_vma_folio`; drained after
    /// `folio_migrate_flags` took PG_unevictable to `dst`, so munlocked, not
    /// stranded); `dst`, which does not inherit PG_mlocked, is added to the LRU and
    /// drained at once (PAGE_WAS_MLOCKED): evictable, so rescued from its inherited
    /// PG_unevictable; `remove_migration_ptes` maps it into the VM_LOCKED mapping,
    /// mlocking it, and it is culled back to the unevictable list. `dst` ends as the
    /// copy left it (PG_mlocked, PG_unevictable), and NR_MLOCK moves to its zone.
    fn migrate_mlock(&mut self, src: Pfn, dst: Pfn) {
        use crate::vm_event_item::Ev;
        let (src_zone, dst_zone) = (
            self.frames[src as usize].zone as usize,
            self.frames[dst as usize].zone as usize,
        );
        self.zones[src_zone].nr_mlock -= 1;
        self.zones[dst_zone].nr_mlock += 1;
        self.count(Ev::UnevictablePgsMunlocked, 1);
        self.count(Ev::UnevictablePgsRescued, 1);
        self.count(Ev::UnevictablePgsMlocked, 1);
        self.count(Ev::UnevictablePgsCulled, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::lru;
    use crate::page_alloc::test_pages::add_pages_of;
    use crate::page_alloc::GFP_MEMALLOC_NOWAIT;
    use crate::test_util::{add_memcgs, add_process, add_zram, task_mm};
    use crate::zone::{AllocFlags, WMARK_MIN};
    use crate::SpaceKind;

    fn mm() -> Mm {
        let mut cfg = crate::Config::new(64 << 8);
        add_zram(&mut cfg, 64);
        add_memcgs(&mut cfg, &["app"]);
        add_process(&mut cfg, Some("app"));
        task_mm(cfg)
    }

    /// Isolates `pfn` as compaction's migrate scanner does, takes a free page as its
    /// free scanner does, migrates, and puts the new page back on the LRU.
    fn migrate(mm: &mut Mm, pfn: Pfn) -> Pfn {
        mm.lruvec_del_folio(pfn);
        mm.frames[pfn as usize].list = on::ISOLATED;
        let all = AllocFlags {
            no_watermarks: true,
            ..AllocFlags::default()
        };
        let dst = mm
            .get_page_from_freelist(GFP_MEMALLOC_NOWAIT, 0, WMARK_MIN, all)
            .unwrap();
        mm.migrate_folio(pfn, dst).unwrap();
        mm.frames[dst as usize].list = on::NONE;
        mm.lruvec_add_folio(dst);
        dst
    }

    #[test]
    fn migrating_keeps_lru_memcg_and_page_table_state() {
        let mut mm = mm();
        // An anon page of workload 0 (memcg "app"), active, its PTE young and dirty.
        let (space, pfns) = add_pages_of(&mut mm, SpaceKind::Anon, 4, pg::ACTIVE, Some(0));
        let src = pfns[2];
        mm.spaces[space as usize].set_bits(2, pte::YOUNG | pte::DIRTY);
        let memcg = mm.frames[src as usize].memcg;
        assert_ne!(memcg, 0);
        let free_all = |mm: &Mm| mm.nr_free_pages() + mm.pcp_pages(0) + mm.pcp_pages(1);
        let free = free_all(&mm);
        let usage = mm.memcg.counters.c[memcg as usize].usage;
        let dst = migrate(&mut mm, src);
        assert_ne!(dst, src);
        let e = mm.spaces[space as usize].pte(2);
        assert_eq!(pte::pfn(e), dst);
        assert_eq!(e & (pte::YOUNG | pte::DIRTY), pte::YOUNG | pte::DIRTY);
        let f = mm.frames[dst as usize];
        assert_eq!((f.mapping, f.index, f.memcg), (space, 2, memcg));
        assert!(f.test(pg::ACTIVE) && f.test(pg::SWAPBACKED) && f.test(pg::LRU));
        assert_eq!(f.list as usize, lru::ACTIVE_ANON);
        // The old page is free again, on this CPU's list: one page taken, one given
        // back.
        assert_eq!(mm.frames[src as usize].list, on::PCP);
        assert_eq!(free_all(&mm), free);
        assert_eq!(mm.memcg.counters.c[memcg as usize].usage, usage);
        assert_eq!(mm.vmstat.get(crate::vm_event_item::Ev::PgmigrateSuccess), 1);
        mm.check_invariants().unwrap();
    }

    #[test]
    fn migrating_an_mlocked_page_munlocks_the_old_one_and_mlocks_the_new() {
        use crate::vm_event_item::Ev;
        let mut mm = mm();
        let space = mm.add_space(SpaceKind::Anon, "locked".into(), 4, Some(0));
        mm.mmap_locked(space);
        for vpn in 0..4 {
            mm.handle_anon_fault(space, vpn, true);
        }
        let src = pte::pfn(mm.spaces[space as usize].pte(2));
        let dst = migrate(&mut mm, src);
        let f = mm.frames[dst as usize];
        assert!(f.test(pg::MLOCKED) && f.test(pg::UNEVICTABLE) && !f.test(pg::ACTIVE));
        assert_eq!(f.list as usize, lru::UNEVICTABLE);
        // Four faults mlocked and culled four pages; the move adds one munlock (the
        // old page), one rescue (the new page added evictable), one mlock and one cull
        // (the new page mapped into the locked mapping). NR_MLOCK stays 4.
        let counts = [
            Ev::UnevictablePgsMlocked,
            Ev::UnevictablePgsCulled,
            Ev::UnevictablePgsMunlocked,
            Ev::UnevictablePgsRescued,
            Ev::UnevictablePgsStranded,
        ]
        .map(|e| mm.vmstat.get(e));
        assert_eq!(counts, [5, 5, 1, 1, 0]);
        assert_eq!(mm.nr_mlock(), 4);
        mm.check_invariants().unwrap();
    }

    #[test]
    fn migrating_a_swap_cache_page_moves_its_slot_and_writeback_refuses() {
        let mut mm = mm();
        let (_, pfns) = add_pages_of(&mut mm, SpaceKind::Anon, 2, 0, Some(0));
        let src = pfns[0];
        assert!(mm.add_to_swap(src));
        let slot = mm.frames[src as usize].swap;
        let dst = migrate(&mut mm, src);
        assert_eq!(mm.swap.as_ref().unwrap().lookup_swap_cache(slot), Some(dst));
        assert!(mm.frames[dst as usize].test(pg::SWAPCACHE));
        mm.check_invariants().unwrap();
        // A page under writeback stays where it is.
        let other = pfns[1];
        mm.lruvec_del_folio(other);
        mm.frames[other as usize].list = on::ISOLATED;
        mm.frames[other as usize].set(pg::WRITEBACK);
        assert_eq!(mm.migrate_folio(other, dst), Err(MigrateFail::Writeback));
    }

    /// A dirty, mapped page-cache page moved to another node: its NR_FILE_MAPPED and
    /// NR_FILE_DIRTY go to the new node, its write-pending count to the new zone, and
    /// the flusher still writes it once it expires (it used to lose the page: its
    /// queue entry named the old frame).
    #[test]
    fn migrating_a_dirty_file_page_keeps_it_queued_and_moves_its_node_states() {
        use crate::memcontrol::PageState;
        let mut cfg = crate::test_util::config(128);
        crate::test_util::two_nodes(&mut cfg);
        let mut mm = task_mm(cfg);
        let (_, pfns) = add_pages_of(&mut mm, SpaceKind::File, 2, 0, Some(0));
        let src = pfns[0];
        assert_eq!(mm.pfn_to_nid(src), 0);
        mm.frames[src as usize].set(pg::MAPPED);
        mm.mod_page_state(src, PageState::FileMapped, 1);
        mm.folio_mark_dirty(src);
        let states = |mm: &Mm, nid: usize| {
            let s = mm.node_page_state[nid];
            (
                s[PageState::FileMapped as usize],
                s[PageState::FileDirty as usize],
            )
        };
        assert_eq!((states(&mm, 0), states(&mm, 1)), ((1, 1), (0, 0)));
        mm.lruvec_del_folio(src);
        mm.frames[src as usize].list = on::ISOLATED;
        let all = AllocFlags {
            no_watermarks: true,
            ..AllocFlags::default()
        };
        mm.alloc_ctx = Some((1, 1 << 1));
        let dst = mm
            .get_page_from_freelist(GFP_MEMALLOC_NOWAIT, 0, WMARK_MIN, all)
            .unwrap();
        mm.alloc_ctx = None;
        assert_eq!(mm.pfn_to_nid(dst), 1);
        let (src_zone, dst_zone) = (mm.page_zone_id(src), mm.page_zone_id(dst));
        mm.migrate_folio(src, dst).unwrap();
        mm.frames[dst as usize].list = on::NONE;
        mm.lruvec_add_folio(dst);
        assert_eq!((states(&mm, 0), states(&mm, 1)), ((0, 0), (1, 1)));
        assert_eq!(mm.wb.nr_write_pending[src_zone], 0);
        assert_eq!(mm.wb.nr_write_pending[dst_zone], 1);
        mm.check_invariants().unwrap();
        // Past dirty_expire_centisecs the flusher writes the page in its new frame.
        mm.now = mm.cfg.dirty_expire_ns + 1_000_000_000;
        mm.wb_writeback();
        assert!(mm.frames[dst as usize].test(pg::WRITEBACK));
        assert_eq!(mm.wb.nr_dirty, 0);
    }
}
