//! Rule syntax (docs/permissions.md, "Rules"): `Tool` or `Tool(pattern)`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::mcp::{is_mcp_name, McpPattern};
use crate::tool::Tool;

/// Raw rule texts of one source, as found in settings or agent frontmatter.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RuleLists {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
}

impl RuleLists {
    /// True when no list holds a rule.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }
}

/// Which of the three lists a rule sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleList {
    Allow,
    Ask,
    Deny,
}

impl RuleList {
    /// The three lists, in the order a settings file writes them.
    pub const ALL: [RuleList; 3] = [RuleList::Allow, RuleList::Ask, RuleList::Deny];

    /// The name it is serialised under.
    pub fn name(self) -> &'static str {
        crate::trace::serde_name(&self)
    }
}

/// Why a rule text does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("empty rule")]
    Empty,
    #[error("rule `{rule}`: unknown tool `{tool}` (expected one of: read, glob, grep, web_fetch, todo_write, write, edit, bash, ask_user, enter_plan_mode, exit_plan_mode, sleep, net, or Claude Code's Read, Write, Edit, Glob, Grep, Bash, WebFetch, TodoWrite, or an MCP tool: mcp__SERVER__TOOL, mcp__SERVER__*, mcp__*)")]
    UnknownTool { rule: String, tool: String },
    #[error("rule `{rule}`: {message}")]
    BadMcpName { rule: String, message: String },
    #[error("rule `{rule}`: unbalanced parentheses (write `Tool` or `Tool(pattern)`)")]
    Unbalanced { rule: String },
    #[error("rule `{rule}`: empty pattern (write `{tool}` to match every call)")]
    EmptyPattern { rule: String, tool: String },
    #[error("rule `{rule}`: bad pattern: {message}")]
    BadPattern { rule: String, message: String },
}

/// One parsed rule. `pattern == None` is a bare `Tool` rule matching every call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Rule {
    pub tool: Tool,
    pub pattern: Option<String>,
    /// For [`Tool::Mcp`]: the MCP tools it names (`mcp__SERVER__TOOL`,
    /// `mcp__SERVER__*`, `mcp__*`); its `pattern` matches their JSON arguments.
    pub mcp: Option<McpPattern>,
}

