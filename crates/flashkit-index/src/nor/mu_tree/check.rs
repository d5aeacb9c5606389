//! Boot-up (a scan of page headers, then a walk of the tree) and the invariant checker.

use super::{
    BootReport, Children, ERASED_WORD, IndexError, Key, Keys, MuTree, NAME, NO_PAGE, Node, Value,
};
use crate::nor::join;
use flashkit_core::Cause;
use smallvec::smallvec;

impl MuTree {
    pub(super) fn boot(&mut self) -> Result<BootReport, IndexError> {
        self.cause = Cause::Metadata;
        let before = self.nor.counters().reads.metadata;
        let pages = self.nor.geometry().words() / self.page_words;
        let mut newest: Option<(u32, u16, u32)> = None;
        let mut used = vec![false; self.valid.len()];
        let mut last_written = vec![None; self.valid.len()];
        for page in 0..pages as u16 {
            let state = self.read_w(self.page_addr(page));
            if state == ERASED_WORD {
                continue;
            }
            let seq = self.read_key(self.page_addr(page).offset(1));
            let b = self.block_of(page);
            used[b] = true;
            last_written[b] = Some(page);
            let height = u32::from(state & 0xF);
            if height > 0 && newest.is_none_or(|n| seq > n.0) {
                newest = Some((seq, page, height));
            }
        }
        let (seq, root, height) = newest.ok_or_else(|| IndexError::Corrupt {
            structure: NAME,
            detail: "no page holds a root: the flash holds no mu-tree".into(),
        })?;
        self.seq = seq.max(self.seq);
        self.root = root;
        self.height = height;
        // Pages are written in order: every block but the root's is sealed or free.
        let active = self.block_of(root);
        self.active = active as u32;
        self.next_page =
            last_written[active].map_or(0, |p| u32::from(p) % self.pages_per_block + 1);
        self.free_blocks = (0..used.len() as u32)
            .rev()
            .filter(|&b| !used[b as usize])
            .collect();
        self.valid.fill(0);
        let mut stack = vec![(root, height - 1)];
        let mut steps = 0;
        while let Some((page, level)) = stack.pop() {
            steps += 1;
            if level == 0 {
                let b = self.block_of(page);
                self.valid[b] += 1;
                continue;
            }
            if let Node::Inner { children, .. } = self.read_node(page, level) {
                stack.extend(children.into_iter().map(|c| (c, level - 1)));
            }
        }
        self.cause = Cause::Host;
        Ok(BootReport {
            word_reads: self.nor.counters().reads.metadata - before,
            steps,
        })
    }

    pub(super) fn peek_node(&self, page: u16, level: u32) -> Node {
        let (offset, size) = self.region(level, self.height);
        let base = self.page_addr(page).offset(offset);
        let words = self.nor.peek_words(base, size);
        let key = |i: usize| join(words[i], words[i + 1]);
        if level == 0 {
            let pairs = (0..size as usize / 4)
                .map(|i| (key(4 * i), key(4 * i + 2)))
                .take_while(|p| p.0 != u32::MAX)
                .collect();
            return Node::Leaf(pairs);
        }
        let mut children: Children = smallvec![words[0]];
        let mut keys = Keys::new();
        let capacity = self.inner_capacity(level, self.height);
        let mut i = 1usize;
        while i < capacity && words[3 * i] != NO_PAGE {
            keys.push(key(3 * i - 2));
            children.push(words[3 * i]);
            i += 1;
        }
        Node::Inner { children, keys }
    }

    /// The free blocks: at least one (kept for garbage collection, which must write before
    /// it can erase), each listed once, none the block being filled, every page erased.
    pub(super) fn check_space(&self) -> Result<(), String> {
        if self.free_blocks.is_empty() {
            return Err("no free block is kept for garbage collection".into());
        }
        let mut seen = vec![false; self.valid.len()];
        for &b in &self.free_blocks {
            if b == self.active || std::mem::replace(&mut seen[b as usize], true) {
                return Err(format!(
                    "free block {b} is the active block or listed twice: {:?}",
                    self.free_blocks
                ));
            }
            for i in 0..self.pages_per_block {
                let page = (b * self.pages_per_block + i) as u16;
                if self.nor.peek_words(self.page_addr(page), 1)[0] != ERASED_WORD {
                    return Err(format!("free block {b} has page {page} written"));
                }
            }
        }
        Ok(())
    }

    /// Walk the tree with peeks: pairs in order; checks node capacities, key order and
    /// separators, and the per-block valid counts.
    pub(super) fn walk(&self) -> Result<Vec<(Key, Value)>, String> {
        let mut out = Vec::new();
        let mut valid = vec![0u32; self.valid.len()];
        self.walk_node(self.root, self.height - 1, None, None, &mut out, &mut valid)?;
        if valid != self.valid {
            return Err(format!(
                "valid-page counts {:?} differ from the tree's {valid:?}",
                self.valid
            ));
        }
        if out.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err("keys are not strictly increasing".into());
        }
        Ok(out)
    }

    pub(super) fn walk_node(
        &self,
        page: u16,
        level: u32,
        lo: Option<Key>,
        hi: Option<Key>,
        out: &mut Vec<(Key, Value)>,
        valid: &mut [u32],
    ) -> Result<(), String> {
        match self.peek_node(page, level) {
            Node::Leaf(pairs) => {
                valid[self.block_of(page)] += 1;
                if pairs
                    .iter()
                    .any(|&(k, _)| lo.is_some_and(|l| k < l) || hi.is_some_and(|h| k >= h))
                {
                    return Err(format!(
                        "leaf in page {page} holds a key outside {lo:?}..{hi:?}"
                    ));
                }
                if pairs.is_empty() && self.height > 1 {
                    return Err(format!("leaf in page {page} is empty"));
                }
                out.extend(pairs);
            }
            Node::Inner { children, keys } => {
                if children.len() > self.inner_capacity(level, self.height) {
                    return Err(format!(
                        "level-{level} node in page {page} is over capacity"
                    ));
                }
                for (i, &child) in children.iter().enumerate() {
                    let clo = if i == 0 { lo } else { Some(keys[i - 1]) };
                    let chi = keys.get(i).copied().or(hi);
                    self.walk_node(child, level - 1, clo, chi, out, valid)?;
                }
            }
        }
        Ok(())
    }
}
