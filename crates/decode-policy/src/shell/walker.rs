//! The walk over one command's syntax tree (docs/permissions.md, "Shell
//! commands: fragments"): every simple command becomes a fragment; the
//! folder, branch, links and variables earlier commands leave are followed
//! to the later ones; substitutions, arithmetic and strings run by a shell
//! are walked too.

use std::path::{Path, PathBuf};

use tree_sitter::Node;

use super::config::ShellConfig;
use super::limits::{
    heredoc_operators, pipe_count, MAX_COMMAND_CHARS, MAX_DERIVED, MAX_DERIVED_DEPTH, MAX_HEREDOCS,
    MAX_NODE_DEPTH, MAX_PARSE_NESTING, MAX_PIPES, MAX_REINTERPRETED, MAX_REPARSE_DEPTH, MAX_WORDS,
    RESERVED,
};
use super::model::{self, Fragment, Parsed, Redir, Role};
use super::parse::{
    backtick_unescape, backtick_unescape_in, fielded_children, find_substitutions,
    parse_budget_spent, parse_source,
};
use super::syntax::{
    changes_cd_state, closes_into_word, collect_command, first_kind, flatten_words, indirect_name,
    plain_words, procsub_glued, redirects, sets_positional, split_translated_word, Command,
};
use super::words::{self, norm_word, slice, Word};
use super::{arith, second};

#[derive(Clone)]
pub(super) struct Scope {
    role: Role,
    redirs: Vec<Redir>,
}

pub(super) fn parse_command_inner(
    src: &str,
    root: &Path,
    home: &Path,
    config: &ShellConfig,
) -> Parsed {
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
        config_written: false,
        cwd_any: None,
        made: Vec::new(),
        pipe_feed: None,
        attached: None,
        typing: false,
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

pub(super) struct Walker<'h> {
    pub(super) home: &'h Path,
    pub(super) config: &'h ShellConfig,
    pub(super) out: Vec<Fragment>,
    pub(super) opaque: Option<String>,
    pub(super) strict: bool,
    pub(super) cwd: Option<PathBuf>,
    pub(super) branch: model::Branch,
    /// Links made so far (`None`: one the gate cannot place).
    pub(super) links: Option<Vec<PathBuf>>,
    /// The last branch switch: (fragment index, branch).
    pub(super) last_switch: Option<(usize, String)>,
    pub(super) depth: usize,
    pub(super) reparse_depth: usize,
    pub(super) budget: usize,
    /// What is left of [`MAX_DERIVED`].
    pub(super) work: usize,
    pub(super) derived_depth: usize,
    /// Derived commands already judged (text, role, cwd): judged once.
    pub(super) seen: std::collections::HashSet<(String, Role, Option<PathBuf>)>,
    /// What the command assigns to each variable (for arithmetic).
    pub(super) vars: arith::Vars,
    /// Variables declared with the integer attribute (`declare -i`): what
    /// is assigned to them is evaluated as arithmetic.
    pub(super) integers: std::collections::HashSet<String>,
    /// The positional parameters may hold text the gate does not know (the
    /// command defines functions or runs `set`).
    pub(super) positional_unknown: bool,
    /// `hash -p PATH NAME` (NAME runs PATH) and `alias NAME=TEXT`: the
    /// words each name stands for.
    pub(super) hashed: Vec<(String, Vec<String>)>,
    /// The command points git at another repository through the
    /// environment (`GIT_DIR`, `GIT_WORK_TREE`).
    pub(super) git_elsewhere: bool,
    /// An earlier command wrote a configuration file that defines aliases
    /// (git's, cargo's, gh's…): what a later such program runs is unknown.
    pub(super) config_written: bool,
    /// Derived commands of `find -exec` / `xargs` being judged.
    pub(super) filling: usize,
    /// `shopt -s dotglob` or `GLOBIGNORE` seen.
    pub(super) dotglob: bool,
    /// `extglob`, `nocaseglob` or `globasciiranges` seen.
    pub(super) loose_globs: bool,
    /// The command changes what `cd` follows (`HOME`, `CDPATH`, `OLDPWD`,
    /// `cdable_vars`): after any `cd` the folder is unknown.
    pub(super) cd_unsure: bool,
    /// Where the last statement leaves the shell whether or not it
    /// succeeded, when that differs from `cwd` (where it leaves it when it
    /// succeeded): `cd x` into a folder that may not exist.
    pub(super) cwd_any: Option<Option<PathBuf>>,
    /// Folders the command makes before it goes there (`mkdir -p b && cd b`).
    pub(super) made: Vec<PathBuf>,
    /// Redirections that belong to the command node with this id (the last
    /// of a list tree-sitter hung them on).
    pub(super) attached: Option<(usize, Vec<Redir>)>,
    /// Judging text typed into a pane's shell but not entered
    /// (`tmux send-keys 'TEXT'` without `Enter`): text bash cannot parse
    /// does not run, so it is not opaque.
    pub(super) typing: bool,
    /// What the previous command of a pipeline visibly writes (`echo TEXT
    /// | sh`): the next simple command's standard input.
    pub(super) pipe_feed: Option<Vec<String>>,
}