impl Rule {
    /// Parses `Tool` or `Tool(pattern)`. Tool names are case-insensitive and
    /// Claude Code's names are accepted. The pattern must compile as a glob.
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(RuleError::Empty);
        }
        let (name, pattern) = match t.find('(') {
            None => {
                if t.contains(')') {
                    return Err(RuleError::Unbalanced {
                        rule: t.to_string(),
                    });
                }
                (t, None)
            }
            Some(open) => {
                if !t.ends_with(')') || t.len() < open + 2 {
                    return Err(RuleError::Unbalanced {
                        rule: t.to_string(),
                    });
                }
                let inner = &t[open + 1..t.len() - 1];
                if !balanced(inner) {
                    return Err(RuleError::Unbalanced {
                        rule: t.to_string(),
                    });
                }
                (t[..open].trim_end(), Some(inner))
            }
        };
        let mcp = if is_mcp_name(name) {
            Some(
                McpPattern::parse(name).map_err(|message| RuleError::BadMcpName {
                    rule: t.to_string(),
                    message,
                })?,
            )
        } else {
            None
        };
        let tool = match &mcp {
            Some(_) => Tool::Mcp,
            None => Tool::from_name(name).ok_or_else(|| RuleError::UnknownTool {
                rule: t.to_string(),
                tool: name.to_string(),
            })?,
        };
        let pattern = match pattern {
            None => None,
            Some(p) => {
                if p.trim().is_empty() {
                    return Err(RuleError::EmptyPattern {
                        rule: t.to_string(),
                        tool: tool.name().to_string(),
                    });
                }
                Some(p.to_string())
            }
        };
        let rule = Rule { tool, pattern, mcp };
        rule.validate().map_err(|message| RuleError::BadPattern {
            rule: t.to_string(),
            message,
        })?;
        Ok(rule)
    }

    /// Checks that every glob this rule compiles to is valid.
    fn validate(&self) -> Result<(), String> {
        let Some(p) = &self.pattern else {
            return Ok(());
        };
        match self.tool {
            Tool::Bash => {
                for g in bash_globs(p) {
                    build_glob(&g, false).map_err(|e| e.to_string())?;
                }
            }
            Tool::Net => {
                let host = host_pattern(p);
                if host.is_empty() {
                    return Err("empty host".into());
                }
                build_glob(&host, true).map_err(|e| e.to_string())?;
            }
            Tool::WebFetch => {
                if let Some(domain) = domain_pattern(p) {
                    if domain.is_empty() {
                        return Err("empty domain".into());
                    }
                    build_glob(&domain, true).map_err(|e| e.to_string())?;
                } else {
                    build_glob(&crate::urls::normal_url_pattern(p), false)
                        .map_err(|e| e.to_string())?;
                }
            }
            _ => {
                build_glob(p, false).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    /// True when the pattern holds no glob metacharacter (escaped ones are literal).
    pub fn is_literal(&self) -> bool {
        self.pattern.as_deref().is_some_and(|p| !has_glob_meta(p))
    }
}

impl Rule {
    /// The tool part as written canonically (`bash`, `mcp__github__*`).
    pub fn tool_text(&self) -> &str {
        match &self.mcp {
            Some(m) => m.as_str(),
            None => self.tool.name(),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            None => f.write_str(self.tool_text()),
            Some(p) => write!(f, "{}({})", self.tool_text(), p),
        }
    }
}

impl std::str::FromStr for Rule {
    type Err = RuleError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rule::parse(s)
    }
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Rule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Rule::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// Unescaped parentheses must balance and never close before they open.
fn balanced(s: &str) -> bool {
    let mut depth: i64 = 0;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// Characters [`escape_glob`] escapes.
const GLOB_META: &[char] = &['*', '?', '[', ']', '{', '}', '\\', '(', ')'];

/// Escapes glob metacharacters (`* ? [ ] { } \` and parentheses) with a
/// backslash, so the result, used as a rule pattern, matches exactly `s`.
pub fn escape_glob(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if GLOB_META.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Removes the backslash escapes of a pattern (inverse of [`escape_glob`]).
pub(crate) fn unescape_glob(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// True when `p` holds an unescaped `*`, `?`, `[` or `{`.
pub(crate) fn has_glob_meta(p: &str) -> bool {
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '*' | '?' | '[' | '{' => return true,
            _ => {}
        }
    }
    false
}

pub(crate) use crate::globx::build_glob;

/// The globs a bash pattern stands for: Claude's `prefix:*` means `prefix*`;
/// a pattern ending in ` *` also matches the bare command.
pub(crate) fn bash_globs(pattern: &str) -> Vec<String> {
    // Kept verbatim: always-allow rules match fragments exactly, spaces included.
    let p = pattern;
    let p = match p.strip_suffix(":*") {
        Some(prefix) if !prefix.ends_with('\\') => format!("{prefix}*"),
        _ => p.to_string(),
    };
    let mut out = vec![p.clone()];
    if let Some(bare) = p.strip_suffix(" *") {
        let bare = bare.trim_end();
        if !bare.is_empty() && !bare.ends_with('\\') {
            out.push(bare.to_string());
        }
    }
    out
}

/// `domain:HOST` patterns of web_fetch, written as URLs' hosts are
/// (lower-cased, IDNA to ASCII, without a trailing dot or a port).
pub(crate) fn domain_pattern(p: &str) -> Option<String> {
    let p = p.trim();
    let rest = p
        .get(..7)
        .filter(|d| d.eq_ignore_ascii_case("domain:"))
        .map(|_| &p[7..])?;
    Some(crate::urls::normal_host_pattern(rest))
}

/// The host glob of a `net` pattern: `domain:HOST` or a bare host glob
/// (`*.example.com`), lowercased, without a trailing dot or IPv6 brackets.
pub(crate) fn host_pattern(p: &str) -> String {
    let h =
        domain_pattern(p).unwrap_or_else(|| p.trim().trim_end_matches('.').to_ascii_lowercase());
    match h.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        Some(inner) => inner.to_string(),
        None => h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display() {
        let r = Rule::parse("Bash(git *)").unwrap();
        assert_eq!(r.tool, Tool::Bash);
        assert_eq!(r.to_string(), "bash(git *)");
        assert_eq!(Rule::parse("WebFetch").unwrap().to_string(), "web_fetch");
        assert!(matches!(
            Rule::parse("bash(git *"),
            Err(RuleError::Unbalanced { .. })
        ));
        assert!(matches!(
            Rule::parse("shell(ls)"),
            Err(RuleError::UnknownTool { .. })
        ));
        assert!(Rule::parse("bash(echo \\))").is_ok());
        assert!(Rule::parse("bash(a) b)").is_err());
        assert_eq!(
            Rule::parse("Net(domain:Example.com)").unwrap().to_string(),
            "net(domain:Example.com)"
        );
        assert!(Rule::parse("net(*.example.com)").is_ok());
        assert!(Rule::parse("net").is_ok());
        assert!(Rule::parse("net(domain:)").is_err());
        assert_eq!(host_pattern("domain:Example.COM."), "example.com");
        assert_eq!(host_pattern("[::1]"), "::1");
        assert_eq!(host_pattern("*.Crates.io"), "*.crates.io");
    }

    #[test]
    fn mcp_rules() {
        let r = Rule::parse("MCP__GitHub__Create_Issue").unwrap();
        assert_eq!(r.tool, Tool::Mcp);
        assert_eq!(r.to_string(), "mcp__github__create_issue");
        let r = Rule::parse(r#"mcp__github(\{"repo":"a"\})"#).unwrap();
        assert_eq!(r.to_string(), r#"mcp__github__*(\{"repo":"a"\})"#);
        assert_eq!(Rule::parse("mcp__*").unwrap().to_string(), "mcp__*");
        assert!(matches!(
            Rule::parse("mcp__a b"),
            Err(RuleError::BadMcpName { .. })
        ));
        assert!(matches!(
            Rule::parse("mcp__a__"),
            Err(RuleError::BadMcpName { .. })
        ));
    }

    #[test]
    fn escape_round_trip() {
        let s = "echo *[x]{y}? \\ (z)";
        let e = escape_glob(s);
        assert!(!has_glob_meta(&e));
        assert_eq!(unescape_glob(&e), s);
        let g = build_glob(&e, false).unwrap().compile_matcher();
        assert!(g.is_match(s));
        assert!(!g.is_match("echo a[x]{y}? \\ (z)"));
    }
}
