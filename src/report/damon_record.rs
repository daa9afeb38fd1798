//! `--damon-record`: DAMON's monitoring results as `damo record` writes them
//! (damo's `json_compressed` record format: a zlib stream of a JSON list with one
//! record per monitoring target), so `damo report access`, `damo report wss` and
//! `damo report heatmap --input DIR/damon.data` read a simulated run as they read
//! a real one.

use crate::mm::damon::Recording;
use crate::trace::damo::{WriteRecord, WriteRegion, WriteSnapshot};

/// The record file's bytes: the kernel model's recording in the trace format's
/// plain types, encoded by [`crate::trace::damo::encode`].
pub fn encode(rec: &Recording) -> Vec<u8> {
    let targets: Vec<WriteRecord> = rec
        .records
        .iter()
        .map(|r| WriteRecord {
            kdamond: r.kdamond,
            sample_us: r.attrs.sample_us,
            aggr_us: r.attrs.aggr_us,
            ops_update_us: r.attrs.ops_update_us,
            snapshots: r
                .snapshots
                .iter()
                .map(|s| WriteSnapshot {
                    start_ns: s.start_ns,
                    end_ns: s.end_ns,
                    regions: s
                        .regions
                        .iter()
                        .map(|g| WriteRegion {
                            start: g.start,
                            end: g.end,
                            nr_accesses: g.nr_accesses,
                            age: g.age,
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    crate::trace::damo::encode(&targets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::damon::{Attrs, RecordedRegion, RecordedSnapshot};
    use std::io::Read;

    #[test]
    fn a_record_is_zlib_json_with_damos_fields() {
        let mut rec = Recording::default();
        let attrs = Attrs {
            sample_us: 5000,
            aggr_us: 100_000,
            ops_update_us: 1_000_000,
            min_nr_regions: 10,
            max_nr_regions: 1000,
        };
        let region = |start, n, age| RecordedRegion {
            start,
            end: start + 4096,
            nr_accesses: n,
            age,
        };
        for i in 0..2u64 {
            let snapshot = RecordedSnapshot {
                start_ns: i * 100_000_000,
                end_ns: (i + 1) * 100_000_000,
                regions: vec![region(0, 20, i as u32), region(4096, 0, 3)],
            };
            rec.add(0, 0, attrs, snapshot);
        }
        // Changed intervals start a new record.
        let faster = Attrs {
            sample_us: 1000,
            ..attrs
        };
        let snapshot = RecordedSnapshot {
            start_ns: 200_000_000,
            end_ns: 300_000_000,
            regions: vec![region(0, 1, 0)],
        };
        rec.add(0, 0, faster, snapshot);
        let bytes = encode(&rec);
        // zlib header: CM = 8 (deflate), and the check bits make it a multiple of 31.
        assert_eq!(bytes[0] & 0x0f, 8);
        assert_eq!(((bytes[0] as u16) << 8 | bytes[1] as u16) % 31, 0);
        let mut json = String::new();
        flate2::read::ZlibDecoder::new(&bytes[..])
            .read_to_string(&mut json)
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let records = v.as_array().unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0]["target_id"], 0);
        assert_eq!(records[1]["target_id"], 1);
        assert_eq!(records[0]["intervals"]["aggr_us"], 100_000);
        assert_eq!(records[1]["intervals"]["sample_us"], 1000);
        let snaps = records[0]["snapshots"].as_array().unwrap();
        assert_eq!(snaps.len(), 2);
        assert_eq!(snaps[1]["start_time"], 100_000_000);
        assert_eq!(snaps[1]["end_time"], 200_000_000);
        let r = &snaps[1]["regions"][0];
        assert_eq!(r["end"], 4096);
        assert_eq!(r["nr_accesses"]["samples"], 20);
        assert_eq!(r["age"]["aggr_intervals"], 1);
    }
}
