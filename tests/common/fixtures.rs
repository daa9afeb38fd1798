//! Scenario texts more than one integration test runs (included by `#[path]`, so a
//! test takes only these, not `common`'s helpers).

/// A small machine under reclaim in 3 s: a uniform anonymous service in a cgroup and a
/// sequential reader, with zram swap.
pub const SMALL_RUN: &str = r#"
[run]
duration = "3s"
sample_interval = "500ms"
[machine]
memory = "256M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "512M"
[[cgroup]]
path = "svc"
[[workload]]
name = "db"
kind = "anon"
size = "300M"
pattern = "uniform"
rate = 200000
cgroup = "svc"
[[workload]]
name = "scan"
kind = "file-read"
nr_files = 1
file_size = "100M"
io_size = "64K"
pattern = "sequential"
rate = 1000
"#;
