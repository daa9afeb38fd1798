//! Where a replayed trace's requests land in the `trace` workload's mapping: one pass
//! over the trace at load time finds its footprint, checks every record (so a
//! malformed one is the scenario's error before the run starts) and fixes the pages of
//! each key.
//!
//! - A trace of pages (text, lackey, damo, or any trace with `ignore_obj_size`): keys
//!   are page numbers, often sparse (lackey's addresses). They are packed by 2 MiB
//!   ranges: the 512-page ranges the trace touches, in address order, take the
//!   mapping's ranges one after another, so pages keep their neighbours (readahead,
//!   fault-around, THP and page tables see the locality the program had; a dense
//!   trace keeps its layout exactly) while the mapping spans only what is used.
//! - A trace of objects (oracleGeneral, CSV with a size column): each object gets
//!   `ceil(size / 4096)` consecutive pages at its first request, objects laid out in
//!   the order first requested. An object requested later with another size keeps its
//!   first size's pages (libCacheSim's caches also keep the first size).
//!
//! Memory is one entry per distinct range or object, whatever the trace's length.

use super::Request;
use super::{Format, TraceError};
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// Pages of a 2 MiB range (a PMD's worth of PTEs).
const RANGE_PAGES: u64 = 512;

/// The most pages a mapping may span (a u32 page index).
const MAX_PAGES: u64 = u32::MAX as u64;

/// How keys map to pages.
#[derive(Debug, Clone)]
enum Keys {
    /// Page numbers: 2 MiB range (key / 512) → the mapping's range index.
    Ranges(HashMap<u64, u32>),
    /// Objects: key → (first page, pages).
    Objects(HashMap<u64, (u32, u32)>),
}

/// A trace as the `trace` workload replays it.
#[derive(Debug, Clone)]
pub struct Layout {
    /// SHA-256 of the file's bytes (as stored: a compressed trace's compressed bytes).
    pub digest: String,
    /// Requests in one pass.
    pub requests: u64,
    /// Pages the mapping spans.
    pub pages: u64,
    /// The first and last request's timestamps (the trace's unit; 0 without times).
    pub first_time: f64,
    pub last_time: f64,
    keys: Keys,
}

impl Layout {
    /// Reads the whole trace once. `pages_only`: every request is one page whose key
    /// is its page number (formats without sizes, or sizes ignored).
    pub fn scan(path: &Path, format: Format, pages_only: bool) -> Result<Layout, TraceError> {
        let digest = digest(path)?;
        let mut keys = if pages_only {
            Keys::Ranges(HashMap::new())
        } else {
            Keys::Objects(HashMap::new())
        };
        let (mut requests, mut pages) = (0u64, 0u64);
        let (mut first_time, mut last_time) = (0.0, 0.0);
        let mut prev_time = f64::NEG_INFINITY;
        for r in super::open(path, format)? {
            let r = r?;
            if r.time < prev_time {
                return Err(TraceError::Open {
                    file: path.to_path_buf(),
                    message: format!(
                        "request {} goes back in time ({} after {}): expected timestamps \
                         in order",
                        requests + 1,
                        r.time,
                        prev_time
                    ),
                });
            }
            prev_time = r.time;
            if requests == 0 {
                first_time = r.time;
            }
            last_time = r.time;
            requests += 1;
            match &mut keys {
                Keys::Ranges(m) => {
                    if let std::collections::hash_map::Entry::Vacant(e) =
                        m.entry(r.key / RANGE_PAGES)
                    {
                        // Numbered in address order once all are known.
                        e.insert(0);
                        pages += RANGE_PAGES;
                    }
                }
                Keys::Objects(m) => {
                    if let std::collections::hash_map::Entry::Vacant(e) = m.entry(r.key) {
                        let n = r.size.div_ceil(4096).clamp(1, MAX_PAGES);
                        e.insert((pages.min(MAX_PAGES) as u32, n as u32));
                        pages += n;
                    }
                }
            }
            if pages > MAX_PAGES {
                return Err(TraceError::Open {
                    file: path.to_path_buf(),
                    message: format!(
                        "the trace's footprint passes {MAX_PAGES} pages (16 TiB) at request \
                         {requests}: a mapping holds at most that"
                    ),
                });
            }
        }
        if let Keys::Ranges(m) = &mut keys {
            let mut ranges: Vec<u64> = m.keys().copied().collect();
            ranges.sort_unstable();
            for (i, r) in ranges.into_iter().enumerate() {
                m.insert(r, i as u32);
            }
        }
        if requests == 0 {
            return Err(TraceError::Open {
                file: path.to_path_buf(),
                message: "no requests: expected at least one".into(),
            });
        }
        Ok(Layout {
            digest,
            requests,
            pages,
            first_time,
            last_time,
            keys,
        })
    }

