//! Every `#[pyfunction]` lives here: thin wrappers that check and copy inputs exactly as the pure
//! backend does (same exception class, same message, same order of checks), release the GIL
//! around the kernel, and build the Python results (`list`, `array.array`).

use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyList, PyString};

use crate::error::CoreError;
use crate::{embed as embed_kernel, hash as hash_kernel, rng, tokenize as tokenize_kernel};

impl From<CoreError> for PyErr {
    fn from(err: CoreError) -> PyErr {
        match err {
            CoreError::Value(msg) => PyValueError::new_err(msg),
            CoreError::Type(msg) => PyTypeError::new_err(msg),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Argument checks: the same rules and messages as `whileai._pure` (rng.check_seed, check_bound,
// check_count, embed.check_dim, tokenize.check_texts).

/// `type(obj).__name__`.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".to_owned())
}

/// `f"{obj}"`.
fn formatted(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(obj.call_method1("__format__", ("",))?.str()?.to_string())
}

/// An int that is not a bool, else `TypeError("<what> must be an int, got <type>")`.
fn require_int(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int, got {}",
            type_name(obj)
        )));
    }
    Ok(())
}

/// A seed (or unit): any Python int, reduced modulo 2**64.
fn seed_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    require_int(obj, what)?;
    obj.bitand(u64::MAX)?.extract::<u64>()
}

/// A bound for bounded ints: an int in [1, 2**64).
fn bound_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    require_int(obj, "bound")?;
    if obj.lt(1)? {
        return Err(PyValueError::new_err(format!(
            "bound must be at least 1, got {}",
            formatted(obj)?
        )));
    }
    if obj.gt(u64::MAX)? {
        return Err(PyValueError::new_err(format!(
            "bound must be below 2**64, got {}",
            formatted(obj)?
        )));
    }
    obj.extract::<u64>()
}

/// A count: an int >= 0.
fn count_arg(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    require_int(obj, "count")?;
    if obj.lt(0)? {
        return Err(PyValueError::new_err(format!(
            "count must be at least 0, got {}",
            formatted(obj)?
        )));
    }
    obj.extract::<usize>()
}

/// A text: a `str`, else `TypeError("<what> must be str, got <type>")`.
fn str_arg<'a, 'py>(obj: &'a Bound<'py, PyAny>, what: &str) -> PyResult<&'a Bound<'py, PyString>> {
    obj.cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be str, got {}", type_name(obj))))
}

/// A list of texts, copied out as Rust strings. Lone surrogates cannot be part of a token, so
/// they are read as U+FFFD (also a separator) and the tokens are those of the pure backend.
fn texts_arg(texts: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if texts.is_instance_of::<PyString>() || !texts.hasattr("__iter__")? {
        return Err(PyTypeError::new_err(format!(
            "texts must be a list of str, got {}",
            type_name(texts)
        )));
    }
    let items: Vec<Bound<'_, PyAny>> = texts.try_iter()?.collect::<PyResult<_>>()?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let text = str_arg(item, &format!("texts[{i}]"))?;
        out.push(text.to_string_lossy().into_owned());
    }
    Ok(out)
}

/// The embedding dim: an int >= 1. A dim too large to allocate is a `MemoryError`.
fn dim_arg(obj: &Bound<'_, PyAny>, rows: usize) -> PyResult<usize> {
    require_int(obj, "dim")?;
    if obj.lt(1)? {
        return Err(PyValueError::new_err(format!(
            "dim must be at least 1, got {}",
            formatted(obj)?
        )));
    }
    if rows == 0 {
        // No rows: any dim gives an empty buffer, as in the pure backend.
        return Ok(obj.extract::<usize>().unwrap_or(1));
    }
    let too_big = || {
        PyMemoryError::new_err(format!(
            "dim={} with {rows} texts needs more memory than can be allocated",
            formatted(obj).unwrap_or_default()
        ))
    };
    let dim = obj.extract::<usize>().map_err(|_| too_big())?;
    match rows.checked_mul(dim).and_then(|n| n.checked_mul(8)) {
        Some(bytes) if bytes <= isize::MAX as usize => Ok(dim),
        _ => Err(too_big()),
    }
}

/// An `array.array(typecode)` holding the raw native-endian bytes of `values`.
fn new_array<'py, T: Copy>(
    py: Python<'py>,
    typecode: &str,
    values: &[T],
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `T` is f64 or i64 here: plain data without padding, every byte initialised.
    let bytes = unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    };
    let array = py.import("array")?.getattr("array")?.call1((typecode,))?;
    array.call_method1("frombytes", (PyBytes::new(py, bytes),))?;
    Ok(array)
}

// ---------------------------------------------------------------------------------------------
// Primitives.

