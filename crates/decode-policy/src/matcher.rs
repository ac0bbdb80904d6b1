//! Rules compiled once into glob sets indexed by list and tool, so a call is
//! one `is_match` per list and form, never a loop over every rule.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use globset::{GlobSet, GlobSetBuilder};

use crate::rules::{
    bash_globs, build_glob, domain_pattern, has_glob_meta, host_pattern, unescape_glob, Rule,
    RuleList,
};
use crate::tool::Tool;

/// Where a rule came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    Project,
    Agent(String),
    /// The settings of a folder around the project (its root).
    Enclosing(std::path::PathBuf),
    /// The file of a settings level other than the project's (managed, user,
    /// local).
    Level(crate::input::Level, std::path::PathBuf),
}

impl Source {
    pub(crate) fn describe(&self) -> String {
        let mut s = String::new();
        self.describe_into(&mut s);
        s
    }

    /// [`Source::describe`], written at the end of `s`.
    fn describe_into(&self, s: &mut String) {
        use std::fmt::Write;
        // Writing to a String cannot fail.
        match self {
            Source::Project => s.push_str(".decode/settings.json (project)"),
            Source::Agent(name) => {
                s.push_str("agent ");
                s.push_str(name);
            }
            Source::Enclosing(root) => {
                let _ = write!(s, "{}/.decode/settings.json", root.display());
            }
            Source::Level(level, file) => {
                let _ = write!(s, "{} ({level})", file.display());
            }
        }
    }
}

/// A compiled rule as reasons name it.
#[derive(Debug, Clone)]
pub(crate) struct RuleRef {
    pub text: String,
    pub source: Source,
}

impl RuleRef {
    /// `TEXT from SOURCE`, written in one go.
    pub(crate) fn describe(&self) -> String {
        let mut s = String::with_capacity(self.text.len() + 48);
        s.push_str(&self.text);
        s.push_str(" from ");
        self.source.describe_into(&mut s);
        s
    }
}

/// A glob set with, for each glob, the rule it stands for.
#[derive(Debug, Default)]
struct Set {
    builder: Option<GlobSetBuilder>,
    set: Option<GlobSet>,
    map: Vec<usize>,
}

impl Set {
    fn add(&mut self, glob: globset::Glob, rule: usize) {
        self.builder
            .get_or_insert_with(GlobSetBuilder::new)
            .add(glob);
        self.map.push(rule);
    }

    fn finish(&mut self) {
        if let Some(b) = self.builder.take() {
            match b.build() {
                Ok(s) => self.set = Some(s),
                Err(e) => {
                    tracing::error!("cannot compile rule set: {e}");
                    self.map.clear();
                }
            }
        }
    }

    /// The earliest rule matching `s`.
    fn first(&self, s: &str) -> Option<usize> {
        let set = self.set.as_ref()?;
        // One candidate for both: made once (its parts are found each time).
        let candidate = globset::Candidate::new(s);
        if !set.is_match_candidate(&candidate) {
            return None;
        }
        set.matches_candidate(&candidate)
            .into_iter()
            .map(|i| self.map[i])
            .min()
    }
}

/// The rules of one list for one tool.
#[derive(Debug, Default)]
struct ToolRules {
    bare: Option<usize>,
    /// bash patterns, URL patterns, todo patterns.
    text: Set,
    /// Relative path patterns (against the project-relative path).
    rel: Set,
    /// Absolute and home path patterns (against the absolute path).
    abs: Set,
    /// web_fetch `domain:` patterns (against the lowercased host).
    domain: Set,
    /// bash patterns without wildcards, unescaped (they lift the path scope).
    literal: HashSet<String>,
    /// bash patterns as globs, for fragments with words only known when the
    /// command runs (matched by intersection: could some value match?).
    globs: Vec<(crate::globx::Compiled, usize)>,
    /// Path patterns as globs (`true`: absolute), for "could some path under
    /// this folder match?" (another agent's search, whose results Decode cannot
    /// filter).
    path_globs: Vec<PathGlob>,
}

