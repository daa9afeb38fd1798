//! Trace readers: streams of requests from files, read as they are consumed (memory
//! bounded whatever the trace's length). Not the kernel: the `trace` workload and
//! `reclaimsim cache` read them.
//!
//! Formats: libCacheSim's `oracleGeneral` binary records, plain text (a key per
//! line, decimal or 0x-hex, optionally followed by `r`/`w`) and valgrind lackey's
//! `--trace-mem=yes` output (page numbers), and CSV with libCacheSim's column
//! options. A malformed record stops
//! the read with a [`TraceError`] naming the file, the byte offset or line, and what
//! was expected.

pub mod csv;
pub mod lackey;
pub mod oracle;
pub mod text;

use crate::cache::Request;
use std::path::{Path, PathBuf};

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
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "oracleGeneral" | "oraclegeneral" => Some(Format::OracleGeneral),
            "text" | "txt" => Some(Format::Text),
            "lackey" => Some(Format::Lackey),
            "csv" => Some(Format::Csv(csv::CsvOptions::default())),
            _ => None,
        }
    }

    /// From the file name: `.oracleGeneral` (also `.oracleGeneral.bin`) or text.
    pub fn guess(path: &Path) -> Format {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.contains("oracleGeneral") || name.ends_with(".bin") {
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

/// Opens `path` as `format`; `page_size` > 0 turns keys (byte addresses) into page
/// numbers for text traces of addresses (0: keys as they are).
pub fn open(path: &Path, format: Format) -> Result<Requests, TraceError> {
    let file = std::fs::File::open(path).map_err(|e| TraceError::Open {
        file: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let r = std::io::BufReader::with_capacity(1 << 16, file);
    Ok(match format {
        Format::OracleGeneral => Box::new(oracle::Reader::new(r, path)),
        Format::Text => Box::new(text::Reader::new(r, path)),
        Format::Lackey => Box::new(lackey::Reader::new(r, path)),
        Format::Csv(o) => Box::new(csv::Reader::new(r, path, o)),
    })
}
