//! Decontamination rules over a block of JSONL lines (docs/kernels.md, "N-grams").
//!
//! [`LineRules::check_block`] splits a block of whole lines, reads the checked fields of each
//! line ([`crate::jsonl::read_fields`]), applies the `same_task`, `verbatim` and `near` rules
//! (one tokenisation per text), lines split across threads, and returns the counts, the kept
//! lines' bytes and the first few drops. A line it does not decide (not plain JSON, `NaN`,
//! `Infinity`, a carriage return, a byte-order mark, invalid UTF-8, deep nesting) is *deferred*:
//! the caller reads it the ordinary way, so errors and odd lines behave as before.

use std::borrow::Cow;
use std::collections::HashSet;

use rayon::prelude::*;

use crate::jsonl::{has_byte, read_fields, Field};
use crate::ngram::{NgramIndex, Scratch};

/// Per-line status bytes of a [`Block`].
pub const BLANK: u8 = 0;
pub const KEPT: u8 = 1;
pub const DROPPED: u8 = 2;
pub const DEFERRED: u8 = 3;

const MIN_LINES_PER_TASK: usize = 64;
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Which rule dropped a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    SameTask,
    Verbatim,
    Near,
}

/// Why one row was dropped. `field` is the checked field's position in `fields`, or for
/// `SameTask` 0 (`scenario_id`) or 1 (`task_id`); `matched` is the task id for `SameTask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drop {
    pub rule: Rule,
    pub field: usize,
    pub eval: i64,
    pub covered: i64,
    pub total: i64,
    pub shared: Vec<String>,
    pub matched: String,
}

/// What the rules made of one line.
#[derive(Debug)]
enum Outcome {
    Blank,
    Deferred,
    Row {
        drop: Option<Drop>,
        /// Bit `f`: field `f` was looked at and had no text.
        missing: u64,
        /// Checked texts shorter than `n` tokens.
        short: u32,
    },
}

/// The result of one block: per-line status, kept bytes and counts over the decided rows.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Block {
    /// Per line: [`BLANK`], [`KEPT`], [`DROPPED`] or [`DEFERRED`].
    pub status: Vec<u8>,
    /// The kept lines, each ending in one newline.
    pub kept: Vec<u8>,
    /// Per deferred line (in order), the length of `kept` before it.
    pub kept_at: Vec<usize>,
    /// Dropped rows per rule: same_task, verbatim, near.
    pub by_rule: [usize; 3],
    /// Per field: rows dropped by (verbatim, near) on it.
    pub by_field: Vec<[usize; 2]>,
    /// Per field: rows with no text there.
    pub missing: Vec<usize>,
    pub short_texts: usize,
    /// The first drops of the block: (line, why).
    pub drops: Vec<(usize, Drop)>,
}

/// The decontamination rules, bound to an eval set.
#[derive(Debug, Clone)]
pub struct LineRules {
    fields: Vec<String>,
    /// Per field, the index it is checked against (None: the eval set has no such texts).
    indexes: Vec<Option<NgramIndex>>,
    task_ids: HashSet<String>,
    overlap: f64,
    n: usize,
    /// The keys read from each line: the fields, then `scenario_id` and `task_id`.
    keys: Vec<String>,
    field_slot: Vec<usize>,
    task_slot: [usize; 2],
}

