//! The scenario key reference (docs/scenario-keys.md), generated from the scenario's
//! own types so it cannot drift from what `scenario::load` accepts.
//!
//! The types derive `schemars::JsonSchema` beside serde's `Deserialize`, so the schema
//! sees exactly serde's keys (renames, defaults, `deny_unknown_fields`) and the types'
//! doc comments; values written in their own notation (sizes, times, "max") describe
//! themselves (`units::value_schema`). [`key_reference`] walks that schema table by
//! table: each key with its TOML type, default, unit, the kernel file or knob it
//! stands for, and its doc comment. tests/docs.rs fails when the committed page
//! differs (`UPDATE_DOCS=1` rewrites it) and checks every key of the shipped scenarios
//! against it.

use serde_json::{Map, Value};
use std::fmt::Write as _;

/// The scenario's JSON schema, derived from the types serde reads it into (their doc
/// comments, serde's renames and defaults).
pub fn schema() -> Value {
    serde_json::to_value(schemars::schema_for!(super::Scenario)).expect("a schema is JSON")
}

/// One key of a table.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// The dotted path as `--set` and sweeps write it, arrays of tables as `[]`
    /// (`workload[].size`, `kernel.vm.swappiness`).
    pub path: String,
    pub type_text: String,
    pub default: String,
    pub unit: String,
    pub kernel: String,
    pub doc: String,
}

/// A table of the scenario: its TOML header and keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// `[run]`, `[[workload]]`, `[kernel.vm]`; empty for the top level.
    pub header: String,
    pub doc: String,
    pub keys: Vec<Key>,
}

/// Every table of the scenario, in the order a scenario file has them (top-level keys
/// in the schema's order, each table's nested tables after it).
pub fn tables() -> Vec<Table> {
    let schema = schema();
    let defs = schema["$defs"].as_object().cloned().unwrap_or_default();
    let mut out = Vec::new();
    walk(&defs, &schema, "", false, "", &mut out);
    out
}

/// Follows a `$ref`, and an `Option`'s `anyOf [X, null]`, to the schema it names.
fn resolve<'a>(defs: &'a Map<String, Value>, s: &'a Value) -> &'a Value {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return defs.get(name).map_or(s, |d| resolve(defs, d));
    }
    if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
        let real: Vec<&Value> = any
            .iter()
            .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if let [one] = real.as_slice() {
            return resolve(defs, one);
        }
    }
    s
}

fn is_table(s: &Value) -> bool {
    s.get("properties").is_some()
}

/// The table of an array's items, if it is an array of tables.
fn item_table<'a>(defs: &'a Map<String, Value>, s: &'a Value) -> Option<&'a Value> {
    let items = s.get("items")?;
    let t = resolve(defs, items);
    is_table(t).then_some(t)
}

