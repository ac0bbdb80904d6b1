//! Shell commands judged fragment by fragment (docs/permissions.md, "Shell commands: fragments").
//!
//! A command is parsed once with tree-sitter-bash (one parser per thread) into
//! its simple commands, the *fragments*. Each fragment carries the forms the
//! rules match: as written, as allow rules may see it (harmless wrappers
//! removed) and as deny/ask rules and caps see it (every wrapper, assignment,
//! privilege wrapper and command path removed).

mod arith;
pub(crate) mod config;
pub(crate) mod model;
pub(crate) mod parse;
mod second;
pub(crate) mod words;

use std::path::{Path, PathBuf};

use tree_sitter::Node;

use parse::{
    backtick_unescape, backtick_unescape_in, find_substitutions, parse_budget_spent, parse_source,
    translation_mark,
};

use crate::paths;
pub(crate) use config::ShellConfig;
pub(crate) use model::{Fragment, Parsed, Redir, Role, Target as WriteTarget};
use words::basename;
pub(crate) use words::brace_expand;
pub(crate) use words::Word;
use words::{is_dynamic_kind, norm_word, slice};

/// Longest re-reading (brace-expanded or `$IFS`-split text) judged.
const MAX_REINTERPRETED: usize = 4 * 1024;

/// Reserved words that never name a command.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "{", "}", "[[", "]]",
];

/// Words one simple command may hold, brace expansion included, before it
/// is opaque.
const MAX_WORDS: usize = 4096;
/// Pipe operators one command may hold before it is opaque.
const MAX_PIPES: usize = 256;

/// `|` and `|&` operators (not `||`), quoted or not.
fn pipe_count(src: &str) -> usize {
    let b = src.as_bytes();
    (0..b.len())
        .filter(|&i| b[i] == b'|' && b.get(i + 1) != Some(&b'|') && (i == 0 || b[i - 1] != b'|'))
        .count()
}

/// Commands longer than this many characters are opaque.
pub const MAX_COMMAND_CHARS: usize = 10_000;
/// Tree depth the walker descends before the command counts as unanalysable.
const MAX_NODE_DEPTH: usize = 400;
/// How deep `bash -c '…'` strings are re-parsed.
const MAX_REPARSE_DEPTH: usize = 12;
/// Derived commands (`xargs CMD`, `find -exec CMD`, `bash -c STRING`, `eval`…)
/// judged per command, all kinds together.
const MAX_DERIVED: usize = 512;
/// How deeply derived commands may nest (a derived command's derived command…).
const MAX_DERIVED_DEPTH: usize = 24;

#[derive(Clone)]
struct Scope {
    role: Role,
    redirs: Vec<Redir>,
}

/// Parses `src` into fragments. `root` is the directory commands start in.
pub(crate) fn parse_command(src: &str, root: &Path, home: &Path, config: &ShellConfig) -> Parsed {
    parse::budgeted(|| parse_command_inner(src, root, home, config))
}

fn parse_command_inner(src: &str, root: &Path, home: &Path, config: &ShellConfig) -> Parsed {
    let mut w = Walker {
        home,
        config,
        out: Vec::new(),
        opaque: None,
        strict: false,
        cwd: Some(root.to_path_buf()),
        branch: model::Branch::Head,
        links: Some(Vec::new()),
        last_switch: None,
        depth: 0,
        reparse_depth: 0,
        budget: 4,
        work: MAX_DERIVED,
        derived_depth: 0,
        seen: std::collections::HashSet::new(),
        vars: arith::Vars::new(),
        integers: std::collections::HashSet::new(),
        positional_unknown: false,
        hashed: Vec::new(),
        cd_unsure: false,
        dotglob: false,
        loose_globs: false,
        filling: 0,
        git_elsewhere: false,
    };
    if src.len() > MAX_COMMAND_CHARS && src.chars().count() > MAX_COMMAND_CHARS {
        // Not parsed: opaque (asks even in bypass); deny rules, ask rules
        // and caps still see every simple command of a flat reading.
        w.too_deep(&format!(
            "the command is longer than {MAX_COMMAND_CHARS} characters"
        ));
        w.flat_text_scan(src);
        return Parsed {
            fragments: w.out,
            opaque: w.opaque,
            strict: w.strict,
        };
    }
    if pipe_count(src) > MAX_PIPES {
        // tree-sitter's error recovery grows faster than the pipeline.
        w.too_deep("the command has too many pipes to judge");
        w.flat_text_scan(src);
        return Parsed {
            fragments: w.out,
            opaque: w.opaque,
            strict: w.strict,
        };
    }
    w.source(src, Role::Full);
    w.hashed_names();
    if src.contains("@P}") {
        // `${x@P}` expands x as a prompt string, running any `$(…)` in it,
        // quoted or not: opaque, and every substitution in the text is judged.
        w.set_opaque("prompt expansion (`@P`) can run a command hidden in a variable".into());
        for inner in find_substitutions(src, &[]) {
            if w.take_budget() {
                w.reparse(&inner, Role::Checked);
            }
        }
    }
    Parsed {
        fragments: w.out,
        opaque: w.opaque,
        strict: w.strict,
    }
}

/// The fragments of a bash command as the gate sees them: the text of each
/// simple command (quoting removed, wrappers kept) and, when the command is
/// opaque, why. For tools, the command line, fuzzing and the bash oracle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fragments {
    pub texts: Vec<String>,
    pub opaque: Option<String>,
    /// The command is opaque in a way that asks even in bypass mode.
    pub strict: bool,
    /// For every fragment and see-through level: a glob (`*` the only
    /// wildcard, `\` escaping) over the words bash may run there, joined by
    /// spaces, the program by its base name. A command bash runs that no
    /// pattern matches is one the gate did not see.
    pub patterns: Vec<String>,
    /// The program names the gate saw (every wrapper level).
    pub names: Vec<String>,
}

