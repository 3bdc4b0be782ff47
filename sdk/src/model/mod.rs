//! The records and enumerations of the service that this crate writes by hand.
//! The generated code uses them in place of its own (see `openapi/README.md`),
//! so none of them imports the generated code.

pub(crate) mod billing;
pub(crate) mod catalog;
pub(crate) mod file;
pub(crate) mod generation;
pub(crate) mod webhook;
