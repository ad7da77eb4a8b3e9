//! One error type for every kernel; `bindings/mod.rs` maps it to the Python exception the pure
//! backend raises, with the same message.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// Maps to Python `ValueError`.
    Value(String),
    /// Maps to Python `TypeError`.
    Type(String),
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::Value(msg) | CoreError::Type(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for CoreError {}

/// Python's `repr` of a float (`nan`, `inf`, `-inf`, else the shortest round-trip form), so error
/// messages name a value exactly as the pure backend's f-strings do.
pub fn float_repr(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{v:?}")
    }
}
