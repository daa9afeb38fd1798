//! Kernel object caches (mm/slub.c, reduced): the unmovable and reclaimable memory
//! that fragments the page allocator. A cache packs objects of one size into slabs of
//! `2^order` pages (`calculate_order`); an object is taken from a slab with room (the
//! allocating CPU's node's partial list, newest first: `get_partial_node` on the
//! local node), else a new slab comes from the page allocator with the cache's
//! migratetype; a slab whose last object is freed goes back to the buddy allocator.
//! Per-CPU slabs, `get_any_partial` and `min_partial` are not modelled: an empty slab
//! is freed at once, and a new slab the allocator had to place on another node joins
//! the allocating node's list, as the CPU slab it would be. kernel-reference §1.3.

use super::page::{on, Frame, Pfn};
use super::page_alloc::Gfp;
use super::zone::{MAX_PAGE_ORDER, MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE, ZONE_NORMAL};
use super::Mm;

/// `slub_max_order`: slabs are at most PAGE_ALLOC_COSTLY_ORDER (8 pages).
pub const SLUB_MAX_ORDER: usize = 3;

/// `struct kmem_cache`, what the page allocator sees of it.
#[derive(Debug, Clone)]
pub struct KmemCache {
    pub object_size: u64,
    pub order: usize,
    pub objects_per_slab: u32,
    /// MIGRATE_UNMOVABLE, or MIGRATE_RECLAIMABLE (SLAB_RECLAIM_ACCOUNT).
    pub migratetype: usize,
    /// Per node, slabs with a free object (head PFNs), the most recently used last.
    partial: Vec<Vec<Pfn>>,
}

/// `calculate_order`, reduced: the smallest order whose slab holds `min_objects`
/// (4 × (fls(nr_cpus) + 1)) objects, up to `slub_max_order`; an object larger than
/// that gets a slab of its own of the order that fits it.
pub fn calculate_order(object_size: u64, nr_cpus: u32) -> usize {
    let fls = 32 - nr_cpus.leading_zeros() as u64;
    let min_objects = 4 * (fls + 1);
    let fits = |order: usize| (4096u64 << order) / object_size.max(1);
    (0..=SLUB_MAX_ORDER)
        .find(|&o| fits(o) >= min_objects)
        .unwrap_or_else(|| {
            (SLUB_MAX_ORDER..=MAX_PAGE_ORDER)
                .find(|&o| fits(o) >= 1)
                .unwrap_or(MAX_PAGE_ORDER)
        })
}

impl KmemCache {
    pub fn new(object_size: u64, reclaimable: bool, nr_cpus: u32) -> KmemCache {
        let order = calculate_order(object_size, nr_cpus);
        KmemCache {
            object_size,
            order,
            objects_per_slab: ((4096u64 << order) / object_size.max(1)).max(1) as u32,
            migratetype: if reclaimable {
                MIGRATE_RECLAIMABLE
            } else {
                MIGRATE_UNMOVABLE
            },
            partial: Vec::new(),
        }
    }

    /// The allocation flags of a new slab: GFP_KERNEL with the cache's migratetype.
    fn gfp(&self) -> Gfp {
        Gfp {
            direct_reclaim: true,
            kswapd_reclaim: true,
            highest_zoneidx: ZONE_NORMAL,
            migratetype: self.migratetype,
            high: false,
            noretry: false,
        }
    }
}

/// A slab's frames: the head holds the cache (`mapping`) and the objects in use
/// (`index`); every frame of it is on "list" SLAB.
fn mark_slab(frames: &mut [Frame], head: Pfn, order: usize, cache: u32) {
    for f in &mut frames[head as usize..head as usize + (1 << order)] {
        f.list = on::SLAB;
        f.mapping = cache;
        f.index = 0;
    }
    frames[head as usize].order = order as u8;
}

