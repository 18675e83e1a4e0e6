//! Strict reading of TOML experiment files.
//!
//! The document is parsed with spans (`toml::de::DeTable`), and every value is read through a
//! [`Section`] that records which keys were asked for. [`Section::finish`] then rejects every key that
//! was not asked for, naming the file, line, key and the keys that are allowed. Type and range errors
//! carry the same location, so that a user can fix the file from the message alone.
//!
//! A kind's settings are read with serde into a typed struct implementing [`Settings`]
//! ([`Section::typed`]): the struct declares its keys with what each accepts, and checks its ranges once,
//! when it is built (the checked-parameters pattern of linfa's `ParamGuard`).

use std::cell::RefCell;
use std::fmt;
use std::ops::Range;

use serde::de::{DeserializeOwned, IntoDeserializer};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// A configuration error: file, line, dotted key and message. Exit code 2 in the CLI.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    /// The file the error is in.
    pub file: String,
    /// 1-based line number, when the error has a location.
    pub line: Option<usize>,
    /// Dotted key path, e.g. `sweep.degree`.
    pub key: String,
    /// What is wrong, including the allowed values.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.key.is_empty()) {
            (Some(l), false) => write!(f, "{}:{}: `{}`: {}", self.file, l, self.key, self.message),
            (Some(l), true) => write!(f, "{}:{}: {}", self.file, l, self.message),
            (None, false) => write!(f, "{}: `{}`: {}", self.file, self.key, self.message),
            (None, true) => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// A value with its byte span in the file (for error locations).
pub type Located = (Value, Range<usize>);

/// A parsed TOML document with its source, for line lookups.
pub struct Doc<'a> {
    file: String,
    src: &'a str,
    root: DeTable<'a>,
}

/// A scalar value of a sweep list or a setting.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A boolean.
    Bool(bool),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Str(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
        }
    }
}

impl Value {
    /// The value as an integer, if it is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }
    /// The value as a float (integers convert).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(v) => Some(*v as f64),
            Value::Float(v) => Some(*v),
            _ => None,
        }
    }
    /// The value as a string slice, if it is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(v) => Some(v),
            _ => None,
        }
    }
}

fn type_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) if scalar(v).is_none() => {
            "an integer too large to represent (beyond 64 bits)"
        }
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

impl<'a> Doc<'a> {
    /// Parses `src` (the contents of `file`).
    pub fn parse(file: &str, src: &'a str) -> Result<Self, ConfigError> {
        match DeTable::parse(src) {
            Ok(t) => Ok(Doc {
                file: file.to_string(),
                src,
                root: t.into_inner(),
            }),
            Err(e) => {
                let line = e.span().map(|s| line_of(src, s.start));
                Err(ConfigError {
                    file: file.to_string(),
                    line,
                    key: String::new(),
                    message: format!("not valid TOML: {}", e.message().trim()),
                })
            }
        }
    }

    /// The file name used in messages.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Overlays the tables of `[quick]` onto the document (recursively, key by key) and drops `[quick]`.
    /// Returns whether there was a `[quick]` section; a `quick` that is not a table is an error (it would
    /// otherwise be ignored).
    pub fn apply_quick(&mut self, apply: bool) -> Result<bool, ConfigError> {
        let Some(quick) = self.root.remove("quick") else {
            return Ok(false);
        };
        let span = quick.span();
        match quick.into_inner() {
            DeValue::Table(t) => {
                if apply {
                    merge(&mut self.root, t);
                }
                Ok(true)
            }
            other => Err(self.error_at(
                span,
                "quick",
                format!(
                    "expected a table of overrides ([quick.sweep], [quick.<kind>], ...), found {}",
                    type_name(&other)
                ),
            )),
        }
    }

    /// The root table as a [`Section`].
    pub fn root(&self) -> Section<'_, 'a> {
        Section {
            doc: self,
            path: String::new(),
            table: &self.root,
            line: Some(1),
            asked: RefCell::new(Vec::new()),
        }
    }

