//! Charts of a DAMON record (`--damon-record`'s DIR/damon.data): an access heatmap
//! per monitored target (time across, address up, colour the access frequency, as
//! `damo report heatmap` draws it) and the working-set size over time (`damo report
//! wss`: the bytes of regions seen accessed at least once in a snapshot).

use super::plot::{unit_for, Axis, Chart, PlotError, Quantity, Scale, Series};
use crate::trace::damo::{read_record, Record};
use plotters::prelude::*;
use std::path::Path;

/// A heatmap's cells: `cells[t][a]` is the mean access frequency (% of the samples
/// of an aggregation window that found the region accessed) over time bin `t` and
/// address bin `a`, weighted by how much of the cell each region covers; NaN where
/// nothing was monitored. Addresses are offsets into the monitored space with the
/// gaps between monitored ranges (unmapped address space) closed.
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    pub file: String,
    pub title: String,
    /// The time axis: from the first snapshot's start to the last one's end (ns).
    pub time_ns: (u64, u64),
    /// The address axis: 0 to this many bytes of monitored space.
    pub space_bytes: u64,
    /// The lowest monitored address (where offset 0 is).
    pub first_addr: u64,
    pub cells: Vec<Vec<f64>>,
}

/// The monitored ranges of a record: the union of every snapshot's regions.
fn monitored_ranges(rec: &Record) -> Vec<(u64, u64)> {
    let mut all: Vec<(u64, u64)> = rec
        .snapshots
        .iter()
        .flat_map(|s| s.regions.iter().map(|r| (r.start, r.end)))
        .filter(|(s, e)| s < e)
        .collect();
    all.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in all {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The heatmap of `rec` in `nt` time bins by `na` address bins.
pub fn heatmap(rec: &Record, nt: usize, na: usize) -> Option<Heatmap> {
    let ranges = monitored_ranges(rec);
    let space: u64 = ranges.iter().map(|(s, e)| e - s).sum();
    let t0 = rec.snapshots.iter().map(|s| s.start_time).min()?;
    let t1 = rec.snapshots.iter().map(|s| s.end_time).max()?;
    if space == 0 || t1 <= t0 || nt == 0 || na == 0 {
        return None;
    }
    // Offset of each range's start in the gap-closed space.
    let mut base = Vec::with_capacity(ranges.len());
    let mut acc = 0;
    for (s, e) in &ranges {
        base.push(acc);
        acc += e - s;
    }
    let offset = |addr: u64| -> f64 {
        let i = ranges
            .partition_point(|(s, _)| *s <= addr)
            .saturating_sub(1);
        (base[i] + addr.saturating_sub(ranges[i].0)) as f64
    };
    let max_samples = rec.intervals.samples_per_aggr() as f64;
    let (dt, da) = ((t1 - t0) as f64 / nt as f64, space as f64 / na as f64);
    let mut sum = vec![vec![0.0f64; na]; nt];
    let mut weight = vec![vec![0.0f64; na]; nt];
    for snap in &rec.snapshots {
        let (ts, te) = ((snap.start_time - t0) as f64, (snap.end_time - t0) as f64);
        if te <= ts {
            continue;
        }
        let (bt0, bt1) = ((ts / dt) as usize, ((te / dt).ceil() as usize).min(nt));
        for r in &snap.regions {
            if r.end <= r.start {
                continue;
            }
            let freq = r.nr_accesses.samples as f64 / max_samples * 100.0;
            let (a0, a1) = (offset(r.start), offset(r.start) + (r.end - r.start) as f64);
            let (ba0, ba1) = ((a0 / da) as usize, ((a1 / da).ceil() as usize).min(na));
            for (bt, (srow, wrow)) in sum.iter_mut().zip(weight.iter_mut()).enumerate() {
                if bt < bt0 || bt >= bt1 {
                    continue;
                }
                let ot = (te.min((bt + 1) as f64 * dt) - ts.max(bt as f64 * dt)).max(0.0);
                for ba in ba0..ba1 {
                    let oa = (a1.min((ba + 1) as f64 * da) - a0.max(ba as f64 * da)).max(0.0);
                    srow[ba] += freq * ot * oa;
                    wrow[ba] += ot * oa;
                }
            }
        }
    }
    let cells = sum
        .iter()
        .zip(&weight)
        .map(|(s, w)| {
            s.iter()
                .zip(w)
                .map(|(s, w)| if *w > 0.0 { s / w } else { f64::NAN })
                .collect()
        })
        .collect();
    Some(Heatmap {
        file: format!("damon-heatmap-{}", rec.target_id),
        title: format!("DAMON access heatmap, target {}", rec.target_id),
        time_ns: (t0, t1),
        space_bytes: space,
        first_addr: ranges[0].0,
        cells,
    })
}

/// The working-set size over time: per snapshot, the bytes of the regions seen
/// accessed (at least one sample), one line per target, at each snapshot's end.
pub fn wss_chart(records: &[Record]) -> Chart {
    let t0 = records
        .iter()
        .flat_map(|r| r.snapshots.iter().map(|s| s.start_time))
        .min()
        .unwrap_or(0);
    let series = records
        .iter()
        .map(|rec| {
            let points = rec
                .snapshots
                .iter()
                .map(|s| {
                    let wss: u64 = s
                        .regions
                        .iter()
                        .filter(|r| r.nr_accesses.samples >= 1)
                        .map(|r| r.end.saturating_sub(r.start))
                        .sum();
                    ((s.end_time - t0) as f64, wss as f64)
                })
                .collect();
            Series::new(&format!("target {}", rec.target_id), points)
        })
        .collect();
    Chart {
        file: "damon-wss".into(),
        title: "DAMON working-set size".into(),
        x: Axis::new("time", Quantity::Nanos, Scale::Linear),
        y: Axis::new("working set", Quantity::Bytes, Scale::Linear),
        series,
        auto_log_y: false,
        markers: false,
        legend_title: None,
    }
}

const W: u32 = 960;
const H: u32 = 540;

/// The colour of `pct` (0 to 100 % of samples), white to dark red through yellow
/// and orange (ColorBrewer's YlOrRd ends).
pub fn colour(pct: f64) -> RGBColor {
    const STOPS: [(f64, (u8, u8, u8)); 4] = [
        (0.0, (255, 255, 229)),
        (0.33, (254, 196, 79)),
        (0.66, (236, 112, 20)),
        (1.0, (102, 37, 6)),
    ];
    let x = (pct / 100.0).clamp(0.0, 1.0);
    let i = STOPS.iter().rposition(|(p, _)| *p <= x).unwrap_or(0).min(2);
    let ((p0, c0), (p1, c1)) = (STOPS[i], STOPS[i + 1]);
    let f = (x - p0) / (p1 - p0);
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    RGBColor(mix(c0.0, c1.0), mix(c0.1, c1.1), mix(c0.2, c1.2))
}

/// The heatmap as SVG: the cells, time (s) across, the monitored space (in a unit
/// that suits its size) up, and a colour bar.
pub fn draw_svg(h: &Heatmap) -> Result<String, String> {
    super::plot::register_font()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let body = root
            .titled(&h.title, ("sans-serif", 26))
            .map_err(|e| e.to_string())?;
        let (plot_side, bar_side) = body.split_horizontally(W - 110);
        let secs = (h.time_ns.1 - h.time_ns.0) as f64 / 1e9;
        let (unit_bytes, unit) = unit_for(&Quantity::Bytes, h.space_bytes as f64);
        let top = h.space_bytes as f64 / unit_bytes;
        let mut chart = ChartBuilder::on(&plot_side)
            .margin(10)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..secs, 0.0..top)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("time (s)")
            .y_desc(format!(
                "address ({unit} from {:#x}, gaps closed)",
                h.first_addr
            ))
            .axis_desc_style(("sans-serif", 18))
            .label_style(("sans-serif", 16))
            .draw()
            .map_err(|e| e.to_string())?;
        let nt = h.cells.len();
        let na = h.cells.first().map_or(0, |r| r.len());
        let (dx, dy) = (secs / nt as f64, top / na as f64);
        let rects = h.cells.iter().enumerate().flat_map(|(t, row)| {
            row.iter()
                .enumerate()
                .filter(|(_, v)| !v.is_nan())
                .map(move |(a, v)| {
                    let (x0, y0) = (t as f64 * dx, a as f64 * dy);
                    Rectangle::new([(x0, y0), (x0 + dx, y0 + dy)], colour(*v).filled())
                })
        });
        chart.draw_series(rects).map_err(|e| e.to_string())?;
        // The colour bar: 0 to 100 % of samples, bottom to top.
        let mut bar = ChartBuilder::on(&bar_side)
            .margin_top(10)
            .margin_bottom(60)
            .margin_right(10)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..1.0, 0.0..100.0)
            .map_err(|e| e.to_string())?;
        bar.configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_desc("accessed, % of samples")
            .axis_desc_style(("sans-serif", 14))
            .label_style(("sans-serif", 14))
            .y_labels(5)
            .draw()
            .map_err(|e| e.to_string())?;
        bar.draw_series((0..100).map(|p| {
            let p = p as f64;
            Rectangle::new([(0.0, p), (1.0, p + 1.0)], colour(p + 0.5).filled())
        }))
        .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// Time bins and address bins of the heatmaps `plot` draws.
pub const HEATMAP_BINS: (usize, usize) = (240, 160);

/// The DAMON charts of a run directory with a damon.data: a heatmap per target,
/// then the working-set chart.
pub fn charts(path: &Path) -> Result<(Vec<Heatmap>, Chart), PlotError> {
    let records = read_record(path)?;
    let maps = records
        .iter()
        .filter_map(|r| heatmap(r, HEATMAP_BINS.0, HEATMAP_BINS.1))
        .collect();
    Ok((maps, wss_chart(&records)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::damo::{Intervals, RecordRegion, Samples, Snapshot};

    fn region(start: u64, end: u64, samples: u64) -> RecordRegion {
        RecordRegion {
            start,
            end,
            nr_accesses: Samples { samples },
        }
    }

    const MIB: u64 = 1 << 20;

    /// Two 100 ms snapshots of three 4 MiB regions: A = [0, 4M) and B = [4M, 8M)
    /// swap from all samples (20 of 20) to none, C = [100M, 104M) past a gap stays at
    /// half (10 of 20).
    fn record() -> Record {
        let snap = |i: u64, a, b| Snapshot {
            start_time: 1_000_000_000 + i * 100_000_000,
            end_time: 1_000_000_000 + (i + 1) * 100_000_000,
            regions: vec![
                region(0, 4 * MIB, a),
                region(4 * MIB, 8 * MIB, b),
                region(100 * MIB, 104 * MIB, 10),
            ],
        };
        Record {
            target_id: 7,
            intervals: Intervals {
                sample_us: 5000,
                aggr_us: 100_000,
            },
            snapshots: vec![snap(0, 20, 0), snap(1, 0, 20)],
        }
    }

    #[test]
    fn heatmap_cells_by_hand() {
        let h = heatmap(&record(), 2, 3).unwrap();
        // 12 MiB of monitored space (the 92 MiB gap closed), 200 ms.
        assert_eq!(h.space_bytes, 12 * MIB);
        assert_eq!(h.time_ns, (1_000_000_000, 1_200_000_000));
        assert_eq!(h.first_addr, 0);
        assert_eq!(
            h.cells,
            vec![vec![100.0, 0.0, 50.0], vec![0.0, 100.0, 50.0]]
        );
        // One time bin: A and B each average 50 % over the 200 ms, C is 50 %.
        let h = heatmap(&record(), 1, 4).unwrap();
        assert_eq!(h.cells, vec![vec![50.0, 50.0, 50.0, 50.0]]);
        // In the first 100 ms, bins of 3 MiB: [0, 3M) all A (100 %); [3M, 6M) 1 MiB
        // of A and 2 MiB of B (0 %): 33.3 %; [6M, 9M) 2 MiB of B and 1 MiB of C
        // (50 %): 16.7 %; [9M, 12M) all C.
        let h = heatmap(&record(), 2, 4).unwrap();
        let want = [100.0, 100.0 / 3.0, 50.0 / 3.0, 50.0];
        for (got, want) in h.cells[0].iter().zip(want) {
            assert!((got - want).abs() < 1e-9, "{:?}", h.cells[0]);
        }
    }

    #[test]
    fn the_drawn_heatmap_has_its_axes_cells_and_colour_bar() {
        let h = heatmap(&record(), 2, 3).unwrap();
        let svg = draw_svg(&h).unwrap();
        assert!(svg.contains("time (s)"), "x axis");
        assert!(
            svg.contains("address (MiB from 0x0, gaps closed)"),
            "y axis"
        );
        assert!(svg.contains("accessed, % of samples"), "colour bar");
        // 6 cells, and the colour bar's 100 steps, each a rectangle in its colour:
        // the hottest cells (100 %) in the darkest.
        let dark = RGBColor(102, 37, 6);
        let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", dark.0, dark.1, dark.2);
        assert_eq!(svg.matches(&fill).count(), 2, "two cells at 100 %");
        assert!(svg.matches("<rect").count() >= 6 + 100);
        // The time axis runs 0 to 0.2 s.
        // Tick labels: the address axis runs 0 to 12 MiB, time 0 to 0.2 s.
        let labels: Vec<&str> = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| t.split_once('>').and_then(|(_, r)| r.split_once("</text>")))
            .map(|(text, _)| text.trim())
            .collect();
        for tick in ["0.0", "12.0", "0.2", "100.0"] {
            assert!(labels.contains(&tick), "{tick} in {labels:?}");
        }
    }

    #[test]
    fn wss_is_the_accessed_regions_bytes() {
        let c = wss_chart(&[record()]);
        assert_eq!(c.series.len(), 1);
        assert_eq!(c.series[0].name, "target 7");
        // A (or B) and C accessed in each snapshot: 8 MiB, at 100 and 200 ms.
        let mib8 = (8 * MIB) as f64;
        assert_eq!(c.series[0].points, vec![(1e8, mib8), (2e8, mib8)]);
        assert_eq!(c.x.quantity, Quantity::Nanos);
        assert_eq!(c.y.quantity, Quantity::Bytes);
    }

    #[test]
    fn the_colour_scale_runs_light_to_dark() {
        let lum = |c: RGBColor| c.0 as u32 + c.1 as u32 + c.2 as u32;
        let mut prev = u32::MAX;
        for p in 0..=100 {
            let l = lum(colour(p as f64));
            assert!(l <= prev, "{p}");
            prev = l;
        }
        assert_eq!(colour(0.0), RGBColor(255, 255, 229));
        assert_eq!(colour(100.0), RGBColor(102, 37, 6));
    }
}
