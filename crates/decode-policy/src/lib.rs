//! Decode's permission gate (SPEC §1–§6).
