//! reclaimsim: a deterministic simulator of the Linux kernel's memory-reclaim subsystem.
//!
//! A [`scenario::Scenario`] describes a machine (memory, CPUs, swap, storage), kernel
//! settings under their sysctl names and workloads. [`sim::Simulation`] runs it in
//! virtual time: workload threads touch pages, faults allocate through the kernel's
//! allocation path, kswapd and direct reclaim free memory by the kernel's rules, and
//! every piece of kernel work is charged to the task that does it. [`report::run`]
//! reads the finished run's [`report::results::Results`]: /proc/vmstat counters, PSI,
//! per-task CPU time and the workloads' throughput and latency, identical for the same
//! scenario and seed.
//!
//! This is the top crate of the workspace. The kernel model is the crate
//! `reclaimsim-mm`, re-exported as [`mm`]: one module per kernel file it models
//! (`mm::vmscan`, `mm::workingset`, `mm::page_alloc`, ...), built from its own
//! [`mm::Config`], which [`scenario::mm_config`] makes from a scenario. The trace
//! formats ([`trace`]) and the replacement policies ([`cache`]) are crates of their
//! own too. Here: [`scenario`] loads and validates, [`sim`] is the event engine,
//! [`workload`] what tasks do, [`stats`] PSI and the timeseries, [`report`] output,
//! [`sweep`] parameter sweeps. ARCHITECTURE.md draws the graph and is the code map.
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
//! let r = reclaimsim::report::run(Simulation::new(sc), RunOptions::default()).unwrap();
//! // Reading twice the memory's worth of file makes kswapd reclaim page cache.
//! assert!(r.vm("pgsteal_kswapd") > 0);
//! ```

pub mod bench;

/// Whether this crate was compiled with the committed profile (`pgo/`, added by the
/// rustc wrapper `.cargo/config.toml` names): the speeds in BENCHMARKS.md assume it.
pub const BUILT_WITH_PROFILE: bool = cfg!(reclaimsim_pgo);
pub use reclaimsim_cache as cache;
pub mod fuzz;
pub mod host_memory;
pub use reclaimsim_mm as mm;
pub use reclaimsim_mm::{hint, rng};
pub mod report;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod sweep;
pub use reclaimsim_trace as trace;
pub mod units;
pub mod workload;