fn walk(
    defs: &Map<String, Value>,
    table: &Value,
    path: &str,
    array: bool,
    doc: &str,
    out: &mut Vec<Table>,
) {
    let props = table["properties"].as_object().cloned().unwrap_or_default();
    // TOML's header: an array of tables' entries are written under the array's name.
    let toml_path = path.replace("[]", "");
    let header = match (path.is_empty(), array) {
        (true, _) => String::new(),
        (false, true) => format!("[[{toml_path}]]"),
        (false, false) => format!("[{toml_path}]"),
    };
    let required: Vec<&str> = table["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut keys = Vec::new();
    let mut nested = Vec::new();
    for (name, field) in &props {
        let key_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        let resolved = resolve(defs, field);
        let field_doc = doc_of(field)
            .or_else(|| doc_of(resolved))
            .unwrap_or_default();
        if is_table(resolved) {
            nested.push((key_path, false, resolved, field_doc));
            continue;
        }
        if let Some(t) = item_table(defs, resolved) {
            nested.push((format!("{key_path}[]"), true, t, field_doc));
            continue;
        }
        keys.push(Key {
            type_text: type_text(defs, resolved),
            default: default_text(field, required.contains(&name.as_str())),
            unit: unit(name, resolved),
            kernel: kernel_name(&key_path),
            doc: one_line(&field_doc),
            path: key_path,
        });
    }
    if path.is_empty() {
        // The sections in the order a scenario file has them.
        let rank = |p: &str| {
            let top = p.trim_end_matches("[]");
            TOP_ORDER
                .iter()
                .position(|t| *t == top)
                .unwrap_or(TOP_ORDER.len())
        };
        nested.sort_by_key(|(p, ..)| rank(p));
    }
    if !keys.is_empty() {
        out.push(Table {
            header,
            doc: one_line(doc),
            keys,
        });
    }
    for (p, array, t, d) in nested {
        walk(defs, t, &p, array, &d, out);
    }
}

/// The top-level tables in the order a scenario file has them.
const TOP_ORDER: [&str; 10] = [
    "run",
    "machine",
    "kernel",
    "costs",
    "cgroup",
    "workload",
    "action",
    "damon",
    "damon_reclaim",
    "sweep",
];

fn doc_of(s: &Value) -> Option<String> {
    s.get("description")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// A doc comment on one line, Markdown table-safe, rustdoc's links as plain code.
fn one_line(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("[`", "`")
        .replace("`]", "`")
        .replace('|', "\\|")
}

/// The values a key takes, as TOML spells them.
fn type_text(defs: &Map<String, Value>, s: &Value) -> String {
    if let Some(f) = s.get("x-format").and_then(Value::as_str) {
        return f.to_string();
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return choices(e.iter());
    }
    if let Some(alts) = s.get("oneOf").and_then(Value::as_array) {
        let mut vals = Vec::new();
        for a in alts {
            let a = resolve(defs, a);
            if let Some(c) = a.get("const") {
                vals.push(c.clone());
            } else if let Some(e) = a.get("enum").and_then(Value::as_array) {
                vals.extend(e.iter().cloned());
            } else {
                return "one of several forms (see the description)".into();
            }
        }
        return choices(vals.iter());
    }
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let types: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
    match types.as_slice() {
        ["array"] => match s.get("items").map(|i| resolve(defs, i)) {
            Some(i) if i != &Value::Bool(true) => format!("array of {}", type_text(defs, i)),
            _ => "array".into(),
        },
        ["object"] => match s.get("additionalProperties") {
            Some(v) if v.is_object() => {
                format!("table of {}", type_text(defs, resolve(defs, v)))
            }
            _ => "table".into(),
        },
        ["integer"] => "integer".into(),
        ["number"] => "number".into(),
        ["boolean"] => "boolean".into(),
        ["string"] => "string".into(),
        [] => "any value".into(),
        many => many.join(" or "),
    }
}

fn choices<'a>(vals: impl Iterator<Item = &'a Value>) -> String {
    vals.map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The default as TOML would write it; `unset` for an optional key without one,
/// `required` for a key that must be given.
fn default_text(field: &Value, required: bool) -> String {
    if required {
        return "required".into();
    }
    match field.get("default") {
        None | Some(Value::Null) => "unset".into(),
        Some(Value::String(s)) => format!("`\"{s}\"`"),
        Some(Value::Array(a)) if a.is_empty() => "`[]`".into(),
        Some(Value::Object(o)) if o.is_empty() => "`{}`".into(),
        Some(v) => format!("`{v}`"),
    }
}

/// The unit of a number, from how it is written or from its name's suffix.
fn unit(name: &str, s: &Value) -> String {
    let format = s.get("x-format").and_then(Value::as_str).unwrap_or("");
    if format.starts_with("size") {
        return "bytes".into();
    }
    if format.starts_with("time") {
        return "time".into();
    }
    let name = name.to_ascii_lowercase();
    let by_suffix = [
        ("_kbytes", "KiB"),
        ("_kb", "KiB"),
        ("_bytes", "bytes"),
        ("_ms", "ms"),
        ("_us", "µs"),
        ("_ns", "ns"),
        ("_mb", "MiB"),
        ("_mbps", "MB/s"),
        ("_pct", "%"),
        ("_percent", "%"),
        ("_ratio", "%"),
        ("_permil", "‰"),
        ("_bp", "basis points (1/10000)"),
        ("_pages", "pages"),
        ("hz", "Hz"),
    ];
    by_suffix
        .iter()
        .find(|(sfx, _)| name.ends_with(sfx))
        .map_or(String::new(), |(_, u)| u.to_string())
}

/// The kernel file or knob a key stands for, where it is one by its place in the
/// scenario (a sysctl, a sysfs file, a cgroup interface file, a module parameter);
/// other keys name theirs in their description.
fn kernel_name(path: &str) -> String {
    let after = |prefix: &str| path.strip_prefix(prefix);
    if let Some(k) = after("kernel.vm.") {
        return format!("`/proc/sys/vm/{k}`");
    }
    if let Some(k) = after("kernel.lru_gen.") {
        if k == "memcg_reclaim" {
            return String::new();
        }
        return format!("`/sys/kernel/mm/lru_gen/{k}`");
    }
    if let Some(k) = after("kernel.transparent_hugepage.") {
        return format!("`/sys/kernel/mm/transparent_hugepage/{k}`");
    }
    if let Some(k) = after("kernel.numa.") {
        return format!("`/sys/kernel/mm/numa/{k}`");
    }
    if let Some(k) = after("kernel.numa_balancing") {
        return format!("`/proc/sys/kernel/numa_balancing{k}`");
    }
    if path == "kernel.HZ" {
        return "`CONFIG_HZ`".into();
    }
    if let Some(k) = after("cgroup[].memory.") {
        // `swap.max` and `oom.group` are the files memory.swap.max, memory.oom.group.
        return format!("`memory.{k}`");
    }
    if let Some(k) = after("damon_reclaim.") {
        return format!("`/sys/module/damon_reclaim/parameters/{k}`");
    }
    if let Some(rest) = after("damon.") {
        // The sysfs tree under /sys/kernel/mm/damon/admin/, a directory per array entry.
        let file = rest
            .replace("[].", "/<N>/")
            .replace('.', "/")
            .replace("[]", "/<N>");
        return format!("`…/damon/admin/{file}`");
    }
    String::new()
}

/// docs/scenario-keys.md.
pub fn key_reference() -> String {
    let mut o = String::from(
        "# Scenario keys\n\n\
         <!-- Generated from the scenario's types by `scenario::keys_doc`; do not edit:\n     \
         UPDATE_DOCS=1 cargo test --release --test docs rewrites it. -->\n\n\
         Every key a scenario file takes, table by table, generated from the types the\n\
         scenario is read into (a test fails when this page and the code disagree). A\n\
         key's path is what `--set` and `[[sweep.param]]` take: `[]` marks an array of\n\
         tables, written there with the entry's index (`workload.0.rate`). Sizes are bytes\n\
         or `4K`, `512M`, `16G` (binary units); times carry a unit (`100us`, `5ms`, `2s`).\n\
         `unset` is an optional key without a value of its own (its description says what\n\
         that means). The kernel column names the file or knob a key stands for where its\n\
         place says it (sysctls, sysfs, cgroup files, module parameters); other keys name\n\
         theirs in the description. [Scenarios](scenarios.md) explains the sections and\n\
         the kernel behaviour behind them.\n",
    );
    for t in tables() {
        let title = if t.header.is_empty() {
            "Top level".to_string()
        } else {
            format!("`{}`", t.header)
        };
        let _ = write!(o, "\n## {title}\n\n");
        if !t.doc.is_empty() {
            let _ = write!(o, "{}\n\n", t.doc);
        }
        o.push_str("| key | type | default | unit | kernel | description |\n");
        o.push_str("|---|---|---|---|---|---|\n");
        for k in &t.keys {
            let _ = writeln!(
                o,
                "| `{}` | {} | {} | {} | {} | {} |",
                k.path,
                k.type_text.replace('|', "\\|"),
                k.default.replace('|', "\\|"),
                k.unit,
                k.kernel,
                k.doc
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_follow_the_key_s_place() {
        assert_eq!(
            kernel_name("kernel.vm.swappiness"),
            "`/proc/sys/vm/swappiness`"
        );
        assert_eq!(kernel_name("cgroup[].memory.low"), "`memory.low`");
        assert_eq!(
            kernel_name("damon.kdamonds[].contexts[].schemes[].action"),
            "`…/damon/admin/kdamonds/<N>/contexts/<N>/schemes/<N>/action`"
        );
        assert_eq!(kernel_name("run.duration"), "");
    }

    #[test]
    fn the_reference_has_the_tables_and_keys_a_scenario_is_built_of() {
        let t = tables();
        assert_eq!(
            t[0].header, "[run]",
            "the sections in a scenario file's order"
        );
        let headers: Vec<&str> = t.iter().map(|t| t.header.as_str()).collect();
        for h in [
            "[run]",
            "[machine]",
            "[kernel]",
            "[kernel.vm]",
            "[[workload]]",
            "[[cgroup]]",
        ] {
            assert!(headers.contains(&h), "{h}: {headers:?}");
        }
        let key = |p: &str| {
            t.iter()
                .flat_map(|t| &t.keys)
                .find(|k| k.path == p)
                .unwrap_or_else(|| panic!("{p}"))
                .clone()
        };
        let swappiness = key("kernel.vm.swappiness");
        assert_eq!(swappiness.default, "`60`");
        assert_eq!(swappiness.type_text, "integer");
        let memory = key("machine.memory");
        assert_eq!(memory.default, "required");
        assert_eq!(memory.unit, "bytes");
        assert_eq!(key("run.duration").unit, "time");
        assert!(key("kernel.lru").type_text.contains("`\"mglru\"`"));
        assert_eq!(key("cgroup[].memory.low").kernel, "`memory.low`");
    }
}
