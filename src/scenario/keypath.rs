//! Dotted key paths (`kernel.vm.swappiness`, `workload[1].size`, `workload.1.size`): parsing
//! and printing them, finding a key's line in the parsed document, and setting a key in a
//! `toml::Value` (used both for `--set` flags and for run-time actions, so both accept the
//! same spellings).

use std::fmt::Write;
use std::ops::Range;
use toml_edit::{Array, ArrayOfTables, Item, Table, TableLike, Value};

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Most segments a key may have. The schema's deepest keys have six; the TOML parser
/// likewise refuses deeper nesting in a file. Setting a key nests a table per segment,
/// and reading a nest thousands deep back would overflow the stack.
pub const MAX_SEGMENTS: usize = 64;

/// A value as results, sweep.csv and point directories spell it (strings without
/// quotes).
pub fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Parses `a.b[1].c`, `a.b.1.c` and keys with dashes (`kernel.vm.page-cluster`). An all-digit
/// segment is an index: no key of the schema is a number.
pub fn parse(key: &str) -> Result<Vec<Seg>, String> {
    let mut segs = Vec::new();
    for part in key.split('.') {
        if segs.len() >= MAX_SEGMENTS {
            return Err(format!(
                "has more than {MAX_SEGMENTS} segments: no scenario key is that deep"
            ));
        }
        let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if name.is_empty() {
            return Err(format!("malformed key `{key}`: empty segment"));
        }
        segs.push(match name.parse() {
            Ok(i) if name.bytes().all(|b| b.is_ascii_digit()) => Seg::Index(i),
            _ => Seg::Key(name.to_string()),
        });
        while !rest.is_empty() {
            let idx = rest
                .strip_prefix('[')
                .and_then(|r| r.split_once(']'))
                .and_then(|(n, r)| Some((n.parse().ok()?, r)));
            let Some((i, r)) = idx else {
                return Err(format!(
                    "malformed key `{key}`: expected `[index]` after `{name}`"
                ));
            };
            segs.push(Seg::Index(i));
            rest = r;
        }
    }
    Ok(segs)
}

/// The canonical spelling: `workload[1].size`; a key that is not a bare TOML key (a
/// quoted `"vm.swappiness"`) in quotes, as the file has it.
pub fn format(segs: &[Seg]) -> String {
    let mut s = String::new();
    for seg in segs {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                let bare = !k.is_empty()
                    && k.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                if bare {
                    s.push_str(k);
                } else {
                    write!(s, "{k:?}").unwrap();
                }
            }
            Seg::Index(i) => write!(s, "[{i}]").unwrap(),
        }
    }
    s
}

