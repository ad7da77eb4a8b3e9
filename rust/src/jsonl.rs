//! The few top-level string fields of one JSONL line, read without building the row.
//!
//! [`read_fields`] validates the whole line as one JSON object (RFC 8259: the grammar Python's
//! `json.loads` accepts, minus its `NaN`/`Infinity` extensions) and returns, per requested key,
//! the last top-level value under it: absent, a string (escapes decoded), or something else.
//! It is deliberately stricter than Python where that is simpler (nesting deeper than
//! [`MAX_DEPTH`], a lone surrogate escape in a requested string): the caller then reads the
//! line the ordinary way, so a line accepted here is always one Python reads the same way.

use std::borrow::Cow;

/// Deeper lines are refused (Python's readers allow 200 levels; the caller falls back).
pub const MAX_DEPTH: usize = 64;

/// A requested key's value in a line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Field<'a> {
    /// The key is not in the object.
    #[default]
    Absent,
    /// The key holds a number, literal, object or array.
    Other,
    /// The key holds this string (escapes decoded).
    Text(Cow<'a, str>),
}

/// Read `line` as one JSON object; fill `out[k]` with the value of `keys[k]` (the last one when
/// a key repeats, as Python does). Returns false when the line is not an object this reader
/// accepts.
///
/// ```
/// use whileai_core::jsonl::{read_fields, Field};
/// let mut out = Vec::new();
/// assert!(read_fields(r#"{"prompt": "caf\u00e9", "n": [1]}"#, &["prompt", "n", "x"], &mut out));
/// assert_eq!(out, [Field::Text("café".into()), Field::Other, Field::Absent]);
/// assert!(!read_fields("[1]", &["prompt"], &mut out));
/// ```
pub fn read_fields<'a>(line: &'a str, keys: &[&str], out: &mut Vec<Field<'a>>) -> bool {
    out.clear();
    out.resize(keys.len(), Field::Absent);
    let mut p = Parser {
        text: line,
        bytes: line.as_bytes(),
        pos: 0,
    };
    p.ws();
    if !p.eat(b'{') {
        return false;
    }
    p.ws();
    if !p.eat(b'}') {
        loop {
            p.ws();
            let Some(key) = p.string() else { return false };
            let key = p.decoded(key);
            p.ws();
            if !p.eat(b':') {
                return false;
            }
            p.ws();
            let slot = key
                .as_deref()
                .and_then(|k| keys.iter().position(|&w| w == k));
            match slot {
                Some(k) if p.peek() == Some(b'"') => {
                    let Some(raw) = p.string() else { return false };
                    let Some(text) = p.decoded(raw) else {
                        return false;
                    };
                    out[k] = Field::Text(text);
                }
                Some(k) => {
                    if !p.value(2) {
                        return false;
                    }
                    out[k] = Field::Other;
                }
                None => {
                    if !p.value(2) {
                        return false;
                    }
                }
            }
            p.ws();
            if p.eat(b',') {
                continue;
            }
            if p.eat(b'}') {
                break;
            }
            return false;
        }
    }
    p.ws();
    p.pos == p.bytes.len()
}

