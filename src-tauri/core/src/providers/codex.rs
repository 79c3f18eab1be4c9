//! placeholder
use super::{EventSink, Provider, ProviderError, ProviderInfo, Session, SessionSpec};
use crate::config::ProviderConfig;
use futures::future::BoxFuture;
pub struct CodexProvider {
    id: String,
    config: ProviderConfig,
}
impl CodexProvider {
    pub fn new(id: impl Into<String>, config: ProviderConfig) -> Self {
        CodexProvider {
            id: id.into(),
            config,
        }
    }
}
impl Provider for CodexProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: self.id.clone(),
            label: "Codex".into(),
            kind: "codex".into(),
            available: false,
            reason: Some("todo".into()),
            reads_prompts: true,
            models: self.config.models.clone(),
        }
    }
    fn start(
        &self,
        _spec: SessionSpec,
        _sink: EventSink,
    ) -> BoxFuture<'static, Result<Box<dyn Session>, ProviderError>> {
        Box::pin(async { Err(ProviderError::Invalid("todo".into())) })
    }
}
