//! `plot` of a `reclaimsim cache --json` file: the miss ratio curve, miss ratio (from
//! 0 to 1) against cache size, a line with markers per policy, drawn by plot's
//! `Chart` machinery into plots/NAME-mrc.svg and .png beside the file (NAME: the
//! file's name without its extension; a run's charts go to DIR/plots/ the same way).
//!
//! The file is recognised by its content: a JSON object with a `results` list (each
//! row a `policy`, `cache_size` and `miss_ratio`; other fields are ignored), or, as
//! one policy's output had it before several could be given, `policy` and `sizes`.

use super::plot::{
    draw_svg, read_err, write_svg_png, Axis, Chart, PlotError, Quantity, Scale, Series,
};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Sizes at least this far apart put the size axis on a log scale.
const LOG_SPAN: f64 = 100.0;

/// The fields of `reclaimsim cache --json`'s output a curve needs.
#[derive(Debug, Clone, Deserialize)]
pub struct CacheJson {
    pub trace: String,
    /// "bytes" or "objects"; older files have only `ignore_obj_size`.
    #[serde(default)]
    pub size_unit: Option<String>,
    #[serde(default)]
    pub ignore_obj_size: bool,
    #[serde(default)]
    pub results: Option<Vec<Point>>,
    #[serde(default)]
    pub policy: Option<String>,
    #[serde(default)]
    pub sizes: Option<Vec<SizePoint>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Point {
    pub policy: String,
    pub cache_size: u64,
    pub miss_ratio: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SizePoint {
    pub cache_size: u64,
    pub miss_ratio: f64,
}

/// Whether `v` looks like `reclaimsim cache --json`'s output.
fn is_cache_json(v: &serde_json::Value) -> bool {
    v.get("results").is_some_and(serde_json::Value::is_array)
        || (v.get("policy").is_some_and(serde_json::Value::is_string)
            && v.get("sizes").is_some_and(serde_json::Value::is_array))
}

/// Reads a cache JSON file; errors name the file and what is wrong (the JSON's line
/// and column, or the path of the field).
pub fn read(path: &Path) -> Result<CacheJson, PlotError> {
    let text = std::fs::read_to_string(path).map_err(|e| read_err(path, e))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        read_err(
            path,
            format!("not JSON (expected `reclaimsim cache --json`'s output): {e}"),
        )
    })?;
    if !is_cache_json(&v) {
        return Err(read_err(
            path,
            "not a `reclaimsim cache --json` file: expected an object with a `results` \
             list (or a run or sweep directory)",
        ));
    }
    serde_path_to_error::deserialize(v)
        .map_err(|e| read_err(path, format!("{}: {}", e.path(), e.inner())))
}

