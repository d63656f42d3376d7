//! PTC-Lisp values to Python objects and back.
//!
//! Maps are dicts (keyword keys become `str`, and `str` keys become keywords), vectors and lists
//! are lists (tuples where the value must be hashable: a set item or a map key), sets are
//! frozensets, ratios `fractions.Fraction`, big integers `int`, big decimals `decimal.Decimal`,
//! days `datetime.date` and instants `datetime.datetime` in UTC, UUIDs `uuid.UUID`. Functions,
//! regexes, vars, lazy sequences and tagged literals have no Python value: converting one is a
//! `ptc.ConversionError` that says where it was.
//!
//! Both directions stop at the sandbox's value depth, so a deeply nested or self-containing
//! Python object is an error, not an overflowed stack; the walk goes on in new stack segments
//! as it deepens (`stacker`), so that depth fits in any thread's stack, in any build. (CPython
//! accepts calls on such segments: before 3.14 it counts its recursion, and from 3.14.1 on it
//! checks the stack pointer only while the pointer is inside the thread's own stack.)

use ptc_lisp::{BigInt, BigKind, BigNumber, Date, DateKind, Keyword, Map, Set, Uuid, Value};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    IntoPyDict, PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple,
    PyType,
};

use crate::errors;

/// How deep values may nest, as in the sandbox (`Limits::max_value_depth`'s default).
const MAX_DEPTH: usize = 1_000;

/// The stack a conversion keeps free before it moves on to a new segment, and the size of one.
const RED_ZONE: usize = 128 * 1024;
const SEGMENT: usize = 2 * 1024 * 1024;

/// Why a value could not convert, and where inside the value it is (innermost last).
pub(crate) struct ConvertError {
    message: String,
    path: Vec<String>,
    cause: Option<PyErr>,
}

impl ConvertError {
    fn new(message: impl Into<String>) -> ConvertError {
        ConvertError {
            message: message.into(),
            path: Vec::new(),
            cause: None,
        }
    }

    fn python(cause: PyErr) -> ConvertError {
        ConvertError {
            message: String::new(),
            path: Vec::new(),
            cause: Some(cause),
        }
    }

    /// The error, found inside the item at `step` of its container.
    fn at(mut self, step: impl FnOnce() -> String) -> ConvertError {
        self.path.push(step());
        self
    }

    /// The message, prefixed by where the value was under `root`.
    pub(crate) fn describe(&self, py: Python<'_>, root: &str) -> String {
        let mut place = root.to_string();
        for step in self.path.iter().rev() {
            place.push_str(step);
        }
        let message = match &self.cause {
            Some(cause) if self.message.is_empty() => errors::exception_text(py, cause),
            _ => self.message.clone(),
        };
        if place.is_empty() {
            message
        } else {
            format!("{place}: {message}")
        }
    }

    /// As a `ptc.ConversionError` (a Python error met on the way is re-raised as it was, when
    /// it is not about the value: a KeyboardInterrupt, say).
    pub(crate) fn into_pyerr(self, py: Python<'_>, root: &str) -> PyErr {
        if let Some(cause) = &self.cause
            && !cause.is_instance_of::<pyo3::exceptions::PyException>(py)
        {
            return cause.clone_ref(py);
        }
        let error = errors::conversion_error(py, &self.describe(py, root));
        if let Some(cause) = self.cause {
            error.set_cause(py, Some(cause));
        }
        error
    }
}

impl From<PyErr> for ConvertError {
    fn from(cause: PyErr) -> ConvertError {
        ConvertError::python(cause)
    }
}

type Converted<T> = Result<T, ConvertError>;

macro_rules! python_class {
    ($name:ident, $module:literal, $attr:literal) => {
        fn $name(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
            static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
            CLASS.import(py, $module, $attr)
        }
    };
}

python_class!(fraction_class, "fractions", "Fraction");
python_class!(decimal_class, "decimal", "Decimal");
python_class!(date_class, "datetime", "date");
python_class!(datetime_class, "datetime", "datetime");
python_class!(timedelta_class, "datetime", "timedelta");
python_class!(uuid_class, "uuid", "UUID");
python_class!(frozen_map_class, "ptc._values", "FrozenMap");

