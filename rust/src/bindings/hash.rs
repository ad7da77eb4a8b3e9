//! The stable text hash (`crate::hash`).

use pyo3::prelude::*;

use super::args::str_arg;
use crate::hash as hash_kernel;

/// The stable 64-bit hash of `text`'s UTF-8 bytes.
#[pyfunction]
pub(super) fn hash64(text: &Bound<'_, PyAny>) -> PyResult<u64> {
    // `to_str` raises the same UnicodeEncodeError as `str.encode("utf-8")` for lone surrogates.
    let text = str_arg(text, "text")?.to_str()?;
    Ok(hash_kernel::hash64(text.as_bytes()))
}
