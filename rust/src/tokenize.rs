//! The one tokenisation rule both backends share (docs/kernels.md, "Tokens").
//!
//! Lowercase each code point by the generated one-to-one table, then classify the lowered code
//! point: a token is a maximal run of word code points, or a single code point of an unspaced
//! script. Everything else only separates tokens. ASCII takes a table-free fast path.

use crate::hash::hash64;
use crate::unicode_data::{DIGIT, LOWER, RANGES, UNSPACED, WORD};

/// The token that stands for any all-digit token when `numbers` is on.
pub const NUM_TOKEN: &str = "<num>";

/// Classes of a code point: 0 separates, then `WORD`, `DIGIT`, `UNSPACED`.
const OTHER: u8 = 0;

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

/// Call `emit(token, all_digits)` for every token of `text`, in order. The token is lowercase
/// UTF-8 in a buffer that is reused between calls.
#[inline]
pub fn for_each_token<F: FnMut(&str, bool)>(text: &str, mut emit: F) {
    let mut buf = String::with_capacity(32);
    let mut digits = true;
    if text.is_ascii() {
        for &b in text.as_bytes() {
            if b.is_ascii_alphanumeric() {
                digits &= b.is_ascii_digit();
                buf.push(b.to_ascii_lowercase() as char);
            } else if !buf.is_empty() {
                emit(&buf, digits);
                buf.clear();
                digits = true;
            }
        }
    } else {
        for ch in text.chars() {
            let cp = lower(ch as u32);
            match class(cp) {
                OTHER => {
                    if !buf.is_empty() {
                        emit(&buf, digits);
                        buf.clear();
                        digits = true;
                    }
                }
                UNSPACED => {
                    if !buf.is_empty() {
                        emit(&buf, digits);
                        buf.clear();
                        digits = true;
                    }
                    // Lowered code points are valid scalar values: the table maps scalars.
                    let c = char::from_u32(cp).unwrap_or(ch);
                    let mut one = [0u8; 4];
                    emit(c.encode_utf8(&mut one), false);
                }
                cls => {
                    debug_assert!(cls == WORD || cls == DIGIT);
                    digits &= cls == DIGIT;
                    buf.push(char::from_u32(cp).unwrap_or(ch));
                }
            }
        }
    }
    if !buf.is_empty() {
        emit(&buf, digits);
    }
}

/// The tokens of `text`; with `numbers`, an all-digit token becomes `<num>`.
pub fn tokenize(text: &str, numbers: bool) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |token, all_digits| {
        if numbers && all_digits {
            out.push(NUM_TOKEN.to_owned());
        } else {
            out.push(token.to_owned());
        }
    });
    out
}

/// Call `emit(hash)` with the `hash64` of every token of `text` in the embedder's view
/// (`numbers` on), without allocating the tokens.
#[inline]
pub fn for_each_token_hash<F: FnMut(u64)>(text: &str, num_hash: u64, mut emit: F) {
    for_each_token(text, |token, all_digits| {
        emit(if all_digits {
            num_hash
        } else {
            hash64(token.as_bytes())
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<String> {
        tokenize(text, false)
    }

    #[test]
    fn ascii_words_lowercase_and_separate() {
        assert_eq!(
            toks("Where's order #4412?"),
            ["where", "s", "order", "4412"]
        );
        assert_eq!(tokenize("Order 4412 a1", true), ["order", "<num>", "a1"]);
        assert!(toks("  ,.;  ").is_empty());
    }

    #[test]
    fn unspaced_scripts_give_one_token_per_code_point() {
        assert_eq!(toks("注文abc確認"), ["注", "文", "abc", "確", "認"]);
        assert_eq!(
            toks("สวัสดี").len(),
            "สวัสดี"
                .chars()
                .filter(|&c| class(c as u32) == UNSPACED)
                .count()
        );
    }

    #[test]
    fn greek_sigma_has_no_context_rule_and_other_scripts_are_words() {
        assert_eq!(toks("ΟΔΟΣ"), ["οδοσ"]);
        assert_eq!(toks("Привет, café"), ["привет", "café"]);
    }

    #[test]
    fn non_ascii_digits_are_numbers() {
        assert_eq!(tokenize("٣٤ x", true), ["<num>", "x"]);
    }

    #[test]
    fn tables_are_sorted() {
        assert!(RANGES.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(LOWER.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
