//! TLB shootdowns: what unmapping a page costs the CPUs that may cache its
//! translation (x86's arch/x86/mm/tlb.c, and mm/rmap.c's batched unmap flush).
//!
//! Each process's mm keeps the CPUs its threads have run on (`mm_cpumask`; here never
//! trimmed while it lives). Reclaim unmaps a mapped page with TTU_BATCH_FLUSH: if the
//! mm has run on another CPU the flush is deferred (`should_defer_flush`) and the
//! mm's CPUs join the batch (`set_tlb_ubc_flush_pending`); `try_to_unmap_flush` at the
//! end of the batch (and `try_to_unmap_flush_dirty` before writing a page that was
//! mapped dirty) flushes them at once (`arch_tlbbatch_flush`): one round
//! (`flush_tlb_multi`: nr_tlb_remote_flush) of IPIs to the batch's other CPUs that are
//! running a user task at the time (`should_flush_tlb`: a CPU in lazy TLB mode, idle
//! or in a kernel thread, flushes at its next switch instead;
//! nr_tlb_remote_flush_received per CPU interrupted), and a full flush of this CPU if
//! it is in the batch and not lazy itself (nr_tlb_local_flush_all). A batch of this
//! CPU alone, or an mm that ran on this CPU alone (flushed at once, a page:
//! nr_tlb_local_flush_one), is flushed here whatever runs here. Migration batches the same way; madvise's pageout
//! (DAMON's vaddr `pageout`) flushes the range it aged through its mmu_gather
//! (`flush_tlb_mm_range`). x86 clears accessed bits without a flush
//! (`ptep_clear_flush_young` there only clears the bit), so reclaim's and DAMON's
//! young-bit tests cost none: that is the behaviour modelled.
//!
//! The initiator pays `costs.tlb_flush` for its own flush and `costs.tlb_ipi` per CPU
//! it interrupts; each interrupted CPU's running task pays `costs.tlb_flush`
//! ([`Out::TlbShootdown`], settled by the driver).

use super::vm_event_item::Ev;
use super::{Mm, Out};

/// `tlb_single_page_flush_ceiling`: a range of more pages is flushed whole.
const TLB_SINGLE_PAGE_FLUSH_CEILING: u64 = 33;

/// `struct tlbflush_unmap_batch`: the CPUs a deferred flush must reach.
#[derive(Debug, Clone, Default)]
pub struct TlbUnmapBatch {
    /// A bit per CPU.
    cpumask: Vec<u64>,
    /// Some unmap is waiting for this flush.
    flush_required: bool,
    /// One of them was of a dirty PTE: flush before writing the page out.
    flush_required_dirty: bool,
}

fn test_bit(mask: &[u64], cpu: usize) -> bool {
    mask.get(cpu / 64).is_some_and(|w| w >> (cpu % 64) & 1 != 0)
}

/// CPUs in `mask` other than `cpu` (`cpumask_any_but` found one if non-zero).
fn weight_but(mask: &[u64], cpu: usize) -> u64 {
    let all: u64 = mask.iter().map(|w| u64::from(w.count_ones())).sum();
    all - u64::from(test_bit(mask, cpu))
}

impl Mm {
    /// `switch_mm`: workload `w`'s mm runs on `cpu` (the driver calls it at each slice).
    pub fn mm_cpumask_set(&mut self, w: usize, cpu: usize) {
        let words = self.cfg.nr_cpus.max(1).div_ceil(64) as usize;
        let mask = &mut self.mm_cpumask[w];
        if mask.len() < words {
            mask.resize(words, 0);
        }
        mask[cpu / 64] |= 1 << (cpu % 64);
    }

    /// `set_tlb_ubc_flush_pending` after `try_to_unmap_one` cleared a PTE of workload
    /// `w`'s mm (`dirty`: the PTE was dirty): deferred when the mm has run on another
    /// CPU (`should_defer_flush`), else flushed here, one page.
    pub(crate) fn tlb_unmap_pending(&mut self, w: Option<usize>, dirty: bool) {
        let cpu = self.current_cpu;
        // Disjoint fields: the mm's mask joins the batch without a copy (this runs per
        // page unmapped).
        let Mm {
            mm_cpumask,
            tlb_ubc,
            ..
        } = self;
        let mask = w
            .and_then(|w| mm_cpumask.get(w))
            .map_or(&[][..], |m| m.as_slice());
        if weight_but(mask, cpu) == 0 {
            // ptep_clear_flush: the mm is (at most) on this CPU.
            if test_bit(mask, cpu) {
                self.count(Ev::NrTlbLocalFlushOne, 1);
                self.charge(self.cfg.costs.tlb_flush_ns);
            }
            return;
        }
        if tlb_ubc.cpumask.len() < mask.len() {
            tlb_ubc.cpumask.resize(mask.len(), 0);
        }
        for (acc, m) in tlb_ubc.cpumask.iter_mut().zip(mask) {
            *acc |= m;
        }
        tlb_ubc.flush_required = true;
        tlb_ubc.flush_required_dirty |= dirty;
    }

