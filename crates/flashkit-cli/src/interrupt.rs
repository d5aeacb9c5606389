//! Ctrl-C (SIGINT, and SIGTERM): remove the temporary files a run made, then exit 130.
//!
//! The external sort keeps its runs in a scratch file as large as twice its input, the disk
//! probe fills a file of a gigabyte, and `reproduce flashmodel` sorts in a temporary
//! directory; each is removed when its run returns, but an interrupted process returns
//! nothing, and a user who stops a long sort would find gigabytes left in the output's
//! directory. Outputs being written are on the list too ([`crate::output::Staged`]): they
//! are written under a temporary name and renamed into place when whole.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Files and directories to remove if the process is interrupted.
static TEMPORARY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Install the handler (once, at start-up). A failure to install it (a handler already
/// set by an embedding program) leaves the default behaviour, so it is not an error.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        let removed = remove_all();
        if removed > 0 {
            eprintln!("\ninterrupted: removed {removed} temporary file(s)");
        } else {
            eprintln!("\ninterrupted");
        }
        std::process::exit(130);
    });
}

/// Remove `path` (a file, or a directory and everything in it) if the process is
/// interrupted before [`Temporary`] is dropped.
#[must_use = "the path is forgotten when the guard is dropped"]
pub fn temporary(path: &Path) -> Temporary {
    TEMPORARY
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(path.to_path_buf());
    Temporary(path.to_path_buf())
}

/// Keeps a path on the list of [`temporary`] ones while it lives; dropping it takes the
/// path off (whoever made the file removes it on a normal return).
pub struct Temporary(PathBuf);

impl Drop for Temporary {
    fn drop(&mut self) {
        let mut list = TEMPORARY.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = list.iter().rposition(|p| *p == self.0) {
            list.swap_remove(i);
        }
    }
}

/// Remove every listed path that exists; how many were removed.
fn remove_all() -> usize {
    let list = TEMPORARY.lock().unwrap_or_else(PoisonError::into_inner);
    list.iter()
        .filter(|path| {
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(path)
            } else {
                std::fs::remove_file(path)
            };
            removed.is_ok()
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_paths_are_removed_until_their_guard_drops() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("scratch.tmp");
        let tree = dir.path().join("work");
        std::fs::write(&file, b"runs").expect("write");
        std::fs::create_dir_all(tree.join("deep")).expect("mkdir");
        std::fs::write(tree.join("deep").join("x"), b"x").expect("write");
        let kept = dir.path().join("kept.tmp");
        std::fs::write(&kept, b"kept").expect("write");
        {
            let _dropped = temporary(&kept);
        }
        let _file = temporary(&file);
        let _tree = temporary(&tree);
        let _missing = temporary(&dir.path().join("never-made"));
        assert_eq!(remove_all(), 2);
        assert!(!file.exists() && !tree.exists());
        assert!(kept.exists(), "a path whose guard dropped is not removed");
    }
}
