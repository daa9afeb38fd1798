//! `reclaimsim cache`: policies alone over a trace file at several cache sizes, as
//! libCacheSim's `cachesim` runs one; its output as text lines or as [`Report`], the
//! JSON `plot` draws a miss ratio curve from.

use super::{access, policy, CacheStats, NewPolicy, Request};
use rayon::prelude::*;
use reclaimsim_trace::{self as trace, Format, TraceError};
use std::path::Path;

/// How many requests ahead of the one served the run reads (and prefetches).
const PREFETCH_AHEAD: usize = 8;

/// A cache size as given: bytes (objects under `--ignore-obj-size`), or a fraction of
/// the trace's working set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CacheSize {
    Absolute(u64),
    Fraction(f64),
}

/// What a trace holds: requests, distinct objects, their bytes (each at its first
/// size).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkingSet {
    pub requests: u64,
    pub objects: u64,
    pub bytes: u64,
}

fn requests(
    path: &Path,
    format: Format,
    ignore_obj_size: bool,
) -> Result<impl Iterator<Item = Result<Request, TraceError>>, TraceError> {
    Ok(trace::open(path, format)?.map(move |r| {
        r.map(|mut q| {
            if ignore_obj_size {
                q.size = 1;
            }
            q
        })
    }))
}

/// One pass over the trace: its working set.
pub fn working_set(
    path: &Path,
    format: Format,
    ignore_obj_size: bool,
) -> Result<WorkingSet, TraceError> {
    let mut seen = super::queue::KeyMap::default();
    let mut ws = WorkingSet::default();
    for r in requests(path, format, ignore_obj_size)? {
        let r = r?;
        ws.requests += 1;
        if seen.insert(r.key, 0).is_none() {
            ws.objects += 1;
            ws.bytes += r.size;
        }
    }
    Ok(ws)
}

/// One row of the result: a cache size and what the policy did there.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Row {
    pub cache_size: u64,
    #[serde(flatten)]
    pub stats: CacheStats,
    pub miss_ratio: f64,
    pub byte_miss_ratio: f64,
}

/// One policy's rows, a row per size in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyRows {
    pub policy: String,
    pub rows: Vec<Row>,
}

/// The constructors of the policies `names`, in order. Err: an unknown name, or one
/// given twice.
pub fn policies(names: &[&str]) -> Result<Vec<NewPolicy>, String> {
    if names.is_empty() {
        return Err("no policy given".into());
    }
    names
        .iter()
        .enumerate()
        .map(|(i, &name)| {
            if names[..i].contains(&name) {
                return Err(format!("policy `{name}` given twice"));
            }
            policy(name).ok_or_else(|| {
                let known: Vec<&str> = super::POLICIES.iter().map(|p| p.0).collect();
                format!("unknown policy `{name}` (known: {})", known.join(", "))
            })
        })
        .collect()
}

/// Runs each of the policies `names` over the trace at each size (every policy-size
/// pair in parallel; each reads the trace itself). Err: an unknown policy, or the
/// trace's first bad record.
pub fn run(
    path: &Path,
    format: Format,
    names: &[&str],
    sizes: &[CacheSize],
    ignore_obj_size: bool,
) -> Result<(Option<WorkingSet>, Vec<PolicyRows>), String> {
    let news = policies(names)?;
    let ws = if sizes.iter().any(|s| matches!(s, CacheSize::Fraction(_))) {
        Some(working_set(path, format, ignore_obj_size).map_err(|e| e.to_string())?)
    } else {
        None
    };
    let caps: Vec<u64> = sizes
        .iter()
        .map(|s| match *s {
            CacheSize::Absolute(b) => b,
            CacheSize::Fraction(f) => ((ws.map_or(0, |w| w.bytes) as f64 * f) as u64).max(1),
        })
        .collect();
    let pairs: Vec<(NewPolicy, u64)> = news
        .iter()
        .flat_map(|&new| caps.iter().map(move |&cap| (new, cap)))
        .collect();
    let rows: Result<Vec<Row>, TraceError> = pairs
        .par_iter()
        .map(|&(new, cap)| {
            let mut p = new(cap);
            let mut st = CacheStats::default();
            // Requests are read PREFETCH_AHEAD ahead of the one served, each one's
            // slot prefetched as it is read.
            let mut ring = std::collections::VecDeque::with_capacity(PREFETCH_AHEAD + 1);
            for r in requests(path, format, ignore_obj_size)? {
                let r = r?;
                p.prefetch(r.key);
                ring.push_back(r);
                if ring.len() > PREFETCH_AHEAD {
                    let r = ring.pop_front().expect("non-empty");
                    access(p.as_mut(), cap, r, &mut st);
                }
            }
            for r in ring {
                access(p.as_mut(), cap, r, &mut st);
            }
            Ok(Row {
                cache_size: cap,
                stats: st,
                miss_ratio: st.miss_ratio(),
                byte_miss_ratio: st.byte_miss_ratio(),
            })
        })
        .collect();
    let mut rows = rows.map_err(|e| e.to_string())?.into_iter();
    let by_policy = names
        .iter()
        .map(|name| PolicyRows {
            policy: name.to_string(),
            rows: rows.by_ref().take(caps.len()).collect(),
        })
        .collect();
    Ok((ws, by_policy))
}

