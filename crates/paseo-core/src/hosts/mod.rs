//! Hosts (SPEC 17): other machines the user reaches with the system OpenSSH client, whose
//! backends the app drives with the same API it uses locally. [`protocol`] is the frames.

pub mod protocol;
