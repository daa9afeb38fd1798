//! An output directory held for one run or sweep: created and probed for writing before
//! anything is simulated, and locked so two processes never mix their files in it.
//!
//! The lock is an advisory file lock on `DIR/.reclaimsim.lock` (released by the OS when
//! the holder exits, however it exits); the file names the holder, so a second process
//! can say who has the directory.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

const LOCK_FILE: &str = ".reclaimsim.lock";

#[derive(Debug, thiserror::Error)]
pub enum OutDirError {
    #[error("{path}: cannot create the output directory: {source}")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: the output directory is not writable: {source}")]
    NotWritable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: in use by another reclaimsim ({holder}); wait for it to finish or choose another --out")]
    Busy { path: PathBuf, holder: String },
}

/// A locked output directory; the lock is released when this is dropped.
#[derive(Debug)]
pub struct OutDir {
    path: PathBuf,
    _lock: File,
}

impl OutDir {
    /// Creates `path` if needed, checks that a file can be written in it, and locks it
    /// for `what` (e.g. `run scenarios/x.toml`), the text another process will show.
    pub fn acquire(path: &Path, what: &str) -> Result<OutDir, OutDirError> {
        std::fs::create_dir_all(path).map_err(|source| OutDirError::Create {
            path: path.to_path_buf(),
            source,
        })?;
        let lock_path = path.join(LOCK_FILE);
        let not_writable = |source| OutDirError::NotWritable {
            path: path.to_path_buf(),
            source,
        };
        let mut lock = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(not_writable)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&lock_path)
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "holder unknown".into());
                return Err(OutDirError::Busy {
                    path: path.to_path_buf(),
                    holder,
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(not_writable(e)),
        }
        // Writing the holder's name is also the write probe: a full or read-only
        // filesystem is found here, before the simulation, not after it.
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let text = format!(
            "pid {}: {what}, since unix time {since}\n",
            std::process::id()
        );
        lock.set_len(0)
            .and_then(|_| lock.write_all(text.as_bytes()))
            .and_then(|_| lock.sync_all())
            .map_err(not_writable)?;
        Ok(OutDir {
            path: path.to_path_buf(),
            _lock: lock,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes result files a previous run left (and any temporary file of a writer
    /// that died), so a run that fails leaves no result that looks like its own.
    pub fn clear(&self, names: &[&str]) -> std::io::Result<()> {
        for name in names {
            match std::fs::remove_file(self.path.join(name)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        for entry in std::fs::read_dir(&self.path)? {
            let name = entry?.file_name();
            let name = name.to_string_lossy();
            let ours = names
                .iter()
                .any(|n| name.starts_with(&format!(".{n}.")) && name.ends_with(".tmp"));
            if ours {
                let _ = std::fs::remove_file(self.path.join(&*name));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_told_who_has_it() {
        let dir = tempfile::tempdir().unwrap();
        let first = OutDir::acquire(dir.path(), "run first.toml").unwrap();
        let err = OutDir::acquire(dir.path(), "run second.toml").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("in use"), "{msg}");
        assert!(msg.contains("run first.toml"), "{msg}");
        assert!(
            msg.contains(&format!("pid {}", std::process::id())),
            "{msg}"
        );
        drop(first);
        // Released on drop: the next holder gets it.
        OutDir::acquire(dir.path(), "run third.toml").unwrap();
    }

    #[test]
    fn clear_removes_old_results_and_dead_writers_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["results.json", ".results.json.123.tmp", "notes.txt"] {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        let out = OutDir::acquire(dir.path(), "run").unwrap();
        out.clear(&["results.json", "timeseries.csv"]).unwrap();
        assert!(!dir.path().join("results.json").exists());
        assert!(!dir.path().join(".results.json.123.tmp").exists());
        assert!(dir.path().join("notes.txt").exists());
    }
}
