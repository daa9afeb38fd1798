//! CSV traces with libCacheSim's csv reader's column options: `obj-id-col`,
//! `obj-size-col`, `time-col` (1-based; 0 = none), `has-header` (else guessed: a
//! first row whose id is not a number is a header), `delimiter` (`comma`, `tab`,
//! `space`, `pipe`, `colon`, `semicolon` or one character; default comma) and
//! `obj-id-is-num` (0: ids are strings, hashed with FNV-1a, where libCacheSim uses a
//! hash of its own: the miss counts agree unless two ids collide). Without a size
//! column every request has size 1; rows of size 0 are skipped, as libCacheSim's
//! readers skip them.

use super::Request;
use super::TraceError;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The column options (`--trace-options` for `--format csv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvOptions {
    pub obj_id_col: usize,
    pub obj_size_col: usize,
    pub time_col: usize,
    pub has_header: Option<bool>,
    pub delimiter: u8,
    pub obj_id_is_num: bool,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            obj_id_col: 1,
            obj_size_col: 0,
            time_col: 0,
            has_header: None,
            delimiter: b',',
            obj_id_is_num: true,
        }
    }
}

impl CsvOptions {
    /// `obj-id-col=2,obj-size-col=3,has-header=1,delimiter=tab` (libCacheSim's names;
    /// `_` for `-` accepted).
    pub fn parse(s: &str) -> Result<CsvOptions, String> {
        let mut o = CsvOptions::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}`: expected KEY=VALUE"))?;
            let (k, v) = (k.trim().replace('_', "-"), v.trim());
            let col = |v: &str| {
                v.parse::<usize>().map_err(|_| {
                    format!("{k}: `{v}`: expected a column number (1-based, 0 = none)")
                })
            };
            let flag = |v: &str| match v {
                "1" | "true" => Ok(true),
                "0" | "false" => Ok(false),
                _ => Err(format!("{k}: `{v}`: expected 1 or 0")),
            };
            match k.as_str() {
                "obj-id-col" => o.obj_id_col = col(v)?,
                "obj-size-col" => o.obj_size_col = col(v)?,
                "time-col" => o.time_col = col(v)?,
                "has-header" | "header" => o.has_header = Some(flag(v)?),
                "obj-id-is-num" => o.obj_id_is_num = flag(v)?,
                "delimiter" => {
                    o.delimiter = match v {
                        "comma" => b',',
                        "tab" | "\\t" => b'\t',
                        "space" => b' ',
                        "pipe" => b'|',
                        "colon" => b':',
                        "semicolon" => b';',
                        _ if v.len() == 1 => v.as_bytes()[0],
                        _ => return Err(format!("delimiter: `{v}`: expected comma, tab, space, pipe, colon, semicolon or one character")),
                    }
                }
                _ => {
                    return Err(format!(
                        "`{k}`: unknown option (obj-id-col, obj-size-col, time-col, has-header, delimiter, obj-id-is-num)"
                    ))
                }
            }
        }
        if o.obj_id_col == 0 {
            return Err("obj-id-col: expected a column (1-based)".into());
        }
        Ok(o)
    }
}

