//! Conversions between Python objects and the core's lossless JSON values and byte inputs.

use std::borrow::Cow;
use std::fmt::Write as _;

use missionweaveprotocol::ArgumentError;
use missionweaveprotocol::json::{self, Value};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyString, PyTuple,
};

use crate::errors;

/// Deeper than any value the core parser accepts (`json::MAX_DEPTH`); also stops cycles.
const MAX_DEPTH: usize = 160;

/// Why a Python object has no JSON form.
#[derive(Debug)]
pub enum ToJsonError {
    /// Not a JSON-domain value (with a description), or too deep / cyclic.
    Unsupported(String),
    /// The JSON text was rejected by the strict parser (e.g. nesting beyond the core's limit).
    Parse(json::ParseError),
    /// A Python exception while reading the object.
    Python(PyErr),
}

impl From<PyErr> for ToJsonError {
    fn from(error: PyErr) -> Self {
        Self::Python(error)
    }
}

/// The core's one JSON string escaper.
fn write_string(text: &str, out: &mut String) {
    json::write_json_string(out, text);
}

/// Writes a Python `str` as a JSON string. A `str` holding a lone surrogate has no UTF-8 form:
/// it is written with every code unit escaped, so the core keeps the exact units and stage 5
/// refuses them (`CanonicalError::UnpairedSurrogate`) instead of a repair to U+FFFD.
fn write_py_str(value: &Bound<'_, PyString>, out: &mut String) -> Result<(), ToJsonError> {
    if let Ok(text) = value.to_cow() {
        write_string(&text, out);
        return Ok(());
    }
    let encoded = value.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
    let encoded = encoded.cast::<PyBytes>().map_err(PyErr::from)?;
    out.push('"');
    for unit in encoded.as_bytes().chunks_exact(2) {
        let _ = write!(out, "\\u{:04x}", u16::from_le_bytes([unit[0], unit[1]]));
    }
    out.push('"');
    Ok(())
}

/// A core string as a Python `str`, unpaired surrogates kept as the exact code units (Python
/// can hold them; the core refuses them at stage 5 when the value is canonicalized again).
fn string_to_python<'py>(py: Python<'py>, text: json::Str<'_>) -> PyResult<Bound<'py, PyAny>> {
    match text {
        json::Str::Text(text) => Ok(PyString::new(py, text).into_any()),
        json::Str::Wide(units) => {
            let bytes: Vec<u8> = units.iter().flat_map(|unit| unit.to_le_bytes()).collect();
            PyBytes::new(py, &bytes).call_method1("decode", ("utf-16-le", "surrogatepass"))
        }
    }
}

fn write_json(value: &Bound<'_, PyAny>, depth: usize, out: &mut String) -> Result<(), ToJsonError> {
    if depth > MAX_DEPTH {
        return Err(ToJsonError::Unsupported(
            "the value is nested too deeply (or contains itself)".into(),
        ));
    }
    if value.is_none() {
        out.push_str("null");
    } else if let Ok(flag) = value.cast::<PyBool>() {
        out.push_str(if flag.is_true() { "true" } else { "false" });
    } else if let Ok(int) = value.cast::<PyInt>() {
        match int.extract::<i64>() {
            Ok(small) => {
                let _ = write!(out, "{small}");
            }
            // Beyond `sys.get_int_max_str_digits()` Python refuses the decimal text itself.
            Err(_) => match int.str() {
                Ok(text) => out.push_str(&text.to_cow()?),
                Err(raised) if raised.is_instance_of::<PyException>(value.py()) => {
                    return Err(ToJsonError::Unsupported(format!(
                        "an int too large for Python to write as decimal text ({raised})"
                    )));
                }
                Err(raised) => return Err(ToJsonError::Python(raised)),
            },
        }
    } else if let Ok(float) = value.cast::<PyFloat>() {
        let number = float.value();
        if !number.is_finite() {
            return Err(ToJsonError::Unsupported(format!(
                "{number} is not a finite number"
            )));
        }
        let _ = write!(out, "{number:?}");
    } else if let Ok(text) = value.cast::<PyString>() {
        write_py_str(text, out)?;
    } else if let Ok(dict) = value.cast::<PyDict>() {
        out.push('{');
        for (index, (key, member)) in dict.iter().enumerate() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(ToJsonError::Unsupported(format!(
                    "object member names must be str, not {}",
                    type_name(&key)
                )));
            };
            if index > 0 {
                out.push(',');
            }
            write_py_str(key, out)?;
            out.push(':');
            write_json(&member, depth + 1, out)?;
        }
        out.push('}');
    } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        out.push('[');
        for (index, item) in value.try_iter()?.enumerate() {
            if index > 0 {
                out.push(',');
            }
            write_json(&item?, depth + 1, out)?;
        }
        out.push(']');
    } else {
        return Err(ToJsonError::Unsupported(format!(
            "{} is not a JSON value (use dict, list, tuple, str, int, float, bool or None)",
            type_name(value)
        )));
    }
    Ok(())
}