/// A path pattern as a glob, for "could some path under this folder match?".
#[derive(Debug)]
struct PathGlob {
    glob: crate::globx::Compiled,
    /// The rule's index.
    rule: usize,
    /// An absolute pattern (else relative to the project root).
    absolute: bool,
    /// Its literal leading folders (those before the first component with a
    /// wildcard), as written; `None` when it starts with a wildcard.
    folder: Option<PathBuf>,
}

/// The paths under a folder that a glob relative to it matches, as globs of the
/// folder's absolute form and of its project-relative one (`.` for the root),
/// compiled once for every list a search is judged against.
pub(crate) struct Under {
    abs: crate::globx::Compiled,
    rel: Option<crate::globx::Compiled>,
}

impl Under {
    /// Under the folder `p`, what `tail` matches (`*`: anything).
    pub(crate) fn new(p: &PathForms<'_>, tail: &str) -> Under {
        let tail = tail.trim_start_matches("./");
        let tail = if tail.is_empty() { "*" } else { tail };
        let under = |folder: &str| crate::globx::Compiled::under(folder, tail);
        Under {
            abs: under(p.abs),
            rel: p.rel.map(|r| {
                if r == "." || r.is_empty() {
                    crate::globx::Compiled::new(tail)
                } else {
                    under(r)
                }
            }),
        }
    }
}

impl PathGlob {
    fn new(raw: &str, rule: usize, absolute: bool) -> PathGlob {
        let literal: Vec<&str> = raw
            .split('/')
            .filter(|c| !c.is_empty())
            .take_while(|part| !part.contains(['*', '?', '[', ']', '{', '}', '\\']))
            .collect();
        let folder = (!literal.is_empty()).then(|| {
            let mut f = PathBuf::from(if absolute { "/" } else { "" });
            f.extend(literal);
            f
        });
        PathGlob {
            glob: crate::globx::Compiled::new(raw),
            rule,
            absolute,
            folder,
        }
    }
}

/// The host rules of one list (docs/network.md): `net(…)` rules and the
/// `domain:` rules of `web_fetch`, which count for `net` too.
#[derive(Debug, Default)]
struct HostRules {
    /// A bare `net` rule (every host).
    bare: Option<usize>,
    /// Host globs (against the lowercased host or address).
    set: Set,
    /// Host patterns without wildcards, unescaped: they name a host exactly.
    literal: HashMap<String, usize>,
    /// Whether some host pattern could match an address as written
    /// (`203.0.113.7`, `10.*`, `fd00::1`): then the addresses a name resolves to
    /// can meet this list.
    may_name_an_address: bool,
}

/// Whether a host glob could match an address as hosts write them (IPv4 dotted
/// decimal, IPv6 in hex with colons): every character it requires is a hex digit,
/// `.` or `:`. A class or an alternation is taken to match one (fail closed).
fn may_match_an_address(pattern: &str) -> bool {
    if pattern.contains(['[', '{']) {
        return true;
    }
    pattern
        .chars()
        .filter(|c| !matches!(c, '*' | '?' | '\\'))
        .all(|c| c.is_ascii_hexdigit() || c == '.' || c == ':')
}

/// One list (allow, ask or deny) for every tool.
#[derive(Debug, Default)]
pub(crate) struct ListIndex {
    tools: Vec<ToolRules>,
    /// MCP rules, in order: the tools they name and the glob over the JSON
    /// arguments (`None`: every call). Few, and only MCP calls scan them.
    mcp: Vec<McpRule>,
    hosts: HostRules,
}

#[derive(Debug)]
struct McpRule {
    names: crate::mcp::McpPattern,
    args: Option<globset::GlobMatcher>,
    rule: usize,
}

