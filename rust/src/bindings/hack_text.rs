//! hack_scan's text features (`crate::hack_text`, docs/kernels.md "Hack-scan text features").

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use super::args::require_int;
use super::arrays::filled_array;
use super::buffers::int_buffer;
use super::texts::{checked_texts, wtf8_texts};

/// A kernel's term bytes as a Python `str` (decoded with `surrogatepass` when not UTF-8).
fn term_str<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(PyString::new(py, s).into_any()),
        Err(_) => PyBytes::new(py, bytes).call_method1("decode", ("utf-8", "surrogatepass")),
    }
}

/// `(counts, vocab, ptr, rows)` as Python objects.
type TextFeaturesOut<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyList>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
);

/// hack_scan's text features: `(counts, vocab, ptr, rows)` (see `_native.pyi`); `lower`
/// lowercases the texts first (by the pinned table, on every core).
#[pyfunction]
#[pyo3(signature = (texts, final_chars, top, lower = false))]
pub(super) fn hack_text_features<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    final_chars: &Bound<'py, PyAny>,
    top: &Bound<'py, PyAny>,
    lower: bool,
) -> PyResult<TextFeaturesOut<'py>> {
    let texts = checked_texts(texts)?;
    let final_chars = int_buffer(final_chars)?;
    require_int(top, "top")?;
    let top: i64 = top.extract()?;
    let views = wtf8_texts(&texts)?;
    let got = py.detach(|| {
        if lower {
            let lowered = crate::hack_text::lower::lower_texts(&views);
            crate::hack_text::hack_text_features(&lowered, &final_chars, top)
        } else {
            crate::hack_text::hack_text_features(&views, &final_chars, top)
        }
    })?;
    let vocab = PyList::empty(py);
    for term in &got.vocab {
        vocab.append(term_str(py, term)?)?;
    }
    Ok((
        filled_array(py, "q", &got.counts)?,
        vocab,
        filled_array(py, "q", &got.ptr)?,
        filled_array(py, "q", &got.rows)?,
    ))
}
