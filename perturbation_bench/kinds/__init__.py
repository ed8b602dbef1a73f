"""Task kinds that live in one folder each: everything of the kind that is not one row of a
shared table (``pairs/kinds.KINDS``, ``commands/build.KINDS``, ``report/sections.SECTIONS``).

A kind's folder holds one module per role, and each role sits on the floor of the layer it
serves, so a kind's modules obey the layers as the layer's own do (``docs/architecture.md``):

    rules.py    the kind's pair rules and metrics (the ``pairs/`` floor)
    builder.py  its pairs, written in the pair layout, and its options (``controls/``)
    command.py  its ``perturbation-bench build`` kind: ``run(args)`` (``commands/``)
    task.py     its lm-eval task: loader, results, aggregations (``tasks/``)
    section.py  its report section: tables, Markdown, files (``report/``)

- ``footprints/``: motifs inserted into backgrounds against permuted inserts (DART-Eval's
  footprinting), at several copy numbers and spacings.
"""
