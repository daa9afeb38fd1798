//! Plain text traces: one request per line, a key (decimal, or hex with `0x`),
//! optionally followed by `r` or `w` (whitespace or a comma between). Blank lines and
//! lines starting with `#` are skipped. Every request has size 1.

use super::Request;
use super::TraceError;
use std::io::BufRead;
use std::path::Path;

/// One parsed line: the key and whether it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub key: u64,
    pub write: bool,
}

/// A page access as a request: one page, no timestamp.
impl From<Access> for Request {
    fn from(a: Access) -> Request {
        Request {
            write: a.write,
            ..Request::new(a.key, 1)
        }
    }
}

/// Parses one line; Ok(None) for a blank or comment line.
pub fn parse_line(line: &str) -> Result<Option<Access>, String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let mut fields = line
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|f| !f.is_empty());
    let k = fields.next().expect("a non-blank line has a field");
    let key = match k.strip_prefix("0x").or_else(|| k.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => k.parse::<u64>(),
    }
    .map_err(|_| format!("`{k}`: expected a page number or address (decimal, or hex with 0x)"))?;
    let write = match fields.next() {
        None | Some("r") | Some("R") => false,
        Some("w") | Some("W") => true,
        Some(other) => return Err(format!("`{other}`: expected `r` or `w` after the key")),
    };
    if let Some(extra) = fields.next() {
        return Err(format!("`{extra}`: expected at most a key and `r`/`w`"));
    }
    Ok(Some(Access { key, write }))
}

/// Streams a text trace's lines as requests.
pub struct Reader<R> {
    lines: super::Lines<R, Access>,
}

impl<R: BufRead> Reader<R> {
    pub fn new(r: R, file: &Path) -> Reader<R> {
        Reader {
            lines: super::Lines::new(r, file, parse_line),
        }
    }

    /// The next access, None at the end.
    pub fn next_access(&mut self) -> Option<Result<Access, TraceError>> {
        self.lines.next_parsed()
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_access().map(|r| r.map(Request::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn read(s: &[u8]) -> Vec<Result<Access, TraceError>> {
        let mut r = Reader::new(s, Path::new("t.txt"));
        std::iter::from_fn(|| r.next_access()).collect()
    }

    #[test]
    fn keys_hex_and_modes() {
        let got: Vec<Access> = read(b"# a comment\n5\n\n0x10 w\n7,r\n  9 W \n")
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let a = |key, write| Access { key, write };
        assert_eq!(got, vec![a(5, false), a(16, true), a(7, false), a(9, true)]);
    }

    #[test]
    fn bad_lines_name_their_line() {
        let e = read(b"1\n2\nzz\n3\n");
        assert_eq!(e.len(), 3, "the read stops at the bad line");
        let msg = e[2].clone().unwrap_err().to_string();
        assert!(
            msg.starts_with("t.txt:3: `zz`: expected a page number"),
            "{msg}"
        );
        let msg = read(b"1 x\n")[0].clone().unwrap_err().to_string();
        assert!(msg.contains("t.txt:1: `x`: expected `r` or `w`"), "{msg}");
        let msg = read(b"1 r 2\n")[0].clone().unwrap_err().to_string();
        assert!(msg.contains("at most a key"), "{msg}");
        let msg = read(b"1\n\xff\xfe\n")[1].clone().unwrap_err().to_string();
        assert!(msg.contains("t.txt:2: not UTF-8 text"), "{msg}");
        // A key beyond u64.
        assert!(read(b"99999999999999999999999\n")[0].is_err());
    }

    proptest! {
        #[test]
        fn write_then_read_is_identity(acc in proptest::collection::vec((any::<u64>(), any::<bool>(), any::<bool>()), 0..50)) {
            let mut text = String::new();
            for &(k, w, hex) in &acc {
                if hex { text += &format!("{k:#x}") } else { text += &k.to_string() }
                text += if w { " w\n" } else { "\n" };
            }
            let back: Vec<(u64, bool)> = read(text.as_bytes()).into_iter()
                .map(|r| { let a = r.unwrap(); (a.key, a.write) }).collect();
            let want: Vec<(u64, bool)> = acc.iter().map(|&(k, w, _)| (k, w)).collect();
            prop_assert_eq!(back, want);
        }
    }
}