/// The Python type name of `value`, for messages.
pub fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "object".to_owned(), |name| name.to_string())
}

/// A JSON-domain Python value as a core value.
pub fn to_value(value: &Bound<'_, PyAny>) -> Result<Value, ToJsonError> {
    let mut text = String::with_capacity(256);
    write_json(value, 0, &mut text)?;
    json::parse(text.as_bytes()).map_err(ToJsonError::Parse)
}

/// A core value as plain Python objects: dict, list, str, int, float, bool, None. Integers stay
/// exact; other numbers become the nearest float.
pub fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    view_to_python(py, value.view())
}

/// [`to_python`] of a [`json::View`]: a parsed document converts without an owned tree.
pub fn view_to_python<'py>(py: Python<'py>, value: json::View<'_>) -> PyResult<Bound<'py, PyAny>> {
    use json::View;
    Ok(match value {
        View::Null => py.None().into_bound(py),
        View::Bool(flag) => PyBool::new(py, flag).to_owned().into_any(),
        View::Number(number) => {
            let text = number.as_text();
            if text.contains(['.', 'e', 'E']) {
                PyFloat::new(py, number.as_f64()).into_any()
            } else if let Ok(small) = text.parse::<i64>() {
                small.into_pyobject(py)?.into_any()
            } else {
                big_int(py, text)?
            }
        }
        View::String(text) => string_to_python(py, text)?,
        View::Array(items) => {
            let list = PyList::empty(py);
            for item in items.iter() {
                list.append(view_to_python(py, item)?)?;
            }
            list.into_any()
        }
        View::Object(object) => {
            let dict = PyDict::new(py);
            for (key, member) in object.iter() {
                dict.set_item(string_to_python(py, key)?, view_to_python(py, member)?)?;
            }
            dict.into_any()
        }
    })
}

static FROZEN_OBJECT: pyo3::sync::PyOnceLock<Py<pyo3::types::PyType>> =
    pyo3::sync::PyOnceLock::new();
static FROZEN_ARRAY: pyo3::sync::PyOnceLock<Py<pyo3::types::PyType>> =
    pyo3::sync::PyOnceLock::new();

/// [`view_to_python`], deep-frozen: objects are `_types.FrozenJsonObject` (an immutable
/// `dict`), arrays `_types.FrozenJsonArray` (an immutable `list`). The reference's `SignedDocument.document` is a frozen Mapping:
/// a verified document cannot be edited after verification.
pub fn view_to_frozen_python<'py>(
    py: Python<'py>,
    value: json::View<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    use json::View;
    Ok(match value {
        View::Array(items) => {
            let list = PyList::empty(py);
            for item in items.iter() {
                list.append(view_to_frozen_python(py, item)?)?;
            }
            FROZEN_ARRAY
                .import(py, "missionweaveprotocol._types", "FrozenJsonArray")?
                .call1((list,))?
        }
        View::Object(object) => {
            let dict = PyDict::new(py);
            for (key, member) in object.iter() {
                dict.set_item(
                    string_to_python(py, key)?,
                    view_to_frozen_python(py, member)?,
                )?;
            }
            FROZEN_OBJECT
                .import(py, "missionweaveprotocol._types", "FrozenJsonObject")?
                .call1((dict,))?
        }
        other => view_to_python(py, other)?,
    })
}