/// `datetime.timezone.utc`.
fn utc(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static UTC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    UTC.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("datetime")?
                .getattr("timezone")?
                .getattr("utc")?
                .unbind(),
        )
    })
    .map(|utc| utc.bind(py))
}

/// The Unix epoch as an aware datetime.
fn epoch(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static EPOCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    EPOCH
        .get_or_try_init(py, || {
            datetime_class(py)?
                .call((1970, 1, 1, 0, 0, 0, 0, utc(py)?), None)
                .map(Bound::unbind)
        })
        .map(|epoch| epoch.bind(py))
}

/// `value` as a Python object; `root` names it in an error (`the result`, `tool/x's argument`).
pub(crate) fn to_python<'py>(
    py: Python<'py>,
    value: &Value,
    root: &str,
) -> PyResult<Bound<'py, PyAny>> {
    value_to_python(py, value, false, 0).map_err(|e| e.into_pyerr(py, root))
}

fn value_to_python<'py>(
    py: Python<'py>,
    value: &Value,
    hashable: bool,
    depth: usize,
) -> Converted<Bound<'py, PyAny>> {
    stacker::maybe_grow(RED_ZONE, SEGMENT, || {
        value_to_python_here(py, value, hashable, depth)
    })
}

fn value_to_python_here<'py>(
    py: Python<'py>,
    value: &Value,
    hashable: bool,
    depth: usize,
) -> Converted<Bound<'py, PyAny>> {
    if depth > MAX_DEPTH {
        return Err(ConvertError::new(format!(
            "the value nests deeper than {MAX_DEPTH} levels"
        )));
    }
    Ok(match value {
        Value::Nil => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py).map_err(PyErr::from)?.into_any(),
        Value::Float(f) => PyFloat::new(py, *f).into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::Char(c) => PyString::new(py, c.encode_utf8(&mut [0; 4])).into_any(),
        Value::Keyword(k) => PyString::new(py, k.as_str()).into_any(),
        Value::Symbol(s) => PyString::new(py, s.as_str()).into_any(),
        Value::List(items) | Value::Vector(items) => {
            let mut converted = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                converted.push(
                    value_to_python(py, item, hashable, depth + 1)
                        .map_err(|e| e.at(|| format!("[{i}]")))?,
                );
            }
            if hashable {
                PyTuple::new(py, converted)?.into_any()
            } else {
                PyList::new(py, converted)?.into_any()
            }
        }
        Value::Set(items) => {
            let mut converted = Vec::with_capacity(items.len());
            for item in items.iter() {
                converted.push(
                    value_to_python(py, item, true, depth + 1)
                        .map_err(|e| e.at(|| format!("[item {}]", ptc_lisp::pr_str(item))))?,
                );
            }
            PyFrozenSet::new(py, converted)?.into_any()
        }
        Value::Map(map) => {
            let dict = map_to_dict(py, map, depth)?;
            if hashable {
                frozen_map_class(py)?.call1((dict,))?
            } else {
                dict.into_any()
            }
        }
        Value::Big(big) => match big.kind() {
            BigKind::Int(i) => i.into_pyobject(py)?.into_any(),
            BigKind::Ratio(r) => fraction_class(py)?
                .call1((r.numer().into_pyobject(py)?, r.denom().into_pyobject(py)?))?,
            BigKind::Decimal(d) => decimal_class(py)?.call1((d.to_string(),))?,
        },
        Value::Date(date) => date_to_python(py, *date)?,
        Value::Uuid(uuid) => uuid_class(py)?.call1((uuid.to_text(),))?,
        Value::Fn(_) | Value::Regex(_) | Value::Var(_) | Value::Lazy(_) | Value::Tagged(_) => {
            return Err(ConvertError::new(format!(
                "{} has no Python value (a {}); return or pass data instead",
                ptc_lisp::pr_str(value),
                value.type_name()
            )));
        }
    })
}

