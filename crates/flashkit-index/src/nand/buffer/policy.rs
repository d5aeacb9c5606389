//! Replacement policies: LRU, CFLRU (Park et al., CASES 2006) and the GRR paper's enhanced
//! clean-first scheme with a semi-clean state (section 3.4, Figs. 4-5), each a pure choice
//! over a read-only [`BufferView`].
//!
//! The view lists the buffer's units from the least recently used end. The *cold region*
//! (CFLRU's window) is the run of units at that end whose preceding bytes are under
//! `window x capacity`: "the proportion of the cold region to the total buffer space"
//! (Table 4's w). Only units in it are candidates for the clean-first choices; when the
//! window holds no candidate every policy falls back to the least recently used unit that
//! is not pinned (the one being accessed).

use crate::nand::NodeId;
use serde::{Deserialize, Serialize};

/// A buffer unit's state (Fig. 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum UnitState {
    /// The node as it is on flash, no changes.
    Clean,
    /// The node as it is on flash plus changes not yet on flash (its log sector).
    SemiClean,
    /// Only changes: a log sector whose node image was evicted, or a new node that has
    /// never been written (all of it is change).
    Dirty,
}

/// One unit as a policy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitView {
    /// The node.
    pub node: NodeId,
    /// Its state.
    pub state: UnitState,
    /// Bytes it occupies (image, log sector or both).
    pub bytes: u32,
    /// Being accessed: never a victim.
    pub pinned: bool,
}

/// The buffer from the least recently used end, with its cold region.
#[derive(Clone, Copy, Debug)]
pub struct BufferView<'a> {
    units: &'a [UnitView],
    cold: usize,
}

impl<'a> BufferView<'a> {
    /// A view of `units` (least recently used first) with a cold region of `window`
    /// (a fraction) of `capacity_bytes`.
    pub fn new(units: &'a [UnitView], capacity_bytes: u64, window: f64) -> BufferView<'a> {
        let limit = window * capacity_bytes as f64;
        let mut before = 0u64;
        let cold = units
            .iter()
            .take_while(|u| {
                let inside = (before as f64) < limit;
                before += u64::from(u.bytes);
                inside
            })
            .count();
        BufferView { units, cold }
    }

    /// Every unit, least recently used first.
    pub fn lru_order(&self) -> &'a [UnitView] {
        self.units
    }

    /// The cold region, least recently used first.
    pub fn cold_region(&self) -> &'a [UnitView] {
        &self.units[..self.cold]
    }

    /// The enhanced scheme's clean list: clean and semi-clean units of the cold region,
    /// its tail (the least recently used) first.
    pub fn clean_list(&self) -> impl Iterator<Item = &'a UnitView> + 'a {
        self.cold_region()
            .iter()
            .filter(|u| u.state != UnitState::Dirty)
    }

    /// The enhanced scheme's dirty list: dirty units of the cold region, tail first.
    pub fn dirty_list(&self) -> impl Iterator<Item = &'a UnitView> + 'a {
        self.cold_region()
            .iter()
            .filter(|u| u.state == UnitState::Dirty)
    }

    /// The least recently used unit that is not pinned.
    pub fn lru_victim(&self) -> Option<&'a UnitView> {
        self.units.iter().find(|u| !u.pinned)
    }
}

/// What to take out of the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Victim {
    /// The whole unit: a clean one is dropped, a dirty or semi-clean one writes its changes
    /// first (a log page, or a new node's image).
    Evict(NodeId),
    /// The clean part of a semi-clean unit: its image is dropped, its log sector stays and
    /// the unit becomes dirty (Fig. 4).
    DropImage(NodeId),
}

/// A replacement policy: a pure choice over the view.
pub trait Replacement {
    /// The policy's name.
    fn name(&self) -> &'static str;
    /// The next victim, or `None` when every unit is pinned.
    fn choose(&self, view: &BufferView<'_>) -> Option<Victim>;
}

/// Least recently used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lru;

impl Replacement for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }

    fn choose(&self, view: &BufferView<'_>) -> Option<Victim> {
        view.lru_victim().map(|u| Victim::Evict(u.node))
    }
}

