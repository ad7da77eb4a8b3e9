//! Every `#[pyfunction]` lives here: thin wrappers that check and copy inputs exactly as the pure
//! backend does (same exception class, same message, same order of checks), release the GIL
//! around the kernel, and build the Python results (`list`, `array.array`).

use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyList, PyString, PyTuple};

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

/// An optional argument that tells "not passed" apart from an explicit `None` (which the pure
/// backend checks like any other value).
enum Arg<'py> {
    Absent,
    Given(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Arg<'py> {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Arg::Given(obj.to_owned()))
    }
}

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
    named_count_arg(obj, "count")
}

/// A count named in its errors: `TypeError("<what> must be an int, ...")`, `ValueError(...)`.
fn named_count_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    require_int(obj, what)?;
    if obj.lt(0)? {
        return Err(PyValueError::new_err(format!(
            "{what} must be at least 0, got {}",
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

/// A list of texts: every item checked to be a `str`, in order.
fn checked_texts<'py>(texts: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
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
fn texts_arg(texts: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let texts = checked_texts(texts)?;
    Ok(text_views(&texts)
        .into_iter()
        .map(Cow::into_owned)
        .collect())
}

/// The UTF-8 views of checked texts, borrowed (not copied) while `texts` lives. Lone
/// surrogates cannot be part of a token, so such a text is read with U+FFFD in their place
/// (also a separator) and its tokens are those of the pure backend.
fn text_views<'a>(texts: &'a [Bound<'_, PyString>]) -> Vec<Cow<'a, str>> {
    texts.iter().map(|t| t.to_string_lossy()).collect()
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

/// A new `array.array(typecode)` of `len` items and a pointer to its buffer, for a kernel to
/// fill in place (one output buffer instead of three: kernel, `bytes`, array). `None` when the
/// buffer is not aligned for `T` (then use [`new_array`]).
fn array_for_kernel<'py, T>(
    py: Python<'py>,
    typecode: &str,
    zero: Bound<'py, PyAny>,
    len: usize,
) -> PyResult<Option<(Bound<'py, PyAny>, usize)>> {
    let array = py
        .import("array")?
        .getattr("array")?
        .call1((typecode, (zero,)))?
        .mul(len)?;
    match aligned_buffer::<T>(&array)? {
        Some((address, items)) if items == len => Ok(Some((array, address))),
        _ => Ok(None),
    }
}

/// `(address, length)` of an `array.array`'s memory when it is aligned for `T` (or empty).
fn aligned_buffer<T>(array: &Bound<'_, PyAny>) -> PyResult<Option<(usize, usize)>> {
    // `buffer_info()` is the documented (address, length) of the array's memory.
    let (address, len): (usize, usize) = array.call_method0("buffer_info")?.extract()?;
    Ok((len == 0 || address % std::mem::align_of::<T>() == 0).then_some((address, len)))
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
#[pyo3(signature = (texts, dim = Arg::Absent), text_signature = "(texts, dim=256)")]
fn embed<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    dim: Arg<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let texts = checked_texts(texts)?;
    let dim = match dim {
        Arg::Given(dim) => dim_arg(&dim, texts.len())?,
        Arg::Absent => 256,
    };
    let texts = text_views(&texts);
    let len = texts.len() * dim;
    let zero = 0.0f64.into_pyobject(py)?.into_any();
    if let Some((array, address)) = array_for_kernel::<f64>(py, "d", zero, len)? {
        py.detach(|| {
            // SAFETY: `address` is the aligned buffer of `len` f64 of a fresh array that no
            // other code can reach (only this function holds it) until it is returned.
            let out = unsafe { std::slice::from_raw_parts_mut(address as *mut f64, len) };
            embed_kernel::embed_into(&texts, dim, out);
        });
        return Ok(array);
    }
    let vectors = py.detach(|| embed_kernel::embed(&texts, dim));
    new_array(py, "d", &vectors)
}

/// The integer bucket counts of `texts`, row-major, as `array('q')`.
#[pyfunction]
#[pyo3(signature = (texts, dim = Arg::Absent), text_signature = "(texts, dim=256)")]
fn embed_counts<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    dim: Arg<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let texts = checked_texts(texts)?;
    let dim = match dim {
        Arg::Given(dim) => dim_arg(&dim, texts.len())?,
        Arg::Absent => 256,
    };
    let texts = text_views(&texts);
    let len = texts.len() * dim;
    let zero = 0i64.into_pyobject(py)?.into_any();
    if let Some((array, address)) = array_for_kernel::<i64>(py, "q", zero, len)? {
        py.detach(|| {
            // SAFETY: as in `embed`: a fresh, aligned buffer of `len` i64 only we can reach.
            let out = unsafe { std::slice::from_raw_parts_mut(address as *mut i64, len) };
            embed_kernel::embed_counts_into(&texts, dim, out);
        });
        return Ok(array);
    }
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
    m.add_function(wrap_pyfunction!(within_group_scan_columns, m)?)?;
    m.add_function(wrap_pyfunction!(within_group_scan_partials, m)?)?;
    m.add_class::<NgramIndex>()?;
    m.add_class::<DecontamLines>()?;
    m.add_function(wrap_pyfunction!(select_diverse, m)?)?;
    m.add_function(wrap_pyfunction!(hack_text_features, m)?)?;
    m.add_function(wrap_pyfunction!(trace_masks, m)?)?;
    Ok(())
}

/// `array.array(typecode, obj)`: the same conversion (and conversion errors) as the pure
/// backend's `array("d", values)`, then the values copied out.
fn float_buffer(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let array = if is_array_of(obj, "d")? {
        obj.clone()
    } else {
        obj.py()
            .import("array")?
            .getattr("array")?
            .call1(("d", obj))?
    };
    if let Some(values) = copied_in_place::<f64>(&array)? {
        return Ok(values);
    }
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

/// Inputs up to this many values are read in place and their kernel runs holding the GIL:
/// for the engine's small batches, copying them out and releasing the GIL cost more than the
/// work itself; larger inputs are copied so the kernel can run while Python goes on.
const IN_PLACE_MAX: usize = 1 << 16;

/// Whether `obj` is exactly an `array.array` of `typecode` (its bytes are then the values).
fn is_array_of(obj: &Bound<'_, PyAny>, typecode: &str) -> PyResult<bool> {
    let array_type = obj.py().import("array")?.getattr("array")?;
    Ok(obj.get_type().is(&array_type) && obj.getattr("typecode")?.extract::<String>()? == typecode)
}

/// `(address, length)` of an exact `array('q')` of at most [`IN_PLACE_MAX`] aligned values.
fn small_q_array(obj: &Bound<'_, PyAny>) -> PyResult<Option<(usize, usize)>> {
    if !is_array_of(obj, "q")? {
        return Ok(None);
    }
    Ok(aligned_buffer::<i64>(obj)?.filter(|&(_, len)| len <= IN_PLACE_MAX))
}

/// `array.array("q", obj)`'s values: the pure backend's int sequences, copied out.
fn int_buffer(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    // An array('q') already holds the values: copy them once, in place, instead of rebuilding
    // the array or going through `tobytes()` (which would be a second full copy).
    let array = if is_array_of(obj, "q")? {
        obj.clone()
    } else {
        obj.py()
            .import("array")?
            .getattr("array")?
            .call1(("q", obj))?
    };
    if let Some(values) = copied_in_place::<i64>(&array)? {
        return Ok(values);
    }
    let raw = array.call_method0("tobytes")?;
    let raw = raw.cast::<PyBytes>()?.as_bytes();
    Ok(raw
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

/// The values of an exact, aligned `array.array` of `T` (`q` or `d`), copied straight from its
/// buffer; `None` when it is not aligned.
fn copied_in_place<T: Copy>(array: &Bound<'_, PyAny>) -> PyResult<Option<Vec<T>>> {
    let Some((address, len)) = aligned_buffer::<T>(array)? else {
        return Ok(None);
    };
    if len == 0 {
        return Ok(Some(Vec::new()));
    }
    // SAFETY: `address` holds `len` aligned `T` of a live array; the GIL is held and no Python
    // code runs until the copy is done, so nothing can resize or free the array meanwhile.
    let values = unsafe { std::slice::from_raw_parts(address as *const T, len) };
    Ok(Some(values.to_vec()))
}

/// The within-group correlation scan: `(rho, floor, support)` as `array('d')`, `array('d')`,
/// `array('q')`; with `conjoin` and `top`, each permutation repeats the conjunction search.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (indptr, indices, values, n_features, groups, reward, n_perm = default_int(0), seed = default_int(0), conjoin = default_empty_tuple(), top = default_int(0)),
       text_signature = "(indptr, indices, values, n_features, groups, reward, n_perm=0, seed=0, conjoin=(), top=0)")]
fn within_group_scan<'py>(
    py: Python<'py>,
    indptr: &Bound<'py, PyAny>,
    indices: &Bound<'py, PyAny>,
    values: &Bound<'py, PyAny>,
    n_features: &Bound<'py, PyAny>,
    groups: &Bound<'py, PyAny>,
    reward: &Bound<'py, PyAny>,
    n_perm: Py<PyAny>,
    seed: Py<PyAny>,
    conjoin: Py<PyAny>,
    top: Py<PyAny>,
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
    let args = (
        n_perm.bind(py),
        seed.bind(py),
        conjoin.bind(py),
        top.bind(py),
    );
    let (n_perm, seed, conjoin, top) = search_args(args, n_features)?;
    let search = crate::scan::Conjoin {
        columns: &conjoin,
        top,
    };
    let got = py.detach(|| crate::scan::within_group_scan(&input, n_perm, seed, &search))?;
    scan_arrays(py, got)
}

/// `n_perm`, `seed`, `conjoin` (checked against `n_features`) and `top`, in the pure backend's
/// order: what both scan bindings take after the matrix.
fn search_args(
    (n_perm, seed, conjoin, top): ScanArgs<'_, '_>,
    n_features: usize,
) -> PyResult<(usize, u64, Vec<i64>, usize)> {
    let n_perm = count_arg(n_perm)?;
    let seed = seed_arg(seed, "seed")?;
    let conjoin = int_buffer(conjoin)?;
    crate::scan::check_conjoin(&conjoin, n_features)?;
    Ok((n_perm, seed, conjoin, named_count_arg(top, "top")?))
}

/// A scan's `(rho, floor, support)` as `array('d')`, `array('d')`, `array('q')`.
fn scan_arrays<'py>(
    py: Python<'py>,
    (rho, floor, support): crate::scan::ScanOutput,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    Ok((
        new_array(py, "d", &rho)?,
        new_array(py, "d", &floor)?,
        new_array(py, "q", &support)?,
    ))
}

/// An `array.array`'s buffer read in place by a kernel that runs without the GIL: a
/// `memoryview` of it is held meanwhile, so the array cannot be resized or freed (it refuses to
/// resize while a view is exported, and the view keeps it alive).
struct Held<'py> {
    view: Bound<'py, PyAny>,
    address: usize,
    len: usize,
    typecode: String,
}

impl Held<'_> {
    /// The held values as `T` (the caller matches `T` to `typecode`).
    ///
    /// # Safety
    /// `T` must be the element type of `typecode`.
    unsafe fn slice<T>(&self) -> &[T] {
        if self.len == 0 {
            &[]
        } else {
            // SAFETY: `address` holds `len` aligned `T` of an array that cannot be resized or
            // freed while `view` lives; the kernel only reads it.
            unsafe { std::slice::from_raw_parts(self.address as *const T, self.len) }
        }
    }
}

/// Hold `obj` in place when it is an exact, aligned `array.array` of one of `accepted`
/// typecodes, else as `array.array(convert, obj)` (the pure backend's conversion and errors).
fn held<'py>(obj: &Bound<'py, PyAny>, accepted: &[&str], convert: &str) -> PyResult<Held<'py>> {
    let py = obj.py();
    let array_type = py.import("array")?.getattr("array")?;
    let mut array = obj.clone();
    let exact = obj.get_type().is(&array_type)
        && accepted.contains(&obj.getattr("typecode")?.extract::<String>()?.as_str());
    if !exact {
        array = array_type.call1((convert, obj))?;
    }
    let typecode: String = array.getattr("typecode")?.extract()?;
    let view = py
        .import("builtins")?
        .getattr("memoryview")?
        .call1((&array,))?;
    let (address, len): (usize, usize) = array.call_method0("buffer_info")?.extract()?;
    let align = if typecode == "i" { 4 } else { 8 };
    if len != 0 && address % align != 0 {
        return Err(PyValueError::new_err(
            "an array's buffer is not aligned for its type",
        ));
    }
    Ok(Held {
        view,
        address,
        len,
        typecode,
    })
}

