//! Streams loop events to the window in small batches.
//!
//! A model at 1,000 tokens/s makes 1,000 events a second; one IPC message per event
//! costs the webview more than drawing them. Events are time-stamped the moment the
//! loop hands them over, then sent with a leading-edge throttle: the first event after
//! a quiet spell leaves at once, the ones that follow within [`WINDOW`] go together at
//! its end. The UI draws at most once a frame anyway, so a batch costs no latency a
//! person can see, and at most `WINDOW` in the worst case.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use decode_protocol::{LoopEvent, StreamEvent};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The longest an event waits for company.
pub(crate) const WINDOW: Duration = Duration::from_millis(8);

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// The loop's end: stamps each event and queues it for the forwarder.
pub(crate) fn stamp(tx: &mpsc::UnboundedSender<StreamEvent>, event: &LoopEvent) {
    let _ = tx.send(StreamEvent {
        at_ms: now_ms(),
        // Long texts reach the page as their head and their size (decode-protocol page.rs).
        event: event.for_page(),
    });
}

/// Forwards queued events to `send` in batches (see the module docs) until the queue
/// closes; the last batch always goes out.
pub(crate) async fn forward(
    mut rx: mpsc::UnboundedReceiver<StreamEvent>,
    mut send: impl FnMut(Vec<StreamEvent>),
) {
    let mut last_sent: Option<Instant> = None;
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        if let Some(at) = last_sent {
            let deadline = at + WINDOW;
            while Instant::now() < deadline {
                match tokio::time::timeout_at(deadline, rx.recv()).await {
                    Ok(Some(e)) => batch.push(e),
                    Ok(None) | Err(_) => break,
                }
            }
        }
        while let Ok(e) = rx.try_recv() {
            batch.push(e);
        }
        send(batch);
        last_sent = Some(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(t: &str) -> LoopEvent {
        LoopEvent::TextDelta { text: t.into() }
    }

    #[tokio::test]
    async fn a_burst_goes_in_few_batches_and_nothing_is_lost() {
        let (tx, rx) = mpsc::unbounded_channel();
        let batches = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Vec<StreamEvent>>::new()));
        let b = std::sync::Arc::clone(&batches);
        let task = tokio::spawn(forward(rx, move |batch| b.lock().unwrap().push(batch)));
        for i in 0..200 {
            stamp(&tx, &delta(&i.to_string()));
            if i % 20 == 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        stamp(
            &tx,
            &LoopEvent::Done {
                outcome: decode_protocol::Outcome::Completed,
                turns: 1,
            },
        );
        drop(tx);
        task.await.unwrap();
        let batches = batches.lock().unwrap();
        let events: Vec<&StreamEvent> = batches.iter().flatten().collect();
        assert_eq!(events.len(), 201);
        assert!(batches.len() < 50, "{} batches", batches.len());
        let texts: Vec<String> = events
            .iter()
            .filter_map(|e| match &e.event {
                LoopEvent::TextDelta { text } => Some(text.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, (0..200).map(|i| i.to_string()).collect::<Vec<_>>());
        assert!(matches!(
            events.last().unwrap().event,
            LoopEvent::Done { .. }
        ));
    }

    #[tokio::test]
    async fn a_lone_event_leaves_at_once() {
        let (tx, rx) = mpsc::unbounded_channel();
        let (out_tx, mut out_rx) = mpsc::unbounded_channel();
        tokio::spawn(forward(rx, move |batch| {
            let _ = out_tx.send(batch);
        }));
        let start = Instant::now();
        stamp(&tx, &delta("a"));
        let batch = out_rx.recv().await.unwrap();
        assert_eq!(batch.len(), 1);
        assert!(start.elapsed() < Duration::from_millis(5));
    }
}
