//! The scan kernel's in-file tests (mirroring the pure twin's doctests).

use super::*;

#[test]
fn docstring_example() {
    let input = ScanInput {
        indptr: &[0, 1, 1, 1, 2],
        indices: &[0, 0],
        values: &[1.0, 1.0],
        n_features: 1,
        groups: &[0, 0, 1, 1],
        reward: &[1.0, 0.0, 0.0, 1.0],
    };
    let (rho, floor, support) = within_group_scan(&input, 2, 0, &Conjoin::default()).unwrap();
    assert_eq!(rho, vec![1.0]);
    assert_eq!(floor.len(), 2);
    assert_eq!(support, vec![4]);
}

#[test]
fn columns_give_the_csr_results() {
    // Feature 0 binary (rows only) on rows 0 and 3, feature 1 valued on rows 1 and 3.
    let csr = ScanInput {
        indptr: &[0, 1, 2, 2, 4],
        indices: &[0, 1, 0, 1],
        values: &[1.0, 2.0, 1.0, 0.5],
        n_features: 2,
        groups: &[0, 0, 1, 1],
        reward: &[1.0, 0.0, 0.0, 1.0],
    };
    let columns = ColumnInput {
        ptr: &[0, 2, 4],
        rows: &[0i32, 3, 1, 3],
        vptr: &[0, 0, 2],
        values: &[2.0, 0.5],
        groups: &[0, 0, 1, 1],
        reward: &[1.0, 0.0, 0.0, 1.0],
    };
    let search = Conjoin {
        columns: &[0, 1],
        top: 2,
    };
    let want = within_group_scan(&csr, 9, 3, &search).unwrap();
    let got = within_group_scan_columns(&columns, 9, 3, &search).unwrap();
    assert_eq!(got, want);
}

#[test]
fn uniform_groups_take_no_part() {
    let input = ScanInput {
        indptr: &[0, 1, 1],
        indices: &[0],
        values: &[1.0],
        n_features: 1,
        groups: &[0, 0],
        reward: &[1.0, 1.0],
    };
    let (rho, floor, support) = within_group_scan(&input, 3, 0, &Conjoin::default()).unwrap();
    assert_eq!((rho, floor, support), (vec![0.0], vec![0.0; 3], vec![0]));
}

#[test]
fn partials_name_each_block_with_a_row() {
    // Asks 3 and 2000 are mixed (blocks 0 and 1); ask 5000 (block 4) has one row.
    let input = ColumnInput {
        ptr: &[0, 2],
        rows: &[0i64, 2],
        vptr: &[0, 0],
        values: &[],
        groups: &[3, 3, 2000, 2000, 5000],
        reward: &[1.0, 0.0, 1.0, 0.0, 1.0],
    };
    let got = within_group_scan_partials(&input, 3, 1).unwrap();
    assert_eq!(got.blocks, vec![0, 1, 4]);
    assert_eq!(got.var_r, vec![0.5, 0.5, 0.0]);
    assert_eq!(got.support, vec![2, 2, 0]);
    assert_eq!(got.cov, vec![0.5, 0.5, 0.0]);
    assert_eq!(got.perm_cov.len(), 9);
}

#[test]
fn bad_index_is_named() {
    let input = ScanInput {
        indptr: &[0, 1],
        indices: &[5],
        values: &[1.0],
        n_features: 2,
        groups: &[0],
        reward: &[1.0],
    };
    let err = within_group_scan(&input, 0, 0, &Conjoin::default()).unwrap_err();
    assert_eq!(err.to_string(), "indices[0] = 5 is outside [0, 2)");
}
