//! NUMA nodes from a scenario: one explicit node (with any policy, which on one node
//! has nowhere else to go) is the machine of no `[[machine.node]]` at all, run for
//! run; on two nodes each node's pages are its own lruvecs' and its own kswapd's.

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

/// Two nodes of 128 MiB, one CPU each, zram; `workload` appended.
fn two_nodes(workload: &str) -> String {
    format!(
        r#"[run]
duration = "2s"

[machine]
memory = "256M"
nr_cpus = 2
swap = {{ type = "zram", size = "512M" }}

[[machine.node]]
memory = "128M"
cpus = [0]

[[machine.node]]
memory = "128M"
cpus = [1]

{workload}"#
    )
}

#[test]
fn interleaved_pages_split_evenly_between_the_nodes_lists() {
    // 64 MiB interleaved over both nodes (in cgroup a), far below either node's
    // watermarks: each of the 16384 anonymous faults takes the node of its page
    // offset (even offsets node 0, odd node 1), so each node's anon LRU holds 8192
    // pages. Every one was an interleave hit, and so were the 32 page-table pages
    // (16384 / 512) the task allocated under the same policy, in turn. Nothing is
    // reclaimed.
    let r = run_checked(
        &two_nodes(
            "[[cgroup]]\npath = \"a\"\n\n[[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"64M\"\ncgroup = \"a\"\nmempolicy = { mode = \"interleave\", nodes = [0, 1] }\n",
        ),
        &[],
    );
    let anon = |n: &str| {
        let v = &r.nodes[n].vmstat;
        v["nr_inactive_anon"] + v["nr_active_anon"]
    };
    assert_eq!((anon("node0"), anon("node1")), (8192, 8192));
    assert_eq!(r.vmstat["interleave_hit"], 16384 + 32);
    assert_eq!(r.vmstat["pgsteal_kswapd"] + r.vmstat["pgsteal_direct"], 0);
    // The node counters add up to the machine's.
    let sum = |k: &str| r.nodes.values().map(|n| n.vmstat[k]).sum::<u64>();
    for k in [
        "nr_free_pages",
        "nr_inactive_anon",
        "nr_active_anon",
        "nr_inactive_file",
    ] {
        assert_eq!(sum(k), r.vmstat[k], "{k}");
    }
    // memory.numa_stat splits the cgroup's anon the same way, and adds up to
    // memory.stat's.
    let memory = &r.cgroups["a"]["memory"];
    let numa_anon = &memory["numa_stat"]["anon"];
    assert_eq!(
        (numa_anon["N0"].as_u64(), numa_anon["N1"].as_u64()),
        (Some(8192 * 4096), Some(8192 * 4096))
    );
    assert_eq!(memory["stat"]["anon"].as_u64(), Some(16384 * 4096));
    // Node 0's 128 MiB is all below 4 GiB: its one zone is DMA32; node 1's is Normal.
    let zones: Vec<&str> = r.zones.keys().map(String::as_str).collect();
    assert_eq!(zones, ["node0/DMA32", "node1/Normal"]);
}

