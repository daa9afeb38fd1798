//! valgrind lackey `--trace-mem=yes` output: a line per memory access, `I` (an
//! instruction fetch), ` L` (load), ` S` (store) or ` M` (modify: load and store),
//! then `ADDRESS,SIZE` in hex and decimal. Lines from valgrind itself (`==PID==`) are
//! skipped. An access becomes a request for each 4 KiB page it touches (two when it
//! crosses a page boundary), a write for S and M.

use super::text::Access;
use super::Request;
use super::TraceError;
use std::io::BufRead;
use std::path::Path;

pub const PAGE_SHIFT: u32 = 12;

/// One parsed line: the pages it touches (first, and the next if it crosses into it)
/// and whether it writes. Ok(None) for valgrind's own lines and blank ones.
pub fn parse_line(line: &str) -> Result<Option<(Access, Option<Access>)>, String> {
    if line.trim().is_empty() || line.starts_with("==") || line.starts_with("--") {
        return Ok(None);
    }
    let t = line.trim_start();
    // By character: a first byte of a multi-byte character is not a kind either.
    let first = t.chars().next().map_or(1, char::len_utf8);
    let (kind, rest) = t.split_at(first);
    let write = match kind {
        "I" | "L" => false,
        "S" | "M" => true,
        _ => {
            return Err(format!(
                "`{}`: expected an access kind I, L, S or M",
                line.trim()
            ))
        }
    };
    let (addr, size) = rest
        .trim()
        .split_once(',')
        .ok_or_else(|| format!("`{}`: expected ADDRESS,SIZE after the kind", line.trim()))?;
    let addr = u64::from_str_radix(addr.trim(), 16)
        .map_err(|_| format!("`{addr}`: expected a hex address"))?;
    let size: u64 = size
        .trim()
        .parse()
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(|| format!("`{}`: expected a size in bytes (> 0)", size.trim()))?;
    let first = addr >> PAGE_SHIFT;
    let last = addr.saturating_add(size - 1) >> PAGE_SHIFT;
    let a = |key| Access { key, write };
    Ok(Some((a(first), (last != first).then(|| a(first + 1)))))
}

/// Streams a lackey trace's accesses as page requests.
pub struct Reader<R> {
    lines: super::Lines<R, (Access, Option<Access>)>,
    pending: Option<Access>,
}

impl<R: BufRead> Reader<R> {
    pub fn new(r: R, file: &Path) -> Reader<R> {
        Reader {
            lines: super::Lines::new(r, file, parse_line),
            pending: None,
        }
    }

    pub fn next_access(&mut self) -> Option<Result<Access, TraceError>> {
        if let Some(a) = self.pending.take() {
            return Some(Ok(a));
        }
        self.lines.next_parsed().map(|r| {
            r.map(|(a, next)| {
                self.pending = next;
                a
            })
        })
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

    fn read(s: &str) -> Vec<Result<Access, TraceError>> {
        let mut r = Reader::new(s.as_bytes(), Path::new("l.out"));
        std::iter::from_fn(|| r.next_access()).collect()
    }

    #[test]
    fn lackey_lines_become_page_accesses() {
        let t = "==123== Lackey, an example Valgrind tool\n\
                 I  04016c5a,3\n \
                 L 04222cac,4\n \
                 S 7ff000398,8\n \
                 M 04222ffe,4\n\
                 ==123== \n";
        let got: Vec<(u64, bool)> = read(t)
            .into_iter()
            .map(|a| {
                let a = a.unwrap();
                (a.key, a.write)
            })
            .collect();
        // 0x04016c5a >> 12 = 0x4016; 0x04222cac → 0x4222; 0x7ff000398 → 0x7ff000;
        // 0x04222ffe + 3 = 0x04223001 crosses into page 0x4223: two writes.
        assert_eq!(
            got,
            vec![
                (0x4016, false),
                (0x4222, false),
                (0x7ff000, true),
                (0x4222, true),
                (0x4223, true)
            ]
        );
    }

    #[test]
    fn bad_lines_name_their_line() {
        let e = read("I  0400,3\n X 0400,1\n");
        assert_eq!(e.len(), 2);
        let m = e[1].clone().unwrap_err().to_string();
        assert!(
            m.starts_with("l.out:2: `X 0400,1`: expected an access kind"),
            "{m}"
        );
        let m = read(" L zz,4\n")[0].clone().unwrap_err().to_string();
        assert!(m.contains("`zz`: expected a hex address"), "{m}");
        let m = read(" L 0400\n")[0].clone().unwrap_err().to_string();
        assert!(m.contains("expected ADDRESS,SIZE"), "{m}");
        let m = read(" L 0400,0\n")[0].clone().unwrap_err().to_string();
        assert!(m.contains("expected a size in bytes"), "{m}");
        // Truncated mid-line, a multi-byte first character, bytes that are not text.
        let m = read(" L 04")[0].clone().unwrap_err().to_string();
        assert!(m.contains("expected ADDRESS,SIZE"), "{m}");
        let m = read("é 0400,1\n")[0].clone().unwrap_err().to_string();
        assert!(m.contains("expected an access kind"), "{m}");
        let mut r = Reader::new(&b" L 0400,4\n\xff\xfe\n"[..], Path::new("l.out"));
        let got: Vec<_> = std::iter::from_fn(|| r.next_access()).collect();
        let m = got[1].clone().unwrap_err().to_string();
        assert_eq!(m, "l.out:2: not UTF-8 text: expected a trace line");
    }

    proptest::proptest! {
        /// Lines written as lackey prints them read back as the pages each access
        /// covers, loads as reads and stores/modifies as writes.
        #[test]
        fn written_accesses_read_back(acc in proptest::collection::vec(
            (0usize..4, 0u64..1 << 47, 1u64..64), 0..40)) {
            let mut text = String::from("==1== Lackey\n");
            let mut want = Vec::new();
            for &(k, addr, size) in &acc {
                let kind = ["I", "L", "S", "M"][k];
                text.push_str(&format!("{}{kind} {addr:08x},{size}\n", if k == 0 { "" } else { " " }));
                for page in addr >> 12..=(addr + size - 1) >> 12 {
                    want.push((page, k >= 2));
                }
            }
            let got: Vec<(u64, bool)> = read(&text)
                .into_iter()
                .map(|a| a.map(|a| (a.key, a.write)).unwrap())
                .collect();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
