//! MCP tool names as the gate reads them (docs/mcp.md): `mcp__SERVER__TOOL`.
//!
//! A server's name comes from the person's or the project's config and is checked
//! ([`check_server_name`]): letters, digits, `-` and `_`, never `__`, never ending in
//! `_`. So the first `__` after the `mcp__` prefix always ends the server part, and
//! `mcp__a__b` can only be tool `b` of server `a`. A tool's name comes from the server
//! (hostile input) and is made into one providers accept by [`full_name`].
//!
//! Names are matched case-insensitively, like every tool name in rules; the engine
//! refuses two tools whose full names differ only in case.

use std::fmt;

use globset::GlobMatcher;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Every MCP tool name starts with this.
pub const PREFIX: &str = "mcp__";
/// The longest tool name providers accept (OpenAI, Gemini: 64 characters).
pub const MAX_NAME_LEN: usize = 64;
/// The longest server name.
pub const MAX_SERVER_LEN: usize = 32;

/// Whether `s` names an MCP tool or pattern (starts with `mcp__`, any case).
pub fn is_mcp_name(s: &str) -> bool {
    s.len() >= PREFIX.len() && s[..PREFIX.len()].eq_ignore_ascii_case(PREFIX)
}

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Checks a server name from a config file; the message says what is wrong.
pub fn check_server_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a server name is empty".into());
    }
    if name.len() > MAX_SERVER_LEN {
        return Err(format!(
            "the server name `{}` is longer than {MAX_SERVER_LEN} characters",
            name.escape_debug()
        ));
    }
    if !name.chars().all(name_char) || name.contains("__") || name.ends_with('_') {
        return Err(format!(
            "the server name `{}` may only hold letters, digits, `-` and `_` (never `__`, never a `_` at the end)",
            name.escape_debug()
        ));
    }
    Ok(())
}

/// The name a tool of `server` (a checked server name) is offered under:
/// `mcp__SERVER__TOOL`, with every character of the server's own tool name that
/// providers do not accept replaced by `_`, and a name too long for them shortened
/// and given a hash of the original (so two long names stay apart).
pub fn full_name(server: &str, tool: &str) -> String {
    let t: String = tool
        .chars()
        .map(|c| if name_char(c) { c } else { '_' })
        .collect();
    let plain = format!("{PREFIX}{server}__{t}");
    if t == tool && !t.is_empty() && plain.len() <= MAX_NAME_LEN {
        return plain;
    }
    // A changed or shortened name gets a hash of the original, so `a b` and `a_b`
    // (or two long names with one start) stay two tools.
    let hash = format!("{:08x}", fnv1a(tool.as_bytes()) as u32);
    let room = MAX_NAME_LEN.saturating_sub(PREFIX.len() + server.len() + 2 + 1 + hash.len());
    let kept: String = t.chars().take(room).collect();
    if kept.is_empty() {
        format!("{PREFIX}{server}__{hash}")
    } else {
        format!("{PREFIX}{server}__{kept}_{hash}")
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// A full MCP tool name, `mcp__SERVER__TOOL`, as the model calls it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct McpName {
    full: String,
    /// Byte offset where the tool part starts.
    tool_at: usize,
}

impl McpName {
    /// Parses a full name; `None` when it is not `mcp__SERVER__TOOL` with a valid
    /// server name and a tool part of letters, digits, `-` and `_`.
    pub fn parse(s: &str) -> Option<McpName> {
        if !is_mcp_name(s) || s.len() > MAX_NAME_LEN {
            return None;
        }
        let rest = &s[PREFIX.len()..];
        let sep = rest.find("__")?;
        let (server, tool) = (&rest[..sep], &rest[sep + 2..]);
        check_server_name(server).ok()?;
        if tool.is_empty() || !tool.chars().all(name_char) {
            return None;
        }
        Some(McpName {
            full: s.to_string(),
            tool_at: PREFIX.len() + sep + 2,
        })
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.full
    }

    /// The server part.
    pub fn server(&self) -> &str {
        &self.full[PREFIX.len()..self.tool_at - 2]
    }

    /// The tool part.
    pub fn tool(&self) -> &str {
        &self.full[self.tool_at..]
    }

    /// The name lower-cased: what patterns are matched against.
    pub fn key(&self) -> String {
        self.full.to_ascii_lowercase()
    }
}

impl fmt::Display for McpName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.full)
    }
}

impl Serialize for McpName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.full)
    }
}

impl<'de> Deserialize<'de> for McpName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        McpName::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!("`{}` is not an MCP tool name", s.escape_debug()))
        })
    }
}

/// A pattern over MCP tool names, as rules, agents' `tools` lists and the person's
/// read-only marks write it: `mcp__*` (every MCP tool), `mcp__SERVER` or
/// `mcp__SERVER__*` (every tool of a server), `mcp__SERVER__TOOL`, with `*` and
/// `?` allowed anywhere after the prefix. Case-insensitive.
#[derive(Debug, Clone)]
pub struct McpPattern {
    /// The pattern lower-cased, `mcp__SERVER` written `mcp__SERVER__*`.
    text: String,
    glob: GlobMatcher,
    /// The server part when it holds no wildcard.
    server: Option<String>,
}