fn map_to_dict<'py>(py: Python<'py>, map: &Map, depth: usize) -> Converted<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, item) in map.iter() {
        let place = || format!("[{}]", ptc_lisp::pr_str(key));
        let k = value_to_python(py, key, true, depth + 1).map_err(|e| e.at(place))?;
        let v = value_to_python(py, item, false, depth + 1).map_err(|e| e.at(place))?;
        dict.set_item(k, v)?;
    }
    if dict.len() != map.len() {
        return Err(ConvertError::new(format!(
            "the map {} has keys that are one key in Python (a keyword and the string of its name, \
             say)",
            ptc_lisp::pr_str(&Value::Map(map.clone()))
        )));
    }
    Ok(dict)
}

fn date_to_python(py: Python<'_>, date: Date) -> Converted<Bound<'_, PyAny>> {
    match date.kind() {
        DateKind::Day(_) => {
            let (y, m, d) = date.ymd();
            if !(1..=9999).contains(&y) {
                return Err(ConvertError::new(format!(
                    "{} is outside the years Python's datetime.date holds (1 to 9999)",
                    date.iso_day()
                )));
            }
            Ok(date_class(py)?.call1((y, m, d))?)
        }
        DateKind::Instant(millis) => {
            let delta = timedelta_class(py)?
                .call((), Some(&[("milliseconds", millis)].into_py_dict(py)?))?;
            Ok(epoch(py)?.call_method1("__add__", (delta,))?)
        }
    }
}

/// `obj` as a value; `root` names it in an error (`data/products`, `the value tool/x returned`).
pub(crate) fn from_python(py: Python<'_>, obj: &Bound<'_, PyAny>, root: &str) -> PyResult<Value> {
    python_to_value(obj, 0).map_err(|e| e.into_pyerr(py, root))
}

/// A map key: a `str` becomes a keyword, anything else converts as a value.
fn key_to_value(key: &Bound<'_, PyAny>, depth: usize) -> Converted<Value> {
    match key.cast::<PyString>() {
        Ok(text) => Ok(Value::Keyword(Keyword::new(&text.to_cow()?))),
        Err(_) => python_to_value(key, depth),
    }
}

fn python_to_value(obj: &Bound<'_, PyAny>, depth: usize) -> Converted<Value> {
    stacker::maybe_grow(RED_ZONE, SEGMENT, || python_to_value_here(obj, depth))
}

fn python_to_value_here(obj: &Bound<'_, PyAny>, depth: usize) -> Converted<Value> {
    let py = obj.py();
    if depth > MAX_DEPTH {
        return Err(ConvertError::new(format!(
            "the value nests deeper than {MAX_DEPTH} levels (or contains itself)"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Nil);
    }
    if let Ok(text) = obj.cast::<PyString>() {
        return Ok(Value::string(text.to_cow()?));
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(int) = obj.cast::<PyInt>() {
        return Ok(match int.extract::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => BigNumber::integer(int.extract::<BigInt>()?),
        });
    }
    if let Ok(float) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(float.value()));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut pairs = Vec::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            let place = || {
                format!(
                    "[{}]",
                    key.repr().map(|r| r.to_string()).unwrap_or_default()
                )
            };
            let k = key_to_value(&key, depth + 1).map_err(|e| e.at(place))?;
            let v = python_to_value(&item, depth + 1).map_err(|e| e.at(place))?;
            pairs.push((k, v));
        }
        return Ok(Value::map(pairs));
    }
    if let Ok(list) = obj.cast::<PyList>() {
        return sequence(list.iter(), list.len(), depth);
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        return sequence(tuple.iter(), tuple.len(), depth);
    }
    if let Ok(set) = obj.cast::<PySet>() {
        return collection_set(set.iter(), depth);
    }
    if let Ok(set) = obj.cast::<PyFrozenSet>() {
        return collection_set(set.iter(), depth);
    }
    if obj.is_instance(fraction_class(py)?.as_any())? {
        let numerator: BigInt = obj.getattr("numerator")?.extract()?;
        let denominator: BigInt = obj.getattr("denominator")?.extract()?;
        return BigNumber::ratio(numerator, denominator)
            .map(|v| match v {
                // A whole Fraction is an integer, the smallest that holds it.
                Value::Big(b) => match b.kind() {
                    BigKind::Int(i) => BigNumber::integer(i.clone()),
                    _ => Value::Big(b),
                },
                other => other,
            })
            .ok_or_else(|| ConvertError::new("a Fraction with a zero denominator"));
    }
    if obj.is_instance(decimal_class(py)?.as_any())? {
        return decimal_value(obj);
    }
    if obj.is_instance(datetime_class(py)?.as_any())? {
        return instant_value(obj);
    }
    if obj.is_instance(date_class(py)?.as_any())? {
        let (y, m, d): (i64, i64, i64) = (
            obj.getattr("year")?.extract()?,
            obj.getattr("month")?.extract()?,
            obj.getattr("day")?.extract()?,
        );
        return Date::from_ymd(y, m, d)
            .map(Value::Date)
            .ok_or_else(|| ConvertError::new("a date outside the sandbox's calendar"));
    }
    if obj.is_instance(uuid_class(py)?.as_any())? {
        let text: String = obj.str()?.extract()?;
        return Uuid::parse(&text)
            .map(Value::Uuid)
            .ok_or_else(|| ConvertError::new(format!("{text} is not a UUID")));
    }
    if obj.is_instance(frozen_map_class(py)?.as_any())? {
        return python_to_value(&obj.call_method0("to_dict")?, depth);
    }
    let type_name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".to_string());
    Err(ConvertError::new(format!(
        "a {type_name} is not data: pass None, bool, int, float, str, dict, list, tuple, set, \
         frozenset, Fraction, Decimal, date, datetime or UUID (convert other objects first, e.g. \
         a dataclass with dataclasses.asdict)"
    )))
}

