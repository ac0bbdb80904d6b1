//! The OpenAI-compatible provider against a fake chat-completions server on 127.0.0.1,
//! including the faults: 429 with retry-after, 500, a stream cut mid-event, a timeout,
//! a rejected key, an unknown model, a server that is not running.

use crate::fake_model;

use std::time::{Duration, Instant};

use decode_engine::providers::{
    Message, ModelEvent, ModelRequest, ProviderErrorKind, ProviderKind, StopReason,
    ToolCallAssembler, ToolSpec,
};
use fake_model::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn request() -> ModelRequest {
    ModelRequest {
        system: "You are terse.".into(),
        messages: vec![Message::User {
            text: "list the files".into(),
        }],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        max_output_tokens: 1000,
    }
}

async fn server_with(responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Seq::new(responses))
        .mount(&server)
        .await;
    server
}

async fn run(
    server: &MockServer,
    policy: decode_engine::providers::RetryPolicy,
) -> Vec<ModelEvent> {
    let c = client(ProviderKind::Openai, &server.uri(), policy);
    collect(c.stream(request(), CancellationToken::new())).await
}

fn error_of(events: &[ModelEvent]) -> decode_engine::providers::ProviderError {
    match events.last() {
        Some(ModelEvent::Error(e)) => e.clone(),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[tokio::test]
async fn streams_text_and_parallel_tool_calls() {
    let body = openai_turn(
        "Reading both. ",
        &[
            ("call_a", "read", r#"{"path":"src/main.rs"}"#),
            ("call_b", "glob", r#"{"pattern":"**/*.toml"}"#),
        ],
    );
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-test-key"))
        .respond_with(sse(body))
        .mount(&server)
        .await;
    let events = run(&server, fast_policy()).await;
    assert_eq!(text_of(&events), "Reading both. ");
    let mut asm = ToolCallAssembler::default();
    for e in &events {
        asm.feed(e);
    }
    assert!(!asm.has_open_call());
    let calls = asm.finish();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id, "call_a");
    assert_eq!(calls[0].input, json!({"path": "src/main.rs"}));
    assert_eq!(calls[1].name, "glob");
    assert_eq!(calls[1].input, json!({"pattern": "**/*.toml"}));
    assert!(events.contains(&ModelEvent::Stop(StopReason::ToolUse)));
    assert!(events
        .iter()
        .any(|e| matches!(e, ModelEvent::Usage(u) if u.input_tokens == 120)));

    let req = &server.received_requests().await.unwrap()[0];
    let body = body_json(req);
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][1]["content"], "list the files");
    assert_eq!(body["tools"][0]["function"]["name"], "read");
}

#[tokio::test]
async fn honours_retry_after_on_429() {
    let server = server_with(vec![
        ResponseTemplate::new(429)
            .insert_header("retry-after", "1")
            .set_body_string(r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#),
        sse(openai_turn("ok", &[])),
    ])
    .await;
    let start = Instant::now();
    let events = run(&server, fast_policy()).await;
    assert!(
        start.elapsed() >= Duration::from_millis(950),
        "{:?}",
        start.elapsed()
    );
    assert!(events.iter().any(|e| matches!(
        e,
        ModelEvent::Retrying {
            attempt: 1,
            delay_ms: 1000,
            ..
        }
    )));
    assert_eq!(text_of(&events), "ok");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn retries_500_then_succeeds() {
    let server = server_with(vec![
        ResponseTemplate::new(500),
        ResponseTemplate::new(503).set_body_string("upstream down"),
        sse(openai_turn("fine", &[])),
    ])
    .await;
    let events = run(&server, fast_policy()).await;
    assert_eq!(text_of(&events), "fine");
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn gives_up_after_five_tries_with_one_sentence() {
    let server = server_with(vec![ResponseTemplate::new(500)
        .set_body_string(r#"{"error":{"message":"The server had an error"}}"#)])
    .await;
    let events = run(&server, fast_policy()).await;
    let e = error_of(&events);
    assert_eq!(e.kind, ProviderErrorKind::Server);
    assert_eq!(
        e.message,
        format!(
            "the OpenAI-compatible server at {}/v1 failed with a server error (HTTP 500: The server had an error) (tried 5 times): try again later",
            server.uri()
        )
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 5);
}

#[tokio::test]
async fn a_cut_stream_before_any_output_is_retried() {
    let cut = "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assist";
    let server = server_with(vec![sse(cut), sse(openai_turn("whole", &[]))]).await;
    let events = run(&server, fast_policy()).await;
    assert_eq!(text_of(&events), "whole");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_cut_stream_after_text_is_reported_not_replayed() {
    let full = openai_turn("Hello there friend", &[]);
    let cut = &full[..full.find("friend").unwrap() + 3];
    let server = server_with(vec![sse(cut), sse(openai_turn("again", &[]))]).await;
    let events = run(&server, fast_policy()).await;
    let e = error_of(&events);
    assert_eq!(e.kind, ProviderErrorKind::StreamCut);
    assert!(
        e.message.contains("broke off in the middle of the answer"),
        "{e}"
    );
    assert!(text_of(&events).starts_with("Hello "));
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_half_delivered_tool_call_is_reported() {
    let full = openai_turn(
        "",
        &[("call_x", "bash", r#"{"command":"cargo test --workspace"}"#)],
    );
    let cut = &full[..full.find("cargo").unwrap()];
    let server = server_with(vec![sse(cut.to_string())]).await;
    let events = run(&server, fast_policy()).await;
    assert_eq!(error_of(&events).kind, ProviderErrorKind::StreamCut);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_timeout_is_retried() {
    let server = server_with(vec![
        sse(openai_turn("late", &[])).set_delay(Duration::from_secs(3)),
        sse(openai_turn("on time", &[])),
    ])
    .await;
    let mut policy = fast_policy();
    policy.idle_timeout = Duration::from_millis(300);
    let events = run(&server, policy).await;
    assert!(events
        .iter()
        .any(|e| matches!(e, ModelEvent::Retrying { reason, .. } if reason.contains("in time"))));
    assert_eq!(text_of(&events), "on time");
}

#[tokio::test]
async fn timeouts_every_time_give_one_sentence() {
    let server = server_with(vec![
        sse(openai_turn("late", &[])).set_delay(Duration::from_secs(3))
    ])
    .await;
    let mut policy = fast_policy();
    policy.idle_timeout = Duration::from_millis(200);
    policy.max_tries = 2;
    let e = error_of(&run(&server, policy).await);
    assert_eq!(e.kind, ProviderErrorKind::Timeout);
    assert!(
        e.message
            .ends_with("did not answer within 1 s (tried 2 times)"),
        "{e}"
    );
}

#[tokio::test]
async fn a_rejected_key_is_one_clear_sentence_and_not_retried() {
    let server = server_with(vec![ResponseTemplate::new(401).set_body_string(
        r#"{"error":{"message":"Incorrect API key provided: sk-test***","type":"invalid_request_error","code":"invalid_api_key"}}"#,
    )])
    .await;
    let e = error_of(&run(&server, fast_policy()).await);
    assert_eq!(e.kind, ProviderErrorKind::Auth);
    assert!(
        e.message
            .starts_with("the API key was rejected by the OpenAI-compatible server at"),
        "{e}"
    );
    assert!(e.message.contains("HTTP 401"), "{e}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_unknown_model_names_the_model() {
    let server = server_with(vec![ResponseTemplate::new(404).set_body_string(
        r#"{"error":{"message":"model \"gpt-test\" not found, try pulling it first","type":"api_error"}}"#,
    )])
    .await;
    let e = error_of(&run(&server, fast_policy()).await);
    assert_eq!(e.kind, ProviderErrorKind::NotFound);
    assert!(e.message.contains("the model `gpt-test`"), "{e}");
    assert!(e.message.contains("try pulling it first"), "{e}");
}

#[tokio::test]
async fn a_server_that_is_not_running() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let uri = format!("http://127.0.0.1:{port}");
    let mut policy = fast_policy();
    policy.max_tries = 2;
    let c = client(ProviderKind::Openai, &uri, policy);
    let events = collect(c.stream(request(), CancellationToken::new())).await;
    let e = error_of(&events);
    assert_eq!(e.kind, ProviderErrorKind::Connect);
    assert_eq!(
        e.message,
        format!("could not reach {uri}/v1: is the server running?")
    );
}

#[tokio::test]
async fn an_error_event_in_the_stream_is_retried_when_nothing_was_shown() {
    let server = server_with(vec![
        sse("data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\",\"code\":503}}\n\n"),
        sse(openai_turn("ok", &[])),
    ])
    .await;
    let events = run(&server, fast_policy()).await;
    assert_eq!(text_of(&events), "ok");
}

#[tokio::test]
async fn cancel_ends_the_stream_at_once() {
    let server = server_with(vec![
        sse(openai_turn("slow", &[])).set_delay(Duration::from_secs(30))
    ])
    .await;
    let c = client(ProviderKind::Openai, &server.uri(), fast_policy());
    let cancel = CancellationToken::new();
    let stream = c.stream(request(), cancel.clone());
    let start = Instant::now();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        c2.cancel();
    });
    let events = collect(stream).await;
    assert!(events.is_empty(), "{events:?}");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn ollama_style_whole_calls_and_stop_reason() {
    // Ollama sends each call whole, with finish_reason "stop".
    let body = concat!(
        "data: {\"id\":\"chatcmpl-9\",\"object\":\"chat.completion.chunk\",\"created\":1735000000,\"model\":\"qwen2.5-coder:7b\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"call_p1\",\"index\":0,\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-9\",\"object\":\"chat.completion.chunk\",\"created\":1735000000,\"model\":\"qwen2.5-coder:7b\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    let server = server_with(vec![sse(body)]).await;
    let events = run(&server, fast_policy()).await;
    let mut asm = ToolCallAssembler::default();
    for e in &events {
        asm.feed(e);
    }
    let calls = asm.finish();
    assert_eq!(calls[0].input, json!({"path": "a.txt"}));
    assert!(events.contains(&ModelEvent::Stop(StopReason::ToolUse)));
}
