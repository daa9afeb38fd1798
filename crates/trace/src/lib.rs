//! Trace readers: streams of requests from files, read as they are consumed (memory
//! bounded whatever the trace's length). Not the kernel: the `trace` workload and
//! `reclaimsim cache` read them. Any of them may be zstd-compressed. The writers too:
//! `--record-accesses`' text traces ([`record`]) and DAMON's records ([`damo::encode`],
//! from plain snapshot types). Depends on no other crate of the workspace.
//!
//! Formats: libCacheSim's `oracleGeneral` binary records, plain text (a key per
//! line, decimal or 0x-hex, optionally followed by `r`/`w`) and valgrind lackey's
//! `--trace-mem=yes` output (page numbers), CSV with libCacheSim's column options,
//! and damo's record files (DAMON's access pattern replayed region by region, a page
//! per request: [`damo`]). A malformed record stops the read with a [`TraceError`]
//! naming the file, the byte offset or line (damo's records: the record and snapshot),
//! and what was expected.

pub mod csv;
pub mod damo;
pub mod lackey;
pub mod layout;
pub mod oracle;
pub mod record;
pub mod text;

use std::path::{Path, PathBuf};

/// One request of a trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    pub key: u64,
    pub size: u64,
    /// The trace's timestamp in its own unit (oracleGeneral: seconds; 0 where the
    /// format has none). The cache simulator ignores it; the `trace` workload paces by it.
    pub time: f64,
    /// A store (text `w`, lackey `S`/`M`).
    pub write: bool,
}

impl Request {
    /// A read of `key` of `size` with no timestamp.
    pub fn new(key: u64, size: u64) -> Request {
        Request {
            key,
            size,
            time: 0.0,
            write: false,
        }
    }
}

/// Where a trace went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    #[error("{file}: {message}")]
    Open { file: PathBuf, message: String },
    #[error("{file}: byte {offset}: {message}")]
    AtByte {
        file: PathBuf,
        offset: u64,
        message: String,
    },
    #[error("{file}:{line}: {message}")]
    AtLine {
        file: PathBuf,
        line: u64,
        message: String,
    },
}

/// A trace file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// libCacheSim's oracleGeneral: 24-byte little-endian records.
    OracleGeneral,
    /// A key per line.
    Text,
    /// valgrind lackey `--trace-mem=yes` output (page numbers of the accesses).
    Lackey,
    /// CSV with libCacheSim's column options.
    Csv(csv::CsvOptions),
    /// damo's record (`damo record`, `--damon-record`): DAMON's regions replayed as
    /// requests for their 4 KiB pages.
    Damo,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "oracleGeneral" | "oraclegeneral" => Some(Format::OracleGeneral),
            "text" | "txt" => Some(Format::Text),
            "lackey" => Some(Format::Lackey),
            "csv" => Some(Format::Csv(csv::CsvOptions::default())),
            "damo" | "damon" => Some(Format::Damo),
            _ => None,
        }
    }

    /// Whether requests carry timestamps (CSV: with a time column).
    pub fn has_time(&self) -> bool {
        match self {
            Format::OracleGeneral | Format::Damo => true,
            Format::Csv(o) => o.time_col != 0,
            Format::Text | Format::Lackey => false,
        }
    }

    /// What one unit of the format's timestamps is, in ns, unless the scenario says:
    /// seconds (oracleGeneral's clock_time, and CSV by libCacheSim's habit), a damo
    /// record's nanoseconds.
    pub fn default_time_unit_ns(&self) -> f64 {
        match self {
            Format::Damo => 1.0,
            _ => 1e9,
        }
    }

    /// Every request of this format has size 1 (no size field): its cache sizes
    /// count objects.
    pub fn unit_sizes(&self) -> bool {
        match self {
            Format::OracleGeneral => false,
            Format::Csv(o) => o.obj_size_col == 0,
            Format::Text | Format::Lackey | Format::Damo => true,
        }
    }

    /// From the file name (a `.zst` suffix aside): `damon.data*` or `*.data` (damo's
    /// record), `.oracleGeneral` (also `.bin`), `.csv`, else text.
    pub fn guess(path: &Path) -> Format {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let name = name.strip_suffix(".zst").unwrap_or(name);
        if name.starts_with("damon.data") || name.ends_with(".data") {
            Format::Damo
        } else if name.contains("oracleGeneral") || name.ends_with(".bin") {
            Format::OracleGeneral
        } else if name.ends_with(".csv") {
            Format::Csv(csv::CsvOptions::default())
        } else {
            Format::Text
        }
    }
}

