//! The invariant checker (`--check`, always on in tests).
//!
//! Every frame is free (inside exactly one buddy block) or on exactly one list; every
//! counter equals what the lists say (so none has gone negative and wrapped); free +
//! LRU + zram pool pages equal managed memory; page tables and the frames they map
//! agree.

use super::lru_gen::{folio, lru_gen_from_seq, MAX_NR_GENS, MEMCG_NR_BINS, MEMCG_NR_GENS};
use super::page::{lru, on, pg, pte, Pfn};
use super::pcp::pindex_to_order;
use super::zone::MAX_NR_ZONES;
use super::zone::{
    DEFERRED_MT, MAX_PAGE_ORDER, MIGRATE_PCPTYPES, MIGRATE_RECLAIMABLE, NR_PAGE_ORDERS,
};
use super::Mm;

impl Mm {
    /// Checks every invariant; the first violation is returned as a message.
    #[allow(clippy::needless_range_loop)] // the list index is the LRU id, not just a position
    pub fn check_invariants(&self) -> Result<(), String> {
        // Readahead's runs of locked pages are submitted before the kernel call
        // returns: none is left open (it would lock its pages for good).
        for (si, s) in self.spaces.iter().enumerate() {
            if let Some((first, end)) = s.adding {
                return Err(format!(
                    "space {si} ({}): a readahead run [{first}, {end}) never submitted",
                    s.name
                ));
            }
        }
        let n = self.frames.len();
        let mut owner = vec![0u8; n]; // 0: none, 1: buddy, 2: LRU, 3: zram, 4: slab, 5: held, 6: per-CPU
        let mut claim = |pfn: usize, what: u8| -> Result<(), String> {
            if owner[pfn] != 0 {
                return Err(format!(
                    "frame {pfn} is on two lists ({} and {what})",
                    owner[pfn]
                ));
            }
            owner[pfn] = what;
            Ok(())
        };

        let mut free_total = 0u64;
        for z in &self.zones {
            let mut zone_free = 0u64;
            for o in 0..NR_PAGE_ORDERS {
                let mut blocks = 0u64;
                for mt in 0..MIGRATE_PCPTYPES {
                    let l = &z.free_area[o].free_list[mt];
                    let mut len = 0;
                    for pfn in l.iter(&self.frames) {
                        let f = &self.frames[pfn as usize];
                        if !f.test(pg::BUDDY)
                            || f.order as usize != o
                            || f.list != on::BUDDY
                            || f.gen as usize != mt
                        {
                            return Err(format!(
                                "free block {pfn} order {o} has flags {:#x} order {}",
                                f.flags, f.order
                            ));
                        }
                        if pfn % (1 << o) != 0 || pfn < z.start_pfn || pfn + (1 << o) > z.end_pfn {
                            return Err(format!(
                                "free block {pfn} order {o} misaligned or outside zone {}",
                                z.name()
                            ));
                        }
                        for p in pfn..pfn + (1 << o) {
                            claim(p as usize, 1)?;
                        }
                        len += 1;
                    }
                    if len != l.len {
                        return Err(format!(
                            "zone {} order {o} mt {mt}: list says {} walked {len}",
                            z.name(),
                            l.len
                        ));
                    }
                    if o == MAX_PAGE_ORDER && mt == DEFERRED_MT {
                        // Deferred blocks: free, frames not initialised (nothing to claim).
                        len += self.check_deferred(z)?;
                    }
                    blocks += len;
                    zone_free += len << o;
                }
                if blocks != z.free_area[o].nr_free {
                    return Err(format!(
                        "zone {} order {o}: nr_free {} but {blocks} blocks",
                        z.name(),
                        z.free_area[o].nr_free
                    ));
                }
            }
            self.check_pageblocks(z)?;
            if zone_free != z.nr_free_pages {
                return Err(format!(
                    "zone {} NR_FREE_PAGES {} but {zone_free} free",
                    z.name(),
                    z.nr_free_pages
                ));
            }
            free_total += zone_free;
        }

        // The per-CPU lists: free blocks of the list's order, in their zone, counted.
        let mut pcp_total = 0u64;
        let nr_zones = self.zones.len();
        for (i, pcp) in self.pcp.iter().enumerate() {
            let (cpu, zi) = (i / nr_zones, i % nr_zones);
            let mut pages = 0u64;
            for (pindex, l) in pcp.lists.iter().enumerate() {
                let o = pindex_to_order(pindex);
                let mut len = 0;
                for pfn in l.iter(&self.frames) {
                    let f = &self.frames[pfn as usize];
                    if f.list != on::PCP
                        || f.order as usize != o
                        || f.gen as usize != pindex
                        || self.page_zone_id(pfn) != zi
                        || f.flags != 0
                        || pfn % (1 << o) != 0
                    {
                        return Err(format!(
                            "per-CPU list {pindex} of CPU {cpu} zone {zi}: frame {pfn} has list {:#x} order {} flags {:#x}",
                            f.list,
                            f.order,
                            f.flags
                        ));
                    }
                    for p in pfn..pfn + (1 << o) {
                        claim(p as usize, 6)?;
                    }
                    len += 1;
                    pages += 1 << o;
                }
                if len != l.len {
                    return Err(format!(
                        "per-CPU list {pindex} of CPU {cpu}: says {} walked {len}",
                        l.len
                    ));
                }
            }
            if pages != u64::from(pcp.count) {
                return Err(format!(
                    "per-CPU lists of CPU {cpu} zone {zi}: count {} but {pages} pages",
                    pcp.count
                ));
            }
            pcp_total += pages;
        }

        let mut zone_lru = vec![[0u64; lru::NR_LRU_LISTS]; self.zones.len()];
        let mut t = LruTally::new(self.zones.len());
        for (lv, v) in self.lruvecs.iter().enumerate() {
            let (memcg, nid) = (self.lruvec_memcg(lv), self.lruvec_pgdat(lv));
            // Pages per compat list and zone from the multi-gen lists (the two
            // youngest generations count as active), checked with the classic ones.
            let gen_counted = self.check_lru_gen(lv, &mut claim, &mut t)?;
            for l in 0..lru::NR_LRU_LISTS {
                // By zone type within the lruvec's node.
                let mut per_zone = gen_counted[l];
                if self.lru_gen_enabled() && l != lru::UNEVICTABLE && !v.lists[l].is_empty() {
                    return Err(format!(
                        "memcg {memcg} {} holds {} pages with the multi-gen LRU on",
                        lru::name(l),
                        v.lists[l].len
                    ));
                }
                v.lists[l].check(&self.frames)?;
                let mut len = 0;
                for pfn in v.lists[l].iter() {
                    let f = &self.frames[pfn as usize];
                    claim(pfn as usize, 2)?;
                    if f.list as usize != l
                        || !f.test(pg::LRU)
                        || f.memcg as usize != memcg
                        || self.pfn_to_nid(pfn) != nid
                    {
                        return Err(format!(
                            "frame {pfn} on {} of memcg {memcg} node {nid} has list {} flags {:#x} memcg {} node {}",
                            lru::name(l),
                            f.list,
                            f.flags,
                            f.memcg,
                            self.pfn_to_nid(pfn)
                        ));
                    }
                    if l != lru::UNEVICTABLE && self.folio_lru_list(pfn) != l {
                        return Err(format!(
                            "frame {pfn} on {} but its flags say {}",
                            lru::name(l),
                            lru::name(self.folio_lru_list(pfn))
                        ));
                    }
                    if self.cfg.lru_policy.is_some() && l != lru::UNEVICTABLE {
                        // A research policy: nothing active, every page held by its
                        // lruvec's policy at this frame.
                        let key = super::lru_policy::page_key(f.mapping, f.index);
                        let held = v
                            .policy
                            .as_ref()
                            .is_some_and(|p| p.holds(f.is_file_lru(), key, pfn));
                        if l & lru::ACTIVE != 0 || !held {
                            return Err(format!(
                                "frame {pfn} on {} of memcg {memcg}, not in its {} policy",
                                lru::name(l),
                                self.cfg.lru_policy.as_ref().map_or("", |p| p.name)
                            ));
                        }
                    }
                    per_zone[f.zone as usize] += 1;
                    len += 1;
                    t.add(f, self.page_zone_id(pfn));
                }
                if len != v.lists[l].len {
                    return Err(format!(
                        "memcg {memcg} {}: list says {} walked {len}",
                        lru::name(l),
                        v.lists[l].len
                    ));
                }
                if let (Some(p), true) = (
                    &v.policy,
                    l == lru::INACTIVE_ANON || l == lru::INACTIVE_FILE,
                ) {
                    let held = p.len(l & lru::FILE != 0) as u64;
                    if held != len {
                        return Err(format!(
                            "memcg {memcg} {} holds {len} pages, its policy {held}",
                            lru::name(l)
                        ));
                    }
                }
                for (zi, &c) in per_zone.iter().enumerate() {
                    if v.zone_size[l][zi] != c {
                        return Err(format!(
                            "memcg {memcg} {} zone {zi}: size {} counted {c}",
                            lru::name(l),
                            v.zone_size[l][zi]
                        ));
                    }
                    zone_lru[nid * MAX_NR_ZONES + zi][l] += c;
                }
            }
        }
        for (zi, z) in self.zones.iter().enumerate() {
            if z.lru_pages != zone_lru[zi] {
                return Err(format!(
                    "zone {} LRU counters {:?} but lists hold {:?}",
                    z.name(),
                    z.lru_pages,
                    zone_lru[zi]
                ));
            }
        }
        let LruTally {
            pages: lru_total,
            dirty,
            writeback,
            writeback_file,
            write_pending,
            mlocked,
            mlock_mismatch,
        } = t;
        for (zi, z) in self.zones.iter().enumerate() {
            let counted = mlocked[zi];
            if z.nr_mlock != counted {
                return Err(format!(
                    "zone {} NR_MLOCK {} but {counted} PG_mlocked pages",
                    z.name(),
                    z.nr_mlock,
                ));
            }
        }
        if mlock_mismatch > 0 {
            return Err(format!(
                "{mlock_mismatch} LRU pages PG_mlocked but not PG_unevictable, or the reverse"
            ));
        }
        let mlocked: u64 = mlocked.iter().sum();
        if dirty != self.wb.nr_dirty {
            return Err(format!(
                "nr_dirty {} but {dirty} dirty file pages",
                self.wb.nr_dirty
            ));
        }
        if write_pending != self.wb.nr_write_pending {
            return Err(format!(
                "NR_ZONE_WRITE_PENDING {:?} but {write_pending:?} pages dirty or under writeback",
                self.wb.nr_write_pending
            ));
        }
        if writeback != self.wb.nr_writeback {
            return Err(format!(
                "nr_writeback {} but {writeback} pages under writeback",
                self.wb.nr_writeback
            ));
        }
        if writeback_file != self.wb.nr_writeback_file {
            return Err(format!(
                "nr_writeback_file {} but {writeback_file} file pages under writeback",
                self.wb.nr_writeback_file
            ));
        }

        // Driver memory: the zram pool and a ramdisk's file pages.
        let mut pool = |list: &super::list::ListHead, name: &str| -> Result<u64, String> {
            let mut n = 0u64;
            for pfn in list.iter(&self.frames) {
                claim(pfn as usize, 3)?;
                if self.frames[pfn as usize].list != on::ZRAM {
                    return Err(format!("{name} frame {pfn} is not marked a driver page"));
                }
                n += 1;
            }
            if n != list.len {
                return Err(format!("{name} says {} walked {n}", list.len));
            }
            Ok(n)
        };
        let zram = pool(&self.zram_pool, "zram pool")?;
        let brd = pool(&self.brd_pool, "brd pool")?;
        // Slabs: every frame of each (found by its head's order), counted by type, and
        // each cache's partial slabs among them with room left.
        let mut slab = [0u64; 2];
        let mut pfn = 0usize;
        while pfn < n {
            let f = &self.frames[pfn];
            if f.list != on::SLAB {
                pfn += 1;
                continue;
            }
            let Some(c) = self.kmem_caches.get(f.mapping as usize) else {
                return Err(format!("slab frame {pfn} of no cache ({})", f.mapping));
            };
            if f.order as usize != c.order || f.index == 0 || f.index > c.objects_per_slab {
                return Err(format!(
                    "slab {pfn}: order {} (cache {}), {} objects of {}",
                    f.order, c.order, f.index, c.objects_per_slab
                ));
            }
            for p in pfn..pfn + (1 << c.order) {
                if self.frames[p].list != on::SLAB {
                    return Err(format!("slab {pfn}'s frame {p} is not a slab frame"));
                }
                claim(p, 4)?;
            }
            slab[usize::from(c.migratetype == MIGRATE_RECLAIMABLE)] += 1 << c.order;
            pfn += 1 << c.order;
        }
        // THPs: 512 aligned frames, all members, mapping consecutive pages of one
        // space.
        for p in self.initialised_pfns() {
            let f = &self.frames[p as usize];
            if !self.page_is_thp(p) {
                continue;
            }
            let nr = super::huge_memory::HPAGE_PMD_NR;
            let base = p & !(nr - 1);
            let h = &self.frames[base as usize];
            if !self.page_is_thp(base)
                || f.mapping != h.mapping
                || f.index != h.index + (p - base)
                || !h.index.is_multiple_of(nr)
            {
                return Err(format!(
                    "THP member {p} (space {} index {}) does not match its head {base} (space {} index {})",
                    f.mapping, f.index, h.mapping, h.index
                ));
            }
        }
        let mut kernel = 0u64;
        for p in 0..n {
            if self.frames[p].list == on::KERNEL {
                claim(p, 5)?;
                kernel += 1;
            }
        }
        if kernel != self.kernel_pages {
            return Err(format!(
                "kernel pages {} but {kernel} frames held",
                self.kernel_pages
            ));
        }
        if slab != self.slab_pages {
            return Err(format!(
                "slab pages {:?} but {slab:?} on slabs",
                self.slab_pages
            ));
        }
        if let Some(pfn) = self.initialised_pfns().find(|&p| owner[p as usize] == 0) {
            // Isolated pages (reclaim's or compaction's) are back on a list between
            // slices: one left isolated is owned by nothing.
            if self.frames[pfn as usize].list == on::ISOLATED {
                return Err(format!("frame {pfn} is still isolated"));
            }
            return Err(format!(
                "frame {pfn} is neither free nor on any list (flags {:#x})",
                self.frames[pfn as usize].flags
            ));
        }
        let slab = slab[0] + slab[1];
        if free_total + pcp_total + lru_total + zram + brd + slab + kernel != self.managed_pages() {
            return Err(format!(
                "free {free_total} + per-CPU {pcp_total} + LRU {lru_total} + zram {zram} + brd {brd} \
                 + slab {slab} + held {kernel} != managed {}",
                self.managed_pages()
            ));
        }

        // Page tables and page caches against the frames they map.
        let mut swap_refs = 0u64;
        // Pages mapped by VM_LOCKED mappings: every one of them mlocked, and none
        // other.
        let mut locked_present = 0u64;
        for (si, s) in self.spaces.iter().enumerate() {
            if s.dead {
                continue;
            }
            let (mut present, mut swapped) = (0u64, 0u64);
            for (idx, &e) in s.written().iter().enumerate() {
                match pte::kind(e) {
                    pte::PRESENT => {
                        let pfn = pte::pfn(e);
                        let f = &self.frames[pfn as usize];
                        if f.mapping as usize != si || f.index as usize != idx || !f.test(pg::LRU) {
                            return Err(format!(
                                "{}[{idx}] maps frame {pfn} owned by {}[{}] flags {:#x}",
                                s.name, f.mapping, f.index, f.flags
                            ));
                        }
                        // A page's entry carries its node's mark, and the node.
                        let slow = e & (pte::SLOW | 63 << pte::NID_SHIFT);
                        if slow != self.mk_pte(pfn) & (pte::SLOW | 63 << pte::NID_SHIFT) {
                            return Err(format!(
                                "{}[{idx}] maps frame {pfn} (node {}) with slow mark {slow:#x}",
                                s.name,
                                self.pfn_to_nid(pfn)
                            ));
                        }
                        if f.test(pg::MLOCKED) != s.vm_locked {
                            return Err(format!(
                                "{}[{idx}] (VM_LOCKED: {}) maps frame {pfn} with flags {:#x}",
                                s.name, s.vm_locked, f.flags
                            ));
                        }
                        present += 1;
                    }
                    pte::SWAP => {
                        let sw = self.swap.as_ref().ok_or("swap entry without swap")?;
                        if sw.slot(pte::slot(e)) == pte::NONE {
                            return Err(format!(
                                "{}[{idx}] points at free swap slot {}",
                                s.name,
                                pte::slot(e)
                            ));
                        }
                        swapped += 1;
                        swap_refs += 1;
                    }
                    _ => {}
                }
            }
            if present != s.nr_present || swapped != s.nr_swap {
                return Err(format!(
                    "{}: counts say {} present {} swapped, tables hold {present} and {swapped}",
                    s.name, s.nr_present, s.nr_swap
                ));
            }
            if s.vm_locked {
                if swapped > 0 {
                    return Err(format!(
                        "{}: VM_LOCKED, yet {swapped} of its pages were swapped out",
                        s.name
                    ));
                }
                locked_present += present;
            }
        }
        if locked_present != mlocked {
            return Err(format!(
                "{mlocked} PG_mlocked pages but VM_LOCKED mappings map {locked_present}"
            ));
        }
        // memcg charges: every charged page counted once, up the hierarchy; likewise
        // every used swap slot for memory.swap.current.
        let mut pages = vec![0u64; self.memcg.cgs.len()];
        for pfn in self.initialised_pfns() {
            let f = &self.frames[pfn as usize];
            if f.test(pg::CHARGED) {
                pages[f.memcg as usize] += 1;
            }
        }
        for (m, cg) in self.memcg.cgs.iter().enumerate() {
            pages[m] += cg.kmem.kmem_pages;
        }
        self.check_charges(pages, &self.memcg.counters, "usage")?;
        self.check_kmem()?;
        if let Some(sw) = &self.swap {
            let mut slots = vec![0u64; self.memcg.cgs.len()];
            for s in 0..sw.slots_ever_used() {
                if sw.slot(s) != pte::NONE {
                    slots[sw.slot_memcg[s as usize] as usize] += 1;
                }
            }
            self.check_charges(slots, &self.memcg.swap, "swap usage")?;
        }
        if let Some(sw) = &self.swap {
            // Every used slot is referenced by a PTE or held by a swap-cache page.
            let cached = self
                .lruvecs
                .iter()
                .flat_map(|v| v.lists.iter())
                .flat_map(|l| l.iter())
                .filter(|&p| {
                    let f = &self.frames[p as usize];
                    f.test(pg::SWAPCACHE) && !self.spaces[f.mapping as usize].dead && {
                        let s = &self.spaces[f.mapping as usize];
                        pte::is_present(s.pte(f.index))
                    }
                });
            let used = sw.nr_used_slots();
            let refs = swap_refs + cached.count() as u64;
            let orphans = self
                .lruvecs
                .iter()
                .flat_map(|v| v.lists.iter())
                .flat_map(|l| l.iter())
                .filter(|&p| {
                    let f = &self.frames[p as usize];
                    f.test(pg::ORPHAN) && f.test(pg::SWAPCACHE)
                });
            let refs = refs + orphans.count() as u64;
            if used != refs {
                return Err(format!(
                    "{used} swap slots in use but {refs} references to them"
                ));
            }
        }
        self.check_page_states(&owner)
    }

