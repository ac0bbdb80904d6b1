//! The second reading of a command: brush-parser, a bash parser written
//! independently of tree-sitter-bash. The gate trusts its reading of a
//! command only when both parsers find the same simple commands — the same
//! number, the same command words, starting at the same places
//! (docs/permissions.md, "Fail closed"). When they disagree, the command is
//! opaque and asks even in bypass mode, and the simple commands of this
//! reading are judged too, so a deny rule still sees a command that
//! tree-sitter swallowed into a string or a comment.

use brush_parser::ast;
use brush_parser::word::WordPiece;

use super::words::{ansi_c, Seg};

/// Where a simple command's command word starts (a byte offset in the text
/// parsed, or `None` where it cannot be placed, as in a here-document) and
/// the word as written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Head {
    pub start: Option<usize>,
    pub word: String,
    /// Where its last word ends (a byte offset), when known on both sides.
    pub end: Option<usize>,
    /// How many words it has (redirections apart), when known.
    pub words: Option<usize>,
    /// Where each of its argument words starts (byte offsets), when known.
    pub starts: Option<Vec<usize>>,
}

/// One simple command as this parser reads it: the words as written.
#[derive(Debug, Clone, Default)]
pub(crate) struct Simple {
    pub assigns: Vec<String>,
    pub words: Vec<String>,
    /// Targets of file redirections (`>`, `>>`, `<`, `<>`, `>|`, `&>`).
    pub targets: Vec<String>,
}

/// The simple commands of one source text.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    pub heads: Vec<Head>,
    pub simples: Vec<Simple>,
}

/// Nodes and nested substitutions one reading may visit.
const BUDGET: usize = 20_000;
/// How deeply substitutions inside words are re-parsed.
const MAX_NESTING: usize = 16;

/// brush-parser recurses once per nesting level (on the thread's stack):
/// beyond this estimate the text is not given to it.
const MAX_SYNTAX_NESTING: usize = 48;

