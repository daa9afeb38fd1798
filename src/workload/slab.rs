//! `slab`: a kernel subsystem allocating and freeing objects of one size (dentries,
//! skbuffs, task structs), the unmovable or reclaimable memory that fragments the
//! page allocator ([`crate::mm::slab`]). Each operation first frees the thread's
//! objects whose lifetime has passed, then allocates one.

use super::{Ctx, Step, Thread};
use crate::mm::memory::FaultResult;
use crate::mm::slab::KmemCache;
use crate::mm::Mm;
use crate::scenario::{LifetimeDist, Scenario, SlabType, Workload as WorkloadCfg};
use rand::Rng;
use std::cmp::Reverse;

pub struct Slab {
    cache: u32,
    object_size: u64,
    lifetime_ns: u64,
    exponential: bool,
}

/// CPU time of one `kmem_cache_alloc` or `kmem_cache_free` from a partial slab: a
/// per-CPU freelist pop or push, a few cache lines.
const SLAB_OP_NS: u64 = 50;

impl Slab {
    pub fn new(cfg: &WorkloadCfg, sc: &Scenario, mm: &mut Mm) -> Slab {
        let object_size = cfg.object_size.expect("validated").0;
        let reclaimable = cfg.slab_type == Some(SlabType::Reclaimable);
        let cache =
            mm.kmem_cache_create(KmemCache::new(object_size, reclaimable, sc.machine.nr_cpus));
        Slab {
            cache,
            object_size,
            lifetime_ns: cfg.lifetime.expect("validated").0,
            exponential: cfg.lifetime_dist != Some(LifetimeDist::Fixed),
        }
    }

    pub(crate) fn op(&mut self, t: &mut Thread, cx: &mut Ctx, origin: u64) -> Step {
        let cache = self.cache;
        while let Some(&Reverse((expiry_ns, slab))) = t.slab_objects.peek() {
            if expiry_ns > cx.clock {
                break;
            }
            t.slab_objects.pop();
            cx.kernel(|mm| {
                mm.kmem_cache_free(cache, slab);
                mm.charge(SLAB_OP_NS);
                FaultResult::Done
            });
        }
        t.retry = Some((0, false, origin));
        let mut got = None;
        let r = cx.kernel(|mm| {
            mm.charge(SLAB_OP_NS);
            match mm.kmem_cache_alloc(cache) {
                Some(slab) => {
                    got = Some(slab);
                    FaultResult::Done
                }
                None => mm.alloc_failure(),
            }
        });
        if let Some(slab) = got {
            let life = if self.exponential {
                // Inverse transform: -ln(1 - U) × mean, U in [0, 1).
                let u: f64 = t.rng.gen();
                (-(1.0 - u).ln() * self.lifetime_ns as f64) as u64
            } else {
                self.lifetime_ns
            };
            t.slab_objects.push(Reverse((cx.clock + life.max(1), slab)));
        }
        Step::Op(r, self.object_size)
    }
}
