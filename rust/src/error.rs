//! One error type for every kernel; `bindings.rs` maps it to the Python exception the pure
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
