//! A provider session's life as the engine's effects and the session's reports drive it:
//! started (in its box, with its MCP access, bounded in time), fed, and closed; what the
//! actor keeps of it is [`super::sessions`].

use std::path::PathBuf;
use std::time::Duration;

use super::actor::Actor;
use super::internal::Internal;
use super::sessions::Buffered;
use crate::engine::SessionState;
use crate::model::AgentId;
use crate::providers::groups::GroupRecorder;
use crate::providers::{ProviderError, Session, SessionSpec};
use crate::store;

fn start_timeout_message(bound: Duration) -> String {
    format!(
        "the agent's session did not become ready within {} s; its process was stopped \
         (config.json startTimeoutSecs)",
        bound.as_secs()
    )
}

impl Actor {
    pub(super) fn start_session(&mut self, agent: AgentId, resume: Option<String>) {
        let Some(a) = self.engine.agent(agent) else {
            return;
        };
        let provider_id = a.record.provider.to_string();
        let cwd = PathBuf::from(&a.record.cwd);
        let mut config = crate::model::AgentConfig::clone(&a.record.config);
        if config.system_prompt_on_disk {
            // Read back for this session only: the record in memory stays at rest.
            let path = self.persist.record_path(agent, &a.record.cwd);
            let mut whole = (*a.record).clone();
            match store::read_back(&mut whole, &path) {
                Ok(()) => config = std::sync::Arc::unwrap_or_clone(whole.config),
                Err(e) => {
                    let _ = self.engine.session_failed(agent, &e.to_string());
                    return;
                }
            }
        }
        let provider = match self.providers.resolve(&provider_id) {
            Ok(p) => p,
            Err(e) => {
                let _ = self.engine.session_failed(agent, &e.to_string());
                return;
            }
        };
        // The one rule of who is contained (`Engine::contained`): the same the power rule and
        // every snapshot read.
        let contained = self
            .engine
            .agent(agent)
            .is_some_and(|a| self.engine.contained(a));
        let sandbox = match self.sandbox_plan(agent, &cwd, contained) {
            Ok(plan) => plan,
            Err(reason) => {
                let _ = self.engine.session_failed(agent, &reason);
                return;
            }
        };
        if let Some((_, Some(s))) = self.sessions.remove(agent) {
            self.spawn_close(agent, s);
        }
        let generation = self.sessions.open(agent);
        let spec = SessionSpec {
            agent_id: agent,
            provider: provider_id,
            cwd,
            config,
            resume,
            env: self.sessions.env().clone(),
            mcp: self.access.as_ref().and_then(|x| x.issue(agent)),
            groups: Some(GroupRecorder::new(self.layout.run_dir())),
            sandbox,
        };
        let mut sink = self.sessions.sink(agent, generation);
        if let Some(access) = &self.access {
            sink = sink.with_redactor(access.clone());
        }
        let tx = self.internal_tx.clone();
        let fut = provider.start(spec, sink);
        let bound = self.sessions.start_timeout();
        tokio::spawn(async move {
            // A start that never returns is dropped, and with it its process group (SIGKILL).
            let result = match tokio::time::timeout(bound, fut).await {
                Ok(r) => r,
                Err(_) => Err(ProviderError::Protocol(start_timeout_message(bound))),
            };
            let _ = tx.send(Internal::Started {
                agent,
                generation,
                result,
            });
        });
        // A session that started but never becomes ready (a CLI that never answers its
        // handshake) is bounded too (SPEC 11).
        let tx = self.internal_tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(bound).await;
            let _ = tx.send(Internal::StartTimeout { agent, generation });
        });
    }

    /// The box of an agent's session (SPEC 16), with its private temp folder made; `Err` says
    /// why a contained agent cannot start.
    fn sandbox_plan(
        &self,
        agent: AgentId,
        cwd: &std::path::Path,
        contained: bool,
    ) -> Result<Option<crate::sandbox::Plan>, String> {
        if !contained {
            return Ok(None);
        }
        let tmp = self.layout.agent_tmp(agent);
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&tmp)
            .map_err(|e| format!("cannot make its private temp folder {}: {e}", tmp.display()))?;
        self.containment.agent_plan(cwd, &tmp, false)
    }

    /// A start of `generation` returned: the current one gets its buffered input (or fails);
    /// one closed or replaced meanwhile is stopped now.
    pub(super) fn session_started(
        &mut self,
        agent: AgentId,
        generation: u64,
        result: Result<Box<dyn Session>, ProviderError>,
    ) {
        let current = self.sessions.is_current(agent, generation);
        match (current, result) {
            (true, Ok(session)) => {
                if let Err((e, session)) = self.sessions.started(agent, session) {
                    self.spawn_close(agent, session);
                    let _ = self.engine.session_exited(agent, &e.to_string());
                }
            }
            (true, Err(e)) => {
                self.sessions.remove(agent);
                self.revoke(agent);
                tracing::warn!(%agent, error = %e, "session failed to start");
                let _ = self.engine.session_failed(agent, &e.to_string());
            }
            (false, Ok(session)) => {
                // Closed (or replaced) while starting: stop it now.
                let doomed = self.sessions.take_doomed(agent, generation);
                tokio::spawn(async move {
                    session.close().await;
                    if let Some(tx) = doomed {
                        let _ = tx.send(true);
                    }
                });
            }
            (false, Err(_)) => {
                if let Some(tx) = self.sessions.take_doomed(agent, generation) {
                    let _ = tx.send(true);
                }
            }
        }
    }

    /// The start of `generation` passed its bound: unless it became ready meanwhile, the agent
    /// goes `error` with the reason and the session's process tree is stopped.
    pub(super) fn start_timed_out(&mut self, agent: AgentId, generation: u64) {
        let current = self.sessions.is_current(agent, generation);
        let starting = self
            .engine
            .agent(agent)
            .is_some_and(|a| a.session == SessionState::Starting);
        if !current || !starting {
            return;
        }
        let message = start_timeout_message(self.sessions.start_timeout());
        tracing::warn!(%agent, "{message}");
        // Closes the session, or dooms the start still under way (closed when it returns).
        self.close_session(agent);
        if let Err(e) = self.engine.session_failed(agent, &message) {
            tracing::warn!(%agent, error = %e, "start timeout");
        }
    }

    pub(super) fn with_session(&mut self, agent: AgentId, b: Buffered) {
        if let Err(e) = self.sessions.feed(agent, b) {
            tracing::warn!(%agent, error = %e, "session refused input");
            self.end_session(agent);
            let _ = self.engine.session_exited(agent, &e.to_string());
        }
    }

    /// The session's process went (or must go): its slot goes, and its session is closed.
    pub(super) fn end_session(&mut self, agent: AgentId) {
        if let Some((_, Some(s))) = self.sessions.remove(agent) {
            self.spawn_close(agent, s);
        }
    }

    pub(super) fn close_session(&mut self, agent: AgentId) {
        self.stop_waiting(agent);
        let Some((generation, session)) = self.sessions.remove(agent) else {
            return;
        };
        self.revoke(agent);
        match session {
            Some(s) => self.spawn_close(agent, s),
            None => self.sessions.doom(agent, generation),
        }
    }

    /// An agent's MCP token works only while it has a runtime (SPEC 14): closing or losing the
    /// session ends it; the next start issues a new one.
    pub(super) fn revoke(&self, agent: AgentId) {
        if let Some(a) = &self.access {
            a.revoke(agent);
        }
    }

    pub(super) fn spawn_close(&mut self, agent: AgentId, s: Box<dyn Session>) {
        self.revoke(agent);
        self.sessions.close(agent, s);
    }
}
