//! damo's record files: the `json_compressed` format `damo record` writes and
//! `--damon-record` writes (a zlib stream of a JSON list with one record per monitored
//! target: its sampling and aggregation intervals and a snapshot of its regions per
//! aggregation window). The one reader of them: `plot`'s heatmaps use [`read_record`],
//! and as a trace ([`Reader`]) a record is the access pattern as DAMON saw it,
//! replayed region by region.
//!
//! The replay: an aggregation window of `aggr_us` has m = aggr_us / sample_us
//! sampling intervals (at least 1). A region whose `nr_accesses.samples` is k (at most
//! m) was found accessed in k of them, taken as spread evenly: interval s (0 to m-1) is
//! accessed iff ⌊(s+1)k/m⌋ > ⌊sk/m⌋. In each interval, each region accessed in it, in
//! address order, requests each of its 4 KiB pages once, in address order (the key is
//! the page number, address / 4096: the pages a region touches, so an unaligned end
//! counts its partial page), at the snapshot's start time (ns, as damo records it)
//! plus s sampling intervals. Snapshots of several targets are replayed merged by
//! start time, the earlier target first on ties. Requests are reads of size 1.
//!
//! The record is loaded and checked whole (it is one JSON document), the requests are
//! generated as they are consumed: a 1 GiB region accessed in 20 samples is 5 M
//! requests, none of them stored.

use super::Request;
use super::TraceError;
use serde::Deserialize;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The page size a replay requests in.
pub const PAGE_SIZE: u64 = 4096;

/// A record as damo's json_compressed format has it (the fields read here; others
/// are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct Record {
    pub target_id: u64,
    pub intervals: Intervals,
    pub snapshots: Vec<Snapshot>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Intervals {
    pub sample_us: u64,
    pub aggr_us: u64,
}