/// The first `count` raw values of the splitmix64 stream `(seed, unit)`.
#[pyfunction]
fn splitmix64_stream(
    py: Python<'_>,
    seed: &Bound<'_, PyAny>,
    unit: &Bound<'_, PyAny>,
    count: &Bound<'_, PyAny>,
) -> PyResult<Vec<u64>> {
    let seed = seed_arg(seed, "seed")?;
    let unit = seed_arg(unit, "unit")?;
    let count = count_arg(count)?;
    Ok(py.detach(|| rng::splitmix64_stream(seed, unit, count)))
}

/// `count` floats in [0, 1) from the stream `(seed, unit)`.
#[pyfunction]
fn uniform_floats(
    py: Python<'_>,
    seed: &Bound<'_, PyAny>,
    unit: &Bound<'_, PyAny>,
    count: &Bound<'_, PyAny>,
) -> PyResult<Vec<f64>> {
    let seed = seed_arg(seed, "seed")?;
    let unit = seed_arg(unit, "unit")?;
    let count = count_arg(count)?;
    Ok(py.detach(|| rng::uniform_floats(seed, unit, count)))
}

/// `count` ints in [0, bound) from the stream `(seed, unit)`.
#[pyfunction]
fn bounded_ints(
    py: Python<'_>,
    seed: &Bound<'_, PyAny>,
    unit: &Bound<'_, PyAny>,
    bound: &Bound<'_, PyAny>,
    count: &Bound<'_, PyAny>,
) -> PyResult<Vec<u64>> {
    let seed = seed_arg(seed, "seed")?;
    let unit = seed_arg(unit, "unit")?;
    let bound = bound_arg(bound)?;
    let count = count_arg(count)?;
    Ok(py.detach(|| rng::bounded_ints(seed, unit, bound, count))?)
}

/// The stable 64-bit hash of `text`'s UTF-8 bytes.
#[pyfunction]
fn hash64(text: &Bound<'_, PyAny>) -> PyResult<u64> {
    // `to_str` raises the same UnicodeEncodeError as `str.encode("utf-8")` for lone surrogates.
    let text = str_arg(text, "text")?.to_str()?;
    Ok(hash_kernel::hash64(text.as_bytes()))
}

/// The tokens of `text`; with `numbers` true, an all-digit token becomes `<num>`.
#[pyfunction]
#[pyo3(signature = (text, numbers = None), text_signature = "(text, numbers=False)")]
fn tokenize<'py>(
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

// ---------------------------------------------------------------------------------------------
// The hash embedder.

/// The L2-normalised float64 embeddings of `texts`, row-major, as `array('d')`.
#[pyfunction]
#[pyo3(signature = (texts, dim = None), text_signature = "(texts, dim=256)")]
fn embed<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    dim: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let texts = texts_arg(texts)?;
    let dim = match dim {
        Some(dim) => dim_arg(dim, texts.len())?,
        None => 256,
    };
    let vectors = py.detach(|| embed_kernel::embed(&texts, dim));
    new_array(py, "d", &vectors)
}

/// The integer bucket counts of `texts`, row-major, as `array('q')`.
#[pyfunction]
#[pyo3(signature = (texts, dim = None), text_signature = "(texts, dim=256)")]
fn embed_counts<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    dim: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let texts = texts_arg(texts)?;
    let dim = match dim {
        Some(dim) => dim_arg(dim, texts.len())?,
        None => 256,
    };
    let counts = py.detach(|| embed_kernel::embed_counts(&texts, dim));
    new_array(py, "q", &counts)
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("EMBEDDER_NAME", embed_kernel::EMBEDDER_NAME)?;
    m.add("UNICODE_VERSION", crate::unicode_data::UNICODE_VERSION)?;
    m.add_function(wrap_pyfunction!(splitmix64_stream, m)?)?;
    m.add_function(wrap_pyfunction!(uniform_floats, m)?)?;
    m.add_function(wrap_pyfunction!(bounded_ints, m)?)?;
    m.add_function(wrap_pyfunction!(hash64, m)?)?;
    m.add_function(wrap_pyfunction!(tokenize, m)?)?;
    m.add_function(wrap_pyfunction!(embed, m)?)?;
    m.add_function(wrap_pyfunction!(embed_counts, m)?)?;
    register_ported_kernels(m)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Ported kernels (phase 2): resampling. Same argument order, checks and messages as `_pure`.

/// Every ported kernel function, registered on the module.
fn register_ported_kernels(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bootstrap_means, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_mean_diff, m)?)?;
    m.add_function(wrap_pyfunction!(sign_flip_means, m)?)?;
    m.add_function(wrap_pyfunction!(within_group_scan, m)?)?;
    Ok(())
}

