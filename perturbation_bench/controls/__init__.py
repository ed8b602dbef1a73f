"""Paired controls: real elements against composition-preserving shuffles of themselves."""
