//! The kernel model used alone, as another tool would use it: no scenario, no engine.
//! A driver builds an `Mm` from `Config::new`, makes one task current, and faults in
//! an anonymous mapping half again the size of RAM, advancing the clock by the CPU
//! time each fault charges and retrying faults that sleep. Nobody runs kswapd here,
//! so direct reclaim must make every page's room.

use reclaimsim_mm::blk_mq::DeviceConfig;
use reclaimsim_mm::memory::FaultResult;
use reclaimsim_mm::vm_event_item::Ev;
use reclaimsim_mm::{Config, Current, Mm, SpaceKind, SwapConfig, SwapKind, WorkloadConfig};

const MIB_PAGES: u64 = 256;

/// Faults in `mapping_mib` of anon memory, each page written once, on a machine of
/// `memory_mib` with zram swap; returns the model and the mapping's space.
fn fault_in(memory_mib: u64, mapping_mib: u64) -> (Mm, u32) {
    let mut cfg = Config::new(memory_mib * MIB_PAGES);
    let DeviceConfig::Block(disk) = cfg.storage else {
        unreachable!("the default storage is a disk")
    };
    cfg.swap = Some(SwapConfig {
        kind: SwapKind::Zram,
        size_pages: 2 * mapping_mib * MIB_PAGES,
        compression_ratio: 3.0,
        mem_limit_bytes: 0,
        device: disk,
    });
    cfg.workloads.push(WorkloadConfig {
        page_tables: true,
        ..Default::default()
    });
    let mut mm = Mm::new(cfg);
    mm.set_nr_tasks(1);
    mm.current = Current::Task(0);
    mm.current_task = 0;
    mm.current_workload = Some(0);
    // No kswapd will ever reclaim: the node is as hopeless to it as after
    // MAX_RECLAIM_RETRIES failed runs, so direct reclaimers are not held on
    // pfmemalloc_wait for it (`allow_direct_reclaim`).
    mm.kswapd[0].failures = reclaimsim_mm::kswapd::MAX_KSWAPD_FAILURES;
    let pages = (mapping_mib * MIB_PAGES) as u32;
    let space = mm.add_space(SpaceKind::Anon, "hog".into(), pages as u64, Some(0));
    let mut now_ns = 0u64;
    for vpn in 0..pages {
        loop {
            mm.now = now_ns;
            mm.cpu_ns = 0;
            let r = mm.handle_anon_fault(space, vpn, true);
            // The driver runs no kernel threads: their wake-ups go unanswered.
            mm.out.clear();
            match r {
                FaultResult::Done => {
                    assert!(mm.cpu_ns > 0, "a fault took no time");
                    now_ns += mm.cpu_ns;
                    break;
                }
                FaultResult::Retry { until_ns } | FaultResult::Blocked { until_ns, .. } => {
                    assert!(until_ns > now_ns, "a sleep that does not advance time");
                    now_ns = until_ns;
                }
                FaultResult::Killed => panic!("OOM-killed at page {vpn} of {pages}"),
            }
        }
    }
    (mm, space)
}

#[test]
fn a_mapping_larger_than_ram_is_swapped_by_direct_reclaim() {
    let (mm, space) = fault_in(64, 96);
    let s = &mm.spaces[space as usize];
    let pages = 96 * MIB_PAGES;
    // Every page written is either resident or on swap.
    assert_eq!(s.nr_present + s.nr_swap, pages);
    // RAM holds at most 64 MiB, less what the kernel and the zram pool keep: at least
    // the other 32 MiB went to swap, and all of it by direct reclaim.
    assert!(s.nr_swap >= 32 * MIB_PAGES, "swapped {}", s.nr_swap);
    assert!(mm.vmstat.get(Ev::Pswpout) >= s.nr_swap);
    assert!(mm.vmstat.get(Ev::PgstealDirect) >= s.nr_swap);
    assert_eq!(mm.vmstat.get(Ev::PgstealKswapd), 0);
    mm.check_invariants().unwrap();
}

#[test]
fn the_same_calls_give_the_same_model() {
    let (a, _) = fault_in(16, 24);
    let (b, _) = fault_in(16, 24);
    assert_eq!(a.vmstat.ev, b.vmstat.ev);
    assert!(a.vmstat.get(Ev::Pswpout) > 0);
}
