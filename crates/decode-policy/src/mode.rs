//! Permission modes (docs/permissions.md, "Modes").

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The five modes. Shift+Tab cycles them in the order of [`Mode::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    #[default]
    Default,
    Edit,
    Plan,
    Auto,
    Bypass,
}

impl Mode {
    /// Every mode, in cycling order.
    pub const ALL: [Mode; 5] = [
        Mode::Default,
        Mode::Edit,
        Mode::Plan,
        Mode::Auto,
        Mode::Bypass,
    ];

    /// The lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::Edit => "edit",
            Mode::Plan => "plan",
            Mode::Auto => "auto",
            Mode::Bypass => "bypass",
        }
    }

    /// The next mode in the Shift+Tab cycle: default → edit → plan → auto → bypass → default.
    pub fn next(self) -> Mode {
        match self {
            Mode::Default => Mode::Edit,
            Mode::Edit => Mode::Plan,
            Mode::Plan => Mode::Auto,
            Mode::Auto => Mode::Bypass,
            Mode::Bypass => Mode::Default,
        }
    }

    /// How much the mode lets through without asking, from the strictest:
    /// plan < default < edit < auto < bypass.
    pub fn looseness(self) -> u8 {
        match self {
            Mode::Plan => 0,
            Mode::Default => 1,
            Mode::Edit => 2,
            Mode::Auto => 3,
            Mode::Bypass => 4,
        }
    }

    /// `self`, or `limit` when `self` is looser: a subagent's mode is never looser
    /// than the mode of the agent that started it.
    pub fn no_looser_than(self, limit: Mode) -> Mode {
        if self.looseness() > limit.looseness() {
            limit
        } else {
            self
        }
    }

    /// One line saying what the mode lets through and what still asks.
    pub fn describe(self) -> &'static str {
        match self {
            Mode::Default => "reads run; file edits and shell commands ask",
            Mode::Edit => "reads and file edits run; shell commands ask",
            Mode::Plan => "reads only; edits and shell commands are denied until the plan is approved",
            Mode::Auto => "everything runs, except deny and ask rules, opaque commands, critical removals, protected files and branches, container removal and external effects",
            Mode::Bypass => "everything runs, except deny and ask rules, critical removals and commands the gate cannot read",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for an unknown mode name; its message lists the valid ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode `{name}` (expected one of: default, edit, plan, auto, bypass)")]
pub struct ModeError {
    pub name: String,
}

impl FromStr for Mode {
    type Err = ModeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = s.trim().to_ascii_lowercase();
        Ok(match key.as_str() {
            "default" => Mode::Default,
            "edit" | "acceptedits" => Mode::Edit,
            "plan" => Mode::Plan,
            "auto" => Mode::Auto,
            "bypass" | "bypasspermissions" => Mode::Bypass,
            _ => {
                return Err(ModeError {
                    name: s.to_string(),
                })
            }
        })
    }
}

impl Serialize for Mode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Mode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subagent_mode_is_clamped_to_the_parent_mode() {
        use Mode::*;
        let order = [Plan, Default, Edit, Auto, Bypass];
        for (i, own) in order.iter().enumerate() {
            for (j, parent) in order.iter().enumerate() {
                let want = if i > j { *parent } else { *own };
                assert_eq!(own.no_looser_than(*parent), want, "{own} under {parent}");
            }
        }
    }

    #[test]
    fn cycle_and_names() {
        let mut m = Mode::Default;
        for expected in [
            Mode::Edit,
            Mode::Plan,
            Mode::Auto,
            Mode::Bypass,
            Mode::Default,
        ] {
            m = m.next();
            assert_eq!(m, expected);
        }
        for m in Mode::ALL {
            assert_eq!(m.to_string().parse::<Mode>(), Ok(m));
        }
        let err = "turbo".parse::<Mode>().unwrap_err().to_string();
        assert!(err.contains("default, edit, plan, auto, bypass"), "{err}");
    }
}
