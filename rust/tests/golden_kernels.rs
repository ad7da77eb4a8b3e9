//! Golden vectors of the ported kernels (`tests/golden/{resample,scan}.json`, written by
//! tools/gen_golden_kernels.py from the pure backend), checked bit for bit without Python.

use std::path::PathBuf;

use serde_json::Value;
use whileai_core::{bootstrap, ngram, scan, select};

fn load(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).expect("golden file is JSON");
    doc["cases"].as_array().expect("a list of cases").clone()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn bits(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn to_bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|x| x.to_bits()).collect()
}

/// A seed as the bindings pass it: any JSON integer reduced modulo 2**64.
fn seed(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_i64().map(|s| s as u64))
        .expect("an integer seed")
}

#[test]
fn resample_matches_the_pure_backend() {
    let cases = load("resample.json");
    assert!(cases.len() >= 10);
    for case in cases {
        let args = case["args"].as_array().unwrap();
        let got = match case["kernel"].as_str().unwrap() {
            "bootstrap_means" => bootstrap::bootstrap_means(
                &floats(&args[0]),
                args[1].as_u64().unwrap() as usize,
                seed(&args[2]),
            ),
            "sign_flip_means" => bootstrap::sign_flip_means(
                &floats(&args[0]),
                args[1].as_u64().unwrap() as usize,
                seed(&args[2]),
            ),
            "bootstrap_mean_diff" => bootstrap::bootstrap_mean_diff(
                &floats(&args[0]),
                &floats(&args[1]),
                args[2].as_u64().unwrap() as usize,
                seed(&args[3]),
            ),
            other => panic!("unknown kernel {other}"),
        }
        .unwrap();
        assert_eq!(to_bits(&got), bits(&case["bits"]), "{}", case["kernel"]);
    }
}

#[test]
fn scan_matches_the_pure_backend() {
    let cases = load("scan.json");
    assert!(!cases.is_empty());
    for case in cases {
        let a = case["args"].as_array().unwrap();
        let (indptr, indices, values) = (ints(&a[0]), ints(&a[1]), floats(&a[2]));
        let (groups, reward) = (ints(&a[4]), floats(&a[5]));
        let input = scan::ScanInput {
            indptr: &indptr,
            indices: &indices,
            values: &values,
            n_features: a[3].as_u64().unwrap() as usize,
            groups: &groups,
            reward: &reward,
        };
        // Cases with a conjunction search carry two more arguments: `conjoin` and `top`.
        let columns = a.get(8).map(ints).unwrap_or_default();
        let search = scan::Conjoin {
            columns: &columns,
            top: a.get(9).map_or(0, |t| t.as_u64().unwrap() as usize),
        };
        let (rho, floor, support) = scan::within_group_scan(
            &input,
            a[6].as_u64().unwrap() as usize,
            seed(&a[7]),
            &search,
        )
        .unwrap();
        assert_eq!(to_bits(&rho), bits(&case["rho"]));
        assert_eq!(to_bits(&floor), bits(&case["floor"]));
        assert_eq!(support, ints(&case["support"]));
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn ngram_index_matches_the_pure_backend() {
    let cases = load("ngram.json");
    assert_eq!(cases.len(), 4);
    for case in cases {
        let evals = strings(&case["evals"]);
        let probes = strings(&case["probes"]);
        let index = ngram::NgramIndex::new(&evals, case["n"].as_u64().unwrap() as usize).unwrap();
        let hits = index.scan(&probes);
        let best: Vec<i64> = hits.iter().map(|h| h.best).collect();
        let covered: Vec<i64> = hits.iter().map(|h| h.covered).collect();
        let total: Vec<i64> = hits.iter().map(|h| h.total).collect();
        assert_eq!(best, ints(&case["best"]));
        assert_eq!(covered, ints(&case["covered"]));
        assert_eq!(total, ints(&case["total"]));
        let shared: Vec<Vec<String>> = case["shared"]
            .as_array()
            .unwrap()
            .iter()
            .map(strings)
            .collect();
        assert_eq!(
            hits.iter().map(|h| h.shared.clone()).collect::<Vec<_>>(),
            shared
        );
        assert_eq!(index.exact(&probes), ints(&case["exact"]));
        assert_eq!(hex(&index.to_bytes()), case["state_hex"].as_str().unwrap());
    }
}

#[test]
fn select_matches_the_pure_backend() {
    let cases = load("select.json");
    assert_eq!(cases.len(), 3);
    for case in cases {
        let a = case["args"].as_array().unwrap();
        let anchors: Vec<usize> = ints(&a[5]).into_iter().map(|x| x as usize).collect();
        let picks = select::select_diverse(
            &ints(&a[0]),
            a[1].as_u64().unwrap() as usize,
            a[2].as_u64().unwrap() as usize,
            seed(&a[3]),
            a[4].as_f64().unwrap(),
            &anchors,
        );
        let want: Vec<usize> = ints(&case["picks"])
            .into_iter()
            .map(|x| x as usize)
            .collect();
        assert_eq!(picks, want);
    }
}