/// A string's body in the line: byte range between the quotes, and whether it has escapes.
#[derive(Clone, Copy)]
struct Raw {
    start: usize,
    end: usize,
    escaped: bool,
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.pos += usize::from(hit);
        hit
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        let hit = self.bytes[self.pos..].starts_with(word);
        self.pos += if hit { word.len() } else { 0 };
        hit
    }

    /// A string at the cursor (which must be on its opening quote): its body, validated.
    fn string(&mut self) -> Option<Raw> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.pos;
        let mut escaped = false;
        loop {
            // Eight plain bytes at a time (no quote, backslash or control character).
            while let Some(word) = self.bytes.get(self.pos..self.pos + 8) {
                let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
                if has_byte(w, b'"') | has_byte(w, b'\\') | has_less(w, 0x20) != 0 {
                    break;
                }
                self.pos += 8;
            }
            match *self.bytes.get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    return Some(Raw {
                        start,
                        end: self.pos - 1,
                        escaped,
                    });
                }
                b'\\' => {
                    escaped = true;
                    match *self.bytes.get(self.pos + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.pos += 2,
                        b'u' => {
                            let hex = self.bytes.get(self.pos + 2..self.pos + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.pos += 6;
                        }
                        _ => return None,
                    }
                }
                0..=0x1f => return None,
                _ => self.pos += 1,
            }
        }
    }

    /// The text of a validated string body; None for a lone surrogate escape.
    fn decoded(&self, raw: Raw) -> Option<Cow<'a, str>> {
        let body = &self.text[raw.start..raw.end];
        if !raw.escaped {
            return Some(Cow::Borrowed(body));
        }
        let b = body.as_bytes();
        let mut out = String::with_capacity(body.len());
        let mut i = 0;
        while i < b.len() {
            let next = b[i..]
                .iter()
                .position(|&c| c == b'\\')
                .map_or(b.len(), |k| i + k);
            out.push_str(&body[i..next]);
            if next == b.len() {
                break;
            }
            let (c, used) = match b[next + 1] {
                b'"' => ('"', 2),
                b'\\' => ('\\', 2),
                b'/' => ('/', 2),
                b'b' => ('\u{8}', 2),
                b'f' => ('\u{c}', 2),
                b'n' => ('\n', 2),
                b'r' => ('\r', 2),
                b't' => ('\t', 2),
                _ => {
                    let hi = hex4(&b[next + 2..next + 6]);
                    if (0xD800..0xDC00).contains(&hi) {
                        let low = b.get(next + 6..next + 12)?;
                        if !low.starts_with(b"\\u") {
                            return None;
                        }
                        let lo = hex4(&low[2..]);
                        if !(0xDC00..0xE000).contains(&lo) {
                            return None;
                        }
                        let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        (char::from_u32(cp)?, 12)
                    } else {
                        (char::from_u32(hi)?, 6) // None for a lone low surrogate
                    }
                }
            };
            out.push(c);
            i = next + used;
        }
        Some(Cow::Owned(out))
    }

    fn number(&mut self) -> bool {
        self.eat(b'-');
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return false,
        }
        if self.eat(b'.') {
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return false;
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return false;
            }
            self.digits();
        }
        true
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    /// Skip one value at `depth` (the top-level object is depth 1).
    fn value(&mut self, depth: usize) -> bool {
        match self.peek() {
            Some(b'"') => self.string().is_some(),
            Some(open @ (b'{' | b'[')) => {
                if depth > MAX_DEPTH {
                    return false;
                }
                let close = if open == b'{' { b'}' } else { b']' };
                self.pos += 1;
                self.ws();
                if self.eat(close) {
                    return true;
                }
                loop {
                    self.ws();
                    if open == b'{' {
                        if self.string().is_none() {
                            return false;
                        }
                        self.ws();
                        if !self.eat(b':') {
                            return false;
                        }
                        self.ws();
                    }
                    if !self.value(depth + 1) {
                        return false;
                    }
                    self.ws();
                    if self.eat(b',') {
                        continue;
                    }
                    return self.eat(close);
                }
            }
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => false,
        }
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Nonzero when some byte of `w` is zero (exact when the answer is no).
#[inline]
fn has_zero(w: u64) -> u64 {
    w.wrapping_sub(ONES) & !w & HIGHS
}

/// Nonzero when some byte of `w` equals `b` (exact when the answer is no).
#[inline]
pub(crate) fn has_byte(w: u64, b: u8) -> u64 {
    has_zero(w ^ ONES.wrapping_mul(u64::from(b)))
}

/// Nonzero when some byte of `w` is below `n` (`n` <= 128; exact when the answer is no).
#[inline]
fn has_less(w: u64, n: u8) -> u64 {
    w.wrapping_sub(ONES.wrapping_mul(u64::from(n))) & !w & HIGHS
}

fn hex4(digits: &[u8]) -> u32 {
    digits.iter().fold(0, |acc, &d| {
        acc * 16 + (d as char).to_digit(16).unwrap_or(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Option<Vec<Field<'_>>> {
        let mut out = Vec::new();
        read_fields(line, &["prompt", "task_id"], &mut out).then_some(out)
    }

    #[test]
    fn accepts_objects_and_decodes_escapes() {
        let got = read(
            r#" {"prompt":"a\"b\\c\/\n\ud83d\ude00","task_id":7,"x":{"y":[1,-2.5e3,true,null]}} "#,
        );
        assert_eq!(
            got.unwrap(),
            [Field::Text("a\"b\\c/\n😀".into()), Field::Other]
        );
        assert_eq!(read("{}").unwrap(), [Field::Absent, Field::Absent]);
        let dup = read(r#"{"prompt": "a", "prompt": "b", "task_id": "t", "task_id": null}"#);
        assert_eq!(dup.unwrap(), [Field::Text("b".into()), Field::Other]);
        let escaped_key = read(r#"{"pro\u006dpt": "x"}"#);
        assert_eq!(escaped_key.unwrap()[0], Field::Text("x".into()));
    }

    #[test]
    fn special_bytes_are_found_at_every_offset() {
        for at in 0..20 {
            let pad = "x".repeat(at);
            let line = format!(r#"{{"prompt": "{pad}\"q\\{pad}", "task_id": "{pad}"}}"#);
            let want = format!("{pad}\"q\\{pad}");
            assert_eq!(read(&line).unwrap()[0], Field::Text(want.into()), "{at}");
            assert!(read(&format!("{{\"prompt\": \"{pad}\u{1}{pad}\"}}")).is_none());
            assert!(read(&format!("{{\"prompt\": \"{pad}")).is_none());
        }
    }

    #[test]
    fn refuses_what_python_refuses_and_a_little_more() {
        for bad in [
            "",
            "[1]",
            "{",
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":-}"#,
            r#"{"a":tru}"#,
            "{\"a\":\"\t\"}",
            r#"{"a":"\x"}"#,
            r#"{"a":1} x"#,
            r#"{"prompt":"\ud800"}"#,
            r#"{"prompt":"\udc00x"}"#,
            r#"{"a":NaN}"#,
            "{'a':1}",
        ] {
            assert!(read(bad).is_none(), "{bad}");
        }
        // A lone surrogate outside the requested keys is fine (Python accepts it too).
        assert!(read(r#"{"other":"\ud800"}"#).is_some());
        let deep = format!(
            "{{\"a\":{}{}}}",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        assert!(read(&deep).is_none());
        let ok = format!(
            "{{\"a\":{}{}}}",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        assert!(read(&ok).is_some());
    }
}
