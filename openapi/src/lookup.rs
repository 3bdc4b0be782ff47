//! Finding the operation of a request by its concrete path, for a reader
//! that has no router's matched template (a client, a test).

use crate::operations::OperationId;

impl OperationId {
    /// The operation a method and a concrete path are (a query is ignored;
    /// `HEAD` goes with `GET`), if the contract has one.
    ///
    /// ```
    /// use mediagen_openapi::operations::OperationId;
    ///
    /// let read = OperationId::from_path("GET", "/v1/generations/6f1c0f4e?x=1");
    /// assert_eq!(read, Some(OperationId::GetGeneration));
    /// assert_eq!(OperationId::from_path("GET", "/v1/catalog/"), Some(OperationId::ListCatalog));
    /// assert_eq!(OperationId::from_path("DELETE", "/v1/generations"), None);
    /// ```
    pub fn from_path(method: &str, path: &str) -> Option<Self> {
        let method = if method == "HEAD" { "GET" } else { method };
        let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
        let given = path.split('/');
        Self::ALL.into_iter().find(|op| {
            let template = op.path().trim_end_matches('/').split('/');
            op.method() == method
                && template.clone().count() == given.clone().count()
                && template
                    .zip(given.clone())
                    .all(|(t, g)| (t.starts_with('{') && !g.is_empty()) || t == g)
        })
    }
}
