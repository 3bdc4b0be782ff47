//! Input files: announced with `POST /v1/files`, then their bytes PUT to the
//! presigned URL, read, and deleted.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Store;
use crate::domain::UserId;
use crate::domain::file::{FileStatus, StoredFile, UploadError};

impl Store {
    /// Records a file announced for upload.
    pub fn add_file(&mut self, file: StoredFile) {
        self.files.insert(file.id, file);
    }

    /// The caller's file `id`; another user's is not found.
    pub fn own_file(&self, user_id: UserId, id: Uuid) -> Option<&StoredFile> {
        self.files.get(&id).filter(|f| f.user_id == user_id)
    }

    /// A file whose bytes have arrived, by id alone (its URL needs no key).
    pub fn uploaded_file(&self, id: Uuid) -> Option<&StoredFile> {
        self.files
            .get(&id)
            .filter(|f| f.status == FileStatus::Uploaded)
    }

    /// Removes the caller's file; false when there is none.
    pub fn delete_file(&mut self, user_id: UserId, id: Uuid) -> bool {
        if self.own_file(user_id, id).is_none() {
            return false;
        }
        self.files.remove(&id).is_some()
    }

    /// Stores the bytes PUT to a file's upload URL (its signature already checked):
    /// the declared content type, and no more bytes than declared. An upload
    /// without a `Content-Type` is of the declared type: the contract lets a
    /// client send nothing beyond `Content-Length` when the answer gave no
    /// `uploadHeaders` (as `--responses minimal` does).
    pub fn receive_upload(
        &mut self,
        id: Uuid,
        content_type: Option<&str>,
        bytes: Vec<u8>,
        now: DateTime<Utc>,
    ) -> Result<(), UploadError> {
        let stored = self.files.get_mut(&id).ok_or(UploadError::Deleted)?;
        if content_type.is_some_and(|given| given != stored.content_type) {
            return Err(UploadError::WrongType(stored.content_type.clone()));
        }
        let given = bytes.len() as u64;
        if given > stored.size_bytes {
            return Err(UploadError::TooLarge {
                given,
                declared: stored.size_bytes,
            });
        }
        stored.bytes = bytes;
        stored.status = FileStatus::Uploaded;
        stored.uploaded_at = Some(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{at, with_user};

    fn announced(store: &mut Store, user_id: UserId) -> Uuid {
        let file = StoredFile::new(user_id, "cat.png".into(), "image/png".into(), 4, at(0));
        let id = file.id;
        store.add_file(file);
        id
    }

    #[test]
    fn an_upload_of_the_declared_type_and_size_makes_the_file_readable() {
        let (mut store, user) = with_user(0.0);
        let id = announced(&mut store, user.user_id);
        assert!(store.uploaded_file(id).is_none(), "no bytes yet");

        store
            .receive_upload(id, Some("image/png"), b"\x89PNG".to_vec(), at(1))
            .unwrap();

        let file = store.uploaded_file(id).unwrap();
        assert_eq!(
            (file.bytes.as_slice(), file.uploaded_at),
            (&b"\x89PNG"[..], Some(at(1)))
        );
    }

    #[test]
    fn an_upload_without_a_content_type_is_of_the_declared_type() {
        let (mut store, user) = with_user(0.0);
        let id = announced(&mut store, user.user_id);

        store
            .receive_upload(id, None, b"\x89PNG".to_vec(), at(1))
            .unwrap();

        assert_eq!(store.uploaded_file(id).unwrap().content_type, "image/png");
    }

    #[test]
    fn an_upload_of_another_type_more_bytes_or_a_deleted_file_is_refused() {
        let (mut store, user) = with_user(0.0);
        let id = announced(&mut store, user.user_id);

        assert_eq!(
            store.receive_upload(id, Some("image/jpeg"), vec![0; 4], at(1)),
            Err(UploadError::WrongType("image/png".into()))
        );
        assert_eq!(
            store.receive_upload(id, Some("image/png"), vec![0; 5], at(1)),
            Err(UploadError::TooLarge {
                given: 5,
                declared: 4
            })
        );
        assert!(
            !store.delete_file(UserId::new_v4(), id),
            "not another user's"
        );
        assert!(store.delete_file(user.user_id, id));
        assert_eq!(
            store.receive_upload(id, Some("image/png"), vec![0; 4], at(1)),
            Err(UploadError::Deleted)
        );
    }
}