impl Intervals {
    /// Sampling intervals per aggregation window: aggr_us / sample_us, at least 1.
    pub fn samples_per_aggr(&self) -> u64 {
        (self.aggr_us / self.sample_us.max(1)).max(1)
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Snapshot {
    /// ns.
    pub start_time: u64,
    /// ns.
    pub end_time: u64,
    pub regions: Vec<RecordRegion>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RecordRegion {
    pub start: u64,
    pub end: u64,
    pub nr_accesses: Samples,
}

impl RecordRegion {
    /// The page numbers the region touches.
    pub fn pages(&self) -> std::ops::Range<u64> {
        self.start / PAGE_SIZE..self.end.div_ceil(PAGE_SIZE)
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Samples {
    pub samples: u64,
}

fn error(file: &Path, message: String) -> TraceError {
    TraceError::Open {
        file: file.to_path_buf(),
        message,
    }
}

/// Reads a record file (`--damon-record`'s DIR/damon.data, or damo's).
pub fn read_record(path: &Path) -> Result<Vec<Record>, TraceError> {
    let bytes = std::fs::read(path).map_err(|e| error(path, e.to_string()))?;
    parse(&bytes, path)
}

/// A record from its bytes, checked: every region's end at or after its start, each
/// target's snapshots in time order.
pub fn parse(bytes: &[u8], file: &Path) -> Result<Vec<Record>, TraceError> {
    let mut json = Vec::new();
    flate2::read::ZlibDecoder::new(bytes)
        .read_to_end(&mut json)
        .map_err(|e| {
            error(
                file,
                format!(
                    "not a zlib-compressed damo record (expected damo's json_compressed format): {e}"
                ),
            )
        })?;
    let records: Vec<Record> = serde_json::from_slice(&json).map_err(|e| {
        error(
            file,
            format!(
                "not a damo record (expected a JSON list of records with target_id, \
                 intervals and snapshots of regions): {e}"
            ),
        )
    })?;
    for (i, rec) in records.iter().enumerate() {
        let at = |j: usize| format!("record {i} (target {}), snapshot {j}", rec.target_id);
        let mut prev_start = 0;
        for (j, s) in rec.snapshots.iter().enumerate() {
            if s.start_time < prev_start {
                return Err(error(
                    file,
                    format!(
                        "{}: start_time {} is before the previous snapshot's {prev_start}: \
                         expected snapshots in time order",
                        at(j),
                        s.start_time
                    ),
                ));
            }
            if s.end_time < s.start_time {
                return Err(error(
                    file,
                    format!(
                        "{}: end_time {} is before its start_time {}: expected time to run \
                         forwards",
                        at(j),
                        s.end_time,
                        s.start_time
                    ),
                ));
            }
            prev_start = s.start_time;
            if let Some(r) = s.regions.iter().find(|r| r.end < r.start) {
                return Err(error(
                    file,
                    format!(
                        "{}: region [{:#x}, {:#x}): expected its end at or after its start",
                        at(j),
                        r.start,
                        r.end
                    ),
                ));
            }
        }
    }
    Ok(records)
}

/// Whether interval `s` of `m` is one of the `k` (≤ m) accessed ones, spread evenly.
pub fn accessed(s: u64, k: u64, m: u64) -> bool {
    let (s, k, m) = (s as u128, k as u128, m as u128);
    (s + 1) * k / m > s * k / m
}

/// The first interval at or after `from` in which a region with `k` (≤ m) accessed
/// intervals of `m` is accessed: the j-th access (j = 1..k) is in interval
/// ⌈jm/k⌉ - 1.
fn next_accessed(from: u64, k: u64, m: u64) -> Option<u64> {
    if k == 0 || from >= m {
        return None;
    }
    let (f, k, m) = (from as u128, k as u128, m as u128);
    let j = f * k / m + 1;
    (j <= k).then(|| ((j * m).div_ceil(k) - 1) as u64)
}

/// The replay of a record as requests, generated as they are read.
pub struct Reader {
    records: Vec<Record>,
    /// (record, snapshot) in replay order.
    order: Vec<(usize, usize)>,
    /// The snapshot being replayed (an index into `order`).
    pos: usize,
    /// Its sampling intervals per window, and the interval being replayed.
    m: u64,
    s: u64,
    /// The next region of the snapshot to look at in interval `s`.
    region: usize,
    /// Pages left of the region being replayed.
    pages: std::ops::Range<u64>,
    time: f64,
    file: PathBuf,
}

impl Reader {
    /// Loads the record `r` holds (the bytes of `file`); Err if it is not one.
    pub fn new(mut r: impl Read, file: &Path) -> Result<Reader, TraceError> {
        let mut bytes = Vec::new();
        r.read_to_end(&mut bytes)
            .map_err(|e| error(file, e.to_string()))?;
        Ok(Reader::from_records(parse(&bytes, file)?, file))
    }

    /// The replay of `records` (checked as [`parse`] checks them).
    pub fn from_records(mut records: Vec<Record>, file: &Path) -> Reader {
        for rec in &mut records {
            for s in &mut rec.snapshots {
                s.regions.sort_by_key(|r| r.start);
            }
        }
        let mut order: Vec<(usize, usize)> = records
            .iter()
            .enumerate()
            .flat_map(|(i, rec)| (0..rec.snapshots.len()).map(move |j| (i, j)))
            .collect();
        // Stable: a target's snapshots stay in their order, ties go to the earlier target.
        order.sort_by_key(|&(i, j)| records[i].snapshots[j].start_time);
        let mut rd = Reader {
            records,
            order,
            pos: 0,
            m: 1,
            s: 0,
            region: 0,
            pages: 0..0,
            time: 0.0,
            file: file.to_path_buf(),
        };
        rd.enter_snapshot();
        rd
    }

    /// The file the record came from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Moves to the first accessed interval of the snapshot at `pos`, or of the first
    /// one after it that has any.
    fn enter_snapshot(&mut self) {
        while let Some(&(i, _)) = self.order.get(self.pos) {
            self.m = self.records[i].intervals.samples_per_aggr();
            if let Some(s) = self.next_interval(0) {
                self.set_interval(s);
                return;
            }
            self.pos += 1;
        }
    }

    /// The first interval at or after `from` in which any region of the current
    /// snapshot is accessed.
    fn next_interval(&self, from: u64) -> Option<u64> {
        let (i, j) = self.order[self.pos];
        self.records[i].snapshots[j]
            .regions
            .iter()
            .filter(|r| !r.pages().is_empty())
            .filter_map(|r| next_accessed(from, r.nr_accesses.samples.min(self.m), self.m))
            .min()
    }

    fn set_interval(&mut self, s: u64) {
        let (i, j) = self.order[self.pos];
        let rec = &self.records[i];
        self.s = s;
        self.region = 0;
        self.time =
            rec.snapshots[j].start_time as f64 + s as f64 * rec.intervals.sample_us as f64 * 1000.0;
    }
}

impl Iterator for Reader {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(key) = self.pages.next() {
                return Some(Ok(Request {
                    time: self.time,
                    ..Request::new(key, 1)
                }));
            }
            let &(i, j) = self.order.get(self.pos)?;
            let regions = &self.records[i].snapshots[j].regions;
            // The next region accessed in interval s.
            while let Some(r) = regions.get(self.region) {
                self.region += 1;
                if accessed(self.s, r.nr_accesses.samples.min(self.m), self.m) {
                    self.pages = r.pages();
                    break;
                }
            }
            if !self.pages.is_empty() {
                continue;
            }
            if self.region < regions.len() {
                continue;
            }
            // The interval is done: the next one with an access, else the next snapshot.
            match self.next_interval(self.s + 1) {
                Some(s) => self.set_interval(s),
                None => {
                    self.pos += 1;
                    self.enter_snapshot();
                }
            }
        }
    }
}

/// One monitoring target's record as `damo record` writes it (the writer's types:
/// the reader's [`Record`] reads only what replay needs): its kdamond, its
/// intervals, and a snapshot per aggregation window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteRecord {
    pub kdamond: usize,
    pub sample_us: u64,
    pub aggr_us: u64,
    pub ops_update_us: u64,
    pub snapshots: Vec<WriteSnapshot>,
}

/// One aggregation window's regions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteSnapshot {
    pub start_ns: u64,
    pub end_ns: u64,
    pub regions: Vec<WriteRegion>,
}

/// A region: bytes `start..end`, sampled accessed `nr_accesses` times in the window,
/// unchanged for `age` aggregation intervals.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WriteRegion {
    pub start: u64,
    pub end: u64,
    pub nr_accesses: u32,
    pub age: u32,
}

