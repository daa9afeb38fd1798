//! Scenario loading: TOML text -> validated [`Scenario`], with errors that name the file,
//! the line and the dotted key path.
//!
//! The text is parsed twice from the same source: once by `toml_edit` into a document that
//! keeps spans (only used to find a key's line), once into a plain `toml::Value` that the
//! `--set` overrides edit and that is then deserialized under `serde_path_to_error`, so every
//! error carries the key path; the path is then looked up in the document for its line.
//! Run-time changes ([`set_key`]) go through the same `toml::Value` path and the same
//! validation, so a key settable by `--set` and by an action behaves the same way.

pub mod damon;
mod keypath;
pub mod keys_doc;
pub mod masim;
pub mod mm_config;
pub mod schema;
pub mod size_expr;
/// Sizes and times as scenarios write them (a leaf module, `crate::units`, so the
/// cache simulator can parse sizes without depending on scenarios).
pub use crate::units;
pub mod validate;

pub use keypath::value_text;
pub use schema::*;

use keypath::Seg;
use std::ops::Range;
use std::path::Path;

/// A scenario problem, always naming where it is: `FILE:LINE: KEY: MESSAGE`, or
/// `FLAG: KEY: MESSAGE` when the bad value came from the command line (`--set k=v`).
/// A problem with no line (a missing table, a file that cannot be read) prints
/// `FILE: KEY: MESSAGE`; the key is left out for a file that cannot be read.
#[derive(Debug, thiserror::Error)]
pub struct ScenarioError {
    pub file: String,
    /// 1-based; 0 when the problem has no line (a missing file or table, a `--set` flag).
    pub line: usize,
    /// Dotted key path, e.g. `kernel.vm.swappiness` or `workload[1].size`.
    pub key: String,
    pub message: String,
    /// The command-line flag the problem comes from, as given: `--set KEY=VALUE`.
    pub flag: Option<String>,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let at = match (&self.flag, self.line) {
            (Some(flag), _) => printable(flag),
            (None, 0) => self.file.clone(),
            (None, line) => format!("{}:{line}", self.file),
        };
        if self.key.is_empty() {
            write!(f, "{at}: {}", self.message)
        } else {
            write!(f, "{at}: {}: {}", printable(&self.key), self.message)
        }
    }
}

/// User text with its control characters escaped (`\n`), so an error stays one line.
fn printable(s: &str) -> String {
    if s.chars().any(char::is_control) {
        s.escape_debug().to_string()
    } else {
        s.to_string()
    }
}

/// Reads, applies `--set KEY=VALUE` overrides, parses and validates.
pub fn load(path: &Path, sets: &[String]) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: path.display().to_string(),
        line: 0,
        key: String::new(),
        message: e.to_string(),
        flag: None,
    })?;
    parse_str(&text, &path.display().to_string(), sets)
}

/// A `--set` flag as applied, to recognise errors that come from it.
struct Override<'a> {
    raw: &'a str,
    key: &'a str,
    segs: Vec<Seg>,
}

