//! How Codex's thread items become timeline items: a tool-like item (a command, an MCP tool
//! call, a file change, a web search, a dynamic tool) is a tool call when it starts and its
//! result when it completes; reasoning is a reasoning item. Agent messages are the protocol's
//! business (they are also the turn's last message).

use serde_json::{json, Value};

use crate::model::{ItemKind, NewItem};

/// A tool-like item as it starts: a call on the timeline.
pub fn started_item(item: &Value) -> Option<NewItem> {
    let id = item["id"].as_str().unwrap_or("");
    let call = |name: String, input: Value| Some(NewItem::tool_call(id, name, input));
    match item["type"].as_str()? {
        "commandExecution" => call(
            "shell".into(),
            json!({"command": item["command"], "cwd": item["cwd"]}),
        ),
        "mcpToolCall" => call(
            format!(
                "mcp__{}__{}",
                item["server"].as_str().unwrap_or(""),
                item["tool"].as_str().unwrap_or("")
            ),
            item["arguments"].clone(),
        ),
        "fileChange" => call("apply_patch".into(), json!({"changes": item["changes"]})),
        "webSearch" => call("web_search".into(), json!({"query": item["query"]})),
        "dynamicToolCall" => call(
            item["tool"].as_str().unwrap_or("tool").to_string(),
            item["arguments"].clone(),
        ),
        _ => None,
    }
}

/// A tool-like item as it completes: its result (reasoning becomes a reasoning item).
pub fn completed_item(item: &Value) -> Option<NewItem> {
    let id = item["id"].as_str().unwrap_or("");
    let failed = |status: &Value| matches!(status.as_str(), Some("failed") | Some("declined"));
    match item["type"].as_str()? {
        "commandExecution" => {
            let exit = item["exitCode"].as_i64();
            let is_error = failed(&item["status"]) || exit.is_some_and(|c| c != 0);
            let text = match (item["aggregatedOutput"].as_str(), item["status"].as_str()) {
                (Some(out), _) => out.to_string(),
                (None, Some("declined")) => "declined".to_string(),
                (None, _) => String::new(),
            };
            Some(NewItem::tool_result(id, text, is_error))
        }
        "mcpToolCall" => {
            let error = item["error"]["message"].as_str();
            let text = match error {
                Some(e) => e.to_string(),
                None => mcp_result_text(&item["result"]),
            };
            Some(NewItem::tool_result(
                id,
                text,
                error.is_some() || failed(&item["status"]),
            ))
        }
        "fileChange" | "webSearch" | "dynamicToolCall" => Some(NewItem::tool_result(
            id,
            item["status"].as_str().unwrap_or(""),
            failed(&item["status"]),
        )),
        "reasoning" => {
            let parts: Vec<&str> = item["summary"]
                .as_array()
                .into_iter()
                .chain(item["content"].as_array())
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            (!parts.is_empty()).then(|| NewItem::new(ItemKind::Reasoning, parts.join("\n")))
        }
        _ => None,
    }
}

fn mcp_result_text(result: &Value) -> String {
    let texts: Vec<&str> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect();
    if texts.is_empty() && !result.is_null() {
        result.to_string()
    } else {
        texts.join("\n")
    }
}
