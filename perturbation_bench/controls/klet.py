"""The exact K-let shuffle: a uniformly random sequence with the same K-mer counts as the given
one, its first and last ``K - 1`` bases kept (Altschul and Erickson 1985 for K = 2, generalised by
Jiang et al. 2008, uShuffle).

A sequence ``s`` of length ``n`` is an Eulerian trail in the multigraph whose vertices are
(K-1)-mers and whose edges are its K-mer occurrences (edge ``i`` from ``s[i:i+K-1]`` to
``s[i+1:i+K]``), from its first (K-1)-mer to its last. Every Eulerian trail between them spells
a sequence with the same K-mer counts and ends. uShuffle draws one uniformly:

1. for every vertex but the last, a last exit edge, such that the last edges form a spanning
   tree directed to the last vertex: Wilson's loop-erased random walks, each step an exit edge
   drawn uniformly among the vertex's edges;
2. each vertex's other exit edges in a uniformly random order, its last edge after them;
3. the trail that starts at the first vertex and leaves each vertex by its next unused edge.

K = 1 is a uniform permutation. A sequence shorter than ``K + 1`` has a single trail: itself.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np


def klet_shuffle(sequence: str, k: int, rng: np.random.Generator) -> str:
    """``sequence`` shuffled by the rule of the module docstring, drawing from ``rng``."""
    if k == 1:
        return "".join(sequence[i] for i in rng.permutation(len(sequence)))
    if len(sequence) <= k:
        return sequence
    exits = defaultdict(list)  # vertex -> the targets of its edges, one per K-mer occurrence
    for i in range(len(sequence) - k + 1):
        exits[sequence[i : i + k - 1]].append(sequence[i + 1 : i + k])
    first, last = sequence[: k - 1], sequence[len(sequence) - k + 1 :]
    last_exit = _last_exits(exits, last, rng)
    order = {}
    for vertex, targets in exits.items():
        edges = list(range(len(targets)))
        if vertex in last_exit:
            edges.remove(last_exit[vertex])
        order[vertex] = [edges[i] for i in rng.permutation(len(edges))] + (
            [last_exit[vertex]] if vertex in last_exit else []
        )
    used = dict.fromkeys(exits, 0)
    vertex, letters = first, [first]
    for _ in range(len(sequence) - k + 1):
        target = exits[vertex][order[vertex][used[vertex]]]
        used[vertex] += 1
        letters.append(target[-1])
        vertex = target
    return "".join(letters)


def _last_exits(exits: dict, root: str, rng: np.random.Generator) -> dict[str, int]:
    """Step 1: vertex -> the index (into ``exits[vertex]``) of its last exit edge, for every
    vertex with exits but ``root``; Wilson's algorithm towards ``root``."""
    in_tree, last_exit = {root}, {}
    for start in exits:
        if start in in_tree:
            continue
        step = {}  # the walk's latest exit from each vertex it visited: loops erase themselves
        vertex = start
        while vertex not in in_tree:
            step[vertex] = int(rng.integers(len(exits[vertex])))
            vertex = exits[vertex][step[vertex]]
        vertex = start
        while vertex not in in_tree:
            in_tree.add(vertex)
            last_exit[vertex] = step[vertex]
            vertex = exits[vertex][step[vertex]]
    return last_exit
