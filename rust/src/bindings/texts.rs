//! Lists of `str` arguments: checked item by item as the pure backend checks them, then read
//! as the kernels want them (UTF-8, WTF-8 bytes, or code points).

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use super::args::type_name;

/// A list of texts: every item checked to be a `str`, in order.
pub(super) fn checked_texts<'py>(texts: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
    if texts.is_instance_of::<PyString>() || !texts.hasattr("__iter__")? {
        return Err(PyTypeError::new_err(format!(
            "texts must be a list of str, got {}",
            type_name(texts)
        )));
    }
    let items: Vec<Bound<'py, PyAny>> = texts.try_iter()?.collect::<PyResult<_>>()?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        match item.cast_into::<PyString>() {
            Ok(text) => out.push(text),
            Err(err) => {
                let item = err.into_inner();
                return Err(PyTypeError::new_err(format!(
                    "texts[{i}] must be str, got {}",
                    type_name(&item)
                )));
            }
        }
    }
    Ok(out)
}

/// A list of texts, checked as [`checked_texts`] does and copied out as Rust strings (lone
/// surrogates read as U+FFFD, see [`text_views`]).
pub(super) fn texts_arg(texts: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let texts = checked_texts(texts)?;
    Ok(text_views(&texts)
        .into_iter()
        .map(Cow::into_owned)
        .collect())
}

/// The UTF-8 views of checked texts, borrowed (not copied) while `texts` lives. Lone
/// surrogates cannot be part of a token, so such a text is read with U+FFFD in their place
/// (also a separator) and its tokens are those of the pure backend.
pub(super) fn text_views<'a>(texts: &'a [Bound<'_, PyString>]) -> Vec<Cow<'a, str>> {
    texts.iter().map(|t| t.to_string_lossy()).collect()
}

/// The bytes of each text: its UTF-8 view when it has one, else (lone surrogates) the bytes of
/// `text.encode("utf-8", "surrogatepass")`, so every code point is read as Python reads it.
pub(super) fn wtf8_texts<'a>(texts: &'a [Bound<'_, PyString>]) -> PyResult<Vec<Cow<'a, [u8]>>> {
    texts
        .iter()
        .map(|t| match t.to_str() {
            Ok(s) => Ok(Cow::Borrowed(s.as_bytes())),
            Err(_) => {
                let raw = t.call_method1("encode", ("utf-8", "surrogatepass"))?;
                Ok(Cow::Owned(raw.cast::<PyBytes>()?.as_bytes().to_vec()))
            }
        })
        .collect()
}

/// The code points of texts in one buffer (text `i` is `cps[ends[i]..ends[i + 1]]`), copied
/// straight out of each `str`: no UTF-8 is made, nor left cached in a non-ASCII `str` (`to_str`
/// keeps one in the object for as long as it lives: the rows' own texts would grow by their
/// size), and no Python method is called. A lone surrogate is a code point, as in Python.
pub(super) fn code_point_texts(texts: &[Bound<'_, PyString>]) -> PyResult<(Vec<u32>, Vec<usize>)> {
    let mut ends = Vec::with_capacity(texts.len() + 1);
    ends.push(0usize);
    for t in texts {
        // SAFETY: `t` is a live `str` (checked by `checked_texts`) and the GIL is held.
        let n = unsafe { pyo3::ffi::PyUnicode_GetLength(t.as_ptr()) };
        let n = usize::try_from(n).map_err(|_| PyErr::fetch(t.py()))?;
        ends.push(ends[ends.len() - 1] + n);
    }
    let mut cps = vec![0u32; ends[texts.len()]];
    for (i, t) in texts.iter().enumerate() {
        let (a, b) = (ends[i], ends[i + 1]);
        if b > a {
            // SAFETY: `cps[a..b]` holds exactly the `b - a` code points of the live `str` `t`
            // (its length was read above, with the GIL held all along); no NUL is written.
            let got = unsafe {
                pyo3::ffi::PyUnicode_AsUCS4(
                    t.as_ptr(),
                    cps.as_mut_ptr().add(a),
                    (b - a) as pyo3::ffi::Py_ssize_t,
                    0,
                )
            };
            if got.is_null() {
                return Err(PyErr::fetch(t.py()));
            }
        }
    }
    Ok((cps, ends))
}

/// Text `i` of a [`code_point_texts`] buffer.
pub(super) fn text_at(texts: &(Vec<u32>, Vec<usize>), i: usize) -> &[u32] {
    &texts.0[texts.1[i]..texts.1[i + 1]]
}
