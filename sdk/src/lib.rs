#![doc = include_str!("../README.md")]

// Written by the generator from openapi/openapi.json; see openapi/README.md.
#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, missing_debug_implementations, unused_qualifications, unused_imports)]
mod generated;

pub use generated::{ByteStream, Client, ClientInfo, Error, ResponseValue, types};