/// `n_perm`, `seed`, `conjoin` and `top` of a scan, as given.
type ScanArgs<'a, 'py> = (
    &'a Bound<'py, PyAny>,
    &'a Bound<'py, PyAny>,
    &'a Bound<'py, PyAny>,
    &'a Bound<'py, PyAny>,
);

/// Check the matrix, then the other arguments (the pure backend's order), then scan without
/// the GIL.
fn scan_held<R: crate::scan::RowId + Into<i64>>(
    py: Python<'_>,
    input: &crate::scan::ColumnInput<'_, R>,
    args: ScanArgs<'_, '_>,
) -> PyResult<crate::scan::ScanOutput> {
    crate::scan::check_columns(input)?;
    let (n_perm, seed, conjoin, top) = search_args(args, input.ptr.len() - 1)?;
    let search = crate::scan::Conjoin {
        columns: &conjoin,
        top,
    };
    Ok(py.detach(|| crate::scan::within_group_scan_columns(input, n_perm, seed, &search))?)
}

/// The scan of a column-major matrix read in place (`within_group_scan`'s results for the
/// same cells): column `j`'s rows are `rows[ptr[j]:ptr[j+1]]`, its values
/// `values[vptr[j]:vptr[j+1]]` (one per row, or none: all 1.0).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (ptr, rows, vptr, values, groups, reward, n_perm = default_int(0), seed = default_int(0), conjoin = default_empty_tuple(), top = default_int(0)),
       text_signature = "(ptr, rows, vptr, values, groups, reward, n_perm=0, seed=0, conjoin=(), top=0)")]
