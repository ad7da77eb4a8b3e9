//! The Python module `whileai._native`: every `#[pyfunction]` and `#[pyclass]`, one file per
//! kernel family (as `whileai._pure` has one module per kernel). The wrappers check and copy
//! inputs exactly as the pure backend does (same exception class, same message, same order of
//! checks), release the GIL around the kernel, and build the Python results (`list`,
//! `array.array`). The kernels themselves know nothing of Python.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::error::CoreError;

mod args;
mod arrays;
mod bootstrap;
mod buffers;
mod decontam;
mod embed;
mod hack_text;
mod hash;
mod ngram;
mod rng;
mod scan;
mod select;
mod texts;
mod tokenize;
mod trace;

impl From<CoreError> for PyErr {
    fn from(err: CoreError) -> PyErr {
        match err {
            CoreError::Value(msg) => PyValueError::new_err(msg),
            CoreError::Type(msg) => PyTypeError::new_err(msg),
        }
    }
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("EMBEDDER_NAME", crate::embed::EMBEDDER_NAME)?;
    m.add("UNICODE_VERSION", crate::unicode_data::UNICODE_VERSION)?;
    m.add_function(wrap_pyfunction!(rng::splitmix64_stream, m)?)?;
    m.add_function(wrap_pyfunction!(rng::uniform_floats, m)?)?;
    m.add_function(wrap_pyfunction!(rng::bounded_ints, m)?)?;
    m.add_function(wrap_pyfunction!(hash::hash64, m)?)?;
    m.add_function(wrap_pyfunction!(tokenize::tokenize, m)?)?;
    m.add_function(wrap_pyfunction!(embed::embed, m)?)?;
    m.add_function(wrap_pyfunction!(embed::embed_counts, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap::bootstrap_means, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap::bootstrap_mean_diff, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap::sign_flip_means, m)?)?;
    m.add_function(wrap_pyfunction!(scan::within_group_scan, m)?)?;
    m.add_function(wrap_pyfunction!(scan::within_group_scan_columns, m)?)?;
    m.add_function(wrap_pyfunction!(scan::within_group_scan_partials, m)?)?;
    m.add_class::<ngram::NgramIndex>()?;
    m.add_class::<decontam::DecontamLines>()?;
    m.add_function(wrap_pyfunction!(select::select_diverse, m)?)?;
    m.add_function(wrap_pyfunction!(hack_text::hack_text_features, m)?)?;
    m.add_function(wrap_pyfunction!(trace::trace_masks, m)?)?;
    Ok(())
}