/// FNV-1a 64 of a string id.
fn hash_id(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Streams a CSV trace's rows as requests.
pub struct Reader<R: Read> {
    rows: csv::StringRecordsIntoIter<R>,
    o: CsvOptions,
    file: PathBuf,
    first: bool,
    done: bool,
}

impl<R: Read> Reader<R> {
    pub fn new(r: R, file: &Path, o: CsvOptions) -> Reader<R> {
        let rows = csv::ReaderBuilder::new()
            .has_headers(false)
            .delimiter(o.delimiter)
            .flexible(true)
            .from_reader(r)
            .into_records();
        Reader {
            rows,
            o,
            file: file.to_path_buf(),
            first: true,
            done: false,
        }
    }

    fn request(&self, row: &csv::StringRecord) -> Result<Option<Request>, String> {
        let field = |col: usize, what: &str| {
            row.get(col - 1).map(str::trim).ok_or_else(|| {
                format!(
                    "expected {what} in column {col}, the row has {} columns",
                    row.len()
                )
            })
        };
        let id = field(self.o.obj_id_col, "the object id")?;
        let key = if self.o.obj_id_is_num {
            id.parse::<u64>()
                .map_err(|_| format!("`{id}`: expected a numeric object id (or obj-id-is-num=0)"))?
        } else {
            hash_id(id)
        };
        let size = if self.o.obj_size_col == 0 {
            1
        } else {
            let s = field(self.o.obj_size_col, "the object size")?;
            s.parse::<u64>()
                .map_err(|_| format!("`{s}`: expected an object size in bytes"))?
        };
        let mut time = 0.0;
        if self.o.time_col != 0 {
            let t = field(self.o.time_col, "the time")?;
            time = t
                .parse::<f64>()
                .ok()
                .filter(|t| t.is_finite())
                .ok_or_else(|| format!("`{t}`: expected a time (a number)"))?;
        }
        Ok((size > 0).then_some(Request {
            time,
            ..Request::new(key, size)
        }))
    }
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let row = match self.rows.next()? {
                Ok(row) => row,
                Err(e) => {
                    self.done = true;
                    let line = e.position().map_or(0, |p| p.line());
                    return Some(Err(TraceError::AtLine {
                        file: self.file.clone(),
                        line,
                        message: e.to_string(),
                    }));
                }
            };
            let line = row.position().map_or(0, |p| p.line());
            let first = std::mem::take(&mut self.first);
            let r = self.request(&row);
            if first {
                let header = match self.o.has_header {
                    Some(h) => h,
                    None => r.is_err(),
                };
                if header {
                    continue;
                }
            }
            match r {
                Ok(Some(req)) => return Some(Ok(req)),
                Ok(None) => continue,
                Err(message) => {
                    self.done = true;
                    return Some(Err(TraceError::AtLine {
                        file: self.file.clone(),
                        line,
                        message,
                    }));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str, opts: &str) -> Vec<Result<Request, TraceError>> {
        let o = CsvOptions::parse(opts).unwrap();
        Reader::new(s.as_bytes(), Path::new("t.csv"), o).collect()
    }

    fn req(key: u64, size: u64) -> Request {
        Request::new(key, size)
    }

    #[test]
    fn columns_header_and_size_zero_as_libcachesim() {
        // libCacheSim: `ts,key,size / 10,1,100 / 11,2,200 / 12,1,100 / 13,3,0` with
        // time-col=1, obj-id-col=2, obj-size-col=3 gives three requests (size 0 skipped).
        let t = "ts,key,size\n10,1,100\n11,2,200\n12,1,100\n13,3,0\n";
        let got: Vec<Request> = read(t, "time-col=1,obj-id-col=2,obj-size-col=3")
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let at = |key, size, time| Request {
            time,
            ..req(key, size)
        };
        assert_eq!(
            got,
            vec![at(1, 100, 10.0), at(2, 200, 11.0), at(1, 100, 12.0)]
        );
        // Tab-separated, no header, no size column: size 1.
        let got: Vec<Request> = read("a\t7\nb\t8\n", "obj-id-col=2,delimiter=tab,has-header=0")
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(got, vec![req(7, 1), req(8, 1)]);
        // String ids, hashed: the same string the same key.
        let got: Vec<u64> = read("x\ny\nx\n", "obj-id-is-num=0,has-header=0")
            .into_iter()
            .map(|r| r.unwrap().key)
            .collect();
        assert_eq!(got[0], got[2]);
        assert_ne!(got[0], got[1]);
    }

    proptest::proptest! {
        /// Rows written with a header, time, id and size columns (tab-separated)
        /// read back as the requests they are, size-0 rows skipped.
        #[test]
        fn written_rows_read_back(rows in proptest::collection::vec(
            (0u32..1 << 30, proptest::prelude::any::<u64>(), 0u64..1 << 40), 0..40)) {
            let mut text = String::from("time\tid\tsize\n");
            for (t, id, size) in &rows {
                text.push_str(&format!("{t}\t{id}\t{size}\n"));
            }
            let opts = "time-col=1,obj-id-col=2,obj-size-col=3,delimiter=tab,has-header=1";
            let got: Vec<Request> = read(&text, opts).into_iter().map(Result::unwrap).collect();
            let want: Vec<Request> = rows
                .iter()
                .filter(|r| r.2 > 0)
                .map(|&(t, id, size)| Request { time: t as f64, ..req(id, size) })
                .collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    /// A row cut short, an unterminated quote and bytes that are not UTF-8 are errors
    /// at their line, not panics.
    #[test]
    fn truncated_and_corrupt_rows_are_errors() {
        let e = read("1,5\n2,", "obj-size-col=2,has-header=0");
        let m = e[1].clone().unwrap_err().to_string();
        assert!(m.starts_with("t.csv:2: `"), "{m}");
        let e = read("1,5\n\"2,6\n", "obj-size-col=2,has-header=0");
        assert!(e.last().is_some_and(|r| r.is_err()), "{e:?}");
        let o = CsvOptions::parse("has-header=0").unwrap();
        let got: Vec<_> = Reader::new(&b"1\n\xff\xfe\n"[..], Path::new("t.csv"), o).collect();
        let m = got[1].clone().unwrap_err().to_string();
        assert!(m.starts_with("t.csv:2:"), "{m}");
    }

    #[test]
    fn bad_rows_and_options_are_named() {
        let e = read("1,5\n2\n", "obj-size-col=2,has-header=0");
        let m = e[1].clone().unwrap_err().to_string();
        assert_eq!(
            m,
            "t.csv:2: expected the object size in column 2, the row has 1 columns"
        );
        let m = read("1\nzz\n", "has-header=0")[1]
            .clone()
            .unwrap_err()
            .to_string();
        assert!(
            m.starts_with("t.csv:2: `zz`: expected a numeric object id"),
            "{m}"
        );
        for (bad, what) in [
            ("obj-id-col=x", "expected a column number"),
            ("nope=1", "unknown option"),
            ("delimiter=ab", "expected comma, tab"),
            ("obj-id-col=0", "expected a column"),
            ("has-header", "expected KEY=VALUE"),
        ] {
            let e = CsvOptions::parse(bad).unwrap_err();
            assert!(e.contains(what), "{bad}: {e}");
        }
    }
}