/// CFLRU: the least recently used *clean* unit of the cold region, else the least recently
/// used unit. Two states only: a semi-clean unit is dirty to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cflru;

impl Replacement for Cflru {
    fn name(&self) -> &'static str {
        "cflru"
    }

    fn choose(&self, view: &BufferView<'_>) -> Option<Victim> {
        view.cold_region()
            .iter()
            .find(|u| !u.pinned && u.state == UnitState::Clean)
            .or_else(|| view.lru_victim())
            .map(|u| Victim::Evict(u.node))
    }
}

/// The GRR paper's enhanced clean-first scheme (3.4): the tail of the cold region's clean
/// list first (a clean unit is evicted, a semi-clean one loses its clean part), else the
/// tail of its dirty list (flushed and evicted), else the least recently used unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CfSemi;

impl Replacement for CfSemi {
    fn name(&self) -> &'static str {
        "cfsemi"
    }

    fn choose(&self, view: &BufferView<'_>) -> Option<Victim> {
        if let Some(u) = view.clean_list().find(|u| !u.pinned) {
            return Some(match u.state {
                UnitState::SemiClean => Victim::DropImage(u.node),
                _ => Victim::Evict(u.node),
            });
        }
        view.dirty_list()
            .find(|u| !u.pinned)
            .or_else(|| view.lru_victim())
            .map(|u| Victim::Evict(u.node))
    }
}

/// The policy chosen at run time (the CLI's `--buffer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnyReplacement {
    /// [`Lru`].
    Lru,
    /// [`Cflru`].
    Cflru,
    /// [`CfSemi`].
    CfSemi,
}

impl AnyReplacement {
    /// Every policy.
    pub const ALL: [AnyReplacement; 3] = [
        AnyReplacement::Lru,
        AnyReplacement::Cflru,
        AnyReplacement::CfSemi,
    ];
}

impl std::fmt::Display for AnyReplacement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for AnyReplacement {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        AnyReplacement::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| {
                format!("unknown buffer policy {text:?} (expected lru, cflru or cfsemi)")
            })
    }
}

