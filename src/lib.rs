//! reclaimsim: a deterministic simulator of the Linux kernel's memory-reclaim subsystem.
//!
//! A [`scenario::Scenario`] describes a machine (memory, CPUs, swap, storage), kernel
//! settings under their sysctl names and workloads. [`sim::Simulation`] runs it in
//! virtual time: workload threads touch pages, faults allocate through the kernel's
//! allocation path, kswapd and direct reclaim free memory by the kernel's rules, and
//! every piece of kernel work is charged to the task that does it. The run returns
//! [`report::results::Results`]: /proc/vmstat counters, PSI, per-task CPU time and the
//! workloads' throughput and latency, identical for the same scenario and seed.
//!
//! The modules follow the kernel's layout: [`mm`] holds one module per kernel file it
//! models (`mm::vmscan`, `mm::workingset`, `mm::page_alloc`, ...), [`sim`] the event
//! engine, [`workload`] what tasks do, [`stats`] counters and PSI, [`report`] output.
//! ARCHITECTURE.md is the code map.
//!
//! ```
//! use reclaimsim::scenario;
//! use reclaimsim::sim::{RunOptions, Simulation};
//!
//! let text = r#"
//! [run]
//! duration = "1s"
//! [machine]
//! memory = "128M"
//! [[workload]]
//! name = "scan"
//! kind = "file-read"
//! nr_files = 1
//! file_size = "256M"
//! io_size = "128K"
//! pattern = "sequential"
//! "#;
//! let sc = scenario::parse_str(text, "example.toml", &[]).unwrap();
//! let r = Simulation::new(sc).run(RunOptions::default()).unwrap();
//! // Reading twice the memory's worth of file makes kswapd reclaim page cache.
//! assert!(r.vm("pgsteal_kswapd") > 0);
//! ```

pub mod bench;

/// Whether this crate was compiled with the committed profile (`pgo/`, added by the
/// rustc wrapper `.cargo/config.toml` names): the speeds in BENCHMARKS.md assume it.
pub const BUILT_WITH_PROFILE: bool = cfg!(reclaimsim_pgo);
pub mod cache;
pub mod fuzz;
pub mod hint;
pub mod host_memory;
pub mod mm;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod sweep;
pub mod trace;
pub mod units;
pub mod workload;