#[test]
fn a_workload_bound_to_a_node_is_reclaimed_by_that_nodes_kswapd() {
    // 200 MiB bound to node 1's 128 MiB: its pages can only be node 1's, so node 1
    // runs short and its kswapd reclaims (swapping to zram); node 0's lists never
    // hold an anonymous page (nothing else is anonymous). The invariant checker runs
    // throughout: every page on the lruvec of its own node.
    let text = two_nodes(
        "[[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"200M\"\nmempolicy = { mode = \"bind\", nodes = [1] }\n",
    );
    let r = run_checked(&text, &[]);
    let n0 = &r.nodes["node0"];
    let n1 = &r.nodes["node1"];
    assert_eq!(
        n0.vmstat["nr_inactive_anon"] + n0.vmstat["nr_active_anon"],
        0
    );
    assert!(n1.vmstat["nr_inactive_anon"] + n1.vmstat["nr_active_anon"] > 0);
    assert!(n1.kswapd_wakeups > 0 && n1.kswapd_cpu_ns > 0, "{n1:?}");
    assert!(r.vmstat["pswpout"] > 0);
    // The bound pages never spill, but local allocations on node 1's CPU (zram's
    // compressed pages, stored by whoever reclaims there) do: node 1 is short, node 0
    // never is. So every miss is node 0's and foreign to node 1, and nothing that
    // preferred node 0 went to node 1.
    assert!(n0.numastat["numa_miss"] > 0);
    assert_eq!(n0.numastat["numa_miss"], n1.numastat["numa_foreign"]);
    assert_eq!(
        (n1.numastat["numa_miss"], n0.numastat["numa_foreign"]),
        (0, 0)
    );
    assert_eq!(
        r.reclaim.kswapd_wakeups,
        n0.kswapd_wakeups + n1.kswapd_wakeups
    );
    // kswapd1 keeps to node 1's CPU, so the zram pages it stores are node 1's local
    // allocations (spilling to node 0 as misses): nothing of the run allocates locally
    // on node 0 but a few kernel pages (the bound task's pages are other_node there).
    // Run anywhere, kswapd1 would store on node 0 locally, as often as on node 1.
    assert!(
        n0.numastat["local_node"] * 100 < n1.numastat["local_node"],
        "{n0:?} {n1:?}"
    );
    // The same run again: byte-identical results.
    let again = run_checked(&text, &[]);
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}

/// A DRAM node with both CPUs and a CPU-less CXL node (2.5× the latency, half the
/// bandwidth: a slower memory tier), no swap; an anon set bound to node 0 larger than
/// it, `demotion` on or off.
fn dram_and_cxl(demotion: bool) -> String {
    format!(
        r#"[run]
duration = "2s"
{DRAM_AND_CXL}
[kernel]
numa.demotion_enabled = {demotion}

[[workload]]
name = "anon"
kind = "anon"
size = "160M"
threads = 2
"#
    )
}

/// 256 MiB and 2 CPUs: node 0 DRAM with both CPUs, node 1 CPU-less CXL.
const DRAM_AND_CXL: &str = r#"
[machine]
memory = "256M"
nr_cpus = 2

[[machine.node]]
memory = "128M"
cpus = [0, 1]
latency = "100ns"
bandwidth = "40G"

[[machine.node]]
memory = "128M"
latency = "250ns"
bandwidth = "20G"
"#;

/// With demotion, kswapd0 frees node 0 by moving its cold anon to the CXL node: the
/// steals are the demotions (no swap to write to), counted on node 0 in nodeN/vmstat,
/// /proc/vmstat and the root's memory.stat alike, and what node 1 holds is what was
/// demoted (the workload is bound to node 0, so nothing else lands there). Without
/// it, node 0's anon cannot be reclaimed at all and the bound workload meets the OOM
/// killer.
#[test]
fn demotion_moves_cold_anon_to_the_cxl_node() {
    let bound = |d: bool| {
        dram_and_cxl(d).replacen(
            "threads = 2\n",
            "threads = 2\nmempolicy = { mode = \"bind\", nodes = [0] }\n",
            1,
        )
    };
    let (r, csv) = common::run_checked_csv(&bound(true));
    let demoted = r.vmstat["pgdemote_kswapd"] + r.vmstat["pgdemote_direct"];
    // timeseries.csv's node columns: node 0's demotions a second over each row's
    // interval add up to the demotions (the run ends on a sample); its last LRU
    // sizes are the results'.
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|&c| c == name).unwrap();
    let rows: Vec<Vec<f64>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let mut t = 0.0;
    let mut sum = 0.0;
    for r in &rows {
        sum += r[col("node0/pgdemote_per_s")] * (r[col("time_s")] - t);
        t = r[col("time_s")];
    }
    assert_eq!(sum.round() as u64, demoted);
    let last = rows.last().unwrap();
    assert_eq!(
        last[col("node1/nr_inactive_anon")] as u64,
        r.nodes["node1"].vmstat["nr_inactive_anon"]
    );
    assert!(demoted > 0);
    assert_eq!(r.vmstat["pswpout"], 0);
    assert_eq!(
        r.vmstat["pgsteal_kswapd"] + r.vmstat["pgsteal_direct"],
        demoted
    );
    let node = |n: &str, k: &str| r.nodes[n].vmstat[k];
    assert_eq!(
        node("node0", "pgdemote_kswapd"),
        r.vmstat["pgdemote_kswapd"]
    );
    assert_eq!(node("node1", "pgdemote_kswapd"), 0);
    let on_node1 = node("node1", "nr_inactive_anon") + node("node1", "nr_active_anon");
    assert_eq!(on_node1, demoted);
    assert!(r.vmstat["pgmigrate_success"] >= demoted);
    assert!(r.events.iter().all(|e| e.event != "oom_kill"));

    let off = run_checked(&bound(false), &[]);
    assert_eq!(
        off.vmstat["pgdemote_kswapd"] + off.vmstat["pgdemote_direct"],
        0
    );
    assert_eq!(
        off.nodes["node1"].vmstat["nr_inactive_anon"] + off.nodes["node1"].vmstat["nr_active_anon"],
        0
    );
}

