//! The seven per-row counts of the hack scan's text features (`COUNTS` order), read with the
//! pinned `re`/`str` classes ([`crate::pychars`]): words of the final reply, `!`, `?`, bullet
//! lines, heading lines, code fences, digits (docs/kernels.md, "Hack-scan text features").

use std::sync::OnceLock;

use crate::pychars::{DECIMAL, DIGIT, RANGES, SPACE};
use crate::utf8::decode;

/// Code points below this read their class flags from a dense table.
pub(super) const DENSE: usize = 0x800;

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

pub(super) fn dense() -> &'static [u8; DENSE] {
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
pub(super) fn flags(table: &[u8; DENSE], cp: u32) -> u8 {
    if (cp as usize) < DENSE {
        table[cp as usize]
    } else {
        flags_slow(cp)
    }
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
pub(super) fn counts_of(t: &[u8; DENSE], bytes: &[u8], final_chars: usize, out: &mut [i64]) {
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
