//! `highalloc`: high-order allocation attempts as mmtests' stress-highalloc makes
//! them (a kernel module allocating huge pages with given GFP flags): `rate` attempts
//! per second per thread, up to `count` each, every success kept to the end. Each
//! attempt is an operation; the successes are reported beside them.

use super::{Ctx, Step, Thread, WorkloadStats};
use crate::mm::memory::FaultResult;
use crate::mm::page_alloc::{parse_gfp, Gfp};
use crate::scenario::Workload as WorkloadCfg;

pub struct Highalloc {
    gfp: Gfp,
    order: usize,
    count: Option<u64>,
}

impl Highalloc {
    pub fn new(cfg: &WorkloadCfg) -> Highalloc {
        Highalloc {
            gfp: parse_gfp(cfg.gfp.as_deref().expect("validated")).expect("validated"),
            order: cfg.order.expect("validated") as usize,
            count: cfg.count,
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
            return Step::Finished;
        }
        t.retry = Some((0, false, origin));
        let (gfp, order) = (self.gfp, self.order);
        let mut ok = false;
        let r = cx.kernel(|mm| match mm.alloc_kernel_pages(gfp, order) {
            Some(_) => {
                ok = true;
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
        Step::Op(r, 4096 << order)
    }
}