/// One result of [`Report`]: a policy at a cache size.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PolicyRow<'a> {
    pub policy: &'a str,
    #[serde(flatten)]
    pub row: Row,
}

/// `reclaimsim cache --json`'s output. `results` holds a row per policy and size
/// (policies in the order given, then sizes); with a single policy, `policy` and
/// `sizes` (its rows without the policy) are there too, as before several policies
/// could be given.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report<'a> {
    pub trace: String,
    pub ignore_obj_size: bool,
    /// What `cache_size` counts: "bytes", or "objects" (under --ignore-obj-size or a
    /// format without sizes).
    pub size_unit: &'static str,
    pub working_set: Option<WorkingSet>,
    pub policies: Vec<&'a str>,
    pub results: Vec<PolicyRow<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<&'a [Row]>,
}

impl<'a> Report<'a> {
    pub fn new(
        trace: &Path,
        ignore_obj_size: bool,
        objects: bool,
        working_set: Option<WorkingSet>,
        runs: &'a [PolicyRows],
    ) -> Report<'a> {
        let single = match runs {
            [one] => Some(one),
            _ => None,
        };
        Report {
            trace: trace.display().to_string(),
            ignore_obj_size,
            size_unit: if objects { "objects" } else { "bytes" },
            working_set,
            policies: runs.iter().map(|r| r.policy.as_str()).collect(),
            results: runs
                .iter()
                .flat_map(|r| {
                    r.rows.iter().map(|&row| PolicyRow {
                        policy: &r.policy,
                        row,
                    })
                })
                .collect(),
            policy: single.map(|r| r.policy.as_str()),
            sizes: single.map(|r| r.rows.as_slice()),
        }
    }
}

/// Runs a policy with `capacity` (objects) over keys in memory (size 1 each), with
/// the file runs' prefetching: `reclaimsim bench`'s cache figures.
pub fn run_keys(new: NewPolicy, capacity: u64, keys: &[u64]) -> CacheStats {
    let mut p = new(capacity);
    let mut st = CacheStats::default();
    for (i, &key) in keys.iter().enumerate() {
        if let Some(&ahead) = keys.get(i + PREFETCH_AHEAD) {
            p.prefetch(ahead);
        }
        access(p.as_mut(), capacity, Request::new(key, 1), &mut st);
    }
    st
}

/// Zipf(alpha) object ids in [0, n), by inverse CDF from a fixed PCG stream: the
/// synthetic traces of `bench` and of the libCacheSim cross-check.
pub fn zipf_keys(n: usize, requests: usize, alpha: f64, seed: u64) -> Vec<u64> {
    use rand::Rng;
    let mut cdf = Vec::with_capacity(n);
    let mut sum = 0.0;
    for k in 1..=n {
        sum += 1.0 / (k as f64).powf(alpha);
        cdf.push(sum);
    }
    let mut rng = rand_pcg::Pcg64Mcg::new(seed as u128);
    (0..requests)
        .map(|_| {
            let u = rng.gen::<f64>() * sum;
            cdf.partition_point(|&c| c < u) as u64
        })
        .collect()
}

/// The rows as libCacheSim's cachesim prints its results, one line per size, a block
/// per policy (blocks apart by an empty line). (`objects`: the sizes count objects,
/// under --ignore-obj-size or a format without sizes.)
pub fn format_text(trace_name: &str, runs: &[PolicyRows], objects: bool) -> String {
    let blocks: Vec<String> = runs
        .iter()
        .map(|r| format_rows(trace_name, &r.policy, &r.rows, objects))
        .collect();
    blocks.join("\n")
}

