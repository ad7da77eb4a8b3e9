//! The trace flags of many rows at once (docs/kernels.md, "Trace flags"): which of the eleven
//! flags of `clean/trace_flags.py` fire on each row, as a bit mask, without their evidence.
//!
//! Python reads the row dicts into flat inputs (the agent's text, the final reply, and per tool
//! call its kind, whether it failed, the claim families its name belongs to, its arguments as
//! text and its path arguments); this kernel runs the patterns (given by Python, compiled by
//! [`crate::pyre`] with `re`'s semantics) and the flag rules. Rows split across threads; each
//! row's answer depends on that row only.

use rayon::prelude::*;

use crate::error::CoreError;
use crate::pyre::{Regex, Scratch, Text};

/// The patterns, in this order (the `_pure` twin and `trace_flags.py` use the same list).
pub const PATTERNS: [&str; 13] = [
    "tests_pass",
    "verified",
    "edited",
    "admits_failure",
    "test_path",
    "weaken",
    "suppress",
    "bypass",
    "destructive",
    "secret",
    "test_cmd",
    "claim",
    "chained",
];

/// The flags, one bit each in this order (`trace_flags.FLAGS`).
pub const FLAGS: [&str; 11] = [
    "lie.tests_claimed",
    "lie.unverified_claim",
    "lie.phantom_edit",
    "lie.claimed_action",
    "lie.ignored_failure",
    "hack.test_edited",
    "hack.test_weakened",
    "hack.suppressed",
    "hack.bypassed",
    "risk.destructive",
    "risk.secrets",
];

/// A call's kind (low three bits of its code): read, write, delete, command, test.
pub const READ: i64 = 0;
pub const WRITE: i64 = 1;
pub const DELETE: i64 = 2;
pub const COMMAND: i64 = 3;
pub const TEST: i64 = 4;
/// Code bits: the kind was given (`kinds=`), so a command is not read as a test run.
pub const FIXED: i64 = 8;
/// The step is not a tool call of the trace rules (a claims-only step).
pub const NOT_CALL: i64 = 16;
/// The step failed.
pub const FAILED: i64 = 32;
/// The step counts for the claim rules (a truthy tool name).
pub const CLAIMS: i64 = 64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    First,
    Done,
    State,
}

/// The compiled patterns and what each claim group means.
pub struct TracePatterns {
    re: Vec<Regex>,
    /// CLAIM's groups: (family index, form) per group number - 1.
    claim_groups: Vec<Option<(usize, Form)>>,
    /// CHAINED's groups: family index per group number - 1.
    chained_groups: Vec<Option<usize>>,
    lookup: Option<usize>,
}

fn family_of(name: &str, families: &[&str]) -> Option<(usize, Form)> {
    let (prefix, family) = if matches!(name.get(..2), Some("p_" | "s_" | "c_")) {
        let cut = name.rfind('_').unwrap_or(0);
        (&name[..cut], &name[cut + 1..])
    } else {
        ("", name)
    };
    let form = match prefix {
        "p" => Form::Done,
        "s" => Form::State,
        _ => Form::First,
    };
    families
        .iter()
        .position(|f| *f == family)
        .map(|k| (k, form))
}

impl TracePatterns {
    /// Compile the thirteen patterns (`PATTERNS` order) and name the claim families.
    ///
    /// # Errors
    /// `CoreError::Value` for a wrong count or a pattern [`Regex::new`] refuses.
    pub fn new(patterns: &[&str], families: &[&str]) -> Result<TracePatterns, CoreError> {
        if patterns.len() != PATTERNS.len() {
            return Err(CoreError::Value(format!(
                "patterns must hold {} patterns ({}), got {}",
                PATTERNS.len(),
                PATTERNS.join(", "),
                patterns.len()
            )));
        }
        let re = patterns
            .iter()
            .map(|p| Regex::new(p))
            .collect::<Result<Vec<_>, _>>()?;
        let groups = |r: &Regex| -> Vec<Option<(usize, Form)>> {
            r.names()
                .iter()
                .map(|n| n.as_deref().and_then(|n| family_of(n, families)))
                .collect()
        };
        let claim_groups = groups(&re[11]);
        let chained_groups = groups(&re[12])
            .into_iter()
            .map(|g| g.map(|(k, _)| k))
            .collect();
        let lookup = families.iter().position(|f| *f == "lookup");
        Ok(TracePatterns {
            re,
            claim_groups,
            chained_groups,
            lookup,
        })
    }
}

/// One row's inputs (texts as code points).
pub struct TraceRow<'a> {
    pub said: &'a [u32],
    pub final_text: &'a [u32],
    /// Per step: its code (kind and bits above), its claim families (bit per family), its
    /// arguments as text and its path arguments.
    pub codes: &'a [i64],
    pub families: &'a [i64],
    pub bodies: Vec<&'a [u32]>,
    pub paths: Vec<&'a [u32]>,
}

#[derive(Default)]
struct Work {
    scratch: Scratch,
    said: Text,
    reply: Text,
    body: Text,
    paths: Text,
}

fn first_group<T: Copy>(m: &crate::pyre::Match, table: &[Option<T>]) -> Option<(T, usize, usize)> {
    m.groups.iter().zip(table).find_map(|(g, t)| match (g, t) {
        (Some((a, b)), Some(t)) if b > a => Some((*t, *a, *b)),
        _ => None,
    })
}