impl Replacement for AnyReplacement {
    fn name(&self) -> &'static str {
        match self {
            AnyReplacement::Lru => Lru.name(),
            AnyReplacement::Cflru => Cflru.name(),
            AnyReplacement::CfSemi => CfSemi.name(),
        }
    }

    fn choose(&self, view: &BufferView<'_>) -> Option<Victim> {
        match self {
            AnyReplacement::Lru => Lru.choose(view),
            AnyReplacement::Cflru => Cflru.choose(view),
            AnyReplacement::CfSemi => CfSemi.choose(view),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use UnitState::{Clean, Dirty, SemiClean};

    const P: u32 = 2048;
    const S: u32 = 512;

    fn unit(node: u32, state: UnitState) -> UnitView {
        let bytes = match state {
            Clean => P,
            SemiClean => P + S,
            Dirty => S,
        };
        UnitView {
            node: NodeId(node),
            state,
            bytes,
            pinned: false,
        }
    }

    /// Fig. 5 in words (section 3.4): the cold region keeps a clean list (clean and
    /// semi-clean units) and a dirty list; a miss takes the clean list's tail: a clean unit is
    /// evicted, a semi-clean one gives up its clean part (its image) and joins the dirty list
    /// with its log sector; only an empty clean list takes the dirty list's tail.
    ///
    /// Units, least recently used first: N1 semi-clean, N2 dirty, N3 clean, N4 semi-clean,
    /// N5 clean, N6 dirty, N7 clean, in a 14 KiB buffer with w = 0.5 (7 KiB of cold region:
    /// N1-N4 at first; as victims leave or shrink, more units slide into the window, as in
    /// CFLRU).
    #[test]
    fn fig5_victims_are_taken_clean_list_first_then_dirty_list() {
        let mut units = vec![
            unit(1, SemiClean),
            unit(2, Dirty),
            unit(3, Clean),
            unit(4, SemiClean),
            unit(5, Clean),
            unit(6, Dirty),
            unit(7, Clean),
        ];
        let capacity = 14 * 1024;
        let mut victims = Vec::new();
        for _ in 0..7 {
            let view = BufferView::new(&units, capacity, 0.5);
            if victims.is_empty() {
                let ids = |it: &mut dyn Iterator<Item = &UnitView>| {
                    it.map(|u| u.node.0).collect::<Vec<_>>()
                };
                assert_eq!(view.cold_region().len(), 4);
                assert_eq!(ids(&mut view.clean_list()), vec![1, 3, 4]);
                assert_eq!(ids(&mut view.dirty_list()), vec![2]);
            }
            let victim = CfSemi.choose(&view).expect("a victim");
            victims.push(victim);
            match victim {
                Victim::DropImage(n) => {
                    let u = units.iter_mut().find(|u| u.node == n).expect("present");
                    *u = unit(n.0, Dirty);
                }
                Victim::Evict(n) => units.retain(|u| u.node != n),
            }
        }
        use Victim::{DropImage, Evict};
        assert_eq!(
            victims,
            vec![
                DropImage(NodeId(1)),
                Evict(NodeId(3)),
                DropImage(NodeId(4)),
                Evict(NodeId(5)),
                Evict(NodeId(7)),
                // The clean list is empty: the dirty list's tail, N1's log sector, then N2.
                Evict(NodeId(1)),
                Evict(NodeId(2)),
            ]
        );
    }

    #[test]
    fn cflru_takes_the_coldest_clean_unit_and_lru_the_coldest_unit() {
        let units = vec![
            unit(1, SemiClean),
            unit(2, Dirty),
            unit(3, Clean),
            unit(4, Clean),
        ];
        let view = BufferView::new(&units, 16 * 1024, 0.5);
        assert_eq!(Cflru.choose(&view), Some(Victim::Evict(NodeId(3))));
        assert_eq!(Lru.choose(&view), Some(Victim::Evict(NodeId(1))));
        // A window of zero is plain LRU for both clean-first schemes.
        let view = BufferView::new(&units, 16 * 1024, 0.0);
        assert_eq!(view.cold_region().len(), 0);
        assert_eq!(Cflru.choose(&view), Some(Victim::Evict(NodeId(1))));
        assert_eq!(CfSemi.choose(&view), Some(Victim::Evict(NodeId(1))));
    }

    #[test]
    fn a_pinned_unit_is_never_chosen() {
        let mut units = vec![unit(1, Clean), unit(2, Dirty)];
        units[0].pinned = true;
        let view = BufferView::new(&units, 8192, 1.0);
        for policy in AnyReplacement::ALL {
            assert_eq!(
                policy.choose(&view),
                Some(Victim::Evict(NodeId(2))),
                "{policy}"
            );
        }
        units[1].pinned = true;
        let view = BufferView::new(&units, 8192, 1.0);
        for policy in AnyReplacement::ALL {
            assert_eq!(policy.choose(&view), None, "{policy}");
        }
    }

    #[test]
    fn policies_parse() {
        // The names every report and the CLI's --buffer use.
        assert_eq!(
            [Lru.name(), Cflru.name(), CfSemi.name()],
            ["lru", "cflru", "cfsemi"]
        );
        for (p, name) in AnyReplacement::ALL
            .into_iter()
            .zip(["lru", "cflru", "cfsemi"])
        {
            assert_eq!((p.name(), p.to_string()), (name, name.to_string()));
            assert_eq!(name.parse::<AnyReplacement>(), Ok(p));
        }
        assert_eq!(
            "arc".parse::<AnyReplacement>(),
            Err("unknown buffer policy \"arc\" (expected lru, cflru or cfsemi)".to_string())
        );
    }

    #[test]
    fn the_view_lists_every_unit_least_recently_used_first() {
        let units = [
            unit(4, UnitState::Dirty),
            unit(2, UnitState::Clean),
            unit(9, UnitState::SemiClean),
        ];
        let view = BufferView::new(&units, 8192, 0.25);
        assert_eq!(view.lru_order(), &units);
        assert!(view.cold_region().len() < units.len());
    }
}