/// An object of an accounted cache: its slab's head PFN and the memcg it is charged
/// to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Obj {
    pub slab: Pfn,
    pub memcg: u16,
}

/// `obj_full_size`: what an accounted object charges, its size and the obj_cgroup
/// pointer kept for it.
pub fn obj_full_size(object_size: u64) -> u64 {
    object_size + 8
}

impl Mm {
    /// `kmem_cache_alloc` from an accounted cache (SLAB_ACCOUNT): the object's bytes are
    /// charged to `memcg` first (`memcg_slab_pre_alloc_hook`), then the object is
    /// taken; a failed allocation takes the charge back. `force`: charge regardless of
    /// limits (a process there from the run's first instant). None: the charge or the
    /// allocation failed (see `blocked_until`).
    pub fn kmem_cache_alloc_account(
        &mut self,
        cache: u32,
        memcg: usize,
        force: bool,
    ) -> Option<Obj> {
        let c = &self.kmem_caches[cache as usize];
        let (size, reclaimable) = (
            obj_full_size(c.object_size),
            c.migratetype == MIGRATE_RECLAIMABLE,
        );
        if !self.obj_cgroup_charge(memcg, size, reclaimable, force) {
            return None;
        }
        match self.kmem_cache_alloc(cache) {
            Some(slab) => Some(Obj {
                slab,
                memcg: memcg as u16,
            }),
            None => {
                self.obj_cgroup_uncharge(memcg, size, reclaimable);
                None
            }
        }
    }

    /// `kmem_cache_free` of an accounted object, and its uncharge.
    pub fn kmem_cache_free_account(&mut self, cache: u32, obj: Obj) {
        let c = &self.kmem_caches[cache as usize];
        let (size, reclaimable) = (
            obj_full_size(c.object_size),
            c.migratetype == MIGRATE_RECLAIMABLE,
        );
        self.kmem_cache_free(cache, obj.slab);
        self.obj_cgroup_uncharge(obj.memcg as usize, size, reclaimable);
    }

    /// Adds a cache; its index names it in [`Mm::kmem_cache_alloc`].
    pub fn kmem_cache_create(&mut self, cache: KmemCache) -> u32 {
        self.kmem_caches.push(cache);
        (self.kmem_caches.len() - 1) as u32
    }

    /// `kmem_cache_alloc`: an object of `cache`; returns its slab's head PFN, or None if
    /// a new slab was needed and the page allocator failed (then `blocked_until` says
    /// whether it slept in reclaim and the caller retries).
    pub fn kmem_cache_alloc(&mut self, cache: u32) -> Option<Pfn> {
        let nid = self.numa_node_id();
        let c = &mut self.kmem_caches[cache as usize];
        if c.partial.len() <= nid {
            c.partial.resize(nid + 1, Vec::new());
        }
        let slab = match c.partial[nid].last() {
            Some(&s) => s,
            None => {
                let (gfp, order) = (c.gfp(), c.order);
                let s = self.alloc_pages(gfp, order)?;
                mark_slab(&mut self.frames, s, order, cache);
                let reclaimable = gfp.migratetype == MIGRATE_RECLAIMABLE;
                self.slab_pages[usize::from(reclaimable)] += 1 << order;
                if reclaimable {
                    let on = self.pfn_to_nid(s);
                    self.node_slab_reclaimable_pages[on] += 1 << order;
                }
                self.kmem_caches[cache as usize].partial[nid].push(s);
                s
            }
        };
        let c = &mut self.kmem_caches[cache as usize];
        let f = &mut self.frames[slab as usize];
        f.index += 1;
        if f.index >= c.objects_per_slab {
            c.partial[nid].pop();
        }
        Some(slab)
    }

