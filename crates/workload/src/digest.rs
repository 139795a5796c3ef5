//! What results keep of a file a workload file names, instead of its content (crate::dictionary).

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

/// What a result keeps of a file: its SHA-256 (hex) and size in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digest {
    pub sha256: String,
    pub bytes: u64,
}

impl Digest {
    pub fn of(content: &[u8]) -> Digest {
        let hash = sha2::Sha256::digest(content);
        Digest {
            sha256: hash.iter().map(|b| format!("{b:02x}")).collect(),
            bytes: content.len() as u64,
        }
    }
}
