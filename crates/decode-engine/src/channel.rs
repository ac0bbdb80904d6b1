//! The decision channel (docs/window.md: one decision surface).
//!
//! Permission asks, `ask_user` questions and plan approvals from every running tool
//! call go into one FIFO queue. The request at the head is *current*: every surface
//! (the window's modal, a native dialog while the window is hidden, the terminal) is
//! told about it with [`ChannelEvent::Pending`]; whichever answers first wins, the
//! others are told with [`ChannelEvent::Resolved`] and a late answer gets
//! [`AlreadyAnswered`]. Then the next request becomes current. A request that joins
//! the queue behind the current one is announced with [`ChannelEvent::Queued`], so a
//! surface can say "1 of 3". Both carry what the request offers
//! ([`DecisionRequest::offered`], derived once when it is asked): every surface shows
//! those answers and no other.
//!
//! Only the current request can be answered: one that waits behind it has not been
//! shown to the person as the thing to decide, so an answer for it is refused
//! ([`AnswerRefused::NotShown`]); and an answer must fit its request
//! ([`DecisionRequest::misfit`]: a plan approved into a mode it did not offer, "always
//! allow" for a capped call) or it is refused and the request stays pending.
//!
//! When no surface is subscribed, a request is answered
//! [`DecisionAnswer::Unavailable`] at once (nobody could ever answer it). Cancelling
//! (a stopped run, a closed window) resolves every pending request as `Unavailable`;
//! a request whose asker gave up (its future was dropped) leaves the queue by itself.
//!
//! The channel only carries answers: "always allow" is persisted by the tool-call
//! path (`tools::call_tool` → `settings::append_allow_rules`), so the gate's own code
//! decides what is written.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
pub use decode_protocol::{ChannelEvent, DecisionId};
use tokio::sync::oneshot;

use crate::decision::{DecisionAnswer, DecisionRequest, DecisionSurface};

/// The request was already answered, or never existed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("decision {id} was already answered")]
pub struct AlreadyAnswered {
    pub id: DecisionId,
}

/// Why an answer was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerRefused {
    /// Already answered (by another surface, or cancelled), or never existed.
    #[error(transparent)]
    AlreadyAnswered(#[from] AlreadyAnswered),
    /// It waits behind the current request: it has not been shown yet.
    #[error("decision {id} is waiting behind another one and has not been shown yet")]
    NotShown { id: DecisionId },
    /// The answer does not fit the request; the request stays pending.
    #[error("decision {id}: {why}")]
    Misfit { id: DecisionId, why: String },
}

/// Identifies a subscription, for [`DecisionChannel::unsubscribe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChannelSubscription(u64);

type Listener = Arc<dyn Fn(&ChannelEvent) + Send + Sync>;

struct Pending {
    id: DecisionId,
    request: DecisionRequest,
    /// What it offers, derived once when it was asked.
    offered: decode_protocol::Offered,
    /// The subagent that asks, if any.
    agent: Option<String>,
    reply: oneshot::Sender<DecisionAnswer>,
}

#[derive(Default)]
struct Inner {
    queue: VecDeque<Pending>,
    listeners: Vec<(u64, Listener)>,
    /// Events to deliver, in order, outside the lock.
    outbox: VecDeque<ChannelEvent>,
    delivering: bool,
}

/// The one queue of decisions (see the module docs). Cheap to share: `Arc` it.
pub struct DecisionChannel {
    inner: Mutex<Inner>,
    next_id: AtomicU64,
    next_sub: AtomicU64,
}

impl fmt::Debug for DecisionChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.lock();
        f.debug_struct("DecisionChannel")
            .field("pending", &inner.queue.len())
            .field("listeners", &inner.listeners.len())
            .finish()
    }
}

impl Default for DecisionChannel {
    fn default() -> Self {
        DecisionChannel::new()
    }
}