    /// memory.stat's page states (`Memcg::state`) against the frames: per memcg the
    /// mapped file pages, swap-cache pages and pages of unsplit anonymous THPs; in
    /// sum the dirty and writeback pages against the writeback counts.
    /// `owner` is the frames' owners as `check_invariants` claimed them (1: buddy).
    fn check_page_states(&self, owner: &[u8]) -> Result<(), String> {
        use super::huge_memory::HPAGE_PMD_ORDER;
        use super::memcontrol::{PageState, NR_PAGE_STATE};
        // A free block's pages other than its head keep the flags they were freed
        // with: only pages outside free blocks count.
        let mut tally = vec![[0u64; NR_PAGE_STATE]; self.memcg.cgs.len()];
        let mut node_tally = vec![[0u64; NR_PAGE_STATE]; self.nr_nodes()];
        for (pfn, f) in self.frames.iter().enumerate() {
            if owner[pfn] == 1 {
                continue;
            }
            let held = [
                (f.test(pg::MAPPED), PageState::FileMapped),
                (f.test(pg::SWAPCACHE), PageState::SwapCache),
                (
                    f.order as usize == HPAGE_PMD_ORDER && f.test(pg::SWAPBACKED),
                    PageState::AnonThps,
                ),
                (f.test(pg::DIRTY) && f.is_file_lru(), PageState::FileDirty),
            ];
            let nid = self.pfn_to_nid(pfn as Pfn);
            for (is, item) in held {
                if is {
                    tally[f.memcg as usize][item as usize] += 1;
                    node_tally[nid][item as usize] += 1;
                }
            }
        }
        // Each node's counts against its frames; every state's nodes against its
        // memcgs (writeback has no frame bit of its own to tally).
        for (nid, counted) in self.node_page_state.iter().enumerate() {
            for item in [
                PageState::FileMapped,
                PageState::SwapCache,
                PageState::AnonThps,
                PageState::FileDirty,
            ] {
                let (c, found) = (counted[item as usize], node_tally[nid][item as usize]);
                if c != found {
                    return Err(format!(
                        "node {nid}: {item:?} counts {c} pages, the frames say {found}"
                    ));
                }
            }
        }
        let wb = PageState::Writeback as usize;
        let nodes: u64 = self.node_page_state.iter().map(|n| n[wb]).sum();
        let memcgs: u64 = self.memcg.cgs.iter().map(|c| c.state[wb]).sum();
        if nodes != memcgs {
            return Err(format!(
                "Writeback: the nodes count {nodes} pages, the memcgs {memcgs}"
            ));
        }
        for (m, cg) in self.memcg.cgs.iter().enumerate() {
            for item in [
                PageState::FileMapped,
                PageState::SwapCache,
                PageState::AnonThps,
            ] {
                let (counted, found) = (cg.state[item as usize], tally[m][item as usize]);
                if counted != found {
                    return Err(format!(
                        "memcg {m}: {item:?} counts {counted} pages, the frames say {found}"
                    ));
                }
            }
        }
        for (item, global) in [
            (PageState::FileDirty, self.wb.nr_dirty),
            (PageState::Writeback, self.wb.nr_writeback),
        ] {
            let sum: u64 = self.memcg.cgs.iter().map(|c| c.state[item as usize]).sum();
            if sum != global {
                return Err(format!(
                    "{item:?}: the memcgs count {sum} pages, the node {global}"
                ));
            }
        }
        Ok(())
    }