/// Parses `text` (named `file` in errors), applies `sets` (`dotted.key=value`, later ones
/// win) and validates. Errors from a `--set` name the flag instead of a line.
pub fn parse_str(text: &str, file: &str, sets: &[String]) -> Result<Scenario, ScenarioError> {
    let err = |line, key: String, message: String| ScenarioError {
        file: file.to_string(),
        line,
        key,
        message,
        flag: None,
    };
    let syntax = |span: Option<Range<usize>>, message: &str| {
        let line = span.map_or(0, |s| keypath::line_at(text, s.start));
        let key = syntax_key(text, line);
        let message = syntax_message(text, line, one_line(message));
        err(line, key, message)
    };
    let doc = toml_edit::ImDocument::parse(text).map_err(|e| syntax(e.span(), e.message()))?;
    let table: toml::Table = toml::from_str(text).map_err(|e| syntax(e.span(), e.message()))?;
    let mut root = toml::Value::Table(table);

    let mut applied = Vec::new();
    for raw in sets {
        let from = |key: &str, message: String| ScenarioError {
            file: file.to_string(),
            line: 0,
            key: key.to_string(),
            message,
            flag: Some(format!("--set {raw}")),
        };
        let Some((key, value)) = raw.split_once('=') else {
            return Err(from("", "expected KEY=VALUE".into()));
        };
        let key = key.trim();
        let segs = keypath::parse(key).map_err(|m| from(key, m))?;
        let value = parse_value(value.trim());
        keypath::set(&mut root, &segs, value.clone()).map_err(|m| from(key, m))?;
        ratio_write_zeroes_bytes(&mut root, &segs, &value);
        applied.push(Override { raw, key, segs });
    }

    let locate = |segs: &[Seg], message: String| locate(file, text, &doc, &applied, segs, message);

    let mut sc: Scenario = serde_path_to_error::deserialize(root).map_err(|e| {
        let d = describe(e);
        locate(&d.segs, d.message)
    })?;
    sc.source = Source {
        file: file.to_string(),
        text: text.to_string(),
        sets: sets.to_vec(),
    };
    // Loaded first: validation sets swept and timed keys on copies, which keep them.
    load_configs(&mut sc, file, None).map_err(|(i, cfg_err)| match cfg_err {
        Ok(e) => e,
        Err(message) => {
            let key = format!("workload[{i}].{}", file_key(sc.workloads[i].kind));
            let segs = keypath::parse(&key).unwrap_or_default();
            locate(&segs, message)
        }
    })?;
    if let Some(p) = validate::validate(&sc).into_iter().next() {
        let segs = keypath::parse(&p.key).unwrap_or_default();
        return Err(locate(&segs, p.message));
    }
    validate::normalize(&mut sc);
    Ok(sc)
}

/// Reads each workload's `config` file (a masim .cfg, or a phases program), relative
/// to the scenario file's directory. A file that cannot be read is the scenario's error
/// (at the `config` key: Err message); a malformed one is the file's, at its line (Ok
/// error). A workload whose `config` is what `old` loaded keeps that (a timed action
/// does not reread files mid-run).
#[allow(clippy::type_complexity)]
fn load_configs(
    sc: &mut Scenario,
    file: &str,
    old: Option<&Scenario>,
) -> Result<(), (usize, Result<ScenarioError, String>)> {
    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
    for (i, w) in sc.workloads.iter_mut().enumerate() {
        if w.kind == WorkloadKind::Trace {
            load_trace(i, w, dir, old.and_then(|o| o.workloads.get(i)))?;
            continue;
        }
        let Some(rel) = &w.config else {
            continue;
        };
        if let Some(prev) = old.and_then(|o| o.workloads.get(i)) {
            if prev.config == w.config && prev.kind == w.kind && prev.loaded.is_some() {
                w.loaded = prev.loaded.clone();
                continue;
            }
        }
        let path = dir.join(rel);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| (i, Err(format!("cannot read {}: {e}", path.display()))))?;
        let at = |line: usize, key: String, message: String| {
            (
                i,
                Ok(ScenarioError {
                    file: path.display().to_string(),
                    line,
                    key,
                    message,
                    flag: None,
                }),
            )
        };
        w.loaded = Some(match w.kind {
            WorkloadKind::Masim => LoadedConfig::Masim(
                masim::parse(&text)
                    .map_err(|(line, m)| at(line, format!("workload[{i}].config"), m))?,
            ),
            WorkloadKind::Phases => {
                LoadedConfig::Phases(parse_phase_program(&text).map_err(|(l, k, m)| at(l, k, m))?)
            }
            // Validation says `config` does not apply.
            _ => continue,
        });
    }
    Ok(())
}

/// The key that names a workload's file.
fn file_key(kind: WorkloadKind) -> &'static str {
    if kind == WorkloadKind::Trace {
        "trace"
    } else {
        "config"
    }
}