impl DecisionChannel {
    pub fn new() -> DecisionChannel {
        DecisionChannel {
            inner: Mutex::new(Inner::default()),
            next_id: AtomicU64::new(1),
            next_sub: AtomicU64::new(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a surface. If a request is current, the new surface is told about it
    /// at once (so a window opened late still sees the pending ask).
    pub fn subscribe(
        &self,
        listener: Box<dyn Fn(&ChannelEvent) + Send + Sync>,
    ) -> ChannelSubscription {
        let id = self.next_sub.fetch_add(1, Ordering::Relaxed);
        let listener: Listener = Arc::from(listener);
        let current = {
            let mut inner = self.lock();
            inner.listeners.push((id, Arc::clone(&listener)));
            inner.queue.front().map(|p| ChannelEvent::Pending {
                id: p.id,
                request: p.request.clone(),
                offered: p.offered.clone(),
                agent: p.agent.clone(),
            })
        };
        if let Some(event) = current {
            call(&listener, &event);
        }
        ChannelSubscription(id)
    }

    /// Removes a surface; returns whether it was subscribed.
    pub fn unsubscribe(&self, sub: ChannelSubscription) -> bool {
        let mut inner = self.lock();
        let before = inner.listeners.len();
        inner.listeners.retain(|(i, _)| *i != sub.0);
        inner.listeners.len() != before
    }

    /// How many surfaces are subscribed.
    pub fn surfaces(&self) -> usize {
        self.lock().listeners.len()
    }

    /// The request being asked now.
    pub fn current(&self) -> Option<(DecisionId, DecisionRequest)> {
        self.lock().queue.front().map(|p| (p.id, p.request.clone()))
    }

    /// Every pending request, current first (for the tray's "pending approvals").
    pub fn pending(&self) -> Vec<(DecisionId, DecisionRequest)> {
        self.lock()
            .queue
            .iter()
            .map(|p| (p.id, p.request.clone()))
            .collect()
    }

    /// Every pending request with the subagent that asks it, current first.
    pub fn pending_decisions(&self) -> Vec<decode_protocol::PendingDecision> {
        self.lock()
            .queue
            .iter()
            .map(|p| decode_protocol::PendingDecision {
                id: p.id,
                request: p.request.clone(),
                offered: p.offered.clone(),
                agent: p.agent.clone(),
            })
            .collect()
    }

    /// Answers the current request on behalf of a surface named `by` (`window`,
    /// `dialog`, `terminal`, …). The first answer wins; a later one is
    /// [`AnswerRefused::AlreadyAnswered`]. A request still waiting behind the current
    /// one, or an answer that does not fit the request, is refused (module docs).
    pub fn answer_by(
        &self,
        id: DecisionId,
        answer: DecisionAnswer,
        by: &str,
    ) -> Result<(), AnswerRefused> {
        {
            let mut inner = self.lock();
            let pos = inner
                .queue
                .iter()
                .position(|p| p.id == id)
                .ok_or(AlreadyAnswered { id })?;
            if pos != 0 {
                return Err(AnswerRefused::NotShown { id });
            }
            if let Some(why) = inner.queue[0].request.misfit(&answer) {
                tracing::warn!(id, by, %why, "an answer that does not fit its request was refused");
                return Err(AnswerRefused::Misfit { id, why });
            }
            let pending = inner.queue.pop_front().ok_or(AlreadyAnswered { id })?;
            // The asker may have given up meanwhile; the answer is still "taken".
            let _ = pending.reply.send(answer.clone());
            inner.outbox.push_back(ChannelEvent::Resolved {
                id,
                by: by.to_string(),
                answer,
            });
            queue_next(&mut inner);
        }
        self.deliver();
        Ok(())
    }

    /// [`answer_by`](Self::answer_by) from an unnamed surface.
    pub fn answer(&self, id: DecisionId, answer: DecisionAnswer) -> Result<(), AnswerRefused> {
        self.answer_by(id, answer, "surface")
    }

    /// Resolves every pending request as [`DecisionAnswer::Unavailable`] with `reason`
    /// (the run was stopped, the window closed).
    pub fn cancel_all(&self, reason: &str) {
        {
            let mut inner = self.lock();
            let drained: Vec<Pending> = inner.queue.drain(..).collect();
            for p in drained {
                let answer = DecisionAnswer::Unavailable {
                    reason: reason.to_string(),
                };
                let _ = p.reply.send(answer.clone());
                inner.outbox.push_back(ChannelEvent::Resolved {
                    id: p.id,
                    by: "cancel".to_string(),
                    answer,
                });
            }
        }
        self.deliver();
    }

    /// Removes a request whose asker stopped waiting.
    fn abandon(&self, id: DecisionId) {
        {
            let mut inner = self.lock();
            let Some(pos) = inner.queue.iter().position(|p| p.id == id) else {
                return;
            };
            inner.queue.remove(pos);
            inner.outbox.push_back(ChannelEvent::Resolved {
                id,
                by: "gone".to_string(),
                answer: DecisionAnswer::Unavailable {
                    reason: "the request was withdrawn".to_string(),
                },
            });
            if pos == 0 {
                queue_next(&mut inner);
            }
        }
        self.deliver();
    }

    /// Delivers queued events outside the lock, in order, exactly once each, even when
    /// a listener answers (re-enters) from inside its callback.
    fn deliver(&self) {
        {
            let mut inner = self.lock();
            if inner.delivering {
                return;
            }
            inner.delivering = true;
        }
        loop {
            let (event, listeners) = {
                let mut inner = self.lock();
                match inner.outbox.pop_front() {
                    Some(e) => (
                        e,
                        inner
                            .listeners
                            .iter()
                            .map(|(_, l)| Arc::clone(l))
                            .collect::<Vec<_>>(),
                    ),
                    None => {
                        inner.delivering = false;
                        return;
                    }
                }
            };
            for l in &listeners {
                call(l, &event);
            }
        }
    }
}

fn queue_next(inner: &mut Inner) {
    if let Some(next) = inner.queue.front() {
        let event = ChannelEvent::Pending {
            id: next.id,
            request: next.request.clone(),
            offered: next.offered.clone(),
            agent: next.agent.clone(),
        };
        inner.outbox.push_back(event);
    }
}

fn call(listener: &Listener, event: &ChannelEvent) {
    let f = std::panic::AssertUnwindSafe(|| listener(event));
    if std::panic::catch_unwind(f).is_err() {
        tracing::error!("a decision surface panicked");
    }
}

/// Removes the request from the queue if the asking future is dropped first.
struct AbandonGuard<'a> {
    channel: &'a DecisionChannel,
    id: DecisionId,
    armed: bool,
}

impl Drop for AbandonGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.channel.abandon(self.id);
        }
    }
}