/// All three lists, plus `caps.external`.
#[derive(Debug)]
pub(crate) struct RuleIndex {
    pub refs: Vec<RuleRef>,
    allow: ListIndex,
    ask: ListIndex,
    deny: ListIndex,
    external: Set,
    external_globs: Vec<(crate::globx::Compiled, usize)>,
    /// The project root relative path patterns stand in: a deny or ask
    /// rule whose literal folder leads through a link there also matches
    /// the folder's real name.
    pub links_root: Option<PathBuf>,
}

/// Where a path-rule match stands.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PathMatch {
    pub rule: usize,
}

/// The strings a file path is matched as.
pub(crate) struct PathForms<'a> {
    /// Absolute path.
    pub abs: &'a str,
    /// Project-relative path, when inside the project.
    pub rel: Option<&'a str>,
}

impl RuleIndex {
    pub(crate) fn new() -> RuleIndex {
        let mk = || ListIndex {
            tools: (0..Tool::SLOTS).map(|_| ToolRules::default()).collect(),
            mcp: Vec::new(),
            hosts: HostRules::default(),
        };
        RuleIndex {
            refs: Vec::new(),
            allow: mk(),
            ask: mk(),
            deny: mk(),
            external: Set::default(),
            external_globs: Vec::new(),
            links_root: None,
        }
    }

    fn list_mut(&mut self, list: RuleList) -> &mut ListIndex {
        match list {
            RuleList::Allow => &mut self.allow,
            RuleList::Ask => &mut self.ask,
            RuleList::Deny => &mut self.deny,
        }
    }

    fn list(&self, list: RuleList) -> &ListIndex {
        match list {
            RuleList::Allow => &self.allow,
            RuleList::Ask => &self.ask,
            RuleList::Deny => &self.deny,
        }
    }

    /// Adds a rule naming MCP tools: the names and a glob over the JSON arguments.
    fn add_mcp(
        &mut self,
        list: RuleList,
        rule: &Rule,
        names: &crate::mcp::McpPattern,
        source: Source,
    ) -> Result<(), String> {
        let idx = self.refs.len();
        let args = match &rule.pattern {
            Some(p) => Some(
                build_glob(p, false)
                    .map_err(|e| e.to_string())?
                    .compile_matcher(),
            ),
            None => None,
        };
        self.refs.push(RuleRef {
            text: rule.to_string(),
            source,
        });
        self.list_mut(list).mcp.push(McpRule {
            names: names.clone(),
            args,
            rule: idx,
        });
        Ok(())
    }

