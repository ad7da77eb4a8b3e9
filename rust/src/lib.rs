//! The hot core of whileai: plain Rust kernels, with all Python glue in `bindings/` (one file per
//! kernel family; the module itself in `bindings/mod.rs`).

pub mod bootstrap;
pub mod decontam;
pub mod embed;
pub mod error;
pub mod hack_text;
pub mod hash;
pub mod jsonl;
pub mod ngram;
pub mod normalize;
pub mod pychars;
pub mod pyre;
pub mod pyre_compile;
pub mod pyre_parse;
pub mod pyre_text;
pub mod rng;
pub mod scan;
pub mod select;
pub mod token_class;
pub mod tokenize;
pub mod trace;
pub mod unicode_data;
pub mod utf8;

#[cfg(feature = "python")]
mod bindings;
