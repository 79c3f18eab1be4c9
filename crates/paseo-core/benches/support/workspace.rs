//! The workspace records the engine benches register their agents in.

use paseo_core::model::{ProjectId, Timestamp, WorkspaceKind, WorkspaceRecord};

/// Workspace `w{i}` in `/src/w{i}`, a plain directory of project `p`.
pub fn ws(i: usize) -> WorkspaceRecord {
    WorkspaceRecord {
        workspace_id: format!("w{i}").parse().unwrap(),
        project_id: "p".parse::<ProjectId>().unwrap(),
        cwd: format!("/src/w{i}"),
        kind: WorkspaceKind::Directory,
        display_name: format!("w{i}"),
        name: None,
        created_at: Timestamp::from_millis(0),
        updated_at: Timestamp::from_millis(0),
        archived_at: None,
        repo: None,
        branch: None,
        created_by_agent_id: None,
        created_by_request: None,
        extra: Default::default(),
    }
}