    /// Adds a parsed rule. `homes` are the spellings of the home folder
    /// (as given and canonical) used to anchor `~/…` patterns; `anchors`, when
    /// not empty, are the spellings of the folder whose relative path patterns
    /// this rule's are (a folder around the project): they then match the
    /// absolute path under it instead of the project-relative one.
    pub(crate) fn add(
        &mut self,
        list: RuleList,
        rule: &Rule,
        source: Source,
        homes: &[&Path],
        anchors: &[&Path],
    ) -> Result<(), String> {
        let idx = self.refs.len();
        if let Some(names) = &rule.mcp {
            return self.add_mcp(list, rule, names, source);
        }
        let mut staged: Vec<(Slot, globset::Glob)> = Vec::new();
        let mut path_raw: Vec<(String, bool)> = Vec::new();
        let mut literal: Option<String> = None;
        let mut raw: Vec<String> = Vec::new();
        // The host glob this rule adds to the host rules (`net`, `web_fetch(domain:…)`).
        let mut host: Option<String> = None;
        if let Some(p) = &rule.pattern {
            match rule.tool {
                Tool::Net => {
                    let h = host_pattern(p);
                    build_glob(&h, true).map_err(|e| e.to_string())?;
                    host = Some(h);
                }
                Tool::Bash => {
                    for g in bash_globs(p) {
                        let glob = build_glob(&g, false).map_err(|e| e.to_string())?;
                        staged.push((Slot::Text, glob));
                        raw.push(g);
                    }
                    if !has_glob_meta(p) {
                        literal = Some(unescape_glob(p));
                    }
                }
                Tool::WebFetch => match domain_pattern(p) {
                    Some(d) => {
                        let glob = build_glob(&d, true).map_err(|e| e.to_string())?;
                        let h = host_pattern(p);
                        // The host rules hold the same glob for the same rule: a
                        // host is matched there once. Only a glob that differs
                        // (`domain:[…]`) is kept apart.
                        if d != h {
                            staged.push((Slot::Domain, glob));
                        }
                        host = Some(h);
                    }
                    None => {
                        let url = crate::urls::normal_url_pattern(p);
                        let glob = build_glob(&url, false).map_err(|e| e.to_string())?;
                        staged.push((Slot::Text, glob));
                    }
                },
                Tool::Read | Tool::Glob | Tool::Grep | Tool::Write | Tool::Edit => {
                    self.path_patterns(p, homes, anchors, &mut staged, &mut path_raw)?;
                }
                _ => {
                    let glob = build_glob(p, false).map_err(|e| e.to_string())?;
                    staged.push((Slot::Text, glob));
                }
            }
        }
        if list != RuleList::Allow {
            for (pat, abs) in self.linked_variants(&path_raw) {
                let glob = build_glob(&pat, false).map_err(|e| e.to_string())?;
                staged.push((if abs { Slot::Abs } else { Slot::Rel }, glob));
                path_raw.push((pat, abs));
            }
        }
        self.refs.push(RuleRef {
            text: rule.to_string(),
            source,
        });
        let l = self.list_mut(list);
        if rule.tool == Tool::Net && rule.pattern.is_none() {
            l.hosts.bare.get_or_insert(idx);
        }
        if let Some(h) = host {
            let glob = build_glob(&h, true).map_err(|e| e.to_string())?;
            l.hosts.set.add(glob, idx);
            l.hosts.may_name_an_address |= may_match_an_address(&h);
            if !has_glob_meta(&h) {
                l.hosts.literal.entry(unescape_glob(&h)).or_insert(idx);
            }
        }
        for &t in rule.tool.covered_by_rule() {
            let tr = &mut l.tools[t.index()];
            if rule.pattern.is_none() {
                tr.bare.get_or_insert(idx);
                continue;
            }
            for (slot, glob) in &staged {
                let set = match slot {
                    Slot::Text => &mut tr.text,
                    Slot::Rel => &mut tr.rel,
                    Slot::Abs => &mut tr.abs,
                    Slot::Domain => &mut tr.domain,
                };
                set.add(glob.clone(), idx);
            }
            if let Some(lit) = &literal {
                tr.literal.insert(lit.clone());
            }
            if t == Tool::Bash {
                tr.globs
                    .extend(raw.iter().map(|g| (crate::globx::Compiled::new(g), idx)));
            }
            tr.path_globs
                .extend(path_raw.iter().map(|(g, abs)| PathGlob::new(g, idx, *abs)));
        }
        Ok(())
    }