    /// Pageblock state: each block's migratetype one with free lists (deferred blocks
    /// movable, as boot left them), the compaction skip bitmap a bit per block, and
    /// the scanners' remembered positions inside the zone (the migrate scanner's may
    /// run a block past its end, as the kernel's `update_cached_migrate` leaves it).
    fn check_pageblocks(&self, z: &super::zone::Zone) -> Result<(), String> {
        use super::zone::{MIGRATE_MOVABLE, PAGEBLOCK_NR_PAGES};
        let block = PAGEBLOCK_NR_PAGES as Pfn;
        let mut pfn = z.start_pfn;
        while pfn < z.end_pfn {
            let mt = z.pageblock_migratetype(pfn);
            if mt >= MIGRATE_PCPTYPES {
                return Err(format!(
                    "zone {} pageblock {pfn:#x}: migratetype {mt}",
                    z.name()
                ));
            }
            if pfn >= z.deferred_start_pfn && pfn < z.deferred_end_pfn && mt != MIGRATE_MOVABLE {
                return Err(format!(
                    "zone {} deferred pageblock {pfn:#x} is type {mt}",
                    z.name()
                ));
            }
            pfn = (pfn & !(block - 1)) + block;
        }
        let c = &z.compact;
        let nr_blocks = (z.end_pfn - z.start_pfn).div_ceil(block) as usize;
        if c.nr_blocks() != nr_blocks || c.stray_skip_bits() {
            return Err(format!(
                "zone {}: skip bitmap of {} blocks for {nr_blocks}",
                z.name(),
                c.nr_blocks()
            ));
        }
        if z.start_pfn == z.end_pfn {
            return Ok(());
        }
        let inside = |p: Pfn| p >= z.start_pfn && p < z.end_pfn;
        if !inside(c.init_migrate_pfn)
            || !inside(c.init_free_pfn)
            || !inside(c.cached_free_pfn) && c.cached_free_pfn + block != z.start_pfn
        {
            return Err(format!(
                "zone {}: compaction positions init {:#x}/{:#x} free {:#x} outside it",
                z.name(),
                c.init_migrate_pfn,
                c.init_free_pfn,
                c.cached_free_pfn
            ));
        }
        for &m in &c.cached_migrate_pfn {
            if m < z.start_pfn || m > z.end_pfn + 2 * block {
                return Err(format!(
                    "zone {}: cached migrate pfn {m:#x} outside it",
                    z.name()
                ));
            }
        }
        Ok(())
    }

