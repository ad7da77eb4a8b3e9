//! Argument checks and defaults shared by the wrappers: the same rules and messages as
//! `whileai._pure` (rng.check_seed, check_bound, check_count, tokenize.check_texts).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString, PyTuple};

/// An optional argument that tells "not passed" apart from an explicit `None` (which the pure
/// backend checks like any other value).
pub(super) enum Arg<'py> {
    Absent,
    Given(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Arg<'py> {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Arg::Given(obj.to_owned()))
    }
}

/// `type(obj).__name__`.
pub(super) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".to_owned())
}

/// `f"{obj}"`.
pub(super) fn formatted(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(obj.call_method1("__format__", ("",))?.str()?.to_string())
}

/// An int that is not a bool, else `TypeError("<what> must be an int, got <type>")`.
pub(super) fn require_int(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int, got {}",
            type_name(obj)
        )));
    }
    Ok(())
}

/// A seed (or unit): any Python int, reduced modulo 2**64.
pub(super) fn seed_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    require_int(obj, what)?;
    obj.bitand(u64::MAX)?.extract::<u64>()
}

/// An int (not a bool) of at least `min`: else `TypeError("<what> must be an int, ...")` or
/// `ValueError("<what> must be at least <min>, got <obj>")`.
pub(super) fn int_at_least(obj: &Bound<'_, PyAny>, what: &str, min: i64) -> PyResult<()> {
    require_int(obj, what)?;
    at_least(obj, what, min)
}

/// `ValueError("<what> must be at least <min>, got <obj>")` when `obj < min`.
pub(super) fn at_least(obj: &Bound<'_, PyAny>, what: &str, min: i64) -> PyResult<()> {
    if obj.lt(min)? {
        return Err(PyValueError::new_err(format!(
            "{what} must be at least {min}, got {}",
            formatted(obj)?
        )));
    }
    Ok(())
}

/// A bound for bounded ints: an int in [1, 2**64).
pub(super) fn bound_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    int_at_least(obj, "bound", 1)?;
    if obj.gt(u64::MAX)? {
        return Err(PyValueError::new_err(format!(
            "bound must be below 2**64, got {}",
            formatted(obj)?
        )));
    }
    obj.extract::<u64>()
}

/// A count: an int >= 0.
pub(super) fn count_arg(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    named_count_arg(obj, "count")
}

/// A count named in its errors: `TypeError("<what> must be an int, ...")`, `ValueError(...)`.
pub(super) fn named_count_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    int_at_least(obj, what, 0)?;
    obj.extract::<usize>()
}

/// A text: a `str`, else `TypeError("<what> must be str, got <type>")`.
pub(super) fn str_arg<'a, 'py>(
    obj: &'a Bound<'py, PyAny>,
    what: &str,
) -> PyResult<&'a Bound<'py, PyString>> {
    obj.cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be str, got {}", type_name(obj))))
}

/// A default argument value as a Python object, so an explicit `None` is still checked (and
/// refused) exactly like the pure backend refuses it.
pub(super) fn default_int(value: i64) -> Py<PyAny> {
    Python::attach(|py| value.into_pyobject(py).map(|v| v.into_any().unbind()))
        .unwrap_or_else(|never| match never {})
}

pub(super) fn default_empty_tuple() -> Py<PyAny> {
    Python::attach(|py| PyTuple::empty(py).into_any().unbind())
}

pub(super) fn default_float(value: f64) -> Py<PyAny> {
    Python::attach(|py| pyo3::types::PyFloat::new(py, value).into_any().unbind())
}
