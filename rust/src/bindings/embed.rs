//! The hash embedder (`crate::embed`): vectors and bucket counts as `array.array`.

use std::borrow::Cow;

use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;

use super::args::{formatted, int_at_least, Arg};
use super::arrays::{array_for_kernel, new_array};
use super::texts::{checked_texts, text_views};
use crate::embed as embed_kernel;

/// The embedding dim: an int >= 1. A dim too large to allocate is a `MemoryError`.
fn dim_arg(obj: &Bound<'_, PyAny>, rows: usize) -> PyResult<usize> {
    int_at_least(obj, "dim", 1)?;
    if rows == 0 {
        // No rows: any dim gives an empty buffer, as in the pure backend.
        return Ok(obj.extract::<usize>().unwrap_or(1));
    }
    let too_big = || {
        PyMemoryError::new_err(format!(
            "dim={} with {rows} texts needs more memory than can be allocated",
            formatted(obj).unwrap_or_default()
        ))
    };
    let dim = obj.extract::<usize>().map_err(|_| too_big())?;
    match rows.checked_mul(dim).and_then(|n| n.checked_mul(8)) {
        Some(bytes) if bytes <= isize::MAX as usize => Ok(dim),
        _ => Err(too_big()),
    }
}

/// The L2-normalised float64 embeddings of `texts`, row-major, as `array('d')`.
#[pyfunction]
#[pyo3(signature = (texts, dim = Arg::Absent), text_signature = "(texts, dim=256)")]
pub(super) fn embed<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    dim: Arg<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    rows_array(
        py,
        texts,
        dim,
        "d",
        |texts, dim, out| embed_kernel::embed_into(texts, dim, out),
        |texts, dim| embed_kernel::embed(texts, dim),
    )
}

/// The integer bucket counts of `texts`, row-major, as `array('q')`.
#[pyfunction]
#[pyo3(signature = (texts, dim = Arg::Absent), text_signature = "(texts, dim=256)")]
pub(super) fn embed_counts<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    dim: Arg<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    rows_array(
        py,
        texts,
        dim,
        "q",
        |texts, dim, out| embed_kernel::embed_counts_into(texts, dim, out),
        |texts, dim| embed_kernel::embed_counts(texts, dim),
    )
}

/// One row of `dim` values per text, row-major, as `array(typecode)`: written by `fill` straight
/// into the new array's buffer, or made by `make` and copied when that buffer is not aligned.
/// Both run without the GIL.
fn rows_array<'py, T: Copy + Send>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    dim: Arg<'py>,
    typecode: &str,
    fill: impl Fn(&[Cow<'_, str>], usize, &mut [T]) + Sync,
    make: impl Fn(&[Cow<'_, str>], usize) -> Vec<T> + Sync,
) -> PyResult<Bound<'py, PyAny>> {
    let texts = checked_texts(texts)?;
    let dim = match dim {
        Arg::Given(dim) => dim_arg(&dim, texts.len())?,
        Arg::Absent => 256,
    };
    let texts = text_views(&texts);
    let len = texts.len() * dim;
    if let Some((array, address)) = array_for_kernel::<T>(py, typecode, len)? {
        py.detach(|| {
            // SAFETY: `address` is the aligned buffer of `len` T of a fresh array that no
            // other code can reach (only this function holds it) until it is returned.
            let out = unsafe { std::slice::from_raw_parts_mut(address as *mut T, len) };
            fill(&texts, dim, out);
        });
        return Ok(array);
    }
    let values = py.detach(|| make(&texts, dim));
    new_array(py, typecode, &values)
}
