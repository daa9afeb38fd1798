//! Research replacement policies under the kernel's dynamics (`kernel.lru = "lru"`,
//! ...): hand-worked victims, agreement with the cache simulator on the same trace,
//! the quickstart under the invariant checker, determinism, no switching at run time.

use reclaimsim::cache;
use reclaimsim::scenario;
use reclaimsim::sim::{RunOptions, Simulation};
use serde_json::Value;
use std::path::Path;

const POLICIES: [&str; 6] = ["lru", "fifo", "clock", "sieve", "s3fifo", "arc"];

/// A trace workload of `keys` (one page each) in a memcg of `limit`, zram swap
/// without readahead, no kernel stacks or page tables (the memcg holds the trace's
/// pages and the process's few objects).
fn scenario_text(limit: &str) -> String {
    format!(
        r#"
[run]
duration = "10s"
sample_interval = "1s"
[machine]
memory = "1G"
nr_cpus = 1
[machine.swap]
type = "zram"
size = "1G"
[kernel]
vm.page-cluster = 0
[[cgroup]]
path = "app"
memory.max = "{limit}"
[[workload]]
name = "t"
kind = "trace"
trace = "t.txt"
cgroup = "app"
kernel_stacks = false
page_tables = false
"#
    )
}

fn run(dir: &Path, keys: &[u64], limit: &str, lru: &str) -> Value {
    let text: String = keys.iter().map(|k| format!("{k}\n")).collect();
    std::fs::write(dir.join("t.txt"), text).unwrap();
    let p = dir.join("s.toml");
    std::fs::write(&p, scenario_text(limit)).unwrap();
    let sc = scenario::load(&p, &[format!("kernel.lru={lru}")]).unwrap_or_else(|e| panic!("{e}"));
    let r = reclaimsim::report::run(
        Simulation::new(sc),
        RunOptions {
            check: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{lru}: {e}"));
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(
        v["workloads"]["t"]["ops"],
        keys.len() as u64,
        "{lru}: ran to the end"
    );
    v
}

/// Page 0 between every other access, pages 1..=1000 in a loop three times, in 1 MiB
/// (256 pages). Strict LRU never has page 0 near its tail: every loop page misses
/// each pass (the loop is four times the memory) and page 0 only its first time:
/// 3 × 1000 + 1 faults. CLOCK and SIEVE find its reference bit set whenever it comes
/// round, ARC keeps it in T2 (the loop pages only pass through T1): the same 3001.
/// FIFO ignores hits: page 0 leaves each time 256-odd newer pages have come in, about
/// four times a pass, and faults back in at once. S3-FIFO keeps page 0 (hit twice in
/// small, it moves to main and is reinserted there), and more: until its first
/// eviction new pages go to small until it holds its 10 % (25 pages), then straight
/// to main; main is never over its share after that (every later page enters
/// small), so those X ≤ 256 − 25 − 1 loop pages stay and hit in passes 2 and 3:
/// 3001 − 2X faults, X a little under 230 (the memcg also holds the process's
/// kernel objects).
#[test]
fn a_hot_page_among_a_loop_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<u64> = (0..3)
        .flat_map(|_| (1..=1000u64).flat_map(|k| [0, k]))
        .collect();
    for p in POLICIES {
        let faults = run(dir.path(), &keys, "1M", p)["vmstat"]["pgfault"]
            .as_u64()
            .unwrap();
        if p == "fifo" {
            assert!((3001 + 9..=3001 + 15).contains(&faults), "{p}: {faults}");
        } else if p == "s3fifo" {
            let kept = (3001 - faults) / 2;
            assert!(
                faults % 2 == 1 && (200..=230).contains(&kept),
                "{p}: {faults}"
            );
        } else {
            assert_eq!(faults, 3001, "{p}");
        }
    }
}

/// The same zipf trace under the kernel (a memcg of 2048 pages, reclaim in batches of
/// 32) and in the cache simulator with 2048 slots: every fault is a miss, so the
/// counts agree within the batching's difference (the kernel's memcg holds between
/// 2016 and 2048 of the trace's pages, and a policy picks 32 victims at once).
#[test]
fn kernel_faults_match_the_cache_simulator() {
    let dir = tempfile::tempdir().unwrap();
    let keys = cache::run::zipf_keys(4000, 100_000, 0.9, 7);
    for p in POLICIES {
        let faults = run(dir.path(), &keys, "8M", p)["vmstat"]["pgfault"]
            .as_u64()
            .unwrap();
        let new = cache::policy(p).unwrap();
        let hi = cache::simulate(new, 2016, keys.iter().map(|&k| cache::Request::new(k, 1)));
        let lo = cache::simulate(new, 2048, keys.iter().map(|&k| cache::Request::new(k, 1)));
        let (lo, hi) = (lo.misses as f64 * 0.97, hi.misses as f64 * 1.03);
        assert!(
            (lo..=hi).contains(&(faults as f64)),
            "{p}: {faults} faults, the simulator {lo:.0}..{hi:.0}"
        );
    }
}

/// The quickstart under each policy, the invariant checker on at every sample; twice
/// the same to the byte.
#[test]
fn the_quickstart_runs_checked_and_deterministic() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/quickstart.toml");
    let run = |p: &str| {
        let sets = vec![format!("kernel.lru={p}"), "run.duration=2s".to_string()];
        let sc = scenario::load(&path, &sets).unwrap();
        let r = reclaimsim::report::run(
            Simulation::new(sc),
            RunOptions {
                check: true,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{p}: {e}"));
        serde_json::to_string(&r).unwrap()
    };
    for p in POLICIES {
        run(p);
    }
    assert_eq!(run("s3fifo"), run("s3fifo"));
}

/// A research policy is chosen at boot: a timed action cannot switch to or from it.
#[test]
fn no_switching_to_a_research_policy_at_run_time() {
    let text = r#"
[run]
duration = "2s"
[machine]
memory = "1G"
[[workload]]
name = "w"
kind = "anon"
size = "1M"
[[action]]
at = "1s"
set = "kernel.lru"
value = "sieve"
"#;
    let e = scenario::parse_str(text, "a.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("research policy (`sieve`) is chosen at boot"),
        "{e}"
    );
    let e = scenario::parse_str(text, "a.toml", &["kernel.lru=arc".into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("research policy (`arc`)"), "{e}");
    // mglru ↔ classic stays allowed.
    let ok = text.replace("sieve", "mglru");
    scenario::parse_str(&ok, "a.toml", &[]).unwrap();
}
