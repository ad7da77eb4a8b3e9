//! The hot core of whileai: plain Rust kernels, with all Python glue in `bindings.rs`.

pub mod error;

#[cfg(feature = "python")]
mod bindings;