/// An upper estimate of how deeply `src` nests: open brackets, and compound
/// keywords not yet closed, at the deepest point (quotes are not skipped,
/// so quoted brackets count too).
pub(crate) fn nesting(src: &str) -> usize {
    let mut depth: usize = 0;
    let mut ticks = 0usize;
    let mut max = 0;
    let mut word = String::new();
    let flush = |word: &mut String, depth: &mut usize| {
        match word.as_str() {
            "if" | "while" | "until" | "for" | "case" | "select" | "function" => *depth += 1,
            "fi" | "done" | "esac" => *depth = depth.saturating_sub(1),
            _ => {}
        }
        word.clear();
    };
    for c in src.chars() {
        if c.is_ascii_alphabetic() {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut depth);
        match c {
            '(' | '{' | '[' => depth += 1,
            '`' => {
                ticks += 1;
                if ticks % 2 == 1 {
                    depth += 1;
                } else {
                    depth = depth.saturating_sub(1);
                }
            }
            ')' | '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        max = max.max(depth);
    }
    flush(&mut word, &mut depth);
    max.max(depth)
}

/// The byte offset in `src` of a token brush-parser reports at character
/// `index`. Its tokenizer does not count a line continuation (`\` and a
/// newline) between two tokens into the second one's start, so the start
/// may lag: it is moved forward over blanks and continuations to where
/// `word` begins.
fn place(src: &str, index: usize, word: &str) -> usize {
    let byte = if src.is_ascii() {
        index.min(src.len())
    } else {
        src.char_indices().nth(index).map_or(src.len(), |(b, _)| b)
    };
    if !src.contains("\\\n") {
        return byte;
    }
    let bytes = src.as_bytes();
    let mut p = byte;
    while p < bytes.len() {
        if src[p..].starts_with(word) {
            return p;
        }
        let b = bytes[p];
        let cont = (b == b'\\' && bytes.get(p + 1) == Some(&b'\n'))
            || (b == b'\n' && p > 0 && bytes[p - 1] == b'\\');
        if b == b' ' || b == b'\t' || cont {
            p += 1;
        } else {
            break;
        }
    }
    byte
}

fn char_to_byte(src: &str, index: usize) -> usize {
    if src.is_ascii() {
        index.min(src.len())
    } else {
        src.char_indices().nth(index).map_or(src.len(), |(b, _)| b)
    }
}

fn options() -> brush_parser::ParserOptions {
    brush_parser::ParserOptions {
        enable_extended_globbing: true,
        ..Default::default()
    }
}

/// Reads `src`; `None` when brush-parser cannot parse it (or it is too
/// large to read within the budget).
pub(crate) fn read(src: &str) -> Option<Reading> {
    if nesting(src) > MAX_SYNTAX_NESTING {
        return None;
    }
    let mut r = Reader {
        out: Reading::default(),
        budget: BUDGET,
    };
    r.program(src, Some(0), 0)?;
    Some(r.out)
}

/// Whether `src` has a run of ten or more digits right before `<` or `>`.
fn long_io_number(src: &str) -> bool {
    let mut run = 0usize;
    for b in src.bytes() {
        match b {
            b'0'..=b'9' => run += 1,
            b'<' | b'>' if run >= 10 => return true,
            _ => run = 0,
        }
    }
    false
}

struct Reader {
    out: Reading,
    budget: usize,
}

impl Reader {
    fn spend(&mut self, n: usize) -> Option<()> {
        self.budget = self.budget.checked_sub(n)?;
        Some(())
    }

    /// Parses `src` (found at byte `base` of the top text, when known) and
    /// records its simple commands.
    fn program(&mut self, src: &str, base: Option<usize>, depth: usize) -> Option<()> {
        if depth > MAX_NESTING {
            return None;
        }
        self.spend(1 + src.len() / 64)?;
        // brush-parser panics on a redirection number that overflows (`99999999999>x`):
        // such a command is not read (the caller treats it as unreadable).
        if long_io_number(src) {
            return None;
        }
        let mut parser =
            brush_parser::Parser::new(std::io::BufReader::new(src.as_bytes()), &options());
        // Any other panic of the parser is caught the same way, never a crash.
        let prog =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parser.parse_program()))
                .ok()?
                .ok()?;
        let cx = Cx { src, base, depth };
        for cl in &prog.complete_commands {
            self.list(cl, &cx)?;
        }
        Some(())
    }

    fn list(&mut self, l: &ast::CompoundList, cx: &Cx<'_>) -> Option<()> {
        for item in &l.0 {
            self.and_or(&item.0, cx)?;
        }
        Some(())
    }

    fn and_or(&mut self, a: &ast::AndOrList, cx: &Cx<'_>) -> Option<()> {
        self.pipeline(&a.first, cx)?;
        for more in &a.additional {
            let p = match more {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
            };
            self.pipeline(p, cx)?;
        }
        Some(())
    }

    fn pipeline(&mut self, p: &ast::Pipeline, cx: &Cx<'_>) -> Option<()> {
        for c in &p.seq {
            self.command(c, cx)?;
        }
        Some(())
    }

    fn command(&mut self, c: &ast::Command, cx: &Cx<'_>) -> Option<()> {
        self.spend(1)?;
        match c {
            ast::Command::Simple(s) => self.simple(s, cx),
            ast::Command::Compound(cc, redirs) => {
                self.compound(cc, cx)?;
                if let Some(rl) = redirs {
                    let mut sink = Simple::default();
                    for r in &rl.0 {
                        self.redirect(r, cx, &mut sink)?;
                    }
                    if !sink.targets.is_empty() {
                        self.out.simples.push(sink);
                    }
                }
                Some(())
            }
            ast::Command::Function(f) => {
                self.compound(&f.body.0, cx)?;
                if let Some(rl) = &f.body.1 {
                    let mut sink = Simple::default();
                    for r in &rl.0 {
                        self.redirect(r, cx, &mut sink)?;
                    }
                }
                Some(())
            }
            ast::Command::ExtendedTest(t, redirs) => {
                self.test_expr(&t.expr, cx)?;
                if let Some(rl) = redirs {
                    let mut sink = Simple::default();
                    for r in &rl.0 {
                        self.redirect(r, cx, &mut sink)?;
                    }
                }
                Some(())
            }
        }
    }

    fn test_expr(&mut self, e: &ast::ExtendedTestExpr, cx: &Cx<'_>) -> Option<()> {
        self.spend(1)?;
        match e {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.test_expr(a, cx)?;
                self.test_expr(b, cx)
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.test_expr(a, cx)
            }
            ast::ExtendedTestExpr::UnaryTest(_, w) => self.word(w, cx),
            ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.word(a, cx)?;
                self.word(b, cx)
            }
        }
    }

    fn compound(&mut self, c: &ast::CompoundCommand, cx: &Cx<'_>) -> Option<()> {
        match c {
            ast::CompoundCommand::Arithmetic(_) | ast::CompoundCommand::ArithmeticForClause(_) => {
                // Arithmetic text is read by the arithmetic rules, not here.
                if let ast::CompoundCommand::ArithmeticForClause(f) = c {
                    self.list(&f.body.list, cx)?;
                }
                Some(())
            }
            ast::CompoundCommand::BraceGroup(b) => self.list(&b.list, cx),
            ast::CompoundCommand::Subshell(s) => self.list(&s.list, cx),
            ast::CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(w, cx)?;
                }
                self.list(&f.body.list, cx)
            }
            ast::CompoundCommand::CaseClause(k) => {
                self.word(&k.value, cx)?;
                for item in &k.cases {
                    for p in &item.patterns {
                        self.word(p, cx)?;
                    }
                    if let Some(l) = &item.cmd {
                        self.list(l, cx)?;
                    }
                }
                Some(())
            }
            ast::CompoundCommand::IfClause(i) => {
                self.list(&i.condition, cx)?;
                self.list(&i.then, cx)?;
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c, cx)?;
                    }
                    self.list(&e.body, cx)?;
                }
                Some(())
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.list(&w.0, cx)?;
                self.list(&w.1.list, cx)
            }
            ast::CompoundCommand::Coprocess(c) => self.command(&c.body, cx),
        }
    }

    fn simple(&mut self, s: &ast::SimpleCommand, cx: &Cx<'_>) -> Option<()> {
        let mut simple = Simple::default();
        let items = s
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(|i| (i, true))
            .chain(s.suffix.iter().flat_map(|p| p.0.iter()).map(|i| (i, false)));
        let mut deferred: Vec<&ast::CommandPrefixOrSuffixItem> = Vec::new();
        let mut before_name = Vec::new();
        for (item, prefix) in items {
            if prefix {
                before_name.push(item);
            } else {
                deferred.push(item);
            }
        }
        for item in before_name {
            self.item(item, cx, &mut simple, true)?;
        }
        if let Some(name) = &s.word_or_name {
            let start = match (cx.base, name.loc.as_ref()) {
                (Some(b), Some(l)) => Some(b + place(cx.src, l.start.index, &name.value)),
                _ => None,
            };
            // The end of the last word (not of a redirection).
            let last = s
                .suffix
                .iter()
                .flat_map(|x| x.0.iter())
                .filter_map(|i| match i {
                    ast::CommandPrefixOrSuffixItem::Word(w)
                    | ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => Some(Some(w)),
                    ast::CommandPrefixOrSuffixItem::ProcessSubstitution(..) => Some(None),
                    ast::CommandPrefixOrSuffixItem::IoRedirect(_) => None,
                })
                .next_back()
                .unwrap_or(Some(name));
            let end = match (cx.base, last.and_then(|w| w.loc.as_ref())) {
                (Some(b), Some(l)) => Some(b + char_to_byte(cx.src, l.end.index)),
                _ => None,
            };
            let count = 1 + s
                .suffix
                .iter()
                .flat_map(|x| x.0.iter())
                .filter(|i| !matches!(i, ast::CommandPrefixOrSuffixItem::IoRedirect(_)))
                .count();
            let starts: Option<Vec<usize>> = cx.base.and_then(|b| {
                s.suffix
                    .iter()
                    .flat_map(|x| x.0.iter())
                    .filter_map(|i| match i {
                        ast::CommandPrefixOrSuffixItem::Word(w)
                        | ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => Some(
                            w.loc
                                .as_ref()
                                .map(|l| b + place(cx.src, l.start.index, &w.value)),
                        ),
                        ast::CommandPrefixOrSuffixItem::ProcessSubstitution(..) => Some(None),
                        ast::CommandPrefixOrSuffixItem::IoRedirect(_) => None,
                    })
                    .collect()
            });
            self.out.heads.push(Head {
                start,
                word: name.value.clone(),
                end,
                words: Some(count),
                starts,
            });
            simple.words.push(name.value.clone());
            self.word(name, cx)?;
        }
        for item in deferred {
            self.item(item, cx, &mut simple, false)?;
        }
        self.out.simples.push(simple);
        Some(())
    }

    fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        cx: &Cx<'_>,
        simple: &mut Simple,
        prefix: bool,
    ) -> Option<()> {
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => self.redirect(r, cx, simple),
            ast::CommandPrefixOrSuffixItem::Word(w) => {
                simple.words.push(w.value.clone());
                self.word(w, cx)
            }
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                if prefix {
                    simple.assigns.push(w.value.clone());
                } else {
                    simple.words.push(w.value.clone());
                }
                match &a.value {
                    ast::AssignmentValue::Scalar(v) => self.word_at(v, w, cx),
                    ast::AssignmentValue::Array(items) => {
                        for (k, v) in items {
                            if let Some(k) = k {
                                self.word_at(k, w, cx)?;
                            }
                            self.word_at(v, w, cx)?;
                        }
                        Some(())
                    }
                }
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                simple.words.push("<(…)".to_string());
                self.list(&sub.list, cx)
            }
        }
    }

    fn redirect(&mut self, r: &ast::IoRedirect, cx: &Cx<'_>, simple: &mut Simple) -> Option<()> {
        match r {
            ast::IoRedirect::File(_, kind, target) => match target {
                ast::IoFileRedirectTarget::Filename(w) => {
                    if !matches!(
                        kind,
                        ast::IoFileRedirectKind::DuplicateInput
                            | ast::IoFileRedirectKind::DuplicateOutput
                    ) {
                        simple.targets.push(w.value.clone());
                    }
                    self.word(w, cx)
                }
                ast::IoFileRedirectTarget::Duplicate(w) => self.word(w, cx),
                ast::IoFileRedirectTarget::Fd(_) => Some(()),
                ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => self.list(&sub.list, cx),
            },
            ast::IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    // Compared by word only: `<<-` strips tabs from the body.
                    let pieces =
                        brush_parser::word::parse_heredoc(&doc.doc.value, &options()).ok()?;
                    self.pieces(&pieces, &doc.doc.value, None, cx.depth)?;
                }
                Some(())
            }
            ast::IoRedirect::HereString(_, w) => self.word(w, cx),
            ast::IoRedirect::OutputAndError(w, _) => {
                simple.targets.push(w.value.clone());
                self.word(w, cx)
            }
        }
    }

    /// The substitutions inside a word are programs of their own.
    fn word(&mut self, w: &ast::Word, cx: &Cx<'_>) -> Option<()> {
        if !w.value.contains(['$', '`']) {
            return Some(());
        }
        let base = match (cx.base, w.loc.as_ref()) {
            (Some(b), Some(l)) => Some(b + place(cx.src, l.start.index, &w.value)),
            _ => None,
        };
        let pieces = brush_parser::word::parse(&w.value, &options()).ok()?;
        self.pieces(&pieces, &w.value, base, cx.depth)
    }

    /// A word inside an assignment: located by the assignment word `outer`.
    fn word_at(&mut self, v: &ast::Word, outer: &ast::Word, cx: &Cx<'_>) -> Option<()> {
        if !v.value.contains(['$', '`']) {
            return Some(());
        }
        let base = match (cx.base, outer.loc.as_ref()) {
            (Some(b), Some(l)) => outer
                .value
                .find(&v.value)
                .map(|k| b + place(cx.src, l.start.index, &outer.value) + k),
            _ => None,
        };
        let pieces = brush_parser::word::parse(&v.value, &options()).ok()?;
        self.pieces(&pieces, &v.value, base, cx.depth)
    }

    fn pieces(
        &mut self,
        pieces: &[brush_parser::word::WordPieceWithSource],
        text: &str,
        base: Option<usize>,
        depth: usize,
    ) -> Option<()> {
        for p in pieces {
            self.spend(1)?;
            match &p.piece {
                WordPiece::CommandSubstitution(inner) => {
                    // `$(` … `)`: the inner text starts two bytes in.
                    let at = base.and_then(|b| {
                        text.get(p.start_index..)
                            .filter(|t| t.starts_with("$("))
                            .map(|_| b + p.start_index + 2)
                    });
                    self.program(inner, at, depth + 1)?;
                }
                WordPiece::BackquotedCommandSubstitution(inner) => {
                    // With a backslash inside, bash unescapes the text first;
                    // the walker compares the two readings of that text.
                    let written = text.get(p.start_index..p.end_index).unwrap_or("");
                    if !written.contains('\\') {
                        self.program(inner, base.map(|b| b + p.start_index + 1), depth + 1)?;
                    }
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, text, base, depth)?;
                }
                _ => {}
            }
        }
        Some(())
    }
}

