//! Graphs for the paper's BFS and DFS experiments (sections 3.3 and 4 of Ajwani et al.,
//! SEA 2009): square grids (the hard case for external BFS) and random sparse graphs, kept
//! as compressed adjacency arrays, the in-memory reference traversals the external ones are
//! checked against, and the two external algorithms ([`bfs`], [`dfs`]).
//!
//! What this is not: a graph library. Key decision: a graph is generated in memory (it is
//! the input, like the paper's files) and written to the device; the algorithms then see it
//! only through [`crate::io::BlockIo`], and their I/O is what is measured.

pub mod bfs;
pub mod dfs;

use flashkit_core::{SimRng, SimRngExt};
use rand::Rng;
use std::collections::VecDeque;

/// An undirected graph as adjacency arrays: the neighbours of `v` are
/// `targets[offsets[v]..offsets[v + 1]]`, each edge stored in both directions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    /// Start of each vertex's list; `vertices + 1` entries.
    pub offsets: Vec<u64>,
    /// Neighbour lists, concatenated.
    pub targets: Vec<u32>,
}

impl Graph {
    /// Vertices.
    pub fn vertices(&self) -> u64 {
        self.offsets.len() as u64 - 1
    }

    /// Directed edge entries (twice the undirected edges).
    pub fn edge_entries(&self) -> u64 {
        self.targets.len() as u64
    }

    /// The neighbours of `v`.
    pub fn neighbours(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.targets[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    fn from_edges(vertices: u64, edges: &[(u32, u32)]) -> Graph {
        let mut degree = vec![0u64; vertices as usize + 1];
        for &(a, b) in edges {
            degree[a as usize + 1] += 1;
            degree[b as usize + 1] += 1;
        }
        for v in 1..degree.len() {
            degree[v] += degree[v - 1];
        }
        let offsets = degree.clone();
        let mut fill = degree;
        let mut targets = vec![0u32; 2 * edges.len()];
        for &(a, b) in edges {
            targets[fill[a as usize] as usize] = b;
            fill[a as usize] += 1;
            targets[fill[b as usize] as usize] = a;
            fill[b as usize] += 1;
        }
        Graph { offsets, targets }
    }

    /// A `side x side` grid, 4-neighbour, vertices numbered row by row.
    pub fn grid(side: u32) -> Graph {
        let mut edges = Vec::with_capacity(2 * side as usize * side as usize);
        for row in 0..side {
            for col in 0..side {
                let v = row * side + col;
                if col + 1 < side {
                    edges.push((v, v + 1));
                }
                if row + 1 < side {
                    edges.push((v, v + side));
                }
            }
        }
        Graph::from_edges(u64::from(side) * u64::from(side), &edges)
    }

    /// A random graph with `edges` uniformly random undirected edges (self-loops dropped).
    pub fn random(vertices: u32, edges: u64, seed: u64) -> Graph {
        let mut rng = SimRng::for_stream(seed, "random-graph");
        let list: Vec<(u32, u32)> = (0..edges)
            .map(|_| (rng.random_range(0..vertices), rng.random_range(0..vertices)))
            .filter(|(a, b)| a != b)
            .collect();
        Graph::from_edges(u64::from(vertices), &list)
    }

    /// BFS levels from `source` in memory (`u32::MAX` for unreachable vertices).
    pub fn bfs_levels(&self, source: u32) -> Vec<u32> {
        let mut level = vec![u32::MAX; self.vertices() as usize];
        let mut queue = VecDeque::from([source]);
        level[source as usize] = 0;
        while let Some(v) = queue.pop_front() {
            for &w in self.neighbours(v) {
                if level[w as usize] == u32::MAX {
                    level[w as usize] = level[v as usize] + 1;
                    queue.push_back(w);
                }
            }
        }
        level
    }

    /// Textbook DFS preorder from `source` in memory: each vertex's first unvisited
    /// neighbour in list order.
    pub fn dfs_order(&self, source: u32) -> Vec<u32> {
        let mut visited = vec![false; self.vertices() as usize];
        let mut order = vec![source];
        visited[source as usize] = true;
        let mut stack = vec![(source, 0usize)];
        while let Some((v, next)) = stack.last_mut() {
            let list = self.neighbours(*v);
            if *next == list.len() {
                stack.pop();
                continue;
            }
            let w = list[*next];
            *next += 1;
            if !visited[w as usize] {
                visited[w as usize] = true;
                order.push(w);
                stack.push((w, 0));
            }
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_have_the_right_degrees_and_distances() {
        let g = Graph::grid(4);
        assert_eq!(g.vertices(), 16);
        assert_eq!(g.edge_entries(), 2 * 24);
        assert_eq!(g.neighbours(0).len(), 2);
        assert_eq!(g.neighbours(5).len(), 4);
        assert_eq!(g.bfs_levels(0)[15], 6);
        assert_eq!(g.dfs_order(0).len(), 16);
    }

    #[test]
    fn a_small_grid_worked_by_hand() {
        // 0 1 2
        // 3 4 5
        // 6 7 8: edges right and down, row by row; lists in the order edges are made.
        let g = Graph::grid(3);
        assert_eq!(g.offsets, [0, 2, 5, 7, 10, 14, 17, 19, 22, 24]);
        let lists: Vec<&[u32]> = (0..9).map(|v| g.neighbours(v)).collect();
        let expected: [&[u32]; 9] = [
            &[1, 3],
            &[0, 2, 4],
            &[1, 5],
            &[0, 4, 6],
            &[1, 3, 5, 7],
            &[2, 4, 8],
            &[3, 7],
            &[4, 6, 8],
            &[5, 7],
        ];
        assert_eq!(lists, expected);
        assert_eq!(g.bfs_levels(0), [0, 1, 2, 1, 2, 3, 2, 3, 4]);
        assert_eq!(g.bfs_levels(4), [2, 1, 2, 1, 0, 1, 2, 1, 2]);
        assert_eq!(g.dfs_order(0), [0, 1, 2, 5, 4, 3, 6, 7, 8]);
        assert_eq!(g.dfs_order(4), [4, 1, 0, 3, 6, 7, 8, 5, 2]);
        // A vertex no edge reaches has no level and is not in the order.
        let apart = Graph::from_edges(3, &[(0, 1)]);
        assert_eq!(apart.bfs_levels(0), [0, 1, u32::MAX]);
        assert_eq!(apart.dfs_order(1), [1, 0]);
        assert_eq!(Graph::grid(1).vertices(), 1);
        assert_eq!(Graph::grid(1).edge_entries(), 0);
    }

    #[test]
    fn random_graphs_are_undirected_without_self_loops_and_seeded() {
        let g = Graph::random(50, 200, 7);
        assert_eq!(g.vertices(), 50);
        let mut pairs = Vec::new();
        for v in 0..50 {
            for &w in g.neighbours(v) {
                assert_ne!(v, w, "a self-loop");
                pairs.push((v.min(w), v.max(w), v < w));
            }
        }
        // Each edge stored once from each end.
        pairs.sort_unstable();
        let forward: Vec<_> = pairs.iter().filter(|p| p.2).map(|p| (p.0, p.1)).collect();
        let backward: Vec<_> = pairs.iter().filter(|p| !p.2).map(|p| (p.0, p.1)).collect();
        assert_eq!(forward, backward);
        // 200 draws, about 2% of them self-loops, dropped.
        let edges = g.edge_entries() / 2;
        assert!((185..200).contains(&edges), "{edges}");
        assert_eq!(Graph::random(50, 200, 7), g);
        assert_ne!(Graph::random(50, 200, 8), g);
    }
}
