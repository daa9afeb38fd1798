//! Property tests (proptest): the buddy allocator under random allocation and free
//! sequences.

use proptest::prelude::*;
use reclaimsim::mm::page_alloc::GFP_HIGHUSER_MOVABLE;
use reclaimsim::mm::Mm;
use reclaimsim::scenario;

fn tiny_mm() -> Mm {
    let sc = scenario::parse_str(
        "[machine]\nmemory = \"64M\"\n[[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"4K\"\n",
        "p.toml",
        &[],
    )
    .unwrap();
    Mm::new(reclaimsim::scenario::mm_config::mm_config(&sc))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Blocks handed out never overlap, the free count (the buddy's and the per-CPU
    /// lists') tracks them exactly, and once everything is freed and the per-CPU lists
    /// drained the buddies merge back into the initial max-order blocks.
    #[test]
    fn buddy_allocations_never_overlap_and_merge_back(ops in prop::collection::vec((0usize..4, any::<bool>()), 1..300)) {
        let mut mm = tiny_mm();
        let total = mm.nr_free_pages();
        let mut held: Vec<(u32, usize)> = Vec::new();
        let mut owner = vec![false; mm.frames.len()];
        for (order, free) in ops {
            if free && !held.is_empty() {
                let (pfn, o) = held.swap_remove(held.len() / 2);
                for p in pfn..pfn + (1 << o) {
                    owner[p as usize] = false;
                }
                mm.free_pages(pfn, o);
            } else if let Some(pfn) = mm.alloc_pages(GFP_HIGHUSER_MOVABLE, order) {
                prop_assert_eq!(pfn % (1 << order), 0, "naturally aligned");
                for p in pfn..pfn + (1 << order) {
                    prop_assert!(!owner[p as usize], "pfn {} handed out twice", p);
                    owner[p as usize] = true;
                }
                held.push((pfn, order));
            }
            let in_use: u64 = held.iter().map(|&(_, o)| 1u64 << o).sum();
            let pcp = mm.pcp_pages(0) + mm.pcp_pages(1);
            prop_assert_eq!(mm.nr_free_pages() + pcp + in_use, total);
        }
        for (pfn, o) in held.drain(..) {
            mm.free_pages(pfn, o);
        }
        mm.drain_all_pages();
        prop_assert_eq!(mm.nr_free_pages(), total);
        prop_assert!(mm.check_invariants().is_ok(), "{:?}", mm.check_invariants());
        // 64 MiB = 16 blocks of 4 MiB: all merged back.
        let z = mm.zones.iter().find(|z| z.is_managed()).unwrap();
        prop_assert_eq!(z.free_area[10].nr_free, 16);
    }
}

proptest! {
    /// Without memory_recursiveprot a child's effective protection never exceeds its
    /// own claim (min(usage, low)); with or without it, siblings together never get
    /// more than their parent's. (Recursive protection may exceed a child's usage when
    /// the parent's exceeds its own usage, as in the kernel: the child is then simply
    /// fully protected.)
    #[test]
    fn effective_protection_is_bounded(
        parent_low in 0u64..1_000_000,
        kids in prop::collection::vec((0u64..500_000, 1u64..500_000), 1..6),
        recursive in any::<bool>(),
    ) {
        use reclaimsim::mm::page_counter::Counters;
        let mut t = Counters::new();
        let top = t.add(0);
        let p = t.add(top);
        t.set_protection(top, 0, u64::MAX / 4);
        t.set_protection(p, 0, parent_low);
        let ids: Vec<usize> = kids
            .iter()
            .map(|&(low, usage)| {
                let k = t.add(p);
                t.set_protection(k, 0, low);
                t.charge(k, usage);
                k
            })
            .collect();
        for i in [top, p].into_iter().chain(ids.iter().copied()) {
            t.calculate_protection(0, i, recursive);
        }
        let parent_elow = t.c[p].elow;
        let mut sum = 0;
        for (k, &(low, usage)) in ids.iter().zip(&kids) {
            let e = t.c[*k].elow;
            if !recursive {
                prop_assert!(e <= low.min(usage));
            }
            sum += e;
        }
        prop_assert!(sum <= parent_elow, "children {} > parent {}", sum, parent_elow);
    }
}
