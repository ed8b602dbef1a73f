"""Build and check datasets in the published schema: genome, annotation, codon tables, build,
validate, and the synthetic genome behind the demo data. Independent of the lm-eval tasks."""
