//! Where the generated client meets the transport: the `ClientHooks` the
//! generated code calls around each operation, and the functions the
//! hand-written areas run a generated operation with.
//!
//! The hook completes and sends the request through the transport
//! (`transport.rs`), which returns what it saw beside the response; the
//! generated code passes on only the response, so that record waits in the
//! side channel (`side_channel.rs`) until [`call`] reads it back and makes the
//! error a caller can act on.

use std::future::Future;

use progenitor_client::{ClientHooks, OperationInfo, ResponseValue};
use serde::de::DeserializeOwned;

use crate::error::{ApiError, Error, Result};
use crate::generated;
use crate::operation::{Operation, OperationId};
use crate::read;
use crate::side_channel;
use crate::transport::{Record, Transport};

type RawError = progenitor_client::Error<generated::types::Error>;

impl ClientHooks<Transport> for generated::Client {
    async fn exec(
        &self,
        mut request: reqwest::Request,
        info: &OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        let shared = &self.inner.shared;
        let operation = match OperationId::from_operation_id(info.operation_id) {
            Some(id) => Operation::of(id),
            // The table is written from the same contract as this client.
            None => Operation::unlisted(request.method()),
        };
        let options = side_channel::options(&shared.defaults);
        shared.prepare(&mut request, &operation, &options);
        let (result, record) = shared.send(operation, request, &options).await;
        side_channel::leave(record);
        result
    }
}

/// Runs one generated operation whose answer is JSON, and reads it.
///
/// Every answer is read by one policy (`read.rs`): when the generated code refuses
/// a body, the body is read again tolerantly, so that only a missing or mistyped
/// required field fails the call.
pub(crate) async fn call<T: DeserializeOwned>(
    operation: impl Future<Output = std::result::Result<ResponseValue<T>, RawError>>,
) -> Result<T> {
    let (result, record) = side_channel::recorded(operation).await;
    match result {
        Ok(value) => Ok(value.into_inner()),
        Err(progenitor_client::Error::InvalidResponsePayload(body, _))
            if !record.answered_with_error() =>
        {
            read::tolerant(&body).map_err(|source| Error::Decode {
                operation: record.operation,
                body,
                source,
            })
        }
        Err(err) => Err(convert(err, record)),
    }
}

/// Runs one generated operation whose answer is not JSON (a document, a stream).
pub(crate) async fn send<T>(
    operation: impl Future<Output = std::result::Result<ResponseValue<T>, RawError>>,
) -> Result<T> {
    let (result, record) = side_channel::recorded(operation).await;
    result
        .map(ResponseValue::into_inner)
        .map_err(|err| convert(err, record))
}

fn convert(err: RawError, record: Record) -> Error {
    use progenitor_client::Error as Raw;
    record.into_error(|record| {
        let operation = record.operation;
        match err {
            Raw::InvalidRequest(message) | Raw::Custom(message) => Error::InvalidRequest(message),
            Raw::CommunicationError(source) => Error::Connection {
                attempts: record.attempts.max(1),
                source,
            },
            Raw::ResponseBodyError(source) | Raw::InvalidUpgrade(source) => Error::Body(source),
            Raw::InvalidResponsePayload(body, source) => Error::Decode {
                operation,
                body,
                source,
            },
            Raw::ErrorResponse(value) => {
                let body = serde_json::to_vec(value.as_ref()).unwrap_or_default();
                ApiError::from_response(value.status(), value.headers(), &body).into()
            }
            Raw::UnexpectedResponse(response) => Error::UnexpectedStatus {
                operation,
                status: response.status(),
            },
        }
    })
}
