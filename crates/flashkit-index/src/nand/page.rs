//! The 32-byte header every page of the NAND B-tree starts with.
//!
//! ```text
//! 0     u8   kind: 0xD1 node image, 0x1E log page
//! 1     u8   format version (1)
//! 2     u16  payload bytes after the header
//! 4     u32  node id (the image's node; the node whose records a log page holds)
//! 8     u64  write sequence number (one counter for every page the store programs)
//! 16    u32  index block set id
//! 20    u16  blocks the set was opened with (m)
//! 22    u16  position of the block in its set
//! 24    u16  log pages the block's log area started with (k)
//! 26    u16  reserved (0)
//! 28    u32  checksum: low 32 bits of xxh3 over bytes 0..28 and the payload
//! ```
//!
//! The set fields repeat in every page of a block, so a block's role survives a restart
//! without a separate metadata page; the sequence number orders pages for checking.

use crate::nand::NodeId;
use crate::nand::node::read_u32;
use flashkit_core::StateHasher;

/// Bytes of the page header.
pub const HEADER_BYTES: usize = 32;

const VERSION: u8 = 1;

/// What a page holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageKind {
    /// A node's full image.
    Node,
    /// Log records of one node.
    Log,
}

impl PageKind {
    fn byte(self) -> u8 {
        match self {
            PageKind::Node => 0xD1,
            PageKind::Log => 0x1E,
        }
    }
}

/// The role of the block a page is in: which index block set, and where in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockTag {
    /// The set.
    pub set: u32,
    /// Blocks the set was opened with.
    pub set_blocks: u16,
    /// This block's position in the set.
    pub position: u16,
    /// Log pages the block's log area started with.
    pub base_log_pages: u16,
}

/// A decoded page header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageHeader {
    /// Node image or log page.
    pub kind: PageKind,
    /// The node.
    pub node: NodeId,
    /// Write sequence number.
    pub seq: u64,
    /// The block's role.
    pub tag: BlockTag,
}

fn checksum(head: &[u8], payload: &[u8]) -> u32 {
    let mut h = StateHasher::new();
    h.bytes(head);
    h.bytes(payload);
    h.finish() as u32
}