fn within_group_scan_columns<'py>(
    py: Python<'py>,
    ptr: &Bound<'py, PyAny>,
    rows: &Bound<'py, PyAny>,
    vptr: &Bound<'py, PyAny>,
    values: &Bound<'py, PyAny>,
    groups: &Bound<'py, PyAny>,
    reward: &Bound<'py, PyAny>,
    n_perm: Py<PyAny>,
    seed: Py<PyAny>,
    conjoin: Py<PyAny>,
    top: Py<PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let matrix = HeldMatrix::new([ptr, rows, vptr, values, groups, reward])?;
    let args = (
        n_perm.bind(py),
        seed.bind(py),
        conjoin.bind(py),
        top.bind(py),
    );
    let got = matrix.read(
        |input| scan_held(py, input, args),
        |input| scan_held(py, input, args),
    );
    matrix.release()?;
    scan_arrays(py, got?)
}

/// A column-major matrix's arrays held in place: `ptr`, `rows` (`'i'` or `'q'`), `vptr`,
/// `values`, `groups`, `reward`.
struct HeldMatrix<'py>([Held<'py>; 6]);

impl<'py> HeldMatrix<'py> {
    fn new([ptr, rows, vptr, values, groups, reward]: [&Bound<'py, PyAny>; 6]) -> PyResult<Self> {
        Ok(HeldMatrix([
            held(ptr, &["q"], "q")?,
            held(rows, &["i", "q"], "q")?,
            held(vptr, &["q"], "q")?,
            held(values, &["d"], "d")?,
            held(groups, &["q"], "q")?,
            held(reward, &["d"], "d")?,
        ]))
    }

    /// Call `narrow` or `wide` (the same code for either row type) with the matrix.
    fn read<T>(
        &self,
        narrow: impl FnOnce(&crate::scan::ColumnInput<'_, i32>) -> T,
        wide: impl FnOnce(&crate::scan::ColumnInput<'_, i64>) -> T,
    ) -> T {
        let [ptr, rows, vptr, values, groups, reward] = &self.0;
        // SAFETY: each slice's type is its array's typecode ('q': i64, 'i': i32, 'd': f64).
        unsafe {
            let (ptr, vptr, values, groups, reward) = (
                ptr.slice::<i64>(),
                vptr.slice::<i64>(),
                values.slice::<f64>(),
                groups.slice::<i64>(),
                reward.slice::<f64>(),
            );
            if rows.typecode == "i" {
                narrow(&crate::scan::ColumnInput {
                    ptr,
                    rows: rows.slice::<i32>(),
                    vptr,
                    values,
                    groups,
                    reward,
                })
            } else {
                wide(&crate::scan::ColumnInput {
                    ptr,
                    rows: rows.slice::<i64>(),
                    vptr,
                    values,
                    groups,
                    reward,
                })
            }
        }
    }

    fn release(&self) -> PyResult<()> {
        for h in &self.0 {
            h.view.call_method0("release")?;
        }
        Ok(())
    }
}

/// Check the matrix, then `n_perm` and `seed`, then sum each block's partials without the GIL.
fn partials_held<R: crate::scan::RowId + Into<i64>>(
    py: Python<'_>,
    input: &crate::scan::ColumnInput<'_, R>,
    n_perm: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
) -> PyResult<crate::scan::Partials> {
    crate::scan::check_columns(input)?;
    let (n_perm, seed) = (count_arg(n_perm)?, seed_arg(seed, "seed")?);
    Ok(py.detach(|| crate::scan::partials_checked(input, n_perm, seed)))
}

/// Each block's partial sums of the scan of a column-major matrix (docs/kernels.md, "Scan"):
/// `(blocks, var_r, support, var_x, cov, perm_cov)` as `array('q')`, `array('d')`,
/// `array('q')`, `array('d')`, `array('d')`, `array('d')`.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (ptr, rows, vptr, values, groups, reward, n_perm = default_int(0), seed = default_int(0)),
       text_signature = "(ptr, rows, vptr, values, groups, reward, n_perm=0, seed=0)")]
fn within_group_scan_partials<'py>(
    py: Python<'py>,
    ptr: &Bound<'py, PyAny>,
    rows: &Bound<'py, PyAny>,
    vptr: &Bound<'py, PyAny>,
    values: &Bound<'py, PyAny>,
    groups: &Bound<'py, PyAny>,
    reward: &Bound<'py, PyAny>,
    n_perm: Py<PyAny>,
    seed: Py<PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let matrix = HeldMatrix::new([ptr, rows, vptr, values, groups, reward])?;
    let (n_perm, seed) = (n_perm.bind(py), seed.bind(py));
    let got = matrix.read(
        |input| partials_held(py, input, n_perm, seed),
        |input| partials_held(py, input, n_perm, seed),
    );
    matrix.release()?;
    let got = got?;
    PyTuple::new(
        py,
        [
            new_array(py, "q", &got.blocks)?,
            new_array(py, "d", &got.var_r)?,
            new_array(py, "q", &got.support)?,
            new_array(py, "d", &got.var_x)?,
            new_array(py, "d", &got.cov)?,
            new_array(py, "d", &got.perm_cov)?,
        ],
    )
}

