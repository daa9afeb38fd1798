//! NUMA nodes from a scenario: until reclaim is per node, a scenario may describe one
//! node, and that node (with any policy, which on one node has nowhere else to go)
//! must be the machine of no `[[machine.node]]` at all, run for run.

mod common;

use common::run_checked;

/// 256 MiB and 2 CPUs with zram; a 320 MiB anonymous set, so kswapd and direct
/// reclaim both run, and a file reader.
const PLAIN: &str = r#"[run]
duration = "2s"

[machine]
memory = "256M"
nr_cpus = 2
swap = { type = "zram", size = "512M" }

[[workload]]
name = "anon"
kind = "anon"
size = "320M"
threads = 2

[[workload]]
name = "reader"
kind = "file-read"
nr_files = 4
file_size = "32M"
"#;

#[test]
fn one_explicit_node_runs_as_no_node() {
    let plain = run_checked(PLAIN, &[]);
    assert!(plain.vmstat["pgscan_kswapd"] > 0 && plain.vmstat["pswpout"] > 0);
    let node = PLAIN.replacen(
        "swap = { type = \"zram\", size = \"512M\" }\n",
        "swap = { type = \"zram\", size = \"512M\" }\n\n[[machine.node]]\nmemory = \"256M\"\ncpus = [0, 1]\n",
        1,
    );
    for policy in [
        "",
        "mempolicy = { mode = \"bind\", nodes = [0] }\n",
        "mempolicy = { mode = \"interleave\", nodes = [0] }\n",
        "mempolicy = { mode = \"preferred\", nodes = [0] }\n",
    ] {
        let text = node.replacen("threads = 2\n", &format!("threads = 2\n{policy}"), 1);
        let r = run_checked(&text, &[]);
        assert_eq!(r.vmstat, plain.vmstat, "{policy}");
        assert_eq!(
            serde_json::to_value(&r.workloads).unwrap(),
            serde_json::to_value(&plain.workloads).unwrap(),
            "{policy}"
        );
    }
}
