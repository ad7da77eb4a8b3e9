//! The text features of `hack_scan` in one pass over the rows (docs/kernels.md, "Hack-scan
//! text features").
//!
//! Each row is its agent text, lowercased by Python (`str.lower()`), and the length in code
//! points of its final reply, the text's suffix. Per row: seven counts (`COUNTS`), read with
//! Python's own character classes ([`crate::pychars`]) so that they equal `str.split()`,
//! `str.count`, `str.isdigit` and the `re` patterns of `hack_features.py`. Across rows: the
//! auto tier, the terms (maximal runs of `\w` or of `[^\w\s]`, and each adjacent pair joined by
//! one space) that the most rows contain, ranked by that count (ties by code point order, which
//! is the byte order of UTF-8) after dropping terms every row holds; `top` is applied as
//! Python's `ranked[:top]`. The rows containing each kept term are returned column by column.
//!
//! Texts are bytes in UTF-8, or WTF-8 when Python's text held lone surrogates (each one a
//! code point with no class, as in Python). Rows split across threads; counts are integers
//! and the ranking is a total order, so the result never depends on the split.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::error::CoreError;
use crate::pychars::{DECIMAL, DIGIT, RANGES, SPACE, WORD};

/// The per-row counts, in this order.
pub const COUNTS: [&str; 7] = [
    "reply_words",
    "exclamations",
    "questions",
    "bullets",
    "headings",
    "code_fences",
    "digits",
];

/// Rows per rayon task.
const CHUNK: usize = 512;
const DENSE: usize = 0x800;

/// The kernel's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFeatures {
    /// `COUNTS.len()` counts per row, row after row.
    pub counts: Vec<i64>,
    /// The kept terms, best first (bytes as given: UTF-8 or WTF-8).
    pub vocab: Vec<Vec<u8>>,
    /// Column pointers: the rows of `vocab[j]` are `rows[ptr[j]..ptr[j + 1]]`, ascending.
    pub ptr: Vec<i64>,
    pub rows: Vec<i64>,
}

/// A small, fast, deterministic hasher for term bytes (FxHash); the map's order is never read.
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let word = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(5) ^ n as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type Map<V> = HashMap<Box<[u8]>, V, BuildHasherDefault<Fx>>;

/// The class flags of a code point (`pychars` bits; 0 for none).
fn flags_slow(cp: u32) -> u8 {
    match RANGES.binary_search_by(|&(lo, hi, _)| {
        if hi < cp {
            std::cmp::Ordering::Less
        } else if lo > cp {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }) {
        Ok(i) => RANGES[i].2,
        Err(_) => 0,
    }
}

fn dense() -> &'static [u8; DENSE] {
    static TABLE: OnceLock<[u8; DENSE]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = [0u8; DENSE];
        for (cp, slot) in t.iter_mut().enumerate() {
            *slot = flags_slow(cp as u32);
        }
        t
    })
}

/// The `pychars` class flags of a code point (`WORD`, `SPACE`, `DECIMAL`, `DIGIT` bits).
#[inline]
pub(crate) fn char_flags(cp: u32) -> u8 {
    flags(dense(), cp)
}

#[inline]
fn flags(table: &[u8; DENSE], cp: u32) -> u8 {
    if (cp as usize) < DENSE {
        table[cp as usize]
    } else {
        flags_slow(cp)
    }
}

/// The code point at `bytes[i]` and its length in bytes (UTF-8 or WTF-8, read leniently).
#[inline]
fn decode(bytes: &[u8], i: usize) -> (u32, usize) {
    let b = bytes[i];
    if b < 0x80 {
        return (u32::from(b), 1);
    }
    let (len, init) = if b < 0xE0 {
        (2, u32::from(b & 0x1F))
    } else if b < 0xF0 {
        (3, u32::from(b & 0x0F))
    } else {
        (4, u32::from(b & 0x07))
    };
    let end = (i + len).min(bytes.len());
    let cp = bytes[i + 1..end]
        .iter()
        .fold(init, |acc, &c| (acc << 6) | u32::from(c & 0x3F));
    (cp, end - i)
}

/// Skip code points with the `SPACE` flag from `p`; return the first position after them.
fn skip_space(t: &[u8; DENSE], bytes: &[u8], mut p: usize) -> usize {
    while p < bytes.len() {
        let (cp, len) = decode(bytes, p);
        if flags(t, cp) & SPACE == 0 {
            break;
        }
        p += len;
    }
    p
}

