//! A sweep's directory as its readers see it: `sweep.json`'s list of points (written
//! by `sweep`, read by `compare` and `plot`), so the reports need nothing of the sweep
//! runner.

use std::path::{Path, PathBuf};

/// `dir` holds no readable sweep.json.
#[derive(Debug, thiserror::Error)]
#[error("{path}: not a sweep directory (no sweep.json): {reason}")]
pub struct NotASweep {
    pub path: PathBuf,
    pub reason: String,
}

/// One point as sweep.json lists it.
#[derive(Debug, Clone)]
pub struct ListedPoint {
    pub index: usize,
    pub dir: PathBuf,
    /// Swept key (or dimension name) → value as text, in sweep order.
    pub values: Vec<(String, String)>,
}

/// The points sweep.json in `dir` lists, with their directories under `dir`.
pub fn listed_points(dir: &Path) -> Result<Vec<ListedPoint>, NotASweep> {
    let path = dir.join("sweep.json");
    let not_a_sweep = |reason: String| NotASweep {
        path: dir.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| not_a_sweep(e.to_string()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| not_a_sweep(format!("sweep.json: {e}")))?;
    let keys: Vec<&str> = json["keys"]
        .as_array()
        .map(|a| a.iter().filter_map(|k| k.as_str()).collect())
        .unwrap_or_default();
    let points = json["points"]
        .as_array()
        .ok_or_else(|| not_a_sweep("sweep.json: no `points` list".into()))?;
    points
        .iter()
        .map(|p| {
            let index = p["index"]
                .as_u64()
                .ok_or_else(|| not_a_sweep("sweep.json: a point without an `index`".into()))?;
            let sub = p["dir"]
                .as_str()
                .filter(|d| !d.contains("..") && !Path::new(d).is_absolute())
                .ok_or_else(|| not_a_sweep(format!("sweep.json: point {index}: bad `dir`")))?;
            let values = keys
                .iter()
                .map(|k| {
                    let v = &p["values"][*k];
                    (
                        k.to_string(),
                        v.as_str().map_or(v.to_string(), str::to_string),
                    )
                })
                .collect();
            Ok(ListedPoint {
                index: index as usize,
                dir: dir.join(sub),
                values,
            })
        })
        .collect()
}

/// Why `points` cannot be read as a whole sweep, if some have no results.json yet: a
/// sweep interrupted (its resume skips the points that ran) or still running. Names
/// up to four of them (past four, the first three and how many more); None when every
/// point has run.
pub fn unfinished(points: &[ListedPoint]) -> Option<String> {
    let missing: Vec<String> = points
        .iter()
        .filter(|p| !p.dir.join("results.json").is_file())
        .map(|p| {
            p.dir.file_name().map_or_else(
                || p.dir.display().to_string(),
                |n| n.to_string_lossy().into(),
            )
        })
        .collect();
    let shown = match missing.len() {
        0 => return None,
        1..=4 => missing.join(", "),
        n => format!("{} and {} more", missing[..3].join(", "), n - 3),
    };
    Some(format!(
        "the sweep is unfinished: {} of {} points have no results.json ({shown}); \
         run the same `reclaimsim sweep` again to finish it",
        missing.len(),
        points.len()
    ))
}