impl LineRules {
    /// Bind the rules. `task_ids` holds `"scenario_id:<id>"` / `"task_id:<id>"` strings.
    pub fn new(
        fields: Vec<String>,
        indexes: Vec<Option<NgramIndex>>,
        task_ids: HashSet<String>,
        overlap: f64,
        n: usize,
    ) -> Self {
        let mut keys: Vec<String> = Vec::new();
        let mut slot = |key: &str| match keys.iter().position(|k| k == key) {
            Some(k) => k,
            None => {
                keys.push(key.to_string());
                keys.len() - 1
            }
        };
        let field_slot = fields.iter().map(|f| slot(f)).collect();
        let task_slot = [slot("scenario_id"), slot("task_id")];
        LineRules {
            fields,
            indexes,
            task_ids,
            overlap,
            n,
            keys,
            field_slot,
            task_slot,
        }
    }

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
        let fields = self.fields.len();
        let mut out = Block {
            status: Vec::with_capacity(spans.len()),
            kept: Vec::with_capacity(block.len() + 1),
            by_field: vec![[0; 2]; fields],
            missing: vec![0; fields],
            ..Block::default()
        };
        for (line, (outcome, &(a, b))) in outcomes.into_iter().zip(&spans).enumerate() {
            match outcome {
                Outcome::Blank => out.status.push(BLANK),
                Outcome::Deferred => {
                    out.status.push(DEFERRED);
                    out.kept_at.push(out.kept.len());
                }
                Outcome::Row {
                    drop,
                    missing,
                    short,
                } => {
                    out.short_texts += short as usize;
                    for (f, count) in out.missing.iter_mut().enumerate() {
                        *count += usize::from(missing >> f & 1 == 1);
                    }
                    match drop {
                        None => {
                            out.status.push(KEPT);
                            let text = &block[a..b];
                            out.kept.extend_from_slice(text);
                            if !text.ends_with(b"\n") {
                                out.kept.push(b'\n');
                            }
                        }
                        Some(drop) => {
                            out.status.push(DROPPED);
                            match drop.rule {
                                Rule::SameTask => out.by_rule[0] += 1,
                                Rule::Verbatim => {
                                    out.by_rule[1] += 1;
                                    out.by_field[drop.field][0] += 1;
                                }
                                Rule::Near => {
                                    out.by_rule[2] += 1;
                                    out.by_field[drop.field][1] += 1;
                                }
                            }
                            if out.drops.len() < examples {
                                out.drops.push((line, drop));
                            }
                        }
                    }
                }
            }
        }
        out
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
        if self.fields.len() > 64 || needs_python(line) {
            return Outcome::Deferred;
        }
        let Ok(text) = std::str::from_utf8(line) else {
            return Outcome::Deferred;
        };
        if !read_fields(text, keys, values) {
            return Outcome::Deferred;
        }
        let (mut missing, mut short) = (0u64, 0u32);
        if !self.task_ids.is_empty() {
            for (which, prefix) in ["scenario_id:", "task_id:"].into_iter().enumerate() {
                if let Field::Text(value) = &values[self.task_slot[which]] {
                    if self.task_ids.contains(&format!("{prefix}{value}")) {
                        let drop = Drop {
                            rule: Rule::SameTask,
                            field: which,
                            eval: -1,
                            covered: 0,
                            total: 0,
                            shared: Vec::new(),
                            matched: value.to_string(),
                        };
                        return Outcome::Row {
                            drop: Some(drop),
                            missing,
                            short,
                        };
                    }
                }
            }
        }
        for (f, index) in self.indexes.iter().enumerate() {
            let text: Option<&Cow<'_, str>> = match &values[self.field_slot[f]] {
                Field::Text(t) if !t.chars().all(py_space) => Some(t),
                _ => None,
            };
            let Some(text) = text else {
                missing |= 1 << f;
                continue;
            };
            let Some(index) = index else { continue };
            let check = index.check_one(text, scratch);
            let hit = check.hit;
            if (hit.total as usize) < self.n {
                short += 1;
            }
            let drop = if check.exact >= 0 {
                Some(Rule::Verbatim)
            } else if hit.total as usize >= self.n
                && hit.best >= 0
                && hit.covered as f64 / hit.total as f64 >= self.overlap
            {
                Some(Rule::Near)
            } else {
                None
            };
            if let Some(rule) = drop {
                let drop = Drop {
                    rule,
                    field: f,
                    eval: if rule == Rule::Verbatim {
                        check.exact
                    } else {
                        hit.best
                    },
                    covered: hit.covered,
                    total: hit.total,
                    shared: hit.shared,
                    matched: String::new(),
                };
                return Outcome::Row {
                    drop: Some(drop),
                    missing,
                    short,
                };
            }
        }
        Outcome::Row {
            drop: None,
            missing,
            short,
        }
    }
}

/// Python's `str.isspace` for one character, from the pinned tables (not the Rust toolchain's
/// Unicode).
fn py_space(c: char) -> bool {
    crate::hack_text::char_flags(c as u32) & crate::pychars::SPACE != 0
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