    /// The pages of a request: (first page, count). A request the scan did not see (the
    /// file changed since) is None.
    pub fn pages_of(&self, r: &Request) -> Option<(u32, u32)> {
        match &self.keys {
            Keys::Ranges(m) => m
                .get(&(r.key / RANGE_PAGES))
                .map(|&range| (range * RANGE_PAGES as u32 + (r.key % RANGE_PAGES) as u32, 1)),
            Keys::Objects(m) => m.get(&r.key).copied(),
        }
    }
}

/// The equality a resolved scenario needs: the same file contents and reading.
impl PartialEq for Layout {
    fn eq(&self, other: &Self) -> bool {
        self.digest == other.digest && self.requests == other.requests && self.pages == other.pages
    }
}

/// SHA-256 of a file, hex.
fn digest(path: &Path) -> Result<String, TraceError> {
    use sha2::Digest;
    let err = |e: std::io::Error| TraceError::Open {
        file: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut f = std::fs::File::open(path).map_err(err)?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(err)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(text: &str, format: Format, pages_only: bool) -> Result<Layout, TraceError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        std::fs::write(&p, text).unwrap();
        Layout::scan(&p, format, pages_only)
    }

    /// Sparse page numbers pack by 2 MiB range in address order, keeping their
    /// offset within the range.
    #[test]
    fn pages_pack_by_range_in_address_order() {
        let l = layout("0x7fff00000\n5\n0x7fff00001\n1000\n", Format::Text, true).unwrap();
        let at = |k| l.pages_of(&Request::new(k, 1)).unwrap();
        // Ranges touched: 0 (key 5), 1 (key 1000: 512..1024) and 0x7fff00000 / 512.
        assert_eq!(at(5), (5, 1));
        assert_eq!(at(1000), (512 + 488, 1));
        assert_eq!(at(0x7fff00000), (1024, 1));
        assert_eq!(at(0x7fff00001), (1025, 1));
        assert_eq!((l.requests, l.pages), (4, 3 * 512));
        assert!(l.pages_of(&Request::new(1 << 40, 1)).is_none());
    }

    /// Objects take ceil(size / 4096) pages at their first request; a later size is
    /// ignored.
    #[test]
    fn objects_take_their_pages_in_order() {
        let csv = "7,10000\n3,1\n7,99999\n9,4096\n";
        let o = super::super::csv::CsvOptions::parse("obj-id-col=1,obj-size-col=2,has-header=0")
            .unwrap();
        let l = layout(csv, Format::Csv(o), false).unwrap();
        let at = |k| l.pages_of(&Request::new(k, 0)).unwrap();
        assert_eq!(at(7), (0, 3));
        assert_eq!(at(3), (3, 1));
        assert_eq!(at(9), (4, 1));
        assert_eq!(l.pages, 5);
    }

    /// A malformed line is the scan's error at its line; an empty trace and times
    /// that go backwards are refused.
    #[test]
    fn bad_traces_are_refused() {
        let e = layout("1\n2\nxyz\n", Format::Text, true)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with(":3: `xyz`: expected a page number or address (decimal, or hex with 0x)"),
            "{e}"
        );
        let e = layout("# nothing\n", Format::Text, true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no requests"), "{e}");
        let o =
            super::super::csv::CsvOptions::parse("obj-id-col=1,time-col=2,has-header=0").unwrap();
        let e = layout("1,5\n2,4\n", Format::Csv(o), true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("request 2 goes back in time"), "{e}");
    }
}