impl PageHeader {
    /// Write the header followed by `payload` into `out` (cleared first).
    pub fn write_page(&self, payload: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.push(self.kind.byte());
        out.push(VERSION);
        out.extend_from_slice(&(payload.len() as u16).to_le_bytes());
        out.extend_from_slice(&self.node.0.to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&self.tag.set.to_le_bytes());
        out.extend_from_slice(&self.tag.set_blocks.to_le_bytes());
        out.extend_from_slice(&self.tag.position.to_le_bytes());
        out.extend_from_slice(&self.tag.base_log_pages.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        let sum = checksum(&out[..28], payload);
        out.extend_from_slice(&sum.to_le_bytes());
        out.extend_from_slice(payload);
    }

    /// Decode a page: its header and payload. The error names the field that is wrong.
    pub fn read_page(bytes: &[u8]) -> Result<(PageHeader, &[u8]), String> {
        if bytes.len() < HEADER_BYTES {
            return Err(format!(
                "header: {} bytes, {HEADER_BYTES} needed",
                bytes.len()
            ));
        }
        let kind = match bytes[0] {
            0xD1 => PageKind::Node,
            0x1E => PageKind::Log,
            other => {
                return Err(format!(
                    "kind: {other:#04x} is neither a node nor a log page"
                ));
            }
        };
        if bytes[1] != VERSION {
            return Err(format!(
                "version: {} (this build reads {VERSION})",
                bytes[1]
            ));
        }
        let len = usize::from(u16::from_le_bytes([bytes[2], bytes[3]]));
        let payload = bytes
            .get(HEADER_BYTES..HEADER_BYTES + len)
            .ok_or_else(|| format!("payload length: {len} bytes, the page holds fewer"))?;
        let stored = read_u32(bytes, 28);
        let computed = checksum(&bytes[..28], payload);
        if stored != computed {
            return Err(format!(
                "checksum: stored {stored:#010x}, computed {computed:#010x}"
            ));
        }
        let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        Ok((
            PageHeader {
                kind,
                node: NodeId(read_u32(bytes, 4)),
                seq: u64::from_le_bytes(
                    bytes[8..16].try_into().expect("invariant: an 8-byte slice"),
                ),
                tag: BlockTag {
                    set: read_u32(bytes, 16),
                    set_blocks: u16_at(20),
                    position: u16_at(22),
                    base_log_pages: u16_at(24),
                },
            },
            payload,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> PageHeader {
        PageHeader {
            kind: PageKind::Log,
            node: NodeId(42),
            seq: 1 << 40,
            tag: BlockTag {
                set: 3,
                set_blocks: 8,
                position: 5,
                base_log_pages: 4,
            },
        }
    }

    #[test]
    fn headers_round_trip() {
        let mut page = Vec::new();
        header().write_page(b"records", &mut page);
        assert_eq!(page.len(), HEADER_BYTES + 7);
        let (back, payload) = PageHeader::read_page(&page).expect("valid");
        assert_eq!(back, header());
        assert_eq!(payload, b"records");
    }

    #[test]
    fn a_flipped_bit_is_caught_by_the_checksum() {
        let mut page = Vec::new();
        header().write_page(b"records", &mut page);
        page[HEADER_BYTES + 2] ^= 4;
        let err = PageHeader::read_page(&page).expect_err("corrupt");
        assert!(err.starts_with("checksum"), "{err}");
        page[0] = 0x55;
        let err = PageHeader::read_page(&page).expect_err("corrupt");
        assert!(err.starts_with("kind"), "{err}");
    }

    /// The header byte for byte as the module's table lays it out, a node image's kind
    /// too, and the page's erased rest after the payload ignored.
    #[test]
    fn a_header_is_laid_out_as_documented() {
        let mut page = Vec::new();
        let node = PageHeader {
            kind: PageKind::Node,
            ..header()
        };
        node.write_page(b"abc", &mut page);
        let mut want = vec![0xD1, 1, 3, 0, 42, 0, 0, 0];
        want.extend_from_slice(&(1u64 << 40).to_le_bytes());
        want.extend_from_slice(&[3, 0, 0, 0, 8, 0, 5, 0, 4, 0, 0, 0]);
        assert_eq!(&page[..28], &want[..]);
        assert_eq!(&page[HEADER_BYTES..], b"abc");
        page.resize(64, 0xFF);
        let (back, payload) = PageHeader::read_page(&page).expect("valid");
        assert_eq!((back, payload), (node, &b"abc"[..]));
    }

    /// Each field the reader checks is refused by name, and every header byte is under the
    /// checksum.
    #[test]
    fn a_bad_page_names_its_field() {
        let mut good = Vec::new();
        header().write_page(b"records", &mut good);
        let err = |page: &[u8]| PageHeader::read_page(page).expect_err("refused");
        assert_eq!(err(&good[..31]), "header: 31 bytes, 32 needed");
        assert!(PageHeader::read_page(&good[..32 + 7]).is_ok());
        assert_eq!(
            err(&good[..32 + 6]),
            "payload length: 7 bytes, the page holds fewer"
        );
        let mut page = good.clone();
        page[1] = 2;
        assert_eq!(err(&page), "version: 2 (this build reads 1)");
        page[0] = 0x55;
        assert_eq!(err(&page), "kind: 0x55 is neither a node nor a log page");
        for at in 2..28 {
            let mut page = good.clone();
            page.resize(400, 0xFF);
            page[at] ^= 1;
            assert!(err(&page).starts_with("checksum"), "byte {at}");
        }
    }

    /// Every field round-trips at its full width (every byte of it distinct), and a page of
    /// a header alone, with no payload, reads.
    #[test]
    fn every_field_round_trips_at_its_full_width() {
        let wide = PageHeader {
            kind: PageKind::Node,
            node: NodeId(0x0a0b_0c0d),
            seq: 0x1112_1314_1516_1718,
            tag: BlockTag {
                set: 0x2122_2324,
                set_blocks: 0x3132,
                position: 0x4142,
                base_log_pages: 0x5152,
            },
        };
        let mut page = Vec::new();
        wide.write_page(&[], &mut page);
        assert_eq!(page.len(), HEADER_BYTES);
        let (back, payload) = PageHeader::read_page(&page).expect("a header alone reads");
        assert_eq!(back, wide);
        assert!(payload.is_empty());
    }
}
