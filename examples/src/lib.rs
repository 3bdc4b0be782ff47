//! Runnable programs showing real use of the toolkit; see the README. This library
//! holds the pieces the programs and their tests share: a webhook receiver, and its
//! durable form.

pub mod durable;
pub mod receiver;