    /// `kmem_cache_free`: an object of `cache` in the slab headed by `slab`; a full
    /// slab with room again joins its node's partial list; an empty slab goes back to
    /// the page allocator.
    pub fn kmem_cache_free(&mut self, cache: u32, slab: Pfn) {
        let slab_nid = self.pfn_to_nid(slab);
        let c = &mut self.kmem_caches[cache as usize];
        let f = &mut self.frames[slab as usize];
        let was_full = f.index >= c.objects_per_slab;
        f.index -= 1;
        if f.index == 0 {
            // On its node's list, or on the list of the node whose CPUs took it new.
            for list in &mut c.partial {
                if let Some(i) = list.iter().rposition(|&s| s == slab) {
                    list.remove(i);
                    break;
                }
            }
            let (order, mt) = (c.order, c.migratetype);
            self.slab_pages[usize::from(mt == MIGRATE_RECLAIMABLE)] -= 1 << order;
            if mt == MIGRATE_RECLAIMABLE {
                let nid = self.pfn_to_nid(slab);
                self.node_slab_reclaimable_pages[nid] -= 1 << order;
            }
            for f in &mut self.frames[slab as usize..slab as usize + (1 << order)] {
                f.list = on::NONE;
                f.mapping = 0;
                f.index = 0;
            }
            self.free_pages(slab, order);
        } else if was_full {
            if c.partial.len() <= slab_nid {
                c.partial.resize(slab_nid + 1, Vec::new());
            }
            c.partial[slab_nid].push(slab);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_orders_as_slub_computes_them() {
        // 4 CPUs: fls(4) = 3, min_objects = 16. 256 B: 16 per page, order 0. 512 B:
        // 8 per page, 16 in order 1. 2 KiB: order 3 holds 16. 16 KiB (a kernel
        // stack): 2 per order-3 slab, fewer than 16: the largest order, 3.
        assert_eq!(calculate_order(256, 4), 0);
        assert_eq!(calculate_order(512, 4), 1);
        assert_eq!(calculate_order(2048, 4), 3);
        assert_eq!(calculate_order(16384, 4), 3);
        // 1 CPU: min_objects = 4 · 2 = 8: 512 B fit 8 in a page.
        assert_eq!(calculate_order(512, 1), 0);
        // Bigger than slub_max_order's 32 KiB: the order that fits one.
        assert_eq!(calculate_order(64 << 10, 4), 4);
    }

    #[test]
    fn slabs_fill_then_empty_back_to_the_buddy_allocator() {
        let mut mm = crate::test_util::task_mm(crate::Config {
            nr_cpus: 4,
            ..crate::test_util::config(64)
        });
        // Free pages, wherever they wait: the buddy or a CPU's list.
        let free_all = |mm: &Mm| mm.nr_free_pages() + mm.pcp_pages(0) + mm.pcp_pages(1);
        let free = free_all(&mm);
        let c = mm.kmem_cache_create(KmemCache::new(256, false, 4));
        // 40 objects: slabs of 16, so 3 slabs (16, 16, 8).
        let slabs: Vec<Pfn> = (0..40).map(|_| mm.kmem_cache_alloc(c).unwrap()).collect();
        assert_eq!(free_all(&mm), free - 3);
        assert_eq!(mm.slab_pages, [3, 0]);
        assert_eq!(slabs.iter().filter(|&&s| s == slabs[0]).count(), 16);
        // Unmovable: its pageblock was taken from the movable ones.
        let zi = mm.frames[slabs[0] as usize].zone as usize;
        assert_eq!(
            mm.zones[zi].pageblock_migratetype(slabs[0]),
            MIGRATE_UNMOVABLE
        );
        // Freeing the first slab's 16 objects returns its page; a freed object of a
        // full slab makes it the next one used.
        for &s in &slabs[..16] {
            mm.kmem_cache_free(c, s);
        }
        assert_eq!(free_all(&mm), free - 2);
        mm.kmem_cache_free(c, slabs[16]);
        assert_eq!(mm.kmem_cache_alloc(c), Some(slabs[16]));
        mm.check_invariants().unwrap();
    }
}
