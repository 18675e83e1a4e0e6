//! Method and kernel parameters: declared once ([`ParamDoc`]: name, type, range, default), read from any
//! source ([`RawValue`]: command-line text, a TOML value, a number from Python) and checked once, when the
//! [`Params`] are built. After that every value is typed and within its range; nothing is parsed again.

use std::collections::BTreeMap;
use std::fmt;

use rfx_core::RfxError;

use crate::RegistryError;

/// The type and allowed values of a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// An integer in `min..=max`.
    Int {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// A finite real in `[min, max]`.
    Float {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// One of the listed words.
    Choice(&'static [&'static str]),
    /// A comma-separated list of finite reals $\ge 0$ (e.g. Taylor coefficients).
    FloatList,
}

impl fmt::Display for ParamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamKind::Int { min, max } => write!(f, "integer in {min}..={max}"),
            ParamKind::Float { min, max } => write!(f, "real in [{min}, {max}]"),
            ParamKind::Choice(c) => write!(f, "one of {}", c.join(" | ")),
            ParamKind::FloatList => write!(f, "comma-separated reals >= 0"),
        }
    }
}

/// One parameter of a method or kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamDoc {
    /// Name used in `--param name=value`, in `method(name=value)` of a TOML sweep and as a keyword in Python.
    pub name: &'static str,
    /// Allowed values.
    pub kind: ParamKind,
    /// Default, as it would be written on the command line.
    pub default: &'static str,
    /// What it means.
    pub about: &'static str,
}

/// A parameter value as it arrives, before it is checked: text (command line, `method(k=v)` in a TOML
/// sweep) or a typed value (a TOML setting of a kind, a Python argument).
#[derive(Debug, Clone, PartialEq)]
pub enum RawValue {
    /// Text, parsed according to the parameter's type.
    Text(String),
    /// An integer.
    Int(i64),
    /// A real number.
    Float(f64),
    /// A boolean (for choices `false | true`).
    Bool(bool),
    /// A list of reals.
    List(Vec<f64>),
}

impl fmt::Display for RawValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RawValue::Text(s) => f.write_str(s),
            RawValue::Int(i) => write!(f, "{i}"),
            RawValue::Float(x) => write!(f, "{x}"),
            RawValue::Bool(b) => write!(f, "{b}"),
            RawValue::List(v) => write!(f, "{}", join_list(v)),
        }
    }
}

impl From<&str> for RawValue {
    fn from(s: &str) -> Self {
        RawValue::Text(s.to_string())
    }
}
impl From<String> for RawValue {
    fn from(s: String) -> Self {
        RawValue::Text(s)
    }
}
impl From<f64> for RawValue {
    fn from(x: f64) -> Self {
        RawValue::Float(x)
    }
}
impl From<usize> for RawValue {
    fn from(i: usize) -> Self {
        RawValue::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}
impl From<i64> for RawValue {
    fn from(i: i64) -> Self {
        RawValue::Int(i)
    }
}
impl From<bool> for RawValue {
    fn from(b: bool) -> Self {
        RawValue::Bool(b)
    }
}

/// A checked parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer within its range.
    Int(i64),
    /// A finite real within its range.
    Float(f64),
    /// One of the declared words.
    Choice(&'static str),
    /// Finite reals $\ge 0$, at least one.
    List(Vec<f64>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Choice(c) => f.write_str(c),
            Value::List(v) => f.write_str(&join_list(v)),
        }
    }
}

fn join_list(v: &[f64]) -> String {
    v.iter().map(f64::to_string).collect::<Vec<_>>().join(",")
}

fn parse_list(v: &str) -> Option<Vec<f64>> {
    let xs: Vec<f64> = v
        .split(',')
        .map(|s| s.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .ok()?;
    valid_list(xs)
}

fn valid_list(xs: Vec<f64>) -> Option<Vec<f64>> {
    (!xs.is_empty() && xs.iter().all(|x| x.is_finite() && *x >= 0.0)).then_some(xs)
}

impl ParamDoc {
    /// Checks `raw` against the declared type and range: the typed value, or the declared kind (the
    /// allowed values) as the error.
    pub fn check(&self, raw: &RawValue) -> Result<Value, ParamKind> {
        let bad = || self.kind;
        match self.kind {
            ParamKind::Int { min, max } => {
                let x = match raw {
                    RawValue::Int(i) => Some(*i),
                    RawValue::Text(s) => s.trim().parse::<i64>().ok(),
                    _ => None,
                };
                x.filter(|x| (min..=max).contains(x))
                    .map(Value::Int)
                    .ok_or_else(bad)
            }
            ParamKind::Float { min, max } => {
                let x = match raw {
                    RawValue::Float(x) => Some(*x),
                    RawValue::Int(i) => Some(*i as f64),
                    RawValue::Text(s) => s.trim().parse::<f64>().ok(),
                    _ => None,
                };
                x.filter(|x| x.is_finite() && *x >= min && *x <= max)
                    .map(Value::Float)
                    .ok_or_else(bad)
            }
            ParamKind::Choice(words) => {
                let text = match raw {
                    RawValue::Text(s) => s.trim().to_string(),
                    RawValue::Bool(b) => b.to_string(),
                    _ => return Err(bad()),
                };
                words
                    .iter()
                    .find(|w| **w == text)
                    .map(|w| Value::Choice(w))
                    .ok_or_else(bad)
            }
            ParamKind::FloatList => match raw {
                RawValue::Text(s) => parse_list(s),
                RawValue::List(v) => valid_list(v.clone()),
                _ => None,
            }
            .map(Value::List)
            .ok_or_else(bad),
        }
    }
}

/// Checked parameter values of one method or kernel, defaults filled in (built by [`Params::parse`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    values: BTreeMap<&'static str, Value>,
}