/// A default argument value as a Python object, so an explicit `None` is still checked (and
/// refused) exactly like the pure backend refuses it.
fn default_int(value: i64) -> Py<PyAny> {
    Python::attach(|py| value.into_pyobject(py).map(|v| v.into_any().unbind()))
        .unwrap_or_else(|never| match never {})
}

fn default_empty_tuple() -> Py<PyAny> {
    Python::attach(|py| PyTuple::empty(py).into_any().unbind())
}

/// `n` for the n-gram index: an int >= 1 (astronomically large values behave as "no n-grams").
fn ngram_n_arg(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    require_int(obj, "n")?;
    if obj.lt(1)? {
        return Err(PyValueError::new_err(format!(
            "n must be at least 1, got {}",
            formatted(obj)?
        )));
    }
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
#[pyclass(module = "whileai._native", name = "NgramIndex")]
struct NgramIndex {
    inner: crate::ngram::NgramIndex,
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
    #[allow(clippy::type_complexity)]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
    ) -> PyResult<(
        Bound<'py, PyAny>,
        Bound<'py, PyAny>,
        Bound<'py, PyAny>,
        Bound<'py, PyList>,
    )> {
        let (_, best, covered, total, shared) = self.check(py, texts)?;
        Ok((best, covered, total, shared))
    }

    /// `exact` and `scan` from one tokenisation of each text: (exact, best, covered, total,
    /// shared), texts split across threads.
    #[allow(clippy::type_complexity)]
    fn check<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
    ) -> PyResult<(
        Bound<'py, PyAny>,
        Bound<'py, PyAny>,
        Bound<'py, PyAny>,
        Bound<'py, PyAny>,
        Bound<'py, PyList>,
    )> {
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

/// The decontamination rules over blocks of JSONL lines (`crate::decontam`).
#[pyclass(module = "whileai._native", name = "DecontamLines", frozen)]
struct DecontamLines {
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

fn default_float(value: f64) -> Py<PyAny> {
    Python::attach(|py| pyo3::types::PyFloat::new(py, value).into_any().unbind())
}

/// Pick up to `k` candidates, each the farthest (cosine) from everything chosen so far.
#[pyfunction]
#[pyo3(signature = (counts, dim, k, seed, noise = default_float(0.0), selected = None),
       text_signature = "(counts, dim, k, seed, noise=0.0, selected=None)")]