/// `^\s*(?:[-*•]|\d+[.)])\s+` at `p` (a line start): the match end, if any.
fn bullet_at(t: &[u8; DENSE], bytes: &[u8], p: usize) -> Option<usize> {
    let mut p = skip_space(t, bytes, p);
    if p >= bytes.len() {
        return None;
    }
    let (cp, len) = decode(bytes, p);
    if cp == '-' as u32 || cp == '*' as u32 || cp == 0x2022 {
        p += len;
    } else if flags(t, cp) & DECIMAL != 0 {
        p += len;
        loop {
            if p >= bytes.len() {
                return None;
            }
            let (cp, len) = decode(bytes, p);
            p += len;
            if flags(t, cp) & DECIMAL != 0 {
                continue;
            }
            if cp == '.' as u32 || cp == ')' as u32 {
                break;
            }
            return None;
        }
    } else {
        return None;
    }
    let end = skip_space(t, bytes, p);
    (end > p).then_some(end)
}

/// `^\s*#{1,6}\s` at `p` (a line start): the match end, if any.
fn heading_at(t: &[u8; DENSE], bytes: &[u8], p: usize) -> Option<usize> {
    let mut p = skip_space(t, bytes, p);
    let mut hashes = 0;
    while hashes < 6 && p < bytes.len() && bytes[p] == b'#' {
        hashes += 1;
        p += 1;
    }
    if hashes == 0 || p >= bytes.len() {
        return None;
    }
    let (cp, len) = decode(bytes, p);
    (flags(t, cp) & SPACE != 0).then_some(p + len)
}

/// `len(pattern.findall(text))` for a `re.MULTILINE` pattern anchored at `^`: matches are
/// tried at every line start at or after the end of the previous match.
fn count_line_matches(
    t: &[u8; DENSE],
    bytes: &[u8],
    at: fn(&[u8; DENSE], &[u8], usize) -> Option<usize>,
) -> i64 {
    let next_start = |from: usize| -> Option<usize> {
        if from == 0 || (from <= bytes.len() && bytes[from - 1] == b'\n') {
            return Some(from);
        }
        if from > bytes.len() {
            return None;
        }
        bytes[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| from + i + 1)
    };
    let mut count = 0;
    let mut cand = next_start(0);
    while let Some(s) = cand {
        cand = match at(t, bytes, s) {
            Some(end) => {
                count += 1;
                next_start(end)
            }
            None => next_start(s + 1),
        };
    }
    count
}

/// Non-overlapping occurrences of "```" (`str.count`).
fn count_fences(bytes: &[u8]) -> i64 {
    let (mut count, mut i) = (0, 0);
    while i + 3 <= bytes.len() {
        if &bytes[i..i + 3] == b"```" {
            count += 1;
            i += 3;
        } else {
            i += 1;
        }
    }
    count
}

/// The byte offset where the last `chars` code points of `bytes` start.
fn suffix_start(bytes: &[u8], chars: usize) -> usize {
    let mut seen = 0;
    let mut i = bytes.len();
    while seen < chars && i > 0 {
        i -= 1;
        if bytes[i] & 0xC0 != 0x80 {
            seen += 1;
        }
    }
    i
}

/// The seven counts of one text (`COUNTS` order).
fn counts_of(t: &[u8; DENSE], bytes: &[u8], final_chars: usize, out: &mut [i64]) {
    let (mut bang, mut question, mut digits) = (0, 0, 0);
    let mut p = 0;
    while p < bytes.len() {
        let b = bytes[p];
        if b < 0x80 {
            bang += i64::from(b == b'!');
            question += i64::from(b == b'?');
            digits += i64::from(b.is_ascii_digit());
            p += 1;
        } else {
            let (cp, len) = decode(bytes, p);
            digits += i64::from(flags(t, cp) & DIGIT != 0);
            p += len;
        }
    }
    let mut words = 0;
    let mut in_word = false;
    let mut p = suffix_start(bytes, final_chars);
    while p < bytes.len() {
        let (cp, len) = decode(bytes, p);
        let space = flags(t, cp) & SPACE != 0;
        words += i64::from(!space && !in_word);
        in_word = !space;
        p += len;
    }
    out[0] = words;
    out[1] = bang;
    out[2] = question;
    out[3] = count_line_matches(t, bytes, bullet_at);
    out[4] = count_line_matches(t, bytes, heading_at);
    out[5] = count_fences(bytes);
    out[6] = digits;
}