/// `array.array(typecode, obj)`: the same conversion (and conversion errors) as the pure
/// backend's `array("d", values)`, then the values copied out.
fn float_buffer(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let py = obj.py();
    let array = py.import("array")?.getattr("array")?.call1(("d", obj))?;
    let raw = array.call_method0("tobytes")?;
    let raw = raw.cast::<PyBytes>()?.as_bytes();
    Ok(raw
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

/// A replicate count: an int >= 0, named `what` in the error.
fn replicates_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    require_int(obj, what)?;
    if obj.lt(0)? {
        return Err(PyValueError::new_err(format!(
            "{what} must be at least 0, got {}",
            formatted(obj)?
        )));
    }
    obj.extract::<usize>()
}

/// `n_resamples` bootstrap means of `values` (one splitmix64 stream per replicate).
#[pyfunction]
fn bootstrap_means<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
    n_resamples: &Bound<'py, PyAny>,
    seed: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let seed = seed_arg(seed, "seed")?;
    let count = replicates_arg(n_resamples, "n_resamples")?;
    let values = float_buffer(values)?;
    let out = py.detach(|| crate::bootstrap::bootstrap_means(&values, count, seed))?;
    new_array(py, "d", &out)
}

/// `n_resamples` unpaired bootstrap values of `mean(b*) - mean(a*)`.
#[pyfunction]
fn bootstrap_mean_diff<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    n_resamples: &Bound<'py, PyAny>,
    seed: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let seed = seed_arg(seed, "seed")?;
    let count = replicates_arg(n_resamples, "n_resamples")?;
    let a = float_buffer(a)?;
    crate::bootstrap::check_finite(&a, "a")?;
    let b = float_buffer(b)?;
    let out = py.detach(|| crate::bootstrap::bootstrap_mean_diff(&a, &b, count, seed))?;
    new_array(py, "d", &out)
}

/// `n_perm` sign-flipped means of `diffs` (a paired permutation null).
#[pyfunction]
fn sign_flip_means<'py>(
    py: Python<'py>,
    diffs: &Bound<'py, PyAny>,
    n_perm: &Bound<'py, PyAny>,
    seed: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let seed = seed_arg(seed, "seed")?;
    let count = replicates_arg(n_perm, "n_perm")?;
    let diffs = float_buffer(diffs)?;
    let out = py.detach(|| crate::bootstrap::sign_flip_means(&diffs, count, seed))?;
    new_array(py, "d", &out)
}

/// `array.array("q", obj)`'s values: the pure backend's int sequences, copied out.
fn int_buffer(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let py = obj.py();
    let array = py.import("array")?.getattr("array")?.call1(("q", obj))?;
    let raw = array.call_method0("tobytes")?;
    let raw = raw.cast::<PyBytes>()?.as_bytes();
    Ok(raw
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

/// The within-group correlation scan: `(rho, floor, support)` as `array('d')`, `array('d')`,
/// `array('q')`.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (indptr, indices, values, n_features, groups, reward, n_perm = None, seed = None),
       text_signature = "(indptr, indices, values, n_features, groups, reward, n_perm=0, seed=0)")]
fn within_group_scan<'py>(
    py: Python<'py>,
    indptr: &Bound<'py, PyAny>,
    indices: &Bound<'py, PyAny>,
    values: &Bound<'py, PyAny>,
    n_features: &Bound<'py, PyAny>,
    groups: &Bound<'py, PyAny>,
    reward: &Bound<'py, PyAny>,
    n_perm: Option<&Bound<'py, PyAny>>,
    seed: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let features_ok = !n_features.is_instance_of::<PyBool>()
        && n_features.is_instance_of::<PyInt>()
        && !n_features.lt(0)?;
    if !features_ok {
        return Err(PyValueError::new_err(format!(
            "n_features must be an int >= 0, got {}",
            n_features.repr()?
        )));
    }
    let n_features = n_features.extract::<usize>()?;
    let (indptr, indices, values) = (
        int_buffer(indptr)?,
        int_buffer(indices)?,
        float_buffer(values)?,
    );
    let (groups, reward) = (int_buffer(groups)?, float_buffer(reward)?);
    let input = crate::scan::ScanInput {
        indptr: &indptr,
        indices: &indices,
        values: &values,
        n_features,
        groups: &groups,
        reward: &reward,
    };
    crate::scan::check_input(&input)?;
    let n_perm = match n_perm {
        Some(obj) => count_arg(obj)?,
        None => 0,
    };
    let seed = match seed {
        Some(obj) => seed_arg(obj, "seed")?,
        None => 0,
    };
    let (rho, floor, support) =
        py.detach(|| crate::scan::within_group_scan(&input, n_perm, seed))?;
    Ok((
        new_array(py, "d", &rho)?,
        new_array(py, "d", &floor)?,
        new_array(py, "q", &support)?,
    ))
}
