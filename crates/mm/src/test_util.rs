//! Helpers the mm unit tests share: a `Config` built up by hand and an `Mm` with a
//! task running. A driver of the model, so it names nothing but the crate root's
//! types (the helpers that put pages on lists by hand are `page_alloc::test_pages`).

use super::blk_mq::DeviceConfig;
use super::{
    Config, Current, MemcgConfig, Mm, NodeConfig, NodePerf, SwapConfig, SwapKind, WorkloadConfig,
    LOCAL_DISTANCE, REMOTE_DISTANCE,
};

/// A machine of `memory_mib` MiB with one process (workload 0, in the root cgroup)
/// and every knob at its default.
pub fn config(memory_mib: u64) -> Config {
    let mut cfg = Config::new(memory_mib << 8);
    add_process(&mut cfg, None);
    cfg
}

/// Another process, in cgroup `memcg` (None: the root).
pub fn add_process(cfg: &mut Config, memcg: Option<&str>) {
    cfg.workloads.push(WorkloadConfig {
        memcg: memcg.map(str::to_string),
        page_tables: true,
        ..Default::default()
    });
}

/// `mib` MiB of zram swap (pages compress 3:1, no pool limit).
pub fn add_zram(cfg: &mut Config, mib: u64) {
    let DeviceConfig::Block(disk) = cfg.storage else {
        unreachable!("the default storage is a disk")
    };
    cfg.swap = Some(SwapConfig {
        kind: SwapKind::Zram,
        size_pages: mib << 8,
        compression_ratio: 3.0,
        mem_limit_bytes: 0,
        device: disk,
    });
}

/// Cgroups at `paths` (no protection, no limits), each after its parent.
pub fn add_memcgs(cfg: &mut Config, paths: &[&str]) {
    cfg.memcgs.extend(paths.iter().map(|p| MemcgConfig::new(p)));
}

/// `kernel.lru = "mglru"`: the multi-gen LRU with every feature bit on.
pub fn mglru(cfg: &mut Config) {
    cfg.lru_gen.enabled = true;
}

/// The `Mm` of `cfg`, with one task created and running (task 0).
pub fn task_mm(cfg: Config) -> Mm {
    let mut mm = Mm::new(cfg);
    mm.set_nr_tasks(1);
    mm.current = Current::Task(0);
    mm
}

/// Two nodes of 64 MiB (`cfg` is a 128 MiB machine), a CPU each, no per-CPU lists
/// (a zone's free pages fall one by one). Node 0's one zone is id 0 (DMA32), node
/// 1's id 3 (Normal).
pub fn two_nodes(cfg: &mut Config) {
    assert_eq!(cfg.memory_pages, 32768);
    cfg.nr_cpus = 2;
    cfg.pcp = crate::pcp::PcpVersion::Off;
    cfg.nodes = (0..2)
        .map(|n| NodeConfig {
            memory_pages: 16384,
            cpus: vec![n],
            distance: if n == 0 {
                vec![LOCAL_DISTANCE, REMOTE_DISTANCE]
            } else {
                vec![REMOTE_DISTANCE, LOCAL_DISTANCE]
            },
            perf: None,
        })
        .collect();
}

/// A node of `memory_pages`, `cpus` and SLIT row `distance`, default DRAM.
pub fn node(memory_pages: u64, cpus: &[u32], distance: &[u32]) -> NodeConfig {
    NodeConfig {
        memory_pages,
        cpus: cpus.to_vec(),
        distance: distance.to_vec(),
        perf: None,
    }
}

/// [`two_nodes`] as a memory tier below DRAM: node 0 DRAM with both CPUs (100 ns,
/// 40 GB/s), node 1 CPU-less CXL (250 ns, 20 GB/s: the next tier, slow).
pub fn dram_and_cxl(cfg: &mut Config) {
    two_nodes(cfg);
    cfg.nodes[0].cpus = vec![0, 1];
    cfg.nodes[1].cpus.clear();
    cfg.nodes[0].perf = Some(NodePerf {
        latency_ns: 100,
        bandwidth_mbps: 40_000,
    });
    cfg.nodes[1].perf = Some(NodePerf {
        latency_ns: 250,
        bandwidth_mbps: 20_000,
    });
}
