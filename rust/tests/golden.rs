//! The golden vectors of `tests/golden/*.json` (written by tools/gen_golden.py from the pure
//! backend) checked against the Rust kernels, without Python.

use std::path::PathBuf;

use serde_json::Value;
use whileai_core::{embed, hash, rng, tokenize, unicode_data};

fn load(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn i64s(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn f64_bits(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap().to_bits())
        .collect()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect()
}

fn seed_unit(case: &Value) -> (u64, u64) {
    (
        case["seed_u64"].as_u64().unwrap(),
        case["unit_u64"].as_u64().unwrap(),
    )
}

#[test]
fn golden_streams_floats_and_bounded_ints() {
    let g = load("primitives.json");
    for case in g["streams"].as_array().unwrap() {
        let (seed, unit) = seed_unit(case);
        let want = u64s(&case["values"]);
        assert_eq!(
            rng::splitmix64_stream(seed, unit, want.len()),
            want,
            "stream {case}"
        );
    }
    for case in g["floats"].as_array().unwrap() {
        let (seed, unit) = seed_unit(case);
        let want = f64_bits(&case["values"]);
        let got: Vec<u64> = rng::uniform_floats(seed, unit, want.len())
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(got, want, "floats {case}");
    }
    for case in g["bounded"].as_array().unwrap() {
        let (seed, unit) = seed_unit(case);
        let bound = case["bound"].as_u64().unwrap();
        let want = u64s(&case["values"]);
        assert_eq!(
            rng::bounded_ints(seed, unit, bound, want.len()).unwrap(),
            want,
            "{case}"
        );
    }
}

#[test]
fn golden_hashes_and_tokens() {
    let g = load("primitives.json");
    assert_eq!(
        g["unicode_version"].as_str().unwrap(),
        unicode_data::UNICODE_VERSION
    );
    for case in g["hashes"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        assert_eq!(
            hash::hash64(text.as_bytes()),
            case["hash"].as_u64().unwrap(),
            "{text:?}"
        );
    }
    for case in g["tokens"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let numbers = case["numbers"].as_bool().unwrap();
        assert_eq!(
            tokenize::tokenize(text, numbers),
            strs(&case["tokens"]),
            "{text:?}"
        );
    }
}

#[test]
fn golden_value_errors_have_the_pure_messages() {
    // Type errors are argument conversion (rust/src/bindings/); the kernels own the value checks.
    let g = load("primitives.json");
    for case in g["errors"].as_array().unwrap() {
        let args = case["args"].as_array().unwrap();
        let message = case["message"].as_str().unwrap();
        match case["function"].as_str().unwrap() {
            "bounded_ints" if args[2].as_i64() == Some(0) && args[0].is_i64() => {
                let err = rng::bounded_ints(0, 0, 0, 1).unwrap_err();
                assert_eq!(err.to_string(), message);
            }
            "embed" | "embed_counts" if args[1].is_i64() && args[0].is_array() => {
                let dim = args[1].as_i64().unwrap();
                if dim < 1 && args[0].as_array().unwrap().iter().all(Value::is_string) {
                    assert_eq!(embed::check_dim(dim).unwrap_err().to_string(), message);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn golden_embeddings() {
    let g = load("embed.json");
    assert_eq!(g["name"].as_str().unwrap(), embed::EMBEDDER_NAME);
    let all_texts = strs(&g["texts"]);
    for case in g["cases"].as_array().unwrap() {
        let dim = case["dim"].as_u64().unwrap() as usize;
        let texts = case
            .get("texts")
            .map(strs)
            .unwrap_or_else(|| all_texts.clone());
        assert_eq!(
            embed::embed_counts(&texts, dim),
            i64s(&case["counts"]),
            "counts dim={dim}"
        );
        let got: Vec<u64> = embed::embed(&texts, dim)
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(got, f64_bits(&case["vectors"]), "vectors dim={dim}");
    }
}
