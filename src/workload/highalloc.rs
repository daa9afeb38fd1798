//! `highalloc`: high-order allocation attempts as mmtests' stress-highalloc makes
//! them (a kernel module allocating huge pages with given GFP flags): `rate` attempts
//! per second per thread, up to `count` each. Every block obtained is held until the
//! thread's last attempt, then all are freed, as the module frees its pages at the
//! end of each pass. Each attempt is an operation; the successes are reported beside
//! them.

use super::{Ctx, Step, Thread, WorkloadStats};
use crate::mm::memory::FaultResult;
use crate::mm::page_alloc::{parse_gfp, Gfp};
use crate::scenario::Workload as WorkloadCfg;

pub struct Highalloc {
    gfp: Gfp,
    order: usize,
    count: Option<u64>,
    /// Per thread, the blocks it obtained so far, freed when its count is done.
    held: Vec<Vec<crate::mm::page::Pfn>>,
}

impl Highalloc {
    pub fn new(cfg: &WorkloadCfg) -> Highalloc {
        Highalloc {
            gfp: parse_gfp(cfg.gfp.as_deref().expect("validated")).expect("validated"),
            order: cfg.order.expect("validated") as usize,
            count: cfg.count,
            held: Vec::new(),
        }
    }

    pub(crate) fn op(
        &mut self,
        stats: &mut WorkloadStats,
        t: &mut Thread,
        cx: &mut Ctx,
        origin: u64,
    ) -> Step {
        if self.count.is_some_and(|n| t.ops >= n) {
            let order = self.order;
            let held = self
                .held
                .get_mut(t.index)
                .map(std::mem::take)
                .unwrap_or_default();
            if !held.is_empty() {
                cx.kernel(|mm| {
                    for pfn in held {
                        mm.charge(mm.cfg.costs.syscall_ns);
                        mm.free_kernel_pages(pfn, order);
                    }
                    FaultResult::Done
                });
            }
            return Step::Finished;
        }
        t.retry = Some((0, false, origin));
        let (gfp, order) = (self.gfp, self.order);
        let mut ok = false;
        let mut got = None;
        let r = cx.kernel(|mm| match mm.alloc_kernel_pages(gfp, order) {
            Some(pfn) => {
                ok = true;
                got = Some(pfn);
                FaultResult::Done
            }
            // Slept in reclaim: the attempt goes on after the sleep. Otherwise it
            // failed, which a high-order caller survives (no OOM kill above order 3).
            None => match mm.blocked_until.take() {
                Some(until_ns) => FaultResult::Retry { until_ns },
                None => FaultResult::Done,
            },
        });
        if ok {
            stats.alloc_success += 1;
        }
        if let Some(pfn) = got {
            if self.held.len() <= t.index {
                self.held.resize(t.index + 1, Vec::new());
            }
            self.held[t.index].push(pfn);
        }
        Step::Op(r, 4096 << order)
    }
}