fn select_diverse(
    py: Python<'_>,
    counts: &Bound<'_, PyAny>,
    dim: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
    noise: Py<PyAny>,
    selected: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<usize>> {
    // The pure backend's order: dim, k (type), seed, k (value), noise, counts, selected.
    require_int(dim, "dim")?;
    if dim.lt(1)? {
        return Err(PyValueError::new_err(format!(
            "dim must be at least 1, got {}",
            formatted(dim)?
        )));
    }
    require_int(k, "k")?;
    let seed = seed_arg(seed, "seed")?;
    if k.lt(0)? {
        return Err(PyValueError::new_err(format!(
            "k must be at least 0, got {}",
            formatted(k)?
        )));
    }
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

// ---------------------------------------------------------------------------------------------
// hack_scan's features (docs/kernels.md, "Hack-scan text features").

/// The bytes of each text: its UTF-8 view when it has one, else (lone surrogates) the bytes of
/// `text.encode("utf-8", "surrogatepass")`, so every code point is read as Python reads it.
fn wtf8_texts<'a>(texts: &'a [Bound<'_, PyString>]) -> PyResult<Vec<Cow<'a, [u8]>>> {
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

/// An `array.array(typecode)` of `values`, filled in place (no intermediate `bytes`).
fn filled_array<'py, T: Copy>(
    py: Python<'py>,
    typecode: &str,
    values: &[T],
) -> PyResult<Bound<'py, PyAny>> {
    let zero = if typecode == "d" {
        0f64.into_pyobject(py)?.into_any()
    } else {
        0i64.into_pyobject(py)?.into_any()
    };
    if let Some((array, address)) = array_for_kernel::<T>(py, typecode, zero, values.len())? {
        if !values.is_empty() {
            // SAFETY: a fresh, aligned buffer of `values.len()` T that only this function holds.
            let out = unsafe { std::slice::from_raw_parts_mut(address as *mut T, values.len()) };
            out.copy_from_slice(values);
        }
        return Ok(array);
    }
    new_array(py, typecode, values)
}

/// hack_scan's text features: `(counts, vocab, ptr, rows)` (see `_native.pyi`).
#[pyfunction]
fn hack_text_features<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    final_chars: &Bound<'py, PyAny>,
    top: &Bound<'py, PyAny>,
) -> PyResult<TextFeaturesOut<'py>> {
    let texts = checked_texts(texts)?;
    let final_chars = int_buffer(final_chars)?;
    require_int(top, "top")?;
    let top: i64 = top.extract()?;
    let views = wtf8_texts(&texts)?;
    let got = py.detach(|| crate::hack_text::hack_text_features(&views, &final_chars, top))?;
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

/// Text `i` of a [`code_point_texts`] buffer.
fn text_at(texts: &(Vec<u32>, Vec<usize>), i: usize) -> &[u32] {
    &texts.0[texts.1[i]..texts.1[i + 1]]
}

/// The code points of texts in one buffer (text `i` is `cps[ends[i]..ends[i + 1]]`), copied
/// straight out of each `str`: no UTF-8 is made, nor left cached in a non-ASCII `str` (`to_str`
/// keeps one in the object for as long as it lives: the rows' own texts would grow by their
/// size), and no Python method is called. A lone surrogate is a code point, as in Python.
fn code_point_texts(texts: &[Bound<'_, PyString>]) -> PyResult<(Vec<u32>, Vec<usize>)> {
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

/// The trace-flag mask of each row (see `_native.pyi` and `crate::trace`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn trace_masks<'py>(
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
    let patterns: Vec<String> = patterns
        .iter()
        .map(|p| p.to_str().map(str::to_owned))
        .collect::<PyResult<_>>()?;
    let families: Vec<String> = families
        .iter()
        .map(|p| p.to_str().map(str::to_owned))
        .collect::<PyResult<_>>()?;
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
