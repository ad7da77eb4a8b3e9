//! The tokenizer (`crate::tokenize`).

use pyo3::prelude::*;
use pyo3::types::PyList;

use super::args::str_arg;
use crate::tokenize as tokenize_kernel;

/// The tokens of `text`; with `numbers` true, an all-digit token becomes `<num>`.
#[pyfunction]
#[pyo3(signature = (text, numbers = None), text_signature = "(text, numbers=False)")]
pub(super) fn tokenize<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    numbers: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let text = str_arg(text, "text")?.to_string_lossy().into_owned();
    let numbers = match numbers {
        Some(flag) => flag.is_truthy()?,
        None => false,
    };
    let tokens = py.detach(|| tokenize_kernel::tokenize(&text, numbers));
    PyList::new(py, tokens)
}
