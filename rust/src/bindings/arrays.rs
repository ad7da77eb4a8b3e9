//! Building `array.array` results from the kernels' output.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::buffers::{aligned_buffer, array_type};

/// An `array.array(typecode)` holding the raw native-endian bytes of `values`.
pub(super) fn new_array<'py, T: Copy>(
    py: Python<'py>,
    typecode: &str,
    values: &[T],
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `T` is f64 or i64 here: plain data without padding, every byte initialised.
    let bytes = unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    };
    let array = array_type(py)?.call1((typecode,))?;
    array.call_method1("frombytes", (PyBytes::new(py, bytes),))?;
    Ok(array)
}

/// A new `array.array(typecode)` (`"d"` or `"q"`) of `len` zeros and a pointer to its buffer,
/// for a kernel to fill in place (one output buffer instead of three: kernel, `bytes`, array).
/// `None` when the buffer is not aligned for `T` (then use [`new_array`]).
pub(super) fn array_for_kernel<'py, T>(
    py: Python<'py>,
    typecode: &str,
    len: usize,
) -> PyResult<Option<(Bound<'py, PyAny>, usize)>> {
    let zero = if typecode == "d" {
        0f64.into_pyobject(py)?.into_any()
    } else {
        0i64.into_pyobject(py)?.into_any()
    };
    let array = array_type(py)?.call1((typecode, (zero,)))?.mul(len)?;
    match aligned_buffer::<T>(&array)? {
        Some((address, items)) if items == len => Ok(Some((array, address))),
        _ => Ok(None),
    }
}

/// An `array.array(typecode)` of `values`, filled in place (no intermediate `bytes`).
pub(super) fn filled_array<'py, T: Copy>(
    py: Python<'py>,
    typecode: &str,
    values: &[T],
) -> PyResult<Bound<'py, PyAny>> {
    if let Some((array, address)) = array_for_kernel::<T>(py, typecode, values.len())? {
        if !values.is_empty() {
            // SAFETY: a fresh, aligned buffer of `values.len()` T that only this function holds.
            let out = unsafe { std::slice::from_raw_parts_mut(address as *mut T, values.len()) };
            out.copy_from_slice(values);
        }
        return Ok(array);
    }
    new_array(py, typecode, values)
}
