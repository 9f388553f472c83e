"""The four memory graphs, cross-links and statistics."""
