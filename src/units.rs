//! Sizes and times as a scenario writes them: `4K`, `512M`, `16G`; `100ns`, `5ms`, `2s`.
//!
//! Sizes are binary (K = 1024). A bare integer is bytes (sizes) or nanoseconds (times).
//! Bandwidths are sizes per second and may carry a `/s` suffix (`1G/s`).

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Bytes(pub u64);

/// A span of virtual time in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Nanos(pub u64);

pub use crate::mm::page::PAGE_SIZE;

impl Bytes {
    pub fn pages(self) -> u64 {
        self.0 / PAGE_SIZE
    }
}

/// Parses `4K`, `4KiB`, `4KB`, `512M`, `1.5G`, `1G/s`, `4096`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_suffix("/s").unwrap_or(t).trim();
    let (num, unit) = split_number(s, t, "size", "`4K`, `512M`, `16G`")?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" | "KB" | "k" => 1 << 10,
        "M" | "MiB" | "MB" => 1 << 20,
        "G" | "GiB" | "GB" => 1 << 30,
        "T" | "TiB" | "TB" => 1 << 40,
        u => {
            return Err(format!(
                "size `{s}` has unknown unit `{u}` (expected K, M, G or T)"
            ))
        }
    };
    scaled(s, num, mult as f64, "size")
}

/// Parses `100ns`, `10us`, `5ms`, `2s`, `1m`, `1h`, `0`.
pub fn parse_time(s: &str) -> Result<u64, String> {
    let (num, unit) = split_number(s, s.trim(), "time", "`5ms`, `2s`")?;
    let mult: f64 = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        "" if num.parse::<f64>().ok() == Some(0.0) => 1.0,
        "" => {
            return Err(format!(
                "time `{s}` has no unit (expected ns, us, ms, s, m or h)"
            ))
        }
        u => {
            return Err(format!(
                "time `{s}` has unknown unit `{u}` (expected ns, us, ms, s, m or h)"
            ))
        }
    };
    scaled(s, num, mult, "time")
}

/// `t` (the trimmed text of `s`) as its leading number and the unit after it; an
/// error names `what` is wrong and gives `examples`.
fn split_number<'a>(
    s: &str,
    t: &'a str,
    what: &str,
    examples: &str,
) -> Result<(&'a str, &'a str), String> {
    if t.starts_with('-') {
        return Err(format!("{what} `{s}` is negative"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "{what} `{s}` has no number (expected e.g. {examples})"
        ));
    }
    Ok((num, unit))
}

/// `num` × `mult`, rounded; an error if `num` is no number or the product is out of
/// range.
fn scaled(s: &str, num: &str, mult: f64, what: &str) -> Result<u64, String> {
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{what} `{s}` is not a number"))?;
    let x = v * mult;
    if !x.is_finite() || x > u64::MAX as f64 / 2.0 {
        return Err(format!("{what} `{s}` is too large"));
    }
    Ok(x.round() as u64)
}

struct SizeVisitor;
impl de::Visitor<'_> for SizeVisitor {
    type Value = Bytes;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a size such as \"4K\", \"512M\" or \"16G\"")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Bytes, E> {
        parse_size(v).map(Bytes).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Bytes, E> {
        if v < 0 {
            return Err(E::custom(format!("size {v} is negative")));
        }
        Ok(Bytes(v as u64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bytes, E> {
        Ok(Bytes(v))
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SizeVisitor)
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_size(self.0))
    }
}

struct TimeVisitor;
impl de::Visitor<'_> for TimeVisitor {
    type Value = Nanos;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a time such as \"100us\", \"5ms\" or \"2s\"")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Nanos, E> {
        parse_time(v).map(Nanos).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Nanos, E> {
        if v == 0 {
            Ok(Nanos(0))
        } else {
            Err(E::custom(format!(
                "time {v} has no unit (write it as a string such as \"5ms\")"
            )))
        }
    }
}

impl<'de> Deserialize<'de> for Nanos {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TimeVisitor)
    }
}

impl Serialize for Nanos {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_time(self.0))
    }
}

/// The schema of a value written in its own notation, for the scenario key reference
/// (`scenario::keys_doc`): the TOML types it accepts and how it is spelled
/// (`x-format`).
pub fn value_schema(types: &[&str], format: &str) -> schemars::Schema {
    schemars::json_schema!({ "type": types, "x-format": format })
}

/// `schemars::JsonSchema` for a type that serde reads in its own notation (a size, a
/// time, "max"): inlined where used, described by [`value_schema`].
macro_rules! notation_schema {
    ($ty:ident, [$($types:literal),+], $format:literal) => {
        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                $crate::units::value_schema(&[$($types),+], $format)
            }
        }
    };
}
pub(crate) use notation_schema;

notation_schema!(
    Bytes,
    ["string", "integer"],
    "size: bytes, or `4K`, `512M`, `16G` (binary)"
);
notation_schema!(
    Nanos,
    ["string"],
    "time: `100ns`, `50us`, `5ms`, `2s` (0 may be bare)"
);

/// The shortest exact spelling of a size (`4G`, `1536M`, `4097`).
pub fn format_size(b: u64) -> String {
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        if b != 0 && b.is_multiple_of(1u64 << shift) {
            return format!("{}{}", b >> shift, unit);
        }
    }
    format!("{b}")
}

/// The shortest exact spelling of a time (`2s`, `5ms`, `100ns`).
pub fn format_time(ns: u64) -> String {
    for (unit, div) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns != 0 && ns.is_multiple_of(div) {
            return format!("{}{}", ns / div, unit);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("16G"), Ok(16 << 30));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("1G/s"), Ok(1 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("4X").is_err());
        assert!(parse_size("-4G").is_err());
        assert!(parse_size("G").is_err());
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("100ns"), Ok(100));
        assert_eq!(parse_time("10us"), Ok(10_000));
        assert_eq!(parse_time("5ms"), Ok(5_000_000));
        assert_eq!(parse_time("2s"), Ok(2_000_000_000));
        assert_eq!(parse_time("0"), Ok(0));
        assert!(parse_time("5").is_err());
        assert!(parse_time("5 parsecs").is_err());
    }

    #[test]
    fn round_trip_spelling() {
        assert_eq!(format_size(4 << 30), "4G");
        assert_eq!(format_size(1536 << 20), "1536M");
        assert_eq!(format_time(5_000_000), "5ms");
        assert_eq!(format_time(1500), "1500ns");
    }
}