/// An integer outside `i64` as a Python `int`, exactly. Python refuses to convert decimal text
/// longer than `sys.get_int_max_str_digits()` (4300 by default; a guard against quadratic
/// conversion), so such a number — valid JSON the host cannot represent — is refused with
/// `InvalidInputError` (`PROTOCOL_VIOLATION`, `invalid-argument`) rather than a bare
/// `ValueError`; raising the limit with `sys.set_int_max_str_digits` admits it (docs/errors.md).
fn big_int<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.get_type::<PyInt>().call1((text,)).map_err(|raised| {
        host_failure(
            py,
            raised,
            ArgumentError::general(format!(
                "a JSON integer of {} digits exceeds the digits Python converts to int \
                 (sys.get_int_max_str_digits())",
                text.trim_start_matches('-').len()
            )),
        )
    })
}

/// A Python exception raised while reading an argument, as the library's typed error with the
/// original as its `__cause__`. `KeyboardInterrupt`, `SystemExit` and other non-`Exception`s
/// are returned unchanged so that they still stop the program.
pub fn host_failure(py: Python<'_>, raised: PyErr, error: ArgumentError) -> PyErr {
    if !raised.is_instance_of::<PyException>(py) {
        return raised;
    }
    let typed = errors::describe(py, &error);
    typed.set_cause(py, Some(raised));
    typed
}

/// Exact bytes from `bytes`, `bytearray` or `memoryview`; `str` only when `allow_str` (UTF-8).
/// Anything else is `InvalidInputError`.
pub fn bytes_arg<'a>(
    py: Python<'_>,
    value: &'a Bound<'_, PyAny>,
    what: &str,
    allow_str: bool,
) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(array) = value.cast::<PyByteArray>() {
        return Ok(Cow::Owned(array.to_vec()));
    }
    if value.is_instance_of::<PyMemoryView>() {
        // A released memoryview (or one whose exporter fails) raises `ValueError` here.
        let copy = py.get_type::<PyBytes>().call1((value,)).map_err(|raised| {
            let detail = format!("the memoryview cannot be read ({raised})");
            host_failure(py, raised, ArgumentError::new(what, detail))
        })?;
        let copy = copy.cast::<PyBytes>().map_err(PyErr::from)?;
        return Ok(Cow::Owned(copy.as_bytes().to_vec()));
    }
    if allow_str && let Ok(text) = value.cast::<PyString>() {
        return match text.to_cow() {
            Ok(text) => Ok(Cow::Owned(text.as_bytes().to_vec())),
            Err(_) => Err(errors::invalid_input(
                py,
                format!("{what}: the str holds an unpaired surrogate and has no UTF-8 form"),
            )),
        };
    }
    let accepted = if allow_str {
        "bytes, bytearray, memoryview or str"
    } else {
        "bytes, bytearray or memoryview"
    };
    Err(errors::invalid_input(
        py,
        format!("{what} must be {accepted}, not {}", type_name(value)),
    ))
}

/// A `str` argument, or `InvalidInputError`.
pub fn str_arg<'a>(
    py: Python<'_>,
    value: &'a Bound<'_, PyAny>,
    what: &str,
) -> PyResult<Cow<'a, str>> {
    match value.cast::<PyString>() {
        Ok(text) => text
            .to_cow()
            .map_err(|_| errors::invalid_input(py, format!("{what} holds an unpaired surrogate"))),
        Err(_) => Err(errors::invalid_input(
            py,
            format!("{what} must be str, not {}", type_name(value)),
        )),
    }
}

/// A non-negative `int` argument, or `InvalidInputError`.
pub fn count_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    if value.is_instance_of::<PyInt>()
        && !value.is_instance_of::<PyBool>()
        && let Ok(count) = value.extract::<usize>()
    {
        return Ok(count);
    }
    Err(errors::invalid_input(
        py,
        format!(
            "{what} must be a non-negative int, not {}",
            type_name(value)
        ),
    ))
}

/// A sequence of `str`, or `InvalidInputError`.
pub fn str_list_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<String>> {
    if value.is_instance_of::<PyString>() {
        return Err(errors::invalid_input(
            py,
            format!("{what} must be a sequence of str, not str"),
        ));
    }
    let items = value.try_iter().map_err(|_| {
        errors::invalid_input(
            py,
            format!("{what} must be a sequence of str, not {}", type_name(value)),
        )
    })?;
    items
        .map(|item| str_arg(py, &item?, what).map(Cow::into_owned))
        .collect()
}

