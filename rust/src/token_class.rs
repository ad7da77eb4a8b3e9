//! The lowercase and token class of a code point (docs/kernels.md, "Tokens"), from the
//! generated tables, with the derived lookup tables the tokenizer's hot loop reads.

use std::sync::OnceLock;

use crate::unicode_data::{CONFUSABLE, DIGIT, LOWER, RANGES, WORD};

/// Classes of a code point: 0 separates, then `WORD`, `DIGIT`, `UNSPACED`.
pub(crate) const OTHER: u8 = 0;

/// The lowercase of a code point by the simple one-to-one table (itself when unmapped).
#[inline]
pub fn lower(cp: u32) -> u32 {
    if cp < 0x80 {
        return if (b'A' as u32..=b'Z' as u32).contains(&cp) {
            cp + 32
        } else {
            cp
        };
    }
    match LOWER.binary_search_by_key(&cp, |&(from, _)| from) {
        Ok(i) => LOWER[i].1,
        Err(_) => cp,
    }
}

/// The class of a (lowercased) code point: `WORD`, `DIGIT`, `UNSPACED` or 0 for a separator.
#[inline]
pub fn class(cp: u32) -> u8 {
    if cp < 0x80 {
        let b = cp as u8;
        return if b.is_ascii_digit() {
            DIGIT
        } else if b.is_ascii_alphabetic() {
            WORD
        } else {
            OTHER
        };
    }
    // The last range whose first code point is <= cp.
    let i = RANGES.partition_point(|&(first, _, _)| first <= cp);
    if i == 0 {
        return OTHER;
    }
    let (_, last, cls) = RANGES[i - 1];
    if cp <= last {
        cls
    } else {
        OTHER
    }
}

/// The lowercase Latin letter a confusable code point folds to (`CONFUSABLE`), if it is one.
#[inline]
pub fn confusable(cp: u32) -> Option<u32> {
    CONFUSABLE
        .binary_search_by_key(&cp, |&(from, _)| from)
        .ok()
        .map(|i| CONFUSABLE[i].1)
}

/// Code points below this have their lowercase and class in one dense table (every confusable
/// code point is below it too: the generator checks).
pub(crate) const SMALL_LIMIT: u32 = 0x800;
/// Dense table bit: the (raw) code point is confusable.
const CONF_BIT: u32 = 1 << 26;
/// Block summary value: the block mixes classes, so search the ranges.
const MIXED: u8 = 0x7F;
/// Block summary bit: some code point of the block has a lowercase mapping.
const HAS_LOWER: u8 = 0x80;

/// Lookup tables derived once from the generated ones: a dense table below U+0800 (Latin,
/// Greek, Cyrillic, Armenian, Hebrew, Arabic) and a summary per 256-code-point block, so most
/// code points need no binary search. Results are those of [`lower`] and [`class`].
pub(crate) struct Tables {
    /// For `cp < SMALL_LIMIT`: `lower(cp) | class(lower(cp)) << 24`, plus `CONF_BIT`.
    small: Vec<u32>,
    /// For every block `cp >> 8`: `HAS_LOWER` bit, plus the class shared by the whole block
    /// or `MIXED`.
    blocks: Vec<u8>,
}

impl Tables {
    fn build() -> Tables {
        let small = (0..SMALL_LIMIT)
            .map(|cp| {
                let lo = lower(cp);
                let conf = if confusable(cp).is_some() {
                    CONF_BIT
                } else {
                    0
                };
                lo | (u32::from(class(lo)) << 24) | conf
            })
            .collect();
        let mut blocks = vec![0u8; 0x1100];
        for (block, summary) in blocks.iter_mut().enumerate() {
            let first = (block as u32) << 8;
            let cls = class(first);
            let uniform = (first..first + 256).all(|cp| class(cp) == cls);
            *summary = if uniform { cls } else { MIXED };
        }
        for &(from, _) in LOWER {
            blocks[(from >> 8) as usize] |= HAS_LOWER;
        }
        Tables { small, blocks }
    }

    #[inline]
    pub(crate) fn class_of(&self, cp: u32) -> u8 {
        if cp < SMALL_LIMIT {
            return ((self.small[cp as usize] >> 24) & 3) as u8;
        }
        match self.blocks.get((cp >> 8) as usize) {
            Some(&b) if b & !HAS_LOWER != MIXED => b & !HAS_LOWER,
            _ => class(cp),
        }
    }

    /// `(lower(cp), class(lower(cp)), confusable(cp).is_some())`.
    #[inline]
    pub(crate) fn lookup(&self, cp: u32) -> (u32, u8, bool) {
        if cp < SMALL_LIMIT {
            let e = self.small[cp as usize];
            return (e & 0x00FF_FFFF, ((e >> 24) & 3) as u8, e & CONF_BIT != 0);
        }
        let summary = self
            .blocks
            .get((cp >> 8) as usize)
            .copied()
            .unwrap_or(MIXED);
        let lo = if summary & HAS_LOWER != 0 {
            lower(cp)
        } else {
            cp
        };
        (lo, self.class_of(lo), false)
    }
}

pub(crate) fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(Tables::build)
}

/// ASCII byte classes: 0 separates, `WORD` for letters, `DIGIT` for 0-9.
pub(crate) static ASCII_CLASS: [u8; 128] = {
    let mut table = [OTHER; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        table[b] = if c.is_ascii_digit() {
            DIGIT
        } else if c.is_ascii_alphabetic() {
            WORD
        } else {
            OTHER
        };
        b += 1;
    }
    table
};

/// Lowercases an ASCII letter or digit: digits already have the 0x20 bit set.
pub(crate) const ASCII_LOWER_BIT: u8 = 0x20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_tables_agree_with_the_searches_on_every_code_point() {
        let t = tables();
        for cp in 0..0x11_0000u32 {
            let lo = lower(cp);
            let conf = confusable(cp).is_some();
            assert_eq!(t.lookup(cp), (lo, class(lo), conf), "U+{cp:04X}");
        }
    }

    #[test]
    fn tables_are_sorted() {
        assert!(RANGES.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(LOWER.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(CONFUSABLE.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(CONFUSABLE.iter().all(|&(cp, _)| cp < SMALL_LIMIT));
        assert!(crate::unicode_data::FOLD_OK
            .windows(2)
            .all(|w| w[0].1 < w[1].0));
    }
}
