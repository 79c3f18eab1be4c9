//! The undo of a detach through the runtime (SPEC 3, 14): a detached agent goes back under the
//! agent that created it when that narrows power, with the reach checked on disk; a child with
//! more power than its parent (a start the user allowed) stays a root, and the refusal says why
//! and changes nothing.

use super::powers::{create_child, held, made_by_user};
use super::*;
use crate::support::Door;
use paseo_core::model::Power;

#[tokio::test]
async fn a_detach_is_undone_only_when_it_narrows_power() {
    let h = Harness::start().await;
    let asker = made_by_user(&h, "asker", None).await;
    assert_eq!(asker.power, Power::Asks);
    let c = h.as_agent(asker.id()).await;

    // An equal child: detached, then put back, in the track again and on disk.
    let equal = create_child(&c, "asker", "ok equal").await;
    h.idle(equal).await;
    h.h().detach(equal).await.unwrap();
    h.h().reattach(equal, asker.id(), true).await.unwrap();
    assert_eq!(
        h.h().get(equal).await.unwrap().parent_agent_id,
        None,
        "a check changes nothing"
    );
    h.h().reattach(equal, asker.id(), false).await.unwrap();
    let back = h.h().get(equal).await.unwrap();
    assert_eq!(back.parent_agent_id, Some(asker.id()));
    assert_eq!(
        back.record.parent_agent_id(),
        Some(asker.id()),
        "the label is back"
    );
    let track = h.h().snapshot().await.unwrap().tracks;
    assert!(
        track
            .iter()
            .any(|t| t.parent_agent_id == asker.id() && t.members.contains(&equal)),
        "back in its parent's track"
    );

    // A child that acts without asking (the user allowed its start): detached, it cannot go
    // back under an asking parent.
    let wide = create_child(&c, "script", "ok wide").await;
    let req = held(&h, wide).await.pending_permission.unwrap();
    h.h()
        .answer_permission(wide, req.request_id, true)
        .await
        .unwrap();
    h.idle(wide).await;
    h.h().detach(wide).await.unwrap();
    for check in [true, false] {
        let e = h.h().reattach(wide, asker.id(), check).await.unwrap_err();
        assert_eq!(e.code(), "conflict");
        assert!(e.to_string().contains("acts without asking"), "{e}");
    }
    assert_eq!(h.h().get(wide).await.unwrap().parent_agent_id, None);

    // Only its creator takes it back.
    let other = made_by_user(&h, "asker", None).await;
    let e = h.h().reattach(equal, other.id(), false).await.unwrap_err();
    assert!(e.to_string().contains("already has a parent"), "{e}");
    h.h().detach(equal).await.unwrap();
    let e = h.h().reattach(equal, other.id(), false).await.unwrap_err();
    assert!(
        e.to_string().contains("only the agent that created it"),
        "{e}"
    );
    h.stop().await;
}
