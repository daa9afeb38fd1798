//! `run --proc`: /proc/buddyinfo, /proc/pagetypeinfo, /proc/zoneinfo and the extfrag
//! debugfs files at every sample, checked against the run's own counters by a second
//! route.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");

fn run(dir: &Path, proc: &str) -> std::process::Output {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/quickstart.toml");
    Command::new(BIN)
        .arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(dir)
        .args(["-q", "--set", "run.duration=5s", "--proc", proc])
        .output()
        .unwrap()
}

/// [`run`], which must succeed; its results.json.
fn run_ok(dir: &Path, proc: &str) -> serde_json::Value {
    let out = run(dir, proc);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}

/// Pages in per-order block counts `c0 c1 ... c10` (11 of them).
fn pages_in(counts: &str) -> u64 {
    let counts: Vec<u64> = counts
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 11, "{counts:?}");
    counts.iter().enumerate().map(|(o, n)| n << o).sum()
}

/// The last sample's lines of a `# t=`-separated file.
fn last_sample(text: &str) -> Vec<&str> {
    let last = text.rfind("# t=").expect("a sample header");
    text[last..].lines().skip(1).collect()
}

#[test]
fn buddyinfo_and_pagetypeinfo_add_up_to_the_free_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let results = run_ok(tmp.path(), "all");
    let nr_free_pages = results["vmstat"]["nr_free_pages"].as_u64().unwrap();

    // buddyinfo: a line per zone, 11 block counts; pages = sum of count << order.
    let buddy = std::fs::read_to_string(tmp.path().join("buddyinfo.txt")).unwrap();
    assert_eq!(
        buddy.matches("# t=").count(),
        5,
        "samples at 1..=4 s and the end (5 s)"
    );
    let lines = last_sample(&buddy);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("Node 0, zone    DMA32 "));
    assert!(lines[1].starts_with("Node 0, zone   Normal "));
    let pages: u64 = lines.iter().map(|l| pages_in(&l[21..])).sum();
    assert_eq!(pages, nr_free_pages);

    // pagetypeinfo: the per-migratetype counts sum to the same; the pageblock counts
    // to the zones' sizes (3 GiB and 1 GiB of 2 MiB blocks).
    let pti = std::fs::read_to_string(tmp.path().join("pagetypeinfo.txt")).unwrap();
    let lines = last_sample(&pti);
    let pages: u64 = lines
        .iter()
        .filter(|l| l.contains(", type "))
        .map(|l| {
            // "Node    0, zone    DMA32, type      Movable  c0 c1 ... c10"
            let (_, tail) = l.rsplit_once(", type ").unwrap();
            let (_, counts) = tail.trim_start().split_once(' ').unwrap();
            pages_in(counts)
        })
        .sum();
    assert_eq!(pages, nr_free_pages);
    let blocks: Vec<u64> = lines
        .iter()
        .filter(|l| l.starts_with("Node 0, zone ") && !l.contains("type"))
        .map(|l| {
            l[22..]
                .split_whitespace()
                .map(|n| n.parse::<u64>().unwrap())
                .sum()
        })
        .collect();
    assert_eq!(blocks, vec![1536, 512]);

    // unusable_index at order 0 is 0.000 (any free page serves an order-0 request).
    let unusable = std::fs::read_to_string(tmp.path().join("unusable_index.txt")).unwrap();
    for l in last_sample(&unusable) {
        assert_eq!(l[21..].split_whitespace().next(), Some("0.000"), "{l}");
    }
    assert!(tmp.path().join("extfrag_index.txt").is_file());
}

#[test]
fn an_unknown_view_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(tmp.path(), "buddyinfo,slabinfo");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--proc: unknown view `slabinfo`"), "{err}");
    assert!(!tmp.path().join("results.json").exists());
}

/// zoneinfo's last sample: each zone's `pages free` is results.json's `free`, its
/// `pagesets` counts add up to `pcp_count`, and the sizes are the kernel's for the
/// quickstart's 4 GiB, 4-CPU machine (v6.7): DMA32 (786432 pages) and Normal (262144)
/// both batch 63 (zone_batchsize: the 1 MiB cap, 256 / 4 = 64, 2^n - 1); high at
/// least high_min = the low watermark over the 4 CPUs (DMA32: 2322 / 4 = 580;
/// Normal: 774 / 4 = 193, raised to 4 × 63 = 252), at most high_max = managed / 8 / 4
/// (24576, 8192).
#[test]
fn zoneinfo_shows_each_cpus_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let results = run_ok(tmp.path(), "zoneinfo");
    let text = std::fs::read_to_string(tmp.path().join("zoneinfo.txt")).unwrap();
    let lines = last_sample(&text);
    let zone_at: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("Node 0, zone"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(zone_at.len(), 2, "{lines:?}");
    for (k, (name, high_min, high_max)) in [("DMA32", 580, 24576), ("Normal", 252, 8192)]
        .into_iter()
        .enumerate()
    {
        let end = zone_at.get(k + 1).copied().unwrap_or(lines.len());
        let block = &lines[zone_at[k]..end];
        assert!(block[0].ends_with(name), "{}", block[0]);
        let values = |key: &str| -> Vec<u64> {
            block
                .iter()
                .filter_map(|l| l.trim().strip_prefix(key))
                .map(|v| v.trim().parse().unwrap())
                .collect()
        };
        let z = &results["zones"][name];
        assert_eq!(values("pages free"), [z["free"].as_u64().unwrap()]);
        let counts = values("count:");
        assert_eq!(counts.len(), 4, "a pageset per CPU");
        assert_eq!(counts.iter().sum::<u64>(), z["pcp_count"].as_u64().unwrap());
        assert_eq!(values("batch:"), [63; 4]);
        assert_eq!(z["pcp_high_min"], high_min);
        assert_eq!(z["pcp_high_max"], high_max);
        for h in values("high:") {
            assert!((high_min..=high_max).contains(&h), "{name} high {h}");
        }
    }
}
