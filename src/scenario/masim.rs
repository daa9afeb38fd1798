//! masim's access-pattern configuration (github.com/sjp38/masim, `configs/*.cfg`), the
//! format DAMON's own evaluations describe workloads in:
//!
//! ```text
//! # lines starting with '#' are comments
//! name, size-in-bytes              <- one memory region per line
//!
//! phase name                       <- a paragraph per phase, blank-line separated
//! time-in-ms
//! region, random (0|1), stride-in-bytes, probability[, ro|wo|rw]
//! ```
//!
//! In a phase masim repeatedly picks one access line by its probability (weights out
//! of their sum) and does a batch of 128 Ki accesses as it says: sequential with the
//! stride (wrapping at the region's end) or at random offsets; writes unless the line
//! says `ro` or `rw`.

use serde::{Deserialize, Serialize};

/// masim's batch: accesses per pick of an access line.
pub const MASIM_BATCH: u64 = 128 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MasimConfig {
    pub regions: Vec<MasimRegion>,
    pub phases: Vec<MasimPhase>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MasimRegion {
    pub name: String,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MasimPhase {
    pub name: String,
    pub time_ms: u64,
    pub accesses: Vec<MasimAccess>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RwMode {
    ReadOnly,
    WriteOnly,
    ReadWrite,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MasimAccess {
    /// Index into `regions`.
    pub region: usize,
    pub random: bool,
    pub stride: u64,
    pub probability: u64,
    pub rw: RwMode,
}

/// Parses a masim configuration; an error names the 1-based line.
pub fn parse(text: &str) -> Result<MasimConfig, (usize, String)> {
    // Comment lines go entirely (masim's rm_comments), so they do not separate
    // paragraphs; the rest splits at blank lines.
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.starts_with('#'))
        .collect();
    let mut paragraphs: Vec<Vec<(usize, &str)>> = Vec::new();
    let mut cur = Vec::new();
    for (n, l) in lines {
        if l.trim().is_empty() {
            if !cur.is_empty() {
                paragraphs.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push((n, l));
        }
    }
    if !cur.is_empty() {
        paragraphs.push(cur);
    }
    let mut paras = paragraphs.into_iter();
    let region_lines = paras.next().ok_or((
        1,
        "no memory regions (the first paragraph: `name, size` lines)".to_string(),
    ))?;
    let number = |n: usize, what: &str, s: &str| -> Result<u64, (usize, String)> {
        s.trim().parse::<u64>().map_err(|_| {
            (
                n,
                format!(
                    "{what}: expected a non-negative integer, got `{}`",
                    s.trim()
                ),
            )
        })
    };
    let mut regions: Vec<MasimRegion> = Vec::new();
    for (n, l) in region_lines {
        let f: Vec<&str> = l.split(',').collect();
        if f.len() != 2 {
            return Err((n, format!("a region line is `name, size`, got `{l}`")));
        }
        let name = f[0].trim().to_string();
        if regions.iter().any(|r| r.name == name) {
            return Err((n, format!("region `{name}` is defined twice")));
        }
        let size = number(n, "region size", f[1])?;
        if !(4096..=1 << 40).contains(&size) {
            return Err((
                n,
                format!("region `{name}`: size must be 4096 bytes to 1 TiB, got {size}"),
            ));
        }
        regions.push(MasimRegion { name, size });
    }
    let mut phases = Vec::new();
    for p in paras {
        if p.len() < 3 {
            return Err((
                p[0].0,
                "a phase is a name line, a time line (ms) and at least one access line".into(),
            ));
        }
        let name = p[0].1.trim().to_string();
        let time_ms = number(p[1].0, "phase time (ms)", p[1].1)?;
        let mut accesses = Vec::new();
        for &(n, l) in &p[2..] {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            if f.len() != 4 && f.len() != 5 {
                return Err((
                    n,
                    format!("an access line is `region, random, stride, probability[, ro|wo|rw]`, got `{l}`"),
                ));
            }
            let region = regions
                .iter()
                .position(|r| r.name == f[0])
                .ok_or((n, format!("no region named `{}`", f[0])))?;
            let random = match f[1] {
                "0" => false,
                "1" => true,
                other => return Err((n, format!("random: expected 0 or 1, got `{other}`"))),
            };
            let stride = number(n, "stride", f[2])?;
            if !random && stride == 0 {
                return Err((n, "stride: a sequential access needs a stride > 0".into()));
            }
            let probability = number(n, "probability", f[3])?;
            let rw = match f.get(4).copied() {
                None | Some("wo") => RwMode::WriteOnly,
                Some("ro") => RwMode::ReadOnly,
                Some("rw") => RwMode::ReadWrite,
                Some(other) => {
                    return Err((n, format!("rw mode: expected ro, wo or rw, got `{other}`")))
                }
            };
            accesses.push(MasimAccess {
                region,
                random,
                stride,
                probability,
                rw,
            });
        }
        if accesses.iter().all(|a| a.probability == 0) {
            return Err((p[0].0, format!("phase `{name}`: every probability is 0")));
        }
        phases.push(MasimPhase {
            name,
            time_ms,
            accesses,
        });
    }
    if phases.is_empty() {
        return Err((1, "no phases (paragraphs after the regions)".into()));
    }
    Ok(MasimConfig { regions, phases })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_regions_phases_and_modes() {
        let text = "#regions\na, 8192\nb, 12288\n\n#phases\nwarm up\n100\na, 0, 4096, 1\n\
                    b, 1, 4096, 3, ro\n\nlast\n50\nb, 0, 8192, 1, rw\n";
        let c = parse(text).unwrap();
        assert_eq!(c.regions.len(), 2);
        assert_eq!(
            (c.regions[1].name.as_str(), c.regions[1].size),
            ("b", 12288)
        );
        assert_eq!(c.phases.len(), 2);
        assert_eq!(
            (c.phases[0].name.as_str(), c.phases[0].time_ms),
            ("warm up", 100)
        );
        assert_eq!(
            c.phases[0].accesses[1],
            MasimAccess {
                region: 1,
                random: true,
                stride: 4096,
                probability: 3,
                rw: RwMode::ReadOnly
            }
        );
        assert_eq!(c.phases[1].accesses[0].rw, RwMode::ReadWrite);
        assert_eq!(c.phases[0].accesses[0].rw, RwMode::WriteOnly);
    }

    #[test]
    fn errors_name_the_line() {
        let bad = [
            (
                "a, 8192\n\np\n10\nz, 0, 4096, 1\n",
                5,
                "no region named `z`",
            ),
            ("a, 8192\n\np\nten\na, 0, 4096, 1\n", 4, "phase time"),
            ("a 8192\n\np\n10\na, 0, 4096, 1\n", 1, "`name, size`"),
            ("a, 8192\n\np\n10\na, 2, 4096, 1\n", 5, "random"),
            ("a, 8192\n\np\n10\na, 0, 4096, 1, xx\n", 5, "rw mode"),
            ("a, 8192\n", 1, "no phases"),
        ];
        for (text, line, msg) in bad {
            let (l, m) = parse(text).unwrap_err();
            assert_eq!(l, line, "{m}");
            assert!(m.contains(msg), "{m}");
        }
    }
}