/// A trace workload's `trace` file, scanned ([`crate::trace::layout::Layout`]): a
/// file that cannot be read is the scenario's error at `trace`; a malformed record the
/// trace file's, at its line or byte. Kept from `old` when nothing about it changed.
#[allow(clippy::type_complexity)]
fn load_trace(
    i: usize,
    w: &mut Workload,
    dir: &Path,
    old: Option<&Workload>,
) -> Result<(), (usize, Result<ScenarioError, String>)> {
    use crate::trace::{Format, TraceError};
    let Some(rel) = &w.trace else {
        return Ok(());
    };
    let same_reading = |o: &Workload| {
        o.kind == w.kind
            && o.trace == w.trace
            && o.trace_format == w.trace_format
            && o.trace_options == w.trace_options
            && o.ignore_obj_size == w.ignore_obj_size
            && o.time_unit == w.time_unit
    };
    if let Some(prev) = old.filter(|o| same_reading(o) && o.loaded.is_some()) {
        w.loaded = prev.loaded.clone();
        return Ok(());
    }
    let path = dir.join(rel);
    let mut format = w
        .trace_format
        .as_deref()
        .and_then(Format::parse)
        .unwrap_or_else(|| Format::guess(&path));
    if let (Format::Csv(o), Some(opts)) = (&mut format, &w.trace_options) {
        *o = crate::trace::csv::CsvOptions::parse(opts).map_err(|e| (i, Err(e)))?;
    }
    let pages_only = format.unit_sizes() || w.ignore_obj_size.unwrap_or(false);
    // Located at the scenario's `trace` key, the message naming the trace file and its
    // line or byte: `s.toml:9: workload[0].trace: t.txt:3: \`xyz\`: expected ...`.
    let layout = crate::trace::layout::Layout::scan(&path, format, pages_only).map_err(|e| {
        let message = match e {
            TraceError::Open { file, message } if !file.exists() => {
                format!("cannot read {}: {message}", file.display())
            }
            e => e.to_string(),
        };
        (i, Err(message))
    })?;
    let time_unit_ns = w
        .time_unit
        .map_or_else(|| format.default_time_unit_ns(), |t| t.0 as f64);
    w.loaded = Some(LoadedConfig::Trace(schema::LoadedTrace {
        digest: layout.digest.clone(),
        requests: layout.requests,
        pages: layout.pages,
        path,
        format,
        time_unit_ns,
        layout: std::sync::Arc::new(layout),
    }));
    Ok(())
}

/// A `phases` program file: TOML with `[[phase]]` steps and optional `repeat`,
/// `repeat_from`; errors give the file's line and the key within it.
fn parse_phase_program(text: &str) -> Result<PhaseProgram, (usize, String, String)> {
    let doc = toml_edit::ImDocument::parse(text).map_err(|e| {
        let line = e.span().map_or(0, |s| keypath::line_at(text, s.start));
        (line, String::new(), one_line(e.message()))
    })?;
    let line_of = |key: &str| {
        let segs = keypath::parse(key).unwrap_or_default();
        keypath::find_line(doc.as_table(), text, &segs).0
    };
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(0, |s| keypath::line_at(text, s.start));
        (line, String::new(), one_line(e.message()))
    })?;
    let program: PhaseProgram = serde_path_to_error::deserialize(toml::Value::Table(table))
        .map_err(|e| {
            let d = describe(e);
            let line = keypath::find_line(doc.as_table(), text, &d.segs).0;
            (line, keypath::format(&d.segs), d.message)
        })?;
    if let Some(p) = validate::check_phases(&program.phases, program.repeat, program.repeat_from)
        .into_iter()
        .next()
    {
        return Err((line_of(&p.key), p.key, p.message));
    }
    Ok(program)
}

