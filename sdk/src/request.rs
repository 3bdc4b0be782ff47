//! Any operation of the service by its method and path, for what the typed
//! areas do not cover yet (a new operation, an experiment), with the same
//! authentication, pacing, retry rule and error reading as every other call.

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::generated;
use crate::options::Call;
use crate::transport::{Operation, call_raw};

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

/// The contract's operation a method and path are, if any: its id and template.
fn operation_of(method: &Method, path: &str) -> Option<&'static str> {
    let path = path.split('?').next().unwrap_or(path);
    let segments = |p: &str| -> Vec<String> {
        p.trim_end_matches('/')
            .split('/')
            .map(str::to_owned)
            .collect()
    };
    let given = segments(path);
    generated::OPERATIONS
        .iter()
        .find(|(_, m, template)| {
            let wanted = segments(template);
            *m == method.as_str()
                && wanted.len() == given.len()
                && wanted
                    .iter()
                    .zip(&given)
                    .all(|(w, g)| (w.starts_with('{') && !g.is_empty()) || w == g)
        })
        .map(|(id, _, _)| *id)
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
            let id = operation_of(&method, &path).unwrap_or("request");
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
            let shared = self.shared();
            shared.prepare(&mut request, id);
            let response = call_raw(shared, Operation::of(id, &method), request).await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_and_path_name_their_operation_of_the_contract() {
        let id = "6f1c0f4e-0000-4000-8000-000000000000";
        assert_eq!(
            operation_of(&Method::POST, "/v1/generations"),
            Some("create_generation")
        );
        assert_eq!(
            operation_of(&Method::GET, &format!("/v1/generations/{id}")),
            Some("get_generation")
        );
        assert_eq!(
            operation_of(&Method::GET, "/v1/generations?limit=5"),
            Some("list_generations")
        );
        assert_eq!(
            operation_of(&Method::GET, "/v1/catalog/"),
            Some("list_catalog")
        );
        assert_eq!(operation_of(&Method::GET, "/v1/nothing"), None);
        assert_eq!(operation_of(&Method::DELETE, "/v1/generations"), None);
    }
}
