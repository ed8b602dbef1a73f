"""Task kinds that live in one folder each: everything of the kind that is not one row of a
shared table (``pairs/kinds.KINDS``, ``commands/build.BUILDS``, ``report/sections.SECTIONS``).

A kind's folder holds one module per role. ``kinds/`` is a layer above every other but
``commands/``: no lower layer imports a kind; the tables below name its modules by dotted path
(``paths.named``), and ``tests/test_layout.py`` holds both (``docs/architecture.md``):

    rules.py       the kind's pair rules and metrics
    shape.py       what its documents hold and ask (``pairs/shape.DocumentShape``)
    invariants.py  its row invariants (``perturbation-bench validate``)
    settings.py    its own task settings (``pairs/setting_rows.Setting``)
    builder.py     its pairs, written in the pair layout, and its options
    command.py     its ``perturbation-bench build`` kind: ``run(args)``
    task.py        its lm-eval task: loader, results, aggregations
    section.py     its report section: tables, Markdown, files

- ``footprints/``: motifs inserted into backgrounds against permuted inserts (DART-Eval's
  footprinting), at several copy numbers and spacings.
- ``recall/``: a genome segment scored after an earlier copy of it and after a control piece, at
  distances up to 256 kb (recall-bench's long-range recall probe).
"""