/// An access to a page on the CXL node costs its latency: 1 MiB touched at random by
/// one unpaced thread for 1 s makes 1 s / 100 ns accesses on node 0 (each
/// `costs.access`) and 1 s / 250 ns bound to node 1 (the CXL node's latency, as seen
/// from node 0's CPUs at the SLIT distance HMAT measured it from), less the 256
/// faults' time either way.
#[test]
fn an_access_to_the_cxl_node_costs_its_latency() {
    let ops = |node: u32| {
        let text = dram_and_cxl(false)
            .replacen("duration = \"2s\"", "duration = \"1s\"", 1)
            .replacen(
                "size = \"160M\"\nthreads = 2\n",
                &format!(
                    "size = \"1M\"\npattern = \"uniform\"\nmempolicy = {{ mode = \"bind\", nodes = [{node}] }}\n"
                ),
                1,
            );
        let r = run_checked(&text, &[]);
        r.workloads["anon"].ops as f64
    };
    let (dram, cxl) = (ops(0), ops(1));
    assert!((dram / 1e7 - 1.0).abs() < 0.01, "{dram}");
    assert!((cxl / 4e6 - 1.0).abs() < 0.01, "{cxl}");
}

/// NUMA balancing in memory-tiering mode: a service whose hot set moves at 1 s, on
/// a DRAM node too small for it with demotion to the CXL node. Hint faults promote
/// the hot pages found on the CXL node, never faster than the rate limit: 4 MB/s is
/// 1024 pages a second, so at most 1024 × (3 s + one window) in a 3 s run. Every
/// promotion was a hint fault's, and a migration of a page; with the mode off there
/// is no scan and no promotion.
#[test]
fn promotion_is_rate_limited() {
    let text = |nb: u32| {
        dram_and_cxl(true)
            .replacen("duration = \"2s\"", "duration = \"3s\"", 1)
            .replacen(
                "numa.demotion_enabled = true\n",
                &format!(
                    "numa.demotion_enabled = true\nnuma_balancing = {nb}\nnuma_balancing_promote_rate_limit_MBps = 4\n"
                ),
                1,
            )
            .replacen(
                "size = \"160M\"\nthreads = 2\n",
                "size = \"200M\"\nthreads = 2\npattern = \"hotcold\"\nhot_fraction = 0.3\nhot_probability = 0.9\nphase_change = \"1s\"\nrate = 200000\n",
                1,
            )
    };
    let r = run_checked(&text(2), &[]);
    let v = &r.vmstat;
    assert!(v["numa_pte_updates"] > 0 && v["numa_hint_faults"] > 0);
    let promoted = v["pgpromote_success"];
    assert!(promoted > 0, "{v:?}");
    assert!(promoted <= 1024 * 4, "{promoted}");
    assert!(v["numa_hint_faults"] >= promoted);
    assert_eq!(v["numa_pages_migrated"], promoted);
    assert_eq!(r.nodes["node0"].vmstat["pgpromote_success"], promoted);

    let off = run_checked(&text(0), &[]);
    assert_eq!(
        off.vmstat["numa_pte_updates"] + off.vmstat["pgpromote_success"],
        0
    );
}

