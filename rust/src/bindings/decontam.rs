//! The decontamination rules over blocks of JSONL lines (`crate::decontam`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

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
        use crate::decontam::Rule;
        let data = block.as_bytes();
        let out = py.detach(|| self.inner.check_block(data, examples));
        let drops = out
            .drops
            .into_iter()
            .map(|(line, d)| {
                let rule = match d.rule {
                    Rule::SameTask => "same_task",
                    Rule::Verbatim => "verbatim",
                    Rule::Near => "near",
                };
                (
                    line, rule, d.field, d.eval, d.covered, d.total, d.shared, d.matched,
                )
            })
            .collect();
        Ok((
            PyBytes::new(py, &out.status),
            PyBytes::new(py, &out.kept),
            out.kept_at,
            out.by_rule.to_vec(),
            out.by_field.iter().map(|f| f.to_vec()).collect(),
            out.missing,
            out.short_texts,
            drops,
        ))
    }
}
