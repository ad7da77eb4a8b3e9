//! The few top-level string fields of one JSONL line, read without building the row.
//!
//! [`read_fields`] reads the whole line with `serde_json` as one JSON object and returns, per
//! requested key, the last top-level value under it: absent, a string (escapes decoded), or
//! something else. No value is built, so key order, big ints and float precision never come
//! into play. What `serde_json` refuses and Python's `json.loads` reads (`NaN`, `Infinity`,
//! a number out of `f64` range under a requested key, a lone surrogate escape in a key or a
//! requested string) and nesting deeper than [`MAX_DEPTH`] make this reader refuse the line: the caller then reads it
//! the ordinary way, so a line accepted here is always one Python reads the same way.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

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
    if too_deep(line.as_bytes()) {
        return false;
    }
    let mut de = serde_json::Deserializer::from_str(line);
    let read = de.deserialize_map(Top { keys, out }).is_ok();
    read && de.end().is_ok()
}

/// The top-level object: requested keys are kept, every other value is skipped.
struct Top<'k, 'o, 'a> {
    keys: &'k [&'k str],
    out: &'o mut Vec<Field<'a>>,
}

impl<'de> Visitor<'de> for Top<'_, '_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(key) = map.next_key_seed(Text)? {
            match self.keys.iter().position(|&w| w == key) {
                Some(k) => self.out[k] = map.next_value_seed(Wanted)?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A string, borrowed from the line when it has no escapes.
struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Text {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

/// A requested key's value: its text when a string, else skipped.
struct Wanted;

impl<'de> DeserializeSeed<'de> for Wanted {
    type Value = Field<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Wanted {
    type Value = Field<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Field::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Field::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Field::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Field::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Field::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Field::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Field::Other)
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Field::Other)
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Field::Other)
    }
}

/// Whether `line` nests containers deeper than [`MAX_DEPTH`] (the top-level object is depth 1).
/// Only lines with that many brackets at all are walked.
fn too_deep(line: &[u8]) -> bool {
    if line.iter().filter(|&&c| c == b'[' || c == b'{').count() <= MAX_DEPTH {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &c in line {
        match (in_string, c) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return true;
                }
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
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
        // Python reads these; this reader leaves them to it.
        for python_only in [
            r#"{"\udc00":1}"#,
            r#"{"prompt":1e400}"#,
            r#"{"a":-Infinity}"#,
        ] {
            assert!(read(python_only).is_none(), "{python_only}");
        }
        // Skipped values are only validated: a lone surrogate or a huge number there is fine.
        assert!(read(r#"{"other":"\ud800","a":[1e400]}"#).is_some());
        let big = read(r#"{"task_id": 123456789012345678901234567890, "prompt": 1.5e-300}"#);
        assert_eq!(big.unwrap(), [Field::Other, Field::Other]);
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