/// Splits a bash command into its fragments (docs/permissions.md).
pub fn fragments(command: &str) -> Fragments {
    let p = parse_command(
        command,
        Path::new("/"),
        Path::new("/"),
        &ShellConfig::default(),
    );
    let mut patterns = Vec::new();
    let mut names = Vec::new();
    for f in &p.fragments {
        for pat in f.argv_patterns(true) {
            if !patterns.contains(&pat) {
                patterns.push(pat);
            }
        }
        for n in &f.chain {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    Fragments {
        texts: p.fragments.into_iter().map(|f| f.text).collect(),
        opaque: p.opaque,
        strict: p.strict,
        patterns,
        names,
    }
}

struct Walker<'h> {
    home: &'h Path,
    config: &'h ShellConfig,
    out: Vec<Fragment>,
    opaque: Option<String>,
    strict: bool,
    cwd: Option<PathBuf>,
    branch: model::Branch,
    /// Links made so far (`None`: one the gate cannot place).
    links: Option<Vec<PathBuf>>,
    /// The last branch switch: (fragment index, branch).
    last_switch: Option<(usize, String)>,
    depth: usize,
    reparse_depth: usize,
    budget: usize,
    /// What is left of [`MAX_DERIVED`].
    work: usize,
    derived_depth: usize,
    /// Derived commands already judged (text, role, cwd): judged once.
    seen: std::collections::HashSet<(String, Role, Option<PathBuf>)>,
    /// What the command assigns to each variable (for arithmetic).
    vars: arith::Vars,
    /// Variables declared with the integer attribute (`declare -i`): what
    /// is assigned to them is evaluated as arithmetic.
    integers: std::collections::HashSet<String>,
    /// The positional parameters may hold text the gate does not know (the
    /// command defines functions or runs `set`).
    positional_unknown: bool,
    /// `hash -p PATH NAME` (NAME runs PATH) and `alias NAME=TEXT`: the
    /// words each name stands for.
    hashed: Vec<(String, Vec<String>)>,
    /// The command points git at another repository through the
    /// environment (`GIT_DIR`, `GIT_WORK_TREE`).
    git_elsewhere: bool,
    /// Derived commands of `find -exec` / `xargs` being judged.
    filling: usize,
    /// `shopt -s dotglob` or `GLOBIGNORE` seen.
    dotglob: bool,
    /// `extglob`, `nocaseglob` or `globasciiranges` seen.
    loose_globs: bool,
    /// The command changes what `cd` follows (`HOME`, `CDPATH`, `OLDPWD`,
    /// `cdable_vars`): after any `cd` the folder is unknown.
    cd_unsure: bool,
}

impl Walker<'_> {
    fn set_opaque(&mut self, why: String) {
        if self.opaque.is_none() {
            self.opaque = Some(why);
        }
    }

    /// Re-readings (brace expansion, `$IFS`) are limited per command, so
    /// they cannot multiply.
    fn take_budget(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        true
    }

    fn too_deep(&mut self, why: &str) {
        self.strict = true;
        self.set_opaque(why.to_string());
    }

    /// A reading without the grammar, for text too long or too deeply nested
    /// to parse: every piece between separators (quotes count as separators,
    /// so strings run by a shell are pieces too), split at whitespace, is a
    /// `Checked` fragment — deny rules, ask rules and caps see it.
    fn flat_text_scan(&mut self, src: &str) {
        let mut local: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let is_sep = |c: char| {
            matches!(
                c,
                ';' | '&'
                    | '|'
                    | '\n'
                    | '('
                    | ')'
                    | '`'
                    | '{'
                    | '}'
                    | '\''
                    | '"'
                    | '<'
                    | '>'
                    | '\0'
            )
        };
        for piece in src.split(is_sep) {
            let piece = piece.trim();
            if piece.is_empty() || !local.insert(piece) {
                continue;
            }
            let words: Vec<Word> = piece
                .split_whitespace()
                .map(|w| Word::raw(&w.replace('\\', "")))
                .filter(|w| !w.text.is_empty() && w.text != "$")
                .skip_while(|w| RESERVED.contains(&w.text.as_str()) || w.text == "!")
                .collect();
            if words.is_empty() {
                continue;
            }
            self.emit(Vec::new(), words, Vec::new(), Role::Checked);
        }
    }

    /// Takes from the derived-command budget for a derived text of `len`
    /// bytes (one unit, plus one per 256 bytes); when not enough is left the
    /// command is opaque (and asks even in bypass).
    fn take_work(&mut self, len: usize) -> bool {
        let cost = 1 + len / 32;
        if self.work < cost || self.derived_depth >= MAX_DERIVED_DEPTH {
            self.too_deep("the command nests or derives too many commands to judge");
            return false;
        }
        self.work -= cost;
        true
    }

    /// Parses a source text (the command, or a `bash -c` / `eval` string) and walks it.
    fn source(&mut self, src: &str, role: Role) {
        if self.reparse_depth > MAX_REPARSE_DEPTH || src.len() > MAX_COMMAND_CHARS {
            self.too_deep("shell strings are nested too deeply to judge");
            // Deny rules still see the commands in the string.
            self.flat_text_scan(src);
            return;
        }
        if let Some(c) = words::hidden_char(src) {
            self.set_opaque(format!(
                "the command holds an invisible or control character (U+{:04X})",
                c as u32
            ));
        }
        // NUL bytes: bash drops them from a script and argv ends at the first
        // one. Both readings are judged; tree-sitter never sees a NUL (its
        // scanner crawls over them).
        let without_nul;
        let src = match src.find('\0') {
            Some(first) => {
                let prefix = &src[..first];
                if !prefix.trim().is_empty() && self.take_budget() {
                    let prefix = prefix.to_string();
                    self.reparse(&prefix, Role::Checked);
                }
                without_nul = src.replace('\0', "");
                without_nul.as_str()
            }
            None => src,
        };
        let Some((tree, text)) = parse_source(src) else {
            if parse_budget_spent() {
                self.too_deep("the command takes too long to parse");
                self.flat_text_scan(src);
            } else {
                self.set_opaque("the command cannot be parsed".into());
            }
            return;
        };
        let root = tree.root_node();
        let broken = root.has_error();
        if broken {
            self.set_opaque("the command cannot be parsed".into());
        }
        // The second reading: both parsers must find the same simple commands.
        // Text of words and blanks alone (no quote, expansion, operator or
        // glob) holds one simple command in any reading: it is not read twice.
        let second = if plain_words(&text) {
            None
        } else {
            second::read(&text)
        };
        match &second {
            None if plain_words(&text) => {}
            Some(r) if !broken && !second::agree(&second::ts_heads(root, &text), &r.heads) => {
                self.too_deep(
                    "two bash parsers read the command differently (it may hide a command)",
                );
            }
            Some(_) if !broken => {}
            None if !broken && second::nesting(&text) > 48 => {
                self.too_deep("the command is nested too deeply to judge");
            }
            None if !broken => {
                self.too_deep("a second bash parser cannot read the command");
            }
            Some(_) => {
                self.too_deep("tree-sitter-bash cannot parse the command, but bash can");
            }
            None => {}
        }
        if self.reparse_depth == 0 {
            self.positional_unknown = sets_positional(&text);
        }
        if closes_into_word(&text) {
            // `git 2>&-push`: bash closes the descriptor and reads `push` as
            // a word of its own; tree-sitter takes `-push` as the target.
            self.too_deep("`>&-` runs into the next word, which bash reads as a word of its own");
        }
        self.dotglob |= text.contains("dotglob") || text.contains("GLOBIGNORE");
        self.git_elsewhere |= text.contains("GIT_DIR")
            || text.contains("GIT_WORK_TREE")
            || text.contains("GIT_COMMON_DIR");
        self.loose_globs |= text.contains("extglob") || text.contains("nocaseglob");
        if let Some(why) = changes_cd_state(&text) {
            self.set_opaque(why.to_string());
            self.cd_unsure = true;
            let uses = [
                "~", "$HOME", "${HOME", "$PWD", "${PWD", "$TMPDIR", "${TMPDIR",
            ];
            if uses.iter().any(|u| text.contains(u)) {
                self.strict = true;
            }
        }
        // Variables matter only to arithmetic, subscripts and dynamic paths.
        if text.contains(['$', '[']) || text.contains("((") || text.contains("let") {
            arith::collect(root, &text, &mut self.vars);
        }
        if text.contains("declare") || text.contains("typeset") || text.contains("local") {
            arith::integer_names(root, &text, &mut self.integers);
        }
        self.reparse_depth += 1;
        let scope = Scope {
            role,
            redirs: Vec::new(),
        };
        self.walk(root, &text, &scope);
        if self.strict {
            if let Some(r) = second {
                self.second_reading(r);
            }
        }
        if broken && text.contains('{') && text.len() <= MAX_REINTERPRETED && self.take_budget() {
            // `{rm,-rf,x}` does not parse; deny rules and caps still judge
            // its brace-expanded reading.
            let expanded = words::brace_expand(&text, 16).join(" ");
            if expanded != text && expanded.len() <= MAX_REINTERPRETED {
                self.reparse(&expanded, Role::Checked);
            }
        }
        self.reparse_depth -= 1;
    }

    /// The simple commands of the second parser's reading, judged by deny
    /// rules, ask rules and caps (the command is opaque already).
    fn second_reading(&mut self, r: second::Reading) {
        for s in r.simples {
            let to_word = |raw: &str| match second::word_segs(raw) {
                Some((segs, ctrl)) => Word::from_segs(segs, ctrl),
                None => Word::raw(raw),
            };
            let assigns: Vec<Word> = s.assigns.iter().map(|a| to_word(a)).collect();
            let mut words = Vec::new();
            for raw in &s.words {
                match second::word_segs(raw)
                    .and_then(|(segs, ctrl)| words::expand_segs(segs, ctrl, MAX_WORDS))
                {
                    Some(ws) => words.extend(ws),
                    None => words.push(Word::raw(raw)),
                }
            }
            let redirs = s
                .targets
                .iter()
                .map(|t| {
                    let w = to_word(t);
                    Redir {
                        text: format!("> {}", w.text),
                        canon: format!("> {}", w.canon_text()),
                        ctrl: w.ctrl,
                        write: true,
                        dynamic: w.dynamic,
                        path: Some(w.text),
                        feed: None,
                    }
                })
                .collect();
            if !self.take_work(1) {
                return;
            }
            self.emit(assigns, words, redirs, Role::Checked);
        }
    }

    /// A string run by a shell (`bash -c`, `su -c`, `eval`): its own cwd scope.
    fn reparse(&mut self, src: &str, role: Role) {
        let saved = (self.cwd.clone(), self.branch.clone());
        self.source(src, role);
        (self.cwd, self.branch) = saved;
    }

    fn walk(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        if self.depth >= MAX_NODE_DEPTH {
            self.too_deep("the command is nested too deeply to judge");
            self.flat_scan(node, src);
            return;
        }
        self.depth += 1;
        match node.kind() {
            "command" => self.command(node, src, scope, &[]),
            "declaration_command" | "unset_command" | "test_command" => {
                self.generic(node, src, scope)
            }
            "compound_statement" if first_kind(node) == Some("((") => {
                let text = slice(src, node.byte_range());
                let inner = text
                    .strip_prefix("((")
                    .map(|t| t.strip_suffix("))").unwrap_or(t))
                    .unwrap_or(text);
                self.arith(inner, scope.role, 0);
                let mut words = Vec::new();
                flatten_words(node, src, &mut words, 0);
                self.emit(Vec::new(), words, scope.redirs.clone(), scope.role);
            }
            "arithmetic_expansion" => {
                let text = slice(src, node.byte_range());
                let inner = text
                    .strip_prefix("$((")
                    .or_else(|| text.strip_prefix("$["))
                    .map(|t| t.trim_end_matches([')', ']']))
                    .unwrap_or(text);
                self.arith(inner, scope.role, 0);
            }
            "c_style_for_statement" => {
                for field in ["initializer", "condition", "update"] {
                    let mut cursor = node.walk();
                    let parts: Vec<Node<'_>> =
                        node.children_by_field_name(field, &mut cursor).collect();
                    for part in parts {
                        self.arith(slice(src, part.byte_range()), scope.role, 0);
                    }
                }
                if let Some(body) = node.child_by_field_name("body") {
                    self.walk(body, src, scope);
                }
            }
            "variable_assignment" | "variable_assignments" => self.assignments(node, src, scope),
            "redirected_statement" => self.redirected(node, src, scope),
            "command_substitution"
                if slice(src, node.byte_range()).starts_with('`')
                    && slice(src, node.byte_range()).contains('\\') =>
            {
                // Inside backticks `\\`, `\`` and `\$` lose their backslash:
                // bash reads the unescaped text as a script of its own.
                let text = slice(src, node.byte_range());
                let inner = text
                    .strip_prefix('`')
                    .map(|t| t.strip_suffix('`').unwrap_or(t))
                    .unwrap_or(text);
                // Inside `"…"`, `\"` loses its backslash too.
                let in_dq = node.parent().is_some_and(|p| p.kind() == "string");
                let unescaped = backtick_unescape_in(inner, in_dq);
                if self.take_work(unescaped.len()) {
                    self.derived_depth += 1;
                    self.reparse(&unescaped, scope.role);
                    self.derived_depth -= 1;
                }
            }
            "subshell" | "command_substitution" | "process_substitution" => {
                if node.kind() == "process_substitution" && procsub_glued(src, node.byte_range()) {
                    // `git<(x)`: bash reads one word, `git/dev/fd/63` (a path
                    // it runs); tree-sitter reads `git` and `<(x)` apart.
                    self.too_deep(
                        "a process substitution runs into a word, which bash reads as one word with it",
                    );
                }
                let saved = (self.cwd.clone(), self.branch.clone());
                self.children(node, src, scope);
                self.cwd = saved.0;
                // HEAD lives in the repository, not the shell: a switch in a
                // subshell stays, but the gate cannot say whether it ran.
                if self.branch != saved.1 {
                    self.branch = model::Branch::Unknown;
                }
                self.last_switch = None;
            }
            "list" => {
                let mut cursor = node.walk();
                let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
                for (k, child) in kids.iter().enumerate() {
                    self.walk(*child, src, scope);
                    // `git checkout x && …`: what follows runs on x.
                    if kids.get(k + 1).map(|n| n.kind()) == Some("&&") {
                        if let Some((at, b)) = self.last_switch.take() {
                            if at + 1 == self.out.len() {
                                self.branch = model::Branch::OneOf(vec![b]);
                            }
                        }
                    }
                }
            }
            "expansion" => {
                // Every substitution in `${…}` is judged, whatever the quoting
                // (tree-sitter leaves some as text, and subscripts and offsets
                // are evaluated again as arithmetic); so are the variables
                // its arithmetic parts name.
                let text = slice(src, node.byte_range());
                for inner in arith::scan(text).subs {
                    if !self.take_work(inner.len()) {
                        break;
                    }
                    self.derived_depth += 1;
                    self.reparse(&backtick_unescape(&inner), scope.role);
                    self.derived_depth -= 1;
                }
                for part in arith::expansion_parts(text) {
                    self.arith_names(part, 0);
                }
                if let Some(target) = indirect_name(text) {
                    self.indirect(target, scope.role);
                }
            }
            "function_definition" => {
                let saved = (self.cwd.clone(), self.branch.clone());
                if let Some(body) = node.child_by_field_name("body") {
                    self.walk(body, src, scope);
                }
                // The function may be called anywhere later: a folder or
                // branch it moves to makes them unknown from here on.
                let moved = (self.cwd != saved.0, self.branch != saved.1);
                (self.cwd, self.branch) = saved;
                if moved.0 {
                    self.cwd = None;
                }
                if moved.1 {
                    self.branch = model::Branch::Unknown;
                }
            }
            "heredoc_redirect" => self.heredoc(node, src, scope),
            "comment" | "heredoc_start" | "heredoc_end" => {}
            _ => self.children(node, src, scope),
        }
        self.depth -= 1;
    }

    fn children(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in kids {
            self.walk(child, src, scope);
        }
    }

    /// Beyond the depth limit: every simple command below `node`, found
    /// without recursion, judged as `Checked` fragments so deny still sees them.
    fn flat_scan(&mut self, node: Node<'_>, src: &str) {
        let mut cursor = node.walk();
        let mut budget = 100_000usize;
        loop {
            let n = cursor.node();
            if n.kind() == "command" {
                let c = collect_command(n, src);
                self.emit(c.assigns, c.words, c.redirs, Role::Checked);
            }
            budget -= 1;
            if budget == 0 {
                return;
            }
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() || cursor.node() == node {
                    return;
                }
            }
        }
    }

    fn redirected(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let mut redirs = Vec::new();
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let mut body = None;
        for (i, child) in kids.iter().enumerate() {
            if node.field_name_for_child(i as u32) == Some("body") {
                body = Some(*child);
                continue;
            }
            if let Some(r) = redirect(*child, src) {
                redirs.push(r);
            }
            self.walk(*child, src, scope);
        }
        match body {
            Some(b) if b.kind() == "command" => self.command(b, src, scope, &redirs),
            Some(b) => {
                let mut inner = scope.clone();
                inner.redirs.extend(redirs);
                let before = self.out.len();
                self.walk(b, src, &inner);
                if self.out.len() == before {
                    self.emit(Vec::new(), Vec::new(), inner.redirs, scope.role);
                }
            }
            None => {
                let mut all = scope.redirs.clone();
                all.extend(redirs);
                self.emit(Vec::new(), Vec::new(), all, scope.role);
            }
        }
    }

    fn heredoc(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let quoted = node
            .named_children(&mut node.walk())
            .find(|c| c.kind() == "heredoc_start")
            .is_some_and(|s| {
                let t = slice(src, s.byte_range());
                t.contains(['\'', '"', '\\'])
            });
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in kids {
            match child.kind() {
                "heredoc_body" => {
                    if !quoted {
                        self.walk(child, src, scope);
                        self.heredoc_backticks(child, src, scope);
                    }
                }
                "heredoc_start" | "heredoc_end" | "<<" | "<<-" => {}
                _ => self.walk(child, src, scope),
            }
        }
    }

    /// Command substitutions in an unquoted here-document body that
    /// tree-sitter left as text (backticks always; `$( )` after `<<-`).
    fn heredoc_backticks(&mut self, body: Node<'_>, src: &str, scope: &Scope) {
        let mut parsed: Vec<std::ops::Range<usize>> = Vec::new();
        let mut cursor = body.walk();
        for c in body.named_children(&mut cursor) {
            if c.kind() != "heredoc_content" {
                parsed.push(c.byte_range());
            }
        }
        let range = body.byte_range();
        let skip: Vec<std::ops::Range<usize>> = parsed
            .iter()
            .map(|r| r.start.saturating_sub(range.start)..r.end.saturating_sub(range.start))
            .collect();
        for inner in find_substitutions(slice(src, range), &skip) {
            self.reparse(&inner, scope.role);
        }
    }

    fn assignments(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let mut assigns = Vec::new();
        if node.kind() == "variable_assignment" {
            assigns.push(norm_word(node, src));
            self.walk_assignment_value(node, src, scope);
        } else {
            let mut cursor = node.walk();
            let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            for c in kids {
                if c.kind() == "variable_assignment" {
                    assigns.push(norm_word(c, src));
                    self.walk_assignment_value(c, src, scope);
                }
            }
        }
        self.emit(assigns, Vec::new(), scope.redirs.clone(), scope.role);
    }

    fn walk_assignment_value(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let integer = !self.integers.is_empty()
            && node.child_by_field_name("name").is_some_and(|n| {
                let n = if n.kind() == "subscript" {
                    n.child_by_field_name("name").unwrap_or(n)
                } else {
                    n
                };
                self.integers.contains(slice(src, n.byte_range()))
            });
        if integer {
            // `declare -i y; y=TEXT`: bash evaluates TEXT as arithmetic.
            if let Some(v) = node.child_by_field_name("value") {
                let w = norm_word(v, src);
                let text = if w.dynamic || v.kind() == "array" {
                    slice(src, v.byte_range()).to_string()
                } else {
                    w.text
                };
                self.arith(&text, scope.role, 0);
            }
        }
        for c in kids {
            match c.kind() {
                "variable_name" => {}
                // `a[SUB]=…`: the subscript is arithmetic.
                "subscript" => {
                    if let Some(index) = c.child_by_field_name("index") {
                        self.arith(slice(src, index.byte_range()), scope.role, 0);
                    }
                }
                "array" => {
                    let mut cursor = c.walk();
                    let elements: Vec<Node<'_>> = c.named_children(&mut cursor).collect();
                    for e in elements {
                        let t = slice(src, e.byte_range());
                        if let Some(sub) = t.strip_prefix('[').and_then(|r| r.split_once("]=")) {
                            self.arith(sub.0, scope.role, 0);
                        }
                        self.walk(e, src, scope);
                    }
                }
                _ => self.walk(c, src, scope),
            }
        }
    }

    /// Text bash evaluates arithmetically: its substitutions are fragments
    /// (quoted or not), and the variables it names must hold known text.
    fn arith(&mut self, text: &str, role: Role, depth: usize) {
        let found = arith::scan(text);
        for inner in found.subs {
            if !self.take_work(inner.len()) {
                return;
            }
            self.derived_depth += 1;
            self.reparse(&backtick_unescape(&inner), role);
            self.derived_depth -= 1;
        }
        for name in found.names {
            self.arith_name(&name, role, depth);
        }
    }

    /// `${!x}`: bash takes x's value as a name, evaluating its subscript.
    fn indirect(&mut self, name: &str, role: Role) {
        let positional = name.chars().all(|c| c.is_ascii_digit());
        let values = match self.vars.get(name) {
            Some(arith::Val::Numeric) => return,
            _ if positional && !self.positional_unknown && self.reparse_depth <= 1 => return,
            Some(arith::Val::Text(v) | arith::Val::Paths(v)) => v.clone(),
            _ => {
                self.set_opaque(format!(
                    "`${{!{name}}}` names a variable only known when it runs (bash evaluates its subscript)"
                ));
                return;
            }
        };
        for v in values {
            if let Some(sub) = arith::name_subscript(&v) {
                let sub = sub.to_string();
                self.arith(&sub, role, 0);
            }
        }
    }

    /// Only the variables of arithmetic text (its substitutions are judged elsewhere).
    fn arith_names(&mut self, text: &str, depth: usize) {
        for name in arith::scan(text).names {
            self.arith_name(&name, Role::Checked, depth);
        }
    }

    fn arith_name(&mut self, name: &str, role: Role, depth: usize) {
        let positional = !name.is_empty()
            && (name.chars().all(|c| c.is_ascii_digit()) || matches!(name, "@" | "*"));
        if positional && (self.positional_unknown || self.reparse_depth > 1) {
            // `bash -c '… $1 …' _ ARG`, a function's arguments, `set -- …`.
            self.set_opaque(format!(
                "`${name}` is evaluated as arithmetic, and its value is not known here (it may hide a command)"
            ));
            return;
        }
        if arith::is_safe_name(name) {
            return;
        }
        match self.vars.get(name).cloned() {
            Some(arith::Val::Numeric) => {}
            Some(arith::Val::Text(texts)) if depth < 8 => {
                for t in texts {
                    self.arith(&t, role, depth + 1);
                }
            }
            _ => self.set_opaque(format!(
                "`{name}` is evaluated as arithmetic, and its value is not known here (it may hide a command)"
            )),
        }
    }

    /// `[ … ]`, `[[ … ]]`, `(( … ))`, `export …`, `unset …`: one fragment of
    /// its words; substitutions inside are fragments of their own.
    fn generic(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let mut words = Vec::new();
        flatten_words(node, src, &mut words, 0);
        self.children(node, src, scope);
        if node.kind() == "test_command" && slice(src, node.byte_range()).starts_with("[[") {
            // `[[ A -eq B ]]` evaluates A and B as arithmetic.
            let mut stack = vec![node];
            while let Some(n) = stack.pop() {
                if n.kind() == "binary_expression" {
                    let op = n
                        .child_by_field_name("operator")
                        .map(|o| slice(src, o.byte_range()));
                    if matches!(op, Some("-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge")) {
                        for side in ["left", "right"] {
                            if let Some(x) = n.child_by_field_name(side) {
                                // The operand's text, quotes removed, is
                                // arithmetic: its subscripts run substitutions.
                                let w = norm_word(x, src);
                                let text = if w.dynamic {
                                    slice(src, x.byte_range()).to_string()
                                } else {
                                    w.text
                                };
                                self.arith(&text, scope.role, 0);
                            }
                        }
                    }
                }
                let mut cursor = n.walk();
                stack.extend(n.named_children(&mut cursor));
            }
        }
        self.emit(Vec::new(), words, scope.redirs.clone(), scope.role);
    }

    fn command(&mut self, node: Node<'_>, src: &str, scope: &Scope, extra: &[Redir]) {
        // Substitutions inside the command run first.
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for c in kids {
            match c.kind() {
                "variable_assignment" => self.walk_assignment_value(c, src, scope),
                "heredoc_redirect" => self.heredoc(c, src, scope),
                _ => self.walk(c, src, scope),
            }
        }
        let Command {
            assigns,
            words,
            mut redirs,
            overflow,
        } = collect_command(node, src);
        if overflow {
            self.too_deep("brace expansion makes too many words to judge");
        }
        if split_translated_word(node) {
            // `-r$"x"`: tree-sitter reads `-r$` and `"x"` as two arguments;
            // bash reads one word, `-rx`.
            self.too_deep(
                "a word runs into a `$\"…\"` string, which bash reads as one word with it",
            );
        }
        if let Some(name) = node.child_by_field_name("name") {
            let raw = slice(src, name.byte_range());
            let plain = name.named_child(0).is_some_and(|w| w.kind() == "word");
            if plain && raw.starts_with('~') && !raw.contains('/') {
                // `~`, `~user`, `~+`: bash runs the path the tilde expands to.
                self.set_opaque(format!(
                    "the command word `{raw}` is a folder's path only known when it runs"
                ));
            }
            if plain && RESERVED.contains(&raw) {
                // tree-sitter took a reserved word for a command name: bash
                // would read this differently. Opaque, and what follows the
                // keyword is still judged by deny/ask rules and caps.
                self.set_opaque(format!(
                    "`{raw}` where a command should be: cannot be parsed"
                ));
                let rest = slice(src, name.end_byte()..node.end_byte());
                if !rest.trim().is_empty() {
                    self.reparse(rest, Role::Checked);
                }
            }
        }
        let mut all = scope.redirs.clone();
        all.extend(extra.iter().cloned());
        all.append(&mut redirs);
        self.emit(assigns, words, all, scope.role);
    }

    /// Builds the fragment(s) of one simple command and records their effects
    /// (`cd`, `git checkout`) on the walker.
    fn emit(&mut self, assigns: Vec<Word>, words: Vec<Word>, redirs: Vec<Redir>, role: Role) {
        if words
            .first()
            .is_some_and(|w| w.text.trim() != w.text && !w.text.trim().is_empty())
        {
            // `" npm" c` runs a program named ` npm`, not npm.
            self.set_opaque(
                "the command word has blanks at its ends (bash runs that exact name)".into(),
            );
        }
        let mut analysis = crate::programs::analyse(&assigns, &words, &redirs, role, self.config);
        if let Some(why) = &analysis.dynamic {
            self.set_opaque(why.clone());
        }
        let program_resolved = analysis.core_dyn.first() == Some(&true)
            && !self.vars.is_empty()
            && self.program_values(&words, &mut analysis);
        let mut paths = Vec::new();
        for a in &assigns {
            if let Some((_, v)) = a.text.split_once('=') {
                push_path_candidates(v, a, &mut paths);
            }
        }
        let cs = *analysis.levels.last().unwrap_or(&0);
        let patterns: Vec<usize> = crate::programs::pattern_args(&analysis.core)
            .into_iter()
            .map(|k| cs + k)
            .collect();
        collect_arg_paths(&words, &patterns, &mut paths);
        for r in &redirs {
            if let Some(p) = &r.path {
                paths.push(p.clone());
            }
        }
        // A path built from variables the command only sets to known text or
        // file globs (`for f in src/*.rs; do wc -l "$f"`) is judged by those.
        let mut substituted = Vec::new();
        paths.retain(|p| {
            if !p.contains('$') {
                return true;
            }
            match arith::substitute(p, &self.vars, 16) {
                Some(values) => {
                    substituted.extend(values);
                    false
                }
                None => true,
            }
        });
        paths.extend(substituted);
        let mut writes = crate::programs::targets(&analysis.core, &analysis.core_dyn, &redirs);
        writes.extend(analysis.own_writes.iter().cloned());
        // A target built from variables the command only ever sets to
        // known text (`for f in a b; do cp x /tmp/$f; done`) is judged
        // for each of those values.
        let mut known = Vec::new();
        writes.retain(|t| {
            if !t.dynamic {
                return true;
            }
            match arith::substitute(&t.raw, &self.vars, 64) {
                Some(values) => {
                    for v in values {
                        let mut k = t.clone();
                        k.raw = v;
                        k.dynamic = false;
                        known.push(k);
                    }
                    false
                }
                None => true,
            }
        });
        writes.extend(known);
        for t in &writes {
            if !paths.contains(&t.raw) {
                paths.push(t.raw.clone());
            }
        }
        // `env -C DIR`, `git -C DIR`: the command runs in DIR.
        let cwd = match &analysis.chdir {
            None => self.cwd.clone(),
            Some(model::Workdir::Unknown) => None,
            Some(model::Workdir::At(d)) => match self.expand_static(d) {
                Some(Some(e)) => self.cwd.as_ref().map(|c| paths::lexical(c, &e)),
                _ => None,
            },
        };
        let frag = Fragment {
            text: analysis.text,
            canon: analysis.canon,
            role: analysis.role,
            allow_forms: analysis.allow_forms,
            check_forms: analysis.check_forms,
            chain: analysis.chain,
            core: analysis.core,
            paths,
            cwd,
            branch: self.branch.clone(),
            writes,
            links: self.links.clone(),
            find_roots: analysis.find_roots,
            words,
            levels: analysis.levels,
            core_dyn: analysis.core_dyn,
            core_quoted: analysis.core_quoted,
            program_resolved,
            program_partial: false,
            program_free: false,
            dotglob: self.dotglob,
            loose_globs: self.loose_globs,
            filled: false,
            command_filled: false,
        };
        let mut frag = frag;
        if frag.core_dyn.first() == Some(&true) {
            if let Some(w) = frag.levels.last().and_then(|&cs| frag.words.get(cs)) {
                frag.program_partial = if w.segs.is_empty() {
                    !w.text.starts_with('$')
                } else {
                    w.segs.iter().any(
                        |s| matches!(s, words::Seg::Live(t) | words::Seg::Lit(t) if !t.is_empty()),
                    )
                };
                frag.program_free = w.text.contains("$(")
                    || w.text.contains('`')
                    || w.text.contains('@')
                    || w.text.contains('*')
                    || arith::scan(&w.text)
                        .names
                        .iter()
                        .any(|n| matches!(self.vars.get(n), Some(arith::Val::Unknown)));
            }
        }
        if frag.core.first().is_some_and(|n| n == "git")
            && (self.git_elsewhere || git_names_repository(&frag.core))
        {
            // Which branch that repository is on is not known here.
            frag.branch = model::Branch::Unknown;
        }
        let by_xargs = frag
            .chain
            .iter()
            .any(|c| matches!(c.as_str(), "xargs" | "parallel"));
        frag.filled = self.filling > 0
            || (by_xargs
                && !matches!(
                    frag.core.first().map(String::as_str),
                    Some("xargs" | "parallel")
                ));
        frag.command_filled = frag.filled
            && analysis.derived.is_empty()
            && frag
                .core
                .first()
                .is_some_and(|p| crate::programs::runs_its_arguments(p));
        if frag.command_filled {
            self.set_opaque(format!(
                "`{}` runs a command that xargs or find fills in when it runs",
                frag.core[0]
            ));
        }
        let fills = frag.find_roots.is_some()
            || by_xargs
            || frag.core.first().is_some_and(|c| c == "parallel");
        if analysis.deep {
            self.too_deep("the command has too many wrappers to judge");
        }
        if let Some(why) = &analysis.over_budget {
            self.too_deep(why);
        }
        if analysis.ctrl {
            self.set_opaque("a word holds an invisible or control character".into());
        }
        self.name_arguments(&frag);
        self.track_effects(&frag);
        let same_shell = frag.core.is_empty()
            || frag.chain.iter().chain(frag.core.first()).any(|n| {
                matches!(
                    n.as_str(),
                    "eval" | "trap" | "source" | "." | "mapfile" | "readarray"
                )
            });
        // What a wrapper that moved its command runs (`su - -c …`, `env -C / sh
        // -c …`) runs where the wrapper moved it.
        let outer_cwd = analysis.chdir.is_some().then(|| {
            let outer = self.cwd.clone();
            self.cwd = frag.cwd.clone();
            outer
        });
        self.out.push(frag);
        if fills {
            self.filling += 1;
        }
        for d in analysis.derived {
            let key = match &d {
                model::Derived::Words(ws, role) => {
                    let t: Vec<&str> = ws.iter().map(|w| w.text.as_str()).collect();
                    (t.join("\u{0}"), *role, self.cwd.clone())
                }
                model::Derived::Source(text, role) => {
                    (format!("\u{1}{text}"), *role, self.cwd.clone())
                }
                model::Derived::Find(ws, role, _) => {
                    let t: Vec<&str> = ws.iter().map(|w| w.text.as_str()).collect();
                    (format!("\u{3}{}", t.join("\u{0}")), *role, self.cwd.clone())
                }
            };
            if self.seen.contains(&key) {
                continue;
            }
            if !self.take_work(key.0.len()) {
                break;
            }
            self.seen.insert(key);
            self.derived_depth += 1;
            match d {
                model::Derived::Words(ws, role) => {
                    self.emit(Vec::new(), ws, Vec::new(), role);
                }
                model::Derived::Source(text, role) => {
                    self.reparse(&text, role);
                    if same_shell && Self::moves(&text) {
                        // `eval`, `trap`, `source`: run in this shell (a trap
                        // at any time): where they move is not followed.
                        self.cwd = None;
                        self.branch = model::Branch::Unknown;
                    }
                }
                model::Derived::Find(ws, role, roots) => {
                    let before = self.out.len();
                    self.emit(Vec::new(), ws, Vec::new(), role);
                    if let Some(f) = self.out.get_mut(before) {
                        f.find_roots = Some(roots);
                    }
                }
            }
            self.derived_depth -= 1;
        }
        if fills {
            self.filling -= 1;
        }
        if let Some(outer) = outer_cwd {
            self.cwd = outer;
        }
    }

    /// `let EXPR…`, and the NAME arguments of `declare`, `read`, `printf -v`,
    /// `unset`, `test -v`: bash evaluates them (their subscripts) as
    /// arithmetic. A name given through a variable is judged by every text
    /// the command assigns to it, and is opaque when that is unknown; so is
    /// the value of a nameref (`declare -n r=NAME`).
    fn name_arguments(&mut self, frag: &Fragment) {
        let core = &frag.core;
        let role = frag.role;
        let Some(name) = core.first() else {
            return;
        };
        let dynamic = |k: usize| frag.core_dyn.get(k).copied().unwrap_or(false);
        let mut names: Vec<(usize, bool)> = Vec::new();
        match name.as_str() {
            "let" => {
                for a in &core[1..] {
                    self.arith(a, role, 0);
                }
            }
            "declare" | "typeset" | "local" | "export" | "readonly" | "read" | "unset"
            | "mapfile" | "readarray" => {
                let nameref = matches!(name.as_str(), "declare" | "typeset" | "local")
                    && core[1..]
                        .iter()
                        .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('n'));
                for (k, a) in core.iter().enumerate().skip(1) {
                    if !a.starts_with('-') {
                        names.push((k, nameref));
                    }
                }
            }
            _ => {}
        }
        if matches!(name.as_str(), "printf" | "test" | "[" | "[[") {
            for k in 1..core.len() {
                if core[k] == "-v" && k + 1 < core.len() {
                    names.push((k + 1, false));
                }
            }
        }
        let reads_in = matches!(name.as_str(), "read" | "mapfile" | "readarray" | "printf");
        for (k, nameref) in names {
            let a = core[k].clone();
            let (target, value) = match a.split_once('=') {
                Some((n, v)) if !matches!(name.as_str(), "read" | "mapfile" | "readarray") => {
                    (n.trim_end_matches('+').to_string(), Some(v.to_string()))
                }
                _ => (a.clone(), None),
            };
            let mut judge = vec![target.clone()];
            if nameref {
                judge.extend(value.clone());
            }
            for n in judge {
                if dynamic(k) && n.contains(['$', '`']) {
                    match arith::substitute_literal(&n, &self.vars, 16) {
                        Some(values) => {
                            for v in values {
                                if let Some(sub) = arith::name_subscript(&v) {
                                    let sub = sub.to_string();
                                    self.arith(&sub, role, 0);
                                }
                            }
                        }
                        None => {
                            self.set_opaque(format!(
                                "`{name}` takes a variable name only known when it runs (bash evaluates its subscript)"
                            ));
                        }
                    }
                } else if let Some(sub) = arith::name_subscript(&n) {
                    let sub = sub.to_string();
                    self.arith(&sub, role, 0);
                }
            }
            if reads_in && self.integers.contains(arith::name_of(&target)) {
                self.set_opaque(format!(
                    "`{name}` stores text only known when it runs in an integer variable (bash evaluates it)"
                ));
            }
        }
    }

    fn track_effects(&mut self, frag: &Fragment) {
        let core = &frag.core;
        let Some(name) = core.first() else {
            return;
        };
        match name.as_str() {
            "cd" | "pushd" => {
                // Options (`-L`, `-P`, `-e`, `-@`, pushd's `-n`), then the folder.
                let mut k = 1;
                while k < core.len() && core[k].len() > 1 && core[k].starts_with('-') {
                    k += 1;
                    if core[k - 1] == "--" {
                        break;
                    }
                }
                let pushd = name == "pushd";
                self.cwd = match core.get(k) {
                    // Bare `pushd` swaps the top two folders; bare `cd` goes home.
                    None if pushd => None,
                    None => Some(self.home.to_path_buf()),
                    // `cd -` (OLDPWD may come from Decode's own environment),
                    // `pushd +N` / `pushd -N` (rotate the stack).
                    Some(t) if t == "-" || (pushd && t.starts_with(['+', '-'])) => None,
                    Some(t) => {
                        let dynamic = frag.core_dyn[k] && !self.is_static_var(t);
                        match self.expand_static(t) {
                            Some(Some(e)) if !dynamic => {
                                self.cwd.as_ref().map(|c| paths::lexical(c, &e))
                            }
                            _ => None,
                        }
                    }
                };
                // A folder reached through a file descriptor or /proc is
                // wherever that points; HOME/CDPATH changed: unknown.
                if self.cd_unsure
                    || self.cwd.as_ref().is_some_and(|c| {
                        c.starts_with("/proc")
                            || c.starts_with("/dev")
                            || c.as_os_str().len() > 1024
                            || c.components().count() > 64
                    })
                {
                    self.cwd = None;
                }
            }
            "popd" => self.cwd = None,
            // A sourced file runs in this shell: where it moves is unknown,
            // unless it is a file on disk that names no command that moves
            // (a virtualenv's `activate`) and nothing earlier in the
            // command wrote anything.
            "source" | "." => {
                let inert = core.len() >= 2
                    && !frag.core_dyn[1]
                    && !self.out.iter().any(|f| !f.writes.is_empty())
                    && self
                        .expand_static(&core[1])
                        .flatten()
                        .zip(self.cwd.as_ref())
                        .is_some_and(|(e, c)| sourced_file_is_inert(&paths::lexical(c, &e)));
                if !inert {
                    self.cwd = None;
                    self.branch = model::Branch::Unknown;
                }
            }
            "hash" => {
                // `hash -p PATH NAME…`: NAME runs PATH from here on.
                let mut k = 1;
                let mut path = None;
                while k < core.len() && core[k].starts_with('-') && core[k] != "--" {
                    if core[k].contains('p') {
                        path = core.get(k + 1).cloned();
                        k += 1;
                    }
                    k += 1;
                }
                if let Some(p) = path {
                    self.set_opaque("`hash -p` makes a name run another program".into());
                    let dynamic = frag.core_dyn.get(k - 1).copied().unwrap_or(true);
                    if dynamic {
                        self.strict = true;
                    }
                    let program = basename(&p).to_string();
                    for n in core
                        .iter()
                        .skip(k + usize::from(core.get(k).is_some_and(|t| t == "--")))
                    {
                        self.hashed.push((n.clone(), vec![program.clone()]));
                    }
                }
            }
            "alias" => {
                for a in &core[1..] {
                    if let Some((n, v)) = a.split_once('=') {
                        let ws: Vec<String> = v.split_whitespace().map(str::to_string).collect();
                        if !ws.is_empty() {
                            self.hashed.push((n.to_string(), ws));
                        }
                    }
                }
            }
            "enable" if core.iter().any(|a| a.starts_with('-') && a.contains('f')) => {
                self.set_opaque("`enable -f` loads a builtin from a file".into());
            }
            "git" => {
                if let Some(to) =
                    crate::branches::switch_target(core, &frag.core_dyn, frag.cwd.as_deref())
                {
                    if self.git_elsewhere || git_names_repository(core) {
                        // It may have moved another repository's HEAD, or this one's.
                        self.branch = model::Branch::Unknown;
                        self.last_switch = None;
                    } else {
                        self.branch = self.branch.switched(to.as_deref(), false);
                        self.last_switch = to.map(|b| (self.out.len(), b));
                    }
                }
            }
            "ln" => {
                for t in frag.writes.iter().filter(|t| t.link && t.from.is_none()) {
                    let place = if t.dynamic {
                        None
                    } else {
                        self.expand_static(&t.raw)
                            .flatten()
                            .and_then(|e| frag.cwd.as_ref().map(|c| paths::lexical(c, &e)))
                    };
                    match (place, self.links.as_mut()) {
                        (Some(p), Some(links)) => links.push(p),
                        (None, _) => self.links = None,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// A command word made of variables the command only sets to known
    /// text (`c=rm; $c -rf ~`, `x=(rm -rf ~); "${x[@]}"`): each value is
    /// judged as the command by deny rules, ask rules and caps.
    fn program_values(&mut self, words: &[Word], analysis: &mut model::Analysis) -> bool {
        let cs = *analysis.levels.last().unwrap_or(&0);
        let Some(program) = words.get(cs) else {
            return false;
        };
        let Some(values) = arith::substitute(&program.text, &self.vars, 16) else {
            return false;
        };
        for v in values {
            let mut ws: Vec<Word> = v.split_whitespace().map(Word::raw).collect();
            ws.extend_from_slice(&words[cs + 1..]);
            if !ws.is_empty() {
                analysis
                    .derived
                    .push(model::Derived::Words(ws, Role::Checked));
            }
        }
        true
    }

    /// Every fragment whose program a `hash -p` renamed is judged again as
    /// the program it runs (wherever the `hash` stood: functions and loops
    /// may run it first).
    fn hashed_names(&mut self) {
        if self.hashed.is_empty() {
            return;
        }
        let hashed = std::mem::take(&mut self.hashed);
        let renamed: Vec<Vec<Word>> = self
            .out
            .iter()
            .filter_map(|f| {
                let cs = *f.levels.last()?;
                let ws = f.words.get(cs..)?;
                let first = ws.first()?;
                let (_, to) = hashed.iter().find(|(n, _)| *n == first.text)?;
                let mut out: Vec<Word> = to.iter().map(|t| Word::raw(t)).collect();
                out.extend_from_slice(&ws[1..]);
                Some(out)
            })
            .collect();
        for ws in renamed {
            if !self.take_work(ws.len()) {
                break;
            }
            self.emit(Vec::new(), ws, Vec::new(), Role::Checked);
        }
    }

    /// Whether a script run in this shell may move its folder or branch:
    /// it names `cd`, `pushd`, `popd` or a command that moves HEAD.
    fn moves(text: &str) -> bool {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| {
                matches!(
                    w,
                    "cd" | "pushd" | "popd" | "checkout" | "switch" | "symbolic" | "update"
                )
            })
    }

    /// `$HOME`, `${HOME}`, `$PWD`, `$TMPDIR` and `~` expanded: `Some(None)`
    /// when the path still holds something only known when it runs.
    fn expand_static(&self, t: &str) -> Option<Option<PathBuf>> {
        let mut s = t.to_string();
        if let Some(c) = &self.cwd {
            let cwd = c.to_string_lossy();
            for v in ["${PWD}", "$PWD"] {
                if let Some(rest) = s.strip_prefix(v) {
                    s = format!("{cwd}{rest}");
                }
            }
        }
        for v in ["${TMPDIR}", "$TMPDIR"] {
            if let Some(rest) = s.strip_prefix(v) {
                s = format!("/tmp{rest}");
            }
        }
        let e = paths::expand_home(&s, self.home);
        let es = e.to_string_lossy();
        if es.contains('$') || es.contains('`') || es.starts_with('~') {
            return Some(None);
        }
        Some(Some(e))
    }

    /// `$HOME`, `$PWD`, `$TMPDIR` (alone or starting a path): known values.
    fn is_static_var(&self, t: &str) -> bool {
        matches!(self.expand_static(t), Some(Some(_)))
    }
}

/// The variable `${!name…}` takes a name from (not `${!prefix*}`,
/// `${!prefix@}` or `${!a[@]}`, which list names or keys).
fn indirect_name(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("${!")?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(end);
    if name.is_empty() || after.starts_with(['*', '@', '[']) {
        return None;
    }
    Some(name)
}

/// Whether a script file on disk names no command that could move the
/// shell's folder or branch, or run other code in it (comments apart).
fn sourced_file_is_inert(path: &Path) -> bool {
    let Ok(text) = paths::read_small_file(path, 256 * 1024) else {
        return false;
    };
    let code: String = text
        .lines()
        .map(|l| {
            let l = l.trim_start();
            if l.starts_with('#') {
                ""
            } else {
                l.split(" #").next().unwrap_or(l)
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    !code
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`' | '"' | '\''
                )
        })
        .any(|w| {
            matches!(
                w,
                "cd" | "pushd"
                    | "popd"
                    | "source"
                    | "."
                    | "eval"
                    | "exec"
                    | "trap"
                    | "git"
                    | "builtin"
                    | "command"
                    | "alias"
                    | "enable"
                    | "CDPATH"
                    | "HOME"
            ) || w.starts_with("$(")
        })
        && !code.contains("hash -p")
}

/// `git -C DIR`, `--git-dir`, `--work-tree`: git works on the repository
/// there, which may be this one or another.
fn git_names_repository(core: &[String]) -> bool {
    let end = crate::programs::git_subcommand(core)
        .map_or(core.len(), |(_, rest)| core.len() - rest.len());
    core[1..end]
        .iter()
        .any(|a| a == "-C" || a.starts_with("--git-dir") || a.starts_with("--work-tree"))
}

/// A process substitution with no blank or operator between it and the word
/// before or after it (`a<(x)`, `<(x)b`); `--opt=<(x)` and `x=<(x)` are the
/// usual spellings and read the same in both parsers.
fn procsub_glued(src: &str, range: std::ops::Range<usize>) -> bool {
    let b = src.as_bytes();
    let before = range.start.checked_sub(1).and_then(|i| b.get(i));
    let after = b.get(range.end);
    let sep = |c: &u8| {
        matches!(
            c,
            b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b'(' | b')' | b'<' | b'>'
        )
    };
    before.is_some_and(|c| !sep(c) && *c != b'=') || after.is_some_and(|c| !sep(c))
}

/// Only words and blanks: letters, digits, spaces, tabs and `._/:,+@%=-`,
/// starting with a letter, digit, `.` or `/` (never `-`, `=`, or a reserved word).
pub(crate) fn plain_words(text: &str) -> bool {
    let first = text.split([' ', '\t']).find(|w| !w.is_empty());
    first.is_some_and(|w| {
        w.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.' || c == '/')
            && !w.contains('=')
            && !RESERVED.contains(&w)
            && !matches!(w, "time" | "coproc")
    }) && text.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b' ' | b'\t' | b'.' | b'_' | b'/' | b':' | b',' | b'+' | b'@' | b'%' | b'=' | b'-'
            )
    })
}

/// `>&-` or `<&-` with no blank or operator after it.
fn closes_into_word(text: &str) -> bool {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(3)).any(|i| {
        matches!(&b[i..i + 3], b">&-" | b"<&-")
            && !matches!(
                b[i + 3],
                b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b')' | b'(' | b'<' | b'>'
            )
    })
}

/// Whether the command may give the positional parameters text of its own
/// (it defines a function or runs `set`).
fn sets_positional(text: &str) -> bool {
    text.contains("()")
        || text
            .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
            .any(|w| matches!(w, "set" | "function"))
}

/// Whether the command changes what `cd`, `~` and the known variables
/// follow: it names `HOME`, `PWD`, `TMPDIR`, `CDPATH` or `OLDPWD` other than to
/// expand them (`PWD=/`, `unset TMPDIR`, `read PWD`), or turns on `cdable_vars`.
fn changes_cd_state(text: &str) -> Option<&'static str> {
    if text.contains("cdable_vars") {
        return Some("`cdable_vars` lets `cd` follow a variable, so the folder is not known");
    }
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for name in ["HOME", "PWD", "TMPDIR", "CDPATH", "OLDPWD"] {
        let mut from = 0;
        while let Some(k) = text[from..].find(name) {
            let at = from + k;
            let end = at + name.len();
            let bounded = !text[..at].chars().next_back().is_some_and(ident)
                && !text[end..].chars().next().is_some_and(ident);
            let expanded = text[..at].ends_with('$') || text[..at].ends_with("${");
            if bounded && !expanded {
                return Some(
                    "the command changes HOME, PWD, TMPDIR, CDPATH or OLDPWD, which `cd`, `~` and paths follow",
                );
            }
            from = end;
        }
    }
    None
}

fn first_kind<'t>(node: Node<'t>) -> Option<&'static str> {
    node.child(0).map(|c| c.kind())
}

/// Assignments, words and redirections of a `command` node.
fn collect_command(node: Node<'_>, src: &str) -> Command {
    let mut c = Command::default();
    let mut cursor = node.walk();
    let kids: Vec<(Node<'_>, Option<&str>)> = node
        .children(&mut cursor)
        .enumerate()
        .map(|(i, k)| (k, node.field_name_for_child(i as u32)))
        .collect();
    for (i, &(k, field)) in kids.iter().enumerate() {
        // Anonymous nodes are words too when they stand as arguments
        // (tree-sitter reads a plain `==` or `=~` as an operator).
        if !k.is_named() && field != Some("argument") {
            continue;
        }
        if translation_mark(&kids, i) {
            continue;
        }
        match k.kind() {
            "variable_assignment" => c.assigns.push(norm_word(k, src)),
            "comment" => {}
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                if let Some(r) = redirect(k, src) {
                    c.redirs.push(r);
                }
            }
            _ => {
                let left = MAX_WORDS.saturating_sub(c.words.len());
                match words::norm_words(k, src, left) {
                    Some(ws) => c.words.extend(ws),
                    None => {
                        c.overflow = true;
                        c.words.push(norm_word(k, src));
                    }
                }
            }
        }
    }
    c
}

/// An argument that tree-sitter tokenised as a `$` holding more text than the
/// `$` itself (`-r$` before `"x"`): a word it split where bash does not.
fn split_translated_word(command: Node<'_>) -> bool {
    let mut cursor = command.walk();
    let found = command
        .children(&mut cursor)
        .any(|k| !k.is_named() && k.kind() == "$" && k.byte_range().len() > 1);
    found
}

/// The parts of one simple command.
#[derive(Default)]
struct Command {
    assigns: Vec<Word>,
    words: Vec<Word>,
    redirs: Vec<Redir>,
    /// Brace expansion made more words than [`MAX_WORDS`].
    overflow: bool,
}

/// Words of a test / declaration / arithmetic command, in order.
fn flatten_words(node: Node<'_>, src: &str, out: &mut Vec<Word>, depth: usize) {
    if depth > 64 {
        out.push(Word::raw(slice(src, node.byte_range())));
        return;
    }
    let mut cursor = node.walk();
    for c in node.children(&mut cursor) {
        match c.kind() {
            "word"
            | "string"
            | "raw_string"
            | "ansi_c_string"
            | "translated_string"
            | "concatenation"
            | "number"
            | "variable_assignment"
            | "variable_name"
            | "test_operator"
            | "regex"
            | "extglob_pattern" => out.push(norm_word(c, src)),
            k if is_dynamic_kind(k) => out.push(norm_word(c, src)),
            "comment" => {}
            _ if c.child_count() == 0 => out.push(Word::raw(slice(src, c.byte_range()))),
            _ => flatten_words(c, src, out, depth + 1),
        }
    }
}

/// A redirection node → its rendered text and the path it names.
fn redirect(node: Node<'_>, src: &str) -> Option<Redir> {
    match node.kind() {
        "file_redirect" => {
            let mut fd = String::new();
            let mut op = String::new();
            let mut target: Option<Word> = None;
            let mut cursor = node.walk();
            for (i, c) in node.children(&mut cursor).enumerate() {
                match node.field_name_for_child(i as u32) {
                    Some("descriptor") => fd = slice(src, c.byte_range()).to_string(),
                    Some("destination") => {
                        let w = norm_word(c, src);
                        target = Some(match target {
                            None => w,
                            Some(mut t) => {
                                let c = format!("{} {}", t.canon_text(), w.canon_text());
                                t.text.push(' ');
                                t.text.push_str(&w.text);
                                t.canon = c;
                                t
                            }
                        });
                    }
                    _ if !c.is_named() => op.push_str(slice(src, c.byte_range())),
                    _ => {}
                }
            }
            let target = target.unwrap_or_else(|| Word::raw(""));
            let dup = (op == ">&" || op == "<&")
                && (target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()));
            let text = if dup {
                format!("{fd}{op}{}", target.text)
            } else {
                format!("{fd}{op} {}", target.text)
            };
            let canon = if dup {
                text.clone()
            } else {
                format!("{fd}{op} {}", target.canon_text())
            };
            let write = !dup && op.contains('>');
            let dynamic = target.dynamic;
            let path = if dup || target.text.is_empty() {
                None
            } else {
                Some(target.text)
            };
            Some(Redir {
                text,
                path,
                ctrl: target.ctrl,
                canon,
                write,
                dynamic,
                feed: None,
            })
        }
        "herestring_redirect" => {
            let mut parts = Vec::new();
            let mut cparts = Vec::new();
            let mut dynamic = false;
            let mut cursor = node.walk();
            for c in node.named_children(&mut cursor) {
                let w = norm_word(c, src);
                cparts.push(w.canon_text().to_string());
                dynamic |= w.dynamic;
                parts.push(w.text);
            }
            let text = parts.join(" ");
            Some(Redir {
                text: format!("<<< {text}"),
                path: None,
                ctrl: false,
                canon: format!("<<< {}", cparts.join(" ")),
                write: false,
                dynamic: false,
                feed: Some((!dynamic).then_some(text)),
            })
        }
        "heredoc_redirect" => {
            let mut op = "<<".to_string();
            let mut delim = String::new();
            let mut quoted = false;
            let mut body = String::new();
            let mut cursor = node.walk();
            for c in node.children(&mut cursor) {
                match c.kind() {
                    "<<-" => op = "<<-".into(),
                    "heredoc_start" => {
                        let raw = slice(src, c.byte_range());
                        quoted = raw.contains(['\'', '"', '\\']);
                        delim = words::unquote_simple(raw);
                    }
                    "heredoc_body" => body = slice(src, c.byte_range()).to_string(),
                    _ => {}
                }
            }
            if op == "<<-" {
                body = body
                    .lines()
                    .map(|l| l.trim_start_matches('\t'))
                    .collect::<Vec<_>>()
                    .join("\n");
            }
            let dynamic = !quoted && body.contains(['$', '`', '\\']);
            Some(Redir {
                text: format!("{op} {delim}"),
                path: None,
                ctrl: false,
                canon: format!("{op} {delim}"),
                write: false,
                dynamic: false,
                feed: Some((!dynamic).then_some(body)),
            })
        }
        _ => None,
    }
}

/// Paths named by the arguments: non-option arguments, `--opt=VALUE` values
/// and absolute or home paths inside an argument after whitespace.
fn collect_arg_paths(words: &[Word], patterns: &[usize], out: &mut Vec<String>) {
    let mut options_done = false;
    for (k, w) in words.iter().enumerate().skip(1) {
        if patterns.contains(&k) {
            continue;
        }
        let t = w.text.as_str();
        if !options_done && t == "--" {
            options_done = true;
            continue;
        }
        if options_done || !t.starts_with('-') || t == "-" {
            if t != "-" {
                push_path_candidates(t, w, out);
            }
        } else if let Some((_, v)) = t.split_once('=') {
            push_path_candidates(v, w, out);
        } else {
            // `-o/etc/x`, `-o.git/config`, `-vo.bashrc`: a short option with its
            // path attached, after any number of flag letters. Every tail that
            // starts like a path counts.
            if !t.starts_with("--") {
                // A tail starts right after an option letter.
                let tails = t
                    .char_indices()
                    .skip(2)
                    .filter(|&(k, c)| {
                        matches!(c, '/' | '~' | '.')
                            && t[..k]
                                .chars()
                                .last()
                                .is_some_and(|p| p.is_ascii_alphanumeric())
                    })
                    .take(8);
                for (k, _) in tails {
                    let v = &t[k..];
                    if v.len() > 1 && !out.iter().any(|o| o == v) {
                        out.push(v.to_string());
                    }
                }
            }
            embedded_paths(t, out);
        }
    }
}

fn push_path_candidates(value: &str, w: &Word, out: &mut Vec<String>) {
    if value.is_empty() || is_url(value) {
        embedded_paths(value, out);
        return;
    }
    if w.brace {
        let expanded = words::brace_expand(value, 64);
        if expanded.len() > 1 {
            for e in expanded {
                if !is_url(&e) {
                    out.push(e.clone());
                }
                embedded_paths(&e, out);
            }
            return;
        }
    }
    out.push(value.to_string());
    embedded_paths(value, out);
}

/// `scheme://…` is a URL, not a path.
pub(crate) fn is_url(s: &str) -> bool {
    let Some(idx) = s.find("://") else {
        return false;
    };
    let scheme = &s[..idx];
    !scheme.is_empty()
        && scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}

/// Absolute or home paths that start inside an argument after whitespace or
/// punctuation (`sed 'w /etc/x'`, `dd of=/dev/sda`, awk's `> "/tmp/x"`).
fn embedded_paths(s: &str, out: &mut Vec<String>) {
    let bytes = s.as_bytes();
    for i in 1..bytes.len() {
        let prev = bytes[i - 1];
        if !matches!(
            prev,
            b' ' | b'\t' | b'\n' | b'>' | b'<' | b'"' | b'\'' | b'=' | b'(' | b',' | b';' | b':'
        ) {
            continue;
        }
        let c = bytes[i];
        let starts = c == b'/'
            || (c == b'~' && (i + 1 == bytes.len() || bytes[i + 1] == b'/'))
            || s[i..].starts_with("$HOME")
            || s[i..].starts_with("${HOME}");
        if !starts {
            continue;
        }
        if prev == b':' && i >= 2 && s[..i].ends_with("://") {
            continue;
        }
        let rest = &s[i..];
        let end = rest
            .find(|ch: char| {
                ch.is_whitespace()
                    || matches!(ch, '"' | '\'' | ';' | '|' | '&' | ')' | '<' | '>' | ',')
            })
            .unwrap_or(rest.len());
        let p = &rest[..end];
        // A lone `/` inside text ("a / b", "rm -rf /" in a message) is not a path.
        if (p.len() > 1 || p == "~") && !(prev == b':' && is_url(&s[..i + end])) {
            out.push(p.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_are_words_and_blanks_only() {
        for t in [
            "git status",
            "ls -la src/",
            "cargo test -p x --lib",
            "./run.sh a:b,c+d@e%f=g",
            "/usr/bin/git log",
        ] {
            assert!(plain_words(t), "{t}");
        }
        for t in [
            "git status; rm x",
            "echo $x",
            "ls *",
            "a=1 ls",
            "-x y",
            "if x",
            "time ls",
            "ls 'a'",
            "ls a\\ b",
            "ls ~",
            "ls {a,b}",
            "ls # c",
            "ls\nrm",
            "echo a>b",
            "",
            "  ",
        ] {
            assert!(!plain_words(t), "{t:?}");
        }
    }

    fn frags(src: &str) -> Parsed {
        parse_command(
            src,
            Path::new("/proj"),
            Path::new("/home/u"),
            &ShellConfig::default(),
        )
    }

    fn texts(src: &str) -> Vec<String> {
        frags(src).fragments.into_iter().map(|f| f.text).collect()
    }

    #[test]
    fn separators() {
        assert_eq!(
            texts("a && b || c; d | e & f\ng"),
            ["a", "b", "c", "d", "e", "f", "g"]
        );
        assert_eq!(texts("echo \"$(curl x)\""), ["curl x", "echo $(curl x)"]);
        assert_eq!(texts("echo 'git push'"), ["echo git push"]);
        assert_eq!(texts("r\\\nm -rf /"), ["rm -rf /"]);
        assert_eq!(texts("ls -la\n\\rm x"), ["ls -la", "rm x"]);
        assert_eq!(texts("ls \\\n\\rm"), ["ls rm"]);
        assert_eq!(
            texts("ls && ls | ls | ls\nwget y && ls"),
            ["ls", "ls", "ls", "ls", "wget y", "ls"]
        );
    }

    #[test]
    fn heredocs() {
        assert_eq!(
            texts("cat <<EOF\n$(rm x) `id`\nEOF"),
            ["rm x", "id", "cat << EOF"]
        );
        assert_eq!(texts("cat <<'EOF'\n$(rm x) `id`\nEOF"), ["cat << EOF"]);
    }

    /// The texts parsed while `f` runs (on this thread).
    fn parses_of(f: impl FnOnce()) -> usize {
        let before = parse::parse_count();
        f();
        parse::parse_count() - before
    }

    #[test]
    fn rereadings_do_not_multiply() {
        // Found by the fuzzer: brace re-readings of re-readings grew 64-fold per
        // level. The work is counted (texts parsed), not timed.
        let n = parses_of(|| {
            let p = frags("r\u{0}\u{0}\u{0}=a,b}\u{5c}\u{a}m x; \u{b}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}{\u{a}m y; {,ab}; $IFS; e; $IFS; eval \u{22}x\u{22}");
            assert!(p.opaque.is_some());
        });
        assert!(n <= 32, "{n} parses");
        let many = "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}(".repeat(20);
        let n = parses_of(|| {
            let _ = frags(&many);
        });
        assert!(n <= 8, "{n} parses");
    }

    #[test]
    fn nul_bytes() {
        let n = parses_of(|| {
            let p = frags(&format!("{}\nR{{,\0\0P\0}}}}\0{{\0,\0", "\0".repeat(200)));
            assert!(p.opaque.is_some());
        });
        assert!(n <= 8, "{n} parses");
        let p = frags("r\0m -rf x");
        assert!(p.fragments.iter().any(|f| f.text == "rm -rf x"));
        assert!(p.fragments.iter().any(|f| f.text == "r"));
    }

    #[test]
    fn scanner_crash_inputs() {
        // These crashed tree-sitter-bash's scanner (isdigit on a large code point).
        for s in [
            "{\u{E010E}",
            "{{{\u{E010E}",
            "{1..\u{42000}}",
            "{\u{10FFFF}x",
            "a.\u{E0100}",
        ] {
            let p = frags(s);
            assert!(p.opaque.is_some() || !p.fragments.is_empty());
        }
    }

    #[test]
    fn opaque() {
        assert!(frags("$CMD x").opaque.is_some());
        assert!(frags("cat${IFS}x").opaque.is_some());
        assert!(frags("eval 'rm x'").opaque.is_some());
        assert!(frags("ls\u{200b}").opaque.is_some());
        assert!(frags("ls (").opaque.is_some());
        assert!(frags("ls -la").opaque.is_none());
    }
}
