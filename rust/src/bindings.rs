//! Every `#[pyfunction]` lives here: thin wrappers that copy inputs, release the GIL around the
//! kernel, and map `CoreError` to the Python exception the pure backend raises.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::error::CoreError;

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
    Ok(())
}