    /// The deferred range of a zone is whole, aligned max-order blocks inside it;
    /// returns how many.
    fn check_deferred(&self, z: &super::zone::Zone) -> Result<u64, String> {
        let (lo, hi) = (z.deferred_start_pfn, z.deferred_end_pfn);
        let block = 1 << MAX_PAGE_ORDER;
        // A zone smaller than a max-order block (a tiny DMA32) defers nothing: its
        // empty range may sit anywhere.
        if lo == hi {
            return Ok(0);
        }
        if lo > hi || lo % block != 0 || hi % block != 0 || lo < z.start_pfn || hi > z.end_pfn {
            return Err(format!(
                "zone {}: deferred range {lo}..{hi} not aligned max-order blocks inside it",
                z.name()
            ));
        }
        Ok(z.nr_deferred_blocks())
    }

    /// Every PFN whose frame has been initialised, zone by zone.
    fn initialised_pfns(&self) -> impl Iterator<Item = u32> + '_ {
        self.zones
            .iter()
            .flat_map(|z| z.initialised_ranges())
            .flatten()
    }

    /// Kernel memory per memcg: page tables and stacks as the workloads hold them,
    /// slab bytes as the objects charged (process objects, dentries, inodes), and
    /// MEMCG_KMEM as those pages plus the objects' bytes and the stock in whole pages.
    /// The superblock LRUs: each file on them once, flagged so, of the list's memcg.
    fn check_kmem(&self) -> Result<(), String> {
        let n = self.memcg.cgs.len();
        let (mut pt, mut stack, mut slab) = (vec![0u64; n], vec![0u64; n], vec![[0u64; 2]; n]);
        if self.cfg.memcg_kmem {
            for s in &self.spaces {
                if let Some(w) = s.mm() {
                    pt[self.workload_memcg[w]] += s.pt_pages.len() as u64;
                }
            }
            for (w, st) in self.kernel_stacks.iter().enumerate() {
                stack[self.workload_memcg[w]] += st.len() as u64 * (1 << super::THREAD_SIZE_ORDER);
            }
            let mut obj = |cache: u32, o: super::slab::Obj| {
                let c = &self.kmem_caches[cache as usize];
                let r = usize::from(c.migratetype == super::zone::MIGRATE_RECLAIMABLE);
                slab[o.memcg as usize][r] += super::slab::obj_full_size(c.object_size);
            };
            for objs in &self.workload_objs {
                for &(cache, o) in objs {
                    obj(cache, o);
                }
            }
            for f in &self.vfs.files {
                if let Some(o) = f.dentry {
                    obj(self.vfs.dentry_cache, o);
                }
                if let Some(o) = f.inode {
                    obj(self.vfs.inode_cache, o);
                }
            }
        }
        for (m, cg) in self.memcg.cgs.iter().enumerate() {
            let k = &cg.kmem;
            let bytes = k.slab_bytes[0] + k.slab_bytes[1] + k.obj_stock_bytes;
            if (k.pagetables_pages, k.kernel_stack_pages, k.slab_bytes)
                != (pt[m], stack[m], slab[m])
                || bytes % 4096 != 0
                || k.kmem_pages != k.pagetables_pages + k.kernel_stack_pages + bytes / 4096
            {
                return Err(format!(
                    "memcg {} kmem {k:?}, but page tables {}, stacks {}, slab bytes {:?}",
                    cg.path, pt[m], stack[m], slab[m]
                ));
            }
        }
        let mut seen = vec![[false; 2]; self.vfs.files.len()];
        for (li, l) in self.vfs.lru.iter().enumerate() {
            let (m, nid) = (li / self.nr_nodes(), li % self.nr_nodes());
            for (kind, list) in [&l.dentries, &l.inodes].into_iter().enumerate() {
                for &space in list {
                    let f = self.vfs.files[space as usize];
                    let (obj, flag) = if kind == 0 {
                        (f.dentry, f.d_on_lru)
                    } else {
                        (f.inode, f.i_on_lru)
                    };
                    let owner = obj.map(|o| {
                        let memcg = if self.cfg.memcg_kmem {
                            o.memcg as usize
                        } else {
                            0
                        };
                        (memcg, self.pfn_to_nid(o.slab))
                    });
                    if seen[space as usize][kind] || !flag || owner != Some((m, nid)) {
                        return Err(format!(
                            "file {space} on superblock LRU {kind} of memcg {m} node {nid}: {f:?}"
                        ));
                    }
                    seen[space as usize][kind] = true;
                }
            }
        }
        for (space, f) in self.vfs.files.iter().enumerate() {
            if f.d_on_lru != seen[space][0] || f.i_on_lru != seen[space][1] {
                return Err(format!(
                    "file {space} flagged on an LRU it is not on: {f:?}"
                ));
            }
        }
        Ok(())
    }

    /// Rolls per-memcg counts up the tree (a parent's id is below its children's) and
    /// compares them with the hierarchical page counters.
    fn check_charges(
        &self,
        mut counts: Vec<u64>,
        counters: &super::page_counter::Counters,
        what: &str,
    ) -> Result<(), String> {
        for m in (1..counts.len()).rev() {
            let p = self.memcg.cgs[m]
                .parent
                .expect("non-root memcg has a parent");
            counts[p] += counts[m];
        }
        for (m, &want) in counts.iter().enumerate() {
            let got = counters.c[m].usage;
            if got != want {
                return Err(format!(
                    "memcg {} {what} {got} but {want} charged",
                    self.memcg.cgs[m].path
                ));
            }
        }
        Ok(())
    }

    /// The multi-gen LRU of one lruvec: every folio on a generation list is this
    /// memcg's, of the list's type and zone, with `Frame::list` naming the list and
    /// (file folios) a generation, maybe younger after an in-place promotion, within
    /// [min_seq, max_seq]; `nr_pages` equals the folios counted by generation.
    /// Returns pages per compat list and zone.
    #[allow(clippy::needless_range_loop)] // generation, type and zone index four arrays
    fn check_lru_gen(
        &self,
        lv: usize,
        claim: &mut impl FnMut(usize, u8) -> Result<(), String>,
        tally: &mut LruTally,
    ) -> Result<[[u64; MAX_NR_ZONES]; lru::NR_LRU_LISTS], String> {
        let (memcg, nid) = (self.lruvec_memcg(lv), self.lruvec_pgdat(lv));
        let g = &self.lruvecs[lv].lrugen;
        let mut counted = [[0u64; MAX_NR_ZONES]; lru::NR_LRU_LISTS];
        let mut nr_pages = [[[0i64; MAX_NR_ZONES]; 2]; MAX_NR_GENS as usize];
        for t in 0..2 {
            if g.min_seq[t] > g.max_seq || g.nr_gens(t) > MAX_NR_GENS {
                return Err(format!(
                    "memcg {memcg} type {t}: min_seq {} max_seq {}",
                    g.min_seq[t], g.max_seq
                ));
            }
        }
        // The sequence number a generation index stands for in type t, if live.
        let seq_of =
            |t: usize, gen: usize| (g.min_seq[t]..=g.max_seq).find(|&s| lru_gen_from_seq(s) == gen);
        for gen in 0..MAX_NR_GENS as usize {
            for t in 0..2 {
                for zi in 0..MAX_NR_ZONES {
                    let list = &g.folios[gen][t][zi];
                    list.check(&self.frames)?;
                    let mut len = 0;
                    for pfn in list.iter() {
                        claim(pfn as usize, 2)?;
                        len += 1;
                        let f = &self.frames[pfn as usize];
                        let fgen = folio::lru_gen(f);
                        let bad = f.list != on::LRU_GEN | gen as u8
                            || !f.test(pg::LRU)
                            || f.test(pg::ACTIVE)
                            || f.test(pg::UNEVICTABLE)
                            || f.memcg as usize != memcg
                            || self.pfn_to_nid(pfn) != nid
                            || f.zone as usize != zi
                            || f.is_file_lru() as usize != t;
                        let Some(fgen) = fgen.filter(|_| !bad) else {
                            return Err(format!(
                                "frame {pfn} on memcg {memcg} generation {gen} type {t} zone {zi} has list {:#x} flags {:#x} gen byte {:#x} memcg {} zone {}",
                                f.list, f.flags, f.gen, f.memcg, f.zone
                            ));
                        };
                        // A walk may promote a folio in place (its generation younger
                        // than its list's); when a type that cannot be evicted retires
                        // its oldest generation without moving folios, the list becomes
                        // the youngest and the order inverts, as in the kernel. That
                        // is anon's, and its sequel is anon's too: a folio on such a
                        // list promoted in place keeps its generation while
                        // `try_to_inc_min_seq` passes that generation's (physically
                        // empty) list, so the folio's generation, and after sort_folio
                        // moves it there its list, lag min_seq until max_seq wraps
                        // round to them. The kernel tests the lists, not the folios'
                        // flags, and does the same; nr_pages is still checked.
                        let lag_ok = t == 0;
                        if !lag_ok && (seq_of(t, gen).is_none() || seq_of(t, fgen).is_none()) {
                            return Err(format!(
                                "frame {pfn} of memcg {memcg} type {t}: list generation {gen} or its generation {fgen} outside min_seq {} ..= max_seq {}",
                                g.min_seq[t], g.max_seq
                            ));
                        }
                        nr_pages[fgen][t][zi] += 1;
                        tally.add(f, self.page_zone_id(pfn));
                        let l = lru::of(t == 1, g.is_active(fgen));
                        counted[l][zi] += 1;
                    }
                    if len != list.len {
                        return Err(format!(
                            "memcg {memcg} generation {gen} type {t} zone {zi}: list says {} walked {len}",
                            list.len
                        ));
                    }
                    if len > 0 && !self.lru_gen_enabled() {
                        return Err(format!(
                            "memcg {memcg} generation {gen} holds pages with the multi-gen LRU off"
                        ));
                    }
                }
            }
        }
        if nr_pages != g.nr_pages {
            return Err(format!(
                "memcg {memcg} nr_pages {:?} but the lists hold {nr_pages:?}",
                g.nr_pages
            ));
        }
        // The node's memcg LRU: each of the node's lruvecs on exactly one list, its
        // links and counts agree.
        if memcg == 0 {
            let mut seen = vec![false; self.lruvecs.len()];
            let lru = &self.memcg_lru[nid];
            let mut per_gen = [0u64; MEMCG_NR_GENS];
            for (gen, bins) in lru.fifo.iter().enumerate() {
                for (bin, &(first, last)) in bins.iter().enumerate().take(MEMCG_NR_BINS) {
                    let mut prev = None;
                    let mut cur = first;
                    while let Some(m) = cur {
                        let lg = &self.lruvecs[m].lrugen;
                        if seen[m]
                            || self.lruvec_pgdat(m) != nid
                            || lg.memcg_gen != gen
                            || lg.bin != bin
                            || lg.memcg_prev != prev
                        {
                            return Err(format!(
                                "memcg {m} on memcg LRU list {gen}/{bin} twice or with wrong links"
                            ));
                        }
                        seen[m] = true;
                        per_gen[gen] += 1;
                        prev = cur;
                        cur = lg.memcg_next;
                    }
                    if prev != last {
                        return Err(format!(
                            "memcg LRU list {gen}/{bin}: tail {last:?}, walked to {prev:?}"
                        ));
                    }
                }
            }
            for m in 0..self.memcg.cgs.len() {
                if !seen[self.mem_cgroup_lruvec(m, nid)] {
                    return Err(format!("memcg {m} is on no memcg LRU list of node {nid}"));
                }
            }
            if per_gen != lru.nr_memcgs {
                return Err(format!(
                    "memcg LRU nr_memcgs {:?} but the lists hold {per_gen:?}",
                    lru.nr_memcgs
                ));
            }
        }
        Ok(counted)
    }
}