/// The text being read, where it starts in the top text (a byte offset,
/// when known) and how deeply it is nested.
struct Cx<'s> {
    src: &'s str,
    base: Option<usize>,
    depth: usize,
}

/// A word as this parser reads it, as pieces; `None` when it cannot be read.
pub(crate) fn word_segs(raw: &str) -> Option<(Vec<Seg>, bool)> {
    let pieces = brush_parser::word::parse(raw, &options()).ok()?;
    let mut segs = Vec::new();
    let mut ctrl = false;
    push_pieces(&pieces, raw, false, &mut segs, &mut ctrl);
    Some((segs, ctrl))
}

fn push_pieces(
    pieces: &[brush_parser::word::WordPieceWithSource],
    raw: &str,
    in_dq: bool,
    out: &mut Vec<Seg>,
    ctrl: &mut bool,
) {
    for p in pieces {
        let written = raw.get(p.start_index..p.end_index).unwrap_or("");
        match &p.piece {
            WordPiece::Text(t) => {
                if in_dq {
                    out.push(Seg::Lit(t.clone()));
                } else {
                    out.push(Seg::Live(t.clone()));
                }
            }
            WordPiece::SingleQuotedText(t) => out.push(Seg::Lit(t.clone())),
            WordPiece::AnsiCQuotedText(t) => {
                let mut decoded = String::new();
                *ctrl |= ansi_c(&format!("$'{t}'"), &mut decoded);
                out.push(Seg::Lit(decoded));
            }
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                if inner.is_empty() {
                    out.push(Seg::Lit(String::new()));
                }
                push_pieces(inner, raw, true, out, ctrl);
            }
            WordPiece::EscapeSequence(e) => {
                let c: String = e.chars().skip(1).collect();
                if !c.is_empty() && c != "\n" {
                    out.push(Seg::Lit(c));
                }
            }
            WordPiece::TildeExpansion(_) => out.push(Seg::Live(written.to_string())),
            WordPiece::ParameterExpansion(_)
            | WordPiece::CommandSubstitution(_)
            | WordPiece::BackquotedCommandSubstitution(_)
            | WordPiece::ArithmeticExpression(_) => {
                let kind = match &p.piece {
                    WordPiece::ParameterExpansion(_) => "expansion",
                    WordPiece::ArithmeticExpression(_) => "arithmetic_expansion",
                    _ => "command_substitution",
                };
                out.push(Seg::Dyn {
                    text: written.to_string(),
                    kind,
                    quoted: in_dq,
                });
            }
        }
    }
}

