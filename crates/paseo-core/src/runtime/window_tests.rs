//! Which cards a window's first screen and its pages carry, and what a card says.

use super::*;
use crate::engine::NewAgent;
use crate::model::TurnOutcome;
use crate::workspaces::directory_workspace_with;
use serde_json::Value;
use std::path::Path;

fn workspace(e: &mut Engine, dir: &str) -> WorkspaceId {
    let now = crate::model::Timestamp::now();
    let (ws, project) = directory_workspace_with(Path::new(dir), None, &[], now);
    let id = ws.workspace_id.clone();
    e.upsert_workspace(ws, project);
    id
}

fn agent(e: &mut Engine, ws: &WorkspaceId, dir: &str, parent: Option<AgentId>) -> AgentId {
    e.create(NewAgent {
        parent,
        created_by: parent,
        ..NewAgent::new("shell", false, dir, ws.clone())
    })
    .unwrap()
}

fn ids(agents: &[&AgentState]) -> BTreeSet<AgentId> {
    agents.iter().map(|a| a.record.id).collect()
}

#[test]
fn a_window_first_screen_is_its_workspace_and_its_tabs_with_their_family() {
    let mut e = Engine::new();
    let (a, b) = (workspace(&mut e, "/a"), workspace(&mut e, "/b"));
    let in_a: Vec<AgentId> = (0..3).map(|_| agent(&mut e, &a, "/a", None)).collect();
    // b's agents are active last, by a clear millisecond.
    std::thread::sleep(std::time::Duration::from_millis(5));
    let lead = agent(&mut e, &b, "/b", None);
    let kid = agent(&mut e, &b, "/b", Some(lead));
    let grandkid = agent(&mut e, &b, "/b", Some(kid));
    let other = agent(&mut e, &b, "/b", None);
    // Workspace a selected, a tab of the middle of b's tree open (and a junk tab).
    let tabs = [kid.to_string(), "not an id".into()];
    let got = ids(&first_screen(&e, Some(a.as_str()), &tabs));
    let mut want: BTreeSet<AgentId> = in_a.iter().copied().collect();
    want.extend([lead, kid, grandkid]);
    assert_eq!(got, want);
    assert!(!got.contains(&other));
    // No workspace selected (or one that is gone): the one active last, b.
    for selected in [None, Some("gone"), Some("")] {
        let got = ids(&first_screen(&e, selected, &[]));
        assert_eq!(
            got,
            BTreeSet::from([lead, kid, grandkid, other]),
            "{selected:?}"
        );
    }
    // Its tracks come with it.
    let shown = first_screen(&e, Some(b.as_str()), &[]);
    let tracks = tracks_of(&e, &shown);
    let parents: Vec<AgentId> = tracks.iter().map(|t| t.parent_agent_id).collect();
    assert_eq!(parents.len(), 2);
    assert!(parents.contains(&lead) && parents.contains(&kid));
}

#[test]
fn window_pages_hold_every_card_once_oldest_first_and_follow_changes_between_them() {
    let mut e = Engine::new();
    let ws = workspace(&mut e, "/w");
    for _ in 0..10 {
        agent(&mut e, &ws, "/w", None);
    }
    let (first, next) = page(&e, None, 4);
    assert_eq!(first.len(), 4);
    let mut seen: Vec<AgentId> = first.iter().map(|a| a.record.id).collect();
    // Between pages: one more agent (created last, so it comes in a later page) and one
    // of the next page's archived (it never comes).
    std::thread::sleep(std::time::Duration::from_millis(5));
    let late = agent(&mut e, &ws, "/w", None);
    let (peek, _) = page(&e, next, 4);
    let archived = peek[0].record.id;
    e.archive(archived).unwrap();
    let mut after = next;
    while let Some(key) = after {
        let (agents, next) = page(&e, Some(key), 4);
        assert!(agents.iter().all(|a| super::key(a) > key));
        seen.extend(agents.iter().map(|a| a.record.id));
        after = next;
    }
    let all: Vec<AgentId> = agents_where(&e, |_| true)
        .iter()
        .map(|a| a.record.id)
        .collect();
    assert_eq!(seen, all, "every card once, oldest first");
    assert!(seen.contains(&late) && !seen.contains(&archived));
    // A page asks for at least one card, at most PAGE_MAX.
    assert_eq!(page(&e, None, 0).0.len(), 1);
}

#[test]
fn cards_carry_the_look_and_needs_you_and_quiet_tracks_their_counts_by_size() {
    let mut e = Engine::new();
    let workspace = workspace(&mut e, "/src");
    let mut make = |parent: Option<AgentId>| {
        let id = e
            .create(NewAgent {
                parent,
                initial_prompt: Some("ls".into()),
                ..NewAgent::new("shell", false, "/src", workspace.clone())
            })
            .unwrap();
        e.session_ready(id).unwrap();
        id
    };
    let (lead, other) = (make(None), make(None));
    let canceled = make(Some(lead));
    let failed = make(Some(lead));
    let quiet = make(Some(other));
    e.turn_ended(canceled, TurnOutcome::Canceled).unwrap();
    let failure = TurnOutcome::Failed {
        message: "boom".into(),
        detail: None,
    };
    e.turn_ended(failed, failure).unwrap();
    e.turn_ended(quiet, TurnOutcome::Completed).unwrap();
    e.mark_seen(quiet).unwrap();

    let rollups = e.usage_rollups();
    let card = |id: AgentId| -> Value {
        serde_json::to_value(AgentCard::of(&e, e.agent(id).unwrap(), &rollups)).unwrap()
    };
    assert_eq!(card(canceled)["look"], "canceled");
    assert_eq!(card(canceled)["bucket"], "done");
    assert_eq!(card(failed)["look"], "failed");
    assert_eq!(card(failed)["statusWord"], "failed");
    assert_eq!(card(failed)["needsYou"], true);
    assert_eq!(card(canceled)["needsYou"], Value::Null);
    // A window's event carries the card the snapshot has; other events go as they are.
    let snap = crate::runtime::AgentSnapshot::of(&e, e.agent(failed).unwrap());
    let updated = Event::AgentUpdated {
        agent: Box::new(snap),
    };
    let sent = serde_json::to_value(WindowEvent(&updated)).unwrap();
    assert_eq!(sent["type"], "agentUpdated");
    assert_eq!(sent["agent"], card(failed));
    let notice = Event::Notice {
        level: "warning".into(),
        message: "m".into(),
    };
    assert_eq!(
        serde_json::to_value(WindowEvent(&notice)).unwrap(),
        serde_json::to_value(&notice).unwrap()
    );
    // The lead's track has a failed child: its counts are its own. The other's is quiet: its
    // line comes once for its size (and for an empty track).
    let all = agents_where(&e, |_| true);
    let tracks = tracks_of(&e, &all);
    let busy: Vec<&WindowTrack> = tracks.iter().filter(|t| t.counts.is_some()).collect();
    assert_eq!(busy.len(), 1);
    assert_eq!(busy[0].parent_agent_id, lead);
    let quiet = serde_json::to_value(quiet_counts(&tracks)).unwrap();
    let quiet_line = |size: usize| {
        let pairs = quiet.as_array().unwrap();
        let tally = pairs.iter().find(|p| p[0] == size).unwrap();
        let parts = tally[1]["line"].as_array().unwrap();
        parts
            .iter()
            .map(|p| p["text"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
            .join(" · ")
    };
    assert_eq!(quiet_line(1), "0 running · 0 need you · 1 total");
    assert_eq!(quiet_line(0), "0 running · 0 need you · 0 total");
    assert_eq!(quiet.as_array().unwrap().len(), 2);
}
