//! `run --record-accesses`: a workload thread's page accesses written as a text trace
//! (`PAGE r|w` per line, zstd-compressed), which the `trace` workload replays.
//!
//! A page is named by the thread's mapping it is in (numbered in the order the thread
//! first touches them) and its index there: `mapping << 36 | index`, so the pages of
//! one mapping keep their neighbours (the replay packs them by 2 MiB range) and
//! mappings never overlap (2^36 pages = 256 TiB each).

use std::io::Write;
use std::path::{Path, PathBuf};

/// Bits of a page's index within its mapping in a recorded key.
pub const MAPPING_SHIFT: u32 = 36;

/// One thread's recording, written to a temporary file renamed into place by
/// [`Recorder::finish`] (an interrupted or failed run leaves no partial trace).
pub struct Recorder {
    out: Option<zstd::stream::write::Encoder<'static, std::io::BufWriter<std::fs::File>>>,
    tmp: PathBuf,
    path: PathBuf,
    /// The spaces seen, in first-touch order (their position is the mapping number).
    spaces: Vec<u32>,
    line: Vec<u8>,
    pub accesses: u64,
    error: Option<String>,
}

impl Recorder {
    pub fn create(path: &Path) -> Result<Recorder, String> {
        let tmp = path.with_extension("zst.tmp");
        let f = std::fs::File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        let enc = zstd::stream::write::Encoder::new(std::io::BufWriter::new(f), 3)
            .map_err(|e| format!("{}: {e}", tmp.display()))?;
        Ok(Recorder {
            out: Some(enc),
            tmp,
            path: path.to_path_buf(),
            spaces: Vec::new(),
            line: Vec::with_capacity(32),
            accesses: 0,
            error: None,
        })
    }

    /// The key a page of `space` is recorded as.
    pub fn key(&mut self, space: u32, vpn: u32) -> u64 {
        let m = match self.spaces.iter().position(|&s| s == space) {
            Some(m) => m,
            None => {
                self.spaces.push(space);
                self.spaces.len() - 1
            }
        };
        (m as u64) << MAPPING_SHIFT | vpn as u64
    }

    /// Records one access.
    pub fn push(&mut self, space: u32, vpn: u32, write: bool) {
        let key = self.key(space, vpn);
        self.line.clear();
        // `write!` into a Vec cannot fail.
        let _ = writeln!(self.line, "{key} {}", if write { 'w' } else { 'r' });
        self.accesses += 1;
        if let (Some(out), None) = (self.out.as_mut(), &self.error) {
            if let Err(e) = out.write_all(&self.line) {
                self.error = Some(format!("{}: {e}", self.tmp.display()));
            }
        }
    }

    /// Ends the trace and moves it into place.
    pub fn finish(mut self) -> Result<PathBuf, String> {
        if let Some(e) = self.error.take() {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(e);
        }
        let enc = self.out.take().expect("finished once");
        let done = enc
            .finish()
            .and_then(|mut w| w.flush())
            .and_then(|_| std::fs::rename(&self.tmp, &self.path));
        if let Err(e) = done {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(format!("{}: {e}", self.path.display()));
        }
        Ok(self.path.clone())
    }
}

impl Drop for Recorder {
    /// A recording never finished (an error elsewhere ended the run) leaves nothing.
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is recorded reads back as the text trace of the same accesses.
    #[test]
    fn a_recording_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.txt.zst");
        let mut r = Recorder::create(&p).unwrap();
        r.push(7, 3, false);
        r.push(2, 0, true);
        r.push(7, 4, true);
        assert_eq!(r.finish().unwrap(), p);
        let got: Vec<_> = super::super::open(&p, super::super::Format::Text)
            .unwrap()
            .map(|q| q.map(|q| (q.key, q.write)).unwrap())
            .collect();
        assert_eq!(got, vec![(3, false), (1 << 36, true), (4, true)]);
        assert!(!dir.path().join("w.txt.zst.tmp").exists());
        // Dropped unfinished: no file at all.
        let q = dir.path().join("x.txt.zst");
        drop(Recorder::create(&q).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
