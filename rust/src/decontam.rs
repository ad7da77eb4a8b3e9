//! Decontamination rules over rows and blocks of JSONL lines (docs/kernels.md, "N-grams").
//!
//! [`LineRules::check_rows`] applies the `same_task`, `verbatim` and `near` rules to rows whose
//! checked fields the caller read (one tokenisation per text), rows split across threads.
//! [`LineRules::check_block`] splits a block of whole lines, reads the checked fields of each
//! line ([`crate::jsonl::read_fields`]), applies the `same_task`, `verbatim` and `near` rules
//! (one tokenisation per text), lines split across threads, and returns the counts, the kept
//! lines' bytes and the first few drops. A line it does not decide (not plain JSON, `NaN`,
//! `Infinity`, a carriage return, a byte-order mark, invalid UTF-8, deep nesting) is *deferred*:
//! the caller reads it the ordinary way, so errors and odd lines behave as before.

use std::borrow::Cow;
use std::collections::HashSet;

use rayon::prelude::*;

use crate::jsonl::Field;

mod lines;
use crate::ngram::{NgramIndex, Scratch};

/// Per-line status bytes of a [`Block`].
pub const BLANK: u8 = 0;
pub const KEPT: u8 = 1;
pub const DROPPED: u8 = 2;
pub const DEFERRED: u8 = 3;

const MIN_LINES_PER_TASK: usize = 64;
/// The most fields one set of rules checks (a row's missing fields are bits of a `u64`).
pub const MAX_FIELDS: usize = 64;
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
    /// The eval task ids: `scenario_id` values, then `task_id` values.
    task_ids: [HashSet<String>; 2],
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
        let mut by_key = [HashSet::new(), HashSet::new()];
        for id in task_ids {
            if let Some(value) = id.strip_prefix("scenario_id:") {
                by_key[0].insert(value.to_string());
            } else if let Some(value) = id.strip_prefix("task_id:") {
                by_key[1].insert(value.to_string());
            }
        }
        LineRules {
            fields,
            indexes,
            task_ids: by_key,
            overlap,
            n,
            keys,
            field_slot,
            task_slot,
        }
    }

    /// The keys a row is read by, in the order [`LineRules::check_rows`] takes its values:
    /// the fields, then `scenario_id` and `task_id` (each once).
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// Check rows already read: row `i`'s value for key `k` of [`LineRules::keys`] is
    /// `values[i * keys + k]`. Rows split across threads; every row is decided (`KEPT` or
    /// `DROPPED`), and `kept` stays empty (the caller holds the rows).
    pub fn check_rows(&self, values: &[Field<'_>], examples: usize) -> Block {
        let width = self.keys.len().max(1);
        let outcomes: Vec<Outcome> = values
            .par_chunks(width)
            .with_min_len(MIN_LINES_PER_TASK)
            .map_init(Scratch::default, |scratch, row| self.row(row, scratch))
            .collect();
        self.tally(outcomes, examples, |_, _| {})
    }

    /// The block of `outcomes` in order: statuses, counts and the first `examples` drops;
    /// `keep(kept, line)` adds a kept line's bytes.
    fn tally(
        &self,
        outcomes: Vec<Outcome>,
        examples: usize,
        mut keep: impl FnMut(&mut Vec<u8>, usize),
    ) -> Block {
        let fields = self.fields.len();
        let mut out = Block {
            status: Vec::with_capacity(outcomes.len()),
            by_field: vec![[0; 2]; fields],
            missing: vec![0; fields],
            ..Block::default()
        };
        for (line, outcome) in outcomes.into_iter().enumerate() {
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
                    let Some(drop) = drop else {
                        out.status.push(KEPT);
                        keep(&mut out.kept, line);
                        continue;
                    };
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
        out
    }

    /// The rules over one row's values (in the order of [`LineRules::keys`]).
    fn row(&self, values: &[Field<'_>], scratch: &mut Scratch) -> Outcome {
        if self.fields.len() > MAX_FIELDS {
            return Outcome::Deferred;
        }
        let (mut missing, mut short) = (0u64, 0u32);
        if self.task_ids.iter().any(|ids| !ids.is_empty()) {
            for (which, ids) in self.task_ids.iter().enumerate() {
                if let Field::Text(value) = &values[self.task_slot[which]] {
                    if ids.contains(value.as_ref()) {
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
