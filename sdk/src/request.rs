//! Any operation of the service by its method and path, for what the typed
//! areas do not cover yet (a new operation, an experiment), with the same
//! authentication, pacing, retry rule and error reading as every other call.

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};

use crate::call::Call;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::operation::Operation;
use crate::side_channel;

/// The answer to [`Client::request`]: a status below 400, its headers and body.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RawResponse {
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The body, as sent.
    pub body: Bytes,
}

impl RawResponse {
    /// The body read as JSON; an empty body is `null`.
    pub fn json(&self) -> Result<serde_json::Value> {
        if self.body.is_empty() {
            return Ok(serde_json::Value::Null);
        }
        serde_json::from_slice(&self.body).map_err(|source| Error::Decode {
            operation: "request",
            body: self.body.clone(),
            source,
        })
    }
}

impl Client {
    /// Sends `method path` (a path of the service with its query, such as
    /// `/v1/generations?limit=5`) with an optional JSON body, and answers the
    /// response when its status is below 400; an error answer is
    /// [`Error::Api`], as for every call.
    ///
    /// The request is one of the contract's operations when its method and path
    /// match one, and then repeats by that operation's rule (a create carries an
    /// `Idempotency-Key`); otherwise `GET`, `PUT` and `DELETE` are repeated and
    /// any other method is not. The key goes only to the client's base URL: a
    /// path must start with `/`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let answer = client.request(http::Method::GET, "/v1/billing/balance", None).await?;
    /// assert!(answer.json()?["availableRub"].is_number());
    /// # Ok(())
    /// # }
    /// ```
    pub fn request(
        &self,
        method: Method,
        path: impl Into<String>,
        body: Option<serde_json::Value>,
    ) -> Call<'_, RawResponse> {
        let path = path.into();
        Call::new(async move {
            if !path.starts_with('/') || path.starts_with("//") {
                return Err(Error::InvalidRequest(format!(
                    "{path:?} is not a path of the service: it must start with one '/'"
                )));
            }
            let url = reqwest::Url::parse(&format!("{}{path}", self.base_url()))
                .map_err(|err| Error::InvalidRequest(format!("{path:?}: {err}")))?;
            let mut request = reqwest::Request::new(method.clone(), url);
            if let Some(body) = &body {
                let bytes = serde_json::to_vec(body)
                    .map_err(|err| Error::InvalidRequest(format!("the body: {err}")))?;
                request.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/json"),
                );
                *request.body_mut() = Some(bytes.into());
            }
            let operation = Operation::of_request(&method, &path);
            let shared = self.shared();
            let options = side_channel::options(&shared.defaults);
            shared.prepare(&mut request, &operation, &options);
            let response = match shared.send(operation, request, &options).await {
                (Ok(response), _) if response.status().as_u16() < 400 => response,
                (Ok(response), record) => {
                    return Err(record.into_error(|record| Error::UnexpectedStatus {
                        operation: record.operation,
                        status: response.status(),
                    }));
                }
                (Err(source), record) => {
                    return Err(record.into_error(|record| Error::Connection {
                        attempts: record.attempts.max(1),
                        source,
                    }));
                }
            };
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.bytes().await.map_err(Error::Body)?;
            Ok(RawResponse {
                status,
                headers,
                body,
            })
        })
    }
}
