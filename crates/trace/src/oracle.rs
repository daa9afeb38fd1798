//! libCacheSim's `oracleGeneral` binary format: 24-byte little-endian records of
//! clock_time (u32, seconds), obj_id (u64), obj_size (u32, bytes) and
//! next_access_vtime (i64: the index of the next request for the object, -1 if
//! none).

use super::Request;
use super::TraceError;
use std::io::Read;
use std::path::{Path, PathBuf};

pub const RECORD_BYTES: usize = 24;

/// One oracleGeneral record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub clock_time: u32,
    pub obj_id: u64,
    pub obj_size: u32,
    pub next_access_vtime: i64,
}

impl Record {
    pub fn to_bytes(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..4].copy_from_slice(&self.clock_time.to_le_bytes());
        b[4..12].copy_from_slice(&self.obj_id.to_le_bytes());
        b[12..16].copy_from_slice(&self.obj_size.to_le_bytes());
        b[16..24].copy_from_slice(&self.next_access_vtime.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8; RECORD_BYTES]) -> Record {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Record {
            clock_time: u32_at(0),
            obj_id: u64_at(4),
            obj_size: u32_at(12),
            next_access_vtime: u64_at(16) as i64,
        }
    }
}

/// Streams the records of a reader as requests.
pub struct Reader<R> {
    r: R,
    file: PathBuf,
    offset: u64,
    done: bool,
}

impl<R: Read> Reader<R> {
    pub fn new(r: R, file: &Path) -> Reader<R> {
        Reader {
            r,
            file: file.to_path_buf(),
            offset: 0,
            done: false,
        }
    }

    /// The next record, None at a clean end of file.
    pub fn next_record(&mut self) -> Option<Result<Record, TraceError>> {
        if self.done {
            return None;
        }
        let mut b = [0u8; RECORD_BYTES];
        let mut got = 0;
        while got < RECORD_BYTES {
            match self.r.read(&mut b[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.done = true;
                    return Some(Err(self.error(e.to_string())));
                }
            }
        }
        if got == 0 {
            self.done = true;
            return None;
        }
        if got < RECORD_BYTES {
            self.done = true;
            return Some(Err(self.error(format!(
                "truncated record: {got} of {RECORD_BYTES} bytes (clock_time u32, obj_id u64, \
                 obj_size u32, next_access_vtime i64)"
            ))));
        }
        self.offset += RECORD_BYTES as u64;
        Some(Ok(Record::from_bytes(&b)))
    }

    fn error(&self, message: String) -> TraceError {
        TraceError::AtByte {
            file: self.file.clone(),
            offset: self.offset,
            message,
        }
    }
}

/// The records as requests; records of size 0 are skipped, as libCacheSim's readers
/// skip them by default (`ignore_size_zero_req`).
impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.next_record()? {
                Ok(rec) if rec.obj_size == 0 => continue,
                r => {
                    return Some(r.map(|rec| Request {
                        time: rec.clock_time as f64,
                        ..Request::new(rec.obj_id, rec.obj_size as u64)
                    }))
                }
            }
        }
    }
}

/// Writes records (for tests and for `--record-accesses`).
pub fn write(w: &mut impl std::io::Write, records: &[Record]) -> std::io::Result<()> {
    for r in records {
        w.write_all(&r.to_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn read_all(bytes: &[u8]) -> Vec<Result<Request, TraceError>> {
        Reader::new(bytes, Path::new("t.oracleGeneral")).collect()
    }

    #[test]
    fn records_are_24_little_endian_bytes() {
        let rec = Record {
            clock_time: 1,
            obj_id: 0x0102_0304_0506_0708,
            obj_size: 4096,
            next_access_vtime: -1,
        };
        let b = rec.to_bytes();
        assert_eq!(&b[0..4], &[1, 0, 0, 0]);
        assert_eq!(&b[4..12], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(&b[12..16], &[0, 0x10, 0, 0]);
        assert_eq!(&b[16..24], &[0xff; 8]);
        assert_eq!(
            read_all(&b),
            vec![Ok(Request {
                time: 1.0,
                ..Request::new(0x0102_0304_0506_0708, 4096)
            })]
        );
    }

    #[test]
    fn a_truncated_record_names_its_byte_and_sizeless_ones_are_skipped() {
        let rec = Record {
            clock_time: 0,
            obj_id: 7,
            obj_size: 1,
            next_access_vtime: -1,
        };
        let mut b = rec.to_bytes().to_vec();
        b.extend_from_slice(&rec.to_bytes()[..10]);
        let got = read_all(&b);
        assert_eq!(got.len(), 2);
        let e = got[1].clone().unwrap_err().to_string();
        assert!(
            e.starts_with("t.oracleGeneral: byte 24: truncated record: 10 of 24"),
            "{e}"
        );
        let mut b = Record { obj_size: 0, ..rec }.to_bytes().to_vec();
        b.extend_from_slice(&rec.to_bytes());
        assert_eq!(read_all(&b), vec![Ok(Request::new(7, 1))]);
        assert!(read_all(&[]).is_empty());
    }

    proptest! {
        #[test]
        fn write_then_read_is_identity(recs in proptest::collection::vec(
            (any::<u32>(), any::<u64>(), 1u32.., any::<i64>()), 0..50)) {
            let recs: Vec<Record> = recs.into_iter().map(|(c, o, s, n)| Record {
                clock_time: c, obj_id: o, obj_size: s, next_access_vtime: n,
            }).collect();
            let mut buf = Vec::new();
            write(&mut buf, &recs).unwrap();
            let mut rd = Reader::new(&buf[..], Path::new("p"));
            let mut back = Vec::new();
            while let Some(r) = rd.next_record() {
                back.push(r.unwrap());
            }
            prop_assert_eq!(back, recs);
        }
    }
}