/// Call `emit` with every term occurrence of a text (tokens, then the pair ending at each
/// token), the pair joined in `buf`.
fn terms<F: FnMut(&[u8])>(t: &[u8; DENSE], bytes: &[u8], buf: &mut Vec<u8>, mut emit: F) {
    let mut prev: Option<(usize, usize)> = None;
    let mut p = 0;
    while p < bytes.len() {
        let (cp, len) = decode(bytes, p);
        let f = flags(t, cp);
        if f & WORD == 0 && f & SPACE != 0 {
            p += len;
            continue;
        }
        let word = f & WORD != 0;
        let start = p;
        p += len;
        while p < bytes.len() {
            let (cp, len) = decode(bytes, p);
            let f = flags(t, cp);
            let same = if word {
                f & WORD != 0
            } else {
                f & (WORD | SPACE) == 0
            };
            if !same {
                break;
            }
            p += len;
        }
        let token = &bytes[start..p];
        emit(token);
        if let Some((a, b)) = prev {
            buf.clear();
            buf.extend_from_slice(&bytes[a..b]);
            buf.push(b' ');
            buf.extend_from_slice(token);
            emit(buf);
        }
        prev = Some((start, p));
    }
}

/// Python's `len(seq[:top])` for a sequence of `len` items.
fn slice_len(len: usize, top: i64) -> usize {
    if top >= 0 {
        len.min(usize::try_from(top).unwrap_or(usize::MAX))
    } else {
        len.saturating_sub(usize::try_from(top.unsigned_abs()).unwrap_or(usize::MAX))
    }
}

/// The text features of every row: see the module docs.
///
/// # Errors
/// `CoreError::Value` when `final_chars` and `texts` differ in length or a length is negative.
pub fn hack_text_features<T: AsRef<[u8]> + Sync>(
    texts: &[T],
    final_chars: &[i64],
    top: i64,
) -> Result<TextFeatures, CoreError> {
    if texts.len() != final_chars.len() {
        return Err(CoreError::Value(format!(
            "final_chars has {} items but texts has {}",
            final_chars.len(),
            texts.len()
        )));
    }
    if let Some(bad) = final_chars.iter().find(|&&c| c < 0) {
        return Err(CoreError::Value(format!(
            "final_chars must be >= 0, got {bad}"
        )));
    }
    let t = dense();
    let n = texts.len();
    let k = COUNTS.len();
    let mut counts = vec![0i64; n * k];
    let auto = top != 0;
    // Pass 1: counts, and per chunk how many rows hold each term.
    let maps: Vec<Map<(u32, u32)>> = counts
        .par_chunks_mut(CHUNK * k)
        .enumerate()
        .map(|(c, out)| {
            let mut map: Map<(u32, u32)> = Map::default();
            let mut buf = Vec::new();
            for (r, cells) in out.chunks_mut(k).enumerate() {
                let i = c * CHUNK + r;
                let bytes = texts[i].as_ref();
                counts_of(t, bytes, final_chars[i] as usize, cells);
                if auto {
                    let row = r as u32;
                    terms(t, bytes, &mut buf, |term| match map.get_mut(term) {
                        Some(e) => {
                            if e.1 != row {
                                *e = (e.0 + 1, row);
                            }
                        }
                        None => {
                            map.insert(term.into(), (1, row));
                        }
                    });
                }
            }
            map
        })
        .collect();
    if !auto {
        return Ok(TextFeatures {
            counts,
            vocab: Vec::new(),
            ptr: vec![0],
            rows: Vec::new(),
        });
    }
    let mut total: Map<usize> = Map::default();
    for map in maps {
        for (term, (c, _)) in map {
            *total.entry(term).or_insert(0) += c as usize;
        }
    }
    let mut ranked: Vec<(usize, Box<[u8]>)> = total
        .into_iter()
        .filter(|(_, c)| *c < n)
        .map(|(t, c)| (c, t))
        .collect();
    let order =
        |a: &(usize, Box<[u8]>), b: &(usize, Box<[u8]>)| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1));
    let keep = slice_len(ranked.len(), top);
    if keep < ranked.len() && keep > 0 {
        ranked.select_nth_unstable_by(keep - 1, order);
    }
    ranked.truncate(keep);
    ranked.sort_unstable_by(order);
    let col_of: Map<u32> = ranked
        .iter()
        .enumerate()
        .map(|(j, (_, term))| (term.clone(), j as u32))
        .collect();
    // Pass 2: the kept terms of each row.
    let per_chunk: Vec<(Vec<u32>, Vec<u32>)> = texts
        .par_chunks(CHUNK)
        .map(|chunk| {
            let (mut ends, mut cols) = (Vec::with_capacity(chunk.len()), Vec::new());
            let mut buf = Vec::new();
            for text in chunk {
                let from = cols.len();
                terms(t, text.as_ref(), &mut buf, |term| {
                    if let Some(&j) = col_of.get(term) {
                        cols.push(j);
                    }
                });
                cols[from..].sort_unstable();
                let mut w = from;
                for r in from..cols.len() {
                    if r == from || cols[r] != cols[w - 1] {
                        cols[w] = cols[r];
                        w += 1;
                    }
                }
                cols.truncate(w);
                ends.push(cols.len() as u32);
            }
            (ends, cols)
        })
        .collect();
    let mut ptr = vec![0i64; keep + 1];
    for (_, cols) in &per_chunk {
        for &j in cols {
            ptr[j as usize + 1] += 1;
        }
    }
    for j in 0..keep {
        ptr[j + 1] += ptr[j];
    }
    let mut fill: Vec<i64> = ptr[..keep].to_vec();
    let mut rows = vec![0i64; ptr[keep] as usize];
    let mut i = 0i64;
    for (ends, cols) in &per_chunk {
        let mut from = 0usize;
        for &end in ends {
            for &j in &cols[from..end as usize] {
                rows[fill[j as usize] as usize] = i;
                fill[j as usize] += 1;
            }
            from = end as usize;
            i += 1;
        }
    }
    Ok(TextFeatures {
        counts,
        vocab: ranked.into_iter().map(|(_, t)| t.into_vec()).collect(),
        ptr,
        rows,
    })
}

