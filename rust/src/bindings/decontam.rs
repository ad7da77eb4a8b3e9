//! The decontamination rules over blocks of JSONL lines (`crate::decontam`).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use crate::decontam::{Block, Rule, KEPT};
use crate::jsonl::Field;

use super::args::type_name;

use super::ngram::NgramIndex;

/// The decontamination rules over blocks of JSONL lines (`crate::decontam`).
#[pyclass(module = "whileai._native", name = "DecontamLines", frozen)]
pub(super) struct DecontamLines {
    inner: crate::decontam::LineRules,
}

/// One drop of a block: (line, rule, field, eval id, covered, total, shared n-gram, task id).
type DropTuple = (
    usize,
    &'static str,
    usize,
    i64,
    i64,
    i64,
    Vec<String>,
    String,
);

#[pymethods]
impl DecontamLines {
    #[new]
    #[pyo3(text_signature = "(fields, indexes, task_ids, overlap, n)")]
    fn py_new(
        fields: Vec<String>,
        indexes: Vec<Option<PyRef<'_, NgramIndex>>>,
        task_ids: Vec<String>,
        overlap: f64,
        n: usize,
    ) -> PyResult<Self> {
        if fields.len() != indexes.len() {
            return Err(PyValueError::new_err(format!(
                "got {} fields but {} indexes; pass one index (or None) per field",
                fields.len(),
                indexes.len()
            )));
        }
        let indexes = indexes
            .into_iter()
            .map(|index| index.map(|i| i.inner.clone()))
            .collect();
        let task_ids = task_ids.into_iter().collect();
        Ok(DecontamLines {
            inner: crate::decontam::LineRules::new(fields, indexes, task_ids, overlap, n),
        })
    }

    /// Check a block of whole JSONL lines: (status, kept, kept_at, by_rule, by_field, missing,
    /// short_texts, drops), lines split across threads.
    #[allow(clippy::type_complexity)]
    fn check<'py>(
        &self,
        py: Python<'py>,
        block: &Bound<'py, PyBytes>,
        examples: usize,
    ) -> PyResult<(
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Vec<usize>,
        Vec<usize>,
        Vec<Vec<usize>>,
        Vec<usize>,
        usize,
        Vec<DropTuple>,
    )> {
        let data = block.as_bytes();
        let out = py.detach(|| self.inner.check_block(data, examples));
        let (by_rule, by_field, missing, short, drops) = counts(&out);
        Ok((
            PyBytes::new(py, &out.status),
            PyBytes::new(py, &out.kept),
            out.kept_at,
            by_rule,
            by_field,
            missing,
            short,
            drops,
        ))
    }

    /// Check a list of row dicts: (status, kept rows, by_rule, by_field, missing, short_texts,
    /// drops). The checked texts are read out of the dicts once; the rows split across threads.
    #[allow(clippy::type_complexity)]
    fn check_rows<'py>(
        &self,
        py: Python<'py>,
        rows: &Bound<'py, PyList>,
        examples: usize,
    ) -> PyResult<(
        Bound<'py, PyBytes>,
        Bound<'py, PyList>,
        Vec<usize>,
        Vec<Vec<usize>>,
        Vec<usize>,
        usize,
        Vec<DropTuple>,
    )> {
        let keys: Vec<Bound<'py, PyString>> = self
            .inner
            .keys()
            .iter()
            .map(|k| PyString::intern(py, k))
            .collect();
        let mut texts: Vec<Option<Bound<'py, PyString>>> =
            Vec::with_capacity(rows.len() * keys.len());
        let mut other = Vec::with_capacity(texts.capacity());
        for (i, row) in rows.iter().enumerate() {
            let row = row.cast_into::<PyDict>().map_err(|err| {
                PyTypeError::new_err(format!(
                    "rows[{i}] is a {}, not a row dict",
                    type_name(&err.into_inner())
                ))
            })?;
            for key in &keys {
                let value = row.get_item(key)?;
                other.push(
                    value
                        .as_ref()
                        .is_some_and(|v| !v.is_instance_of::<PyString>()),
                );
                texts.push(value.and_then(|v| v.cast_into::<PyString>().ok()));
            }
        }
        let values: Vec<Field<'_>> = texts
            .iter()
            .zip(&other)
            .map(|(text, &other)| match text {
                Some(text) => Field::Text(text.to_string_lossy()),
                None if other => Field::Other,
                None => Field::Absent,
            })
            .collect();
        let out = py.detach(|| self.inner.check_rows(&values, examples));
        let kept = PyList::empty(py);
        for (row, &status) in rows.iter().zip(&out.status) {
            if status == KEPT {
                kept.append(row)?;
            }
        }
        let (by_rule, by_field, missing, short, drops) = counts(&out);
        Ok((
            PyBytes::new(py, &out.status),
            kept,
            by_rule,
            by_field,
            missing,
            short,
            drops,
        ))
    }
}

/// A block's counts and drops as Python takes them: by_rule, by_field, missing, short_texts,
/// drops.
type Counts = (
    Vec<usize>,
    Vec<Vec<usize>>,
    Vec<usize>,
    usize,
    Vec<DropTuple>,
);

/// A block's [`Counts`].
fn counts(out: &Block) -> Counts {
    let drops = out
        .drops
        .iter()
        .map(|(line, d)| {
            let rule = match d.rule {
                Rule::SameTask => "same_task",
                Rule::Verbatim => "verbatim",
                Rule::Near => "near",
            };
            (
                *line,
                rule,
                d.field,
                d.eval,
                d.covered,
                d.total,
                d.shared.clone(),
                d.matched.clone(),
            )
        })
        .collect();
    (
        out.by_rule.to_vec(),
        out.by_field.iter().map(|f| f.to_vec()).collect(),
        out.missing.clone(),
        out.short_texts,
        drops,
    )
}