impl McpPattern {
    /// Parses a pattern; the message says what is wrong.
    pub fn parse(s: &str) -> Result<McpPattern, String> {
        let s = s.trim();
        if !is_mcp_name(s) {
            return Err(format!("`{}` does not start with mcp__", s.escape_debug()));
        }
        let rest = s[PREFIX.len()..].to_ascii_lowercase();
        if rest.is_empty()
            || !rest.chars().all(|c| name_char(c) || c == '*' || c == '?')
            || rest.len() > MAX_NAME_LEN
        {
            return Err(format!(
                "`{}` is not an MCP tool pattern (write mcp__*, mcp__SERVER, mcp__SERVER__* or mcp__SERVER__TOOL)",
                s.escape_debug()
            ));
        }
        let (server, tool) = match rest.find("__") {
            Some(i) => (rest[..i].to_string(), Some(rest[i + 2..].to_string())),
            None => (rest.clone(), None),
        };
        if server.is_empty() || tool.as_deref() == Some("") {
            return Err(format!(
                "`{}` has an empty server or tool part",
                s.escape_debug()
            ));
        }
        let wild = |p: &str| p.contains(['*', '?']);
        let text = match &tool {
            // `mcp__*`: every tool of every server.
            None if server == "*" => format!("{PREFIX}*"),
            None => format!("{PREFIX}{server}__*"),
            Some(t) => format!("{PREFIX}{server}__{t}"),
        };
        if !wild(&server) {
            check_server_name(&server)?;
        }
        let glob = crate::globx::build_glob(&text, true)
            .map_err(|e| e.to_string())?
            .compile_matcher();
        Ok(McpPattern {
            text,
            glob,
            server: (!wild(&server)).then_some(server),
        })
    }

    /// Whether the pattern covers `name`.
    pub fn matches(&self, name: &McpName) -> bool {
        self.glob.is_match(name.key())
    }

    /// Whether the pattern names `name`'s server without a wildcard (`mcp__SERVER__*`,
    /// `mcp__SERVER__TOOL`; not `mcp__*`).
    pub fn names_server_of(&self, name: &McpName) -> bool {
        self.server
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case(name.server()))
    }

    /// The pattern as matched (lower-cased, `mcp__SERVER` as `mcp__SERVER__*`).
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl PartialEq for McpPattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for McpPattern {}

impl std::hash::Hash for McpPattern {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

/// The arguments of an MCP call as the gate matches them: compact JSON with every
/// object's keys sorted, so one call has one subject whatever order the model wrote.
pub fn canonical_json(v: &serde_json::Value) -> String {
    fn sorted(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::with_capacity(m.len());
                for k in keys {
                    out.insert(k.clone(), sorted(&m[k]));
                }
                serde_json::Value::Object(out)
            }
            serde_json::Value::Array(a) => serde_json::Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_at_the_first_separator() {
        let n = McpName::parse("mcp__github__create_issue").unwrap();
        assert_eq!(n.server(), "github");
        assert_eq!(n.tool(), "create_issue");
        let n = McpName::parse("mcp__a__b__c").unwrap();
        assert_eq!((n.server(), n.tool()), ("a", "b__c"));
        // A server name never ends in `_`: this is tool `_b` of server `a`.
        let n = McpName::parse("mcp__a___b").unwrap();
        assert_eq!((n.server(), n.tool()), ("a", "_b"));
        for bad in [
            "mcp__",
            "mcp__x",
            "mcp__x__",
            "mcp____x",
            "mcp__a b__c",
            "mcp__a__b c",
            "bash",
            "mcp__a__\u{202e}b",
        ] {
            assert!(McpName::parse(bad).is_none(), "{bad}");
        }
        assert!(McpName::parse(&format!("mcp__s__{}", "x".repeat(60))).is_none());
    }

    #[test]
    fn server_names_are_checked() {
        assert!(check_server_name("git-hub_2").is_ok());
        for bad in ["", "a__b", "a_", "a b", "a/b", "ä", &"x".repeat(33)] {
            assert!(check_server_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn full_names_are_what_providers_accept_and_stay_apart() {
        assert_eq!(full_name("git", "status"), "mcp__git__status");
        let a = full_name("s", "a b");
        let b = full_name("s", "a_b");
        assert_ne!(a, b);
        assert!(McpName::parse(&a).is_some(), "{a}");
        let long1 = full_name("server", &"x".repeat(100));
        let long2 = full_name("server", &format!("{}y", "x".repeat(99)));
        assert_ne!(long1, long2);
        for n in [
            &long1,
            &long2,
            &full_name("s", ""),
            &full_name("s", "\u{1b}[31m"),
        ] {
            assert!(n.len() <= MAX_NAME_LEN, "{n}");
            assert!(McpName::parse(n).is_some(), "{n}");
        }
    }

    #[test]
    fn patterns() {
        let n = McpName::parse("mcp__GitHub__create_issue").unwrap();
        for (p, m, names) in [
            ("mcp__*", true, false),
            ("mcp__github", true, true),
            ("mcp__github__*", true, true),
            ("MCP__GITHUB__CREATE_ISSUE", true, true),
            ("mcp__github__create_*", true, true),
            ("mcp__git*__*", true, false),
            ("mcp__other__*", false, false),
            ("mcp__github__list", false, true),
        ] {
            let pat = McpPattern::parse(p).unwrap();
            assert_eq!(pat.matches(&n), m, "{p}");
            assert_eq!(pat.names_server_of(&n), names, "{p}");
        }
        assert_eq!(
            McpPattern::parse("mcp__github").unwrap().as_str(),
            "mcp__github__*"
        );
        for bad in [
            "mcp__",
            "mcp__a__",
            "mcp__a b",
            "mcp__a__[x]",
            "bash",
            "mcp__a_",
        ] {
            assert!(McpPattern::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn canonical_json_sorts_keys() {
        let a: serde_json::Value =
            serde_json::from_str(r#"{"b":1,"a":{"d":2,"c":[{"z":1,"y":2}]}}"#).unwrap();
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"c":[{"y":2,"z":1}],"d":2},"b":1}"#
        );
    }
}
