//! The n-gram index (`crate::ngram`): a picklable pyclass.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::args::{default_empty_tuple, default_int, int_at_least, type_name};
use super::arrays::new_array;
use super::texts::{checked_texts, text_views, texts_arg};

/// `n` for the n-gram index: an int >= 1 (astronomically large values behave as "no n-grams").
fn ngram_n_arg(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    int_at_least(obj, "n", 1)?;
    Ok(obj.extract::<usize>().unwrap_or(usize::MAX))
}

/// The bytes of an index state (`bytes`, `bytearray` or `memoryview`).
fn state_bytes(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let py = data.py();
    let builtins = py.import("builtins")?;
    let accepted = (
        builtins.getattr("bytes")?,
        builtins.getattr("bytearray")?,
        builtins.getattr("memoryview")?,
    );
    if !data.is_instance(accepted.into_pyobject(py)?.as_any())? {
        return Err(PyTypeError::new_err(format!(
            "index state must be bytes, got {}",
            type_name(data)
        )));
    }
    let raw = builtins.getattr("bytes")?.call1((data,))?;
    Ok(raw.cast::<PyBytes>()?.as_bytes().to_vec())
}

/// Postings from token n-grams to eval-text ids, built once and reusable (picklable).
/// `scan`'s arrays: best eval id, covered tokens, total tokens, and the shared n-grams.
type Scanned<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyList>,
);
/// `check`'s arrays: the exact match, then `scan`'s.
type Checked<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyList>,
);

#[pyclass(module = "whileai._native", name = "NgramIndex")]
pub(super) struct NgramIndex {
    pub(super) inner: crate::ngram::NgramIndex,
}

#[pymethods]
impl NgramIndex {
    #[new]
    #[pyo3(signature = (texts = default_empty_tuple(), n = default_int(8)), text_signature = "(texts=(), n=8)")]
    fn py_new(py: Python<'_>, texts: Py<PyAny>, n: Py<PyAny>) -> PyResult<Self> {
        let texts = texts_arg(texts.bind(py))?;
        let n = ngram_n_arg(n.bind(py))?;
        let inner = py.detach(|| crate::ngram::NgramIndex::new(&texts, n))?;
        Ok(NgramIndex { inner })
    }

    /// The n-gram length in tokens.
    #[getter]
    fn n(&self) -> usize {
        self.inner.n()
    }

    /// How many eval texts the index was built from (ids are 0..size-1).
    #[getter]
    fn size(&self) -> usize {
        self.inner.size()
    }

    fn __len__(&self) -> usize {
        self.inner.size()
    }

    fn __repr__(&self) -> String {
        format!(
            "NgramIndex(size={}, n={}, grams={})",
            self.inner.size(),
            self.inner.n(),
            self.inner.grams()
        )
    }

    /// Per text, the lowest eval id with the same normalised text, else -1.
    fn exact<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let texts = checked_texts(texts)?;
        let texts = text_views(&texts);
        let ids = py.detach(|| self.inner.exact(&texts));
        new_array(py, "q", &ids)
    }

    /// Per text: best eval id (-1 if none), covered tokens, total tokens, a shared n-gram.
    fn scan<'py>(&self, py: Python<'py>, texts: &Bound<'py, PyAny>) -> PyResult<Scanned<'py>> {
        let (_, best, covered, total, shared) = self.check(py, texts)?;
        Ok((best, covered, total, shared))
    }

    /// `exact` and `scan` from one tokenisation of each text: (exact, best, covered, total,
    /// shared), texts split across threads.
    fn check<'py>(&self, py: Python<'py>, texts: &Bound<'py, PyAny>) -> PyResult<Checked<'py>> {
        let texts = checked_texts(texts)?;
        let views = text_views(&texts);
        let checks = py.detach(|| self.inner.check(&views));
        let column = |f: fn(&crate::ngram::Check) -> i64| checks.iter().map(f).collect::<Vec<_>>();
        let shared = PyList::empty(py);
        for c in &checks {
            shared.append(PyList::new(py, &c.hit.shared)?)?;
        }
        Ok((
            new_array(py, "q", &column(|c| c.exact))?,
            new_array(py, "q", &column(|c| c.hit.best))?,
            new_array(py, "q", &column(|c| c.hit.covered))?,
            new_array(py, "q", &column(|c| c.hit.total))?,
            shared,
        ))
    }

    /// Serialise the index (little-endian u64 arrays behind a fixed header).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    /// Rebuild an index from `to_bytes()` output.
    #[classmethod]
    fn from_bytes(
        _cls: &Bound<'_, pyo3::types::PyType>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let raw = state_bytes(data)?;
        Ok(NgramIndex {
            inner: crate::ngram::NgramIndex::from_bytes(&raw)?,
        })
    }

    fn __getstate__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        self.to_bytes(py)
    }

    fn __setstate__(&mut self, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let raw = state_bytes(data)?;
        self.inner = crate::ngram::NgramIndex::from_bytes(&raw)?;
        Ok(())
    }

    /// Pickle as `NgramIndex.from_bytes(state)`.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let py = slf.py();
        let rebuild = slf.get_type().getattr("from_bytes")?;
        Ok((rebuild, (slf.borrow().to_bytes(py),)))
    }
}
