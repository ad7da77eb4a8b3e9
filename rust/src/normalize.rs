//! Text normalisation before tokenising (docs/kernels.md, "Tokens"): the same in both backends.
//!
//! Default-ignorable code points are removed, then the text is put in NFKC by the committed
//! tables of `unicode_data` (generated from one Unicode version), so the Rust standard library's
//! or any crate's Unicode version never changes a token. A text holding no code point that could
//! change is returned borrowed, after one pass over its bytes.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::unicode_data::{CCC, COMPOSE, DECOMP, DECOMP_DATA, IGNORABLE, UNSTABLE};

// Hangul syllables: composed and decomposed by arithmetic (Unicode chapter 3.12).
const S_BASE: u32 = 0xAC00;
const L_BASE: u32 = 0x1100;
const V_BASE: u32 = 0x1161;
const T_BASE: u32 = 0x11A7;
const L_COUNT: u32 = 19;
const V_COUNT: u32 = 21;
const T_COUNT: u32 = 28;
const N_COUNT: u32 = V_COUNT * T_COUNT;
const S_COUNT: u32 = L_COUNT * N_COUNT;

/// Whether `cp` lies in one of the sorted, disjoint `(first, last)` ranges.
#[inline]
pub fn in_ranges(ranges: &[(u32, u32)], cp: u32) -> bool {
    let i = ranges.partition_point(|&(first, _)| first <= cp);
    i > 0 && cp <= ranges[i - 1].1
}

/// One bit per Basic Multilingual Plane code point: may it change a text? (`UNSTABLE`)
fn unstable_bmp() -> &'static [u64; 1024] {
    static BITS: OnceLock<Box<[u64; 1024]>> = OnceLock::new();
    BITS.get_or_init(|| {
        let mut bits = Box::new([0u64; 1024]);
        for &(lo, hi) in UNSTABLE {
            for cp in lo..=hi.min(0xFFFF) {
                bits[(cp >> 6) as usize] |= 1 << (cp & 63);
            }
        }
        bits
    })
}

/// Whether `cp` may change a text under [`normalize`].
#[inline]
pub fn is_unstable(cp: u32) -> bool {
    if cp < 0x1_0000 {
        unstable_bmp()[(cp >> 6) as usize] >> (cp & 63) & 1 == 1
    } else {
        in_ranges(UNSTABLE, cp)
    }
}

/// The canonical combining class of `cp`.
#[inline]
fn ccc(cp: u32) -> u8 {
    if cp < 0x300 {
        return 0;
    }
    let i = CCC.partition_point(|&(first, _, _)| first <= cp);
    match i.checked_sub(1).map(|k| CCC[k]) {
        Some((_, last, class)) if cp <= last => class,
        _ => 0,
    }
}

/// The primary composite of `a` followed by `b`, if any.
fn pair(a: u32, b: u32) -> Option<u32> {
    let (l, v) = (a.wrapping_sub(L_BASE), b.wrapping_sub(V_BASE));
    if l < L_COUNT && v < V_COUNT {
        return Some(S_BASE + (l * V_COUNT + v) * T_COUNT);
    }
    let (s, t) = (a.wrapping_sub(S_BASE), b.wrapping_sub(T_BASE));
    if s < S_COUNT && s % T_COUNT == 0 && t > 0 && t < T_COUNT {
        return Some(a + t);
    }
    COMPOSE
        .binary_search_by(|&(x, y, _)| (x, y).cmp(&(a, b)))
        .ok()
        .map(|i| COMPOSE[i].2)
}