#[async_trait]
impl DecisionSurface for DecisionChannel {
    async fn ask(&self, request: DecisionRequest) -> DecisionAnswer {
        self.ask_as(None, request).await
    }

    async fn ask_as(&self, agent: Option<&str>, request: DecisionRequest) -> DecisionAnswer {
        let agent = agent.map(str::to_string);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut inner = self.lock();
            if inner.listeners.is_empty() {
                return DecisionAnswer::Unavailable {
                    reason: "no window or terminal is open to answer".to_string(),
                };
            }
            let becomes_current = inner.queue.is_empty();
            // What the request offers is derived here, once: every surface is told.
            let offered = request.offered();
            inner.queue.push_back(Pending {
                id,
                request: request.clone(),
                offered: offered.clone(),
                agent: agent.clone(),
                reply: tx,
            });
            let event = if becomes_current {
                ChannelEvent::Pending {
                    id,
                    request,
                    offered,
                    agent,
                }
            } else {
                ChannelEvent::Queued {
                    id,
                    request,
                    offered,
                    agent,
                }
            };
            inner.outbox.push_back(event);
        }
        tracing::debug!(id, "decision queued");
        self.deliver();
        let mut guard = AbandonGuard {
            channel: self,
            id,
            armed: true,
        };
        let answer = rx.await.unwrap_or_else(|_| DecisionAnswer::Unavailable {
            reason: "the decision channel was closed".to_string(),
        });
        guard.armed = false;
        answer
    }
}

/// A surface that answers every request the same way (tests, scripted runs).
pub struct FixedSurface(pub DecisionAnswer);

#[async_trait]
impl DecisionSurface for FixedSurface {
    async fn ask(&self, _request: DecisionRequest) -> DecisionAnswer {
        self.0.clone()
    }
}