pub fn plain_int(value: &Bound<'_, PyAny>) -> bool {
    value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>()
}

/// An `int` in `min..=max` (never `bool`), or `InvalidInputError`.
pub fn int_arg(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    what: &str,
    min: i64,
    max: i64,
) -> PyResult<i64> {
    if plain_int(value) {
        if let Ok(v) = value.extract::<i64>()
            && (min..=max).contains(&v)
        {
            return Ok(v);
        }
        return Err(errors::invalid_input(
            py,
            format!("{what} must be an int in {min}..={max}"),
        ));
    }
    Err(errors::invalid_input(
        py,
        format!("{what} must be an int, not {}", type_name(value)),
    ))
}

/// An `int` in `0..=max` (never `bool`), or `InvalidInputError`.
pub fn uint_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str, max: u64) -> PyResult<u64> {
    if plain_int(value) {
        if let Ok(v) = value.extract::<u64>()
            && v <= max
        {
            return Ok(v);
        }
        return Err(errors::invalid_input(
            py,
            format!("{what} must be an int in 0..={max}"),
        ));
    }
    Err(errors::invalid_input(
        py,
        format!("{what} must be an int, not {}", type_name(value)),
    ))
}

/// A `bool`, or `InvalidInputError`.
pub fn bool_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<bool> {
    value.cast::<PyBool>().map(|b| b.is_true()).map_err(|_| {
        errors::invalid_input(
            py,
            format!("{what} must be a bool, not {}", type_name(value)),
        )
    })
}

/// `None` (or an omitted argument) as `None`.
pub fn present<'a, 'py>(value: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    value.filter(|v| !v.is_none())
}

/// An optional `str` argument.
pub fn opt_str_arg(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<String>> {
    present(value)
        .map(|v| str_arg(py, v, what).map(Cow::into_owned))
        .transpose()
}

/// A persisted snapshot handed over as a Python value (the JSON form of a
/// `BudgetLedgerSnapshot`, a `SchedulerSnapshot`, a retry controller's snapshot): a `Mapping`,
/// read as JSON. Anything else (`None`, a number, a list) is API misuse, `InvalidInputError`
/// naming `what`, not a damaged snapshot: `SnapshotError` is for a mapping that does not hold
/// a valid one.
pub fn snapshot_mapping(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    what: &str,
    expected: &str,
) -> PyResult<Value> {
    if value.cast::<pyo3::types::PyMapping>().is_err() {
        return Err(errors::describe(
            py,
            &ArgumentError::new(
                what,
                format!("must be {expected}, not {}", type_name(value)),
            ),
        ));
    }
    crate::canonical_value(py, value)
}

/// Items of an iterable that is not a `str`, or `InvalidInputError`.
pub fn iter_arg<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Bound<'py, pyo3::types::PyIterator>> {
    if value.is_instance_of::<PyString>() {
        return Err(errors::invalid_input(
            py,
            format!("{what} must be an iterable, not str"),
        ));
    }
    value.try_iter().map_err(|_| {
        errors::invalid_input(
            py,
            format!("{what} must be an iterable, not {}", type_name(value)),
        )
    })
}

/// A `Mapping` argument's `(key, value)` pairs (via `.items()`), or `InvalidInputError`.
pub fn mapping_items<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    let items = value
        .call_method0("items")
        .and_then(|items| items.try_iter())
        .map_err(|_| {
            errors::invalid_input(
                py,
                format!("{what} must be a mapping, not {}", type_name(value)),
            )
        })?;
    items
        .map(|pair| pair.and_then(|p| p.extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()))
        .collect()
}

/// An instance of the native class `T` (named `class` in messages), or `InvalidInputError`.
pub fn typed<'a, 'py, T: pyo3::PyTypeCheck>(
    py: Python<'py>,
    value: &'a Bound<'py, PyAny>,
    what: &str,
    class: &str,
) -> PyResult<&'a Bound<'py, T>> {
    value.cast::<T>().map_err(|_| {
        errors::invalid_input(
            py,
            format!("{what} must be a {class}, not {}", type_name(value)),
        )
    })
}
