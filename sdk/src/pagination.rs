//! Cursor pagination: every list of the service is `{data, nextCursor, hasMore}`;
//! pass `nextCursor` as `cursor` until `hasMore` is false.

use std::future::Future;

use futures::{Stream, TryStreamExt, stream};
use serde::Deserialize;

use crate::error::Result;

/// One page of a list.
///
/// ```
/// let page: mediagen::Page<u32> = serde_json::from_str(
///     r#"{"data": [1, 2], "nextCursor": "c2", "hasMore": true}"#,
/// )?;
/// assert_eq!((page.items, page.next_cursor.as_deref(), page.has_more), (vec![1, 2], Some("c2"), true));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Page<T> {
    /// The items, newest first.
    pub items: Vec<T>,
    /// The cursor of the next page; `None` on the last.
    pub next_cursor: Option<String>,
    /// Whether a further page exists.
    pub has_more: bool,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Page<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<T> {
            data: Vec<T>,
            #[serde(default)]
            next_cursor: Option<String>,
            #[serde(default)]
            has_more: bool,
        }
        let wire = Wire::deserialize(deserializer)?;
        Ok(Page {
            items: wire.data,
            next_cursor: wire.next_cursor,
            has_more: wire.has_more,
        })
    }
}

/// All items of a list, fetching page after page as the stream is read.
///
/// Stops after a page without `hasMore` or without a cursor, and when the service
/// hands back the cursor it was given (which would loop for ever).
pub(crate) fn paginate<'a, T, F, Fut>(fetch: F) -> impl Stream<Item = Result<T>> + Send + Unpin + 'a
where
    T: Send + 'a,
    F: FnMut(Option<String>) -> Fut + Send + 'a,
    Fut: Future<Output = Result<Page<T>>> + Send + 'a,
{
    Box::pin(
        stream::try_unfold(
            (fetch, Some(None::<String>)),
            |(mut fetch, cursor)| async move {
                let Some(cursor) = cursor else {
                    return Ok::<_, crate::Error>(None);
                };
                let page = fetch(cursor.clone()).await?;
                let next = match page.next_cursor {
                    Some(next) if page.has_more && Some(&next) != cursor.as_ref() => {
                        Some(Some(next))
                    }
                    _ => None,
                };
                let items = stream::iter(page.items.into_iter().map(Ok));
                Ok(Some((items, (fetch, next))))
            },
        )
        .try_flatten(),
    )
}

/// Maps the generated list wrappers (`{data, nextCursor, hasMore}`) to pages.
pub(crate) fn page<G, T>(
    items: Vec<G>,
    next_cursor: Option<String>,
    has_more: bool,
    map: impl FnMut(G) -> T,
) -> Page<T> {
    Page {
        items: items.into_iter().map(map).collect(),
        next_cursor,
        has_more,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::{StreamExt, TryStreamExt};

    #[tokio::test]
    async fn every_page_is_fetched_in_order_until_has_more_is_false() {
        let pages = [
            Page {
                items: vec![1, 2],
                next_cursor: Some("a".to_owned()),
                has_more: true,
            },
            Page {
                items: vec![3],
                next_cursor: Some("b".to_owned()),
                has_more: true,
            },
            Page {
                items: vec![4],
                next_cursor: None,
                has_more: false,
            },
        ];
        let mut seen = Vec::new();
        let items: Vec<u32> = paginate(|cursor| {
            seen.push(cursor.clone());
            let index = match cursor.as_deref() {
                None => 0,
                Some("a") => 1,
                _ => 2,
            };
            let page = pages[index].clone();
            async move { Ok(page) }
        })
        .try_collect()
        .await
        .unwrap();
        assert_eq!(items, [1, 2, 3, 4]);
        assert_eq!(seen, [None, Some("a".to_owned()), Some("b".to_owned())]);
    }

    #[tokio::test]
    async fn a_cursor_handed_back_unchanged_ends_the_stream() {
        let items: Vec<u32> = paginate(|_| async {
            Ok(Page {
                items: vec![1],
                next_cursor: Some("same".to_owned()),
                has_more: true,
            })
        })
        .take(10)
        .try_collect()
        .await
        .unwrap();
        assert_eq!(items, [1, 1]);
    }
}
