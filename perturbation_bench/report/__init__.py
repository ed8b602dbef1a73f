"""Reports from finished lm-eval runs: reading run folders, statistics, tables and plots. Needs no
model and no lm-eval."""
