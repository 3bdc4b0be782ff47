//! What the mock renders rather than stores: the result files behind
//! `outputUrls` (`media.rs`) and the invoice and closing act as PDF (`pdf/`).

pub mod media;
pub mod pdf;