/// A stream of requests from a trace file.
pub type Requests = Box<dyn Iterator<Item = Result<Request, TraceError>> + Send>;

/// A line-oriented trace: each line parsed by `parse` (Ok(None) skips it); the first
/// bad line (or bytes that are not UTF-8) ends the stream with an error at its line.
pub struct Lines<R, T> {
    r: R,
    file: PathBuf,
    line_no: u64,
    buf: String,
    done: bool,
    parse: fn(&str) -> Result<Option<T>, String>,
}

impl<R: std::io::BufRead, T> Lines<R, T> {
    pub fn new(r: R, file: &Path, parse: fn(&str) -> Result<Option<T>, String>) -> Self {
        Lines {
            r,
            file: file.to_path_buf(),
            line_no: 0,
            buf: String::new(),
            done: false,
            parse,
        }
    }

    /// The next parsed line, None at the end.
    pub fn next_parsed(&mut self) -> Option<Result<T, TraceError>> {
        while !self.done {
            self.buf.clear();
            self.line_no += 1;
            let message = match self.r.read_line(&mut self.buf) {
                Ok(0) => {
                    self.done = true;
                    continue;
                }
                Ok(_) => match (self.parse)(&self.buf) {
                    Ok(Some(t)) => return Some(Ok(t)),
                    Ok(None) => continue,
                    Err(m) => m,
                },
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    "not UTF-8 text: expected a trace line".to_string()
                }
                Err(e) => e.to_string(),
            };
            self.done = true;
            return Some(Err(TraceError::AtLine {
                file: self.file.clone(),
                line: self.line_no,
                message,
            }));
        }
        None
    }
}

/// zstd's frame magic number, little-endian.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// Opens `path` as `format`. A zstd-compressed file (by its magic number, whatever
/// its name) is decompressed as it is read; offsets in errors are then into the
/// decompressed stream.
pub fn open(path: &Path, format: Format) -> Result<Requests, TraceError> {
    let open_err = |e: std::io::Error| TraceError::Open {
        file: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut file = std::fs::File::open(path).map_err(open_err)?;
    let mut magic = [0u8; 4];
    let n = std::io::Read::read(&mut file, &mut magic).map_err(open_err)?;
    std::io::Seek::rewind(&mut file).map_err(open_err)?;
    let raw: Box<dyn std::io::Read + Send> = if n == 4 && magic == ZSTD_MAGIC {
        Box::new(zstd::stream::read::Decoder::new(file).map_err(open_err)?)
    } else {
        Box::new(file)
    };
    let r = std::io::BufReader::with_capacity(1 << 16, raw);
    Ok(match format {
        Format::OracleGeneral => Box::new(oracle::Reader::new(r, path)),
        Format::Text => Box::new(text::Reader::new(r, path)),
        Format::Lackey => Box::new(lackey::Reader::new(r, path)),
        Format::Csv(o) => Box::new(csv::Reader::new(r, path, o)),
        Format::Damo => Box::new(damo::Reader::new(r, path)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zstd-compressed trace reads as the plain one; corrupt compressed data is an
    /// error, not a panic.
    #[test]
    fn zstd_traces_are_read_through() {
        let dir = tempfile::tempdir().unwrap();
        let plain = b"1\n2\n0x3 w\n";
        let z = dir.path().join("t.txt.zst");
        std::fs::write(&z, zstd::encode_all(&plain[..], 3).unwrap()).unwrap();
        assert_eq!(Format::guess(&z), Format::Text);
        let keys: Vec<u64> = open(&z, Format::Text)
            .unwrap()
            .map(|r| r.unwrap().key)
            .collect();
        assert_eq!(keys, vec![1, 2, 3]);
        let mut bad = ZSTD_MAGIC.to_vec();
        bad.extend_from_slice(&[0xff; 20]);
        std::fs::write(&z, bad).unwrap();
        let got: Vec<_> = open(&z, Format::Text).unwrap().collect();
        assert!(got.last().is_some_and(|r| r.is_err()), "{got:?}");
    }
}
