//! The service's rules as plain Rust, with no HTTP in them: each rule of the
//! service document lives in one place here, and routes only call it.

pub mod address;
pub mod auth;
pub mod billing;
pub mod catalog;
pub mod fault;
pub mod file;
pub mod generation;
pub mod idempotency;
pub mod ledger;
pub mod moderation;
pub mod money;
pub mod outcome;
pub mod rate_limit;
pub mod requisites;
pub mod webhook;

/// Users are identified by a UUID.
pub type UserId = uuid::Uuid;