/// Append the full compatibility decomposition of `cp` (ignorables dropped) to `out`.
fn decompose(cp: u32, out: &mut Vec<u32>) {
    if in_ranges(IGNORABLE, cp) {
        return;
    }
    let s = cp.wrapping_sub(S_BASE);
    if s < S_COUNT {
        out.push(L_BASE + s / N_COUNT);
        out.push(V_BASE + (s % N_COUNT) / T_COUNT);
        if s % T_COUNT != 0 {
            out.push(T_BASE + s % T_COUNT);
        }
        return;
    }
    match DECOMP.binary_search_by_key(&cp, |&(from, _, _)| from) {
        Ok(i) => {
            let (_, start, len) = DECOMP[i];
            let start = usize::from(start);
            out.extend_from_slice(&DECOMP_DATA[start..start + usize::from(len)]);
        }
        Err(_) => out.push(cp),
    }
}

/// NFKC of `text` with default-ignorable code points removed (see [`normalize`]).
pub fn nfkc(text: &str) -> String {
    let mut cps: Vec<u32> = Vec::with_capacity(text.len());
    for c in text.chars() {
        decompose(c as u32, &mut cps);
    }
    // Canonical ordering: each run of non-starters sorted by combining class (stable).
    let mut i = 0;
    while i < cps.len() {
        if ccc(cps[i]) == 0 {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < cps.len() && ccc(cps[j]) != 0 {
            j += 1;
        }
        if j - i > 1 {
            cps[i..j].sort_by_key(|&c| ccc(c));
        }
        i = j;
    }
    // Canonical composition: each character joins the last starter unless blocked.
    let mut out: Vec<u32> = Vec::with_capacity(cps.len());
    let mut starter: Option<usize> = None;
    let mut last_ccc: Option<u8> = None; // of the last character after the starter
    for cp in cps {
        let class = ccc(cp);
        if let Some(s) = starter {
            if last_ccc.map_or(true, |l| l != 0 && l < class) {
                if let Some(composite) = pair(out[s], cp) {
                    out[s] = composite;
                    continue;
                }
            }
        }
        if class == 0 {
            starter = Some(out.len());
            last_ccc = None;
        } else {
            last_ccc = Some(class);
        }
        out.push(cp);
    }
    out.into_iter()
        .map(|cp| char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// The index of the first byte at or after `i` that is not ASCII, or `bytes.len()`.
#[inline]
fn next_non_ascii(bytes: &[u8], mut i: usize) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while i + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[i..i + 8]);
        let high = u64::from_le_bytes(word) & HIGH;
        if high != 0 {
            return i + (high.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < bytes.len() && bytes[i] < 0x80 {
        i += 1;
    }
    i
}

/// `text` without default-ignorable code points, in NFKC; borrowed when nothing can change.
pub fn normalize(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut i = next_non_ascii(bytes, 0);
    while i < bytes.len() {
        // `i` is at a lead byte: decode one scalar.
        let c = text[i..].chars().next().unwrap_or_default();
        if is_unstable(c as u32) {
            return Cow::Owned(nfkc(text));
        }
        i = next_non_ascii(bytes, i + c.len_utf8());
    }
    Cow::Borrowed(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evasions_read_as_plain_text() {
        assert_eq!(
            normalize("\u{FB01}ne \u{FF43}\u{FF41}\u{FF46}e\u{301} con\u{AD}tami\u{200B}nation"),
            "fine café contamination"
        );
        assert!(matches!(normalize("plain ascii, Привет"), Cow::Borrowed(_)));
    }

    #[test]
    fn hangul_and_reordering() {
        // Decomposed jamo compose; marks are reordered by combining class before composing.
        assert_eq!(nfkc("\u{1100}\u{1161}\u{11A8}"), "\u{AC01}");
        assert_eq!(nfkc("a\u{323}\u{302}"), nfkc("a\u{302}\u{323}"));
        assert_eq!(nfkc("a\u{302}\u{323}"), "\u{1EAD}");
        assert_eq!(nfkc("\u{B47}\u{B3E}"), "\u{B4B}");
    }

    #[test]
    fn tables_are_sorted() {
        assert!(UNSTABLE.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(IGNORABLE.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(CCC.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(DECOMP.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(COMPOSE
            .windows(2)
            .all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
        assert!(CCC.iter().all(|&(first, _, _)| first >= 0x300));
    }
}