    /// The globs a path rule's pattern `p` stands for: folded, `~` and
    /// `$HOME` expanded for each home, placed under each anchor folder.
    fn path_patterns(
        &self,
        p: &str,
        homes: &[&Path],
        anchors: &[&Path],
        staged: &mut Vec<(Slot, globset::Glob)>,
        path_raw: &mut Vec<(String, bool)>,
    ) -> Result<(), String> {
        let mut folded = fold_path_pattern(p)?;
        if folded == ".." || folded.starts_with("../") {
            // Above the folder it stands in: placed from there.
            let base = anchors.first().copied().or(self.links_root.as_deref());
            let Some(base) = base else {
                return Err(format!("`{p}` reaches above the project"));
            };
            folded = fold_path_pattern(&format!("{}/{folded}", escape_path(base)))?;
        }
        // `secrets/`: the folder and everything beneath it, as `.gitignore`
        // reads it (a path never ends in `/`, so it would match nothing).
        if let Some(dir) = folded.strip_suffix('/').filter(|d| !d.is_empty()) {
            let dir = dir.to_string();
            self.path_patterns(&dir, homes, anchors, staged, path_raw)?;
            return self.path_patterns(&format!("{dir}/**"), homes, anchors, staged, path_raw);
        }
        let p = folded.as_str();
        let home_rest = if p == "~" {
            Some("")
        } else {
            p.strip_prefix("~/")
                .or_else(|| p.strip_prefix("$HOME/"))
                .or_else(|| p.strip_prefix("${HOME}/"))
        };
        if let Some(rest) = home_rest {
            for h in homes {
                let base = escape_path(h);
                let pat = if rest.is_empty() {
                    base
                } else {
                    format!("{}/{}", base.trim_end_matches('/'), rest)
                };
                let glob = build_glob(&pat, false).map_err(|e| e.to_string())?;
                staged.push((Slot::Abs, glob));
                path_raw.push((pat, true));
            }
        } else if p.starts_with('/') {
            let pat = match p.strip_prefix('/') {
                Some(rest) if rest.starts_with('/') => rest,
                _ => p,
            };
            let glob = build_glob(pat, false).map_err(|e| e.to_string())?;
            staged.push((Slot::Abs, glob));
            path_raw.push((pat.to_string(), true));
        } else if anchors.is_empty() {
            let pat = p.strip_prefix("./").unwrap_or(p);
            let glob = build_glob(pat, false).map_err(|e| e.to_string())?;
            staged.push((Slot::Rel, glob));
            path_raw.push((pat.to_string(), false));
        } else {
            let rest = p.strip_prefix("./").unwrap_or(p);
            for a in anchors {
                let base = escape_path(a);
                let pat = format!("{}/{}", base.trim_end_matches('/'), rest);
                let glob = build_glob(&pat, false).map_err(|e| e.to_string())?;
                staged.push((Slot::Abs, glob));
                path_raw.push((pat, true));
            }
        }
        Ok(())
    }