impl Walker<'_> {
    pub(super) fn set_opaque(&mut self, why: String) {
        if self.opaque.is_none() {
            self.opaque = Some(why);
        }
    }

    /// Re-readings (brace expansion, `$IFS`) are limited per command, so
    /// they cannot multiply.
    pub(super) fn take_budget(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        true
    }

    pub(super) fn too_deep(&mut self, why: &str) {
        self.strict = true;
        self.set_opaque(why.to_string());
    }

    /// A reading without the grammar, for text too long or too deeply nested
    /// to parse: every piece between separators (quotes count as separators,
    /// so strings run by a shell are pieces too), split at whitespace, is a
    /// `Checked` fragment — deny rules, ask rules and caps see it.
    pub(super) fn flat_text_scan(&mut self, src: &str) {
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
            // At most MAX_WORDS words of one piece are judged (the rules
            // match from a command's start): the work stays linear in the
            // text however few separators it holds (`case x in ` × 100,000).
            let words: Vec<Word> = piece
                .split_whitespace()
                .map(|w| Word::raw(&w.replace('\\', "")))
                .filter(|w| !w.text.is_empty() && w.text != "$")
                .skip_while(|w| RESERVED.contains(&w.text.as_str()) || w.text == "!")
                .take(MAX_WORDS)
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
    pub(super) fn take_work(&mut self, len: usize) -> bool {
        let cost = 1 + len / 32;
        if self.work < cost || self.derived_depth >= MAX_DERIVED_DEPTH {
            self.too_deep("the command nests or derives too many commands to judge");
            return false;
        }
        self.work -= cost;
        true
    }

    /// Parses a source text (the command, or a `bash -c` / `eval` string) and walks it.
    pub(super) fn source(&mut self, src: &str, role: Role) {
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
        if second::nesting(src) > MAX_PARSE_NESTING || heredoc_operators(src) > MAX_HEREDOCS {
            // Parsing it would cost more than the text is long: deny rules,
            // ask rules and caps see every simple command of a flat reading.
            self.too_deep("the command is nested too deeply to judge");
            self.flat_text_scan(src);
            return;
        }
        let Some((tree, text)) = parse_source(src) else {
            if parse_budget_spent() {
                self.too_deep("the command needs too much work to parse");
                self.flat_text_scan(src);
            } else if !self.typing {
                self.set_opaque("the command cannot be parsed".into());
            }
            return;
        };
        let root = tree.root_node();
        let broken = root.has_error();
        if broken && !self.typing {
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
        // Each name below holds `glob` or capitals: most commands hold neither.
        let glob = text.contains("glob");
        let capitals = text.bytes().any(|b| b.is_ascii_uppercase());
        self.dotglob |=
            (glob && text.contains("dotglob")) || (capitals && text.contains("GLOBIGNORE"));
        self.git_elsewhere |= capitals
            && text.contains("GIT_")
            && (text.contains("GIT_DIR")
                || text.contains("GIT_WORK_TREE")
                || text.contains("GIT_COMMON_DIR"));
        self.loose_globs |= glob && (text.contains("extglob") || text.contains("nocaseglob"));
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
    pub(super) fn second_reading(&mut self, r: second::Reading) {
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
                        piped: None,
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
    pub(super) fn reparse(&mut self, src: &str, role: Role) {
        let saved = (self.cwd.clone(), self.branch.clone());
        self.source(src, role);
        (self.cwd, self.branch) = saved;
    }

    pub(super) fn walk(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
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
                    // A body that may move the shell: see `looped`.
                    if Self::moves(slice(src, body.byte_range())) {
                        self.cwd = None;
                    }
                    let before = self.cwd.clone();
                    self.walk(body, src, scope);
                    if self.cwd != before || self.cwd_any.take().is_some() {
                        self.cwd = None;
                    }
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
                self.cwd_any = None;
                // HEAD lives in the repository, not the shell: a switch in a
                // subshell stays, but the gate cannot say whether it ran.
                if self.branch != saved.1 {
                    self.branch = model::Branch::Unknown;
                }
                self.last_switch = None;
            }
            "list" => self.list(node, src, scope),
            "pipeline" => self.pipeline(node, src, scope),
            "if_statement" | "case_statement" => self.branches(node, src, scope),
            "while_statement" | "for_statement" => self.looped(node, src, scope),
            "negated_command" => {
                let before = self.cwd.clone();
                self.children(node, src, scope);
                // `! cd x && …`: what follows runs when it failed.
                if self.cwd != before || self.cwd_any.is_some() {
                    self.cwd = None;
                    self.cwd_any = None;
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
                if text.len() > 2 {
                    for body in arith::nested_arith(&text[2..]) {
                        self.arith(body, scope.role, 0);
                    }
                }
                if let Some(target) = indirect_name(text) {
                    self.indirect(target, scope.role);
                }
            }
            "function_definition" => self.function_definition(node, src, scope),
            "heredoc_redirect" => self.heredoc(node, src, scope),
            "comment" | "heredoc_start" | "heredoc_end" => {}
            _ => self.children(node, src, scope),
        }
        self.depth -= 1;
    }

    /// `f() BODY [REDIRECTS]`: the body is judged where it stands (the
    /// function may run anywhere later), with the definition's redirects.
    fn function_definition(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let saved = (self.cwd.clone(), self.branch.clone());
        // `f() { …; } > FILE`: bash opens FILE each time the function
        // runs. Where and whether it runs is not followed: the
        // redirect is a write of this command (fail closed), and it
        // applies to every command of the body.
        let mut inner = scope.clone();
        let mut redirs = Vec::new();
        for (child, field) in fielded_children(node) {
            if field == Some("redirect") {
                redirs.extend(redirects(child, src));
                self.walk(child, src, scope);
            }
        }
        if !redirs.is_empty() {
            inner.redirs.extend(redirs);
            self.emit(Vec::new(), Vec::new(), inner.redirs.clone(), scope.role);
        }
        if let Some(body) = node.child_by_field_name("body") {
            self.walk(body, src, &inner);
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

    /// The statements of a program, group or body, in order: one run in the
    /// background (`cd x &`) runs in a subshell of its own, and after each
    /// the shell is wherever it may be whether or not it succeeded.
    pub(super) fn children(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for (k, child) in kids.iter().enumerate() {
            let background = kids.get(k + 1).is_some_and(|n| n.kind() == "&");
            if background {
                let saved = self.cwd.clone();
                self.walk(*child, src, scope);
                self.cwd = saved;
                self.cwd_any = None;
                continue;
            }
            self.walk(*child, src, scope);
            if let Some(any) = self.cwd_any.take() {
                self.cwd = any;
            }
        }
    }

    /// Beyond the depth limit: every simple command below `node`, found
    /// without recursion, judged as `Checked` fragments so deny still sees them.
    pub(super) fn flat_scan(&mut self, node: Node<'_>, src: &str) {
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

    pub(super) fn redirected(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let mut redirs = Vec::new();
        let kids = fielded_children(node);
        let mut body = None;
        for (child, field) in &kids {
            if *field == Some("body") {
                body = Some(*child);
                continue;
            }
            redirs.extend(redirects(*child, src));
            self.walk(*child, src, scope);
        }
        match body {
            Some(b) if b.kind() == "command" => self.command(b, src, scope, &redirs),
            Some(b)
                if matches!(b.kind(), "list" | "pipeline") && rightmost(b).kind() == "command" =>
            {
                // tree-sitter hangs `a && b > r` (and `a | b > r`) on the
                // whole list: bash gives the redirection to `b` alone.
                self.attached = Some((rightmost(b).id(), redirs));
                self.walk(b, src, scope);
                self.attached = None;
            }
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

    pub(super) fn heredoc(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
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
    pub(super) fn heredoc_backticks(&mut self, body: Node<'_>, src: &str, scope: &Scope) {
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

    pub(super) fn assignments(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
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

    pub(super) fn walk_assignment_value(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
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
    pub(super) fn arith(&mut self, text: &str, role: Role, depth: usize) {
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
    pub(super) fn indirect(&mut self, name: &str, role: Role) {
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
    pub(super) fn arith_names(&mut self, text: &str, depth: usize) {
        for name in arith::scan(text).names {
            self.arith_name(&name, Role::Checked, depth);
        }
    }

    pub(super) fn arith_name(&mut self, name: &str, role: Role, depth: usize) {
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
    pub(super) fn generic(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
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

    pub(super) fn command(&mut self, node: Node<'_>, src: &str, scope: &Scope, extra: &[Redir]) {
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
                if !rest.trim().is_empty() && self.take_work(rest.len()) {
                    self.derived_depth += 1;
                    self.reparse(rest, Role::Checked);
                    self.derived_depth -= 1;
                }
            }
        }
        let mut all = scope.redirs.clone();
        all.extend(extra.iter().cloned());
        if self
            .attached
            .as_ref()
            .is_some_and(|(id, _)| *id == node.id())
        {
            all.extend(self.attached.take().map(|(_, r)| r).unwrap_or_default());
        }
        all.append(&mut redirs);
        self.emit(assigns, words, all, scope.role);
    }
}

/// The last statement of a list or pipeline (where bash attaches a
/// redirection tree-sitter hangs on the whole).
fn rightmost(node: Node<'_>) -> Node<'_> {
    let mut n = node;
    while matches!(n.kind(), "list" | "pipeline") {
        let count = n.named_child_count();
        match (0..count)
            .rev()
            .filter_map(|k| n.named_child(k))
            .find(|c| c.kind() != "comment")
        {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}