/// `cpunodebind`: a workload bound to node 1's CPU runs only there, so its 64 MiB,
/// allocated locally, are all node 1's (16384 anon pages and its 32 page-table
/// pages, every allocation a local hit there); bound to node 0, all node 0's.
#[test]
fn cpunodebind_keeps_a_workloads_tasks_and_local_memory_on_its_node() {
    for (node, other) in [("node1", "node0"), ("node0", "node1")] {
        let nid = &node[4..];
        let r = run_checked(
            &two_nodes(&format!(
                "[[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"64M\"\nthreads = 2\ncpunodebind = [{nid}]\n"
            )),
            &[],
        );
        let anon = |n: &str| {
            let v = &r.nodes[n].vmstat;
            v["nr_inactive_anon"] + v["nr_active_anon"]
        };
        assert_eq!((anon(node), anon(other)), (16384, 0), "{node}");
        assert_eq!(r.nodes[node].numastat["numa_miss"], 0);
    }
}

/// `vm.zone_reclaim_mode`: a reader caches 96 MiB of files on node 0 (of 128), then
/// from 3 s a service on node 0's CPU faults in 64 MiB. Off (the default), node 0 has
/// under 8192 pages free, the fast path spills to node 1 before anyone reclaims, and
/// a good part of the service's pages are node 1's (kswapd, woken by the reader's
/// reads, frees some of node 0's cache meanwhile). On, node reclaim drops node 0's
/// unmapped clean cache a batch of SWAP_CLUSTER_MAX (32) pages at a time instead, so
/// the service's pages stay local and the reader loses its cache.
#[test]
fn zone_reclaim_mode_keeps_allocations_local_by_dropping_cache() {
    let workloads = "[[workload]]\nname = \"reader\"\nkind = \"file-read\"\nnr_files = 3\nfile_size = \"32M\"\ncpunodebind = [0]\n\n[[workload]]\nname = \"service\"\nkind = \"anon\"\nsize = \"64M\"\nstart = \"3s\"\ncpunodebind = [0]\n";
    let text = two_nodes(workloads).replacen("duration = \"2s\"", "duration = \"5s\"", 1);
    let run = |mode: &str| run_checked(&text, &[mode]);
    let anon = |r: &reclaimsim::report::results::Results, n: &str| {
        let v = &r.nodes[n].vmstat;
        v["nr_inactive_anon"] + v["nr_active_anon"]
    };
    let off = run("kernel.vm.zone_reclaim_mode=0");
    assert!(anon(&off, "node1") > 4096, "{}", anon(&off, "node1"));
    assert!(off.vmstat["numa_miss"] > 4096);
    assert_eq!(off.vmstat["zone_reclaim_success"], 0);
    assert_eq!(off.vmstat["zone_reclaim_failed"], 0);
    assert_eq!(off.vmstat["pgsteal_direct"], 0);

    let on = run("kernel.vm.zone_reclaim_mode=1");
    assert!(anon(&on, "node1") < 512, "{}", anon(&on, "node1"));
    let success = on.vmstat["zone_reclaim_success"];
    assert!(success > 100, "{success}");
    assert_eq!(on.vmstat["zone_reclaim_failed"], 0);
    // Each one freed a whole batch of the cache at least.
    assert!(on.vmstat["pgsteal_direct"] >= 32 * success);
    assert!(on.nodes["node0"].vmstat["nr_file_pages"] < off.nodes["node0"].vmstat["nr_file_pages"]);
}

