//! Permission requests (SPEC 2, 9).

use super::*;

#[test]
fn permission_sets_needs_input_and_answer_clears_it() {
    let mut f = Fx::new();
    let id = f.running(None, "w1");
    f.e.permission_requested(id, permission("r1")).unwrap();
    assert_eq!(f.status(id), Status::Running);
    assert_eq!(
        f.e.agent(id).unwrap().record.attention_reason,
        Some(AttentionReason::Permission)
    );
    assert_eq!(f.bucket("w1"), Some(Bucket::NeedsInput));
    // Opening does not clear a pending permission.
    f.e.mark_seen(id).unwrap();
    assert_eq!(f.bucket("w1"), Some(Bucket::NeedsInput));
    assert!(f.e.answer_permission(id, "nope", true).is_err());
    f.e.answer_permission(id, "r1", false).unwrap();
    assert_eq!(f.bucket("w1"), Some(Bucket::Running));
    let o = f.e.take_outcome();
    assert!(o.effects.contains(&Effect::AnswerPermission {
        agent: id,
        request_id: "r1".into(),
        allow: false
    }));
}
