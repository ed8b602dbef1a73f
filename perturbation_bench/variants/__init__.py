"""Variant effect prediction: variant files and genomes made into pairs (``build variants``)."""