/// A record file's bytes (damo's `json_compressed` format: a zlib stream of a JSON
/// list with one record per target; `target_id` is the record's index, unique as
/// `damo report wss` needs).
pub fn encode(records: &[WriteRecord]) -> Vec<u8> {
    use std::io::Write;
    let records: Vec<serde_json::Value> = records
        .iter()
        .enumerate()
        .map(|(id, r)| {
            let snapshots: Vec<serde_json::Value> = r
                .snapshots
                .iter()
                .map(|s| {
                    let regions: Vec<serde_json::Value> = s
                        .regions
                        .iter()
                        .map(|g| {
                            serde_json::json!({
                                "start": g.start,
                                "end": g.end,
                                "nr_accesses": { "samples": g.nr_accesses, "percent": null },
                                "age": { "usec": null, "aggr_intervals": g.age },
                                "probe_hits": [],
                                "sz_filter_passed": 0,
                            })
                        })
                        .collect();
                    serde_json::json!({
                        "start_time": s.start_ns,
                        "end_time": s.end_ns,
                        "total_bytes": null,
                        "damos_stats": null,
                        "sample_interval_us": null,
                        "regions": regions,
                    })
                })
                .collect();
            serde_json::json!({
                "kdamond_idx": r.kdamond,
                "context_idx": 0,
                "scheme_idx": null,
                "target_id": id,
                "intervals": {
                    "sample_us": r.sample_us,
                    "aggr_us": r.aggr_us,
                    "ops_update_us": r.ops_update_us,
                },
                "scheme_filters": [],
                "data_source": "unknown",
                "snapshots": snapshots,
            })
        })
        .collect();
    let json = serde_json::to_vec(&records).expect("a JSON value serialises");
    // zlib (RFC 1950), not gzip: damo recognises the format by `file`'s "zlib
    // compressed data".
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&json).expect("writing to a Vec");
    z.finish().expect("writing to a Vec")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;

    /// A record file's bytes from JSON.
    fn zlib_json(v: &serde_json::Value) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&serde_json::to_vec(v).unwrap()).unwrap();
        z.finish().unwrap()
    }

    fn region(start: u64, end: u64, samples: u64) -> serde_json::Value {
        serde_json::json!({
            "start": start, "end": end,
            "nr_accesses": {"samples": samples, "percent": null},
            "age": {"usec": null, "aggr_intervals": 0},
        })
    }

    fn snapshot(start: u64, end: u64, regions: Vec<serde_json::Value>) -> serde_json::Value {
        serde_json::json!({"start_time": start, "end_time": end, "regions": regions})
    }

    fn record(
        target: u64,
        sample_us: u64,
        aggr_us: u64,
        snaps: Vec<serde_json::Value>,
    ) -> serde_json::Value {
        serde_json::json!({
            "kdamond_idx": 0, "context_idx": 0, "target_id": target,
            "intervals": {"sample_us": sample_us, "aggr_us": aggr_us, "ops_update_us": 1_000_000},
            "snapshots": snaps,
        })
    }

    fn replay(bytes: &[u8]) -> Result<Vec<(u64, f64)>, TraceError> {
        Reader::new(bytes, Path::new("damon.data"))?
            .map(|r| r.map(|q| (q.key, q.time)))
            .collect()
    }

    /// Two snapshots of two regions, m = 20 ms / 5 ms = 4. A = [64K, 72K) (pages 16
    /// and 17), B = [128K, 130K) (half a page: page 32), listed after A's address
    /// only in the second snapshot. Snapshot 0 at 1 s: A k=2, B k=1; snapshot 1 at
    /// 1.02 s: A k=4, B k=0.
    ///
    /// By hand: k=1 of 4 is interval 3 only (⌊(s+1)/4⌋ > ⌊s/4⌋ first at s=3); k=2 is
    /// intervals 1 and 3 (⌊(s+1)/2⌋ steps at s=1, 3); k=4 every interval; k=0 none.
    /// So: snapshot 0's interval 1: A; interval 3: A then B; snapshot 1: A in each of
    /// its 4 intervals. Interval s is at start + s × 5 ms.
    #[test]
    fn a_two_region_record_replays_as_worked_by_hand() {
        let (a, b) = ((64 << 10, 72 << 10), (128 << 10, 130 << 10));
        let rec = record(
            3,
            5000,
            20_000,
            vec![
                snapshot(
                    1_000_000_000,
                    1_020_000_000,
                    // out of address order in the file: replayed in address order
                    vec![region(b.0, b.1, 1), region(a.0, a.1, 2)],
                ),
                snapshot(
                    1_020_000_000,
                    1_040_000_000,
                    vec![region(a.0, a.1, 4), region(b.0, b.1, 0)],
                ),
            ],
        );
        let got = replay(&zlib_json(&serde_json::json!([rec]))).unwrap();
        let ms = 1e6;
        let t0 = 1e9;
        let t1 = 1.02e9;
        let want = vec![
            (16, t0 + 5.0 * ms),
            (17, t0 + 5.0 * ms),
            (16, t0 + 15.0 * ms),
            (17, t0 + 15.0 * ms),
            (32, t0 + 15.0 * ms),
            (16, t1),
            (17, t1),
            (16, t1 + 5.0 * ms),
            (17, t1 + 5.0 * ms),
            (16, t1 + 10.0 * ms),
            (17, t1 + 10.0 * ms),
            (16, t1 + 15.0 * ms),
            (17, t1 + 15.0 * ms),
        ];
        assert_eq!(got, want);
        // Every request is a read of one page-sized unit.
        let all: Vec<Request> =
            Reader::new(&zlib_json(&serde_json::json!([rec]))[..], Path::new("d"))
                .unwrap()
                .map(Result::unwrap)
                .collect();
        assert!(all.iter().all(|r| r.size == 1 && !r.write));
    }

    #[test]
    fn accesses_are_spread_evenly_and_clamped_to_the_window() {
        let pattern = |k, m| -> Vec<u64> { (0..m).filter(|&s| accessed(s, k, m)).collect() };
        assert_eq!(pattern(0, 4), Vec::<u64>::new());
        assert_eq!(pattern(1, 4), vec![3]);
        assert_eq!(pattern(2, 4), vec![1, 3]);
        assert_eq!(pattern(3, 4), vec![1, 2, 3]);
        assert_eq!(pattern(4, 4), vec![0, 1, 2, 3]);
        assert_eq!(pattern(3, 20), vec![6, 13, 19]);
        for m in 1..30 {
            for k in 0..=m {
                let mut from = 0;
                for s in pattern(k, m) {
                    assert_eq!(next_accessed(from, k, m), Some(s), "k={k} m={m}");
                    from = s + 1;
                }
                assert_eq!(next_accessed(from, k, m), None);
            }
        }
        // nr_accesses above m (aggr_us / sample_us) counts as every interval.
        let rec = record(
            0,
            10,
            20,
            vec![snapshot(0, 20_000, vec![region(0, 4096, 7)])],
        );
        let got = replay(&zlib_json(&serde_json::json!([rec]))).unwrap();
        assert_eq!(got, vec![(0, 0.0), (0, 10_000.0)]);
    }

    /// Two targets: snapshots merged by start time, the first target first on a tie.
    #[test]
    fn targets_are_merged_by_snapshot_start_time() {
        let one = |t: u64| vec![region(t * 4096, t * 4096 + 4096, 1)];
        let a = record(
            0,
            10,
            10,
            vec![snapshot(0, 10, one(1)), snapshot(20, 30, one(2))],
        );
        let b = record(
            1,
            10,
            10,
            vec![snapshot(10, 20, one(3)), snapshot(20, 30, one(4))],
        );
        let got = replay(&zlib_json(&serde_json::json!([a, b]))).unwrap();
        assert_eq!(got, vec![(1, 0.0), (3, 10.0), (2, 20.0), (4, 20.0)]);
    }

    #[test]
    fn a_bad_record_is_an_error_naming_the_file() {
        let err = |bytes: &[u8]| replay(bytes).unwrap_err().to_string();
        let good = zlib_json(&serde_json::json!([record(
            0,
            5000,
            100_000,
            vec![snapshot(0, 100, vec![region(0, 8192, 3)])]
        )]));
        assert!(replay(&good).is_ok());
        let e = err(&good[..good.len() / 2]);
        assert!(e.starts_with("damon.data: "), "{e}");
        assert!(e.contains("damo record"), "{e}");
        let e = err(b"[{\"target_id\": 0}]");
        assert!(
            e.contains("damon.data: not a zlib-compressed damo record"),
            "{e}"
        );
        let e = err(&zlib_json(&serde_json::json!({"not": "a list"})));
        assert!(
            e.contains("damon.data: not a damo record (expected a JSON list"),
            "{e}"
        );
        let e = err(&zlib_json(
            &serde_json::json!([{"target_id": 0, "snapshots": []}]),
        ));
        assert!(e.contains("missing field `intervals`"), "{e}");
        let backwards = record(
            0,
            5000,
            100_000,
            vec![snapshot(200, 300, vec![]), snapshot(100, 200, vec![])],
        );
        let e = err(&zlib_json(&serde_json::json!([backwards])));
        assert!(
            e.contains("record 0 (target 0), snapshot 1: start_time 100 is before the previous snapshot's 200: expected snapshots in time order"),
            "{e}"
        );
        let inside_out = record(
            0,
            5000,
            100_000,
            vec![snapshot(0, 100, vec![region(8192, 4096, 1)])],
        );
        let e = err(&zlib_json(&serde_json::json!([inside_out])));
        assert!(
            e.contains("region [0x2000, 0x1000): expected its end at or after its start"),
            "{e}"
        );
        let ends_first = record(0, 5000, 100_000, vec![snapshot(100, 50, vec![])]);
        let e = err(&zlib_json(&serde_json::json!([ends_first])));
        assert!(
            e.contains("end_time 50 is before its start_time 100"),
            "{e}"
        );
    }

    /// Through `trace::open` by name: a damon.data file is read as damo's, one page a
    /// request.
    #[test]
    fn open_guesses_a_record_by_its_name() {
        use super::super::{open, Format};
        assert_eq!(Format::guess(Path::new("out/damon.data")), Format::Damo);
        assert_eq!(Format::guess(Path::new("x/damon.data.1")), Format::Damo);
        assert_eq!(Format::guess(Path::new("masim.data")), Format::Damo);
        assert_eq!(Format::parse("damon"), Some(Format::Damo));
        assert!(Format::Damo.unit_sizes());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("damon.data");
        let rec = record(
            0,
            5000,
            5000,
            vec![snapshot(0, 5, vec![region(0, 3 * 4096, 1)])],
        );
        std::fs::write(&p, zlib_json(&serde_json::json!([rec]))).unwrap();
        let keys: Vec<u64> = open(&p, Format::guess(&p))
            .unwrap()
            .map(|r| r.unwrap().key)
            .collect();
        assert_eq!(keys, vec![0, 1, 2]);
        std::fs::write(&p, b"garbage").unwrap();
        let e = open(&p, Format::Damo).err().unwrap().to_string();
        assert!(
            e.contains("damon.data: not a zlib-compressed damo record"),
            "{e}"
        );
    }

    /// A 1 GiB region sampled 20 times is 5 M requests, generated, not stored: the
    /// reader holds the record and a cursor.
    #[test]
    fn a_big_region_streams() {
        let rec = record(
            0,
            5000,
            100_000,
            vec![snapshot(0, 100, vec![region(0, 1 << 30, 20)])],
        );
        let mut rd =
            Reader::new(&zlib_json(&serde_json::json!([rec]))[..], Path::new("d")).unwrap();
        assert_eq!(rd.next().unwrap().unwrap().key, 0);
        assert_eq!(rd.by_ref().count(), 20 * (1 << 18) - 1);
    }

    proptest! {
        /// A recording written as `--damon-record` writes it reads back, per snapshot,
        /// as the pages of its regions with k > 0, each requested k (at most m) times,
        /// at times inside the snapshot's window, in time order.
        #[test]
        fn a_damon_record_replays_each_accessed_page_k_times(
            m in 1u64..8,
            snaps in proptest::collection::vec(
                proptest::collection::vec((0u64..4, 1u64..4, 0u32..10), 0..5), 1..5),
        ) {
            let mut target = WriteRecord {
                kdamond: 0,
                sample_us: 1000,
                aggr_us: 1000 * m,
                ops_update_us: 1_000_000,
                snapshots: Vec::new(),
            };
            let window = target.aggr_us * 1000;
            let mut want = Vec::new();
            for (i, regions) in snaps.iter().enumerate() {
                // Regions: gap pages, then size pages, one after another.
                let mut at = 0;
                let mut rs = Vec::new();
                let mut counts = std::collections::BTreeMap::new();
                for &(gap, size, k) in regions {
                    let start = (at + gap) * PAGE_SIZE;
                    at += gap + size;
                    rs.push(WriteRegion { start, end: at * PAGE_SIZE, nr_accesses: k, age: 0 });
                    if k > 0 {
                        for p in start / PAGE_SIZE..at {
                            counts.insert(p, (k as u64).min(m));
                        }
                    }
                }
                want.push(counts);
                let start_ns = i as u64 * window;
                target.snapshots.push(WriteSnapshot {
                    start_ns, end_ns: start_ns + window, regions: rs,
                });
            }
            let bytes = encode(&[target]);
            let reqs: Vec<Request> = Reader::new(&bytes[..], Path::new("damon.data"))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let mut got = vec![std::collections::BTreeMap::new(); snaps.len()];
            let mut last = 0.0;
            for r in &reqs {
                prop_assert!(r.time >= last);
                last = r.time;
                let snap = (r.time as u64 / window) as usize;
                *got[snap].entry(r.key).or_insert(0u64) += 1;
            }
            prop_assert_eq!(got, want);
        }
    }
}
