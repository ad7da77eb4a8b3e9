//! The text features of `hack_scan` in one pass over the rows (docs/kernels.md, "Hack-scan
//! text features").
//!
//! Each row is its agent text, lowercased with the pinned one-to-one table ([`lower`]), and the
//! length in code points of its final reply, the text's suffix. Per row: seven counts
//! (`COUNTS`), read with the pinned `re`/`str` classes ([`crate::pychars`]) that the pure twin's
//! patterns are built from. Across rows: the auto tier, the terms (words: maximal runs of `\w`,
//! and each pair of consecutive words joined by one space; punctuation is never a term) that
//! the most rows contain, ranked by that count (ties by code point order, which
//! is the byte order of UTF-8) after dropping terms every row holds; `top` is applied as
//! Python's `ranked[:top]`. The rows containing each kept term are returned column by column.
//!
//! Texts are bytes in UTF-8, or WTF-8 when Python's text held lone surrogates (each one a
//! code point with no class, as in Python). Rows split across threads; counts are integers
//! and the ranking is a total order, so the result never depends on the split.

mod counts;
pub mod lower;

use crate::utf8::decode;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rayon::prelude::*;

use crate::error::CoreError;
use crate::pychars::WORD;
pub(crate) use counts::char_flags;
use counts::{counts_of, dense, flags, DENSE};

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
    /// A pair of token ids: mixed so that the low bits (the table's bucket) depend on both.
    fn write_u64(&mut self, n: u64) {
        let mut z = self.0 ^ n;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = z ^ (z >> 31);
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(5) ^ n as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type Map<V> = HashMap<Box<[u8]>, V, BuildHasherDefault<Fx>>;
type PairMap<V> = HashMap<u64, V, BuildHasherDefault<Fx>>;

/// Call `emit` with every token of a text (a maximal run of `\w`), in order: punctuation and
/// spaces only separate tokens, they are never one.
fn tokens<F: FnMut(&[u8])>(t: &[u8; DENSE], bytes: &[u8], mut emit: F) {
    let mut p = 0;
    while p < bytes.len() {
        let (cp, len) = decode(bytes, p);
        if flags(t, cp) & WORD == 0 {
            p += len;
            continue;
        }
        let start = p;
        p += len;
        while p < bytes.len() {
            let (cp, len) = decode(bytes, p);
            if flags(t, cp) & WORD == 0 {
                break;
            }
            p += len;
        }
        emit(&bytes[start..p]);
    }
}

/// A chunk of rows read for the auto tier: its tokens interned (bytes to a chunk-local id),
/// each row's token ids, and how many rows hold each token and each adjacent pair of tokens.
///
/// A term is a token or two adjacent tokens joined by one space; a token never holds a space,
/// so a pair of ids names exactly one term, and its bytes are only built for the ranking's
/// candidates.
#[derive(Default)]
struct ChunkTerms {
    tokens: Map<u32>,
    /// Per local token id: (rows holding it, last row counted).
    token_rows: Vec<(u32, u32)>,
    /// Per pair of local ids (`first << 32 | second`): (rows holding it, last row counted).
    pair_rows: PairMap<(u32, u32)>,
    /// Each row's token ids, row after row; row `r` ends at `ends[r]`.
    ids: Vec<u32>,
    ends: Vec<u32>,
}

impl ChunkTerms {
    fn read(&mut self, t: &[u8; DENSE], bytes: &[u8], row: u32) {
        let mut prev: Option<u32> = None;
        tokens(t, bytes, |token| {
            let id = match self.tokens.get(token) {
                Some(&id) => id,
                None => {
                    let id = self.token_rows.len() as u32;
                    self.tokens.insert(token.into(), id);
                    self.token_rows.push((0, u32::MAX));
                    id
                }
            };
            let seen = &mut self.token_rows[id as usize];
            if seen.1 != row {
                *seen = (seen.0 + 1, row);
            }
            if let Some(a) = prev {
                let seen = self
                    .pair_rows
                    .entry(pair_key(a, id))
                    .or_insert((0, u32::MAX));
                if seen.1 != row {
                    *seen = (seen.0 + 1, row);
                }
            }
            self.ids.push(id);
            prev = Some(id);
        });
        self.ends.push(self.ids.len() as u32);
    }
}

#[inline]
fn pair_key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

/// A term of the ranking: a token or a pair of tokens (global ids).
#[derive(Clone, Copy)]
enum Term {
    Token(u32),
    Pair(u32, u32),
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
    // Pass 1: counts, and per chunk its tokens, each row's token ids and the rows per term.
    let chunks: Vec<ChunkTerms> = counts
        .par_chunks_mut(CHUNK * k)
        .enumerate()
        .map(|(c, out)| {
            let mut chunk = ChunkTerms::default();
            for (r, cells) in out.chunks_mut(k).enumerate() {
                let i = c * CHUNK + r;
                let bytes = texts[i].as_ref();
                counts_of(t, bytes, final_chars[i] as usize, cells);
                if auto {
                    chunk.read(t, bytes, r as u32);
                }
            }
            chunk
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
    // The chunks' tokens under global ids, and the rows holding each token and pair.
    let mut global: HashMap<&[u8], u32, BuildHasherDefault<Fx>> = HashMap::default();
    let mut token_bytes: Vec<&[u8]> = Vec::new();
    let mut token_rows: Vec<usize> = Vec::new();
    let mut pair_rows: PairMap<usize> = PairMap::default();
    let mut to_global: Vec<Vec<u32>> = Vec::with_capacity(chunks.len());
    for chunk in &chunks {
        let mut map = vec![0u32; chunk.token_rows.len()];
        for (token, &local) in &chunk.tokens {
            let id = *global.entry(token).or_insert_with(|| {
                token_bytes.push(token);
                token_rows.push(0);
                (token_bytes.len() - 1) as u32
            });
            map[local as usize] = id;
            token_rows[id as usize] += chunk.token_rows[local as usize].0 as usize;
        }
        for (&key, &(c, _)) in &chunk.pair_rows {
            let (a, b) = (map[(key >> 32) as usize], map[(key & 0xFFFF_FFFF) as usize]);
            *pair_rows.entry(pair_key(a, b)).or_insert(0) += c as usize;
        }
        to_global.push(map);
    }
    let bytes_of = |term: Term| -> Vec<u8> {
        match term {
            Term::Token(a) => token_bytes[a as usize].to_vec(),
            Term::Pair(a, b) => {
                let (a, b) = (token_bytes[a as usize], token_bytes[b as usize]);
                let mut out = Vec::with_capacity(a.len() + 1 + b.len());
                out.extend_from_slice(a);
                out.push(b' ');
                out.extend_from_slice(b);
                out
            }
        }
    };
    let mut ranked: Vec<(usize, Term)> = token_rows
        .iter()
        .enumerate()
        .map(|(id, &c)| (c, Term::Token(id as u32)))
        .chain(
            pair_rows
                .iter()
                .map(|(&key, &c)| (c, Term::Pair((key >> 32) as u32, key as u32))),
        )
        .filter(|(c, _)| *c < n)
        .collect();
    let keep = slice_len(ranked.len(), top);
    if keep == 0 {
        ranked.clear();
    } else if keep < ranked.len() {
        // Every term of the top `keep` is held by at least as many rows as the keep-th most
        // held term: only those are ranked by their bytes.
        ranked.select_nth_unstable_by(keep - 1, |a, b| b.0.cmp(&a.0));
        let least = ranked[keep - 1].0;
        ranked.retain(|(c, _)| *c >= least);
    }
    let mut named: Vec<(usize, Vec<u8>, Term)> = ranked
        .into_iter()
        .map(|(c, term)| (c, bytes_of(term), term))
        .collect();
    named.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    named.truncate(keep);
    let mut token_col = vec![u32::MAX; token_bytes.len()];
    let mut pair_col: PairMap<u32> = PairMap::default();
    // Whether a token starts a kept pair: most tokens do not, and skip the pair lookup.
    let mut opens_pair = vec![false; token_bytes.len()];
    for (j, (_, _, term)) in named.iter().enumerate() {
        match *term {
            Term::Token(a) => token_col[a as usize] = j as u32,
            Term::Pair(a, b) => {
                pair_col.insert(pair_key(a, b), j as u32);
                opens_pair[a as usize] = true;
            }
        }
    }
    // Pass 2: the kept terms of each row, from its token ids.
    let per_chunk: Vec<(Vec<u32>, Vec<u32>)> = chunks
        .par_iter()
        .zip(to_global.par_iter())
        .map(|(chunk, map)| {
            let (mut ends, mut cols) = (Vec::with_capacity(chunk.ends.len()), Vec::new());
            let mut from_id = 0usize;
            for &end in &chunk.ends {
                let from = cols.len();
                let mut prev: Option<u32> = None;
                for &local in &chunk.ids[from_id..end as usize] {
                    let id = map[local as usize];
                    let j = token_col[id as usize];
                    if j != u32::MAX {
                        cols.push(j);
                    }
                    if let Some(a) = prev {
                        if opens_pair[a as usize] {
                            if let Some(&j) = pair_col.get(&pair_key(a, id)) {
                                cols.push(j);
                            }
                        }
                    }
                    prev = Some(id);
                }
                from_id = end as usize;
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
    drop(chunks);
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
        vocab: named.into_iter().map(|(_, bytes, _)| bytes).collect(),
        ptr,
        rows,
    })
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
        // Words and pairs of consecutive words; punctuation ("!", "##", "?") is never a term.
        let want: [&[u8]; 6] = [b"12", b"a", b"a b", b"b", b"b 12", b"x"];
        assert_eq!(vocab, want);
    }
}
