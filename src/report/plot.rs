//! `reclaimsim plot`: charts of a run or a sweep, as SVG (plotters) and PNG (the SVG
//! rendered by resvg with an embedded DejaVu font, so no system fonts are needed).
//!
//! A run directory (results.json + timeseries.csv) gets memory by type over time, scan
//! and steal rates over time, PSI over time and the workloads' latency CDFs. A sweep
//! directory (sweep.csv) gets one chart per metric against the first swept key, one
//! line per combination of the other keys.

use super::results::Results;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error(
        "{0}: not a run directory (results.json + timeseries.csv) or a sweep directory (sweep.csv)"
    )]
    NotARun(PathBuf),
    #[error("{path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("drawing {path}: {message}")]
    Draw { path: PathBuf, message: String },
}

const W: u32 = 960;
const H: u32 = 540;

/// One line of a chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A line chart: what every plot here is.
pub struct Chart {
    pub file: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub series: Vec<Series>,
}

/// Writes the charts for `dir` into `dir/plots/`; returns the files written.
pub fn plot_dir(dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let charts = if dir.join("sweep.csv").is_file() {
        sweep_charts(&read_csv(&dir.join("sweep.csv"))?)
    } else if dir.join("results.json").is_file() && dir.join("timeseries.csv").is_file() {
        let path = dir.join("results.json");
        let text = std::fs::read_to_string(&path).map_err(|e| read_err(&path, e))?;
        let results: Results = serde_json::from_str(&text).map_err(|e| read_err(&path, e))?;
        run_charts(&read_csv(&dir.join("timeseries.csv"))?, &results)
    } else {
        return Err(PlotError::NotARun(dir.to_path_buf()));
    };
    let out = dir.join("plots");
    std::fs::create_dir_all(&out).map_err(|e| read_err(&out, e))?;
    let mut written = Vec::new();
    for c in &charts {
        let svg_path = out.join(format!("{}.svg", c.file));
        let svg = draw_svg(c).map_err(|message| PlotError::Draw {
            path: svg_path.clone(),
            message,
        })?;
        super::write_atomic(&svg_path, svg.as_bytes()).map_err(|e| read_err(&svg_path, e))?;
        let png_path = out.join(format!("{}.png", c.file));
        let png = svg_to_png(&svg).map_err(|message| PlotError::Draw {
            path: png_path.clone(),
            message,
        })?;
        super::write_atomic(&png_path, &png).map_err(|e| read_err(&png_path, e))?;
        written.push(svg_path);
        written.push(png_path);
    }
    Ok(written)
}

