//! Runnable programs showing real use of the toolkit; see the README. This library
//! holds the one piece the programs and their tests share: a webhook receiver.

pub mod receiver;