    /// `try_to_unmap_flush`: the batch's flush, if one is pending.
    pub(crate) fn try_to_unmap_flush(&mut self) {
        if !self.tlb_ubc.flush_required {
            return;
        }
        // The mask is lent out for the flush and comes back cleared (one per batch:
        // keep its allocation).
        let mut mask = std::mem::take(&mut self.tlb_ubc.cpumask);
        self.tlb_ubc.flush_required = false;
        self.tlb_ubc.flush_required_dirty = false;
        self.flush_tlb_cpus(&mask, None);
        mask.fill(0);
        self.tlb_ubc.cpumask = mask;
    }

    /// `try_to_unmap_flush_dirty`: before writing a page whose PTE was dirty, so no CPU
    /// can still write through a stale translation.
    pub(crate) fn try_to_unmap_flush_dirty(&mut self) {
        if self.tlb_ubc.flush_required_dirty {
            self.try_to_unmap_flush();
        }
    }

    /// `flush_tlb_mm_range` of `nr_pages` of workload `w`'s mm (an mmu_gather's flush).
    pub(crate) fn flush_tlb_mm_range(&mut self, w: usize, nr_pages: u64) {
        let Some(mask) = self.mm_cpumask.get_mut(w).map(std::mem::take) else {
            return self.flush_tlb_cpus(&[], Some(nr_pages));
        };
        self.flush_tlb_cpus(&mask, Some(nr_pages));
        self.mm_cpumask[w] = mask;
    }

