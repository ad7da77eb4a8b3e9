//! Diversity selection (`crate::select`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::args::{at_least, default_float, formatted, int_at_least, require_int, seed_arg};
use super::buffers::{int_buffer, small_q_array};

/// Pick up to `k` candidates, each the farthest (cosine) from everything chosen so far.
#[pyfunction]
#[pyo3(signature = (counts, dim, k, seed, noise = default_float(0.0), selected = None),
       text_signature = "(counts, dim, k, seed, noise=0.0, selected=None)")]
pub(super) fn select_diverse(
    py: Python<'_>,
    counts: &Bound<'_, PyAny>,
    dim: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
    noise: Py<PyAny>,
    selected: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<usize>> {
    // The pure backend's order: dim, k (type), seed, k (value), noise, counts, selected.
    int_at_least(dim, "dim", 1)?;
    require_int(k, "k")?;
    let seed = seed_arg(seed, "seed")?;
    at_least(k, "k", 0)?;
    // More picks than candidates simply returns every candidate.
    let k = k.extract::<usize>().unwrap_or(usize::MAX);
    let noise = py
        .import("builtins")?
        .getattr("float")?
        .call1((noise.bind(py),))?;
    let noise_value: f64 = noise.extract()?;
    if noise_value.is_nan() || noise_value < 0.0 || noise_value.is_infinite() {
        return Err(PyValueError::new_err(format!(
            "noise must be a finite number >= 0, got {}",
            noise.str()?
        )));
    }
    let in_place = small_q_array(counts)?;
    let copied = match in_place {
        Some(_) => Vec::new(),
        None => int_buffer(counts)?,
    };
    let len = in_place.map_or(copied.len(), |(_, len)| len);
    let dim_text = formatted(dim)?;
    // A dim beyond any buffer length: only an empty buffer divides evenly.
    let dim = dim.extract::<usize>().unwrap_or(usize::MAX);
    if len % dim != 0 {
        return Err(PyValueError::new_err(format!(
            "counts has {len} values, not a multiple of dim={dim_text}"
        )));
    }
    let n = len / dim;
    let mut anchors = Vec::new();
    if let Some(selected) = selected {
        if selected.is_truthy()? {
            for (pos, item) in selected.try_iter()?.enumerate() {
                let item = item?;
                require_int(&item, &format!("selected[{pos}]"))?;
                match item.extract::<usize>() {
                    Ok(index) if index < n => anchors.push(index),
                    _ => {
                        return Err(PyValueError::new_err(format!(
                            "selected[{pos}] = {} is out of range for {n} candidates",
                            formatted(&item)?
                        )))
                    }
                }
            }
        }
    }
    if in_place.is_some() {
        // Read the array again: checking `selected` ran Python code, which may have changed it.
        let Some((address, _)) = small_q_array(counts)?.filter(|&(_, now)| now == len) else {
            return Err(PyValueError::new_err(
                "counts changed while select_diverse read it",
            ));
        };
        let counts: &[i64] = if len == 0 {
            &[] // an empty array may have no buffer at all
        } else {
            // SAFETY: `address` holds `len` aligned i64 of a live array('q'). The GIL is held
            // from here to the end of the kernel, which calls no Python, so no code can resize
            // or free the array while the slice exists.
            unsafe { std::slice::from_raw_parts(address as *const i64, len) }
        };
        return Ok(crate::select::select_diverse(
            counts,
            dim,
            k,
            seed,
            noise_value,
            &anchors,
        ));
    }
    Ok(py.detach(|| crate::select::select_diverse(&copied, dim, k, seed, noise_value, &anchors)))
}