/// The simple commands tree-sitter found in `src`, as heads comparable with
/// [`read`]'s: the same constructs are looked into (not arithmetic, not
/// `${…}`, not backtick substitutions holding a backslash, which are
/// compared after unescaping when the walker re-parses them).
pub(crate) fn ts_heads(root: tree_sitter::Node<'_>, src: &str) -> Vec<Head> {
    let mut out = Vec::new();
    ts_walk(root, src, &mut out, false, 0);
    out
}

/// Walks without recursion (trees of long `&&` chains are as deep as the
/// chain is long); only a here-document's re-parsed text nests.
fn ts_walk<'t>(
    root: tree_sitter::Node<'t>,
    src: &str,
    out: &mut Vec<Head>,
    blind0: bool,
    nest: usize,
) {
    let mut stack: Vec<(tree_sitter::Node<'t>, bool)> = vec![(root, blind0)];
    let mut visited = 0usize;
    while let Some((node, blind)) = stack.pop() {
        visited += 1;
        if visited > 200_000 {
            return;
        }
        let text = src.get(node.byte_range()).unwrap_or("");
        let push_children = |stack: &mut Vec<(tree_sitter::Node<'t>, bool)>, blind: bool| {
            // Pushed in order, then reversed in place: no list per node.
            let from = stack.len();
            let mut cursor = node.walk();
            if cursor.goto_first_child() {
                loop {
                    stack.push((cursor.node(), blind));
                    if !cursor.goto_next_sibling() {
                        break;
                    }
                }
            }
            stack[from..].reverse();
        };
        match node.kind() {
            "arithmetic_expansion" | "expansion" | "subscript" => continue,
            "compound_statement" if text.starts_with("((") => continue,
            "command_substitution" if text.starts_with('`') && text.contains('\\') => continue,
            "c_style_for_statement" => {
                if let Some(b) = node.child_by_field_name("body") {
                    stack.push((b, blind));
                }
                continue;
            }
            "heredoc_redirect" => {
                let mut cursor = node.walk();
                let quoted = node
                    .named_children(&mut cursor)
                    .find(|c| c.kind() == "heredoc_start")
                    .is_some_and(|st| {
                        src.get(st.byte_range())
                            .is_some_and(|t| t.contains(['\'', '"', '\\']))
                    });
                let mut cursor = node.walk();
                let kids: Vec<tree_sitter::Node<'t>> = node.children(&mut cursor).collect();
                for c in kids.into_iter().rev() {
                    if !(quoted && c.kind() == "heredoc_body") {
                        stack.push((c, blind));
                    }
                }
                continue;
            }
            "heredoc_body" => {
                let mut cursor = node.walk();
                let mut parsed = Vec::new();
                for c in node.children(&mut cursor) {
                    if c.kind() != "heredoc_content" {
                        parsed.push(
                            c.start_byte().saturating_sub(node.start_byte())
                                ..c.end_byte().saturating_sub(node.start_byte()),
                        );
                    }
                }
                push_children(&mut stack, true);
                // Substitutions tree-sitter left as text (as the walker finds them).
                if nest < 8 {
                    for inner in super::parse::find_substitutions(text, &parsed) {
                        if let Some(tree) = super::parse::parse_tree(&inner) {
                            ts_walk(tree.root_node(), &inner, out, true, nest + 1);
                        }
                    }
                }
                continue;
            }
            "command" => {
                if let Some(h) = command_head(node, src, blind) {
                    out.push(h);
                }
            }
            "declaration_command" | "unset_command" => {
                if let Some(k) = node.child(0) {
                    out.push(Head {
                        start: (!blind).then_some(k.start_byte()),
                        word: src.get(k.byte_range()).unwrap_or("").to_string(),
                        end: None,
                        words: None,
                        starts: None,
                    });
                }
            }
            "test_command" if text.starts_with('[') && !text.starts_with("[[") => {
                out.push(Head {
                    start: (!blind).then_some(node.start_byte()),
                    word: "[".to_string(),
                    end: None,
                    words: None,
                    starts: None,
                });
            }
            _ => {}
        }
        push_children(&mut stack, blind);
    }
}

/// The head tree-sitter reads for a `command` node: its command word (what
/// `time` times, for the keyword), where it starts, its word count and each
/// argument's start, and where its last word ends (`blind`: inside text
/// re-read from a here-document, where positions do not count).
fn command_head<'t>(node: tree_sitter::Node<'t>, src: &str, blind: bool) -> Option<Head> {
    if let Some(name) = node.child_by_field_name("name") {
        let raw = src.get(name.byte_range()).unwrap_or("");
        let kids = super::parse::fielded_children(node);
        // The end of its last word (not of a redirection).
        let last = kids
            .iter()
            .rev()
            .find(|(_, f)| matches!(f, Some("argument" | "name")))
            .map(|&(c, _)| c);
        let end = match last {
            Some(l) if l.kind() == "process_substitution" => None,
            Some(l) if !blind => Some(l.end_byte()),
            _ => None,
        };
        let count = (0..kids.len())
            .filter(|&k| {
                matches!(kids[k].1, Some("argument" | "name"))
                    && !super::parse::translation_mark(&kids, k)
            })
            .count();
        let starts: Option<Vec<usize>> = (!blind).then(|| {
            let mut v = Vec::new();
            let mut mark: Option<usize> = None;
            for k in 0..kids.len() {
                if kids[k].1 != Some("argument") {
                    continue;
                }
                if super::parse::translation_mark(&kids, k) {
                    // `$"…"` starts at its `$`.
                    mark = Some(kids[k].0.start_byte());
                    continue;
                }
                v.push(mark.take().unwrap_or(kids[k].0.start_byte()));
            }
            v
        });
        if raw == "time" {
            // `time` is a keyword to bash: the head is what it times.
            let mut cursor = node.walk();
            let next = node
                .children_by_field_name("argument", &mut cursor)
                .find(|a| {
                    let t = src.get(a.byte_range()).unwrap_or("");
                    t != "-p" && t != "--"
                });
            if let Some(a) = next {
                return Some(Head {
                    start: (!blind).then_some(a.start_byte()),
                    word: src.get(a.byte_range()).unwrap_or("").to_string(),
                    end,
                    words: None,
                    starts: None,
                });
            }
        } else {
            return Some(Head {
                start: (!blind).then_some(name.start_byte()),
                word: raw.to_string(),
                end,
                words: (!blind).then_some(count),
                starts,
            });
        }
    }
    None
}