/// DRAM and CXL as `dram_and_cxl` has them, and `app`: 64 MiB touched once in 100 ms
/// (allocated by `policy`), then its first 16 MiB (4096 pages) accessed uniformly for
/// the rest of the run; `damon` appended.
fn tiered_app(policy: &str, damon: &str) -> String {
    format!(
        r#"[run]
duration = "4s"
{DRAM_AND_CXL}
[[workload]]
name = "app"
kind = "phases"
{policy}
[[workload.phase]]
duration = "100ms"
size = "64M"
pattern = "sequential"
[[workload.phase]]
duration = "60s"
size = "16M"
pattern = "uniform"
{damon}"#
    )
}

fn node_anon(r: &reclaimsim::report::results::Results, n: &str) -> u64 {
    let v = &r.nodes[n].vmstat;
    v["nr_inactive_anon"] + v["nr_active_anon"]
}

/// DAMOS `migrate_hot` (v6.11) on the CXL node's memory (`numa_node = 1`): `app`'s
/// pages all start there (bound), and the kdamond, turned on at 1 s when only the
/// 16 MiB are still used, moves the regions it finds accessed to node 0. By hand: all
/// 4096 hot pages move; a region moves whole, and at the first aggregation the
/// regions are node 1's 128 MiB in ten, so the hot 16 MiB spans at most three of
/// them (at most 9830 pages move). Each page moves once (nothing moves back: the
/// scheme only looks at node 1).
#[test]
fn damos_migrate_hot_promotes_the_accessed_regions() {
    let damon = "[[damon.kdamonds]]\nstate = \"off\"\n[[damon.kdamonds.contexts]]\noperations = \"paddr\"\n[[damon.kdamonds.contexts.targets]]\nnuma_node = 1\n[[damon.kdamonds.contexts.schemes]]\naction = \"migrate_hot\"\ntarget_nid = 0\naccess_pattern.nr_accesses.min = 1\n\n[[action]]\nat = \"1s\"\nset = \"damon.kdamonds[0].state\"\nvalue = \"on\"\n";
    let r = run_checked(
        &tiered_app("mempolicy = { mode = \"bind\", nodes = [1] }", damon),
        &[],
    );
    let moved = node_anon(&r, "node0");
    assert!((4096..=9830).contains(&moved), "{moved}");
    assert_eq!(node_anon(&r, "node0") + node_anon(&r, "node1"), 16384);
    assert_eq!(r.vmstat["pgmigrate_success"], moved);
    let s = &r.damon.as_ref().unwrap().kdamonds["kdamond.0"].schemes[0];
    assert_eq!(s.sz_applied, moved * 4096);
}

/// DAMOS `migrate_cold` on node 0's memory: `app` allocates locally, and regions
/// unaccessed for 1 s (ten aggregations) move to the CXL node. The hot 16 MiB stay:
/// node 0 keeps at least its 4096 pages, and node 1 gets only cold ones (at most the
/// other 12288).
#[test]
fn damos_migrate_cold_demotes_the_unaccessed_regions() {
    let damon = "[[damon.kdamonds]]\nstate = \"on\"\n[[damon.kdamonds.contexts]]\noperations = \"paddr\"\n[[damon.kdamonds.contexts.targets]]\nnuma_node = 0\n[[damon.kdamonds.contexts.schemes]]\naction = \"migrate_cold\"\ntarget_nid = 1\naccess_pattern.nr_accesses.max = 0\naccess_pattern.age.min = 10\n";
    let r = run_checked(&tiered_app("", damon), &[]);
    let moved = node_anon(&r, "node1");
    assert!(moved > 2048 && moved <= 12288, "{moved}");
    assert!(node_anon(&r, "node0") >= 4096);
    assert_eq!(r.vmstat["pgmigrate_success"], moved);
}
