//! The compiler of [`crate::pyre`]: a pattern's syntax tree ([`crate::pyre_parse`]) turned into
//! a program for the matching machine.

use crate::error::CoreError;
use crate::pyre_parse::{parse, Node, Set};

#[derive(Debug, Clone)]
pub(crate) enum Inst {
    Char(u32),
    Set(Set),
    /// Alternatives in order, each with the folded ASCII characters it can start with (None:
    /// any, or it can match empty); only those the next character can start are tried.
    Alt(Vec<(Option<[u64; 2]>, usize)>),
    Split(usize, usize),
    Jmp(usize),
    Save(usize),
    Start,
    WordBoundary,
    Match,
}

fn emit(node: &Node, prog: &mut Vec<Inst>) {
    match node {
        Node::Char(c) => prog.push(Inst::Char(*c)),
        Node::Set(s) => prog.push(Inst::Set(s.clone())),
        Node::Start => prog.push(Inst::Start),
        Node::WordBoundary => prog.push(Inst::WordBoundary),
        Node::Concat(items) => items.iter().for_each(|n| emit(n, prog)),
        Node::Alt(alts) => {
            let at = prog.len();
            prog.push(Inst::Jmp(0));
            let mut branches = Vec::new();
            let mut jumps = Vec::new();
            for alt in alts {
                branches.push((first_of(alt), prog.len()));
                emit(alt, prog);
                jumps.push(prog.len());
                prog.push(Inst::Jmp(0));
            }
            let end = prog.len();
            for j in jumps {
                prog[j] = Inst::Jmp(end);
            }
            prog[at] = Inst::Alt(branches);
        }
        Node::Group(index, inner) => match index {
            Some(g) => {
                prog.push(Inst::Save(2 * g));
                emit(inner, prog);
                prog.push(Inst::Save(2 * g + 1));
            }
            None => emit(inner, prog),
        },
        Node::Repeat {
            node,
            min,
            max,
            greedy,
        } => {
            for _ in 0..*min {
                emit(node, prog);
            }
            let split = |body: usize, out: usize| {
                if *greedy {
                    Inst::Split(body, out)
                } else {
                    Inst::Split(out, body)
                }
            };
            match max {
                None => {
                    let top = prog.len();
                    prog.push(Inst::Jmp(0));
                    emit(node, prog);
                    prog.push(Inst::Jmp(top));
                    let out = prog.len();
                    prog[top] = split(top + 1, out);
                }
                Some(max) => {
                    let mut holes = Vec::new();
                    for _ in *min..*max {
                        holes.push(prog.len());
                        prog.push(Inst::Jmp(0));
                        emit(node, prog);
                    }
                    let out = prog.len();
                    for h in holes {
                        prog[h] = split(h + 1, out);
                    }
                }
            }
        }
    }
}

/// The folded ASCII characters a match of `node` can start with; None when it can start with
/// any character or match empty.
fn first_of(node: &Node) -> Option<[u64; 2]> {
    fn walk(node: &Node, bits: &mut [u64; 2]) -> Option<bool> {
        // Some(nullable) when the first characters are all in `bits`; None for "any".
        match node {
            Node::Char(c) => {
                if *c >= 128 {
                    return None;
                }
                bits[(*c >> 6) as usize] |= 1 << (c & 63);
                Some(false)
            }
            Node::Set(s) => {
                if s.negated || s.cats != 0 {
                    return None;
                }
                bits[0] |= s.bits[0];
                bits[1] |= s.bits[1];
                Some(false)
            }
            Node::Start | Node::WordBoundary => Some(true),
            Node::Concat(items) => {
                for item in items {
                    if !walk(item, bits)? {
                        return Some(false);
                    }
                }
                Some(true)
            }
            Node::Alt(alts) => {
                let mut nullable = false;
                for alt in alts {
                    nullable |= walk(alt, bits)?;
                }
                Some(nullable)
            }
            Node::Group(_, inner) => walk(inner, bits),
            Node::Repeat { node, min, .. } => Some(walk(node, bits)? || *min == 0),
        }
    }
    let mut bits = [0u64; 2];
    match walk(node, &mut bits) {
        Some(false) => Some(bits),
        _ => None,
    }
}

/// True when every match of `node` begins with a `\b` assertion.
fn starts_with_boundary(node: &Node) -> bool {
    match node {
        Node::WordBoundary => true,
        Node::Concat(items) => items.first().is_some_and(starts_with_boundary),
        Node::Alt(alts) => alts.iter().all(starts_with_boundary),
        Node::Group(_, inner) => starts_with_boundary(inner),
        _ => false,
    }
}

/// The folded ASCII characters that can start a match, or None when a match can start with any
/// character (or match empty). Assertions are passed over, so this is a superset.
fn first_chars(prog: &[Inst]) -> Option<[u64; 2]> {
    let mut bits = [0u64; 2];
    let mut seen = vec![false; prog.len()];
    let mut todo = vec![0usize];
    while let Some(pc) = todo.pop() {
        if std::mem::replace(&mut seen[pc], true) {
            continue;
        }
        match &prog[pc] {
            Inst::Char(c) => {
                if *c >= 128 {
                    return None;
                }
                bits[(*c >> 6) as usize] |= 1 << (c & 63);
            }
            Inst::Set(s) => {
                if s.negated || s.cats != 0 {
                    return None;
                }
                bits[0] |= s.bits[0];
                bits[1] |= s.bits[1];
            }
            Inst::Split(a, b) => {
                todo.push(*a);
                todo.push(*b);
            }
            Inst::Alt(branches) => todo.extend(branches.iter().map(|(_, t)| *t)),
            Inst::Jmp(a) => todo.push(*a),
            Inst::Save(_) | Inst::Start | Inst::WordBoundary => todo.push(pc + 1),
            Inst::Match => return None,
        }
    }
    Some(bits)
}

/// A compiled program: instructions, group names, possible first characters, and whether
/// every match starts with `\b`.
pub(crate) type Compiled = (Vec<Inst>, Vec<Option<String>>, Option<[u64; 2]>, bool);

/// Compile `pattern` (see [`crate::pyre`] for the subset).
pub(crate) fn compile(pattern: &str) -> Result<Compiled, CoreError> {
    let (node, names) = parse(pattern)?;
    let mut prog = Vec::new();
    emit(&node, &mut prog);
    prog.push(Inst::Match);
    let first = first_chars(&prog);
    Ok((prog, names, first, starts_with_boundary(&node)))
}