    /// `arch_tlbbatch_flush` / `flush_tlb_mm_range`: with another CPU in `mask`,
    /// `flush_tlb_multi`: an IPI to each of them running a user task, and this CPU's
    /// own flush if it is in `mask` and not lazy; else this CPU's flush if it is in
    /// `mask`. The whole TLB, or (`pages` up to the ceiling) page by page.
    fn flush_tlb_cpus(&mut self, mask: &[u64], pages: Option<u64>) {
        let cpu = self.current_cpu;
        let costs = self.cfg.costs;
        let now = self.clock();
        let multi = weight_but(mask, cpu) > 0;
        if multi {
            self.count(Ev::NrTlbRemoteFlush, 1);
            let cpus: Vec<u32> = crate::bitmap::for_each_set_bit(mask)
                .filter(|&c| c != cpu && self.cpu_user_until.get(c).is_some_and(|&t| t > now))
                .map(|c| c as u32)
                .collect();
            let received = cpus.len() as u64;
            if received > 0 {
                self.count(Ev::NrTlbRemoteFlushReceived, received);
                self.charge(received * costs.tlb_ipi_ns);
                self.out.push(Out::TlbShootdown {
                    cpus,
                    at: now,
                    ns: costs.tlb_flush_ns,
                });
            }
        }
        // In flush_tlb_multi this CPU is one of the mask's, skipped while lazy (a
        // kernel thread: kswapd, kdamond); alone, it flushes whatever runs.
        let lazy = !matches!(self.current, super::Current::Task(_));
        if test_bit(mask, cpu) && !(multi && lazy) {
            match pages {
                Some(n) if n <= TLB_SINGLE_PAGE_FLUSH_CEILING => {
                    self.count(Ev::NrTlbLocalFlushOne, n)
                }
                _ => self.count(Ev::NrTlbLocalFlushAll, 1),
            }
            self.charge(costs.tlb_flush_ns);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{pg, pte};
    use crate::page_alloc::test_pages::add_pages_of;
    use crate::test_util::{add_zram, config, task_mm};
    use crate::vmscan::ScanControl;
    use crate::{Current, SpaceKind};

    /// A 64 MiB machine of 8 CPUs with zram, one process holding `n` anon pages whose
    /// PTEs are `dirty` or clean, its threads having run on `cpus`, user tasks running
    /// on `busy`; reclaim of the pages as one batch by `who` on CPU `on`. Returns the
    /// four counters, the CPU time charged and the model.
    fn reclaim_batch(
        n: u32,
        dirty: bool,
        cpus: &[usize],
        busy: &[usize],
        (who, on): (Current, usize),
    ) -> ([u64; 4], u64, Mm) {
        let mut cfg = config(64);
        cfg.nr_cpus = 8;
        add_zram(&mut cfg, 64);
        let mut mm = task_mm(cfg);
        let (space, pfns) = add_pages_of(&mut mm, SpaceKind::Anon, n, 0, Some(0));
        if dirty {
            for i in 0..n {
                mm.spaces[space as usize].set_bits(i, pte::DIRTY);
            }
        }
        for &c in cpus {
            mm.mm_cpumask_set(0, c);
        }
        for &c in busy {
            mm.cpu_user_until[c] = u64::MAX;
        }
        for &p in &pfns {
            mm.folio_changed(p);
            mm.lruvec_del_folio(p);
            mm.frames[p as usize].list = crate::page::on::ISOLATED;
            mm.frames[p as usize].clear(pg::REFERENCED);
        }
        (mm.current, mm.current_cpu) = (who, on);
        let mut sc = ScanControl::new(0, 1, 0);
        sc.may_writepage = true;
        sc.may_swap = true;
        sc.may_unmap = true;
        let before = mm.cpu_ns;
        let (freed, _, back) = mm.shrink_folio_list(pfns, &mut sc, 0, true);
        for p in back {
            mm.frames[p as usize].list = crate::page::on::NONE;
            mm.lruvec_add_folio(p);
        }
        assert!(freed > 0 || dirty);
        let ev = |e| mm.vmstat.get(e);
        let counts = [
            ev(Ev::NrTlbRemoteFlush),
            ev(Ev::NrTlbRemoteFlushReceived),
            ev(Ev::NrTlbLocalFlushAll),
            ev(Ev::NrTlbLocalFlushOne),
        ];
        let cpu = mm.cpu_ns - before;
        (counts, cpu, mm)
    }

    const TASK: Current = Current::Task(0);

    /// Clean PTEs of an mm that ran on CPUs 0, 1 and 2 (k = 3), reclaimed by a task on
    /// CPU 0 while user tasks run on 1 and 2: every unmap is deferred; the batch ends in
    /// one round of IPIs to CPUs 1 and 2 (2 received) and one full local flush. On CPU
    /// 5 (not the mm's): three received, no local flush. With CPU 2 idle (lazy): one
    /// received. By kswapd on CPU 0 (a kernel thread, lazy): no local flush.
    #[test]
    fn a_clean_batch_flushes_once_to_every_other_busy_cpu() {
        let (c, _, mm) = reclaim_batch(16, false, &[0, 1, 2], &[1, 2], (TASK, 0));
        assert_eq!(c, [1, 2, 1, 0]);
        let shootdowns: Vec<_> = mm
            .out
            .iter()
            .filter_map(|o| match o {
                Out::TlbShootdown { cpus, .. } => Some(cpus.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(shootdowns, [vec![1, 2]]);
        let (c, _, _) = reclaim_batch(16, false, &[0, 1, 2], &[0, 1, 2], (TASK, 5));
        assert_eq!(c, [1, 3, 0, 0]);
        let (c, _, _) = reclaim_batch(16, false, &[0, 1, 2], &[1], (TASK, 0));
        assert_eq!(c, [1, 1, 1, 0]);
        let (c, _, _) = reclaim_batch(16, false, &[0, 1, 2], &[1, 2], (Current::Kswapd(0), 0));
        assert_eq!(c, [1, 2, 0, 0]);
    }

    /// The reclaimer is charged its flush and an IPI per CPU interrupted: against an
    /// mm that ran nowhere (no flush at all, the rest of the work the same), tlb_flush
    /// + 2 x tlb_ipi more.
    #[test]
    fn the_reclaimer_pays_its_flush_and_each_ipi() {
        let (_, base, _) = reclaim_batch(16, false, &[0, 1, 2], &[1, 2], (TASK, 0));
        let (_, none, _) = reclaim_batch(16, false, &[], &[1, 2], (TASK, 0));
        let costs = crate::Costs::default();
        assert_eq!(base - none, costs.tlb_flush_ns + 2 * costs.tlb_ipi_ns);
    }

    /// Dirty PTEs: each page is written to swap, and each write first flushes what is
    /// pending (`try_to_unmap_flush_dirty`): 16 pages, 16 rounds of 2 IPIs; nothing is
    /// left for the batch's end.
    #[test]
    fn each_dirty_page_is_flushed_before_it_is_written() {
        let (c, _, _) = reclaim_batch(16, true, &[0, 1, 2], &[1, 2], (TASK, 0));
        assert_eq!(c, [16, 32, 16, 0]);
    }

    /// An mm that ran only on the reclaiming CPU is flushed page by page at once, with
    /// no IPI, whoever reclaims.
    #[test]
    fn an_mm_on_this_cpu_alone_is_flushed_a_page_at_a_time() {
        let (c, _, _) = reclaim_batch(16, false, &[3], &[0, 1], (TASK, 3));
        assert_eq!(c, [0, 0, 0, 16]);
        let (c, _, _) = reclaim_batch(16, false, &[3], &[], (Current::Kswapd(0), 3));
        assert_eq!(c, [0, 0, 0, 16]);
    }
}
