"""Paired controls: real elements against composition-preserving shuffles of themselves
(``build controls``). Their inputs (BED, the annotation) are read by ``formats/``; the footprint
kind's shuffled inserts use ``shuffles.py``.

- ``elements.py``: the elements, from a BED file or an annotation's transcript features;
- ``shuffles.py``: the shuffles that keep an element's composition, seeded per element;
- ``klet.py``: the exact K-let shuffle (every K-mer count kept);
- ``build.py``: one pair per element, its window against the same window with the element
  shuffled, written in the pair layout;
"""