fn sequence<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    len: usize,
    depth: usize,
) -> Converted<Value> {
    let mut values = Vec::with_capacity(len);
    for (i, item) in items.enumerate() {
        values.push(python_to_value(&item, depth + 1).map_err(|e| e.at(|| format!("[{i}]")))?);
    }
    Ok(Value::vector(values))
}

fn collection_set<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    depth: usize,
) -> Converted<Value> {
    let mut values = Vec::new();
    for item in items {
        let place = || {
            format!(
                "[item {}]",
                item.repr().map(|r| r.to_string()).unwrap_or_default()
            )
        };
        values.push(python_to_value(&item, depth + 1).map_err(|e| e.at(place))?);
    }
    Ok(Value::Set(Set::from_items(values)))
}

/// A `decimal.Decimal`: its digits and exponent, as `unscaled × 10^-scale`.
fn decimal_value(obj: &Bound<'_, PyAny>) -> Converted<Value> {
    let finite: bool = obj.call_method0("is_finite")?.extract()?;
    if !finite {
        return Err(ConvertError::new(format!(
            "Decimal('{}') is not a finite number",
            obj.str()?
        )));
    }
    let (sign, digits, exponent): (i64, Vec<u8>, i64) = obj.call_method0("as_tuple")?.extract()?;
    let mut unscaled = BigInt::from(0);
    for digit in digits {
        unscaled = unscaled * 10 + BigInt::from(digit);
    }
    if sign == 1 {
        unscaled = -unscaled;
    }
    Ok(BigNumber::decimal(unscaled, -exponent))
}

/// A `datetime.datetime` as an instant, in milliseconds since the epoch (a naive one is taken
/// to be in UTC).
fn instant_value(obj: &Bound<'_, PyAny>) -> Converted<Value> {
    let py = obj.py();
    let aware = if obj.getattr("tzinfo")?.is_none() {
        obj.call_method(
            "replace",
            (),
            Some(&[("tzinfo", utc(py)?)].into_py_dict(py)?),
        )?
    } else {
        obj.clone()
    };
    let delta = aware.call_method1("__sub__", (epoch(py)?,))?;
    let unit = timedelta_class(py)?.call((), Some(&[("milliseconds", 1)].into_py_dict(py)?))?;
    let millis: i64 = delta.call_method1("__floordiv__", (unit,))?.extract()?;
    Date::instant(millis)
        .map(Value::Date)
        .ok_or_else(|| ConvertError::new("a datetime outside the sandbox's calendar"))
}
