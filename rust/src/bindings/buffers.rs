//! Reading number arguments (`array.array` or any sequence) into the kernels' `i64`/`f64`
//! slices: copied out, read in place, or held in place while the GIL is released.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// `array.array("d", obj)`'s values: the pure backend's float sequences, copied out.
pub(super) fn float_buffer(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    buffer_values(obj, "d", f64::from_ne_bytes)
}

/// `array.array("q", obj)`'s values: the pure backend's int sequences, copied out.
pub(super) fn int_buffer(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    buffer_values(obj, "q", i64::from_ne_bytes)
}

/// `array.array(typecode, obj)`: the same conversion (and conversion errors) as the pure
/// backend's `array(typecode, values)`, then the values copied out.
fn buffer_values<T: Copy>(
    obj: &Bound<'_, PyAny>,
    typecode: &str,
    from_ne_bytes: fn([u8; 8]) -> T,
) -> PyResult<Vec<T>> {
    // An array of `typecode` already holds the values: copy them once, in place, instead of
    // rebuilding the array or going through `tobytes()` (which would be a second full copy).
    let array = if is_array_of(obj, typecode)? {
        obj.clone()
    } else {
        array_type(obj.py())?.call1((typecode, obj))?
    };
    if let Some(values) = copied_in_place::<T>(&array)? {
        return Ok(values);
    }
    let raw = array.call_method0("tobytes")?;
    let raw = raw.cast::<PyBytes>()?.as_bytes();
    Ok(raw
        .chunks_exact(8)
        .map(|c| from_ne_bytes(c.try_into().unwrap_or([0; 8])))
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

/// Inputs up to this many values are read in place and their kernel runs holding the GIL:
/// for the engine's small batches, copying them out and releasing the GIL cost more than the
/// work itself; larger inputs are copied so the kernel can run while Python goes on.
const IN_PLACE_MAX: usize = 1 << 16;

/// The class `array.array`.
pub(super) fn array_type(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    py.import("array")?.getattr("array")
}

/// Whether `obj` is exactly an `array.array` of `typecode` (its bytes are then the values).
fn is_array_of(obj: &Bound<'_, PyAny>, typecode: &str) -> PyResult<bool> {
    Ok(obj.get_type().is(array_type(obj.py())?)
        && obj.getattr("typecode")?.extract::<String>()? == typecode)
}

/// `(address, length)` of an exact `array('q')` of at most [`IN_PLACE_MAX`] aligned values.
pub(super) fn small_q_array(obj: &Bound<'_, PyAny>) -> PyResult<Option<(usize, usize)>> {
    if !is_array_of(obj, "q")? {
        return Ok(None);
    }
    Ok(aligned_buffer::<i64>(obj)?.filter(|&(_, len)| len <= IN_PLACE_MAX))
}

/// `(address, length)` of an `array.array`'s memory when it is aligned for `T` (or empty).
pub(super) fn aligned_buffer<T>(array: &Bound<'_, PyAny>) -> PyResult<Option<(usize, usize)>> {
    // `buffer_info()` is the documented (address, length) of the array's memory.
    let (address, len): (usize, usize) = array.call_method0("buffer_info")?.extract()?;
    Ok((len == 0 || address % std::mem::align_of::<T>() == 0).then_some((address, len)))
}

/// An `array.array`'s buffer read in place by a kernel that runs without the GIL: a
/// `memoryview` of it is held meanwhile, so the array cannot be resized or freed (it refuses to
/// resize while a view is exported, and the view keeps it alive).
pub(super) struct Held<'py> {
    view: Bound<'py, PyAny>,
    address: usize,
    len: usize,
    pub(super) typecode: String,
}

impl Held<'_> {
    /// The held values as `T` (the caller matches `T` to `typecode`).
    ///
    /// # Safety
    /// `T` must be the element type of `typecode`.
    pub(super) unsafe fn slice<T>(&self) -> &[T] {
        if self.len == 0 {
            &[]
        } else {
            // SAFETY: `address` holds `len` aligned `T` of an array that cannot be resized or
            // freed while `view` lives; the kernel only reads it.
            unsafe { std::slice::from_raw_parts(self.address as *const T, self.len) }
        }
    }

    /// Let the array go (it may be resized again).
    pub(super) fn release(&self) -> PyResult<()> {
        self.view.call_method0("release")?;
        Ok(())
    }
}

/// Hold `obj` in place when it is an exact, aligned `array.array` of one of `accepted`
/// typecodes, else as `array.array(convert, obj)` (the pure backend's conversion and errors).
pub(super) fn held<'py>(
    obj: &Bound<'py, PyAny>,
    accepted: &[&str],
    convert: &str,
) -> PyResult<Held<'py>> {
    let py = obj.py();
    let array_type = array_type(py)?;
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