/// What the LRU walk counts of its pages, for the writeback counters.
#[derive(Default)]
struct LruTally {
    pages: u64,
    dirty: u64,
    writeback: u64,
    writeback_file: u64,
    write_pending: Vec<u64>,
    /// PG_mlocked pages per zone (NR_MLOCK), and the pages whose PG_mlocked and
    /// PG_unevictable disagree (the only unevictable pages here are mlocked ones, and
    /// an mlocked page is culled before it is back on a list).
    mlocked: Vec<u64>,
    mlock_mismatch: u64,
}

impl LruTally {
    fn new(nr_zones: usize) -> LruTally {
        LruTally {
            write_pending: vec![0; nr_zones],
            mlocked: vec![0; nr_zones],
            ..LruTally::default()
        }
    }

    /// A page of zone id `zi` on an LRU.
    fn add(&mut self, f: &super::page::Frame, zi: usize) {
        let dirty_file = f.test(pg::DIRTY) && f.is_file_lru();
        let wb = f.test(pg::WRITEBACK);
        self.pages += 1;
        self.dirty += dirty_file as u64;
        self.writeback += wb as u64;
        self.writeback_file += (wb && f.is_file_lru()) as u64;
        // NR_FILE_DIRTY + NR_WRITEBACK: a page redirtied under writeback counts in both.
        self.write_pending[zi] += dirty_file as u64 + wb as u64;
        let mlocked = f.test(pg::MLOCKED);
        self.mlocked[zi] += mlocked as u64;
        self.mlock_mismatch += (mlocked != f.test(pg::UNEVICTABLE)) as u64;
    }
}