fn read_err(path: &Path, e: impl std::fmt::Display) -> PlotError {
    PlotError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// A CSV with a header: (column names, rows of cells).
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Csv {
    fn col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    fn num(&self, row: usize, col: usize) -> Option<f64> {
        self.rows[row].get(col).and_then(|c| c.parse().ok())
    }
}

fn read_csv(path: &Path) -> Result<Csv, PlotError> {
    let text = std::fs::read_to_string(path).map_err(|e| read_err(path, e))?;
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .ok_or_else(|| read_err(path, "empty file"))?
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    Ok(Csv { header, rows })
}

/// The charts of one run.
pub fn run_charts(ts: &Csv, r: &Results) -> Vec<Chart> {
    let time = ts.col("time_s").unwrap_or(0);
    let column = |name: &str, scale: f64| -> Vec<(f64, f64)> {
        let Some(c) = ts.col(name) else {
            return Vec::new();
        };
        (0..ts.rows.len())
            .filter_map(|i| Some((ts.num(i, time)?, ts.num(i, c)? * scale)))
            .collect()
    };
    let sum = |names: &[&str], scale: f64| -> Vec<(f64, f64)> {
        let parts: Vec<Vec<(f64, f64)>> = names.iter().map(|n| column(n, scale)).collect();
        (0..parts[0].len())
            .map(|i| (parts[0][i].0, parts.iter().map(|p| p[i].1).sum()))
            .collect()
    };
    let mib = 4096.0 / (1 << 20) as f64;
    let s = |name: &str, points| Series {
        name: name.to_string(),
        points,
    };
    let memory = Chart {
        file: "memory".into(),
        title: "Memory by type and cgroup".into(),
        x_label: "time (s)".into(),
        y_label: "MiB".into(),
        log_x: false,
        series: [
            s("free", column("nr_free_pages", mib)),
            s("anon", sum(&["nr_inactive_anon", "nr_active_anon"], mib)),
            s("file", sum(&["nr_inactive_file", "nr_active_file"], mib)),
            s("dirty", column("nr_dirty", mib)),
            s("zram pool", column("zram_pool_pages", mib)),
        ]
        .into_iter()
        .chain(
            ts.header
                .iter()
                .filter_map(|h| h.strip_prefix("memory.current:").map(|p| (h, p)))
                .map(|(h, p)| s(&format!("cgroup {p}"), column(h, mib))),
        )
        .collect(),
    };
    let rates = [
        "pgscan_kswapd",
        "pgscan_direct",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "pswpin",
        "pswpout",
        "workingset_refault_anon",
        "workingset_refault_file",
    ];
    let reclaim = Chart {
        file: "reclaim".into(),
        title: "Scan and steal rates".into(),
        x_label: "time (s)".into(),
        y_label: "pages/s".into(),
        log_x: false,
        series: rates
            .iter()
            .map(|n| s(n, column(&format!("{n}_per_s"), 1.0)))
            .collect(),
    };
    let psi = Chart {
        file: "psi".into(),
        title: "Memory pressure (PSI)".into(),
        x_label: "time (s)".into(),
        y_label: "% of time stalled".into(),
        log_x: false,
        series: vec![
            s("some", column("psi_some_pct", 1.0)),
            s("full", column("psi_full_pct", 1.0)),
        ],
    };
    let latency = Chart {
        file: "latency".into(),
        title: "Latency CDF".into(),
        x_label: "latency (us)".into(),
        y_label: "fraction of operations".into(),
        log_x: true,
        series: r
            .workloads
            .iter()
            .filter(|(_, w)| !w.latency_ns.cdf.is_empty())
            .map(|(name, w)| {
                s(
                    name,
                    w.latency_ns
                        .cdf
                        .iter()
                        .map(|&(v, q)| ((v as f64 / 1e3).max(1e-3), q))
                        .collect(),
                )
            })
            .collect(),
    };
    vec![memory, reclaim, psi, latency]
}

/// One chart per metric of a sweep: the metric against the first swept key, a line per
/// combination of the others. sweep.csv puts the swept keys before the metrics; a key
/// is a column whose name is not a results.json path (metrics contain a section name).
pub fn sweep_charts(csv: &Csv) -> Vec<Chart> {
    const ROOTS: [&str; 8] = [
        "vmstat.",
        "workloads.",
        "tasks.",
        "reclaim.",
        "psi.",
        "swap.",
        "zones.",
        "cgroups.",
    ];
    let nkeys = csv
        .header
        .iter()
        .take_while(|h| !ROOTS.iter().any(|r| h.starts_with(r)))
        .count()
        .max(1);
    let mut xs: Vec<String> = csv.rows.iter().map(|r| r[0].clone()).collect();
    // Sizes ("553M", "0") plot as numbers, in MiB.
    let sizes = !xs.iter().all(|x| x.parse::<f64>().is_ok())
        && xs
            .iter()
            .all(|x| crate::scenario::units::parse_size(x).is_ok());
    if sizes {
        xs = xs
            .iter()
            .map(|x| {
                format!(
                    "{}",
                    crate::scenario::units::parse_size(x).unwrap() as f64 / (1 << 20) as f64
                )
            })
            .collect();
    }
    let numeric = xs.iter().all(|x| x.parse::<f64>().is_ok());
    let mut categories: Vec<String> = Vec::new();
    for x in &xs {
        if !categories.contains(x) {
            categories.push(x.clone());
        }
    }
    let row_x = |row: &Vec<String>| -> String {
        if sizes {
            format!(
                "{}",
                crate::scenario::units::parse_size(&row[0]).unwrap() as f64 / (1 << 20) as f64
            )
        } else {
            row[0].clone()
        }
    };
    let x_of = |x: &str| -> f64 {
        if numeric {
            x.parse().unwrap()
        } else {
            categories.iter().position(|c| c == x).unwrap() as f64
        }
    };
    let variant = |row: &Vec<String>| -> String {
        (1..nkeys)
            .map(|k| format!("{}={}", csv.header[k], row[k]))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut charts = Vec::new();
    for m in nkeys..csv.header.len() {
        let mut series: Vec<Series> = Vec::new();
        for (i, row) in csv.rows.iter().enumerate() {
            let Some(y) = csv.num(i, m) else {
                continue;
            };
            let name = variant(row);
            let name = if name.is_empty() {
                csv.header[m].clone()
            } else {
                name
            };
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push((x_of(&row_x(row)), y)),
                None => series.push(Series {
                    name,
                    points: vec![(x_of(&row_x(row)), y)],
                }),
            }
        }
        for s in &mut series {
            s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let x_label = if sizes {
            format!("{} (MiB)", csv.header[0])
        } else if numeric {
            csv.header[0].clone()
        } else {
            format!("{} ({})", csv.header[0], categories.join(", "))
        };
        charts.push(Chart {
            file: format!("sweep-{}", csv.header[m].replace(['.', '/'], "_")),
            title: format!("{} against {}", csv.header[m], csv.header[0]),
            x_label,
            y_label: csv.header[m].clone(),
            log_x: false,
            series,
        });
    }
    charts
}

/// The range of values with a margin, never empty.
fn span(vals: impl Iterator<Item = f64>, floor_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if floor_zero {
        lo = lo.min(0.0);
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    let pad = (hi - lo) * 0.05;
    (
        if floor_zero && lo >= 0.0 {
            lo
        } else {
            lo - pad
        },
        hi + pad,
    )
}

/// Draws a chart as SVG text.
pub fn draw_svg(c: &Chart) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let all = || c.series.iter().flat_map(|s| s.points.iter());
        let (y0, y1) = span(all().map(|p| p.1), true);
        let mut b = ChartBuilder::on(&root);
        b.caption(&c.title, ("sans-serif", 24))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(80);
        let palette = |i: usize| Palette99::pick(i).to_rgba();
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(c.x_label.as_str())
                    .y_desc(c.y_label.as_str())
                    .label_style(("sans-serif", 14))
                    .draw()
                    .map_err(|e| e.to_string())?;
                for (i, s) in c.series.iter().enumerate() {
                    let color = palette(i);
                    chart
                        .draw_series(LineSeries::new(
                            s.points.iter().copied(),
                            color.stroke_width(2),
                        ))
                        .map_err(|e| e.to_string())?
                        .label(s.name.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                        });
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK)
                    .label_font(("sans-serif", 14))
                    .draw()
                    .map_err(|e| e.to_string())?;
            }};
        }
        if c.log_x {
            let (x0, x1) = span(all().map(|p| p.0), false);
            let x0 = all()
                .map(|p| p.0)
                .fold(f64::INFINITY, f64::min)
                .max(1e-3)
                .min(x0.max(1e-3));
            draw!(b
                .build_cartesian_2d((x0..x1.max(x0 * 10.0)).log_scale(), y0..y1)
                .map_err(|e| e.to_string())?);
        } else {
            let (x0, x1) = span(all().map(|p| p.0), false);
            draw!(b
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| e.to_string())?);
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// Renders SVG to PNG with the embedded DejaVu Sans as every font.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, String> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_font_data(dejavu::sans::regular().to_vec());
    db.set_sans_serif_family("DejaVu Sans");
    db.set_serif_family("DejaVu Sans");
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| e.to_string())?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("empty image")?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| e.to_string())
}