/// A digest of the fully resolved scenario (defaults filled in, overrides applied, the
/// `[sweep]` table left out): two runs with the same hash simulate the same thing, so a
/// result whose recorded hash differs from the scenario's is stale. SHA-256 of the
/// scenario's JSON, whose maps are ordered, so the digest is stable.
pub fn resolved_hash(sc: &Scenario) -> String {
    use sha2::Digest;
    let mut v = serde_json::to_value(sc).expect("a scenario serialises");
    if let Some(m) = v.as_object_mut() {
        m.remove("sweep");
    }
    let digest = sha2::Sha256::digest(v.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The error for a problem with a loaded scenario found later (such as the run's
/// host-memory estimate), placed as the loader places its own: the key's line in the
/// file, or the `--set` flag that gave it.
pub fn error_at_key(path: &Path, sets: &[String], key: &str, message: String) -> ScenarioError {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    error_in_text(file, &text, sets, key, message)
}

/// A problem found after loading `sc` at `key`, located in the text it was loaded from
/// (a file or a string), as the loader locates its own errors.
pub fn error_at(sc: &Scenario, key: &str, message: String) -> ScenarioError {
    let src = &sc.source;
    error_in_text(src.file.clone(), &src.text, &src.sets, key, message)
}

fn error_in_text(
    file: String,
    text: &str,
    sets: &[String],
    key: &str,
    message: String,
) -> ScenarioError {
    let segs = keypath::parse(key).unwrap_or_default();
    let Ok(doc) = toml_edit::ImDocument::parse(text) else {
        return ScenarioError {
            file,
            line: 0,
            key: key.to_string(),
            message,
            flag: None,
        };
    };
    let applied: Vec<Override> = sets
        .iter()
        .filter_map(|raw| {
            let key = raw.split_once('=')?.0.trim();
            Some(Override {
                raw,
                key,
                segs: keypath::parse(key).ok()?,
            })
        })
        .collect();
    locate(&file, text, &doc, &applied, &segs, message)
}

/// A problem at `segs`: the key's line, but at or under a `--set` key, or at a key a
/// `--set` created, the flag's.
fn locate(
    file: &str,
    text: &str,
    doc: &toml_edit::ImDocument<&str>,
    applied: &[Override],
    segs: &[Seg],
    message: String,
) -> ScenarioError {
    let err = |line, key: String, message: String| ScenarioError {
        file: file.to_string(),
        line,
        key,
        message,
        flag: None,
    };
    let (line, exists) = keypath::find_line(doc.as_table(), text, segs);
    for o in applied.iter().rev() {
        if segs.starts_with(&o.segs) || (o.segs.starts_with(segs) && !exists) {
            let key = if segs == o.segs {
                o.key.to_string()
            } else {
                keypath::format(segs)
            };
            return ScenarioError {
                flag: Some(format!("--set {}", o.raw)),
                ..err(0, key, message)
            };
        }
    }
    err(line, keypath::format(segs), message)
}

/// Sets one dotted key (as a timed action does at run time), e.g. `kernel.vm.swappiness`
/// or `workload[0].rate`. The scenario is unchanged on error.
///
/// Generic rather than fast: the scenario goes through a `toml::Value` and back, so every
/// key the file accepts is settable with the same checks, and it runs a few times per run.
pub fn set_key(sc: &mut Scenario, key: &str, value: &toml::Value) -> Result<(), String> {
    apply_key(sc, key, value).map_err(|e| e.to_string())
}

/// Why [`set_key`] failed: `key` is the path at fault; `bad_key` when the key itself is
/// wrong (malformed or unknown) rather than its value.
#[derive(Debug)]
pub(crate) struct KeyError {
    pub key: String,
    pub message: String,
    pub bad_key: bool,
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if self.key.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

pub(crate) fn apply_key(sc: &mut Scenario, key: &str, value: &toml::Value) -> Result<(), KeyError> {
    let key_err = |message| KeyError {
        key: key.to_string(),
        message,
        bad_key: true,
    };
    let segs = keypath::parse(key).map_err(key_err)?;
    let mut root = toml::Value::try_from(&*sc).map_err(|e| KeyError {
        key: String::new(),
        message: format!("cannot serialize the scenario: {e}"),
        bad_key: false,
    })?;
    keypath::set(&mut root, &segs, value.clone()).map_err(key_err)?;
    ratio_write_zeroes_bytes(&mut root, &segs, value);
    // What the workloads' `config` files loaded is not a key; it is loaded again below.
    if let Some(ws) = root.get_mut("workload").and_then(|w| w.as_array_mut()) {
        for w in ws.iter_mut().filter_map(|w| w.as_table_mut()) {
            w.remove("loaded");
        }
    }
    let mut new: Scenario = serde_path_to_error::deserialize(root).map_err(|e| {
        let d = describe(e);
        KeyError {
            key: keypath::format(&d.segs),
            message: d.message,
            bad_key: d.unknown,
        }
    })?;
    let mut problems = validate::validate_static(&new);
    if segs.first() == Some(&Seg::Key("action".to_string())) {
        problems.extend(validate::validate_actions(&new));
    }
    if let Some(p) = problems.into_iter().next() {
        return Err(KeyError {
            key: p.key,
            message: p.message,
            bad_key: false,
        });
    }
    load_configs(&mut new, &sc.source.file, Some(sc)).map_err(|(i, e)| KeyError {
        key: format!("workload[{i}].{}", file_key(new.workloads[i].kind)),
        message: match e {
            Ok(e) => e.to_string(),
            Err(m) => m,
        },
        bad_key: false,
    })?;
    validate::normalize(&mut new);
    new.source = std::mem::take(&mut sc.source);
    *sc = new;
    Ok(())
}

/// What the kernel's handlers for the dirty sysctls do on a write (mm/page-writeback.c
/// `dirty_ratio_handler`, `dirty_background_ratio_handler`): writing a ratio puts it
/// back in force by zeroing its `*_bytes` twin. The kernel's vm.dirty_ratio reads 0
/// while vm.dirty_bytes is in force, so its "only if the value changed" test is a
/// non-zero write here. A file giving both keys keeps both: the bytes win there, as
/// in `domain_dirty_limits`. Applies to `--set` flags, timed actions and sweep values.
fn ratio_write_zeroes_bytes(root: &mut toml::Value, segs: &[Seg], value: &toml::Value) {
    let twin = match keypath::format(segs).as_str() {
        "kernel.vm.dirty_ratio" if value.as_integer() != Some(0) => "dirty_bytes",
        "kernel.vm.dirty_background_ratio" => "dirty_background_bytes",
        _ => return,
    };
    let path = ["kernel", "vm", twin].map(|k| Seg::Key(k.to_string()));
    // The parents exist: the ratio was just set under them.
    let _ = keypath::set(root, &path, toml::Value::Integer(0));
}

/// A `--set` value: TOML if it parses as a value (`10`, `0.5`, `"zipf"`, `[1,2]`), else
/// the bare text as a string, so `machine.memory=8G` and `pattern=zipf` work unquoted.
fn parse_value(raw: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .filter(|t| t.len() == 1)
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()))
}

/// A deserialization error as key path and message, serde's wording made to read as
/// scenario language.
struct Described {
    segs: Vec<Seg>,
    message: String,
    /// The key itself is not in the schema.
    unknown: bool,
}

fn describe(e: serde_path_to_error::Error<toml::de::Error>) -> Described {
    use serde_path_to_error::Segment;
    let mut segs: Vec<Seg> = e
        .path()
        .iter()
        .filter_map(|s| match s {
            Segment::Seq { index } => Some(Seg::Index(*index)),
            Segment::Map { key } | Segment::Enum { variant: key } => Some(Seg::Key(key.clone())),
            Segment::Unknown => None,
        })
        .collect();
    let msg = one_line(e.inner().message());
    let quoted: Vec<&str> = msg.split('`').skip(1).step_by(2).collect();
    let mut unknown = false;
    let message = if msg.starts_with("unknown field ") {
        unknown = true;
        let (word, names) = quoted.split_first().map_or(("", &[][..]), |(w, n)| (*w, n));
        // serde puts the unknown key in the path (it failed while reading the key).
        let dotted = word.split_once('.').filter(|(t, _)| names.contains(t));
        match (dotted, suggest(word, names)) {
            // Kernel names have dots (`vm.swappiness`, `memory.high`): quoted, TOML
            // reads one key with a dot in its name.
            (Some((table, rest)), _) => format!(
                "unknown key: quoted, \"{word}\" is one key named {word}; write it \
                 unquoted ({word} = ...), which TOML reads as key `{rest}` of table \
                 `{table}`"
            ),
            (None, Some(s)) => format!("unknown key (did you mean `{s}`?)"),
            (None, None) if names.is_empty() => {
                "unknown key (this table takes no keys)".to_string()
            }
            (None, None) => format!("unknown key (expected one of {})", list(names)),
        }
    } else if msg.starts_with("missing field ") {
        // serde reports it at the parent: name the missing key itself.
        segs.push(Seg::Key(quoted.first().unwrap_or(&"").to_string()));
        "missing required key".to_string()
    } else if msg.starts_with("unknown variant ") {
        let (word, names) = quoted.split_first().map_or(("", &[][..]), |(w, n)| (*w, n));
        match suggest(word, names) {
            Some(s) => format!("unknown value `{word}` (did you mean `{s}`?)"),
            None => format!("unknown value `{word}`, expected one of {}", list(names)),
        }
    } else if msg == "invalid type: unit variant, expected string only" {
        // toml's wording when an enum key is given a non-string.
        "invalid type: expected a string".to_string()
    } else {
        type_error(&msg, &segs).unwrap_or(msg)
    };
    Described {
        segs,
        message,
        unknown,
    }
}

/// The largest TOML integer (TOML integers are 64-bit signed).
const TOML_INT_MAX: i64 = i64::MAX;

/// serde's `invalid type: X, expected Y` / `invalid value: X, expected Y` in scenario
/// terms: tables, arrays, integers with their ranges instead of `struct Workload`,
/// `sequence`, `u32`. `None` for other messages.
fn type_error(msg: &str, segs: &[Seg]) -> Option<String> {
    let (kind, rest) = msg.split_once(": ")?;
    let (got, want) = rest.rsplit_once(", expected ")?;
    let max = match want {
        "u8" => Some(u8::MAX as i128),
        "u16" => Some(u16::MAX as i128),
        "u32" => Some(u32::MAX as i128),
        "u64" | "usize" | "i64" => Some(TOML_INT_MAX as i128),
        _ => None,
    };
    // An integer key given a number out of its range, or a digit string too long for a
    // TOML integer (a `--set` value that did not parse as one).
    let number = got
        .strip_prefix("integer `")
        .and_then(|r| r.strip_suffix('`'))
        .or_else(|| {
            got.strip_prefix("string \"")
                .and_then(|r| r.strip_suffix('"'))
                .filter(|d| {
                    d.trim_start_matches('-')
                        .bytes()
                        .all(|b| b.is_ascii_digit())
                })
        })
        .filter(|d| !d.is_empty() && d != &"-");
    if let (Some(max), Some(n)) = (max, number) {
        let min = if want.starts_with('u') {
            0
        } else {
            i64::MIN as i128
        };
        return Some(match n.parse::<i128>() {
            Ok(v) if v < min => format!("must be at least {min}, got {n}"),
            _ => format!("must be at most {max}, got {n}"),
        });
    }
    if kind != "invalid type" {
        return None;
    }
    let got = user_type(got);
    let want = match want {
        w if w.starts_with("struct ") => {
            let table = segs.iter().rev().find_map(|s| match s {
                Seg::Key(k) => Some(k.as_str()),
                Seg::Index(_) => None,
            });
            match table {
                Some(t) => format!("a table of {t} keys"),
                None => "a table".to_string(),
            }
        }
        "u8" | "u16" | "u32" | "u64" | "usize" => "a non-negative integer".to_string(),
        "i64" => "an integer".to_string(),
        "f64" | "f32" => "a number".to_string(),
        "a sequence" => "an array".to_string(),
        "a map" | "map" => "a table".to_string(),
        other => other.to_string(),
    };
    Some(format!("expected {want}, got {got}"))
}

/// serde's name of a value's type (`integer \`3\``, `sequence`) as TOML calls it.
fn user_type(got: &str) -> String {
    let (name, shown) = got.split_once(' ').unwrap_or((got, ""));
    match name {
        "integer" => format!("an integer ({})", shown.trim_matches('`')),
        "floating" => format!(
            "a number ({})",
            shown.trim_start_matches("point ").trim_matches('`')
        ),
        "boolean" => format!("a boolean ({})", shown.trim_matches('`')),
        "string" => format!("a string ({shown})"),
        "sequence" => "an array".to_string(),
        "map" => "a table".to_string(),
        _ => got.to_string(),
    }
}

fn list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(", ")
}

/// The allowed name closest to a misspelt one, if close enough to be a likely typo.
/// Case and `-` vs `_` do not count as differences.
fn suggest<'a>(word: &str, names: &[&'a str]) -> Option<&'a str> {
    let norm = |s: &str| s.to_ascii_lowercase().replace('-', "_");
    let w = norm(word);
    names
        .iter()
        .map(|n| (edit_distance(&w, &norm(n)), *n))
        .filter(|(d, n)| *d <= (n.len() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Edit distance over chars where swapping two neighbours counts as one edit (optimal
/// string alignment), since `strat` for `start` is a typical typo.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j - 1] + cost)
                .min(d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

fn one_line(msg: &str) -> String {
    let parts: Vec<&str> = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    parts.join("; ")
}

/// What each line of a text that failed to parse defines, as a best guess since the
/// document has no spans: (key, whether the line defines it). A table header defines
/// its table (`run`, `workload[1]`), `key = value` its key under the table in force;
/// any other line is blamed on the table in force.
fn line_keys(text: &str) -> Vec<(String, bool)> {
    let mut table = String::new();
    let mut counts = std::collections::HashMap::<String, usize>::new();
    text.lines()
        .map(|l| {
            let l = l.trim();
            if let Some(name) = l.strip_prefix("[[").and_then(|r| r.split_once("]]")) {
                let name = name.0.trim().to_string();
                let n = counts.entry(name.clone()).or_default();
                table = format!("{name}[{n}]");
                *n += 1;
                return (table.clone(), true);
            }
            if let Some(name) = l.strip_prefix('[').and_then(|r| r.split_once(']')) {
                table = name.0.trim().to_string();
                return (table.clone(), true);
            }
            let key = l
                .split_once('=')
                .map_or("", |(k, _)| k.trim().trim_matches('"'));
            match (table.as_str(), key) {
                (t, "") => (t.to_string(), false),
                ("", k) => (k.to_string(), true),
                (t, k) => (format!("{t}.{k}"), true),
            }
        })
        .collect()
}

/// The key a syntax error at `line` (1-based) is in.
fn syntax_key(text: &str, line: usize) -> String {
    match line_keys(text).into_iter().nth(line.wrapping_sub(1)) {
        Some((k, _)) if !k.is_empty() => k,
        _ => "(syntax)".to_string(),
    }
}

/// A parser's message in scenario terms: a duplicate names the line of the first
/// definition; an integer beyond TOML's range says what the range is.
fn syntax_message(text: &str, line: usize, msg: String) -> String {
    if msg.contains("number too large to fit in target type") {
        return format!("must be at most {TOML_INT_MAX} (the largest TOML integer)");
    }
    if msg.contains("number too small to fit in target type") {
        return format!("must be at least {} (the smallest TOML integer)", i64::MIN);
    }
    if msg.contains("duplicate key") {
        let keys = line_keys(text);
        let here = keys.get(line.wrapping_sub(1)).map(|k| k.0.as_str());
        let first = keys
            .iter()
            .take(line.saturating_sub(1))
            .position(|(k, def)| *def && Some(k.as_str()) == here);
        return match first {
            Some(i) => format!("given twice (first at line {})", i + 1),
            None => "given twice".to_string(),
        };
    }
    msg
}

#[cfg(test)]
mod tests;