/// Whether two readings found the same simple commands.
pub(crate) fn agree(a: &[Head], b: &[Head]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut x: Vec<&Head> = a.iter().collect();
    let mut y: Vec<&Head> = b.iter().collect();
    // Heads known on both sides by place must match exactly; the rest by word.
    x.sort();
    y.sort();
    let placed = |v: &[&Head]| -> Vec<(usize, String)> {
        v.iter()
            .filter_map(|h| h.start.map(|s| (s, h.word.clone())))
            .collect()
    };
    let blind = |v: &[&Head]| -> Vec<String> {
        let mut w: Vec<String> = v
            .iter()
            .filter(|h| h.start.is_none())
            .map(|h| h.word.clone())
            .collect();
        w.sort();
        w
    };
    if placed(&x) != placed(&y) || blind(&x) != blind(&y) {
        return false;
    }
    // Where a command's words end, where both readings know it.
    x.iter().zip(&y).all(|(a, b)| {
        let ends = match (a.end, b.end) {
            (Some(p), Some(q)) => a.start != b.start || p == q,
            _ => true,
        };
        let counts = match (a.words, b.words) {
            (Some(p), Some(q)) => a.start != b.start || p == q,
            _ => true,
        };
        let starts = match (&a.starts, &b.starts) {
            (Some(p), Some(q)) => a.start != b.start || p == q,
            _ => true,
        };
        ends && counts && starts
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(src: &str) -> (Vec<Head>, Vec<Head>) {
        let tree = super::super::parse::parse_tree(src).expect("tree");
        let ts = ts_heads(tree.root_node(), src);
        let b = read(src).map(|r| r.heads).unwrap_or_default();
        (ts, b)
    }

    #[test]
    fn both_readings_agree_on_ordinary_commands() {
        for src in [
            "git status && git diff",
            "echo a && \\\necho b && \\\nls -la *.py",
            "git diff > /tmp/p && \\\n# Extract\nsed -n p /tmp/p | head > patch.txt",
            "echo `echo \\`id\\``",
            "time git push; ! ls; export A=1; [ -n x ]",
            "cat <<EOF\n$(rm x) `id`\nEOF",
            "for ((i=0;i<3;i++)); do echo $((i)); done",
        ] {
            let (a, b) = both(src);
            assert!(agree(&a, &b), "{src:?}\n  ts {a:?}\n  brush {b:?}");
        }
    }

    #[test]
    fn readings_differ_where_tree_sitter_is_wrong() {
        for src in [
            "echo $'\\\\'; rm -rf src #'",
            "echo \\ #; rm -rf src",
            "a=[\\; rm -rf src",
        ] {
            let (a, b) = both(src);
            assert!(!agree(&a, &b), "{src:?}\n  ts {a:?}\n  brush {b:?}");
        }
    }
}
