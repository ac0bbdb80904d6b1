//! The Anthropic provider against a fake Messages API (SSE) on 127.0.0.1.

use crate::fake_model;

use decode_engine::providers::{
    anthropic, Message, ModelEvent, ModelRequest, ProviderErrorKind, ProviderKind, StopReason,
    ToolCall, ToolCallAssembler, ToolOutput, ToolSpec,
};
use fake_model::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        system: "You are Decode.".into(),
        messages,
        tools: vec![ToolSpec {
            name: "bash".into(),
            description: "Run a command".into(),
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
        }],
        max_output_tokens: 4096,
    }
}

async fn server_with(responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-test-key"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(Seq::new(responses))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn streams_text_and_two_tool_uses() {
    let server = server_with(vec![sse(anthropic_turn(
        "Let me check. ",
        &[
            ("toolu_01A", "bash", r#"{"command":"git status"}"#),
            ("toolu_01B", "read", r#"{"path":"Cargo.toml"}"#),
        ],
    ))])
    .await;
    let c = client(ProviderKind::Anthropic, &server.uri(), fast_policy());
    let events = collect(c.stream(
        request(vec![Message::User {
            text: "status?".into(),
        }]),
        CancellationToken::new(),
    ))
    .await;
    assert_eq!(text_of(&events), "Let me check. ");
    let mut asm = ToolCallAssembler::default();
    for e in &events {
        asm.feed(e);
    }
    assert!(!asm.has_open_call());
    let calls = asm.finish();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id, "toolu_01A");
    assert_eq!(calls[0].input, json!({"command": "git status"}));
    assert_eq!(calls[1].input, json!({"path": "Cargo.toml"}));
    assert_eq!(events.last(), Some(&ModelEvent::Stop(StopReason::ToolUse)));
    assert!(events.iter().any(
        |e| matches!(e, ModelEvent::Usage(u) if u.input_tokens == 472 && u.output_tokens == 89)
    ));

    let body = body_json(&server.received_requests().await.unwrap()[0]);
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["system"], "You are Decode.");
    assert_eq!(body["stream"], true);
    assert_eq!(body["tools"][0]["input_schema"]["required"][0], "command");
}

#[tokio::test]
async fn tool_results_go_back_as_user_tool_result_blocks() {
    let server = server_with(vec![sse(anthropic_turn("done", &[]))]).await;
    let c = client(ProviderKind::Anthropic, &server.uri(), fast_policy());
    let messages = vec![
        Message::User { text: "go".into() },
        Message::Assistant {
            text: "running".into(),
            tool_calls: vec![ToolCall {
                id: "toolu_1".into(),
                name: "bash".into(),
                input: json!({"command": "rm -rf /"}),
                invalid_input: None,
                signature: None,
            }],
        },
        Message::Tool {
            results: vec![ToolOutput {
                call_id: "toolu_1".into(),
                name: "bash".into(),
                content: "denied by the permission gate: matches deny rule".into(),
                is_error: true,
                shortened: false,
            }],
        },
    ];
    collect(c.stream(request(messages), CancellationToken::new())).await;
    let body = body_json(&server.received_requests().await.unwrap()[0]);
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(msgs[1]["content"][1]["type"], "tool_use");
    assert_eq!(msgs[2]["role"], "user");
    assert_eq!(
        msgs[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1",
               "content": "denied by the permission gate: matches deny rule", "is_error": true})
    );
}

#[tokio::test]
async fn overloaded_error_event_and_529_are_retried() {
    let overloaded = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-test\",\"stop_reason\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n\
        event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let server = server_with(vec![
        sse(overloaded),
        ResponseTemplate::new(529).set_body_string(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
        sse(anthropic_turn("ok", &[])),
    ])
    .await;
    let c = client(ProviderKind::Anthropic, &server.uri(), fast_policy());
    let events = collect(c.stream(
        request(vec![Message::User { text: "hi".into() }]),
        CancellationToken::new(),
    ))
    .await;
    assert_eq!(text_of(&events), "ok");
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, ModelEvent::Retrying { .. }))
            .count(),
        2
    );
}

#[tokio::test]
async fn a_stream_without_message_stop_is_cut() {
    let full = anthropic_turn("partial answer here", &[]);
    let cut = &full[..full.find("event: message_delta").unwrap()];
    let server = server_with(vec![sse(cut.to_string())]).await;
    let c = client(ProviderKind::Anthropic, &server.uri(), fast_policy());
    let events = collect(c.stream(
        request(vec![Message::User { text: "hi".into() }]),
        CancellationToken::new(),
    ))
    .await;
    match events.last() {
        Some(ModelEvent::Error(e)) => {
            assert_eq!(e.kind, ProviderErrorKind::StreamCut);
            assert!(e.message.contains("message_stop"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_rejected_key_names_anthropic_and_the_fix() {
    let server = server_with(vec![ResponseTemplate::new(401).set_body_string(
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    )])
    .await;
    let c = client(ProviderKind::Anthropic, &server.uri(), fast_policy());
    let events = collect(c.stream(
        request(vec![Message::User { text: "hi".into() }]),
        CancellationToken::new(),
    ))
    .await;
    let ModelEvent::Error(e) = events.last().unwrap() else {
        panic!()
    };
    assert_eq!(
        e.message,
        format!(
            "the API key was rejected by Anthropic (at {}/v1) (HTTP 401: invalid x-api-key): store a valid key with `decode key set anthropic` or set ANTHROPIC_API_KEY",
            server.uri()
        )
    );
}

#[test]
fn request_body_merges_turns_for_alternation() {
    let body = anthropic::request_body(
        "m",
        &request(vec![
            Message::User { text: "a".into() },
            Message::User { text: "b".into() },
        ]),
    );
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    assert_eq!(body["messages"][0]["content"][1]["text"], "b");
}
