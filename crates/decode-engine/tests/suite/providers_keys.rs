//! The API key, for every provider alike: a provider error that repeats it never
//! carries it further (the message is masked before it is shown, logged or saved), and
//! a redirect to another server is not followed, so no key header — `Authorization`,
//! `x-api-key`, `x-goog-api-key` — and no conversation reaches it.

use crate::fake_model;

use decode_engine::providers::{Message, ModelEvent, ModelRequest, ProviderKind};
use fake_model::*;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const KINDS: [ProviderKind; 3] = [
    ProviderKind::Anthropic,
    ProviderKind::Gemini,
    ProviderKind::Openai,
];

/// The key the test clients send (see `fake_model::client`).
const KEY: &str = "sk-test-key";

fn request() -> ModelRequest {
    ModelRequest {
        system: "You are Decode.".into(),
        messages: vec![Message::User {
            text: "the secret plan".into(),
        }],
        tools: Vec::new(),
        max_output_tokens: 100,
    }
}

fn errors(events: &[ModelEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::Error(e) => Some(e.message.clone()),
            ModelEvent::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_401_that_echoes_the_key_is_reported_without_it() {
    for kind in KINDS {
        let server = MockServer::start().await;
        let body = serde_json::json!({"error": {"type": "authentication_error",
            "message": format!("Invalid API key: {KEY}. Keys look like {KEY}")}});
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(401).set_body_json(body))
            .mount(&server)
            .await;
        let c = client(kind, &server.uri(), fast_policy());
        let events = collect(c.stream(request(), CancellationToken::new())).await;
        let errs = errors(&events);
        assert_eq!(errs.len(), 1, "{kind}: {errs:?}");
        assert!(!errs[0].contains(KEY), "{kind}: {}", errs[0]);
        assert!(
            errs[0].contains("Invalid API key: [redacted key]"),
            "{kind}: {}",
            errs[0]
        );
        // Retried errors (a 500 echoing the key) are masked in the notices too.
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(500).set_body_json(
                    serde_json::json!({"error": {"message": format!("bad key {KEY}")}}),
                ),
            )
            .mount(&server)
            .await;
        let c = client(kind, &server.uri(), fast_policy());
        let events = collect(c.stream(request(), CancellationToken::new())).await;
        let errs = errors(&events);
        assert!(!errs.is_empty());
        for e in &errs {
            assert!(!e.contains(KEY), "{kind}: {e}");
        }
    }
}

#[tokio::test]
async fn a_307_to_another_server_is_not_followed_with_the_key() {
    for kind in KINDS {
        let elsewhere = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200))
            .mount(&elsewhere)
            .await;
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(307).insert_header(
                "location",
                format!("{}{}", elsewhere.uri(), api_path(kind)).as_str(),
            ))
            .mount(&server)
            .await;
        let c = client(kind, &server.uri(), fast_policy());
        let events = collect(c.stream(request(), CancellationToken::new())).await;
        let reached = elsewhere.received_requests().await.unwrap();
        assert!(
            reached.is_empty(),
            "{kind}: the other server got {:?}",
            reached
                .iter()
                .map(|r| r.headers.keys().map(|k| k.to_string()).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        );
        let errs = errors(&events);
        assert_eq!(errs.len(), 1, "{kind}: {errs:?}");
        assert!(
            errs[0].contains("redirected the request (HTTP 307) to another server")
                && errs[0].contains(&elsewhere.uri()),
            "{kind}: {}",
            errs[0]
        );
        assert_eq!(
            server.received_requests().await.unwrap().len(),
            1,
            "not retried"
        );
    }
}

#[tokio::test]
async fn a_redirect_on_the_same_server_is_followed() {
    for kind in KINDS {
        let server = MockServer::start().await;
        let moved = format!("/moved{}", api_path(kind));
        Mock::given(method("POST"))
            .and(wiremock::matchers::path(moved.as_str()))
            .respond_with(sse(turn(kind, "hello", &[])))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(307)
                    .insert_header("location", format!("{}{moved}", server.uri()).as_str()),
            )
            .mount(&server)
            .await;
        let c = client(kind, &server.uri(), fast_policy());
        let events = collect(c.stream(request(), CancellationToken::new())).await;
        assert_eq!(text_of(&events), "hello", "{kind}: {:?}", errors(&events));
    }
}