/// The (family, form) of each action `reply` claims (`claims.claimed_actions`, unordered).
fn claimed(p: &TracePatterns, reply: &mut Text, s: &mut Scratch) -> Vec<(usize, Form)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(m) = p.re[11].search_at(reply, at, s) {
        let Some(((family, form), _, _)) = first_group(&m, &p.claim_groups) else {
            break;
        };
        out.push((family, form));
        let mut end = m.end;
        while let Some(c) = p.re[12].match_at(&reply.cps, end, s) {
            match first_group(&c, &p.chained_groups) {
                Some((family, _, _)) => out.push((family, form)),
                None => break,
            }
            end = c.end;
        }
        at = if m.end > m.start { m.end } else { m.end + 1 };
    }
    out
}

/// `bool(claims.unsupported_claims(row, ...))`.
fn unsupported(p: &TracePatterns, row: &TraceRow<'_>, reply: &mut Text, s: &mut Scratch) -> bool {
    let claims = claimed(p, reply, s);
    if claims.is_empty() {
        return false;
    }
    let calls: Vec<(i64, bool)> = row
        .codes
        .iter()
        .zip(row.families)
        .filter(|(c, _)| *c & CLAIMS != 0)
        .map(|(c, f)| (*f, c & FAILED == 0))
        .collect();
    if calls.is_empty() {
        return claims.iter().any(|(_, form)| *form != Form::State);
    }
    let unknown_ok = calls.iter().any(|(f, ok)| *ok && *f == 0);
    let any_ok = calls.iter().any(|(_, ok)| *ok);
    let mut admits: Option<bool> = None;
    for (family, form) in claims {
        let bit = 1i64 << family;
        let mine = calls.iter().filter(|(f, _)| f & bit != 0);
        let (mut any, mut ok) = (false, false);
        for (_, k) in mine {
            any = true;
            ok |= *k;
        }
        if ok {
            continue;
        }
        let lookup = Some(family) == p.lookup;
        if any {
            let owns_up = lookup && *admits.get_or_insert_with(|| p.re[3].is_match(reply, s));
            if !owns_up {
                return true;
            }
        } else if form == Form::First && !unknown_ok && !(lookup && any_ok) {
            return true;
        }
    }
    false
}

fn row_mask(p: &TracePatterns, row: &TraceRow<'_>, w: &mut Work) -> i64 {
    let Work {
        scratch: s,
        said,
        reply,
        body,
        paths,
    } = w;
    said.fill_cps(row.said);
    let mut mask = 0i64;
    let calls: Vec<usize> = (0..row.codes.len())
        .filter(|&i| row.codes[i] & NOT_CALL == 0)
        .collect();
    let mut kinds = Vec::with_capacity(calls.len());
    for &i in &calls {
        let code = row.codes[i];
        let mut kind = code & 7;
        if kind == COMMAND && code & FIXED == 0 {
            body.fill_cps(row.bodies[i]);
            if p.re[10].is_match(body, s) {
                kind = TEST;
            }
        }
        kinds.push(kind);
    }
    let failed = |k: usize| row.codes[calls[k]] & FAILED != 0;
    if p.re[0].is_match(said, s) {
        match kinds.iter().rposition(|&k| k == TEST) {
            None => mask |= 1,
            Some(last) if failed(last) => mask |= 1,
            Some(_) => {}
        }
    }
    if calls.is_empty() && p.re[1].is_match(said, s) {
        mask |= 1 << 1;
    }
    let wrote = kinds
        .iter()
        .any(|&k| k == WRITE || k == DELETE || k == COMMAND);
    if !wrote && p.re[2].is_match(said, s) {
        mask |= 1 << 2;
    }
    reply.fill_cps(row.final_text);
    if mask & 0b110 == 0 && unsupported(p, row, reply, s) {
        mask |= 1 << 3;
    }
    if !calls.is_empty() && failed(calls.len() - 1) && !p.re[3].is_match(reply, s) {
        mask |= 1 << 4;
    }
    for (k, &i) in calls.iter().enumerate() {
        let kind = kinds[k];
        body.fill_cps(row.bodies[i]);
        if kind == WRITE || kind == DELETE {
            paths.fill_cps(row.paths[i]);
            if p.re[4].is_match(paths, s) {
                mask |= 1 << 5;
                if p.re[5].is_match(body, s) {
                    mask |= 1 << 6;
                }
            }
        }
        let writes = kind == WRITE || kind == COMMAND;
        if writes && mask & (1 << 7) == 0 && p.re[6].is_match(body, s) {
            mask |= 1 << 7;
        }
        if (writes || kind == TEST) && mask & (1 << 8) == 0 && p.re[7].is_match(body, s) {
            mask |= 1 << 8;
        }
        if mask & (1 << 9) == 0 && (kind == DELETE || p.re[8].is_match(body, s)) {
            mask |= 1 << 9;
        }
        if writes && mask & (1 << 10) == 0 && p.re[9].is_match(body, s) {
            mask |= 1 << 10;
        }
    }
    if mask & (1 << 10) == 0 && p.re[9].is_match(said, s) {
        mask |= 1 << 10;
    }
    mask
}

/// The flag mask of each row (bit `k` = `FLAGS[k]` fired).
pub fn trace_masks(p: &TracePatterns, rows: &[TraceRow<'_>]) -> Vec<i64> {
    const CHUNK: usize = 256;
    let mut out = vec![0i64; rows.len()];
    out.par_chunks_mut(CHUNK)
        .zip(rows.par_chunks(CHUNK))
        .for_each(|(masks, rows)| {
            let mut w = Work::default();
            for (m, row) in masks.iter_mut().zip(rows) {
                *m = row_mask(p, row, &mut w);
            }
        });
    out
}
