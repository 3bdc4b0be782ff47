//! The host's files of the shared pace: where they live, and how they are
//! opened, read and written without following or trusting what is there.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// A state file this large was not written by a pace.
const MAX_BYTES: u64 = 1 << 20;

/// Where the processes of this host keep their shared pace unless told
/// otherwise: `$XDG_RUNTIME_DIR/mediagen`, else the user's cache directory's
/// `mediagen`; `None` (said at debug level) when the environment names neither.
pub(crate) fn default_dir() -> Option<PathBuf> {
    let dir = var_dir("XDG_RUNTIME_DIR")
        .or_else(cache_dir)
        .map(|dir| dir.join("mediagen"));
    if dir.is_none() {
        tracing::debug!(
            "the pace is this process's own: the environment names no runtime or cache directory"
        );
    }
    dir
}

fn var_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
}

fn cache_dir() -> Option<PathBuf> {
    if cfg!(windows) {
        var_dir("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        var_dir("HOME").map(|home| home.join("Library/Caches"))
    } else {
        var_dir("XDG_CACHE_HOME").or_else(|| var_dir("HOME").map(|home| home.join(".cache")))
    }
}

/// The state directory, readable by its owner only.
pub(super) fn create_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Opens (or creates) the regular file at `path`, readable by its owner only.
/// Whatever else is there (a link, a pipe, a file this user may not read) is
/// removed first: it is never followed, read or trusted.
pub(super) fn open_regular(path: &Path) -> io::Result<File> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => fs::remove_file(path)?,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
            fs::remove_file(path)?;
            options.open(path)
        }
        opened => opened,
    }
}

/// Reads the whole of `file` into `buffer`, up to [`MAX_BYTES`] and one more.
/// Two system calls when the file is no longer than what was read last time.
pub(super) fn read_all(file: &File, buffer: &mut Vec<u8>) -> io::Result<()> {
    let mut len = 0;
    buffer.resize(buffer.capacity().max(4096), 0);
    loop {
        if len == buffer.len() {
            buffer.resize(len * 2, 0);
        }
        let read = read_at(file, &mut buffer[len..], len as u64)?;
        len += read;
        if read == 0 || len as u64 > MAX_BYTES {
            break;
        }
    }
    buffer.truncate(len);
    Ok(())
}

#[cfg(unix)]
fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buffer, offset)
}

#[cfg(unix)]
pub(super) fn write_all_at_start(file: &File, bytes: &[u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, 0)
}

#[cfg(not(unix))]
fn read_at(mut file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    file.read(buffer)
}

#[cfg(not(unix))]
pub(super) fn write_all_at_start(mut file: &File, bytes: &[u8]) -> io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    file.seek(SeekFrom::Start(0))?;
    file.write_all(bytes)
}