/// 1-based line of byte offset `at`.
pub fn line_at(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// A node of the parsed document while walking a path: tables (standard or inline), the
/// two kinds of array, or a plain value that has no children.
enum Node<'a> {
    Table(&'a dyn TableLike),
    Tables(&'a ArrayOfTables),
    Array(&'a Array),
    Leaf,
}

fn item_node(item: &Item) -> Node<'_> {
    match item {
        Item::ArrayOfTables(a) => Node::Tables(a),
        Item::Value(v) => value_node(v),
        _ => item.as_table_like().map_or(Node::Leaf, Node::Table),
    }
}

fn value_node(v: &Value) -> Node<'_> {
    match v {
        Value::Array(a) => Node::Array(a),
        Value::InlineTable(t) => Node::Table(t),
        _ => Node::Leaf,
    }
}

/// The line of the deepest part of `segs` present in the document (so a missing key falls
/// back to its nearest parent; 0 if not even the first segment is there), and whether the
/// whole path was found.
pub fn find_line(root: &Table, text: &str, segs: &[Seg]) -> (usize, bool) {
    let mut node = Node::Table(root);
    let mut line = 0;
    for (n, seg) in segs.iter().enumerate() {
        let found: Option<(Node, Option<Range<usize>>)> = match (node, seg) {
            (Node::Table(t), Seg::Key(k)) => t
                .get_key_value(k)
                .map(|(key, item)| (item_node(item), key.span().or_else(|| item.span()))),
            (Node::Tables(a), Seg::Index(i)) => a.get(*i).map(|t| (Node::Table(t), t.span())),
            (Node::Array(a), Seg::Index(i)) => a.get(*i).map(|v| (value_node(v), v.span())),
            _ => None,
        };
        let Some((next, span)) = found else {
            return (line, false);
        };
        if let Some(span) = span {
            line = line_at(text, span.start);
        }
        node = next;
        if n + 1 == segs.len() {
            return (line, true);
        }
    }
    (line, segs.is_empty())
}

/// Sets `segs` in `root` to `value`. Missing tables on the way are created (the schema then
/// rejects them if they are unknown); array entries are never created.
pub fn set(root: &mut toml::Value, segs: &[Seg], value: toml::Value) -> Result<(), String> {
    let Some((last, parents)) = segs.split_last() else {
        return Err("empty key".into());
    };
    let mut cur = root;
    for n in 0..parents.len() {
        cur = child(cur, &segs[..=n], matches!(segs[n + 1], Seg::Index(_)))?;
    }
    match (last, cur) {
        (Seg::Key(k), toml::Value::Table(t)) => {
            t.insert(k.clone(), value);
        }
        (_, cur) => *child(cur, segs, false)? = value,
    }
    Ok(())
}

/// The child of `cur` at the last step of `path`. `indexed`: the caller will index into it,
/// so a missing key is an error (an array absent from the text has no entries to set; its
/// default only exists after deserializing).
fn child<'a>(
    cur: &'a mut toml::Value,
    path: &[Seg],
    indexed: bool,
) -> Result<&'a mut toml::Value, String> {
    let (seg, at) = path.split_last().expect("non-empty path");
    // Spelled out only on error: formatting the path at every step of a walk would make
    // setting a key of n segments O(n²).
    let here = || {
        if at.is_empty() {
            "the top level".to_string()
        } else {
            format!("`{}`", format(at))
        }
    };
    match (seg, cur) {
        (Seg::Key(k), toml::Value::Table(t)) => {
            if indexed && !t.contains_key(k) {
                return Err(format!(
                    "`{}` is not given, so it has no entries to index (set it whole)",
                    format(path)
                ));
            }
            Ok(t.entry(k.clone())
                .or_insert_with(|| toml::Value::Table(Default::default())))
        }
        (Seg::Index(i), toml::Value::Array(a)) => {
            let len = a.len();
            a.get_mut(*i)
                .ok_or_else(|| format!("index {i} is out of range: {} has {len} entries", here()))
        }
        (Seg::Key(_), _) => Err(format!("{} is not a table", here())),
        (Seg::Index(_), _) => Err(format!("{} is not an array", here())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Seg {
        Seg::Key(s.into())
    }

    #[test]
    fn parse_both_index_forms() {
        let want = vec![k("workload"), Seg::Index(0), k("size")];
        assert_eq!(parse("workload.0.size").unwrap(), want);
        assert_eq!(parse("workload[0].size").unwrap(), want);
        assert_eq!(format(&want), "workload[0].size");
        assert_eq!(
            parse("kernel.vm.page-cluster").unwrap(),
            vec![k("kernel"), k("vm"), k("page-cluster")]
        );
        assert_eq!(
            parse("a[1][2]").unwrap(),
            vec![k("a"), Seg::Index(1), Seg::Index(2)]
        );
        for bad in ["", "a..b", "a.", "a[x]", "a[1", "a[1]b"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lines_of_keys() {
        let text = "[kernel]\nvm.swappiness = 1\n\n[[w]]\nx = 1\n[[w]]\nx = [\n 1,\n 2,\n]\n";
        let doc = toml_edit::ImDocument::parse(text).unwrap();
        let line = |k: &str| find_line(doc.as_table(), text, &parse(k).unwrap());
        assert_eq!(line("kernel.vm.swappiness"), (2, true));
        assert_eq!(line("kernel.vm.dirty_ratio"), (2, false));
        assert_eq!(line("w[1]"), (6, true));
        assert_eq!(line("w[1].x[1]"), (9, true));
        assert_eq!(line("w[0].y"), (4, false));
        assert_eq!(line("machine"), (0, false));
    }

    #[test]
    fn keys_deeper_than_the_limit_are_rejected() {
        let key = vec!["a"; MAX_SEGMENTS].join(".");
        assert_eq!(parse(&key).unwrap().len(), MAX_SEGMENTS);
        let e = parse(&format!("{key}.a")).unwrap_err();
        assert!(e.contains("more than 64 segments"), "{e}");
    }

    #[test]
    fn set_is_linear_in_the_key_length() {
        // Setting a key of n segments walks n tables: 10× the segments must cost about
        // 10× the time, far from the 100× of the old quadratic walk (the bound, 40×,
        // leaves room for a noisy shared host; both sizes take long enough, milliseconds,
        // for timer noise not to matter). On a thread with room for a nest 50 000 deep.
        let time = |n: usize| {
            let segs = vec![k("a"); n];
            // The best of seven: one run can stall on the host (another test binary
            // on the other core); the best is the walk's own cost.
            (0..7)
                .map(|_| {
                    let mut v = toml::Value::Table(Default::default());
                    let t = std::time::Instant::now();
                    set(&mut v, &segs, 1.into()).unwrap();
                    let spent = t.elapsed();
                    std::mem::forget(v); // dropping it is recursive: not what is timed
                    spent
                })
                .min()
                .unwrap()
        };
        let (short, long) = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || (time(5_000), time(50_000)))
            .unwrap()
            .join()
            .unwrap();
        assert!(
            long < short * 40,
            "5 000 segments: {short:?}, 50 000: {long:?}"
        );
    }

    #[test]
    fn set_creates_tables_not_entries() {
        let mut v = toml::Value::Table(toml::from_str("[[w]]\nx = 1\n").unwrap());
        set(&mut v, &parse("w.0.x").unwrap(), 2.into()).unwrap();
        set(&mut v, &parse("a.b").unwrap(), 3.into()).unwrap();
        assert_eq!(v["w"][0]["x"].as_integer(), Some(2));
        assert_eq!(v["a"]["b"].as_integer(), Some(3));
        assert!(set(&mut v, &parse("w[1].x").unwrap(), 1.into())
            .unwrap_err()
            .contains("out of range"));
        assert!(set(&mut v, &parse("a.b.c").unwrap(), 1.into())
            .unwrap_err()
            .contains("`a.b` is not a table"));
        assert!(set(&mut v, &parse("z[0]").unwrap(), 1.into())
            .unwrap_err()
            .contains("`z` is not given"));
    }
}