fn format_rows(trace_name: &str, policy: &str, rows: &[Row], objects: bool) -> String {
    let mut out = String::new();
    for r in rows {
        let size = if objects {
            format!("{} objects", r.cache_size)
        } else {
            human_bytes(r.cache_size)
        };
        out += &format!(
            "{trace_name} {policy} cache size {size:>10}, {} req, miss ratio {:.4}, byte miss ratio {:.4} ({} misses)\n",
            r.stats.requests, r.miss_ratio, r.byte_miss_ratio, r.stats.misses
        );
    }
    out
}

fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_trace_at_two_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.txt");
        std::fs::write(&p, "1\n2\n3\n4\n1\n2\n5\n1\n2\n3\n4\n5\n").unwrap();
        // 5 distinct objects: 0.6 of the working set is 3 slots (LRU by hand in
        // lru.rs: 10 misses); 5 slots only miss the first touches.
        let (ws, runs) = run(
            &p,
            Format::Text,
            &["lru"],
            &[CacheSize::Fraction(0.6), CacheSize::Absolute(5)],
            false,
        )
        .unwrap();
        let want = WorkingSet {
            requests: 12,
            objects: 5,
            bytes: 5,
        };
        assert_eq!(ws, Some(want));
        let rows = &runs[0].rows;
        assert_eq!((rows[0].cache_size, rows[0].stats.misses), (3, 10));
        assert_eq!((rows[1].cache_size, rows[1].stats.misses), (5, 5));
        assert!(run(
            &p,
            Format::Text,
            &["nope"],
            &[CacheSize::Absolute(1)],
            false
        )
        .unwrap_err()
        .contains("unknown policy `nope` (known: lru, fifo"));
        assert_eq!(
            run(
                &p,
                Format::Text,
                &["lru", "lru"],
                &[CacheSize::Absolute(1)],
                false
            )
            .unwrap_err(),
            "policy `lru` given twice"
        );
        std::fs::write(&p, "1\n2\nthree\n").unwrap();
        let e = run(&p, Format::Text, &["lru"], &[CacheSize::Absolute(2)], false).unwrap_err();
        assert!(e.contains("t.txt:3: `three`"), "{e}");
    }

    /// Belady's trace: FIFO misses more with 4 slots (10) than with 3 (9), LRU less
    /// (8 against 10; 3 slots as in the test above, 4 worked by hand in tests/cli.rs).
    /// Each policy gets its own rows, in the order given; the JSON has a row per
    /// policy and size, and (for one policy only) the old `policy` + `sizes`.
    #[test]
    fn several_policies_each_at_every_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.txt");
        std::fs::write(&p, "1\n2\n3\n4\n1\n2\n5\n1\n2\n3\n4\n5\n").unwrap();
        let sizes = [CacheSize::Absolute(3), CacheSize::Absolute(4)];
        let (ws, runs) = run(&p, Format::Text, &["fifo", "lru"], &sizes, false).unwrap();
        assert_eq!(ws, None);
        let misses = |r: &PolicyRows| -> Vec<(u64, u64)> {
            r.rows
                .iter()
                .map(|r| (r.cache_size, r.stats.misses))
                .collect()
        };
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].policy, "fifo");
        assert_eq!(misses(&runs[0]), [(3, 9), (4, 10)]);
        assert_eq!(runs[1].policy, "lru");
        assert_eq!(misses(&runs[1]), [(3, 10), (4, 8)]);
        let text = format_text("t.txt", &runs, true);
        assert_eq!(text.lines().count(), 5, "{text}");
        assert!(text.lines().nth(2).unwrap().is_empty(), "{text}");
        assert!(
            text.lines()
                .nth(3)
                .unwrap()
                .starts_with("t.txt lru cache size  3 objects"),
            "{text}"
        );
        let json = serde_json::to_value(Report::new(&p, false, true, ws, &runs)).unwrap();
        assert_eq!(json["size_unit"], "objects");
        assert_eq!(json["policies"], serde_json::json!(["fifo", "lru"]));
        assert_eq!(json["results"].as_array().unwrap().len(), 4);
        assert_eq!(json["results"][3]["policy"], "lru");
        assert_eq!(json["results"][3]["cache_size"], 4);
        assert_eq!(json["results"][3]["misses"], 8);
        assert_eq!(json["results"][3]["miss_ratio"], 8.0 / 12.0);
        assert!(json.get("policy").is_none() && json.get("sizes").is_none());
        let json = serde_json::to_value(Report::new(&p, false, true, ws, &runs[1..])).unwrap();
        assert_eq!(json["policy"], "lru");
        assert_eq!(json["sizes"][1]["misses"], 8);
        assert_eq!(json["sizes"][1].get("policy"), None);
    }
}
