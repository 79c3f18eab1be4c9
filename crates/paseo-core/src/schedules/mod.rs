//! Schedules (SPEC 20) at work: the ledger of what each did (`ledger.rs`, the file
//! `schedules.json`) and the scheduler that fires them through the one door (`runner.rs`). The
//! rule of when and what is pure, in [`crate::model::schedule`]; the schedules themselves are
//! config.json's (`config/schedules.rs`). It sits above the server: a schedule's run is an
//! ordinary request, as the user's.

pub mod book;
pub mod ledger;
pub mod runner;

pub use ledger::Ledger;
pub use runner::{Runner, Scheduler, DUE_LABEL, SCHEDULE_LABEL};