    /// Adds a `caps.external` pattern.
    pub(crate) fn add_external(&mut self, pattern: &str, source: Source) -> Result<(), String> {
        let idx = self.refs.len();
        let mut globs = Vec::new();
        for g in bash_globs(pattern) {
            globs.push(build_glob(&g, false).map_err(|e| e.to_string())?);
            self.external_globs
                .push((crate::globx::Compiled::new(&g), idx));
        }
        self.refs.push(RuleRef {
            text: pattern.to_string(),
            source,
        });
        for g in globs {
            self.external.add(g, idx);
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self) {
        for l in [&mut self.allow, &mut self.ask, &mut self.deny] {
            for t in &mut l.tools {
                t.text.finish();
                t.rel.finish();
                t.abs.finish();
                t.domain.finish();
            }
            l.hosts.set.finish();
        }
        self.external.finish();
    }

    pub(crate) fn has_path_rules(&self, list: RuleList, tool: Tool) -> bool {
        let t = &self.list(list).tools[tool.index()];
        t.bare.is_some() || t.rel.set.is_some() || t.abs.set.is_some()
    }

    pub(crate) fn has_text_rules(&self, list: RuleList, tool: Tool) -> bool {
        let t = &self.list(list).tools[tool.index()];
        t.bare.is_some() || t.text.set.is_some()
    }

    /// The first rule of a list covering a call of the MCP tool `name` with these
    /// (canonical JSON) arguments, and whether any covering rule of the list names
    /// the tool's server without a wildcard (that rule, then, is returned).
    pub(crate) fn match_mcp(
        &self,
        list: RuleList,
        name: &crate::mcp::McpName,
        args: &str,
    ) -> Option<(usize, bool)> {
        let mut covering =
            self.list(list).mcp.iter().filter(|r| {
                r.names.matches(name) && r.args.as_ref().is_none_or(|g| g.is_match(args))
            });
        let first = covering.next()?;
        if first.names.names_server_of(name) {
            return Some((first.rule, true));
        }
        match covering.find(|r| r.names.names_server_of(name)) {
            Some(r) => Some((r.rule, true)),
            None => Some((first.rule, false)),
        }
    }

    /// A text subject (bash form, URL, todo) against a list.
    pub(crate) fn match_text(&self, list: RuleList, tool: Tool, s: &str) -> Option<usize> {
        let t = &self.list(list).tools[tool.index()];
        t.bare.or_else(|| t.text.first(s))
    }

    /// The first of several forms that a list matches.
    pub(crate) fn match_forms<'a, I>(&self, list: RuleList, tool: Tool, forms: I) -> Option<usize>
    where
        I: IntoIterator<Item = &'a String>,
    {
        let t = &self.list(list).tools[tool.index()];
        if let Some(b) = t.bare {
            return Some(b);
        }
        t.text.set.as_ref()?;
        forms.into_iter().find_map(|f| t.text.first(f))
    }

    /// The first rule of a list that could match some value of a fragment
    /// whose words are only known when it runs (`patterns`: the fragment's
    /// words with every dynamic part as `*`).
    pub(crate) fn match_dynamic(
        &self,
        list: RuleList,
        tool: Tool,
        patterns: &[String],
    ) -> Option<usize> {
        let t = &self.list(list).tools[tool.index()];
        if let Some(b) = t.bare {
            return Some(b);
        }
        let patterns: Vec<crate::globx::Compiled> = patterns
            .iter()
            .map(|p| crate::globx::Compiled::new(p))
            .collect();
        t.globs
            .iter()
            .filter(|(g, _)| patterns.iter().any(|p| g.intersects(p)))
            .map(|&(_, i)| i)
            .min()
    }

    /// A `caps.external` pattern that could match some value of a fragment
    /// whose words are only known when it runs.
    pub(crate) fn match_external_dynamic(&self, patterns: &[String]) -> Option<usize> {
        if self.external_globs.is_empty() {
            return None;
        }
        let patterns: Vec<crate::globx::Compiled> = patterns
            .iter()
            .map(|p| crate::globx::Compiled::new(p))
            .collect();
        self.external_globs
            .iter()
            .find(|(g, _)| patterns.iter().any(|p| g.intersects(p)))
            .map(|&(_, i)| i)
    }

    /// A bash fragment form equals a literal allow rule.
    pub(crate) fn literal_allow<'a, I>(&self, forms: I) -> bool
    where
        I: IntoIterator<Item = &'a String>,
    {
        let t = &self.allow.tools[Tool::Bash.index()];
        if t.literal.is_empty() {
            return false;
        }
        forms.into_iter().any(|f| t.literal.contains(f.as_str()))
    }

    /// A host (a name or an address, lowercased) against a list's host rules
    /// (`net(…)` and `web_fetch(domain:…)`); a bare `net` rule only when `bare`.
    pub(crate) fn match_host(&self, list: RuleList, host: &str, bare: bool) -> Option<usize> {
        let h = &self.list(list).hosts;
        if bare {
            if let Some(b) = h.bare {
                return Some(b);
            }
        }
        h.set.first(host)
    }

    /// Whether a host rule of `list` could match an address (a bare `net` rule
    /// matches every host by name already).
    pub(crate) fn host_rules_may_name_an_address(&self, list: RuleList) -> bool {
        self.list(list).hosts.may_name_an_address
    }

    /// A host rule of `list` that names `host` exactly (no wildcard).
    pub(crate) fn literal_host(&self, list: RuleList, host: &str) -> Option<usize> {
        self.list(list).hosts.literal.get(host).copied()
    }

    /// A URL's host against a list: the `domain:` rules of `web_fetch` and the
    /// `net` rules (one host set holds both), the first rule that matches.
    pub(crate) fn match_url_host(&self, list: RuleList, host: &str) -> Option<usize> {
        let t = &self.list(list).tools[Tool::WebFetch.index()];
        match (t.domain.first(host), self.match_host(list, host, false)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A URL against a list: other patterns on the URL, and `by_host`, what
    /// [`RuleIndex::match_url_host`] says of its host (the same for every
    /// spelling of one URL, so matched once).
    pub(crate) fn match_url(
        &self,
        list: RuleList,
        url: &str,
        by_host: Option<usize>,
    ) -> Option<usize> {
        let t = &self.list(list).tools[Tool::WebFetch.index()];
        if let Some(b) = t.bare {
            return Some(b);
        }
        let by_url = t.text.first(url);
        match (by_host, by_url) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A path against a list.
    pub(crate) fn match_path(
        &self,
        list: RuleList,
        tool: Tool,
        p: &PathForms<'_>,
    ) -> Option<PathMatch> {
        let t = &self.list(list).tools[tool.index()];
        if let Some(b) = t.bare {
            return Some(PathMatch { rule: b });
        }
        let abs = t.abs.first(p.abs).map(|rule| PathMatch { rule });
        let rel = p
            .rel
            .and_then(|r| t.rel.first(r))
            .map(|rule| PathMatch { rule });
        match (abs, rel) {
            (Some(a), Some(r)) => Some(if a.rule <= r.rule { a } else { r }),
            (a, r) => a.or(r),
        }
    }

    /// The first rule of a list that could match some path in `area` (a folder
    /// and a glob under it, [`Under::new`]). `may_exist(key, folder, absolute)`
    /// tells whether the literal folder of a rule's glob exists now (`key` is the
    /// same for the same glob): a rule whose literal folder is not there matches
    /// nothing yet.
    pub(crate) fn match_under(
        &self,
        list: RuleList,
        tool: Tool,
        area: &Under,
        may_exist: &dyn Fn(usize, &Path, bool) -> bool,
    ) -> Option<usize> {
        let t = &self.list(list).tools[tool.index()];
        if let Some(b) = t.bare {
            return Some(b);
        }
        t.path_globs
            .iter()
            .filter(|g| {
                let meets = if g.absolute {
                    g.glob.intersects(&area.abs)
                } else {
                    area.rel.as_ref().is_some_and(|r| g.glob.intersects(r))
                };
                // The glob's address in the index names it while the index lives.
                meets
                    && g.folder.as_deref().is_none_or(|folder| {
                        may_exist(std::ptr::from_ref(g) as usize, folder, g.absolute)
                    })
            })
            // The globs stand in the order their rules were added (indices
            // grow): the first that meets is the rule of the lowest index.
            .map(|g| g.rule)
            .next()
    }
    /// An anchored allow rule names this path (lifts the path scope).
    pub(crate) fn anchored_allow(&self, tool: Tool, abs: &str) -> Option<usize> {
        self.allow.tools[tool.index()].abs.first(abs)
    }

    /// A `caps.external` pattern matching one of the forms.
    pub(crate) fn match_external<'a, I>(&self, forms: I) -> Option<usize>
    where
        I: IntoIterator<Item = &'a String>,
    {
        self.external.set.as_ref()?;
        forms.into_iter().find_map(|f| self.external.first(f))
    }
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Text,
    Rel,
    Abs,
    Domain,
}

/// A path used as a glob prefix: metacharacters escaped.
impl RuleIndex {
    /// For path patterns whose literal folder leads through a link: the
    /// same pattern under the folder's real name (absolute, or relative
    /// when it stays in the project).
    fn linked_variants(&self, pats: &[(String, bool)]) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for (pat, abs) in pats {
            let comps: Vec<&str> = pat.split('/').collect();
            let lit = comps
                .iter()
                .position(|c| crate::rules::has_glob_meta(c))
                .unwrap_or(comps.len());
            // The folder part: the last component may be the file itself.
            let folder_end = lit.min(comps.len().saturating_sub(1));
            if folder_end == 0 || (*abs && folder_end == 1) {
                continue;
            }
            let folder = crate::rules::unescape_glob(&comps[..folder_end].join("/"));
            let given = if *abs {
                PathBuf::from(&folder)
            } else {
                match &self.links_root {
                    Some(r) => r.join(&folder),
                    None => continue,
                }
            };
            let real = crate::paths::resolve(&given);
            if real == given {
                continue;
            }
            let rest = comps[folder_end..].join("/");
            let inside = self
                .links_root
                .as_deref()
                .filter(|_| !*abs)
                .and_then(|r| crate::paths::strip_within(&real, r));
            let (base, is_abs) = match inside {
                Some(rel) if !rel.as_os_str().is_empty() => (escape_path(rel), false),
                _ => (escape_path(&real), true),
            };
            let variant = format!("{}/{rest}", base.trim_end_matches('/'));
            if !out.iter().any(|(v, _)| *v == variant) && variant != *pat {
                out.push((variant, is_abs));
            }
        }
        out
    }
}

/// A path pattern with its spelling folded the way paths are before they
/// are matched: repeated slashes and `.` components dropped, `NAME/..`
/// folded; a relative pattern's leading `..` kept (the caller places it).
/// A `..` after a wildcard, or above `~`, is an error: the rule could match
/// nothing.
pub(crate) fn fold_path_pattern(p: &str) -> Result<String, String> {
    let (lead, body) = match p.strip_prefix('/') {
        Some(rest) => ("/", rest),
        None => ("", p),
    };
    let trailing = body.ends_with('/') && body.len() > 1;
    let mut out: Vec<&str> = Vec::new();
    for c in body.split('/') {
        match c {
            "" | "." => {}
            ".." => match out.last() {
                Some(last) if crate::rules::has_glob_meta(last) => {
                    return Err(format!(
                        "`..` after the wildcard `{last}` in `{p}` cannot be placed; write the path without it"
                    ));
                }
                Some(&"..") => out.push(".."),
                Some(last) if *last == "~" || last.starts_with('$') => {
                    return Err(format!(
                        "`..` above the home folder in `{p}`; write the absolute path"
                    ));
                }
                Some(_) => {
                    out.pop();
                }
                None if lead == "/" => {}
                None => out.push(".."),
            },
            c => out.push(c),
        }
    }
    let mut folded = format!("{lead}{}", out.join("/"));
    if trailing && !folded.ends_with('/') {
        folded.push('/');
    }
    if folded.is_empty() {
        folded.push('.');
    }
    Ok(folded)
}

fn escape_path(p: &Path) -> String {
    crate::rules::escape_glob(&p.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::{fold_path_pattern, may_match_an_address};

    #[test]
    fn path_patterns_are_folded_like_paths() {
        for (p, want) in [
            ("x/../b/**", "b/**"),
            ("c//**", "c/**"),
            ("./d/./k", "d/k"),
            ("/etc//x/../hosts", "/etc/hosts"),
            ("//etc/hosts", "/etc/hosts"),
            ("/..", "/"),
            ("secrets/", "secrets/"),
            ("g/h/**/", "g/h/**/"),
            ("../sib/**", "../sib/**"),
            ("a/../../b", "../b"),
            (".", "."),
            ("~/.ssh//id_*", "~/.ssh/id_*"),
            ("**/.env", "**/.env"),
        ] {
            assert_eq!(fold_path_pattern(p).as_deref(), Ok(want), "{p}");
        }
        for p in ["src/**/../k", "*/../x", "~/../etc", "$HOME/../x"] {
            assert!(fold_path_pattern(p).is_err(), "{p}");
        }
    }

    #[test]
    fn host_patterns_that_could_match_an_address() {
        for p in [
            "203.0.113.7",
            "10.*",
            "*",
            "fd00:ec2::254",
            "*.*.*.1",
            "cafe.de",
            "[a-z]*.example",
            "{a,b}.example",
        ] {
            assert!(may_match_an_address(p), "{p}");
        }
        for p in [
            "denied.example",
            "*.loop.test",
            "localhost",
            "*.io",
            "x?.org",
        ] {
            assert!(!may_match_an_address(p), "{p}");
        }
    }
}