/// The curve: a series per policy (in the order the file first names them), points
/// by size.
pub fn chart(c: &CacheJson, file: &str) -> Result<Chart, String> {
    let points: Vec<Point> = match (&c.results, &c.policy, &c.sizes) {
        (Some(r), _, _) => r.clone(),
        (None, Some(policy), Some(sizes)) => sizes
            .iter()
            .map(|s| Point {
                policy: policy.clone(),
                cache_size: s.cache_size,
                miss_ratio: s.miss_ratio,
            })
            .collect(),
        _ => return Err("no `results` list".into()),
    };
    if points.is_empty() {
        return Err("`results` is empty: no curve to draw".into());
    }
    if let Some((i, p)) = points
        .iter()
        .enumerate()
        .find(|(_, p)| !(0.0..=1.0).contains(&p.miss_ratio))
    {
        return Err(format!(
            "results[{i}].miss_ratio: {} is not a ratio (expected 0 to 1)",
            p.miss_ratio
        ));
    }
    let mut series: Vec<Series> = Vec::new();
    for p in &points {
        let xy = (p.cache_size as f64, p.miss_ratio);
        match series.iter_mut().find(|s| s.name == p.policy) {
            Some(s) => s.points.push(xy),
            None => series.push(Series::new(&p.policy, vec![xy])),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let objects = match c.size_unit.as_deref() {
        Some("objects") => true,
        Some("bytes") => false,
        Some(other) => {
            return Err(format!(
                "size_unit: `{other}` (expected \"bytes\" or \"objects\")"
            ))
        }
        None => c.ignore_obj_size,
    };
    let (lo, hi) = points.iter().fold((u64::MAX, 0), |(lo, hi), p| {
        (lo.min(p.cache_size), hi.max(p.cache_size))
    });
    let log = lo > 0 && hi as f64 / lo as f64 >= LOG_SPAN;
    let quantity = if objects {
        Quantity::Count("objects".into())
    } else {
        Quantity::Bytes
    };
    let scale = if log {
        Scale::Log
    } else {
        Scale::Values {
            integer: objects && hi < 1000,
        }
    };
    let mut y = Axis::new("miss ratio", Quantity::Plain, Scale::Linear);
    y.range = Some((0.0, 1.0));
    let trace = Path::new(&c.trace)
        .file_name()
        .map_or_else(|| c.trace.clone(), |n| n.to_string_lossy().into_owned());
    Ok(Chart {
        file: file.to_string(),
        title: format!("Miss ratio curve: {trace}"),
        x: Axis::new("cache size", quantity, scale),
        y,
        series,
        auto_log_y: false,
        markers: true,
        legend_title: Some("policy".into()),
    })
}

/// Draws the curve of the cache JSON `path` into plots/ beside it; returns the SVG
/// and PNG written.
pub fn plot_file(path: &Path) -> Result<[PathBuf; 2], PlotError> {
    let c = read(path)?;
    let stem = path
        .file_stem()
        .map_or_else(|| "cache".into(), |s| s.to_string_lossy().into_owned());
    let chart = chart(&c, &format!("{stem}-mrc")).map_err(|e| read_err(path, e))?;
    let out = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join("plots"),
        _ => PathBuf::from("plots"),
    };
    std::fs::create_dir_all(&out).map_err(|e| read_err(&out, e))?;
    write_svg_png(&out, &chart.file, || draw_svg(&chart))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_json(v: serde_json::Value) -> CacheJson {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_series_per_policy_sorted_by_size() {
        let c = cache_json(serde_json::json!({
            "trace": "/traces/w.oracleGeneral", "size_unit": "bytes",
            "results": [
                {"policy": "lru", "cache_size": 4096, "miss_ratio": 0.5},
                {"policy": "lru", "cache_size": 1024, "miss_ratio": 0.9},
                {"policy": "arc", "cache_size": 1024, "miss_ratio": 0.8},
            ],
        }));
        let ch = chart(&c, "w-mrc").unwrap();
        assert_eq!(ch.title, "Miss ratio curve: w.oracleGeneral");
        assert_eq!(ch.series.len(), 2);
        assert_eq!(ch.series[0].name, "lru");
        assert_eq!(ch.series[0].points, [(1024.0, 0.9), (4096.0, 0.5)]);
        assert_eq!(ch.series[1].name, "arc");
        assert_eq!(ch.x.quantity, Quantity::Bytes);
        assert_eq!(ch.x.scale, Scale::Values { integer: false });
        assert_eq!(ch.y.range, Some((0.0, 1.0)));
        assert!(ch.markers);
    }

    #[test]
    fn sizes_100x_apart_get_a_log_axis_and_old_files_are_read() {
        let c = cache_json(serde_json::json!({
            "trace": "t.txt", "ignore_obj_size": true, "policy": "fifo",
            "sizes": [
                {"cache_size": 10, "miss_ratio": 0.9, "misses": 9},
                {"cache_size": 1000, "miss_ratio": 0.1, "misses": 1},
            ],
        }));
        let ch = chart(&c, "t-mrc").unwrap();
        assert_eq!(ch.series.len(), 1);
        assert_eq!(ch.series[0].name, "fifo");
        assert_eq!(ch.x.scale, Scale::Log);
        assert_eq!(ch.x.quantity, Quantity::Count("objects".into()));
    }

    #[test]
    fn bad_curves_are_errors() {
        let bad = |v| chart(&cache_json(v), "x").unwrap_err();
        let e = bad(serde_json::json!({"trace": "t", "results": []}));
        assert!(e.contains("empty"), "{e}");
        let e = bad(serde_json::json!({"trace": "t", "results": [
            {"policy": "lru", "cache_size": 1, "miss_ratio": 1.5}]}));
        assert_eq!(
            e,
            "results[0].miss_ratio: 1.5 is not a ratio (expected 0 to 1)"
        );
        let e = bad(
            serde_json::json!({"trace": "t", "size_unit": "pages", "results": [
            {"policy": "lru", "cache_size": 1, "miss_ratio": 0.5}]}),
        );
        assert!(e.contains("size_unit: `pages`"), "{e}");
    }
}
