//! File identity, for the commands that read some files and write others.

use std::path::Path;

/// Whether `a` and `b` name one existing file: the same path spelt differently, or a
/// symbolic or hard link to it (on Unix, the same device and inode; elsewhere the same
/// canonical path, which misses hard links). False when either does not exist.
///
/// A command that creates its output before it has read its input (or while it still
/// reads it) would otherwise truncate the input and report success on nothing.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    same_canonical_path(a, b)
}

/// [`same_file`] where there are no inodes: the same canonical path. Compiled for the tests
/// too, which check it on Unix.
#[cfg(any(test, not(unix)))]
fn same_canonical_path(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// What kind of not-a-file `path` is, if it exists and is a pipe, FIFO, socket or device:
/// `None` for a regular file, a directory, or a path that cannot be read (opening it says
/// why). An input read more than once (detected, then parsed; sized, then read) cannot be
/// one of these: a second read of a pipe finds it drained, and opening a FIFO again waits
/// for a writer that never comes.
pub fn not_a_file(path: &Path) -> Option<&'static str> {
    let kind = std::fs::metadata(path).ok()?.file_type();
    if kind.is_file() || kind.is_dir() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a pipe");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    Some("a device")
}

#[cfg(test)]
mod tests {
    use super::same_file;

    #[cfg(unix)]
    #[test]
    fn pipes_and_devices_are_not_files() {
        use super::not_a_file;
        use std::path::Path;
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").expect("write");
        assert_eq!(not_a_file(&file), None);
        assert_eq!(not_a_file(dir.path()), None);
        assert_eq!(not_a_file(&dir.path().join("missing")), None);
        assert_eq!(not_a_file(Path::new("/dev/null")), Some("a device"));
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        assert_eq!(not_a_file(&fifo), Some("a pipe"));
    }

    #[test]
    fn paths_and_links_to_one_file_are_the_same_file() {
        let dir = std::env::temp_dir().join(format!("flashkit-same-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let a = dir.join("a");
        let b = dir.join("b");
        std::fs::write(&a, b"x").expect("write a");
        std::fs::write(&b, b"x").expect("write b");
        // Both ways: inodes on Unix, canonical paths elsewhere.
        for same in [same_file, super::same_canonical_path] {
            assert!(same(&a, &a));
            assert!(same(&a, &dir.join(".").join("a")));
            assert!(!same(&a, &b), "equal contents are not one file");
            assert!(!same(&a, &dir.join("missing")));
        }
        #[cfg(unix)]
        {
            std::fs::hard_link(&a, dir.join("hard")).expect("hard link");
            std::os::unix::fs::symlink(&a, dir.join("soft")).expect("symlink");
            assert!(same_file(&a, &dir.join("hard")));
            assert!(same_file(&dir.join("soft"), &a));
        }
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