    /// An error at byte offset `span.start` for `key`.
    pub fn error_at(
        &self,
        span: Range<usize>,
        key: &str,
        message: impl Into<String>,
    ) -> ConfigError {
        ConfigError {
            file: self.file.clone(),
            line: Some(line_of(self.src, span.start)),
            key: key.to_string(),
            message: message.into(),
        }
    }
}

fn merge<'a>(base: &mut DeTable<'a>, over: DeTable<'a>) {
    for (k, v) in over {
        let span = v.span();
        match (base.get_mut(k.get_ref().as_ref()), v.into_inner()) {
            (Some(existing), DeValue::Table(t)) if existing.get_ref().is_table() => {
                if let DeValue::Table(bt) = existing.get_mut() {
                    merge(bt, t);
                }
            }
            (_, value) => {
                base.insert(k, Spanned::new(span, value));
            }
        }
    }
}

/// 1-based line of byte offset `pos` in `src`.
pub fn line_of(src: &str, pos: usize) -> usize {
    src.as_bytes()[..pos.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// A table of the document being read; remembers which keys were asked for.
pub struct Section<'d, 'a> {
    doc: &'d Doc<'a>,
    path: String,
    table: &'d DeTable<'a>,
    line: Option<usize>,
    asked: RefCell<Vec<String>>,
}

impl<'d, 'a> Section<'d, 'a> {
    /// Dotted path of `key` in this section.
    pub fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{}", self.path, key)
        }
    }

    /// The dotted path of this section (empty for the root).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// An error about `key` at its location (or at the section when the key is absent).
    pub fn error(&self, key: &str, message: impl Into<String>) -> ConfigError {
        let line = match self.table.get(key) {
            Some(v) => Some(line_of(self.doc.src, v.span().start)),
            None => self.line,
        };
        ConfigError {
            file: self.doc.file.clone(),
            line,
            key: self.key_path(key),
            message: message.into(),
        }
    }

    /// An error about element `value` of `key`.
    pub fn error_in(
        &self,
        key: &str,
        value: &Spanned<DeValue<'a>>,
        message: impl Into<String>,
    ) -> ConfigError {
        self.doc
            .error_at(value.span(), &self.key_path(key), message)
    }

    /// An error at a byte span inside this section, about `key`.
    pub fn error_span(
        &self,
        span: Range<usize>,
        key: &str,
        message: impl Into<String>,
    ) -> ConfigError {
        self.doc.error_at(span, &self.key_path(key), message)
    }

    fn raw(&self, key: &str) -> Option<&'d Spanned<DeValue<'a>>> {
        let mut asked = self.asked.borrow_mut();
        if !asked.iter().any(|k| k == key) {
            asked.push(key.to_string());
        }
        self.table.get(key)
    }

    /// Whether `key` is present (marks it as known).
    pub fn has(&self, key: &str) -> bool {
        self.raw(key).is_some()
    }

    /// Keys of this table in file order (without marking them as known).
    pub fn keys(&self) -> Vec<String> {
        self.table.keys().map(|k| k.get_ref().to_string()).collect()
    }

    /// A sub-table, if present; errors if `key` exists but is not a table.
    pub fn table(&self, key: &str) -> Result<Option<Section<'d, 'a>>, ConfigError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                DeValue::Table(t) => Ok(Some(Section {
                    doc: self.doc,
                    path: self.key_path(key),
                    table: t,
                    line: Some(line_of(self.doc.src, v.span().start)),
                    asked: RefCell::new(Vec::new()),
                })),
                other => {
                    Err(self.error(key, format!("expected a table, found {}", type_name(other))))
                }
            },
        }
    }

    /// An array of tables (`[[key]]`), empty if absent.
    pub fn tables(&self, key: &str) -> Result<Vec<Section<'d, 'a>>, ConfigError> {
        let Some(v) = self.raw(key) else {
            return Ok(Vec::new());
        };
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.error(
                key,
                format!(
                    "expected an array of tables ([[{key}]]), found {}",
                    type_name(v.get_ref())
                ),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item.get_ref() {
                DeValue::Table(t) => Ok(Section {
                    doc: self.doc,
                    path: format!("{}[{}]", self.key_path(key), i),
                    table: t,
                    line: Some(line_of(self.doc.src, item.span().start)),
                    asked: RefCell::new(Vec::new()),
                }),
                other => Err(self.error_in(
                    key,
                    item,
                    format!("expected a table, found {}", type_name(other)),
                )),
            })
            .collect()
    }

    /// A scalar value converted to [`Value`]; errors for arrays and tables.
    pub fn scalar(&self, key: &str, v: &Spanned<DeValue<'a>>) -> Result<Value, ConfigError> {
        if let DeValue::String(s) = v.get_ref() {
            check_text(key, s).map_err(|m| self.error_in(key, v, m))?;
        }
        scalar(v.get_ref()).ok_or_else(|| {
            self.error_in(
                key,
                v,
                format!(
                    "expected a string, number or boolean, found {}",
                    type_name(v.get_ref())
                ),
            )
        })
    }

    /// A list of scalars (a single scalar is accepted as a one-element list when `allow_single`).
    pub fn list(&self, key: &str) -> Result<Option<Vec<Located>>, ConfigError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        match v.get_ref() {
            DeValue::Array(items) => items
                .iter()
                .map(|item| Ok((self.scalar(key, item)?, item.span())))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            _ => Ok(Some(vec![(self.scalar(key, v)?, v.span())])),
        }
    }

    /// The raw spanned value of `key` (marks it as known).
    pub fn value(&self, key: &str) -> Option<&'d Spanned<DeValue<'a>>> {
        self.raw(key)
    }

    /// Optional string.
    pub fn opt_str(&self, key: &str) -> Result<Option<String>, ConfigError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                DeValue::String(s) => {
                    check_text(key, s).map_err(|m| self.error(key, m))?;
                    Ok(Some(s.to_string()))
                }
                other => Err(self.error(
                    key,
                    format!("expected a string, found {}", type_name(other)),
                )),
            },
        }
    }

    /// Required string.
    pub fn req_str(&self, key: &str) -> Result<String, ConfigError> {
        self.opt_str(key)?
            .ok_or_else(|| self.error(key, "missing required key (a string)"))
    }

    /// Optional string restricted to `allowed`.
    pub fn opt_choice(&self, key: &str, allowed: &[&str]) -> Result<Option<String>, ConfigError> {
        match self.opt_str(key)? {
            None => Ok(None),
            Some(s) if allowed.contains(&s.as_str()) => Ok(Some(s)),
            Some(s) => Err(self.error(
                key,
                format!("unknown value \"{s}\"; allowed: {}", allowed.join(", ")),
            )),
        }
    }

    /// Optional integer in `[min, max]`.
    pub fn opt_int(&self, key: &str, min: i64, max: i64) -> Result<Option<i64>, ConfigError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => match scalar(v.get_ref()) {
                Some(Value::Int(i)) if (min..=max).contains(&i) => Ok(Some(i)),
                Some(Value::Int(i)) => Err(self.error(
                    key,
                    format!("value {i} out of range; allowed: integers from {min} to {max}"),
                )),
                // beyond 64 bits: not "expected an integer, found an integer"
                None if matches!(v.get_ref(), DeValue::Integer(_)) => Err(self.error(
                    key,
                    format!(
                        "an integer too large to represent, out of range; allowed: integers from {min} to {max}"
                    ),
                )),
                _ => Err(self.error(
                    key,
                    format!("expected an integer, found {}", type_name(v.get_ref())),
                )),
            },
        }
    }

    /// Optional float in `[min, max]` (integers accepted).
    pub fn opt_float(&self, key: &str, min: f64, max: f64) -> Result<Option<f64>, ConfigError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => match scalar(v.get_ref()).as_ref().and_then(Value::as_f64) {
                Some(x) if x >= min && x <= max => Ok(Some(x)),
                Some(x) => Err(self.error(
                    key,
                    format!("value {x} out of range; allowed: numbers from {min} to {max}"),
                )),
                None => Err(self.error(
                    key,
                    format!("expected a number, found {}", type_name(v.get_ref())),
                )),
            },
        }
    }

    /// Optional boolean.
    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                DeValue::Boolean(b) => Ok(Some(*b)),
                other => Err(self.error(
                    key,
                    format!("expected true or false, found {}", type_name(other)),
                )),
            },
        }
    }

    /// Optional list of strings.
    pub fn opt_str_list(&self, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
        match self.list(key)? {
            None => Ok(None),
            Some(items) => items
                .into_iter()
                .map(|(v, span)| match v {
                    Value::Str(s) => Ok(s),
                    other => {
                        Err(self.error_span(span, key, format!("expected strings, found {other}")))
                    }
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
        }
    }

    /// The settings struct `T` read from this section with serde, then checked ([`Settings::check`]).
    ///
    /// Every key of [`Settings::KEYS`] is marked as known, so [`Section::finish`] rejects any other key
    /// with its line and the allowed keys, as for keys read one by one. A value of the wrong type is
    /// reported at its key's line with what the key accepts; a range error from `check` likewise.
    pub fn typed<T: Settings>(&self) -> Result<T, ConfigError> {
        for (key, _) in T::KEYS {
            self.raw(key);
        }
        let table = Spanned::new(self.span(), self.table.clone());
        let value = T::deserialize(table.into_deserializer()).map_err(|e| {
            let key = e.span().and_then(|span| {
                self.table
                    .iter()
                    .find(|(k, v)| {
                        // Value first: a `[quick]` overlay keeps the key's span and moves the value.
                        v.span().contains(&span.start) || k.span().contains(&span.start)
                    })
                    .map(|(k, _)| k.get_ref().to_string())
            });
            let message = e.message().trim().to_string();
            match key {
                Some(key) => {
                    let allowed = T::KEYS.iter().find(|(k, _)| *k == key).map(|(_, a)| *a);
                    let found = self.table.get(key.as_str()).map(|v| v.get_ref());
                    let message = serde_message(&message, found);
                    match allowed {
                        Some(a) => self.error(&key, format!("{message}; allowed: {a}")),
                        None => self.error(&key, message),
                    }
                }
                None => match e.span() {
                    Some(span) => self.doc.error_at(span, &self.path, message),
                    None => ConfigError {
                        file: self.doc.file.clone(),
                        line: self.line,
                        key: self.path.clone(),
                        message,
                    },
                },
            }
        })?;
        value
            .check()
            .map_err(|Invalid { key, message }| self.error(key, message))?;
        Ok(value)
    }

    /// The byte span of this section's table (its first key to its last value; empty when it has none).
    fn span(&self) -> Range<usize> {
        let start = self.table.keys().map(|k| k.span().start).min();
        let end = self.table.values().map(|v| v.span().end).max();
        match (start, end) {
            (Some(s), Some(e)) => s..e,
            _ => 0..0,
        }
    }

    /// Rejects every key that was not asked for, listing the allowed keys.
    pub fn finish(&self) -> Result<(), ConfigError> {
        let asked = self.asked.borrow();
        for (k, v) in self.table.iter() {
            let name = k.get_ref().as_ref();
            if !asked.iter().any(|a| a == name) {
                let mut allowed = asked.clone();
                allowed.sort();
                return Err(self.doc.error_at(
                    k.span(),
                    &self.key_path(name),
                    format!(
                        "unknown key{}; allowed keys here: {}",
                        if v.get_ref().is_table() {
                            " (table)"
                        } else {
                            ""
                        },
                        if allowed.is_empty() {
                            "none".to_string()
                        } else {
                            allowed.join(", ")
                        }
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A serde error about a value in the words of [`Section`]'s readers: `expected an integer, found a
/// string` for a wrong type, `value -3 out of range` for a negative value of an unsigned field; other
/// messages as serde words them.
fn serde_message(message: &str, found: Option<&DeValue<'_>>) -> String {
    let expected = message.rsplit_once(", expected ").map(|(_, e)| e.trim());
    if let (Some(rest), Some(found)) = (message.strip_prefix("invalid type: "), found) {
        let what = match expected.unwrap_or(rest) {
            "usize" | "u64" | "u32" | "u16" | "u8" | "i64" | "i32" | "isize" => "an integer",
            "f64" | "f32" => "a number",
            "a boolean" => "true or false",
            other => other,
        };
        if what == "an integer" && matches!(found, DeValue::Integer(_)) {
            // an integer literal beyond the 64-bit range (serde cannot hold it)
            return "an integer too large to represent, out of range".to_string();
        }
        return format!("expected {what}, found {}", type_name(found));
    }
    if let (Some(_), Some(v)) = (message.strip_prefix("invalid value: integer "), found) {
        if let Some(Value::Int(i)) = scalar(v) {
            return format!("value {i} out of range");
        }
    }
    message.to_string()
}

/// A kind's settings: a struct read with serde from the kind's section ([`Section::typed`]), every field
/// defaulted (`#[serde(default)]` with a [`Default`] holding the defaults), and checked once when read.
pub trait Settings: DeserializeOwned + Default {
    /// The keys of the section, each with the values it accepts (for messages), e.g.
    /// `("grid_points", "integers from 3 to 100000000")`.
    const KEYS: &'static [(&'static str, &'static str)];

    /// Checks the ranges and choices of the values read ([`int_in`], [`float_in`], [`choice_in`]).
    fn check(&self) -> Result<(), Invalid>;

    /// The settings of an optional section: read and checked when present, the defaults when absent.
    fn read(section: Option<&Section<'_, '_>>) -> Result<Self, ConfigError> {
        match section {
            Some(s) => s.typed(),
            None => Ok(Self::default()),
        }
    }
}

/// A value out of range in [`Settings::check`]: its key and what is wrong, with the allowed values.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// The key of the section.
    pub key: &'static str,
    /// The message, e.g. `value 2 out of range; allowed: integers from 3 to 10`.
    pub message: String,
}

/// Checks that integer `value` of `key` is in `[min, max]` (the message of [`Section::opt_int`]).
/// (`i128` holds every `i64` and `u64` a field may have.)
pub fn int_in(key: &'static str, value: i128, min: i128, max: i128) -> Result<(), Invalid> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(Invalid {
            key,
            message: format!("value {value} out of range; allowed: integers from {min} to {max}"),
        })
    }
}

/// Checks that number `value` of `key` is in `[min, max]` (the message of [`Section::opt_float`]).
pub fn float_in(key: &'static str, value: f64, min: f64, max: f64) -> Result<(), Invalid> {
    if value >= min && value <= max {
        Ok(())
    } else {
        Err(Invalid {
            key,
            message: format!("value {value} out of range; allowed: numbers from {min} to {max}"),
        })
    }
}

/// Checks that string `value` of `key` is one of `allowed` (the message of [`Section::opt_choice`]).
pub fn choice_in(key: &'static str, value: &str, allowed: &[&str]) -> Result<(), Invalid> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(Invalid {
            key,
            message: format!("unknown value \"{value}\"; allowed: {}", allowed.join(", ")),
        })
    }
}

/// The longest `notes` or `description` text, in characters.
pub const MAX_TEXT_CHARS: usize = 100_000;
/// The longest other string (a title, label, caption, quote or value), in characters.
pub const MAX_LINE_CHARS: usize = 1_000;

/// Checks a string of the experiment file: `notes` and `description` (texts) at most [`MAX_TEXT_CHARS`]
/// characters with line breaks and tabs allowed, every other string (titles, labels, captions, values: drawn
/// on one line, used in file names) at most [`MAX_LINE_CHARS`] on one line; no other control characters
/// (they would make a malformed SVG or report).
fn check_text(key: &str, s: &str) -> Result<(), String> {
    let text = matches!(key, "notes" | "description");
    let max = if text { MAX_TEXT_CHARS } else { MAX_LINE_CHARS };
    let n = s.chars().count();
    if n > max {
        return Err(format!(
            "a string of {n} characters; allowed: at most {max}{}",
            if text { "" } else { " (one line)" }
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|&c| c.is_control() && !(text && (c == '\n' || c == '\t' || c == '\r')))
    {
        return Err(format!(
            "the control character U+{:04X} in a string; allowed: printable text{}",
            u32::from(c),
            if text {
                ", line breaks and tabs"
            } else {
                " on one line"
            }
        ));
    }
    Ok(())
}

fn scalar(v: &DeValue<'_>) -> Option<Value> {
    match v {
        DeValue::String(s) => Some(Value::Str(s.to_string())),
        DeValue::Integer(i) => i64::from_str_radix(&i.as_str().replace('_', ""), i.radix())
            .ok()
            .map(Value::Int),
        DeValue::Float(f) => f
            .as_str()
            .replace('_', "")
            .parse::<f64>()
            .ok()
            .map(Value::Float),
        DeValue::Boolean(b) => Some(Value::Bool(*b)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_line_and_allowed_keys() {
        let src = "a = 1\n[s]\nx = 2\ny = 3\n";
        let doc = Doc::parse("f.toml", src).unwrap();
        let root = doc.root();
        assert_eq!(root.opt_int("a", 0, 5).unwrap(), Some(1));
        let s = root.table("s").unwrap().unwrap();
        s.opt_int("x", 0, 9).unwrap();
        let e = s.finish().unwrap_err();
        assert_eq!(e.line, Some(4));
        assert_eq!(e.key, "s.y");
        assert!(e.message.contains("allowed keys here: x"), "{e}");
        root.finish().unwrap();
    }

    #[test]
    fn range_and_type_errors_have_locations() {
        let src = "n = -3\nm = \"x\"\n";
        let doc = Doc::parse("f.toml", src).unwrap();
        let root = doc.root();
        let e = root.opt_int("n", 1, 10).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(1), "n"));
        assert!(e.message.contains("from 1 to 10"));
        let e = root.opt_int("m", 1, 10).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("expected an integer, found a string"));
    }

    #[test]
    fn quick_overlays_nested_keys() {
        let src = "[sweep]\nd = [1, 2]\ne = [3]\n[quick.sweep]\nd = [1]\n";
        let mut doc = Doc::parse("f.toml", src).unwrap();
        assert!(doc.apply_quick(true).unwrap());
        let sweep = doc.root().table("sweep").unwrap().unwrap();
        let d: Vec<_> = sweep
            .list("d")
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|v| v.0)
            .collect();
        assert_eq!(d, vec![Value::Int(1)]);
        assert_eq!(sweep.list("e").unwrap().unwrap().len(), 1);
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    #[serde(default)]
    struct Demo {
        points: usize,
        scale: f64,
        mode: String,
    }

    impl Default for Demo {
        fn default() -> Self {
            Demo {
                points: 7,
                scale: 1.5,
                mode: "fast".into(),
            }
        }
    }

    impl Settings for Demo {
        const KEYS: &'static [(&'static str, &'static str)] = &[
            ("points", "integers from 3 to 100"),
            ("scale", "numbers from 0 to 10"),
            ("mode", "fast, slow"),
        ];
        fn check(&self) -> Result<(), Invalid> {
            int_in("points", self.points as i128, 3, 100)?;
            float_in("scale", self.scale, 0.0, 10.0)?;
            choice_in("mode", &self.mode, &["fast", "slow"])
        }
    }

    fn demo(src: &str) -> Result<Option<Demo>, ConfigError> {
        let doc = Doc::parse("f.toml", src).unwrap();
        let root = doc.root();
        let section = root.table("demo")?;
        let settings = Demo::read(section.as_ref())?;
        if let Some(s) = &section {
            s.finish()?;
        }
        root.finish()?;
        Ok(section.map(|_| settings))
    }

    #[test]
    fn typed_settings_read_values_and_defaults() {
        let d = demo("[demo]\npoints = 12\nscale = 2\n").unwrap().unwrap();
        assert_eq!(
            d,
            Demo {
                points: 12,
                scale: 2.0,
                mode: "fast".into()
            }
        );
        assert_eq!(demo("[demo]\n").unwrap(), Some(Demo::default()));
        // Absent section: the defaults.
        let doc = Doc::parse("f.toml", "").unwrap();
        assert_eq!(
            Demo::read(doc.root().table("demo").unwrap().as_ref()).unwrap(),
            Demo::default()
        );
    }

    #[test]
    fn typed_settings_reject_unknown_keys_like_section() {
        let e = demo("[demo]\npoints = 12\n\npoint = 3\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(4), "demo.point"));
        assert_eq!(
            e.message,
            "unknown key; allowed keys here: mode, points, scale"
        );
        assert_eq!(
            e.to_string(),
            "f.toml:4: `demo.point`: unknown key; allowed keys here: mode, points, scale"
        );
    }

    #[test]
    fn typed_settings_type_errors_name_the_key_line_and_allowed_values() {
        let e = demo("[demo]\npoints = 12\nscale = \"big\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(3), "demo.scale"));
        assert_eq!(
            e.message,
            "expected a number, found a string; allowed: numbers from 0 to 10"
        );
        // A value overlaid by `[quick]` is reported at its own line, under its own key.
        let mut doc = Doc::parse(
            "f.toml",
            "[demo]\npoints = 5\nscale = 1\n[quick.demo]\nscale = \"x\"\n",
        )
        .unwrap();
        doc.apply_quick(true).unwrap();
        let e = doc
            .root()
            .table("demo")
            .unwrap()
            .unwrap()
            .typed::<Demo>()
            .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(5), "demo.scale"));
        let e = demo("[demo]\npoints = 1.5\n").unwrap_err();
        assert_eq!(
            e.message,
            "expected an integer, found a float; allowed: integers from 3 to 100"
        );
        let e = demo("[demo]\n\npoints = -4\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(3), "demo.points"));
        assert_eq!(
            e.message,
            "value -4 out of range; allowed: integers from 3 to 100"
        );
        assert!(!e.to_string().contains('\n'), "one line: {e}");
        // beyond 64 bits: not "expected an integer, found an integer", and no 23-digit echo
        let e = demo("[demo]\npoints = 99999999999999999999999\n").unwrap_err();
        assert_eq!(
            e.message,
            "an integer too large to represent, out of range; allowed: integers from 3 to 100"
        );
    }

    #[test]
    fn typed_settings_range_errors_name_the_key_line_and_range() {
        let e = demo("[demo]\nmode = \"slow\"\npoints = 2\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(3), "demo.points"));
        assert_eq!(
            e.message,
            "value 2 out of range; allowed: integers from 3 to 100"
        );
        let e = demo("[demo]\nscale = 11.5\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(2), "demo.scale"));
        assert_eq!(
            e.message,
            "value 11.5 out of range; allowed: numbers from 0 to 10"
        );
        let e = demo("[demo]\nmode = \"medium\"\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.toml:2: `demo.mode`: unknown value \"medium\"; allowed: fast, slow"
        );
    }

    #[test]
    fn syntax_error_has_line() {
        let e = Doc::parse("f.toml", "a = 1\nb = [1,\n").err().unwrap();
        assert!(e.line.is_some());
        assert!(e.message.starts_with("not valid TOML"));
    }
}
