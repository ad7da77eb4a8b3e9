//! The rules over a block of JSONL lines: split, read, decided or deferred (`crate::decontam`).

use rayon::prelude::*;

use super::{Block, LineRules, Outcome, BOM, MIN_LINES_PER_TASK};
use crate::jsonl::{has_byte, read_fields, Field};
use crate::ngram::Scratch;

impl LineRules {
    /// Check every line of `block` (whole lines; the last may lack its newline); keep the
    /// details of at most `examples` drops.
    pub fn check_block(&self, block: &[u8], examples: usize) -> Block {
        let mut spans = Vec::new();
        let mut start = 0;
        while start < block.len() {
            let end = block[start..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(block.len(), |k| start + k + 1);
            spans.push((start, end));
            start = end;
        }
        let keys: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        let outcomes: Vec<Outcome> = spans
            .par_iter()
            .with_min_len(MIN_LINES_PER_TASK)
            .map_init(
                || (Scratch::default(), Vec::new()),
                |(scratch, values), &(a, b)| self.line(&block[a..b], &keys, values, scratch),
            )
            .collect();
        self.tally(outcomes, examples, |kept, line| {
            let (a, b) = spans[line];
            let text = &block[a..b];
            kept.extend_from_slice(text);
            if !text.ends_with(b"\n") {
                kept.push(b'\n');
            }
        })
    }

    fn line<'a>(
        &self,
        line: &'a [u8],
        keys: &[&str],
        values: &mut Vec<Field<'a>>,
        scratch: &mut Scratch,
    ) -> Outcome {
        // Python's `bytes.decode().isspace()` over ASCII: tab to carriage return, 0x1c-0x1f, space.
        if line.iter().all(|&c| matches!(c, 9..=13 | 28..=32)) {
            return Outcome::Blank;
        }
        if needs_python(line) {
            return Outcome::Deferred;
        }
        let Ok(text) = std::str::from_utf8(line) else {
            return Outcome::Deferred;
        };
        if !read_fields(text, keys, values) {
            return Outcome::Deferred;
        }
        self.row(values, scratch)
    }
}

/// Whether a line needs Python's reader: a carriage return, a byte-order mark, or `NaN` /
/// `Infinity` anywhere (Python accepts those constants; such a kept line is re-encoded).
fn needs_python(line: &[u8]) -> bool {
    let hit = |i: usize| match line[i] {
        b'\r' => true,
        b'N' => line[i..].starts_with(b"NaN"),
        b'I' => line[i..].starts_with(b"Infinity"),
        0xEF => line[i..].starts_with(BOM),
        _ => false,
    };
    let mut at = 0;
    // Eight bytes at a time; a word holding none of the four first bytes needs no closer look.
    while let Some(word) = line.get(at..at + 8) {
        let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let maybe = has_byte(w, b'\r') | has_byte(w, b'N') | has_byte(w, b'I') | has_byte(w, 0xEF);
        if maybe != 0 && (at..at + 8).any(hit) {
            return true;
        }
        at += 8;
    }
    (at..line.len()).any(hit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decontam::{Rule, BLANK, DEFERRED, DROPPED, KEPT};
    use crate::ngram::NgramIndex;

    fn rules(task_ids: &[&str]) -> LineRules {
        let index = NgramIndex::new(&["where is my order 4412 it was due"], 3).unwrap();
        LineRules::new(
            vec!["prompt".into()],
            vec![Some(index)],
            task_ids.iter().map(|s| s.to_string()).collect(),
            0.8,
            3,
        )
    }

    #[test]
    fn lines_for_python_are_found_at_every_offset() {
        for at in 0..20 {
            let pad = "x".repeat(at);
            for special in ["\r", "NaN", "Infinity", "\u{feff}"] {
                assert!(
                    needs_python(format!("{pad}{special}{pad}").as_bytes()),
                    "{at}"
                );
            }
            assert!(!needs_python(
                format!("{pad}Na Infinit I N {pad}").as_bytes()
            ));
        }
    }

    #[test]
    fn decides_plain_lines_and_defers_the_rest() {
        let block = concat!(
            "{\"prompt\": \"Where is my order 4412, it was due?\"}\n",
            "  \n",
            "{\"prompt\": \"refund my blender\", \"task_id\": \"t1\"}\n",
            "{\"prompt\": \"hi\"}\n",
            "{\"prompt\": NaN}\n",
            "{\"prompt\": \"x\"}\r\n",
            "not json\n",
            "{\"task_id\": \"t9\", \"prompt\": \"a b c\"}\n",
            "{\"prompt\": \" \\u3000\"}",
        );
        let got = rules(&["task_id:t9"]).check_block(block.as_bytes(), 5);
        assert_eq!(
            got.status,
            [DROPPED, BLANK, KEPT, KEPT, DEFERRED, DEFERRED, DEFERRED, DROPPED, KEPT]
        );
        assert_eq!(got.by_rule, [1, 1, 0]);
        assert_eq!(got.missing, [1]);
        assert_eq!(got.short_texts, 1);
        let kept =
            "{\"prompt\": \"refund my blender\", \"task_id\": \"t1\"}\n{\"prompt\": \"hi\"}\n";
        assert_eq!(
            got.kept,
            format!("{kept}{{\"prompt\": \" \\u3000\"}}\n").as_bytes()
        );
        assert_eq!(got.kept_at, [kept.len(); 3]);
        assert_eq!(got.drops[0].0, 0);
        assert_eq!(got.drops[0].1.rule, Rule::Verbatim);
        assert_eq!((got.drops[1].0, got.drops[1].1.matched.as_str()), (7, "t9"));
    }
}
