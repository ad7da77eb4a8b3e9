//! The trace-flag masks (`crate::trace`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::arrays::filled_array;
use super::buffers::int_buffer;
use super::texts::{checked_texts, code_point_texts, text_at};

/// The trace-flag mask of each row (see `_native.pyi` and `crate::trace`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(super) fn trace_masks<'py>(
    py: Python<'py>,
    patterns: &Bound<'py, PyAny>,
    families: &Bound<'py, PyAny>,
    said: &Bound<'py, PyAny>,
    final_texts: &Bound<'py, PyAny>,
    ptr: &Bound<'py, PyAny>,
    codes: &Bound<'py, PyAny>,
    fams: &Bound<'py, PyAny>,
    bodies: &Bound<'py, PyAny>,
    paths: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let patterns = checked_texts(patterns)?;
    let families = checked_texts(families)?;
    let (patterns, families) = (utf8_strings(&patterns)?, utf8_strings(&families)?);
    let pats: Vec<&str> = patterns.iter().map(String::as_str).collect();
    let fam: Vec<&str> = families.iter().map(String::as_str).collect();
    let compiled = crate::trace::TracePatterns::new(&pats, &fam)?;
    let (said, final_texts) = (checked_texts(said)?, checked_texts(final_texts)?);
    let (bodies, paths) = (checked_texts(bodies)?, checked_texts(paths)?);
    let (ptr, codes, fams) = (int_buffer(ptr)?, int_buffer(codes)?, int_buffer(fams)?);
    let n = said.len();
    let steps = codes.len();
    let ok = final_texts.len() == n
        && ptr.len() == n + 1
        && fams.len() == steps
        && bodies.len() == steps
        && paths.len() == steps
        && ptr.first() == Some(&0)
        && ptr.last().copied() == i64::try_from(steps).ok()
        && ptr.windows(2).all(|w| w[0] <= w[1]);
    if !ok {
        return Err(PyValueError::new_err(
            "trace_masks: said and final_texts need one item per row, ptr rows + 1 ascending \
             offsets from 0 to the number of steps, and codes, fams, bodies and paths one per step",
        ));
    }
    let (said, final_texts) = (code_point_texts(&said)?, code_point_texts(&final_texts)?);
    let (bodies, paths) = (code_point_texts(&bodies)?, code_point_texts(&paths)?);
    let masks = py.detach(|| {
        let rows: Vec<crate::trace::TraceRow<'_>> = (0..n)
            .map(|i| {
                let (a, b) = (ptr[i] as usize, ptr[i + 1] as usize);
                crate::trace::TraceRow {
                    said: text_at(&said, i),
                    final_text: text_at(&final_texts, i),
                    codes: &codes[a..b],
                    families: &fams[a..b],
                    bodies: (a..b).map(|k| text_at(&bodies, k)).collect(),
                    paths: (a..b).map(|k| text_at(&paths, k)).collect(),
                }
            })
            .collect();
        crate::trace::trace_masks(&compiled, &rows)
    });
    filled_array(py, "q", &masks)
}

/// Checked texts copied out as UTF-8 (a lone surrogate raises Python's `UnicodeEncodeError`).
fn utf8_strings(texts: &[Bound<'_, PyString>]) -> PyResult<Vec<String>> {
    texts
        .iter()
        .map(|t| t.to_str().map(str::to_owned))
        .collect()
}