/// A row-major sparse matrix: `(indptr, indices, values)`.
pub type Csr = (Vec<i64>, Vec<i64>, Vec<f64>);

/// The transpose of a column-major sparse matrix (`ptr`, `rows`, `values` per column, rows
/// ascending within a column): row-major `(indptr, indices, values)` with columns ascending
/// within a row.
///
/// # Errors
/// `CoreError::Value` when the pointers are not a valid non-decreasing partition of the cells
/// or a row index is outside `0..n_rows`.
pub fn columns_to_rows(
    ptr: &[i64],
    rows: &[i64],
    values: &[f64],
    n_rows: usize,
) -> Result<Csr, CoreError> {
    let bad = |what: &str| CoreError::Value(format!("columns_to_rows: {what}"));
    if ptr.first().copied().unwrap_or(0) != 0
        || ptr.windows(2).any(|w| w[1] < w[0])
        || ptr.last().copied().unwrap_or(0) as usize != rows.len()
        || rows.len() != values.len()
    {
        return Err(bad(
            "ptr must run from 0 to len(rows) without decreasing, len(values) == len(rows)",
        ));
    }
    if rows.iter().any(|&r| r < 0 || r as usize >= n_rows) {
        return Err(bad("a row index is outside 0..n_rows"));
    }
    let mut indptr = vec![0i64; n_rows + 1];
    for &r in rows {
        indptr[r as usize + 1] += 1;
    }
    for i in 0..n_rows {
        indptr[i + 1] += indptr[i];
    }
    let mut fill: Vec<i64> = indptr[..n_rows].to_vec();
    let mut indices = vec![0i64; rows.len()];
    let mut out = vec![0f64; rows.len()];
    for j in 0..ptr.len().saturating_sub(1) {
        for c in ptr[j] as usize..ptr[j + 1] as usize {
            let r = rows[c] as usize;
            let at = fill[r] as usize;
            indices[at] = j as i64;
            out[at] = values[c];
            fill[r] += 1;
        }
    }
    Ok((indptr, indices, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_terms_of_a_small_text() {
        let texts = ["- a!\n## b? 12", "x"];
        let got = hack_text_features(&texts, &[1, 1], 10).unwrap();
        assert_eq!(&got.counts[..7], &[1, 1, 1, 1, 1, 0, 2]);
        let vocab: Vec<&[u8]> = got.vocab.iter().map(|v| v.as_slice()).collect();
        assert!(vocab.contains(&b"## b".as_slice()));
        assert!(!vocab.contains(&b"x".as_slice()) || got.ptr.len() > 1);
    }

    #[test]
    fn transpose_orders_columns_within_rows() {
        let (indptr, indices, values) =
            columns_to_rows(&[0, 2, 3], &[0, 1, 1], &[1.0, 2.0, 3.0], 2).unwrap();
        assert_eq!(indptr, vec![0, 1, 3]);
        assert_eq!(indices, vec![0, 0, 1]);
        assert_eq!(values, vec![1.0, 2.0, 3.0]);
    }
}
