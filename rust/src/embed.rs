//! The hash embedder `hash-v2` (docs/kernels.md, "Hash embedder"): unigram and adjacent-bigram
//! counts hashed into `dim` buckets, then L2-normalised with one `sqrt` and one division per
//! bucket, exactly as the pure backend does. Rows are independent, so they run in parallel.

use rayon::prelude::*;

use crate::error::CoreError;
use crate::hash::{hash64, pair64};
use crate::tokenize::{for_each_token_hash, NUM_TOKEN};

/// The versioned name recorded wherever these vectors are stored.
pub const EMBEDDER_NAME: &str = "hash-v2";

/// Rows per rayon task: enough work per task to hide the scheduling cost.
const MIN_ROWS_PER_TASK: usize = 64;

/// Check `dim`: at least 1.
pub fn check_dim(dim: i64) -> Result<usize, CoreError> {
    if dim < 1 {
        return Err(CoreError::Value(format!(
            "dim must be at least 1, got {dim}"
        )));
    }
    usize::try_from(dim).map_err(|_| CoreError::Value(format!("dim is too large: {dim}")))
}

/// Add the unigram and bigram counts of `text` into `row` (`row.len()` is the dim).
#[inline]
fn count_row(text: &str, num_hash: u64, row: &mut [i64]) {
    let dim = row.len() as u64;
    if dim.is_power_of_two() {
        // `h % dim` as a mask: the same bucket, without a 64-bit division per feature.
        count_row_by(text, num_hash, row, |h| (h & (dim - 1)) as usize);
    } else {
        count_row_by(text, num_hash, row, |h| (h % dim) as usize);
    }
}

#[inline(always)]
fn count_row_by<B: Fn(u64) -> usize>(text: &str, num_hash: u64, row: &mut [i64], bucket: B) {
    let mut previous: Option<u64> = None;
    for_each_token_hash(text, num_hash, |h| {
        row[bucket(h)] += 1;
        if let Some(p) = previous {
            row[bucket(pair64(p, h))] += 1;
        }
        previous = Some(h);
    });
}

/// Normalise one row of counts into `out`: `count / sqrt(sum of squares)`; zero stays zero.
#[inline]
fn normalise_row(counts: &[i64], out: &mut [f64]) {
    let norm_sq: i64 = counts.iter().map(|&c| c * c).sum();
    if norm_sq == 0 {
        out.fill(0.0);
        return;
    }
    let norm = (norm_sq as f64).sqrt();
    for (o, &c) in out.iter_mut().zip(counts) {
        *o = if c == 0 { 0.0 } else { c as f64 / norm };
    }
}

/// The integer bucket counts of every text, row-major (`texts.len() * dim`).
pub fn embed_counts<S: AsRef<str> + Sync>(texts: &[S], dim: usize) -> Vec<i64> {
    let mut counts = vec![0i64; texts.len() * dim];
    embed_counts_into(texts, dim, &mut counts);
    counts
}

/// Write the bucket counts of `texts` into `out` (`texts.len() * dim` values, row-major).
pub fn embed_counts_into<S: AsRef<str> + Sync>(texts: &[S], dim: usize, out: &mut [i64]) {
    assert_eq!(
        out.len(),
        texts.len() * dim,
        "embed_counts_into: output has the wrong length"
    );
    if dim == 0 {
        return;
    }
    let num_hash = hash64(NUM_TOKEN.as_bytes());
    out.par_chunks_mut(dim)
        .zip(texts.par_iter())
        .with_min_len(MIN_ROWS_PER_TASK)
        .for_each(|(row, text)| {
            row.fill(0);
            count_row(text.as_ref(), num_hash, row);
        });
}

/// The L2-normalised float64 embeddings of every text, row-major (`texts.len() * dim`).
pub fn embed<S: AsRef<str> + Sync>(texts: &[S], dim: usize) -> Vec<f64> {
    let mut out = vec![0f64; texts.len() * dim];
    embed_into(texts, dim, &mut out);
    out
}

/// Write the embeddings of `texts` into `out` (`texts.len() * dim` values, row-major).
pub fn embed_into<S: AsRef<str> + Sync>(texts: &[S], dim: usize, out: &mut [f64]) {
    assert_eq!(
        out.len(),
        texts.len() * dim,
        "embed_into: output has the wrong length"
    );
    if dim == 0 {
        return;
    }
    let num_hash = hash64(NUM_TOKEN.as_bytes());
    out.par_chunks_mut(dim)
        .zip(texts.par_iter())
        .with_min_len(MIN_ROWS_PER_TASK)
        .for_each_init(
            || vec![0i64; dim],
            |counts, (row, text)| {
                counts.fill(0);
                count_row(text.as_ref(), num_hash, counts);
                normalise_row(counts, row);
            },
        );
}

/// The cosine similarity of two rows of counts, as both backends compute it: the exact integer
/// dot product and squared norms, then `dot / sqrt(norm_a * norm_b)`; 0.0 when a norm is 0.
pub fn cosine_from_counts(a: &[i64], b: &[i64]) -> f64 {
    let dot: i128 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| i128::from(x) * i128::from(y))
        .sum();
    let na: i128 = a.iter().map(|&x| i128::from(x) * i128::from(x)).sum();
    let nb: i128 = b.iter().map(|&x| i128::from(x) * i128::from(x)).sum();
    if na == 0 || nb == 0 {
        return 0.0;
    }
    dot as f64 / ((na * nb) as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_text_is_the_zero_vector_and_rows_are_unit_length() {
        let v = embed(&["order 4412 shipped", ""], 8);
        assert_eq!(v.len(), 16);
        assert!(v[8..].iter().all(|&x| x == 0.0));
        let n: f64 = v[..8].iter().map(|x| x * x).sum();
        assert!((n - 1.0).abs() < 1e-12);
    }

    #[test]
    fn counts_are_unigrams_plus_bigrams() {
        let c = embed_counts(&["a b c", "a"], 1);
        assert_eq!(c, vec![5, 1]);
    }

    #[test]
    fn digits_collapse_to_one_token() {
        assert_eq!(
            embed_counts(&["order 1"], 64),
            embed_counts(&["order 99"], 64)
        );
    }

    #[test]
    fn dim_is_checked() {
        assert!(check_dim(0).is_err());
        assert_eq!(check_dim(3), Ok(3));
    }

    #[test]
    fn cosine_of_a_row_with_itself_is_one_and_zero_rows_give_zero() {
        let c = embed_counts(&["the cat sat", ""], 32);
        assert_eq!(cosine_from_counts(&c[..32], &c[..32]), 1.0);
        assert_eq!(cosine_from_counts(&c[..32], &c[32..]), 0.0);
    }
}