impl Params {
    /// Checks `given` (`name`, `value`) pairs against `docs`: unknown names, repeated names and values
    /// outside the allowed range are errors naming the parameter and the allowed values; missing ones take
    /// their defaults. `owner` names the method or kernel in messages.
    pub fn parse<K: AsRef<str>>(
        docs: &[ParamDoc],
        given: &[(K, RawValue)],
        owner: &str,
    ) -> Result<Self, RegistryError> {
        let mut values = BTreeMap::new();
        for (k, v) in given {
            let k = k.as_ref();
            let Some(doc) = docs.iter().find(|d| d.name == k) else {
                let allowed: Vec<&str> = docs.iter().map(|d| d.name).collect();
                return Err(RegistryError::UnknownParameter {
                    owner: owner.to_string(),
                    parameter: k.to_string(),
                    allowed: if allowed.is_empty() {
                        "none".to_string()
                    } else {
                        allowed.join(", ")
                    },
                });
            };
            if values.contains_key(doc.name) {
                return Err(RegistryError::RepeatedParameter {
                    owner: owner.to_string(),
                    parameter: k.to_string(),
                });
            }
            let value = doc.check(v).map_err(|kind| RegistryError::InvalidValue {
                owner: owner.to_string(),
                parameter: k.to_string(),
                value: v.to_string(),
                allowed: kind.to_string(),
            })?;
            values.insert(doc.name, value);
        }
        for d in docs {
            if !values.contains_key(d.name) {
                let value = d.check(&RawValue::from(d.default)).map_err(|kind| {
                    RegistryError::InvalidDefault {
                        owner: owner.to_string(),
                        parameter: d.name.to_string(),
                        value: d.default.to_string(),
                        allowed: kind.to_string(),
                    }
                })?;
                values.insert(d.name, value);
            }
        }
        Ok(Params { values })
    }

    /// [`Params::parse`] of text pairs (`--param k=v`, `method(k=v)`).
    pub fn parse_text(
        docs: &[ParamDoc],
        given: &[(String, String)],
        owner: &str,
    ) -> Result<Self, RegistryError> {
        let raw: Vec<(&str, RawValue)> = given
            .iter()
            .map(|(k, v)| (k.as_str(), RawValue::from(v.as_str())))
            .collect();
        Params::parse(docs, &raw, owner)
    }

    fn get(&self, name: &str) -> rfx_core::Result<&Value> {
        self.values
            .get(name)
            .ok_or_else(|| RfxError::invalid("parameter", name, "a declared parameter"))
    }

    fn wrong(name: &str, v: &Value, what: &str) -> RfxError {
        RfxError::invalid(name, v, what)
    }

    /// An integer parameter (declared $\ge 0$).
    pub fn int(&self, name: &str) -> rfx_core::Result<usize> {
        match self.get(name)? {
            Value::Int(i) => usize::try_from(*i)
                .map_err(|_| Self::wrong(name, &Value::Int(*i), "an integer >= 0")),
            v => Err(Self::wrong(name, v, "an integer parameter")),
        }
    }

    /// A real parameter.
    pub fn float(&self, name: &str) -> rfx_core::Result<f64> {
        match self.get(name)? {
            Value::Float(x) => Ok(*x),
            v => Err(Self::wrong(name, v, "a real parameter")),
        }
    }

    /// A choice parameter.
    pub fn choice(&self, name: &str) -> rfx_core::Result<&'static str> {
        match self.get(name)? {
            Value::Choice(c) => Ok(c),
            v => Err(Self::wrong(name, v, "a choice parameter")),
        }
    }

    /// A boolean choice (`false | true`).
    pub fn flag(&self, name: &str) -> rfx_core::Result<bool> {
        Ok(self.choice(name)? == "true")
    }

    /// A list parameter.
    pub fn list(&self, name: &str) -> rfx_core::Result<&[f64]> {
        match self.get(name)? {
            Value::List(v) => Ok(v),
            v => Err(Self::wrong(name, v, "a list parameter")),
        }
    }

    /// Whether parameter `name` is declared.
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// `name=value;...` in name order (for the metadata of `rfx features` and messages).
    pub fn describe(&self) -> String {
        self.values
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";")
    }
}
