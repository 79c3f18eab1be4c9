//! The binary form reads back as the JSON parses, whole and at rest, for every field it holds;
//! a record with anything it does not hold is left as JSON; damaged bytes never panic.

use super::*;

const ID: &str = "2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d";
const PARENT: &str = "0b6c2a3e-1111-4222-8333-444455556666";

/// A record with every field the form holds set, in JSON, with `more` added at its end.
fn full(more: &str) -> String {
    format!(
        r#"{{
        "id": "{ID}", "provider": "claude", "cwd": "/home/me/src/app ✓",
        "workspaceId": "ws-1", "title": "tab\t \"quoted\" é ✓ \u0001",
        "labels": {{"paseo.parent-agent-id": "{PARENT}", "a": "", "z": "last"}},
        "lastStatus": "error", "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": "2026-01-02T00:00:00.123Z", "lastActivityAt": "2026-01-02T00:00:00.000Z",
        "lastUserMessageAt": "2026-01-01T10:00:00.000Z",
        "config": {{"model": "sonnet", "mode": "plan", "systemPrompt": "be brief\n", "unconfined": true}},
        "persistence": {{"sessionId": "s-1"}},
        "requiresAttention": true, "attentionReason": "canceled",
        "attentionTimestamp": "2026-01-02T00:00:00.000Z", "lastError": "exit 2",
        "archivedAt": "2026-01-03T00:00:00.000Z", "autoArchive": true, "notifyOnFinish": true,
        "createdBy": "{PARENT}", "archiveBatchId": "b-1", "createdWorkspaceId": "ws-2",
        "lastMessage": "done: ✓", "turnCount": 7, "autoArchiveDone": true,
        "usage": {{"inputTokens": 1, "outputTokens": 2, "cacheReadTokens": 3,
                   "cacheWriteTokens": 4, "costUsd": 0.125, "turns": 5, "sessionCostUsd": 1e-9}},
        "lastRun": {{"wallMs": 1500, "exitCode": -1}}{more}
    }}"#
    )
}

/// The least a record has.
fn least(more: &str) -> String {
    format!(
        r#"{{"id": "{ID}", "provider": "shell", "cwd": "/w", "lastStatus": "closed",
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"{more}}}"#
    )
}

fn reads_back(json: &str) -> Vec<u8> {
    let mut out = Vec::new();
    assert!(
        encode_checked(json.as_bytes(), &mut out).is_some(),
        "kept as JSON: {json}"
    );
    let whole = AgentRecord::from_json_boxed(json.as_bytes()).unwrap();
    let at_rest = AgentRecord::from_json_at_rest(json.as_bytes()).unwrap();
    assert_eq!(decode(&out, false).unwrap(), whole);
    assert_eq!(decode(&out, true).unwrap(), at_rest);
    out
}

#[test]
fn every_field_the_form_holds_reads_back_as_the_json_parses() {
    let full = reads_back(&full(""));
    let at_rest = decode(&full, true).unwrap();
    assert!(at_rest.config.system_prompt_on_disk && at_rest.last_message_on_disk);
    assert_eq!(at_rest.parent_agent_id().unwrap().to_string(), PARENT);
    reads_back(&least(""));
    // Nulls, absent values and the other choices of each field.
    for more in [
        r#", "config": null, "labels": null, "title": null, "persistence": {}"#,
        r#", "config": {"systemPrompt": null}, "lastMessage": null, "usage": {}"#,
        r#", "lastRun": {"wallMs": 3}, "attentionReason": "permission""#,
        r#", "usage": {"inputTokens": 9}, "lastStatus": "running""#,
        r#", "labels": {"only": "one"}, "attentionReason": "finished""#,
    ] {
        let json = least(more).replacen(
            r#""lastStatus": "closed","#,
            "",
            usize::from(more.contains("lastStatus")),
        );
        reads_back(&json);
    }
}

#[test]
fn a_record_with_a_part_the_form_does_not_hold_stays_json() {
    for more in [
        r#", "futureField": 1"#,
        r#", "config": {"model": "x", "sandbox": "read-only"}"#,
        r#", "persistence": {"sessionId": "s", "rolloutPath": "/r"}"#,
        r#", "usage": {"inputTokens": 1, "futureCount": 2}"#,
        r#", "lastRun": {"wallMs": 1, "signal": 9}"#,
        r#", "budget": {"treeTokens": 100}"#,
        &format!(r#", "notifyArm": {{"id": "n", "targetAgentId": "{PARENT}"}}"#),
    ] {
        let json = least(more);
        assert!(
            AgentRecord::from_json_boxed(json.as_bytes()).is_ok(),
            "{json}"
        );
        assert!(
            encode_checked(json.as_bytes(), &mut Vec::new()).is_none(),
            "{json}"
        );
    }
    // Not a record at all.
    for bad in ["", "{", "[]", r#"{"id": "x"}"#] {
        assert!(encode_checked(bad.as_bytes(), &mut Vec::new()).is_none());
    }
}

#[test]
fn damaged_bytes_never_panic_and_never_read_longer_than_they_are() {
    let good = reads_back(&full(""));
    for n in 0..good.len() {
        assert!(decode(&good[..n], false).is_none(), "cut at {n}");
    }
    assert!(decode(&[good.as_slice(), &[0]].concat(), true).is_none());
    for i in 0..good.len() {
        for x in [0x00, 0x02, 0x80, 0xff] {
            let mut b = good.clone();
            b[i] = x;
            // Either a record or none: the bytes are checked, nothing is trusted.
            let _ = decode(&b, false);
            let _ = decode(&b, true);
        }
    }
}
