//! Retries: exponential backoff with jitter, `retry-after` honoured (seconds or an HTTP
//! date), at most [`RetryPolicy::max_tries`] tries in all.

use std::time::{Duration, SystemTime};

/// How often and how patiently a model request is tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included (default 5).
    pub max_tries: u32,
    /// The first backoff (default 0.5 s); doubled on every retry.
    pub base_delay: Duration,
    /// The longest backoff (default 30 s).
    pub max_delay: Duration,
    /// The longest `retry-after` Decode waits (default 120 s); asked for more, it
    /// reports the failure instead.
    pub max_retry_after: Duration,
    /// How long to wait for the response headers, and then for each next chunk of the
    /// stream, before giving up (default 300 s: a local server may first load the model).
    pub idle_timeout: Duration,
    /// How long connecting may take (default 10 s).
    pub connect_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_tries: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(300),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    /// The backoff before try `attempt + 1` (attempt counts from 1): `base * 2^(attempt-1)`
    /// capped at `max_delay`, with "equal jitter" (a random value between half and all
    /// of it) so many clients do not retry in step.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exp = attempt.saturating_sub(1).min(20);
        let full = self
            .base_delay
            .saturating_mul(1u32 << exp)
            .min(self.max_delay);
        let half = full / 2;
        let jitter_ms = half.as_millis() as u64;
        half + Duration::from_millis(if jitter_ms == 0 {
            0
        } else {
            fastrand::u64(0..=jitter_ms)
        })
    }
}

/// Parses a `retry-after` header value: delay seconds (`"7"`, `"1.5"`) or an HTTP date.
/// A date in the past means "now".
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = v.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Some(Duration::from_secs_f64(secs.min(86_400.0)));
        }
        return None;
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("0.5", now),
            Some(Duration::from_millis(500))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            parse_retry_after(&later, now),
            Some(Duration::from_secs(30))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn backoff_grows_with_jitter_and_is_capped() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            ..RetryPolicy::default()
        };
        for _ in 0..50 {
            let d1 = p.backoff(1);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
            let d3 = p.backoff(3);
            assert!(d3 >= Duration::from_millis(200) && d3 <= Duration::from_millis(400));
            let d9 = p.backoff(9);
            assert!(d9 >= Duration::from_millis(500) && d9 <= Duration::from_millis(1000));
        }
    }
}
